// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The rdma layer's data-path views: the `ib_cq`/`ib_qp`/`ib_srq` handles
//! the event and completion paths call back through, the `struct
//! ib_send_wr` chain of `post_send` and the `struct ib_wc` array of
//! `poll_cq`.
//!
//! Like the rest of `rdma`, this is where raw bindings and shim calls are
//! used; the object files see safe types only.

use super::raw;
use super::wc::{Wc, WcOpcode, WcStatus};
use core::ptr::NonNull;
use kernel::prelude::*;

/// The `struct ib_cq` of a CQ, for its completion and event handlers; or
/// none, for a CQ the driver keeps for itself (C's free-MR CQ, which no
/// handler is set on).
///
/// There is one handle per CQ, made at `create_cq` and moved into the
/// driver's CQ object: it is neither `Clone` nor `Copy`, so the rest of
/// the driver reaches it only as `&IbCq` borrowed from that object, and a
/// borrow cannot outlive the object it came from. Keeping a handle past
/// its CQ (a copy in another object, a `'static` borrow) does not build.
///
/// # Invariants
///
/// When not `None`, points to the live `ib_cq` of a CQ of this driver
/// while the driver's CQ object that owns the handle exists: the driver
/// stops every use of that object (takes the CQ out of the CQ table and
/// waits until no event handler holds it) before `destroy_cq` returns.
pub(crate) struct IbCq(Option<NonNull<raw::ib_cq>>);

// SAFETY: the handle is a pointer the RDMA core allows to be used from any
// context (completion handlers run in interrupt context).
unsafe impl Send for IbCq {}
// SAFETY: as above.
unsafe impl Sync for IbCq {}

/// Runs a CQ's completion handler (`comp_handler`), if it has one: from
/// the CEQ interrupt, a teardown's software completions and a drain.
///
/// # Safety
///
/// `ibcq` is a live `ib_cq`.
pub(crate) unsafe fn cq_completion(ibcq: *mut raw::ib_cq) {
    // SAFETY: per the function's contract.
    let (handler, ctx) = unsafe { ((*ibcq).comp_handler, (*ibcq).cq_context) };
    if let Some(f) = handler {
        // SAFETY: the core's handler of this CQ, with its context.
        unsafe { f(ibcq, ctx) };
    }
}

/// Calls an object's asynchronous event handler, if it has one, with
/// `ev`, which names the object.
///
/// # Safety
///
/// `handler` and `ctx` are a live object's `event_handler` and its
/// context, read just before.
unsafe fn send_event(
    handler: Option<unsafe extern "C" fn(*mut raw::ib_event, *mut kernel::ffi::c_void)>,
    ev: &mut raw::ib_event,
    ctx: *mut kernel::ffi::c_void,
) {
    if let Some(f) = handler {
        // SAFETY: per the function's contract; `ev` lives for the call.
        unsafe { f(ev, ctx) };
    }
}

impl IbCq {
    /// Wraps the `ib_cq` pointer the shim passed at creation.
    ///
    /// # Safety
    ///
    /// `p` is the `ib_cq` of the CQ being created, and the caller keeps
    /// the type invariant.
    pub(crate) unsafe fn new(p: *mut raw::ib_cq) -> Option<Self> {
        NonNull::new(p).map(|p| Self(Some(p)))
    }

    /// The handle of a CQ the driver creates for itself: it has no
    /// handlers, and nobody is told of its completions or errors.
    pub(crate) fn reserved() -> Self {
        Self(None)
    }

    /// Calls the CQ's completion handler (`hns_roce_cq_completion`).
    pub(crate) fn completion(&self) {
        if let Some(p) = self.0 {
            // SAFETY: the `ib_cq` is live (type invariant).
            unsafe { cq_completion(p.as_ptr()) }
        }
    }

    /// Whether the CQ has a completion handler and is not polled directly
    /// (`IB_POLL_DIRECT`): what a teardown may call to flush it.
    pub(crate) fn armable(&self) -> bool {
        match self.0 {
            Some(p) => {
                // SAFETY: the `ib_cq` is live (type invariant).
                let (handler, ctx) =
                    unsafe { ((*p.as_ptr()).comp_handler, (*p.as_ptr()).poll_ctx) };
                handler.is_some() && ctx != raw::ib_poll_context_IB_POLL_DIRECT
            }
            None => false,
        }
    }

