// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The SRQ verbs: `create_srq`, `destroy_srq` and `query_srq`, an
//! `ib_device_ops` table of their own ([`IbAdapter::SRQ`](super::IbAdapter))
//! that the shim's registration sets on a device with SRQs, and
//! `modify_srq`, which the core reaches through the shim's trampoline (its
//! prototype has an enum argument, see `scripts/kcfi-check.py`).
//!
//! Each reads the core's arguments (`struct ib_srq_init_attr`,
//! `struct ib_srq_attr`), calls the driver with [`SrqArgs`] or
//! [`SrqAttr`] and writes the answer into the shim's SRQ container
//! (`rdma_shim_srq`: the driver's SRQ, its number) and the core's structs.
//! `create_srq` and `modify_srq` report their own failures to
//! [`DeviceOps::verb_failed`](super::DeviceOps::verb_failed).
//!
//! C: `hns_roce_create_srq`, `hns_roce_destroy_srq` in
//! `drivers/infiniband/hw/hns/hns_roce_srq.c`, `hns_roce_v2_modify_srq` and
//! `hns_roce_v2_query_srq` in `hns_roce_hw_v2.c`.

use super::verbs::{counted, dev_drv, errno, read_deferred, srq_rs, user_ctx, SrqBox};
use super::{Driver, FailedVerb};
use crate::rdma::{raw, IbSrq, UData};
use kernel::{ffi::c_int, prelude::*, types::ForeignOwnable};

/// An SRQ request and what the new SRQ tells the core.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SrqArgs {
    /// The SRQ's type (`enum ib_srq_type`).
    pub(crate) srq_type: u32,
    /// The PD's number.
    pub(crate) pdn: u32,
    /// An XRC SRQ's domain number (0 for a basic SRQ).
    pub(crate) xrcdn: u32,
    /// The number of the CQ of an SRQ type that has one (0 otherwise).
    pub(crate) cqn: u32,
    /// Work requests asked for; the SRQ's depth once created.
    pub(crate) max_wr: u32,
    /// SGEs per request asked for; what the SRQ has once created.
    pub(crate) max_sge: u32,
    /// The SRQ's number.
    pub(crate) srqn: u32,
}

/// What `query_srq` answers (`struct ib_srq_attr`), filled by the driver.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SrqAttr {
    /// The SRQ's depth.
    pub(crate) max_wr: u32,
    /// SGEs per request.
    pub(crate) max_sge: u32,
    /// The limit event's threshold.
    pub(crate) srq_limit: u32,
}

