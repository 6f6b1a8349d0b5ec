// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The MR verbs the RDMA core calls directly: `get_dma_mr`, `reg_user_mr`,
//! `dereg_mr` ([`IbAdapter::MR`](super::IbAdapter)), `rereg_user_mr`
//! (`MR_REREG`, on devices that re-register) and `map_mr_sg` (`MR_FRMR`, on
//! devices with fast-register MRs, whose `alloc_mr` the core reaches
//! through the shim's trampoline: its prototype has an enum argument).
//!
//! The core does not allocate an MR's `ib_mr`: these verbs allocate the
//! shim's container (`rdma_shim_mr`, the `ib_mr` and the driver's MR) in a
//! [`KBox`], before asking the driver as C allocates its MR first, and
//! `dereg_mr` frees it. `reg_user_mr` and `rereg_user_mr` report their own
//! failures to [`DeviceOps::verb_failed`](super::DeviceOps::verb_failed).
//!
//! C: `hns_roce_get_dma_mr`, `hns_roce_reg_user_mr`,
//! `hns_roce_rereg_user_mr`, `hns_roce_dereg_mr`, `hns_roce_alloc_mr`,
//! `hns_roce_map_mr_sg` in `drivers/infiniband/hw/hns/hns_roce_mr.c`.

use super::verbs::{counted, dev_drv, errno, MrBox};
use super::{Driver, FailedVerb, MR_REREG_PD};
use crate::rdma::{raw, try_borrow, UmemDev};
use kernel::{
    ffi::{c_int, c_uint, c_void},
    prelude::*,
    types::ForeignOwnable,
};

/// A user MR registration or re-registration.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MrReq {
    /// `IB_MR_REREG_*` (re-registration only).
    pub(crate) flags: u32,
    /// The PD's number (registration, or re-registration with
    /// `IB_MR_REREG_PD`; 0 otherwise).
    pub(crate) pdn: u32,
    /// The user address of the memory.
    pub(crate) start: u64,
    /// Its length in bytes.
    pub(crate) length: u64,
    /// The I/O address the MR maps it at.
    pub(crate) iova: u64,
    /// `IB_ACCESS_*`.
    pub(crate) access: u32,
}

/// The shim's MR container as this driver allocates it.
type MrObj = KBox<raw::rdma_shim_mr>;

/// A zeroed container, as C's `kzalloc`; `ENOMEM` without memory.
#[inline(never)]
fn new_obj() -> Result<MrObj> {
    // SAFETY: `rdma_shim_mr` is C plain data (an `ib_mr` and a pointer),
    // for which all zeroes is the valid state `kzalloc` gives.
    let z: raw::rdma_shim_mr = unsafe { core::mem::zeroed() };
    Ok(KBox::new(z, GFP_KERNEL)?)
}

/// Hands a container whose MR the driver made to the core: its keys (and
/// `length`) set, the driver's MR behind `rs_mr`.
fn publish<D: Driver>(mut obj: MrObj, mr: MrBox<D>, key: u32, length: u64) -> *mut raw::ib_mr {
    obj.ibmr.lkey = key;
    obj.ibmr.rkey = key;
    obj.ibmr.length = length;
    // The pinned box is taken back with `from_foreign` in `dereg_mr`.
    obj.rs_mr = mr.into_foreign();
    let p = KBox::into_raw(obj);
    // SAFETY: `p` is the live container just leaked; `dereg_mr` frees it.
    unsafe { &raw mut (*p).ibmr }
}

/// The driver's MR behind an `ib_mr`, or null for an MR that is not this
/// driver's (a ULP's bug: another device's MR in a WR).
///
/// # Safety
///
/// `ibmr` is null or a live MR of a registered device.
pub(in crate::rdma) unsafe fn mr_rs(ibmr: *mut raw::ib_mr) -> *mut c_void {
    if ibmr.is_null() {
        return core::ptr::null_mut();
    }
    let ours = <crate::LocalModule as kernel::ModuleMetadata>::THIS_MODULE.as_ptr();
    // SAFETY: a live MR of a registered device (the function's contract);
    // the device's ops are set at registration and not changed after.
    if unsafe { (*(*ibmr).device).ops.owner } != ours.cast() {
        return core::ptr::null_mut();
    }
    // SAFETY: every MR of a device of this module is the `ibmr` of a
    // `rdma_shim_mr` made by `publish`.
    unsafe { own_mr_rs(ibmr) }
}

/// The driver's MR behind an MR known to be this driver's.
///
/// # Safety
///
/// `ibmr` is the `ibmr` of a live `rdma_shim_mr` made by `publish`.
pub(in crate::rdma) unsafe fn own_mr_rs(ibmr: *mut raw::ib_mr) -> *mut c_void {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(ibmr, raw::rdma_shim_mr, ibmr)).rs_mr }
}