    /// Sends `IB_EVENT_CQ_ERR` to the CQ's event handler.
    pub(crate) fn error_event(&self) {
        if let Some(p) = self.0 {
            let p = p.as_ptr();
            let mut ev = raw::ib_event::default();
            // SAFETY: the `ib_cq` is live (type invariant); the event
            // names it as its element.
            unsafe {
                ev.device = (*p).device;
                *ev.element.cq.as_mut() = p;
                ev.event = raw::ib_event_type_IB_EVENT_CQ_ERR;
                send_event((*p).event_handler, &mut ev, (*p).cq_context);
            }
        }
    }
}

/// Events of an SRQ, as `enum ib_event_type` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SrqEvent {
    /// `IB_EVENT_SRQ_LIMIT_REACHED`.
    LimitReached,
    /// `IB_EVENT_SRQ_ERR`.
    Err,
}

/// The `struct ib_srq` of an SRQ, for its asynchronous events.
///
/// One per SRQ, owned by the driver's SRQ table entry and reached only as
/// a borrow of it, as [`IbCq`] is.
///
/// # Invariants
///
/// Points to the live `ib_srq` of an SRQ of this driver; the driver stops
/// every use (takes the SRQ out of its SRQ table and waits until no event
/// handler holds it) before `destroy_srq` returns.
pub(crate) struct IbSrq(NonNull<raw::ib_srq>);

// SAFETY: as for `IbCq`.
unsafe impl Send for IbSrq {}
// SAFETY: as above.
unsafe impl Sync for IbSrq {}

impl IbSrq {
    /// Wraps the `ib_srq` pointer the shim passed at creation.
    ///
    /// # Safety
    ///
    /// `p` is the `ib_srq` of the SRQ being created, and the caller keeps
    /// the type invariant.
    pub(crate) unsafe fn new(p: *mut raw::ib_srq) -> Option<Self> {
        NonNull::new(p).map(Self)
    }

    /// Sends `ev` to the SRQ's event handler, if it has one
    /// (`hns_roce_ib_srq_event`).
    pub(crate) fn event(&self, ev: SrqEvent) {
        let ty = match ev {
            SrqEvent::LimitReached => raw::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED,
            SrqEvent::Err => raw::ib_event_type_IB_EVENT_SRQ_ERR,
        };
        let p = self.0.as_ptr();
        let mut ev = raw::ib_event::default();
        // SAFETY: the `ib_srq` is live (type invariant); the event names it
        // as its element.
        unsafe {
            ev.device = (*p).device;
            *ev.element.srq.as_mut() = p;
            ev.event = ty;
            send_event((*p).event_handler, &mut ev, (*p).srq_context);
        }
    }
}

/// Events of a QP, as `enum ib_event_type` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpEvent {
    /// `IB_EVENT_PATH_MIG`.
    PathMig,
    /// `IB_EVENT_COMM_EST`.
    CommEst,
    /// `IB_EVENT_SQ_DRAINED`.
    SqDrained,
    /// `IB_EVENT_QP_LAST_WQE_REACHED`.
    LastWqeReached,
    /// `IB_EVENT_QP_FATAL`.
    Fatal,
    /// `IB_EVENT_PATH_MIG_ERR`.
    PathMigErr,
    /// `IB_EVENT_QP_REQ_ERR`.
    ReqErr,
    /// `IB_EVENT_QP_ACCESS_ERR`.
    AccessErr,
}

impl QpEvent {
    fn raw(self) -> raw::ib_event_type {
        match self {
            QpEvent::PathMig => raw::ib_event_type_IB_EVENT_PATH_MIG,
            QpEvent::CommEst => raw::ib_event_type_IB_EVENT_COMM_EST,
            QpEvent::SqDrained => raw::ib_event_type_IB_EVENT_SQ_DRAINED,
            QpEvent::LastWqeReached => raw::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED,
            QpEvent::Fatal => raw::ib_event_type_IB_EVENT_QP_FATAL,
            QpEvent::PathMigErr => raw::ib_event_type_IB_EVENT_PATH_MIG_ERR,
            QpEvent::ReqErr => raw::ib_event_type_IB_EVENT_QP_REQ_ERR,
            QpEvent::AccessErr => raw::ib_event_type_IB_EVENT_QP_ACCESS_ERR,
        }
    }
}

/// The `struct ib_qp` of a QP, for completions (`wc->qp`), events and the
/// deferred move to ERR; or none, for a QP the driver keeps for itself
/// (C's free-MR QPs: no event handler, moved to ERR by their owner).
///
/// One per QP, owned by the driver's QP core and reached only as a borrow
/// of it, as [`IbCq`] is.
///
/// # Invariants
///
/// When not `None`, points to the live `ib_qp` of a kernel QP of this
/// driver; the driver stops every use (pending flush work finished, QP
/// table entry removed and no event handler holding it) before
/// `destroy_qp` returns.
pub(crate) struct IbQp(Option<NonNull<raw::ib_qp>>);