/// The RDMA core's `create_srq`: a kernel SRQ, or with `udata` a user SRQ
/// whose request (the driver's [`SrqReq`](super::SrqOps::SrqReq)) is read
/// from it and answered there ([`SrqResp`](super::SrqOps::SrqResp); a
/// failed answer destroys the SRQ again).
///
/// # Safety
///
/// `ibsrq` is the `ibsrq` of a `rdma_shim_srq` being created on this
/// driver's registered device, its PD (and for its type the XRC domain and
/// CQ of `init`) this driver's; `init` is valid for the call; `udata` is
/// null (a kernel SRQ) or the command's, run by the process of its user
/// context.
pub(super) unsafe extern "C" fn create_srq<D: Driver>(
    ibsrq: *mut raw::ib_srq,
    init: *mut raw::ib_srq_init_attr,
    udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: an SRQ of the registered device (the function's contract).
    let d = unsafe { dev_drv::<D>((*ibsrq).device) };
    // SAFETY: per the function's contract.
    let r = unsafe { create::<D>(d, ibsrq, &mut *init, udata) };
    errno(counted(d, FailedVerb::CreateSrq, r))
}

/// [`create_srq`] but the failure report.
///
/// # Safety
///
/// As [`create_srq`]; `d` is the device's driver.
unsafe fn create<D: Driver>(
    d: &D,
    ibsrq: *mut raw::ib_srq,
    init: &mut raw::ib_srq_init_attr,
    udata_raw: *mut raw::ib_udata,
) -> Result {
    let srq_type = init.srq_type;
    let mut args = SrqArgs {
        srq_type,
        // SAFETY: the SRQ's PD is this driver's (the function's contract).
        pdn: unsafe { super::pd_pdn((*ibsrq).pd) },
        max_wr: init.attr.max_wr,
        max_sge: init.attr.max_sge,
        ..Default::default()
    };
    if srq_type == raw::ib_srq_type_IB_SRQT_XRC {
        // SAFETY: an XRC SRQ's request names its XRC domain, this
        // driver's (the function's contract).
        let xrcdn = unsafe { super::xrcd_xrcdn(init.ext.__bindgen_anon_1.xrc.as_ref().xrcd) };
        args.xrcdn = xrcdn;
    }
    // The SRQ types that complete to a CQ of their own (`ib_srq_has_cq`).
    if srq_type == raw::ib_srq_type_IB_SRQT_XRC || srq_type == raw::ib_srq_type_IB_SRQT_TM {
        // SAFETY: such a request names its CQ, one of this driver's, the
        // `ibcq` of a `rdma_shim_cq` (the function's contract).
        args.cqn = unsafe { (*kernel::container_of!(init.ext.cq, raw::rdma_shim_cq, ibcq)).cqn };
    }
    // SAFETY: null or the command's udata (the function's contract).
    let udata = unsafe { UData::from_raw(udata_raw) };
    let uctx = if udata.is_some() {
        // SAFETY: the command's udata, whose context is this driver's.
        unsafe { super::qp::udata_ctx(udata_raw) }.0
    } else {
        core::ptr::null_mut()
    };
    let ureq = udata.as_ref().map(read_deferred::<D::SrqReq>);
    let user = ureq.as_ref().and_then(|r| {
        // SAFETY: the SRQ's registered device and the command's context,
        // in the command of its process (the function's contract).
        unsafe { user_ctx::<D>((*ibsrq).device, uctx) }.map(|u| (u, r))
    });
    if udata.is_some() && user.is_none() {
        return Err(EINVAL);
    }
    // SAFETY: the `ib_srq` being created; the driver drops every use of it
    // before `destroy_srq` returns (the SRQ table entry goes first).
    let Some(srq_ref) = (unsafe { IbSrq::new(ibsrq) }) else {
        return Err(EINVAL);
    };
    let (b, resp) = d.create_srq(&mut args, srq_ref, user)?;
    let raw = SrqBox::<D>::into_foreign(b);
    // SAFETY: `ibsrq` is the `ibsrq` of a `rdma_shim_srq` (the function's
    // contract), which the core gives to no one before this returns.
    let c = unsafe { kernel::container_of!(ibsrq, raw::rdma_shim_srq, ibsrq) };
    // SAFETY: as above; the box is taken back with `from_foreign` in
    // `destroy_srq` (or below).
    unsafe { (*c).rs_srq = raw };
    // SAFETY: `raw` is the box handed over just above, live until
    // `destroy_srq`.
    d.publish_srq(unsafe { SrqBox::<D>::borrow(raw) });
    if let Some(u) = &udata {
        if let Err(e) = u.respond(&resp) {
            // SAFETY: `raw` is the box handed over above; the core frees
            // the container of a failed create without other calls.
            d.destroy_srq(unsafe { SrqBox::<D>::from_foreign(raw) });
            return Err(e);
        }
    }
    // SAFETY: as above.
    unsafe { (*c).srqn = args.srqn };
    init.attr.max_wr = args.max_wr;
    init.attr.max_sge = args.max_sge;
    init.attr.srq_limit = 0;
    Ok(())
}

/// The RDMA core's `destroy_srq`.
///
/// # Safety
///
/// `ibsrq` is an SRQ of this driver's registered device that `create_srq`
/// made, not used by the core after this call.
pub(super) unsafe extern "C" fn destroy_srq<D: Driver>(
    ibsrq: *mut raw::ib_srq,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract; `rs_srq` owns the box
    // `create_srq` handed over with `into_foreign`.
    let (d, b) = unsafe {
        (
            dev_drv::<D>((*ibsrq).device),
            SrqBox::<D>::from_foreign(srq_rs(ibsrq)),
        )
    };
    d.destroy_srq(b);
    0
}

/// The RDMA core's `modify_srq`, through the shim's trampoline (`mask` is
/// the value of its `enum ib_srq_attr_mask`): a new depth
/// (`IB_SRQ_MAX_WR`) or limit (`IB_SRQ_LIMIT`).
///
/// # Safety
///
/// `ibsrq` is a live SRQ of this driver's registered device that
/// `create_srq` made; `attr` is valid for the call.
pub(super) unsafe extern "C" fn modify_srq<D: Driver>(
    ibsrq: *mut raw::ib_srq,
    attr: *mut raw::ib_srq_attr,
    mask: u32,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq, limit) = unsafe {
        (
            dev_drv::<D>((*ibsrq).device),
            SrqBox::<D>::borrow(srq_rs(ibsrq)),
            (*attr).srq_limit,
        )
    };
    let r = d.modify_srq(
        srq,
        mask & raw::ib_srq_attr_mask_IB_SRQ_MAX_WR != 0,
        mask & raw::ib_srq_attr_mask_IB_SRQ_LIMIT != 0,
        limit,
    );
    errno(counted(d, FailedVerb::ModifySrq, r))
}

/// The RDMA core's `query_srq`.
///
/// # Safety
///
/// `ibsrq` is a live SRQ of this driver's registered device that
/// `create_srq` made; `attr` is valid for writing.
pub(super) unsafe extern "C" fn query_srq<D: Driver>(
    ibsrq: *mut raw::ib_srq,
    attr: *mut raw::ib_srq_attr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq) = unsafe {
        (
            dev_drv::<D>((*ibsrq).device),
            SrqBox::<D>::borrow(srq_rs(ibsrq)),
        )
    };
    let mut a = SrqAttr::default();
    if let Err(e) = d.query_srq(srq, &mut a) {
        return e.to_errno();
    }
    // SAFETY: valid for writing (the function's contract).
    unsafe {
        (*attr).max_wr = a.max_wr;
        (*attr).max_sge = a.max_sge;
        (*attr).srq_limit = a.srq_limit;
    }
    0
}
