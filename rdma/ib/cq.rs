// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The CQ verbs the RDMA core calls directly: `create_cq`, `destroy_cq`
//! and `modify_cq`, an `ib_device_ops` table of their own
//! ([`IbAdapter::CQ`](super::IbAdapter)) that the shim's registration sets.
//!
//! Each reads the core's arguments (`struct ib_cq_init_attr`, the command's
//! bundle), calls the driver with Rust types and writes the answer into the
//! shim's CQ container (`rdma_shim_cq`: the driver's CQ, its number) and the
//! `ib_cq`. `create_cq` and `modify_cq` report their own failures to
//! [`DeviceOps::verb_failed`](super::DeviceOps::verb_failed) (C's
//! software counters count every failure of these verbs, the checks made
//! here included).
//!
//! C: `hns_roce_create_cq`, `hns_roce_destroy_cq` in
//! `drivers/infiniband/hw/hns/hns_roce_cq.c`, `hns_roce_v2_modify_cq` in
//! `hns_roce_hw_v2.c`.

use super::verbs::{counted, cq_rs, dev_drv, errno, read_deferred, user_ctx, CqBox};
use super::{Driver, FailedVerb};
use crate::rdma::{raw, IbCq, UData};
use kernel::{ffi::c_int, prelude::*, types::ForeignOwnable};

/// The RDMA core's `create_cq`: a kernel CQ, or with a command bundle a
/// user CQ whose request (the driver's [`CqReq`](super::CqOps::CqReq)) is
/// read from its udata and answered there
/// ([`CqResp`](super::CqOps::CqResp); a failed answer destroys the CQ
/// again). CQ creation flags are refused (`EOPNOTSUPP`), as C does.
///
/// # Safety
///
/// `ibcq` is the `ibcq` of a `rdma_shim_cq` being created on this driver's
/// registered device; `attr` is valid for the call; `attrs` is null (a
/// kernel CQ) or the bundle of the uverbs command creating it, run by the
/// process of its user context.
pub(super) unsafe extern "C" fn create_cq<D: Driver>(
    ibcq: *mut raw::ib_cq,
    attr: *const raw::ib_cq_init_attr,
    attrs: *mut raw::uverbs_attr_bundle,
) -> c_int {
    // SAFETY: a CQ of the registered device (the function's contract).
    let d = unsafe { dev_drv::<D>((*ibcq).device) };
    // SAFETY: per the function's contract.
    let r = unsafe { create::<D>(d, ibcq, &*attr, attrs) };
    errno(counted(d, FailedVerb::CreateCq, r))
}

/// [`create_cq`] but the failure report.
///
/// # Safety
///
/// As [`create_cq`]; `d` is the device's driver.
unsafe fn create<D: Driver>(
    d: &D,
    ibcq: *mut raw::ib_cq,
    attr: &raw::ib_cq_init_attr,
    attrs: *mut raw::uverbs_attr_bundle,
) -> Result {
    if attr.flags != 0 {
        return Err(EOPNOTSUPP);
    }
    let udata_raw = if attrs.is_null() {
        core::ptr::null_mut()
    } else {
        // SAFETY: a live bundle (the function's contract); the union's
        // member is the one uverbs fills for a command.
        unsafe { &raw mut (*attrs).__bindgen_anon_1.__bindgen_anon_1.driver_udata }
    };
    // SAFETY: null or the command's udata (the function's contract).
    let udata = unsafe { UData::from_raw(udata_raw) };
    let uctx = if udata.is_some() {
        // SAFETY: the command's udata, whose context is this driver's.
        unsafe { super::qp::udata_ctx(udata_raw) }.0
    } else {
        core::ptr::null_mut()
    };
    let ureq = udata.as_ref().map(read_deferred::<D::CqReq>);
    let user = ureq.as_ref().and_then(|r| {
        // SAFETY: the CQ's registered device and the command's context,
        // in the command of its process (the function's contract).
        unsafe { user_ctx::<D>((*ibcq).device, uctx) }.map(|u| (u, r))
    });
    if udata.is_some() && user.is_none() {
        return Err(EINVAL);
    }
    // SAFETY: the `ib_cq` being created; the driver drops every use of it
    // before `destroy_cq` returns (the CQ table entry goes first).
    let Some(cq_ref) = (unsafe { IbCq::new(ibcq) }) else {
        return Err(EINVAL);
    };
    let (b, o) = d.create_cq(attr.cqe, attr.comp_vector, cq_ref, user)?;
    let raw = CqBox::<D>::into_foreign(b);
    // SAFETY: `ibcq` is the `ibcq` of a `rdma_shim_cq` (the function's
    // contract), which the core gives to no one before this returns.
    let c = unsafe { kernel::container_of!(ibcq, raw::rdma_shim_cq, ibcq) };
    // SAFETY: as above; the box is taken back with `from_foreign` in
    // `destroy_cq` (or below).
    unsafe { (*c).rs_cq = raw };
    // Only now does the `ib_cq` lead to the CQ: events may reach it from
    // here on.
    // SAFETY: `raw` is the box handed over just above, live until
    // `destroy_cq`.
    d.publish_cq(unsafe { CqBox::<D>::borrow(raw) });
    if let Some(u) = &udata {
        if let Err(e) = u.respond(&o.resp) {
            // SAFETY: `raw` is the box handed over above; the core frees
            // the container of a failed create without other calls.
            d.destroy_cq(unsafe { CqBox::<D>::from_foreign(raw) });
            return Err(e);
        }
    }
    // SAFETY: as above.
    unsafe {
        (*c).cqn = o.cqn;
        // CAST: the depth is a power of two below 2^31 (the device's
        // largest CQ); the core's `cqe` is one less.
        (*ibcq).cqe = o.depth.wrapping_sub(1) as c_int;
    }
    Ok(())
}

/// The RDMA core's `destroy_cq`.
///
/// # Safety
///
/// `ibcq` is a CQ of this driver's registered device that `create_cq`
/// made, not used by the core after this call.
pub(super) unsafe extern "C" fn destroy_cq<D: Driver>(
    ibcq: *mut raw::ib_cq,
    _udata: *mut raw::ib_udata,
) -> c_int {
    // SAFETY: per the function's contract; the container's `rs_cq` owns
    // the box `create_cq` handed over with `into_foreign`.
    let (d, b) = unsafe {
        (
            dev_drv::<D>((*ibcq).device),
            CqBox::<D>::from_foreign(cq_rs(ibcq)),
        )
    };
    d.destroy_cq(b);
    0
}

/// The RDMA core's `modify_cq`: an event after `count` completions or
/// `period` microseconds.
///
/// # Safety
///
/// `ibcq` is a live CQ of this driver's registered device that
/// `create_cq` made.
pub(super) unsafe extern "C" fn modify_cq<D: Driver>(
    ibcq: *mut raw::ib_cq,
    count: u16,
    period: u16,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe {
        (
            dev_drv::<D>((*ibcq).device),
            CqBox::<D>::borrow(cq_rs(ibcq)),
        )
    };
    errno(counted(
        d,
        FailedVerb::ModifyCq,
        d.modify_cq(cq, count, period),
    ))
}
