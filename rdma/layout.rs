// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Load-time check that the generated bindings match the kernel they run
//! on.
//!
//! The shim is compiled by the kernel's C compiler and reports the sizes and
//! offsets of the C structures this layer dereferences; bindgen's view of
//! the same structures must agree, or the module refuses to load.

use super::raw;
use core::mem::{align_of, offset_of, size_of};
use kernel::prelude::*;
use raw::{
    hnae3_client, hnae3_handle, hnae3_roce_private_info as roce_info, hns_shim_ah, hns_shim_cq,
    hns_shim_dev, hns_shim_mr, hns_shim_pd, hns_shim_qp, hns_shim_srq, hns_shim_uctx,
    hns_shim_xrcd, ib_cq, ib_device, ib_device_ops, ib_pd, ib_qp, ib_srq, ib_udata,
};

/// One size or offset seen by C and by Rust: its name, the index of the C
/// compiler's value among the `u32`s of `hns_shim_layout`, and the
/// bindings' value. All three are constants: the table is data, not code.
struct LayoutItem {
    name: &'static str,
    c_at: usize,
    rust: usize,
}

/// An entry of [`ITEMS`]: `$c` is the field of `hns_shim_layout` that
/// holds the C compiler's view of `$rust`.
macro_rules! item {
    ($name:literal, $c:ident, $rust:expr) => {
        LayoutItem {
            name: $name,
            c_at: offset_of!(raw::hns_shim_layout, $c) / size_of::<u32>(),
            rust: $rust,
        }
    };
}

/// Number of `u32`s in `hns_shim_layout`.
const WORDS: usize = size_of::<raw::hns_shim_layout>() / size_of::<u32>();

// `hns_shim_layout` is `u32`s only (bindings/shim.h): `[u32; WORDS]` has
// its size and alignment.
const _: () = assert!(size_of::<raw::hns_shim_layout>() == WORDS * size_of::<u32>());
const _: () = assert!(align_of::<raw::hns_shim_layout>() == align_of::<u32>());

