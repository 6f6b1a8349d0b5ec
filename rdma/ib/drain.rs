// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Draining one queue of a QP: the RDMA core's `drain_sq` and `drain_rq`
//! ops, with the steps a driver's drain is made of.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! A drain moves the QP to ERR, posts one last WR whose `ib_cqe` signals
//! an event when its (flushed) completion is processed, and waits for the
//! event: every WR posted before it has then completed. The core's
//! generic drain (`__ib_drain_sq`) does just that; a driver whose engine
//! may be down during the drain (a reset) needs other choices: a failed
//! move to ERR that is no error, the WR put into its own ring instead of
//! the engine's, the CQ's handler run by hand. So the entry points here
//! build the drain WR's completion and hand the driver a [`Drain`] of
//! steps ([`QpOps::drain`](super::QpOps::drain)); the driver decides
//! their order and what a failure means.
//!
//! The drain WR's completion lives in the entry point's stack frame. Its
//! `done` runs when the CQ's owner processes the WR's work completion;
//! the entry point does not return while a posted WR's `done` can still
//! run (it waits if the driver did not).

use super::verbs::{cq_rs, dev_drv, post_recv, post_send, qp_rs, CqBox, QpBox};
use super::Driver;
use crate::rdma::{raw, Event};
use core::{cell::Cell, marker::PhantomData, ptr::NonNull, sync::atomic::AtomicBool};
use kernel::{prelude::*, types::ForeignOwnable};

/// The completion of a drain WR: the `ib_cqe` the WR names and the event
/// its `done` signals (C's `hns_roce_drain_cqe`).
#[pin_data]
#[repr(C)]
struct DrainCqe {
    cqe: raw::ib_cqe,
    #[pin]
    done: Event,
}

impl DrainCqe {
    /// A completion whose `done` is [`drain_done`].
    fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            cqe: raw::ib_cqe {
                done: Some(drain_done),
            },
            done <- Event::new(),
        })
    }
}

/// The drain WR's `done` (`hns_roce_drain_qp_done`): signals its event.
///
/// # Safety
///
/// Called by the RDMA core with the work completion of a drain WR: its
/// `wr_cqe` is the `cqe` of a [`DrainCqe`] whose drain waits for this
/// call before the completion goes.
unsafe extern "C" fn drain_done(_cq: *mut raw::ib_cq, wc: *mut raw::ib_wc) {
    // SAFETY: `wc` is valid for the call; a drain WR's completion carries
    // its `wr_cqe` (the function's contract).
    let cqe = unsafe { *(*wc).__bindgen_anon_1.wr_cqe.as_ref() };
    // SAFETY: `cqe` is the `cqe` field of a live `DrainCqe` (the function's
    // contract); only its event is touched, which is made to be signalled
    // from any context.
    let done = unsafe { &*core::ptr::addr_of!((*kernel::container_of!(cqe, DrainCqe, cqe)).done) };
    done.complete();
}

/// One drain of a QP's send or receive queue, handed to
/// [`QpOps::drain`](super::QpOps::drain): the steps, each as the RDMA core (or the engine's
/// own ring) does it, in the order the driver calls them.
///
/// # Invariants
///
/// `ibqp` is a live QP of driver `D`'s registered device; `ibcq` is the
/// CQ of the queue being drained (the QP's `send_cq` or `recv_cq`), which
/// the QP keeps alive; `cqe` lives until the entry point that built this
/// drain returns, which it does not while a posted WR's `done` can run.
/// Only that entry point makes one, and it lends it to the driver as
/// `&Drain<'a, D>`: the pointers are used for no longer than `'a`.
pub(crate) struct Drain<'a, D> {
    ibqp: NonNull<raw::ib_qp>,
    ibcq: NonNull<raw::ib_cq>,
    send: bool,
    cqe: Pin<&'a DrainCqe>,
    /// The drain WR was posted and its event not taken yet.
    pending: Cell<bool>,
    _d: PhantomData<fn() -> D>,
}