// SAFETY: as for `IbCq`.
unsafe impl Send for IbQp {}
// SAFETY: as above.
unsafe impl Sync for IbQp {}

impl IbQp {
    /// Wraps the `ib_qp` pointer the shim passed at creation.
    ///
    /// # Safety
    ///
    /// `p` is the `ib_qp` of the QP being created, and the caller keeps
    /// the type invariant.
    pub(crate) unsafe fn new(p: *mut raw::ib_qp) -> Option<Self> {
        NonNull::new(p).map(|p| Self(Some(p)))
    }

    /// The handle of a QP the driver creates for itself.
    pub(crate) fn reserved() -> Self {
        Self(None)
    }

    /// Whether this is a QP the driver keeps for itself.
    pub(crate) fn is_reserved(&self) -> bool {
        self.0.is_none()
    }

    /// Sends `ev` to the QP's event handler, if it has one.
    pub(crate) fn event(&self, ev: QpEvent) {
        if let Some(p) = self.0 {
            let p = p.as_ptr();
            let mut e = raw::ib_event::default();
            // SAFETY: the `ib_qp` is live (type invariant); the event names
            // it as its element.
            unsafe {
                e.device = (*p).device;
                *e.element.qp.as_mut() = p;
                e.event = ev.raw();
                send_event((*p).event_handler, &mut e, (*p).qp_context);
            }
        }
    }

    /// Moves the QP to ERR through the driver's own modify (the C
    /// driver's `flush_work_handle`); may sleep. A reserved QP has no
    /// `ib_qp` to go through: `EINVAL`.
    pub(crate) fn modify_to_err(&self) -> Result {
        let p = self.0.ok_or(EINVAL)?;
        // SAFETY: the `ib_qp` is live (type invariant); called from
        // process context.
        unsafe { super::ib::modify_to_err(p.as_ptr()) }
    }
}

/// `IB_WR_*` opcodes of a send WR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrOpcode {
    /// `IB_WR_RDMA_WRITE`.
    RdmaWrite,
    /// `IB_WR_RDMA_WRITE_WITH_IMM`.
    RdmaWriteWithImm,
    /// `IB_WR_SEND`.
    Send,
    /// `IB_WR_SEND_WITH_IMM`.
    SendWithImm,
    /// `IB_WR_RDMA_READ`.
    RdmaRead,
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    AtomicCmpAndSwp,
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    AtomicFetchAndAdd,
    /// `IB_WR_SEND_WITH_INV`.
    SendWithInv,
    /// `IB_WR_REG_MR`.
    RegMr,
    /// Anything else (`IB_WR_LOCAL_INV`, masked atomics, ...).
    Other(u32),
}

impl WrOpcode {
    fn from_raw(v: u32) -> Self {
        match v {
            raw::ib_wr_opcode_IB_WR_RDMA_WRITE => WrOpcode::RdmaWrite,
            raw::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM => WrOpcode::RdmaWriteWithImm,
            raw::ib_wr_opcode_IB_WR_SEND => WrOpcode::Send,
            raw::ib_wr_opcode_IB_WR_SEND_WITH_IMM => WrOpcode::SendWithImm,
            raw::ib_wr_opcode_IB_WR_RDMA_READ => WrOpcode::RdmaRead,
            raw::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP => WrOpcode::AtomicCmpAndSwp,
            raw::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => WrOpcode::AtomicFetchAndAdd,
            raw::ib_wr_opcode_IB_WR_SEND_WITH_INV => WrOpcode::SendWithInv,
            raw::ib_wr_opcode_IB_WR_REG_MR => WrOpcode::RegMr,
            o => WrOpcode::Other(o),
        }
    }
}

// CAST (all four): small non-negative flag bits of a C enum bindgen types
// as `i32` (the enum also holds `1 << 31`).
/// `IB_SEND_FENCE`.
pub(crate) const SEND_FENCE: u32 = raw::ib_send_flags_IB_SEND_FENCE as u32;
/// `IB_SEND_SIGNALED`.
pub(crate) const SEND_SIGNALED: u32 = raw::ib_send_flags_IB_SEND_SIGNALED as u32;
/// `IB_SEND_SOLICITED`.
pub(crate) const SEND_SOLICITED: u32 = raw::ib_send_flags_IB_SEND_SOLICITED as u32;
/// `IB_SEND_INLINE`.
pub(crate) const SEND_INLINE: u32 = raw::ib_send_flags_IB_SEND_INLINE as u32;

