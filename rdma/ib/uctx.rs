// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The user context verbs, `ib_device_ops` entries the RDMA core calls
//! without the shim: `alloc_ucontext`, `dealloc_ucontext` and
//! `disassociate_ucontext`.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! The driver's state of a context, its UAR index, the configuration
//! agreed with the user library and the doorbell page's mmap entry live in the
//! shim's container of the `ib_ucontext` (`rdma_shim_uctx`), which the
//! shim's mmap-entry helpers and the user verbs read.

use super::{
    verbs::counted, verbs::dev_drv, verbs::errno, verbs::UctxBox, Driver, FailedVerb, UctxNew,
};
use crate::rdma::{raw, UData};
use core::marker::PhantomData;
use kernel::{ffi::c_int, prelude::*, types::ForeignOwnable};

/// The user context ops, instantiated for a driver.
pub(super) struct UctxTable<D>(PhantomData<fn() -> D>);

impl<D: Driver> UctxTable<D> {
    /// The table.
    pub(super) const OPS: raw::ib_device_ops = raw::ib_device_ops {
        alloc_ucontext: Some(alloc_ucontext::<D>),
        dealloc_ucontext: Some(dealloc_ucontext::<D>),
        disassociate_ucontext: Some(disassociate_ucontext),
        // SAFETY: every other field of `ib_device_ops` is an optional
        // function pointer, a number or a pointer, for which zero means
        // "not set".
        ..unsafe { core::mem::zeroed() }
    };
}

/// The shim's container of `ibuctx`.
///
/// # Safety
///
/// `ibuctx` is the `ibuctx` of a live `rdma_shim_uctx` (every user context
/// of this driver's device: the core allocates the container's size).
unsafe fn container(ibuctx: *mut raw::ib_ucontext) -> *mut raw::rdma_shim_uctx {
    // SAFETY: per the function's contract.
    unsafe { kernel::container_of!(ibuctx, raw::rdma_shim_uctx, ibuctx) }
}

/// A user context for the user library's request in `udata` (the
/// driver's [`UctxReq`](super::UcontextOps::UctxReq)), its doorbell page
/// (if the driver has one) mapped at offset 0, answered in `udata`
/// ([`UctxResp`](super::UcontextOps::UctxResp)) and kept in the
/// container; `EAGAIN` while the device takes no contexts. Nothing is left
/// behind on failure.
///
/// # Safety
///
/// `ibuctx` is the context being allocated on this driver's registered
/// device, in its container; `udata` is null or the command's, in the
/// uverbs command of its process.
unsafe fn try_alloc<D: Driver>(
    d: &D,
    ibuctx: *mut raw::ib_ucontext,
    udata: *mut raw::ib_udata,
) -> Result {
    if !d.active() {
        return Err(EAGAIN);
    }
    // SAFETY: the command's udata (the function's contract).
    let udata = unsafe { UData::from_raw(udata) }.ok_or(EINVAL)?;
    let req = udata.read_in::<D::UctxReq>()?;
    let UctxNew {
        uctx: b,
        resp,
        config,
        db_page,
    } = d.alloc_ucontext(&req)?;
    let uar = match db_page {
        Some((uar, addr)) => {
            // SAFETY: the context being allocated, in its container (the
            // function's contract).
            let ret = unsafe { raw::rdma_shim_uctx_db_insert(ibuctx, addr) };
            if ret != 0 {
                d.dealloc_ucontext(b);
                return Err(Error::from_errno(ret));
            }
            uar
        }
        None => 0,
    };
    if let Err(e) = udata.respond(&resp) {
        if db_page.is_some() {
            // SAFETY: the page `rdma_shim_uctx_db_insert` mapped just above.
            unsafe { raw::rdma_shim_uctx_db_remove(ibuctx) };
        }
        d.dealloc_ucontext(b);
        return Err(e);
    }
    // SAFETY: the container of the context being allocated (the
    // function's contract); the state is taken back with `from_foreign` in
    // `dealloc_ucontext`.
    unsafe {
        let c = container(ibuctx);
        (*c).rs_uctx = UctxBox::<D>::into_foreign(b);
        (*c).uar_index = uar;
        (*c).config = config;
    }
    Ok(())
}

/// The RDMA core's `alloc_ucontext` (see [`try_alloc`]); every failure is
/// reported as [`FailedVerb::AllocUcontext`], the `EAGAIN` of an inactive
/// device included.
///
/// # Safety
///
/// As for [`try_alloc`].
unsafe extern "C" fn alloc_ucontext<D: Driver>(
    ibuctx: *mut raw::ib_ucontext,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: the context of this driver's registered device (the
    // function's contract).
    let d = unsafe { dev_drv::<D>((*ibuctx).device) };
    // SAFETY: per the function's contract.
    let r = unsafe { try_alloc(d, ibuctx, udata) };
    errno(counted(d, FailedVerb::AllocUcontext, r))
}

/// The RDMA core's `dealloc_ucontext`: the doorbell page's mmap entry is
/// removed (mappings made already stay until unmapped), then the driver
/// frees the context.
///
/// # Safety
///
/// `ibuctx` is a live context of this driver's device that
/// [`alloc_ucontext`] allocated; the core calls this once, after every
/// object of the context is gone.
unsafe extern "C" fn dealloc_ucontext<D: Driver>(ibuctx: *mut raw::ib_ucontext) {
    // SAFETY: per the function's contract; the container's fields are
    // read and written through the raw pointer, the core touches them no
    // more.
    let (d, c) = unsafe { (dev_drv::<D>((*ibuctx).device), container(ibuctx)) };
    // SAFETY: as above.
    let db = unsafe { (*c).db_entry };
    if !db.is_null() {
        // SAFETY: the entry `rdma_shim_uctx_db_insert` inserted for this
        // context, removed once (cleared below).
        unsafe {
            raw::rdma_user_mmap_entry_remove(db);
            (*c).db_entry = core::ptr::null_mut();
        }
    }
    // SAFETY: the pointer owns the reference `alloc_ucontext` handed over
    // with `into_foreign`, taken back once (the function's contract).
    let b = unsafe { UctxBox::<D>::from_foreign((*c).rs_uctx) };
    d.dealloc_ucontext(b);
}

/// The RDMA core's `disassociate_ucontext`: nothing to do, the user
/// mappings go with the core's zap of the context's mmap entries.
///
/// # Safety
///
/// Called by the RDMA core only (the argument is not read).
unsafe extern "C" fn disassociate_ucontext(_ibuctx: *mut raw::ib_ucontext) {}
