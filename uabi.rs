// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The driver's user ABI with libhns (`include/uapi/rdma/hns-abi.h`) as
//! Rust types: the requests and answers of the verbs that carry driver
//! data, in plain Rust (`core` only, so the host tests build it too).
//!
//! Each type is a `#[repr(C)]` copy of its uapi struct with no padding;
//! `rdma/hnae3/uabi.rs` checks sizes and member offsets against the
//! bindings at build time (a header that changes does not build) and marks
//! them as plain bytes. The layer reads and writes them with the RDMA
//! core's length rules (`rdma/uabi.rs`).

use crate::rdma::uabi::{UdataIn, UdataOut};
use core::mem::{offset_of, size_of};

/// The end of member `m` (of type `f`) of `t`: C's `offsetofend`.
macro_rules! end_of {
    ($t:ty, $m:ident: $f:ty) => {
        offset_of!($t, $m) + size_of::<$f>()
    };
}

/// `struct hns_roce_ib_create_cq`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateCq {
    /// The CQE buffer's user address.
    pub(crate) buf_addr: u64,
    /// The record doorbell's user address.
    pub(crate) db_addr: u64,
    /// The CQE size libhns asks for.
    pub(crate) cqe_size: u32,
    /// Zero.
    pub(crate) reserved: u32,
}

impl CreateCq {
    /// The end of `cqe_size`: a shorter request asks for no CQE size.
    // CAST: a struct offset, far below `u32::MAX`.
    pub(crate) const CQE_SIZE_END: u32 = end_of!(CreateCq, cqe_size: u32) as u32;
}

impl UdataIn for CreateCq {
    // The first version ended at `db_addr`.
    const MIN: usize = end_of!(CreateCq, db_addr: u64);
}

/// `struct hns_roce_ib_create_cq_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateCqResp {
    /// The CQ number (64 bits for compatibility).
    pub(crate) cqn: u64,
    /// `HNS_ROCE_CQ_FLAG_*`.
    pub(crate) cap_flags: u64,
}

impl CreateCqResp {
    /// The end of `cap_flags`: a shorter response buffer gets no record
    /// doorbell.
    // CAST: a struct offset, far below `u32::MAX`.
    pub(crate) const CAP_FLAGS_END: u32 = end_of!(CreateCqResp, cap_flags: u64) as u32;
}

impl UdataOut for CreateCqResp {}

/// `struct hns_roce_ib_create_srq`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateSrq {
    /// The WQE buffer's user address.
    pub(crate) buf_addr: u64,
    /// The record doorbell's user address.
    pub(crate) db_addr: u64,
    /// The index queue's user address.
    pub(crate) que_addr: u64,
    /// `HNS_ROCE_SRQ_CAP_*`.
    pub(crate) req_cap_flags: u32,
    /// Zero.
    pub(crate) reserved: u32,
}

impl UdataIn for CreateSrq {
    // The first version ended at `que_addr`.
    const MIN: usize = end_of!(CreateSrq, que_addr: u64);
}

/// `struct hns_roce_ib_create_srq_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateSrqResp {
    /// The SRQ number.
    pub(crate) srqn: u32,
    /// `HNS_ROCE_RSP_SRQ_CAP_*`.
    pub(crate) cap_flags: u32,
}

impl UdataOut for CreateSrqResp {}

/// `struct hns_roce_ib_create_qp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateQp {
    /// The WQE buffer's user address.
    pub(crate) buf_addr: u64,
    /// The RQ record doorbell's user address.
    pub(crate) db_addr: u64,
    /// log2 of the SQ's WQE basic blocks.
    pub(crate) log_sq_bb_count: u8,
    /// log2 of the SQ's WQE stride.
    pub(crate) log_sq_stride: u8,
    /// Unused by the driver.
    pub(crate) sq_no_prefetch: u8,
    /// Zero.
    pub(crate) reserved: [u8; 5],
    /// The SQ record doorbell's user address.
    pub(crate) sdb_addr: u64,
    /// `HNS_ROCE_CREATE_QP_MASK_*`: which later members are meant.
    pub(crate) comp_mask: u64,
    /// Unused by the driver.
    pub(crate) create_flags: u64,
    /// `1 << HNS_ROCE_CREATE_QP_FLAGS_*` with the congestion type mask bit.
    pub(crate) cong_type_flags: u64,
}