/// The UD part of a send WR (`struct ib_ud_wr`).
pub(crate) struct UdWr {
    /// The AH's address vector.
    pub(crate) av: super::AddrVec,
    /// Destination QP.
    pub(crate) remote_qpn: u32,
    /// Destination Q_Key.
    pub(crate) remote_qkey: u32,
}

/// The fast-registration part of a send WR (`struct ib_reg_wr`) with what
/// the core's `ib_map_mr_sg` left in its MR.
pub(crate) struct RegWr<'a, M> {
    /// The driver's MR.
    pub(crate) mr: &'a M,
    /// The key to register it under.
    pub(crate) key: u32,
    /// `IB_ACCESS_*` rights.
    pub(crate) access: u32,
    /// I/O virtual address of the mapping (`ib_mr.iova`).
    pub(crate) iova: u64,
    /// Bytes mapped (`ib_mr.length`).
    pub(crate) length: u64,
}

/// One send work request of a chain, read in place from the caller's
/// `ib_send_wr` (and the container its opcode names) field by field when
/// the driver asks for it: nothing of the WR is copied whole, and what a
/// WQE does not use is never read. `M` is the driver's MR type (for
/// REG_MR).
///
/// # Invariants
///
/// `wr` is a valid `ib_send_wr` for `'a`, with its SGE array, AH and MR.
/// When `ud` is set the QP is a UD or GSI one: the WR is inside an
/// `ib_ud_wr`, and a SEND or SEND_WITH_IMM names a live AH of this device.
/// Otherwise an RDMA, atomic or REG_MR WR is inside an `ib_rdma_wr`,
/// `ib_atomic_wr` or `ib_reg_wr`. The MRs of this driver hold an `M`.
pub(crate) struct SendWr<'a, M> {
    wr: &'a raw::ib_send_wr,
    ud: bool,
    _m: core::marker::PhantomData<&'a M>,
}

