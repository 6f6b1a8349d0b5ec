// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Load-time check that the generated bindings match the kernel they run
//! on.
//!
//! The shim is compiled by the kernel's C compiler and reports the sizes and
//! offsets of the C structures this layer dereferences; bindgen's view of
//! the same structures must agree, or the module refuses to load.

use super::raw;
use core::mem::{offset_of, size_of};
use kernel::prelude::*;

/// One size or offset seen by C and by Rust.
struct LayoutItem {
    name: &'static str,
    c: u32,
    rust: usize,
}

/// Compares the shim's (C compiler's) view of the structures this driver
/// dereferences with the generated bindings' view.
///
/// # Errors
///
/// `EINVAL` on any difference, after logging each one: the bindings were
/// generated for another configuration or by a mismatched libclang.
pub(crate) fn check_layout() -> Result {
    let mut l = raw::hns_shim_layout::default();
    // SAFETY: `l` is a valid, writable `hns_shim_layout`.
    unsafe { raw::hns_shim_get_layout(&mut l) };
    use raw::{
        hnae3_client, hnae3_handle, hnae3_roce_private_info as roce_info, hns_shim_cq,
        hns_shim_dev, hns_shim_qp, hns_shim_srq, ib_cq, ib_device, ib_device_ops, ib_pd, ib_qp,
        ib_srq, ib_udata,
    };
    let items = [
        LayoutItem {
            name: "sizeof(hnae3_handle)",
            c: l.hnae3_handle_size,
            rust: size_of::<hnae3_handle>(),
        },
        LayoutItem {
            name: "hnae3_handle.pdev",
            c: l.hnae3_handle_pdev,
            rust: offset_of!(hnae3_handle, pdev),
        },
        LayoutItem {
            name: "hnae3_handle.rinfo",
            c: l.hnae3_handle_rinfo,
            rust: offset_of!(hnae3_handle, __bindgen_anon_1.rinfo),
        },
        LayoutItem {
            name: "hnae3_handle.client",
            c: l.hnae3_handle_client,
            rust: offset_of!(hnae3_handle, client),
        },
        LayoutItem {
            name: "sizeof(hnae3_roce_private_info)",
            c: l.hnae3_roce_info_size,
            rust: size_of::<roce_info>(),
        },
        LayoutItem {
            name: "rinfo.netdev",
            c: l.hnae3_roce_info_netdev,
            rust: offset_of!(roce_info, netdev),
        },
        LayoutItem {
            name: "rinfo.roce_io_base",
            c: l.hnae3_roce_info_roce_io_base,
            rust: offset_of!(roce_info, roce_io_base),
        },
        LayoutItem {
            name: "rinfo.roce_mem_base",
            c: l.hnae3_roce_info_roce_mem_base,
            rust: offset_of!(roce_info, roce_mem_base),
        },
        LayoutItem {
            name: "rinfo.base_vector",
            c: l.hnae3_roce_info_base_vector,
            rust: offset_of!(roce_info, base_vector),
        },
        LayoutItem {
            name: "rinfo.num_vectors",
            c: l.hnae3_roce_info_num_vectors,
            rust: offset_of!(roce_info, num_vectors),
        },
        LayoutItem {
            name: "sizeof(hnae3_client)",
            c: l.hnae3_client_size,
            rust: size_of::<hnae3_client>(),
        },
        LayoutItem {
            name: "sizeof(ib_device)",
            c: l.ib_device_size,
            rust: size_of::<ib_device>(),
        },
        LayoutItem {
            name: "ib_device.dev",
            c: l.ib_device_dev,
            rust: offset_of!(ib_device, __bindgen_anon_1.dev),
        },
        LayoutItem {
            name: "ib_device.ops",
            c: l.ib_device_ops,
            rust: offset_of!(ib_device, ops),
        },
        LayoutItem {
            name: "sizeof(ib_udata)",
            c: l.ib_udata_size,
            rust: size_of::<ib_udata>(),
        },
        LayoutItem {
            name: "sizeof(ib_pd)",
            c: l.ib_pd_size,
            rust: size_of::<ib_pd>(),
        },
        LayoutItem {
            name: "sizeof(ib_cq)",
            c: l.ib_cq_size,
            rust: size_of::<ib_cq>(),
        },
        LayoutItem {
            name: "sizeof(ib_qp)",
            c: l.ib_qp_size,
            rust: size_of::<ib_qp>(),
        },
        LayoutItem {
            name: "sizeof(ib_device_ops)",
            c: l.ib_device_ops_size,
            rust: size_of::<ib_device_ops>(),
        },
        LayoutItem {
            name: "ib_device_ops.post_send",
            c: l.ib_device_ops_post_send,
            rust: offset_of!(ib_device_ops, post_send),
        },
        LayoutItem {
            name: "ib_device_ops.post_recv",
            c: l.ib_device_ops_post_recv,
            rust: offset_of!(ib_device_ops, post_recv),
        },
        LayoutItem {
            name: "ib_device_ops.post_srq_recv",
            c: l.ib_device_ops_post_srq_recv,
            rust: offset_of!(ib_device_ops, post_srq_recv),
        },
        LayoutItem {
            name: "ib_device_ops.poll_cq",
            c: l.ib_device_ops_poll_cq,
            rust: offset_of!(ib_device_ops, poll_cq),
        },
        LayoutItem {
            name: "ib_device_ops.req_notify_cq",
            c: l.ib_device_ops_req_notify_cq,
            rust: offset_of!(ib_device_ops, req_notify_cq),
        },
        LayoutItem {
            name: "ib_cq.device",
            c: l.ib_cq_device,
            rust: offset_of!(ib_cq, device),
        },
        LayoutItem {
            name: "ib_qp.device",
            c: l.ib_qp_device,
            rust: offset_of!(ib_qp, device),
        },
        LayoutItem {
            name: "ib_srq.device",
            c: l.ib_srq_device,
            rust: offset_of!(ib_srq, device),
        },
        LayoutItem {
            name: "hns_shim_dev.rs",
            c: l.shim_dev_rs,
            rust: offset_of!(hns_shim_dev, rs),
        },
        LayoutItem {
            name: "hns_shim_cq.rs_cq",
            c: l.shim_cq_rs_cq,
            rust: offset_of!(hns_shim_cq, rs_cq),
        },
        LayoutItem {
            name: "hns_shim_qp.rs_qp",
            c: l.shim_qp_rs_qp,
            rust: offset_of!(hns_shim_qp, rs_qp),
        },
        LayoutItem {
            name: "hns_shim_srq.rs_srq",
            c: l.shim_srq_rs_srq,
            rust: offset_of!(hns_shim_srq, rs_srq),
        },
    ];
    let mut bad = 0;
    for it in &items {
        // CAST: sizes and offsets of these structs fit in 32 bits.
        if it.c as usize != it.rust {
            pr_err!(
                "layout mismatch: {} is {} in C, {} in Rust\n",
                it.name,
                it.c,
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
