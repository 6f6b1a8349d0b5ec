// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The binding of the driver's user ABI (`crate::uabi`, libhns's
//! `include/uapi/rdma/hns-abi.h`): each type checked against the bindings'
//! struct at build time (same size, each member at the same offset, no
//! padding) and marked as plain bytes, so the layer's udata can read and
//! write it.

use crate::rdma::raw;
use core::mem::{offset_of, size_of};
use kernel::transmute::{AsBytes, FromBytes};

/// Marks the uapi copies as plain bytes and checks them against the
/// bindings' structs: same size, each member at the same offset, and the
/// members' sizes adding up to the struct's (no padding).
macro_rules! uapi_type {
    ($t:ty, $raw:ty, [$($m:ident: $f:ty),*]) => {
        // SAFETY: `#[repr(C)]` of integers and integer arrays with no
        // padding (the size checks below), so every byte pattern is a valid
        // value and every byte is initialised.
        unsafe impl FromBytes for $t {}
        // SAFETY: as above.
        unsafe impl AsBytes for $t {}
        const _: () = assert!(size_of::<$t>() == size_of::<$raw>());
        const _: () = assert!(size_of::<$t>() == 0 $(+ size_of::<$f>())*);
        $(const _: () = assert!(offset_of!($t, $m) == offset_of!($raw, $m));)*
    };
}

uapi_type!(
    crate::uabi::CreateCq,
    raw::hns_roce_ib_create_cq,
    [buf_addr: u64, db_addr: u64, cqe_size: u32, reserved: u32]
);
uapi_type!(
    crate::uabi::CreateCqResp,
    raw::hns_roce_ib_create_cq_resp,
    [cqn: u64, cap_flags: u64]
);
uapi_type!(
    crate::uabi::CreateSrq,
    raw::hns_roce_ib_create_srq,
    [buf_addr: u64, db_addr: u64, que_addr: u64, req_cap_flags: u32, reserved: u32]
);
uapi_type!(
    crate::uabi::CreateSrqResp,
    raw::hns_roce_ib_create_srq_resp,
    [srqn: u32, cap_flags: u32]
);
uapi_type!(
    crate::uabi::CreateQp,
    raw::hns_roce_ib_create_qp,
    [
        buf_addr: u64,
        db_addr: u64,
        log_sq_bb_count: u8,
        log_sq_stride: u8,
        sq_no_prefetch: u8,
        reserved: [u8; 5],
        sdb_addr: u64,
        comp_mask: u64,
        create_flags: u64,
        cong_type_flags: u64
    ]
);
uapi_type!(
    crate::uabi::CreateQpResp,
    raw::hns_roce_ib_create_qp_resp,
    [cap_flags: u64, dwqe_mmap_key: u64]
);
uapi_type!(
    crate::uabi::ModifyQpResp,
    raw::hns_roce_ib_modify_qp_resp,
    [tc_mode: u8, priority: u8, reserved: [u8; 6]]
);
uapi_type!(
    crate::uabi::AllocUcontextResp,
    raw::hns_roce_ib_alloc_ucontext_resp,
    [
        qp_tab_size: u32,
        cqe_size: u32,
        srq_tab_size: u32,
        reserved: u32,
        config: u32,
        max_inline_data: u32,
        congest_type: u8,
        reserved0: [u8; 7]
    ]
);
uapi_type!(
    crate::uabi::AllocUcontext,
    raw::hns_roce_ib_alloc_ucontext,
    [config: u32, reserved: u32]
);
uapi_type!(crate::uabi::AllocPdResp, raw::hns_roce_ib_alloc_pd_resp, [pdn: u32]);
uapi_type!(
    crate::uabi::CreateAhResp,
    raw::hns_roce_ib_create_ah_resp,
    [dmac: [u8; 6], priority: u8, tc_mode: u8]
);

const _: () = assert!(
    crate::uabi::CREATE_QP_MASK_CONGEST_TYPE
        == raw::hns_roce_create_qp_comp_mask_HNS_ROCE_CREATE_QP_MASK_CONGEST_TYPE as u64
);