impl<'a, M: 'a> SendWr<'a, M> {
    /// The caller's id (or its `ib_cqe` pointer).
    #[inline(always)]
    pub(crate) fn wr_id(&self) -> u64 {
        // SAFETY: both union members are 8 bytes; C reads `wr_id` too.
        unsafe { *self.wr.__bindgen_anon_1.wr_id.as_ref() }
    }

    /// Opcode.
    #[inline(always)]
    pub(crate) fn opcode(&self) -> WrOpcode {
        WrOpcode::from_raw(self.wr.opcode)
    }

    /// `IB_SEND_*` flags.
    #[inline(always)]
    pub(crate) fn flags(&self) -> u32 {
        // CAST: flag bits.
        self.wr.send_flags as u32
    }

    /// Its scatter list (none for a negative count or a null list).
    #[inline(always)]
    pub(crate) fn sges(&self) -> &'a [Sge] {
        // CAST: a negative count is treated as none.
        let n = self.wr.num_sge.max(0) as usize;
        if n == 0 || self.wr.sg_list.is_null() {
            &[]
        } else {
            // SAFETY: the caller's `sg_list` holds `num_sge` elements,
            // valid for `'a` (type invariant); `Sge` is a transparent
            // wrapper of `ib_sge`.
            unsafe { core::slice::from_raw_parts(self.wr.sg_list.cast::<Sge>(), n) }
        }
    }

    /// The `ex` word as it is stored (the rkey to invalidate of a
    /// SEND_WITH_INV).
    #[inline(always)]
    pub(crate) fn invalidate_rkey(&self) -> u32 {
        // SAFETY: both union members are 4 bytes.
        unsafe { *self.wr.ex.invalidate_rkey.as_ref() }
    }

    /// Immediate data in host order (`be32_to_cpu` of the WR's).
    #[inline(always)]
    pub(crate) fn imm(&self) -> u32 {
        u32::from_be(self.invalidate_rkey())
    }

    /// RDMA and atomic WRs of a QP other than UD or GSI: the remote
    /// address and key; `(0, 0)` for any other WR.
    #[inline(always)]
    pub(crate) fn remote(&self) -> (u64, u32) {
        if self.ud {
            return (0, 0);
        }
        let p: *const raw::ib_send_wr = self.wr;
        match self.opcode() {
            WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm | WrOpcode::RdmaRead => {
                // SAFETY: RDMA WRs are `ib_rdma_wr`s (type invariant).
                let r = unsafe { &*p.cast::<raw::ib_rdma_wr>() };
                (r.remote_addr, r.rkey)
            }
            WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd => {
                // SAFETY: atomic WRs are `ib_atomic_wr`s (type invariant).
                let a = unsafe { &*p.cast::<raw::ib_atomic_wr>() };
                (a.remote_addr, a.rkey)
            }
            _ => (0, 0),
        }
    }

    /// Atomic WRs of a QP other than UD or GSI: the compare (CMP_AND_SWP)
    /// or add (FETCH_AND_ADD) operand and the swap operand; `(0, 0)` for
    /// any other WR.
    #[inline(always)]
    pub(crate) fn atomic(&self) -> (u64, u64) {
        if self.ud {
            return (0, 0);
        }
        match self.opcode() {
            WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd => {
                let p: *const raw::ib_send_wr = self.wr;
                // SAFETY: atomic WRs are `ib_atomic_wr`s (type invariant).
                let a = unsafe { &*p.cast::<raw::ib_atomic_wr>() };
                (a.compare_add, a.swap)
            }
            _ => (0, 0),
        }
    }

    /// UD and GSI QPs' SEND and SEND_WITH_IMM: the destination; `None`
    /// for another WR, or when the AH has no address vector. A WR the
    /// driver turns away is never followed past its `ib_send_wr`.
    #[inline(always)]
    pub(crate) fn ud(&self) -> Option<UdWr> {
        if !self.ud || !matches!(self.opcode(), WrOpcode::Send | WrOpcode::SendWithImm) {
            return None;
        }
        let p: *const raw::ib_send_wr = self.wr;
        // SAFETY: `ud` is set only for a UD or GSI QP, whose WRs are
        // `ib_ud_wr`s with the `ib_send_wr` first (type invariant).
        let u = unsafe { &*p.cast::<raw::ib_ud_wr>() };
        // SAFETY: a SEND of a UD or GSI QP names a live AH of this device,
        // or none (type invariant).
        let av = unsafe { super::ib::ah_av(u.ah) }?;
        Some(UdWr {
            av,
            remote_qpn: u.remote_qpn,
            remote_qkey: u.remote_qkey,
        })
    }

    /// REG_MR WRs of a QP other than UD or GSI: the MR and its
    /// registration; `None` for another WR, or when the WR names no MR of
    /// this driver.
    pub(crate) fn reg(&self) -> Option<RegWr<'a, M>> {
        if self.ud || self.opcode() != WrOpcode::RegMr {
            return None;
        }
        let p: *const raw::ib_send_wr = self.wr;
        // SAFETY: REG_MR WRs are `ib_reg_wr`s (type invariant), valid for
        // `'a`.
        let r: &'a raw::ib_reg_wr = unsafe { &*p.cast::<raw::ib_reg_wr>() };
        // SAFETY: the WR's MR is live (type invariant); the answer is null
        // unless it is this driver's.
        let h = unsafe { super::ib::mr::mr_rs(r.mr) };
        // SAFETY: a non-null handle is the foreign form of the MR's pinned
        // box, live for `'a` (type invariant).
        let mr = unsafe { super::try_borrow::<Pin<KBox<M>>>(h) }?;
        // SAFETY: `r.mr` is non-null (the shim found it) and live; the
        // core's `ib_map_mr_sg` set its range.
        let m = unsafe { &*r.mr };
        Some(RegWr {
            mr: mr.get_ref(),
            key: r.key,
            // CAST: `IB_ACCESS_*` flag bits.
            access: r.access as u32,
            iova: m.iova,
            length: m.length,
        })
    }

    /// The inline data of an `IB_SEND_INLINE` WR, one slice per segment
    /// that holds bytes, in order (none for a WR without the flag).
    pub(crate) fn inline_segments(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let sges = if self.flags() & SEND_INLINE != 0 {
            self.sges()
        } else {
            &[]
        };
        sges.iter().filter_map(|s| {
            // CAST: a u32 length fits usize; an address the caller gave as u64.
            let (len, src) = (s.length() as usize, s.addr() as usize as *const u8);
            if src.is_null() || len == 0 {
                return None;
            }
            // SAFETY: for `IB_SEND_INLINE` the RDMA core's contract is that
            // the SGE addresses are kernel virtual addresses of `length`
            // readable bytes, valid for the duration of the post, which
            // `'a` does not outlive.
            Some(unsafe { core::slice::from_raw_parts(src, len) })
        })
    }

    /// Copies the inline data the SGEs point at into `out` (at most its
    /// length); how many bytes were copied.
    pub(crate) fn inline_data(&self, out: &mut [u8]) -> usize {
        let mut n = 0;
        for s in self.sges() {
            // CAST: a u32 length fits usize.
            let len = s.length() as usize;
            let Some(dst) = out.get_mut(n..n + len) else {
                break;
            };
            // CAST: an address the caller gave as u64.
            let src = s.addr() as usize as *const u8;
            if src.is_null() {
                break;
            }
            // SAFETY: for `IB_SEND_INLINE` the RDMA core's contract is that
            // the SGE addresses are kernel virtual addresses of `length`
            // readable bytes, valid for the duration of the post.
            let bytes = unsafe { core::slice::from_raw_parts(src, len) };
            dst.copy_from_slice(bytes);
            n += len;
        }
        n
    }
}

