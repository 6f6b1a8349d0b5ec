// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The PD and XRCD verbs, `ib_device_ops` entries the RDMA core calls
//! without the shim.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! A PD's number lives in the shim's container of its `ib_pd`
//! (`rdma_shim_pd`), an XRCD's in that of its `ib_xrcd` (`rdma_shim_xrcd`),
//! from the allocation until the core frees the container.

use super::{verbs::counted, verbs::dev_drv, Driver, FailedVerb};
use crate::rdma::{raw, UData};
use core::marker::PhantomData;
use kernel::ffi::c_int;

/// The PD and XRCD ops, instantiated for a driver.
pub(super) struct PdTable<D>(PhantomData<fn() -> D>);

impl<D: Driver> PdTable<D> {
    /// The PD ops, set on every device.
    pub(super) const PD: raw::ib_device_ops = raw::ib_device_ops {
        alloc_pd: Some(alloc_pd::<D>),
        dealloc_pd: Some(dealloc_pd::<D>),
        // SAFETY: every other field of `ib_device_ops` is an optional
        // function pointer, a number or a pointer, for which zero means
        // "not set".
        ..unsafe { core::mem::zeroed() }
    };

    /// The XRCD ops, set only on devices with XRC.
    pub(super) const XRCD: raw::ib_device_ops = raw::ib_device_ops {
        alloc_xrcd: Some(alloc_xrcd::<D>),
        dealloc_xrcd: Some(dealloc_xrcd::<D>),
        // SAFETY: as for `PD`.
        ..unsafe { core::mem::zeroed() }
    };
}

/// Where the number of `ibpd` is kept.
///
/// # Safety
///
/// `ibpd` is the `ibpd` of a live `rdma_shim_pd` (every PD of this driver's
/// device: the core allocates the container's size).
unsafe fn pdn_slot(ibpd: *mut raw::ib_pd) -> *mut u32 {
    // SAFETY: per the function's contract.
    unsafe { core::ptr::addr_of_mut!((*kernel::container_of!(ibpd, raw::rdma_shim_pd, ibpd)).pdn) }
}

/// Where the number of `ibxrcd` is kept.
///
/// # Safety
///
/// `ibxrcd` is the `ibxrcd` of a live `rdma_shim_xrcd` (every XRCD of this
/// driver's device).
unsafe fn xrcdn_slot(ibxrcd: *mut raw::ib_xrcd) -> *mut u32 {
    // SAFETY: per the function's contract.
    unsafe {
        core::ptr::addr_of_mut!((*kernel::container_of!(ibxrcd, raw::rdma_shim_xrcd, ibxrcd)).xrcdn)
    }
}

/// The RDMA core's `alloc_pd`: a PD number, answered in `udata` for a user
/// PD (the driver's [`PdResp`](super::PdOps::PdResp)); a failed answer
/// frees it.
///
/// # Safety
///
/// `ibpd` is the PD being allocated on this driver's registered device, in
/// its container; `udata` is null (a kernel PD) or the command's.
unsafe extern "C" fn alloc_pd<D: Driver>(
    ibpd: *mut raw::ib_pd,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, udata) = unsafe { (dev_drv::<D>((*ibpd).device), UData::from_raw(udata)) };
    let r = d.alloc_pd().and_then(|(n, resp)| {
        if let Some(u) = &udata {
            if let Err(e) = u.respond(&resp) {
                d.dealloc_pd(n);
                return Err(e);
            }
        }
        Ok(n)
    });
    match r {
        Ok(n) => {
            // SAFETY: `ibpd` is in its container (the function's contract).
            unsafe { pdn_slot(ibpd).write(n) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// The RDMA core's `dealloc_pd`: frees the number; never fails.
///
/// # Safety
///
/// `ibpd` is a live PD of this driver's device, allocated by [`alloc_pd`].
unsafe extern "C" fn dealloc_pd<D: Driver>(
    ibpd: *mut raw::ib_pd,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, pdn) = unsafe { (dev_drv::<D>((*ibpd).device), pdn_slot(ibpd).read()) };
    d.dealloc_pd(pdn);
    0
}

/// The RDMA core's `alloc_xrcd`: an XRCD number; a failure is reported as
/// [`FailedVerb::AllocXrcd`].
///
/// # Safety
///
/// `ibxrcd` is the XRCD being allocated on this driver's registered device,
/// in its container (`udata` is not read).
unsafe extern "C" fn alloc_xrcd<D: Driver>(
    ibxrcd: *mut raw::ib_xrcd,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let d = unsafe { dev_drv::<D>((*ibxrcd).device) };
    match counted(d, FailedVerb::AllocXrcd, d.alloc_xrcd()) {
        Ok(n) => {
            // SAFETY: `ibxrcd` is in its container (the function's
            // contract).
            unsafe { xrcdn_slot(ibxrcd).write(n) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// The RDMA core's `dealloc_xrcd`: frees the number; never fails.
///
/// # Safety
///
/// `ibxrcd` is a live XRCD of this driver's device, allocated by
/// [`alloc_xrcd`].
unsafe extern "C" fn dealloc_xrcd<D: Driver>(
    ibxrcd: *mut raw::ib_xrcd,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, n) = unsafe { (dev_drv::<D>((*ibxrcd).device), xrcdn_slot(ibxrcd).read()) };
    d.dealloc_xrcd(n);
    0
}