impl<D: Driver> Drain<'_, D> {
    /// Whether this drains the send queue (`drain_sq`), else the receive
    /// queue (`drain_rq`).
    pub(crate) fn send(&self) -> bool {
        self.send
    }

    /// Moves the QP to ERR through the RDMA core (`ib_modify_qp`).
    ///
    /// # Errors
    ///
    /// The errno of the modify.
    pub(crate) fn to_err(&self) -> Result {
        // SAFETY: the attribute struct is plain data, zero is valid.
        let mut attr: raw::ib_qp_attr = unsafe { core::mem::zeroed() };
        attr.qp_state = raw::ib_qp_state_IB_QPS_ERR;
        // CAST: `IB_QP_STATE` is bit 0, the mask is a C int.
        let mask = raw::ib_qp_attr_mask_IB_QP_STATE as c_int;
        // SAFETY: a live QP (type invariant); `attr` is valid for the call.
        kernel::error::to_result(unsafe { raw::ib_modify_qp(self.ibqp.as_ptr(), &mut attr, mask) })
    }

    /// The drain WR's id (the address of its `ib_cqe`, which shares the
    /// WR's `wr_id` field), for a driver that puts it into its own ring.
    fn wr_id(&self) -> u64 {
        let p: *const raw::ib_cqe = &self.cqe.cqe;
        // CAST: a pointer fits in 64 bits.
        p as usize as u64
    }

    /// Posts the drain WR through the device's own `post_send` or
    /// `post_recv`, as the core posts any WR: an RDMA WRITE of no data on
    /// the send queue, an empty receive on the receive queue.
    ///
    /// # Errors
    ///
    /// The errno of the post.
    pub(crate) fn post(&self) -> Result {
        let cqe: *mut raw::ib_cqe = core::ptr::from_ref(&self.cqe.cqe).cast_mut();
        let qp = self.ibqp.as_ptr();
        let ret = if self.send {
            let mut wr = SendDrainWr {
                // SAFETY: a WR is plain data; zero is valid for every field.
                ud: unsafe { core::mem::zeroed() },
            };
            // SAFETY: both members start with the `ib_send_wr`, which is
            // plain data and written here only.
            let s = unsafe { &mut (*wr.rdma).wr };
            s.opcode = raw::ib_wr_opcode_IB_WR_RDMA_WRITE;
            // SAFETY: writing the pointer member of the WR's id union.
            unsafe { *s.__bindgen_anon_1.wr_cqe.as_mut() = cqe };
            let mut bad = core::ptr::null();
            // SAFETY: a live QP of `D`'s device (type invariant); the WR is
            // one valid `ib_send_wr`, large enough for the `ib_rdma_wr` or
            // `ib_ud_wr` the driver reads it as; `bad` is writable.
            unsafe { post_send::<D>(qp, s, &mut bad) }
        } else {
            // SAFETY: a WR is plain data; zero is valid for every field.
            let mut wr: raw::ib_recv_wr = unsafe { core::mem::zeroed() };
            // SAFETY: writing the pointer member of the WR's id union.
            unsafe { *wr.__bindgen_anon_1.wr_cqe.as_mut() = cqe };
            let mut bad = core::ptr::null();
            // SAFETY: a live QP of `D`'s device (type invariant); the WR is
            // valid for the call; `bad` is writable.
            unsafe { post_recv::<D>(qp, &wr, &mut bad) }
        };
        kernel::error::to_result(ret)?;
        self.pending.set(true);
        Ok(())
    }

    /// Puts the drain WR into the driver's own ring instead: `push` gets
    /// the WR's id, which the driver's software completion of it must
    /// carry (`wr_id`) for `done` to run.
    ///
    /// # Errors
    ///
    /// What `push` returns.
    pub(crate) fn push(&self, push: impl FnOnce(u64) -> Result) -> Result {
        push(self.wr_id())?;
        self.pending.set(true);
        Ok(())
    }

    /// The driver's object of the CQ the drain WR completes on.
    pub(crate) fn cq(&self) -> &D::Cq {
        // SAFETY: a live CQ of `D`'s device, which the QP keeps alive for
        // this borrow (type invariant).
        unsafe { CqBox::<D>::borrow(cq_rs(self.ibcq.as_ptr())) }
    }

    /// Whether the CQ's owner polls it itself (`IB_POLL_DIRECT`): nothing
    /// else processes its completions.
    pub(crate) fn polled_directly(&self) -> bool {
        // SAFETY: a live CQ (type invariant); the field is set at creation.
        unsafe { (*self.ibcq.as_ptr()).poll_ctx == raw::ib_poll_context_IB_POLL_DIRECT }
    }

    /// Waits for the drain WR's completion, processing the CQ in this
    /// context (`ib_process_cq_direct`, every completion it has) each time
    /// `every_ms` milliseconds passed without it. Returns at once if no
    /// drain WR is posted.
    pub(crate) fn poll_until_done(&self, every_ms: u32) {
        if !self.pending.get() {
            return;
        }
        while !self.cqe.done.wait_ms(every_ms) {
            // SAFETY: a live CQ (type invariant), processed by its owner's
            // thread, which is draining.
            unsafe { raw::ib_process_cq_direct(self.ibcq.as_ptr(), -1) };
        }
        self.pending.set(false);
    }

    /// Stops a run of the CQ's handler that is scheduled or running: its
    /// poll is disabled and enabled again (`IB_POLL_SOFTIRQ`) or its work
    /// cancelled or waited for (`IB_POLL_WORKQUEUE`,
    /// `IB_POLL_UNBOUND_WORKQUEUE`); any other poll context is a bug
    /// (warned once).
    pub(crate) fn stop_handler(&self) {
        let cq = self.ibcq.as_ptr();
        // SAFETY: a live CQ (type invariant); the field is set at creation.
        match unsafe { (*cq).poll_ctx } {
            raw::ib_poll_context_IB_POLL_SOFTIRQ => {
                // SAFETY: a CQ of this poll context has its `iop` set up.
                let iop = unsafe { core::ptr::addr_of_mut!((*cq).__bindgen_anon_1.iop) }.cast();
                // SAFETY: as above; process context.
                unsafe {
                    raw::irq_poll_disable(iop);
                    raw::irq_poll_enable(iop);
                }
            }
            raw::ib_poll_context_IB_POLL_WORKQUEUE
            | raw::ib_poll_context_IB_POLL_UNBOUND_WORKQUEUE => {
                // SAFETY: a CQ of these poll contexts has its `work` set up.
                let work = unsafe { core::ptr::addr_of_mut!((*cq).__bindgen_anon_1.work) }.cast();
                // SAFETY: as above; process context.
                unsafe { kernel::bindings::cancel_work_sync(work) };
            }
            _ => {
                static WARNED: AtomicBool = AtomicBool::new(false);
                if !WARNED.swap(true, core::sync::atomic::Ordering::Relaxed) {
                    kernel::warn_on!(true);
                }
            }
        }
    }

    /// Runs the CQ's completion handler here, if it has one.
    pub(crate) fn run_handler(&self) {
        // SAFETY: a live CQ (type invariant).
        unsafe { crate::rdma::wr::cq_completion(self.ibcq.as_ptr()) }
    }

    /// Waits for the drain WR's completion if the CQ has a handler to
    /// process it (without one, nothing would signal it); returns at once
    /// if no drain WR is posted.
    pub(crate) fn wait(&self) {
        // SAFETY: a live CQ (type invariant); the field is set at creation.
        let handler = unsafe { (*self.ibcq.as_ptr()).comp_handler.is_some() };
        if self.pending.get() && handler {
            self.cqe.done.wait();
            self.pending.set(false);
        }
    }
}