/// Walks a chain of `struct ib_send_wr` of a UD or GSI QP (`ud`) or of
/// another type.
///
/// # Invariants
///
/// `cur` is null or points to a valid `ib_send_wr` whose chain, SGE arrays,
/// AHs and MRs stay valid for `'a`. When `ud` is set the QP is a UD or GSI
/// one: every WR is inside an `ib_ud_wr`, and a SEND or SEND_WITH_IMM names
/// a live AH of this device. Otherwise an RDMA, atomic or REG_MR WR is
/// inside an `ib_rdma_wr`, `ib_atomic_wr` or `ib_reg_wr`. The MRs of this
/// driver hold an `M`.
pub(crate) struct SendChain<'a, M> {
    cur: *const raw::ib_send_wr,
    ud: bool,
    _p: core::marker::PhantomData<(&'a raw::ib_send_wr, &'a M)>,
}

impl<M> SendChain<'_, M> {
    /// A chain starting at `wr`.
    ///
    /// # Safety
    ///
    /// As the type invariant.
    pub(crate) unsafe fn new(wr: *const raw::ib_send_wr, ud: bool) -> Self {
        // INVARIANT: the caller's contract.
        Self {
            cur: wr,
            ud,
            _p: core::marker::PhantomData,
        }
    }
}

impl<'a, M: 'a> Iterator for SendChain<'a, M> {
    type Item = SendWr<'a, M>;

    #[inline(always)]
    fn next(&mut self) -> Option<SendWr<'a, M>> {
        // SAFETY: non-null, hence valid for `'a` (type invariant).
        let wr: &'a raw::ib_send_wr = unsafe { self.cur.as_ref() }?;
        // INVARIANT: `next` is null or the next valid WR of the chain.
        self.cur = wr.next;
        // INVARIANT: a WR of the chain, of the chain's QP type.
        Some(SendWr {
            wr,
            ud: self.ud,
            _m: core::marker::PhantomData,
        })
    }
}

/// The one WR of a free-MR round (C's on-stack `ib_rdma_wr`): a
/// zero-length RDMA WRITE with WR id 0, no flag, SGE, address or key,
/// built by the driver and walked as a chain of one. Going through
/// [`SendChain`] keeps a single copy of the send path in the module.
pub(crate) struct ZeroWrite(raw::ib_rdma_wr);

impl ZeroWrite {
    /// The WR.
    pub(crate) fn new() -> Self {
        // SAFETY: an all-zero `ib_rdma_wr` is valid (integers, null
        // pointers); it reads as opcode 0, `IB_WR_RDMA_WRITE`, with a null
        // `next` and no SGE.
        Self(unsafe { core::mem::zeroed() })
    }

    /// The chain of this one WR, of an RC QP.
    pub(crate) fn as_chain<M>(&self) -> SendChain<'_, M> {
        // SAFETY: `self.0.wr` heads a valid chain of one RDMA WR inside its
        // `ib_rdma_wr`, with no SGE or MR, borrowed for the chain's life.
        unsafe { SendChain::new(&self.0.wr, false) }
    }
}

/// The caller's `struct ib_wc` array of a `poll_cq`.
///
/// # Invariants
///
/// `wc` points to `n` writable `ib_wc`s for the lifetime `'a`.
pub(crate) struct WcArray<'a> {
    wc: *mut raw::ib_wc,
    n: usize,
    _p: core::marker::PhantomData<&'a mut raw::ib_wc>,
}

/// A `struct ib_wc` array of the driver's own, for polling a CQ nobody
/// else polls (C's on-stack array of the free-MR round).
pub(crate) struct WcBuf<const N: usize>([raw::ib_wc; N]);

impl<const N: usize> WcBuf<N> {
    /// `N` zeroed entries.
    pub(crate) fn new() -> Self {
        // SAFETY: an all-zero `ib_wc` is valid (integers, null pointers).
        Self(unsafe { core::mem::zeroed() })
    }

    /// The first `n` entries (at most `N`) as a poll's array.
    pub(crate) fn array(&mut self, n: usize) -> WcArray<'_> {
        // SAFETY: `min(n, N)` entries of `self`, writable while the
        // returned array borrows it.
        unsafe { WcArray::new(self.0.as_mut_ptr(), n.min(N)) }
    }
}

