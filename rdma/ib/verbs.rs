// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The entry points of the shim's `rdma_shim_ib_ops`, generic over the driver.
//!
//! Each turns the shim's raw arguments into the driver's types and its
//! result back into the C convention (0 or a negative errno). The `rs`
//! argument is the device state an [`IbRegistration`](super::IbRegistration) stored; object
//! pointers are the boxes the create verbs handed over with
//! [`ForeignOwnable::into_foreign`].

use super::{CqOps, Driver, FailedVerb, MrOps, QpOps, SrqOps, UcontextOps, UdataReq};
use crate::rdma::wr::nth_wr;
use crate::rdma::{raw, try_borrow, uabi, RecvChain, SendChain, UData, UmemDev, UserCtx, WcArray};
use kernel::{
    ffi::{c_int, c_void},
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
pub(in crate::rdma) unsafe fn drv<'a, D: Driver>(rs: *mut c_void) -> &'a D {
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
/// `rdma_shim_dev`), with the contract of [`drv`] for its `rs`.
#[inline(always)]
pub(in crate::rdma) unsafe fn dev_drv<'a, D: Driver>(dev: *mut raw::ib_device) -> &'a D {
    // SAFETY: per the function's contract, `dev` is the `ibdev` field of a
    // live `rdma_shim_dev`, whose `rs` is the registration's pointer.
    unsafe { drv::<D>((*kernel::container_of!(dev, raw::rdma_shim_dev, ibdev)).rs) }
}

/// Converts a result to the C convention.
pub(super) fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `r`, its failure reported to the driver as `verb` first: C's software
/// counter of a verb counts every failure, the layer's own checks
/// included.
pub(super) fn counted<D: Driver, T>(d: &D, verb: FailedVerb, r: Result<T>) -> Result<T> {
    if r.is_err() {
        d.verb_failed(verb);
    }
    r
}

/// A udata length as the driver's request types keep it: saturated to
/// `u32`, which keeps every comparison with a struct length.
pub(super) fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// How a user context is owned while the shim holds it.
pub(in crate::rdma) type UctxBox<D> = Arc<<D as UcontextOps>::Ucontext>;

/// The view of a user verb's caller: the device and the user context.
///
/// # Safety
///
/// `ibdev` is the registered device the verb runs on, `uctx` null or a
/// context from `alloc_ucontext` that outlives `'a`, and the
/// caller runs a uverbs command of the context's process.
pub(super) unsafe fn user_ctx<'a, D: Driver>(
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

/// Called by the shim's mmap.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]).
pub(super) unsafe extern "C" fn mmap_refused<D: Driver>(rs: *mut c_void) -> bool {
    // SAFETY: per the function's contract.
    unsafe { drv::<D>(rs) }.mmap_refused()
}

/// Called by the shim's mmap entry with the mapping's result (0 or a
/// negative errno), which it returns: a failure is the driver's to count.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]).
pub(super) unsafe extern "C" fn mmap_done<D: Driver>(rs: *mut c_void, ret: c_int) -> c_int {
    // SAFETY: per the function's contract.
    let d = unsafe { drv::<D>(rs) };
    if ret != 0 {
        d.verb_failed(FailedVerb::Mmap);
    }
    ret
}

/// Called by the shim's op.
///
/// # Safety
///
/// How an MR is owned while the shim holds it.
pub(in crate::rdma) type MrBox<D> = Pin<KBox<<D as MrOps>::Mr>>;

/// How a CQ is owned while the shim holds it.
pub(in crate::rdma) type CqBox<D> = KBox<<D as CqOps>::Cq>;

/// A request read from `u` whose copy error the driver returns at the
/// point of C's order of checks where C's copy fails (`copy_ret`: 0 when it
/// worked, the request all zero when the copy failed), with the udata's
/// lengths. A request whose `comp_mask` has an unknown bit keeps its
/// members with `-EOPNOTSUPP`, as `ib_copy_validate_udata_in_cm` leaves it.
pub(super) fn read_deferred<T>(u: &UData<'_>) -> UdataReq<T>
where
    T: uabi::UdataIn + FromBytes + AsBytes,
{
    let (copy_ret, req) = match u.read_in::<T>() {
        Ok(r) if r.comp_mask_ok() => (0, r),
        Ok(r) => (EOPNOTSUPP.to_errno(), r),
        Err(e) => (e.to_errno(), T::default()),
    };
    UdataReq {
        copy_ret,
        inlen: len32(u.inlen()),
        outlen: len32(u.outlen()),
        req,
    }
}

/// The `rs_cq` of a CQ of this driver.
///
/// # Safety
///
/// `ibcq` is the `ibcq` of a live `rdma_shim_cq` whose `rs_cq` `create_cq`
/// set (every CQ of this driver's device once the core has it).
#[inline(always)]
pub(in crate::rdma) unsafe fn cq_rs(ibcq: *mut raw::ib_cq) -> *mut c_void {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(ibcq, raw::rdma_shim_cq, ibcq)).rs_cq }
}

/// The `rs_srq` of an SRQ of this driver.
///
/// # Safety
///
/// `ibsrq` is the `ibsrq` of a live `rdma_shim_srq` whose `rs_srq`
/// `create_srq` set.
#[inline(always)]
pub(in crate::rdma) unsafe fn srq_rs(ibsrq: *mut raw::ib_srq) -> *mut c_void {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(ibsrq, raw::rdma_shim_srq, ibsrq)).rs_srq }
}