impl UdataIn for CreateQp {
    // The first version ended at `reserved`.
    const MIN: usize = end_of!(CreateQp, reserved: [u8; 5]);

    // `ib_copy_validate_udata_in_cm`: only the congestion type bit.
    fn comp_mask_ok(&self) -> bool {
        crate::rdma::uabi::cm_ok(self.comp_mask, CREATE_QP_MASK_CONGEST_TYPE)
    }
}

impl CreateQp {
    /// The end of `sdb_addr`: a shorter request has no SQ record doorbell.
    pub(crate) const SDB_END: usize = end_of!(CreateQp, sdb_addr: u64);
}

/// `HNS_ROCE_CREATE_QP_MASK_CONGEST_TYPE`: the one `comp_mask` bit known.
pub(crate) const CREATE_QP_MASK_CONGEST_TYPE: u64 = 1;

/// `struct hns_roce_ib_create_qp_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateQpResp {
    /// `HNS_ROCE_QP_CAP_*`.
    pub(crate) cap_flags: u64,
    /// The mmap offset of the direct WQE page.
    pub(crate) dwqe_mmap_key: u64,
}

impl CreateQpResp {
    /// The end of `cap_flags`: a shorter response buffer gets no record
    /// doorbells.
    pub(crate) const CAP_FLAGS_END: usize = end_of!(CreateQpResp, cap_flags: u64);
}

impl UdataOut for CreateQpResp {}

/// `struct hns_roce_ib_modify_qp_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ModifyQpResp {
    /// The traffic class mode of the path.
    pub(crate) tc_mode: u8,
    /// The priority of the path.
    pub(crate) priority: u8,
    /// Zero.
    pub(crate) reserved: [u8; 6],
}

impl UdataOut for ModifyQpResp {}

/// `struct hns_roce_ib_alloc_ucontext_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocUcontextResp {
    /// QPs a context may number.
    pub(crate) qp_tab_size: u32,
    /// The CQE size.
    pub(crate) cqe_size: u32,
    /// SRQs a context may number.
    pub(crate) srq_tab_size: u32,
    /// Zero.
    pub(crate) reserved: u32,
    /// `HNS_ROCE_RSP_*_FLAGS` granted.
    pub(crate) config: u32,
    /// The inline data limit.
    pub(crate) max_inline_data: u32,
    /// The congestion types the device has.
    pub(crate) congest_type: u8,
    /// Zero.
    pub(crate) reserved0: [u8; 7],
}

impl UdataOut for AllocUcontextResp {}

/// `struct hns_roce_ib_alloc_ucontext`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocUcontext {
    /// `HNS_ROCE_*_FLAGS` asked for.
    pub(crate) config: u32,
    /// Zero.
    pub(crate) reserved: u32,
}

impl UdataIn for AllocUcontext {
    // The first version ended at `reserved`.
    const MIN: usize = end_of!(AllocUcontext, reserved: u32);
}

/// `struct hns_roce_ib_alloc_pd_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllocPdResp {
    /// The PD number.
    pub(crate) pdn: u32,
}

impl UdataOut for AllocPdResp {}

/// `struct hns_roce_ib_create_ah_resp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreateAhResp {
    /// The destination MAC.
    pub(crate) dmac: [u8; 6],
    /// The priority (the SL).
    pub(crate) priority: u8,
    /// The traffic class mode.
    pub(crate) tc_mode: u8,
}

impl UdataOut for CreateAhResp {}
