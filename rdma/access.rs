// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The access flags of MRs and QPs (`enum ib_access_flags`), in plain Rust
//! (`core` only, so the host tests build it too).
//!
//! The values are the uapi's (`IB_UVERBS_ACCESS_*`, which the RDMA core's
//! `IB_ACCESS_*` equal); `rdma.rs` checks each against the bindings at
//! build time, so a kernel whose values differ does not build.

/// `IB_ACCESS_LOCAL_WRITE`.
pub(crate) const ACCESS_LOCAL_WRITE: u32 = 1;
/// `IB_ACCESS_REMOTE_WRITE`.
pub(crate) const ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// `IB_ACCESS_REMOTE_READ`.
pub(crate) const ACCESS_REMOTE_READ: u32 = 1 << 2;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub(crate) const ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;