/// The RDMA core's `poll_cq` (rdma_shim_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibcq` is a live CQ of this driver's registered device; `wc` points to
/// `n` writable entries.
pub(super) unsafe extern "C" fn poll_cq<D: Driver>(
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

/// The RDMA core's `req_notify_cq`, through the shim's function (the
/// core's prototype names an enum, `flags` here is its value).
///
/// # Safety
///
/// `ibcq` is a live CQ of this driver's registered device.
pub(super) unsafe extern "C" fn req_notify_cq<D: Driver>(
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
pub(in crate::rdma) type SrqBox<D> = KBox<<D as SrqOps>::Srq>;

/// How a QP is owned while the shim holds it.
pub(in crate::rdma) type QpBox<D> = Pin<KBox<<D as QpOps>::Qp>>;

/// The `rs_qp` of a QP of this driver.
///
/// # Safety
///
/// `ibqp` is the `ibqp` of a live `rdma_shim_qp` whose `rs_qp` `create_qp`
/// set (every QP of this driver's device once the core has it).
#[inline(always)]
pub(in crate::rdma) unsafe fn qp_rs(ibqp: *mut raw::ib_qp) -> *mut c_void {
    // SAFETY: per the function's contract.
    unsafe { (*kernel::container_of!(ibqp, raw::rdma_shim_qp, ibqp)).rs_qp }
}

/// The RDMA core's `post_recv` (rdma_shim_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device; `wr` is a valid
/// chain of receive WRs for the call; `bad` is valid for writing.
pub(super) unsafe extern "C" fn post_recv<D: Driver>(
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

/// The RDMA core's `post_srq_recv` (rdma_shim_ib_ops' `srq_datapath`).
///
/// # Safety
///
/// `ibsrq` is a live SRQ of this driver's registered device (the `ibsrq`
/// of a `rdma_shim_srq` whose `rs_srq` `create_srq` set); `wr` is a valid
/// chain of receive WRs for the call; `bad` is valid for writing.
pub(super) unsafe extern "C" fn post_srq_recv<D: Driver>(
    ibsrq: *mut raw::ib_srq,
    wr: *const raw::ib_recv_wr,
    bad: *mut *const raw::ib_recv_wr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, s) = unsafe {
        (
            dev_drv::<D>((*ibsrq).device),
            SrqBox::<D>::borrow(srq_rs(ibsrq)),
        )
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

/// The RDMA core's `post_send` (rdma_shim_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device; `wr` is a valid
/// chain of send WRs of the QP's type (`ib_ud_wr` for UD and GSI QPs) for
/// the call; `bad` is valid for writing.
pub(super) unsafe extern "C" fn post_send<D: Driver>(
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