impl WcArray<'_> {
    /// The array at `wc` of `n` entries.
    ///
    /// # Safety
    ///
    /// As the type invariant.
    pub(crate) unsafe fn new(wc: *mut raw::ib_wc, n: usize) -> Self {
        // INVARIANT: the caller's contract.
        Self {
            wc,
            n,
            _p: core::marker::PhantomData,
        }
    }

    /// Entries.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    fn slot(&mut self, i: usize) -> Option<&mut raw::ib_wc> {
        if i >= self.n {
            return None;
        }
        // SAFETY: `i < n`, writable (type invariant).
        Some(unsafe { &mut *self.wc.add(i) })
    }

    /// Fills entry `i` with `c`, the WR id and the QP; the members a
    /// [`Wc`] leaves unset are zero. Inline: the poll loop's decoded CQE
    /// then goes straight into the entry.
    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, c: &Wc, wr_id: u64, qp: &IbQp) {
        let Some(wc) = self.slot(i) else {
            return;
        };
        // SAFETY: an all-zero `ib_wc` is valid (integers, a null pointer).
        *wc = unsafe { core::mem::zeroed() };
        // SAFETY: writing the 8-byte `wr_id` member of the union.
        unsafe { *wc.__bindgen_anon_1.wr_id.as_mut() = wr_id };
        wc.status = wc_status(c.status);
        if let Some(op) = c.opcode {
            wc.opcode = wc_opcode(op);
        }
        wc.vendor_err = c.vendor_err;
        wc.byte_len = c.byte_len.unwrap_or(0);
        wc.qp = qp.0.map_or(core::ptr::null_mut(), |p| p.as_ptr());
        // SAFETY: writing the 4-byte members of the `ex` union.
        unsafe {
            if c.flags.with_imm {
                *wc.ex.imm_data.as_mut() = c.imm.to_be();
            } else if c.flags.with_inv {
                *wc.ex.invalidate_rkey.as_mut() = c.invalidate_rkey;
            }
        }
        let mut flags = 0u32;
        if c.flags.with_imm {
            flags |= raw::ib_wc_flags_IB_WC_WITH_IMM;
        }
        if c.flags.with_inv {
            flags |= raw::ib_wc_flags_IB_WC_WITH_INVALIDATE;
        }
        if c.flags.grh {
            flags |= raw::ib_wc_flags_IB_WC_GRH;
        }
        if c.flags.with_vlan {
            flags |= raw::ib_wc_flags_IB_WC_WITH_VLAN;
        }
        // CAST: flag bits.
        wc.wc_flags = flags as i32;
        if let Some(r) = c.recv {
            wc.src_qp = r.src_qp;
            wc.sl = r.sl;
            wc.port_num = u32::from(r.port_num);
            wc.vlan_id = r.vlan_id;
            wc.network_hdr_type = r.network_hdr_type;
        }
    }
}

fn wc_status(s: WcStatus) -> raw::ib_wc_status {
    use WcStatus::*;
    match s {
        Success => raw::ib_wc_status_IB_WC_SUCCESS,
        LocLenErr => raw::ib_wc_status_IB_WC_LOC_LEN_ERR,
        LocQpOpErr => raw::ib_wc_status_IB_WC_LOC_QP_OP_ERR,
        LocProtErr => raw::ib_wc_status_IB_WC_LOC_PROT_ERR,
        WrFlushErr => raw::ib_wc_status_IB_WC_WR_FLUSH_ERR,
        MwBindErr => raw::ib_wc_status_IB_WC_MW_BIND_ERR,
        BadRespErr => raw::ib_wc_status_IB_WC_BAD_RESP_ERR,
        LocAccessErr => raw::ib_wc_status_IB_WC_LOC_ACCESS_ERR,
        RemInvReqErr => raw::ib_wc_status_IB_WC_REM_INV_REQ_ERR,
        RemAccessErr => raw::ib_wc_status_IB_WC_REM_ACCESS_ERR,
        RemOpErr => raw::ib_wc_status_IB_WC_REM_OP_ERR,
        RetryExcErr => raw::ib_wc_status_IB_WC_RETRY_EXC_ERR,
        RnrRetryExcErr => raw::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR,
        RemAbortErr => raw::ib_wc_status_IB_WC_REM_ABORT_ERR,
        GeneralErr => raw::ib_wc_status_IB_WC_GENERAL_ERR,
    }
}