/// The C convention of an MR verb: the `ib_mr`, or the errno as a pointer.
fn mr_ptr(r: Result<*mut raw::ib_mr>) -> *mut raw::ib_mr {
    r.unwrap_or_else(|e| e.to_ptr())
}

/// The RDMA core's `get_dma_mr`: an MR of the whole address space.
///
/// # Safety
///
/// `pd` is a live PD of this driver's registered device.
pub(super) unsafe extern "C" fn get_dma_mr<D: Driver>(
    pd: *mut raw::ib_pd,
    acc: c_int,
) -> *mut raw::ib_mr {
    // SAFETY: per the function's contract.
    let (d, pdn) = unsafe { (dev_drv::<D>((*pd).device), super::pd_pdn(pd)) };
    mr_ptr(new_obj().and_then(|obj| {
        // CAST: `IB_ACCESS_*` flag bits.
        let (mr, key) = d.get_dma_mr(pdn, acc as u32)?;
        Ok(publish::<D>(obj, mr, key, 0))
    }))
}

/// The RDMA core's `reg_user_mr`: the memory at `start` of the calling
/// process. A DMA handle is refused (`EOPNOTSUPP`), as C does.
///
/// # Safety
///
/// `pd` is a live PD of this driver's registered device; called in the
/// uverbs command of the process whose memory is registered.
pub(super) unsafe extern "C" fn reg_user_mr<D: Driver>(
    pd: *mut raw::ib_pd,
    start: u64,
    length: u64,
    virt_addr: u64,
    access: c_int,
    dmah: *mut raw::ib_dmah,
    _udata: *mut raw::ib_udata,
) -> *mut raw::ib_mr {
    // SAFETY: per the function's contract.
    let (ibdev, d) = unsafe { ((*pd).device, dev_drv::<D>((*pd).device)) };
    let r = (|| {
        if !dmah.is_null() {
            return Err(EOPNOTSUPP);
        }
        let obj = new_obj()?;
        let req = MrReq {
            // SAFETY: per the function's contract.
            pdn: unsafe { super::pd_pdn(pd) },
            start,
            length,
            iova: virt_addr,
            // CAST: `IB_ACCESS_*` flag bits.
            access: access as u32,
            ..Default::default()
        };
        // SAFETY: the registered device, in the command of the process
        // (the function's contract).
        let dev = unsafe { UmemDev::from_raw(ibdev) }.ok_or(EINVAL)?;
        let (mr, key) = d.reg_user_mr(dev, &req)?;
        Ok(publish::<D>(obj, mr, key, 0))
    })();
    mr_ptr(counted(d, FailedVerb::RegUserMr, r))
}

/// The RDMA core's `rereg_user_mr`, in place: null (the core keeps this
/// MR) or the errno.
///
/// # Safety
///
/// `ibmr` is a live MR of this driver's registered device made by
/// [`reg_user_mr`], held exclusively by the core for the call; `pd` is
/// null or a live PD of the device; called in the uverbs command of the
/// process whose memory is registered.
pub(super) unsafe extern "C" fn rereg_user_mr<D: Driver>(
    ibmr: *mut raw::ib_mr,
    flags: c_int,
    start: u64,
    length: u64,
    virt_addr: u64,
    access: c_int,
    pd: *mut raw::ib_pd,
    _udata: *mut raw::ib_udata,
) -> *mut raw::ib_mr {
    // SAFETY: per the function's contract.
    let (ibdev, d) = unsafe { ((*ibmr).device, dev_drv::<D>((*ibmr).device)) };
    // CAST: `IB_MR_REREG_*` flag bits.
    let flags = flags as u32;
    let pdn = if flags & MR_REREG_PD != 0 && !pd.is_null() {
        // SAFETY: a live PD of the device (the function's contract).
        unsafe { super::pd_pdn(pd) }
    } else {
        0
    };
    let req = MrReq {
        flags,
        pdn,
        start,
        length,
        iova: virt_addr,
        // CAST: `IB_ACCESS_*` flag bits.
        access: access as u32,
    };
    // SAFETY: the registered device, in the command of the process (the
    // function's contract).
    let r = match unsafe { UmemDev::from_raw(ibdev) } {
        // SAFETY: `rs_mr` of a live MR of this driver (the function's
        // contract) is the foreign form of its pinned box.
        Some(dev) => match unsafe { try_borrow::<MrBox<D>>(mr_rs(ibmr)) } {
            Some(mr) => d.rereg_user_mr(mr.get_ref(), dev, &req),
            None => Err(EINVAL),
        },
        None => Err(EINVAL),
    };
    match counted(d, FailedVerb::ReregUserMr, r) {
        Ok(()) => core::ptr::null_mut(),
        Err(e) => e.to_ptr(),
    }
}

