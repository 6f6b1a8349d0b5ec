// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The numbers the shim's containers of core objects keep (a PD's, an XRC
//! domain's, a user context's), the user context behind a verb's `udata`,
//! and two inline queries of the core the verbs need (a port's Ethernet
//! AH capability, a random number in a range).
//!
//! C header: [`include/rdma/uverbs_ioctl.h`](srctree/include/rdma/uverbs_ioctl.h).

use super::raw;
use kernel::ffi::c_void;

/// The PD number the driver's `alloc_pd` wrote in the PD's container.
///
/// # Safety
///
/// `pd` is a live PD of this driver's device (in a `rdma_shim_pd`: the core
/// allocates the container's size).
pub(super) unsafe fn pd_pdn(pd: *mut raw::ib_pd) -> u32 {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(pd, raw::rdma_shim_pd, ibpd)).pdn }
}

/// The XRC domain number the driver's `alloc_xrcd` wrote in its container.
///
/// # Safety
///
/// `xrcd` is a live XRC domain of this driver's device (in a
/// `rdma_shim_xrcd`).
pub(super) unsafe fn xrcd_xrcdn(xrcd: *mut raw::ib_xrcd) -> u32 {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(xrcd, raw::rdma_shim_xrcd, ibxrcd)).xrcdn }
}

/// The Rust user context of a user verb's `udata`, its `ib_ucontext` and
/// its config (`rdma_udata_to_drv_context`); nulls and 0 for a null
/// `udata` (a kernel caller's verb).
///
/// # Safety
///
/// `udata` is null or the driver udata of a uverbs command on this
/// driver's device, whose bundle names a context of this device (in a
/// `rdma_shim_uctx`).
pub(super) unsafe fn udata_ctx(
    udata: *mut raw::ib_udata,
) -> (*mut c_void, *mut raw::ib_ucontext, u32) {
    if udata.is_null() {
        return (core::ptr::null_mut(), core::ptr::null_mut(), 0);
    }
    // SAFETY: a command's driver udata is the first member of its bundle's
    // header (`uverbs_attr_bundle_hdr`, `struct_group_tagged`), whose
    // context is this device's (the function's contract).
    unsafe {
        let hdr = kernel::container_of!(
            udata,
            raw::uverbs_attr_bundle__bindgen_ty_1_uverbs_attr_bundle_hdr,
            driver_udata
        );
        let ibuctx = (*hdr).context;
        let c = kernel::container_of!(ibuctx, raw::rdma_shim_uctx, ibuctx);
        ((*c).rs_uctx, ibuctx, (*c).config)
    }
}

/// Whether port `port` of `dev` has Ethernet address handles
/// (`rdma_cap_eth_ah`).
///
/// # Safety
///
/// `dev` is registered and `port` one of its ports.
pub(super) unsafe fn cap_eth_ah(dev: *mut raw::ib_device, port: u32) -> bool {
    // CAST: a port number indexes the core's port array.
    let i = port as usize;
    // SAFETY: a registered device's `port_data` has an entry per port, and
    // `port` is one (the function's contract).
    let flags = unsafe { (*(*dev).port_data.add(i)).immutable.core_cap_flags };
    flags & raw::RDMA_CORE_CAP_ETH_AH != 0
}

/// A uniformly random number in `lo..=hi` (`get_random_u32_inclusive`);
/// `lo` when `hi` is not above it.
pub(super) fn random_u32_inclusive(lo: u32, hi: u32) -> u32 {
    if hi <= lo {
        return lo;
    }
    match (hi - lo).checked_add(1) {
        // SAFETY: a plain call; `n` is above 1.
        Some(n) => lo + unsafe { kernel::bindings::__get_random_u32_below(n) },
        // SAFETY: a plain call.
        None => unsafe { kernel::bindings::get_random_u32() },
    }
}
