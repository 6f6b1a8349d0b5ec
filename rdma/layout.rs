// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Build-time check that the generated bindings match the C compiler.
//!
//! `bindings/layout.c` is compiled by the kernel's C compiler to the sizes
//! and offsets of the C structures this layer dereferences (the shim's
//! containers, the core objects the direct ops reach them through, the
//! `ib_device_ops` slots the layer fills, and with the hnae3 binding the
//! hnae3 handle); Kbuild turns
//! them into the constants of [`c`]. Each is asserted equal to bindgen's
//! (libclang's) view of the same member here, at compile time: a module
//! whose bindings disagree with the C compiler does not build.

use super::raw::{
    ib_cq, ib_device, ib_device_ops as ops, ib_pd, ib_qp, ib_srq, ib_udata, rdma_shim_ah,
    rdma_shim_cq, rdma_shim_dev, rdma_shim_mr, rdma_shim_pd, rdma_shim_qp, rdma_shim_srq,
    rdma_shim_uctx, rdma_shim_xrcd,
};
use core::mem::{offset_of, size_of};

/// The C compiler's values, generated from `bindings/layout.c`.
// Read only by the `const _` asserts below, which rustc 1.85 (the arm64
// build's) does not count as uses.
#[allow(dead_code)]
mod c {
    include!(env!("RDMA_LAYOUT_RS"));
}

/// Asserts at compile time that each bindgen value equals the C
/// compiler's.
macro_rules! same {
    ($($c:ident = $rust:expr;)*) => {
        $(const _: () = assert!(c::$c == $rust, concat!("layout: ", stringify!($c)));)*
    };
}

/// The hnae3 binding's structures (the handle, its RoCE info, the client).
#[cfg(rdma_hnae3)]
mod hnae3 {
    use super::c;
    use crate::rdma::raw::{hnae3_client, hnae3_handle, hnae3_roce_private_info as roce_info};
    use core::mem::{offset_of, size_of};

    same! {
        SIZEOF_HNAE3_HANDLE = size_of::<hnae3_handle>();
        HNAE3_HANDLE_PDEV = offset_of!(hnae3_handle, pdev);
        HNAE3_HANDLE_RINFO = offset_of!(hnae3_handle, __bindgen_anon_1.rinfo);
        HNAE3_HANDLE_CLIENT = offset_of!(hnae3_handle, client);
        SIZEOF_HNAE3_ROCE_INFO = size_of::<roce_info>();
        HNAE3_ROCE_INFO_NETDEV = offset_of!(roce_info, netdev);
        HNAE3_ROCE_INFO_IO_BASE = offset_of!(roce_info, roce_io_base);
        HNAE3_ROCE_INFO_MEM_BASE = offset_of!(roce_info, roce_mem_base);
        HNAE3_ROCE_INFO_BASE_VECTOR = offset_of!(roce_info, base_vector);
        HNAE3_ROCE_INFO_NUM_VECTORS = offset_of!(roce_info, num_vectors);
        SIZEOF_HNAE3_CLIENT = size_of::<hnae3_client>();
    }
}

same! {
    SIZEOF_IB_DEVICE = size_of::<ib_device>();
    IB_DEVICE_DEV = offset_of!(ib_device, __bindgen_anon_1.dev);
    IB_DEVICE_OPS = offset_of!(ib_device, ops);
    SIZEOF_IB_UDATA = size_of::<ib_udata>();
    SIZEOF_IB_PD = size_of::<ib_pd>();
    SIZEOF_IB_CQ = size_of::<ib_cq>();
    SIZEOF_IB_QP = size_of::<ib_qp>();
    SIZEOF_IB_DEVICE_OPS = size_of::<ops>();
    OPS_POST_SEND = offset_of!(ops, post_send);
    OPS_POST_RECV = offset_of!(ops, post_recv);
    OPS_POST_SRQ_RECV = offset_of!(ops, post_srq_recv);
    OPS_POLL_CQ = offset_of!(ops, poll_cq);
    OPS_DRAIN_SQ = offset_of!(ops, drain_sq);
    OPS_DRAIN_RQ = offset_of!(ops, drain_rq);
    OPS_CREATE_QP = offset_of!(ops, create_qp);
    OPS_MODIFY_QP = offset_of!(ops, modify_qp);
    OPS_QUERY_QP = offset_of!(ops, query_qp);
    OPS_DESTROY_QP = offset_of!(ops, destroy_qp);
    OPS_CREATE_AH = offset_of!(ops, create_ah);
    OPS_CREATE_USER_AH = offset_of!(ops, create_user_ah);
    OPS_QUERY_AH = offset_of!(ops, query_ah);
    OPS_DESTROY_AH = offset_of!(ops, destroy_ah);
    IB_CQ_DEVICE = offset_of!(ib_cq, device);
    IB_QP_DEVICE = offset_of!(ib_qp, device);
    IB_SRQ_DEVICE = offset_of!(ib_srq, device);
    SHIM_DEV_RS = offset_of!(rdma_shim_dev, rs);
    SHIM_CQ_RS_CQ = offset_of!(rdma_shim_cq, rs_cq);
    SHIM_QP_RS_QP = offset_of!(rdma_shim_qp, rs_qp);
    SHIM_SRQ_RS_SRQ = offset_of!(rdma_shim_srq, rs_srq);
    SHIM_SRQ_SRQN = offset_of!(rdma_shim_srq, srqn);
    SHIM_AH_AV = offset_of!(rdma_shim_ah, av);
    SHIM_PD_PDN = offset_of!(rdma_shim_pd, pdn);
    SHIM_XRCD_XRCDN = offset_of!(rdma_shim_xrcd, xrcdn);
    SHIM_UCTX_DB_ENTRY = offset_of!(rdma_shim_uctx, db_entry);
    SHIM_UCTX_RS_UCTX = offset_of!(rdma_shim_uctx, rs_uctx);
    SHIM_UCTX_UAR_INDEX = offset_of!(rdma_shim_uctx, uar_index);
    SHIM_UCTX_CONFIG = offset_of!(rdma_shim_uctx, config);
    SIZEOF_SHIM_MR = size_of::<rdma_shim_mr>();
    SHIM_MR_RS_MR = offset_of!(rdma_shim_mr, rs_mr);
}