/// The RDMA core's `dereg_mr`: the driver's MR and the container go.
///
/// # Safety
///
/// `ibmr` is an MR of this driver's registered device made here, not used
/// by the core after this call.
pub(super) unsafe extern "C" fn dereg_mr<D: Driver>(
    ibmr: *mut raw::ib_mr,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract: the `ibmr` of the container
    // `publish` leaked, whose `rs_mr` owns the pinned box it handed over
    // with `into_foreign`.
    let (d, obj) = unsafe {
        (
            dev_drv::<D>((*ibmr).device),
            KBox::from_raw(kernel::container_of!(ibmr, raw::rdma_shim_mr, ibmr)),
        )
    };
    // SAFETY: as above; taken back once, here.
    d.dereg_mr(unsafe { MrBox::<D>::from_foreign(obj.rs_mr) });
    drop(obj);
    0
}

/// The RDMA core's `alloc_mr` through the shim's trampoline (`mr_type` is
/// the value of its `enum ib_mr_type`): a fast-register MR for up to
/// `max_num_sg` pages.
///
/// # Safety
///
/// `pd` is a live PD of this driver's registered device.
pub(super) unsafe extern "C" fn alloc_mr<D: Driver>(
    pd: *mut raw::ib_pd,
    mr_type: u32,
    max_num_sg: u32,
) -> *mut raw::ib_mr {
    // SAFETY: per the function's contract.
    let (d, pdn) = unsafe { (dev_drv::<D>((*pd).device), super::pd_pdn(pd)) };
    mr_ptr(new_obj().and_then(|obj| {
        let (mr, key) = d.alloc_mr(pdn, mr_type, max_num_sg)?;
        let length = D::mr_size(&mr);
        Ok(publish::<D>(obj, mr, key, length))
    }))
}

/// `ib_sg_to_pages`' callback: one page of the mapping.
///
/// # Safety
///
/// Called by `ib_sg_to_pages` inside [`map_mr_sg`] with the MR given
/// there.
unsafe extern "C" fn map_mr_sg_page<D: Driver>(ibmr: *mut raw::ib_mr, addr: u64) -> c_int {
    // SAFETY: `ibmr` is the live MR being mapped.
    let h = unsafe { mr_rs(ibmr) };
    // SAFETY: a non-null handle of this driver's MR is the foreign form of
    // its pinned box (`publish`), live while the MR is.
    match unsafe { try_borrow::<MrBox<D>>(h) } {
        Some(m) => errno(D::map_mr_sg_page(m.get_ref(), addr)),
        None => EINVAL.to_errno(),
    }
}

/// The RDMA core's `map_mr_sg` (`ib_map_mr_sg`): the driver checks and
/// resets the mapping, the core walks the SG list into pages, the driver
/// finishes.
///
/// # Safety
///
/// `ibmr` is a live MR of this driver's registered device, which the
/// caller does not map or post concurrently; `sg` holds `sg_nents`
/// DMA-mapped entries; `sg_offset` is null or valid for reading and
/// writing.
pub(super) unsafe extern "C" fn map_mr_sg<D: Driver>(
    ibmr: *mut raw::ib_mr,
    sg: *mut kernel::bindings::scatterlist,
    sg_nents: c_int,
    sg_offset: *mut c_uint,
) -> c_int {
    // SAFETY: per the function's contract.
    let d = unsafe { dev_drv::<D>((*ibmr).device) };
    // SAFETY: a live MR of this driver (the function's contract).
    let Some(m) = (unsafe { try_borrow::<MrBox<D>>(mr_rs(ibmr)) }) else {
        return EINVAL.to_errno();
    };
    let m = m.get_ref();
    // SAFETY: `ibmr` is live; the core set its page size for this mapping.
    let page_size = unsafe { (*ibmr).page_size };
    let offset = if sg_offset.is_null() {
        0
    } else {
        // SAFETY: non-null, valid for reading (the function's contract).
        unsafe { *sg_offset }
    };
    if d.map_mr_sg_begin(m, page_size, offset).is_err() {
        return 0;
    }
    // SAFETY: the arguments are the caller's, valid per the contract; the
    // callback finds the MR through `ibmr`.
    let n =
        unsafe { raw::ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, Some(map_mr_sg_page::<D>)) };
    d.map_mr_sg_end(m, n, page_size)
}
