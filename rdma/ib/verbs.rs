// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The entry points of the shim's `hns_rs_ib_ops`, generic over the driver.
//!
//! Each turns the shim's raw arguments into the driver's types and its
//! result back into the C convention (0 or a negative errno). The `rs`
//! argument is the device state an [`IbRegistration`](super::IbRegistration) stored; object
//! pointers are the boxes the create verbs handed over with
//! [`ForeignOwnable::into_foreign`].

use super::{
    CqUreq, DevAttr, FailedVerb, IbDriver, MrReq, NetdevEvent, PortAttr, PortEvents, SrqArgs,
    SrqAttr, SrqUreq,
};
use crate::rdma::wr::nth_wr;
use crate::rdma::{
    raw, try_borrow, uabi, IbCq, IbSrq, NetDev, RecvChain, SendChain, UData, UmemDev, UserCtx,
    WcArray,
};
use kernel::{
    ffi::{c_int, c_uint, c_void},
    prelude::*,
    sync::Arc,
    transmute::{AsBytes, FromBytes},
    types::ForeignOwnable, //
};

/// The driver state behind an ib_device's `rs` pointer.
///
/// # Safety
///
/// `rs` must be the pointer an [`IbRegistration`](super::IbRegistration) stored, while the
/// registration (which holds the `Arc`) exists: the RDMA core calls the
/// device's ops only between registration and unregistration.
pub(in crate::rdma) unsafe fn drv<'a, D: IbDriver>(rs: *mut c_void) -> &'a D {
    // SAFETY: per the function's contract.
    unsafe { &*rs.cast::<D>() }
}

/// The driver state of the device an RDMA core object belongs to: the `rs`
/// of the shim's container of `dev`. For the data-path ops, which the core
/// calls without the shim.
///
/// # Safety
///
/// `dev` is this driver's registered device (the `ibdev` of a
/// `hns_shim_dev`), with the contract of [`drv`] for its `rs`.
#[inline(always)]
pub(super) unsafe fn dev_drv<'a, D: IbDriver>(dev: *mut raw::ib_device) -> &'a D {
    // SAFETY: per the function's contract, `dev` is the `ibdev` field of a
    // live `hns_shim_dev`, whose `rs` is the registration's pointer.
    unsafe { drv::<D>((*kernel::container_of!(dev, raw::hns_shim_dev, ibdev)).rs) }
}