fn wc_opcode(o: WcOpcode) -> raw::ib_wc_opcode {
    use WcOpcode::*;
    match o {
        Send => raw::ib_wc_opcode_IB_WC_SEND,
        RdmaWrite => raw::ib_wc_opcode_IB_WC_RDMA_WRITE,
        RdmaRead => raw::ib_wc_opcode_IB_WC_RDMA_READ,
        CompSwap => raw::ib_wc_opcode_IB_WC_COMP_SWAP,
        FetchAdd => raw::ib_wc_opcode_IB_WC_FETCH_ADD,
        MaskedCompSwap => raw::ib_wc_opcode_IB_WC_MASKED_COMP_SWAP,
        MaskedFetchAdd => raw::ib_wc_opcode_IB_WC_MASKED_FETCH_ADD,
        RegMr => raw::ib_wc_opcode_IB_WC_REG_MR,
        Recv => raw::ib_wc_opcode_IB_WC_RECV,
        RecvRdmaWithImm => raw::ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM,
    }
}

/// One scatter/gather element of a work request (`struct ib_sge`).
#[repr(transparent)]
pub(crate) struct Sge(raw::ib_sge);

impl Sge {
    /// Address.
    pub(crate) fn addr(&self) -> u64 {
        self.0.addr
    }
    /// Length in bytes.
    pub(crate) fn length(&self) -> u32 {
        self.0.length
    }
    /// Local key.
    pub(crate) fn lkey(&self) -> u32 {
        self.0.lkey
    }
}

/// One receive work request.
pub(crate) struct RecvWr<'a> {
    /// The caller's id (or its `ib_cqe` pointer), returned in the
    /// completion.
    pub(crate) wr_id: u64,
    /// Its scatter list.
    pub(crate) sges: &'a [Sge],
}

/// Walks a chain of `struct ib_recv_wr`.
///
/// # Invariants
///
/// `cur` is null or points to a valid `ib_recv_wr` whose `next` chain and
/// SGE arrays stay valid and unchanged for `'a`.
pub(crate) struct RecvChain<'a> {
    cur: *const raw::ib_recv_wr,
    _p: core::marker::PhantomData<&'a raw::ib_recv_wr>,
}

impl RecvChain<'_> {
    /// Walks the chain at `wr`.
    ///
    /// # Safety
    ///
    /// `wr` is null or a valid chain of receive WRs whose elements and SGE
    /// arrays stay valid and unchanged while the walker lives.
    pub(super) unsafe fn new(wr: *const raw::ib_recv_wr) -> Self {
        // INVARIANT: per the function's contract.
        Self {
            cur: wr,
            _p: core::marker::PhantomData,
        }
    }
}

impl<'a> Iterator for RecvChain<'a> {
    type Item = RecvWr<'a>;

    fn next(&mut self) -> Option<RecvWr<'a>> {
        if self.cur.is_null() {
            return None;
        }
        // SAFETY: non-null, hence valid for `'a` (type invariant).
        let wr = unsafe { &*self.cur };
        // SAFETY: both union members are 8 bytes; C reads `wr_id` too.
        let wr_id = unsafe { *wr.__bindgen_anon_1.wr_id.as_ref() };
        // CAST: a negative count is treated as none.
        let n = wr.num_sge.max(0) as usize;
        let sges = if n == 0 || wr.sg_list.is_null() {
            &[][..]
        } else {
            // SAFETY: the caller's `sg_list` holds `num_sge` elements, valid
            // for `'a`; `Sge` is a transparent wrapper of `ib_sge`.
            unsafe { core::slice::from_raw_parts(wr.sg_list.cast::<Sge>(), n) }
        };
        // INVARIANT: `next` is null or the next valid WR of the chain.
        self.cur = wr.next;
        Some(RecvWr { wr_id, sges })
    }
}

/// A work request chain of the RDMA core (`ib_send_wr`, `ib_recv_wr`).
pub(super) trait WrLink {
    /// The next WR, or null.
    fn next(&self) -> *const Self;
}

impl WrLink for raw::ib_send_wr {
    fn next(&self) -> *const Self {
        self.next
    }
}

impl WrLink for raw::ib_recv_wr {
    fn next(&self) -> *const Self {
        self.next
    }
}

/// The `n`th WR of the chain at `wr` (what a failed post reports as
/// `bad_wr`), or null past its end.
///
/// # Safety
///
/// `wr` is null or a valid chain for the call.
pub(super) unsafe fn nth_wr<T: WrLink>(wr: *const T, n: usize) -> *const T {
    let mut at = wr;
    for _ in 0..n {
        if at.is_null() {
            break;
        }
        // SAFETY: a non-null element of the valid chain.
        at = unsafe { (*at).next() };
    }
    at
}
