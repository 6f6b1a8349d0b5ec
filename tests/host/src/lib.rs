// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host build of the module's `core`-only sources.
//!
//! The files are the module's own, included by path, so the host tests and
//! the kernel build compile the very same code.

#[path = "../../../field.rs"]
pub mod field;

#[path = "../../../hw_v2_fields.rs"]
pub mod hw_v2_fields;

#[path = "../../../hw_v2_consts.rs"]
pub mod hw_v2_consts;

#[path = "../../../hw_rev.rs"]
pub mod hw_rev;

#[path = "../../../cmq_desc.rs"]
pub mod cmq_desc;

#[path = "../../../hem.rs"]
pub mod hem;

#[path = "../../../bitmap.rs"]
pub mod bitmap;

#[path = "../../../hw_v2_caps.rs"]
pub mod hw_v2_caps;

#[path = "../../../hw_v2_ctx.rs"]
pub mod hw_v2_ctx;

#[path = "../../../hw_v2_scc.rs"]
pub mod hw_v2_scc;

#[path = "../../../hw_v2_qpc.rs"]
pub mod hw_v2_qpc;

/// Vectors shared with the KUnit suites.
#[path = "../../vectors/mod.rs"]
pub mod vectors;