/// The send queue's drain WR: an RDMA WRITE (`ib_rdma_wr`), with room for
/// a UD QP's post, which reads any WR as an `ib_ud_wr`.
#[repr(C)]
union SendDrainWr {
    rdma: core::mem::ManuallyDrop<raw::ib_rdma_wr>,
    ud: core::mem::ManuallyDrop<raw::ib_ud_wr>,
}

/// Builds the drain of one queue of `ibqp` and hands it to the driver.
///
/// # Safety
///
/// `ibqp` is a live QP of driver `D`'s registered device.
#[inline(never)]
unsafe fn drain<D: Driver>(ibqp: *mut raw::ib_qp, send: bool) {
    // SAFETY: a live QP (the function's contract).
    let cq = unsafe {
        if send {
            (*ibqp).send_cq
        } else {
            (*ibqp).recv_cq
        }
    };
    let (Some(ibqp), Some(ibcq)) = (NonNull::new(ibqp), NonNull::new(cq)) else {
        // No CQ: no completion could ever end the drain.
        return;
    };
    pin_init::stack_pin_init!(let cqe = DrainCqe::new());
    // INVARIANT: a live QP of `D`'s device and its CQ; `cqe` is this
    // frame's, which waits below for a posted WR before it goes.
    let d = Drain::<D> {
        ibqp,
        ibcq,
        send,
        cqe: cqe.as_ref(),
        pending: Cell::new(false),
        _d: PhantomData,
    };
    // SAFETY: a live QP of `D`'s device (the function's contract).
    let (drv, q) = unsafe {
        (
            dev_drv::<D>((*ibqp.as_ptr()).device),
            QpBox::<D>::borrow(qp_rs(ibqp.as_ptr())).get_ref(),
        )
    };
    drv.drain(q, &d);
    // The WR's `done` must not outlive this frame.
    d.wait();
}

/// The RDMA core's `drain_sq` (rdma_shim_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device.
pub(super) unsafe extern "C" fn drain_sq<D: Driver>(ibqp: *mut raw::ib_qp) {
    // SAFETY: per the function's contract.
    unsafe { drain::<D>(ibqp, true) }
}

/// The RDMA core's `drain_rq` (rdma_shim_ib_ops' `datapath`).
///
/// # Safety
///
/// `ibqp` is a live QP of this driver's registered device.
pub(super) unsafe extern "C" fn drain_rq<D: Driver>(ibqp: *mut raw::ib_qp) {
    // SAFETY: per the function's contract.
    unsafe { drain::<D>(ibqp, false) }
}
