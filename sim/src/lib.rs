// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The hns-sim device model as a library: the binary (`main.rs`) wires it
//! to QEMU; the unit tests drive it with plain memory.

#[path = "../../field.rs"]
pub mod field;
#[path = "../../hw_v2_fields.rs"]
pub mod hw_v2_fields;

pub mod bond;
pub mod caps;
pub mod cmq;
pub mod cong;
pub mod device;
pub mod engine;
pub mod eq;
pub mod fw;
pub mod hem;
pub mod ivshmem;
pub mod live;
pub mod mem;
pub mod nic;
pub mod sys;
pub mod trace;
pub mod wqe;
pub mod xlate;