/// Converts a result to the C convention.
fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// A udata length as the driver's request types keep it: saturated to
/// `u32`, which keeps every comparison with a struct length.
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them; `uhw` is null (a kernel
/// query) or the command's udata, which must carry no request and gets an
/// empty answer (`ib_no_udata_io`) before anything is queried.
pub(super) unsafe extern "C" fn query_device<D: IbDriver>(
    rs: *mut c_void,
    uhw: *mut raw::ib_udata,
    a: *mut DevAttr,
) -> c_int {
    // SAFETY: null or the command's udata (the function's contract).
    if let Some(u) = unsafe { UData::from_raw(uhw) } {
        if let Err(e) = u.no_io() {
            return e.to_errno();
        }
    }
    // SAFETY: called by the shim's op with the device's `rs` and a valid,
    // exclusive attribute struct.
    unsafe { drv::<D>(rs).query_device(&mut *a) };
    0
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
pub(super) unsafe extern "C" fn query_port<D: IbDriver>(
    rs: *mut c_void,
    port: u32,
    a: *mut PortAttr,
) {
    // SAFETY: as above.
    unsafe { drv::<D>(rs).query_port(port, &mut *a) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
pub(super) unsafe extern "C" fn fw_ver<D: IbDriver>(rs: *mut c_void, v: *mut u64) {
    // SAFETY: as above; `v` is valid for writing.
    unsafe { *v = drv::<D>(rs).fw_ver() }
}

/// How a user context is owned while the shim holds it.
pub(in crate::rdma) type UctxBox<D> = Arc<<D as IbDriver>::Ucontext>;

/// The view of a user verb's caller: the device and the user context.
///
/// # Safety
///
/// `ibdev` is the registered device the verb runs on, `uctx` null or a
/// context from `alloc_ucontext` that outlives `'a`, and the
/// caller runs a uverbs command of the context's process.
pub(super) unsafe fn user_ctx<'a, D: IbDriver>(
    ibdev: *mut raw::ib_device,
    uctx: *mut c_void,
) -> Option<UserCtx<'a, D::Ucontext>> {
    // SAFETY: per the function's contract.
    let dev = unsafe { UmemDev::from_raw(ibdev) }?;
    // SAFETY: per the function's contract (null, or from `into_foreign` in
    // `alloc_ucontext` and not taken back during `'a`).
    let u = unsafe { try_borrow::<UctxBox<D>>(uctx) }?;
    Some(UserCtx::new(dev, u))
}

/// Called by the shim's netdevice notifier for every netdev event.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `ibdev` is the registered
/// device; `ev` and the address it points to are valid for the call.
pub(super) unsafe extern "C" fn netdev_event<D: IbDriver>(
    rs: *mut c_void,
    ibdev: *mut raw::ib_device,
    ev: *const raw::hns_shim_netdev_ev,
) {
    // SAFETY: per the function's contract.
    let (d, ev, port) = unsafe { (drv::<D>(rs), NetdevEvent::new(&*ev), PortEvents::new(ibdev)) };
    d.netdev_event(&ev, &port);
}

/// Called by the shim's `query_port` and netdev notifier of a device with
/// the bond capability.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `ndev` and `upper` live net
/// devices (the shim holds references on both).
pub(super) unsafe extern "C" fn bond_follows<D: IbDriver>(
    rs: *mut c_void,
    ndev: *mut kernel::bindings::net_device,
    upper: *mut kernel::bindings::net_device,
) -> bool {
    // SAFETY: per the function's contract.
    let d = unsafe { drv::<D>(rs) };
    match (
        NetDev::from_raw(ndev.cast()),
        NetDev::from_raw(upper.cast()),
    ) {
        (Some(n), Some(u)) => d.bond_follows(n, u),
        _ => false,
    }
}

/// Called by the shim's mmap.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]).
pub(super) unsafe extern "C" fn doorbells_off<D: IbDriver>(rs: *mut c_void) -> bool {
    // SAFETY: per the function's contract.
    unsafe { drv::<D>(rs) }.doorbells_off()
}

/// Called by the shim's counted verbs when they fail.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]).
pub(super) unsafe extern "C" fn verb_failed<D: IbDriver>(rs: *mut c_void, verb: u32) {
    // SAFETY: per the function's contract.
    let d = unsafe { drv::<D>(rs) };
    if let Some(v) = FailedVerb::from_raw(verb) {
        d.verb_failed(v);
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
pub(super) unsafe extern "C" fn query_counters<D: IbDriver>(
    rs: *mut c_void,
    v: *mut u64,
    n: u32,
) -> c_int {
    // SAFETY: the shim passes the stats' value array of `n` entries.
    let vals = unsafe { core::slice::from_raw_parts_mut(v, n as usize) };
    // SAFETY: as above.
    match unsafe { drv::<D>(rs) }.query_counters(vals) {
        // CAST: at most `n` counters.
        Ok(k) => k as c_int,
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `mr` and `key` are valid
/// for writing.
pub(super) unsafe extern "C" fn get_dma_mr<D: IbDriver>(
    rs: *mut c_void,
    pdn: u32,
    access: u32,
    mr: *mut *mut c_void,
    key: *mut u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let r = unsafe { drv::<D>(rs) }.get_dma_mr(pdn, access);
    // SAFETY: `mr` and `key` are valid for writing.
    unsafe { mr_out::<D>(r, mr, key) }
}

/// How an MR is owned while the shim holds it.
pub(in crate::rdma) type MrBox<D> = Pin<KBox<<D as IbDriver>::Mr>>;

/// Stores a new MR and its key for the shim, or returns the errno.
///
/// # Safety
///
/// `mr` and `key` are valid for writing.
unsafe fn mr_out<D: IbDriver>(
    r: Result<(MrBox<D>, u32)>,
    mr: *mut *mut c_void,
    key: *mut u32,
) -> c_int {
    match r {
        Ok((b, k)) => {
            // The pinned box is taken back with `from_foreign` in
            // `dereg_mr`.
            let raw = b.into_foreign();
            // SAFETY: valid for writing (the function's contract).
            unsafe {
                *mr = raw;
                *key = k;
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer, `ibdev` its registered device, called in
/// the uverbs command of the process whose memory is registered; `req` is
/// valid for the call; `mr` and `key` are valid for writing.
pub(super) unsafe extern "C" fn reg_user_mr<D: IbDriver>(
    rs: *mut c_void,
    ibdev: *mut raw::ib_device,
    req: *const MrReq,
    mr: *mut *mut c_void,
    key: *mut u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let Some(dev) = (unsafe { UmemDev::from_raw(ibdev) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    let r = unsafe { drv::<D>(rs).reg_user_mr(dev, &*req) };
    // SAFETY: `mr` and `key` are valid for writing.
    unsafe { mr_out::<D>(r, mr, key) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// As `reg_user_mr`; `mr` came from it and is live, and the core
/// holds the MR exclusively for the re-registration.
pub(super) unsafe extern "C" fn rereg_user_mr<D: IbDriver>(
    rs: *mut c_void,
    ibdev: *mut raw::ib_device,
    mr: *mut c_void,
    req: *const MrReq,
) -> c_int {
    // SAFETY: per the function's contract.
    let Some(dev) = (unsafe { UmemDev::from_raw(ibdev) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    let (d, mr, req) = unsafe { (drv::<D>(rs), MrBox::<D>::borrow(mr).get_ref(), &*req) };
    errno(d.rereg_user_mr(mr, dev, req))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `mr` came from an MR
/// callback and is not used after this call.
pub(super) unsafe extern "C" fn dereg_mr<D: IbDriver>(rs: *mut c_void, mr: *mut c_void) {
    // SAFETY: the pointer owns the pinned box an MR callback handed over
    // with `into_foreign` (`mr_out`).
    let b = unsafe { MrBox::<D>::from_foreign(mr) };
    // SAFETY: per the function's contract.
    unsafe { drv::<D>(rs) }.dereg_mr(b)
}

/// Called by the shim's op (`ib_alloc_mr`).
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `mr`, `key` and `length`
/// are valid for writing.
pub(super) unsafe extern "C" fn alloc_mr<D: IbDriver>(
    rs: *mut c_void,
    pdn: u32,
    mr_type: u32,
    max_num_sg: u32,
    mr: *mut *mut c_void,
    key: *mut u32,
    length: *mut u64,
) -> c_int {
    // SAFETY: per the function's contract.
    let r = unsafe { drv::<D>(rs) }.alloc_mr(pdn, mr_type, max_num_sg);
    if let Ok((b, _)) = &r {
        // SAFETY: valid for writing (the function's contract).
        unsafe { *length = D::mr_size(b) };
    }
    // SAFETY: `mr` and `key` are valid for writing.
    unsafe { mr_out::<D>(r, mr, key) }
}

/// `ib_sg_to_pages`' callback: one page of the mapping.
///
/// # Safety
///
/// Called by `ib_sg_to_pages` inside [`map_mr_sg`] with the MR given
/// there.
unsafe extern "C" fn map_mr_sg_page<D: IbDriver>(ibmr: *mut raw::ib_mr, addr: u64) -> c_int {
    // SAFETY: `ibmr` is the live MR being mapped.
    let h = unsafe { raw::hns_shim_mr_rs(ibmr) };
    // SAFETY: a non-null handle of this driver's MR is the foreign form of
    // its pinned box (`mr_out`), live while the MR is.
    match unsafe { try_borrow::<MrBox<D>>(h) } {
        Some(m) => errno(D::map_mr_sg_page(m.get_ref(), addr)),
        None => EINVAL.to_errno(),
    }
}

/// Called by the shim's op (`ib_map_mr_sg`): the driver checks and
/// resets the mapping, the core walks the SG list into pages, the driver
/// finishes.
///
/// # Safety
///
/// `rs` is the device's pointer; `ibmr` is the live MR `mr` belongs to,
/// which the caller does not map or post concurrently; `sg` holds
/// `sg_nents` DMA-mapped entries; `sg_offset` is null or valid for reading
/// and writing.
pub(super) unsafe extern "C" fn map_mr_sg<D: IbDriver>(
    rs: *mut c_void,
    ibmr: *mut raw::ib_mr,
    mr: *mut c_void,
    sg: *mut kernel::bindings::scatterlist,
    sg_nents: c_int,
    sg_offset: *mut c_uint,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, m) = unsafe { (drv::<D>(rs), MrBox::<D>::borrow(mr).get_ref()) };
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

/// How a CQ is owned while the shim holds it.
pub(in crate::rdma) type CqBox<D> = KBox<<D as IbDriver>::Cq>;

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `ibcq` is the `ib_cq` being
/// created on the registered device; `args` is valid for reading and
/// writing, `cq` for writing. For a user CQ, `udata` is the command's
/// udata and `uctx` the caller's context from `alloc_ucontext`, in the
/// uverbs command of its process; for a kernel CQ `udata` is null. A user
/// CQ is answered in the udata (`struct hns_roce_ib_create_cq_resp`); a
/// failed answer destroys it again.
pub(super) unsafe extern "C" fn create_cq<D: IbDriver>(
    rs: *mut c_void,
    ibcq: *mut raw::ib_cq,
    uctx: *mut c_void,
    udata: *mut raw::ib_udata,
    args: *mut raw::hns_shim_cq_args,
    cq: *mut *mut c_void,
) -> c_int {
    // SAFETY: valid for reading and writing (the function's contract).
    let args = unsafe { &mut *args };
    // SAFETY: the `ib_cq` being created (the function's contract).
    let ibdev = unsafe { (*ibcq).device };
    // SAFETY: null or the command's udata (the function's contract).
    let udata = unsafe { UData::from_raw(udata) };
    let ureq = udata.as_ref().map(cq_ureq);
    let user = ureq.as_ref().and_then(|r| {
        // SAFETY: per the function's contract: a user CQ comes with its
        // context and udata, a kernel CQ with neither.
        unsafe { user_ctx::<D>(ibdev, uctx) }.map(|u| (u, r))
    });
    if udata.is_some() && user.is_none() {
        return EINVAL.to_errno();
    }
    // SAFETY: the `ib_cq` being created; the driver drops every use of it
    // before `destroy_cq` returns (the CQ table entry goes first).
    let Some(ibcq) = (unsafe { IbCq::new(ibcq) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    let d = unsafe { drv::<D>(rs) };
    match d.create_cq(args.cqe, args.vector, ibcq, user) {
        Ok((b, o)) => {
            let raw = CqBox::<D>::into_foreign(b);
            // SAFETY: valid for writing (the function's contract): the
            // container's `rs_cq`. The box is taken back with
            // `from_foreign` in `destroy_cq`.
            unsafe { *cq = raw };
            // Only now does the `ib_cq` lead to the CQ: events may reach
            // it from here on.
            // SAFETY: `raw` is the box handed over just above, live until
            // `destroy_cq`.
            d.publish_cq(unsafe { CqBox::<D>::borrow(raw) });
            args.depth = o.depth;
            args.cqn = o.cqn;
            args.cap_flags = o.cap_flags;
            if let Some(u) = &udata {
                let resp = uabi::CreateCqResp {
                    cqn: o.cqn.into(),
                    cap_flags: o.cap_flags,
                };
                if let Err(e) = u.respond(&resp) {
                    // SAFETY: `raw` is the box handed over above; after an
                    // error the shim does not use `rs_cq`.
                    d.destroy_cq(unsafe { CqBox::<D>::from_foreign(raw) });
                    return e.to_errno();
                }
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// A request read from `u` whose copy error the driver returns at the
/// point of C's order of checks where C's copy fails: the copy's errno (0
/// when it worked) and the request, all zero when the copy failed.
pub(super) fn read_deferred<T>(u: &UData<'_>) -> (c_int, T)
where
    T: uabi::UdataIn + FromBytes + AsBytes,
{
    match u.read_in::<T>() {
        Ok(r) => (0, r),
        Err(e) => (e.to_errno(), T::default()),
    }
}

/// A user CQ request read from `u` (`ib_copy_validate_udata_in` up to
/// `db_addr`), with the result and the udata lengths.
fn cq_ureq(u: &UData<'_>) -> CqUreq {
    let (copy_ret, r) = read_deferred::<uabi::CreateCq>(u);
    CqUreq {
        copy_ret,
        inlen: len32(u.inlen()),
        outlen: len32(u.outlen()),
        buf_addr: r.buf_addr,
        db_addr: r.db_addr,
        cqe_size: r.cqe_size,
    }
}

/// A user SRQ request read from `u` (`ib_copy_validate_udata_in` up to
/// `que_addr`), with the result.
fn srq_ureq(u: &UData<'_>) -> SrqUreq {
    let (copy_ret, r) = read_deferred::<uabi::CreateSrq>(u);
    SrqUreq {
        copy_ret,
        buf_addr: r.buf_addr,
        db_addr: r.db_addr,
        que_addr: r.que_addr,
        req_cap_flags: r.req_cap_flags,
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `cq` came from `create_cq` and
/// is not used after this call.
pub(super) unsafe extern "C" fn destroy_cq<D: IbDriver>(rs: *mut c_void, cq: *mut c_void) {
    // SAFETY: per the function's contract the pointer owns the box
    // `create_cq` handed over with `into_foreign`.
    let b = unsafe { CqBox::<D>::from_foreign(cq) };
    // SAFETY: per the function's contract.
    unsafe { drv::<D>(rs) }.destroy_cq(b)
}

/// The `rs_cq` of a CQ of this driver.
///
/// # Safety
///
/// `ibcq` is the `ibcq` of a live `hns_shim_cq` whose `rs_cq` `create_cq`
/// set (every CQ of this driver's device once the core has it).
#[inline(always)]
pub(super) unsafe fn cq_rs(ibcq: *mut raw::ib_cq) -> *mut c_void {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(ibcq, raw::hns_shim_cq, ibcq)).rs_cq }
}

/// The RDMA core's `poll_cq` (hns_rs_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibcq` is a live CQ of this driver's registered device; `wc` points to
/// `n` writable entries.
pub(super) unsafe extern "C" fn poll_cq<D: IbDriver>(
    ibcq: *mut raw::ib_cq,
    n: c_int,
    wc: *mut raw::ib_wc,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe {
        (
            dev_drv::<D>((*ibcq).device),
            CqBox::<D>::borrow(cq_rs(ibcq)),
        )
    };
    if wc.is_null() {
        return 0;
    }
    // CAST: `n` is a small count; negative means none.
    // SAFETY: `n` writable entries at `wc` (the function's contract).
    let mut out = unsafe { WcArray::new(wc, n.max(0) as usize) };
    let got = d.poll_cq(cq, &mut out);
    // CAST: at most `n`.
    got as c_int
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `cq` came from `create_cq` and
/// is live.
pub(super) unsafe extern "C" fn modify_cq<D: IbDriver>(
    rs: *mut c_void,
    cq: *mut c_void,
    count: u16,
    period: u16,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe { (drv::<D>(rs), CqBox::<D>::borrow(cq)) };
    errno(d.modify_cq(cq, count, period))
}

/// The RDMA core's `req_notify_cq`, through the shim's function (the
/// core's prototype names an enum, `flags` here is its value).
///
/// # Safety
///
/// `ibcq` is a live CQ of this driver's registered device.
pub(super) unsafe extern "C" fn req_notify_cq<D: IbDriver>(
    ibcq: *mut raw::ib_cq,
    flags: u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe {
        (
            dev_drv::<D>((*ibcq).device),
            CqBox::<D>::borrow(cq_rs(ibcq)),
        )
    };
    let solicited = flags & raw::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
        == raw::ib_cq_notify_flags_IB_CQ_SOLICITED;
    let report_missed = flags & raw::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0;
    c_int::from(d.req_notify_cq(cq, solicited, report_missed))
}

/// How an SRQ is owned while the shim holds it.
pub(in crate::rdma) type SrqBox<D> = KBox<<D as IbDriver>::Srq>;

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `ibsrq` is the `ib_srq`
/// being created on the registered device; `args` is valid for reading
/// and writing, `srq` for writing. For a user SRQ, `udata` is the
/// command's udata and `uctx` the caller's context from `alloc_ucontext`,
/// in the uverbs command of its process; for a kernel SRQ `udata` is null.
/// A user SRQ is answered in the udata
/// (`struct hns_roce_ib_create_srq_resp`); a failed answer destroys it
/// again.
pub(super) unsafe extern "C" fn create_srq<D: IbDriver>(
    rs: *mut c_void,
    ibsrq: *mut raw::ib_srq,
    uctx: *mut c_void,
    udata: *mut raw::ib_udata,
    args: *mut SrqArgs,
    srq: *mut *mut c_void,
) -> c_int {
    // SAFETY: valid for reading and writing (the function's contract).
    let args = unsafe { &mut *args };
    // SAFETY: the `ib_srq` being created (the function's contract).
    let ibdev = unsafe { (*ibsrq).device };
    // SAFETY: null or the command's udata (the function's contract).
    let udata = unsafe { UData::from_raw(udata) };
    let ureq = udata.as_ref().map(srq_ureq);
    let user = ureq.as_ref().and_then(|r| {
        // SAFETY: per the function's contract: a user SRQ comes with its
        // context and udata, a kernel SRQ with neither.
        unsafe { user_ctx::<D>(ibdev, uctx) }.map(|u| (u, r))
    });
    if udata.is_some() && user.is_none() {
        return EINVAL.to_errno();
    }
    // SAFETY: the `ib_srq` being created; the driver drops every use of it
    // before `destroy_srq` returns (the SRQ table entry goes first).
    let Some(ibsrq) = (unsafe { IbSrq::new(ibsrq) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    let d = unsafe { drv::<D>(rs) };
    match d.create_srq(args, ibsrq, user) {
        Ok(b) => {
            let raw = SrqBox::<D>::into_foreign(b);
            // SAFETY: valid for writing (the function's contract): the
            // container's `rs_srq`. The box is taken back with
            // `from_foreign` in `destroy_srq`.
            unsafe { *srq = raw };
            // SAFETY: `raw` is the box handed over just above, live until
            // `destroy_srq`.
            d.publish_srq(unsafe { SrqBox::<D>::borrow(raw) });
            if let Some(u) = &udata {
                let resp = uabi::CreateSrqResp {
                    srqn: args.srqn,
                    cap_flags: args.cap_flags,
                };
                if let Err(e) = u.respond(&resp) {
                    // SAFETY: `raw` is the box handed over above; after an
                    // error the shim does not use `rs_srq`.
                    d.destroy_srq(unsafe { SrqBox::<D>::from_foreign(raw) });
                    return e.to_errno();
                }
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `srq` came from `create_srq` and is not
/// used after this call.
pub(super) unsafe extern "C" fn destroy_srq<D: IbDriver>(rs: *mut c_void, srq: *mut c_void) {
    // SAFETY: per the function's contract the pointer owns the box
    // `create_srq` handed over with `into_foreign`.
    let b = unsafe { SrqBox::<D>::from_foreign(srq) };
    // SAFETY: per the function's contract.
    unsafe { drv::<D>(rs) }.destroy_srq(b)
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `srq` came from `create_srq` and is live.
pub(super) unsafe extern "C" fn modify_srq<D: IbDriver>(
    rs: *mut c_void,
    srq: *mut c_void,
    resize: bool,
    limit: bool,
    srq_limit: u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq) = unsafe { (drv::<D>(rs), SrqBox::<D>::borrow(srq)) };
    errno(d.modify_srq(srq, resize, limit, srq_limit))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `srq` came from `create_srq` and is
/// live; `a` is valid for writing.
pub(super) unsafe extern "C" fn query_srq<D: IbDriver>(
    rs: *mut c_void,
    srq: *mut c_void,
    a: *mut SrqAttr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, srq, a) = unsafe { (drv::<D>(rs), SrqBox::<D>::borrow(srq), &mut *a) };
    errno(d.query_srq(srq, a))
}

/// How a QP is owned while the shim holds it.
pub(in crate::rdma) type QpBox<D> = Pin<KBox<<D as IbDriver>::Qp>>;

/// The `rs_qp` of a QP of this driver.
///
/// # Safety
///
/// `ibqp` is the `ibqp` of a live `hns_shim_qp` whose `rs_qp` `create_qp`
/// set (every QP of this driver's device once the core has it).
#[inline(always)]
pub(super) unsafe fn qp_rs(ibqp: *mut raw::ib_qp) -> *mut c_void {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(ibqp, raw::hns_shim_qp, ibqp)).rs_qp }
}

/// The RDMA core's `post_recv` (hns_rs_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device; `wr` is a valid
/// chain of receive WRs for the call; `bad` is valid for writing.
pub(super) unsafe extern "C" fn post_recv<D: IbDriver>(
    ibqp: *mut raw::ib_qp,
    wr: *const raw::ib_recv_wr,
    bad: *mut *const raw::ib_recv_wr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, q) = unsafe {
        (
            dev_drv::<D>((*ibqp).device),
            QpBox::<D>::borrow(qp_rs(ibqp)).get_ref(),
        )
    };
    // SAFETY: the caller's chain is valid for the call.
    let chain = unsafe { RecvChain::new(wr) };
    match d.post_recv(q, chain) {
        Ok(()) => 0,
        Err((n, e)) => {
            // SAFETY: the caller's chain is valid; `bad` is writable (the
            // function's contract).
            unsafe { *bad = nth_wr(wr, n) };
            e.to_errno()
        }
    }
}

/// The RDMA core's `post_srq_recv` (hns_rs_ib_ops' `srq_datapath`).
///
/// # Safety
///
/// `ibsrq` is a live SRQ of this driver's registered device (the `ibsrq`
/// of a `hns_shim_srq` whose `rs_srq` `create_srq` set); `wr` is a valid
/// chain of receive WRs for the call; `bad` is valid for writing.
pub(super) unsafe extern "C" fn post_srq_recv<D: IbDriver>(
    ibsrq: *mut raw::ib_srq,
    wr: *const raw::ib_recv_wr,
    bad: *mut *const raw::ib_recv_wr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, s) = unsafe {
        let srq = (*kernel::container_of!(ibsrq, raw::hns_shim_srq, ibsrq)).rs_srq;
        (dev_drv::<D>((*ibsrq).device), SrqBox::<D>::borrow(srq))
    };
    // SAFETY: the caller's chain is valid for the call.
    let chain = unsafe { RecvChain::new(wr) };
    match d.post_srq_recv(s, chain) {
        Ok(()) => 0,
        Err((n, e)) => {
            // SAFETY: the caller's chain is valid; `bad` is writable (the
            // function's contract).
            unsafe { *bad = nth_wr(wr, n) };
            e.to_errno()
        }
    }
}

/// The RDMA core's `post_send` (hns_rs_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device; `wr` is a valid
/// chain of send WRs of the QP's type (`ib_ud_wr` for UD and GSI QPs) for
/// the call; `bad` is valid for writing.
pub(super) unsafe extern "C" fn post_send<D: IbDriver>(
    ibqp: *mut raw::ib_qp,
    wr: *const raw::ib_send_wr,
    bad: *mut *const raw::ib_send_wr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, q) = unsafe {
        (
            dev_drv::<D>((*ibqp).device),
            QpBox::<D>::borrow(qp_rs(ibqp)).get_ref(),
        )
    };
    // SAFETY: the caller's chain is valid for the call; `qp_is_ud` is true
    // only for UD and GSI QPs, whose WRs the core's contract makes
    // `ib_ud_wr`s (a SEND naming a live AH of this device), and the opcode
    // names the container of the other WRs.
    let chain = unsafe { SendChain::new(wr, d.qp_is_ud(q)) };
    match d.post_send(q, chain) {
        Ok(()) => 0,
        Err((n, e)) => {
            // SAFETY: the caller's chain is valid; `bad` is writable (the
            // function's contract).
            unsafe { *bad = nth_wr(wr, n) };
            e.to_errno()
        }
    }
}