/// What the driver dereferences, as the bindings see it: one entry per
/// `u32` of `hns_shim_layout` (the array's length), so a value added to
/// the shim without an entry here does not compile.
static ITEMS: [LayoutItem; WORDS] = [
    item!(
        "sizeof(hnae3_handle)",
        hnae3_handle_size,
        size_of::<hnae3_handle>()
    ),
    item!(
        "hnae3_handle.pdev",
        hnae3_handle_pdev,
        offset_of!(hnae3_handle, pdev)
    ),
    item!(
        "hnae3_handle.rinfo",
        hnae3_handle_rinfo,
        offset_of!(hnae3_handle, __bindgen_anon_1.rinfo)
    ),
    item!(
        "hnae3_handle.client",
        hnae3_handle_client,
        offset_of!(hnae3_handle, client)
    ),
    item!(
        "sizeof(hnae3_roce_private_info)",
        hnae3_roce_info_size,
        size_of::<roce_info>()
    ),
    item!(
        "rinfo.netdev",
        hnae3_roce_info_netdev,
        offset_of!(roce_info, netdev)
    ),
    item!(
        "rinfo.roce_io_base",
        hnae3_roce_info_roce_io_base,
        offset_of!(roce_info, roce_io_base)
    ),
    item!(
        "rinfo.roce_mem_base",
        hnae3_roce_info_roce_mem_base,
        offset_of!(roce_info, roce_mem_base)
    ),
    item!(
        "rinfo.base_vector",
        hnae3_roce_info_base_vector,
        offset_of!(roce_info, base_vector)
    ),
    item!(
        "rinfo.num_vectors",
        hnae3_roce_info_num_vectors,
        offset_of!(roce_info, num_vectors)
    ),
    item!(
        "sizeof(hnae3_client)",
        hnae3_client_size,
        size_of::<hnae3_client>()
    ),
    item!("sizeof(ib_device)", ib_device_size, size_of::<ib_device>()),
    item!(
        "ib_device.dev",
        ib_device_dev,
        offset_of!(ib_device, __bindgen_anon_1.dev)
    ),
    item!("ib_device.ops", ib_device_ops, offset_of!(ib_device, ops)),
    item!("sizeof(ib_udata)", ib_udata_size, size_of::<ib_udata>()),
    item!("sizeof(ib_pd)", ib_pd_size, size_of::<ib_pd>()),
    item!("sizeof(ib_cq)", ib_cq_size, size_of::<ib_cq>()),
    item!("sizeof(ib_qp)", ib_qp_size, size_of::<ib_qp>()),
    item!(
        "sizeof(ib_device_ops)",
        ib_device_ops_size,
        size_of::<ib_device_ops>()
    ),
    item!(
        "ib_device_ops.post_send",
        ib_device_ops_post_send,
        offset_of!(ib_device_ops, post_send)
    ),
    item!(
        "ib_device_ops.post_recv",
        ib_device_ops_post_recv,
        offset_of!(ib_device_ops, post_recv)
    ),
    item!(
        "ib_device_ops.post_srq_recv",
        ib_device_ops_post_srq_recv,
        offset_of!(ib_device_ops, post_srq_recv)
    ),
    item!(
        "ib_device_ops.poll_cq",
        ib_device_ops_poll_cq,
        offset_of!(ib_device_ops, poll_cq)
    ),
    item!(
        "ib_device_ops.drain_sq",
        ib_device_ops_drain_sq,
        offset_of!(ib_device_ops, drain_sq)
    ),
    item!(
        "ib_device_ops.drain_rq",
        ib_device_ops_drain_rq,
        offset_of!(ib_device_ops, drain_rq)
    ),
    item!("ib_cq.device", ib_cq_device, offset_of!(ib_cq, device)),
    item!("ib_qp.device", ib_qp_device, offset_of!(ib_qp, device)),
    item!("ib_srq.device", ib_srq_device, offset_of!(ib_srq, device)),
    item!("hns_shim_dev.rs", shim_dev_rs, offset_of!(hns_shim_dev, rs)),
    item!(
        "hns_shim_cq.rs_cq",
        shim_cq_rs_cq,
        offset_of!(hns_shim_cq, rs_cq)
    ),
    item!(
        "hns_shim_qp.rs_qp",
        shim_qp_rs_qp,
        offset_of!(hns_shim_qp, rs_qp)
    ),
    item!(
        "hns_shim_srq.rs_srq",
        shim_srq_rs_srq,
        offset_of!(hns_shim_srq, rs_srq)
    ),
    item!(
        "hns_shim_srq.srqn",
        shim_srq_srqn,
        offset_of!(hns_shim_srq, srqn)
    ),
    item!("hns_shim_ah.av", shim_ah_av, offset_of!(hns_shim_ah, av)),
    item!("hns_shim_pd.pdn", shim_pd_pdn, offset_of!(hns_shim_pd, pdn)),
    item!(
        "hns_shim_xrcd.xrcdn",
        shim_xrcd_xrcdn,
        offset_of!(hns_shim_xrcd, xrcdn)
    ),
    item!(
        "hns_shim_uctx.db_entry",
        shim_uctx_db_entry,
        offset_of!(hns_shim_uctx, db_entry)
    ),
    item!(
        "hns_shim_uctx.rs_uctx",
        shim_uctx_rs_uctx,
        offset_of!(hns_shim_uctx, rs_uctx)
    ),
    item!(
        "hns_shim_uctx.uar_index",
        shim_uctx_uar_index,
        offset_of!(hns_shim_uctx, uar_index)
    ),
    item!(
        "hns_shim_uctx.config",
        shim_uctx_config,
        offset_of!(hns_shim_uctx, config)
    ),
    item!(
        "ib_device_ops.create_qp",
        ib_device_ops_create_qp,
        offset_of!(ib_device_ops, create_qp)
    ),
    item!(
        "ib_device_ops.modify_qp",
        ib_device_ops_modify_qp,
        offset_of!(ib_device_ops, modify_qp)
    ),
    item!(
        "ib_device_ops.query_qp",
        ib_device_ops_query_qp,
        offset_of!(ib_device_ops, query_qp)
    ),
    item!(
        "ib_device_ops.destroy_qp",
        ib_device_ops_destroy_qp,
        offset_of!(ib_device_ops, destroy_qp)
    ),
    item!(
        "ib_device_ops.create_ah",
        ib_device_ops_create_ah,
        offset_of!(ib_device_ops, create_ah)
    ),
    item!(
        "ib_device_ops.create_user_ah",
        ib_device_ops_create_user_ah,
        offset_of!(ib_device_ops, create_user_ah)
    ),
    item!(
        "ib_device_ops.query_ah",
        ib_device_ops_query_ah,
        offset_of!(ib_device_ops, query_ah)
    ),
    item!(
        "ib_device_ops.destroy_ah",
        ib_device_ops_destroy_ah,
        offset_of!(ib_device_ops, destroy_ah)
    ),
    item!(
        "sizeof(hns_shim_mr)",
        shim_mr_size,
        size_of::<hns_shim_mr>()
    ),
    item!(
        "hns_shim_mr.rs_mr",
        shim_mr_rs_mr,
        offset_of!(hns_shim_mr, rs_mr)
    ),
];

/// Compares the shim's (C compiler's) view of the structures this driver
/// dereferences with the generated bindings' view.
///
/// # Errors
///
/// `EINVAL` on any difference, after logging each one: the bindings were
/// generated for another configuration or by a mismatched libclang.
pub(crate) fn check_layout() -> Result {
    let mut c = [0u32; WORDS];
    // SAFETY: `c` has the size and alignment of `hns_shim_layout`
    // (asserted above) and is writable; the shim stores integers into it.
    unsafe { raw::hns_shim_get_layout(c.as_mut_ptr().cast()) };
    let mut bad = 0;
    for it in &ITEMS {
        let cv = c.get(it.c_at).copied().unwrap_or(u32::MAX);
        // CAST: sizes and offsets of these structs fit in 32 bits.
        if cv as usize != it.rust {
            pr_err!(
                "layout mismatch: {} is {} in C, {} in Rust\n",
                it.name,
                cv,
                it.rust
            );
            bad += 1;
        }
    }
    if bad != 0 {
        pr_err!(
            "{} layout mismatches: bindings do not match this kernel; refusing to load\n",
            bad
        );
        return Err(EINVAL);
    }
    Ok(())
}
