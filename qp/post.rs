// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The data path of kernel QPs: `post_send` (`hns_roce_v2_post_send`), the
//! work-queue state polling reads WR ids from, the deferred move to ERR
//! (`flush_cqe`), QP events and the QP table the CQ poll and the AEQ
//! handler look QPs up in.
//!
//! [`QpCore`] is the part of a QP those paths share: WR-id rings, heads and
//! tails, the state, and the handle of its `ib_qp`. It holds no DMA memory
//! and no CQ (the WQE buffer and the CQ references stay in the `Qp`), so
//! its last reference may go anywhere, an interrupt handler included. The
//! QP table (an [`ObjTable`]) has its own lock class: the C driver's
//! `qp_table_xa` shares one with `dip_xa`, and lockdep reports the mix of
//! hard-IRQ and IRQs-on uses at unload (see docs/driver.md). QP events
//! reach the consumer's handler without that lock, the QP held by a
//! counted reference its destruction waits for.

use super::{PostEnv, Qp};
use crate::hns_roce_hw_v2::consts::{event, reg, sge, wqe_inl, wqe_op};
use crate::hns_roce_hw_v2::cqe::{self, Completion};
use crate::hns_roce_hw_v2::qpc::{qpt, QpState};
use crate::hns_roce_hw_v2::wqe::{self, RcOp, RcSend, UdAv, UdSend, WqeError, WqeSlot};
use crate::mr::Mr;
use crate::objtable::ObjTable;
use crate::rdma::wc::{Wc, WcStatus};
use crate::rdma::{
    new_spinlock_irq, trace, DbOffset, IbQp, OwnedQueue, QpEvent, SendWr, SpinLockIrq, WcArray,
    WrOpcode,
};
use crate::srq::SrqCore;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    prelude::*,
    rbtree::RBTree,
    sync::{barrier, Arc},
    time::{delay::fsleep, Delta}, //
};

/// A work queue's producer side (`struct hns_roce_wq` without the buffer,
/// the tail and the WR ids), under the queue's lock.
pub(crate) struct Wq {
    /// Producer index.
    pub(crate) head: u32,
    /// SQ: next extended SGE index (`hr_qp->next_sge`).
    pub(crate) next_sge: u32,
}

impl Wq {
    /// An empty queue.
    fn new() -> Self {
        Wq {
            head: 0,
            next_sge: 0,
        }
    }

    /// `hns_roce_wq_overflow`: no room for `nreq` more WQEs in `ring`.
    pub(crate) fn overflow(&self, ring: &Ring, nreq: u32) -> bool {
        self.head.wrapping_sub(ring.tail()).wrapping_add(nreq) >= ring.cnt()
    }

    /// Back to empty with `ring` (`clear_qp`).
    pub(crate) fn reset(&mut self, ring: &Ring) {
        self.head = 0;
        self.next_sge = 0;
        ring.set_tail(0);
    }
}

/// A work queue's consumer side: the tail and the WR ids, one per WQE slot.
/// Outside the queue's lock, as C keeps them (`wq->tail`, `wq->wrid`): the
/// CQ poll, serialised by its CQ's lock, is what moves the tail and reads
/// the ids of completed WQEs; the posting side reads the tail for its
/// overflow check and writes the id of a slot the poll no longer reads.
/// A lock per CQE (lockdep on) made `poll_cq` 2.6x C's cost.
pub(crate) struct Ring {
    tail: AtomicU32,
    wrid: KVec<AtomicU64>,
}

impl Ring {
    /// An empty ring of `cnt` WQEs.
    fn new(cnt: u32) -> Result<Self> {
        // CAST: a WQE count.
        let mut wrid = KVec::with_capacity(cnt as usize, GFP_KERNEL)?;
        for _ in 0..cnt {
            // Within the capacity reserved for the loop: no growth path.
            wrid.push_within_capacity(AtomicU64::new(0))?;
        }
        Ok(Ring {
            tail: AtomicU32::new(0),
            wrid,
        })
    }

    /// WQE count (a power of two, or 0).
    pub(crate) fn cnt(&self) -> u32 {
        // CAST: at most `max_wqes`.
        self.wrid.len() as u32
    }

    /// Consumer index.
    pub(crate) fn tail(&self) -> u32 {
        self.tail.load(Ordering::Relaxed)
    }

    fn set_tail(&self, t: u32) {
        self.tail.store(t, Ordering::Relaxed);
    }

    /// The WR id of slot `idx` (masked), 0 past the end.
    fn wrid(&self, idx: u32) -> u64 {
        self.wrid
            .get(idx as usize)
            .map_or(0, |w| w.load(Ordering::Relaxed))
    }

    /// Records the WR id of slot `idx` (masked).
    pub(crate) fn set_wrid(&self, idx: u32, id: u64) {
        if let Some(w) = self.wrid.get(idx as usize) {
            w.store(id, Ordering::Relaxed);
        }
    }
}

/// Deferred flush bookkeeping (C's `flush_lock` and refcount).
struct Flush {
    /// `HNS_ROCE_STOP_FLUSH_FLAG`: the QP is being destroyed.
    stopped: bool,
    /// Flush work items queued and not finished.
    pending: u32,
}

/// What the CQ poll, the AEQ handler and `post_send` share of a QP.
#[pin_data]
pub(crate) struct QpCore {
    qpn: u32,
    ibqp: IbQp,
    /// Only WRs asking for it complete (`sq_signal_bits`).
    sig_requested_only: bool,
    /// `enum ib_qp_state` of the QP; written under the QP's mutex or, for
    /// the move to ERR by an event, by the AEQ handler.
    pub(crate) state: AtomicU32,
    /// Q_Key set by modify (UD sends whose WR Q_Key has the high bit).
    pub(crate) qkey: AtomicU32,
    /// Path MTU enum set by modify (inline length limit).
    pub(crate) path_mtu: AtomicU32,
    /// SL of the last UD send (the SQ doorbell carries it).
    sl: AtomicU32,
    /// The send queue (C's `sq.lock`).
    #[pin]
    pub(crate) sq: SpinLockIrq<Wq>,
    /// The receive queue (C's `rq.lock`).
    #[pin]
    pub(crate) rq: SpinLockIrq<Wq>,
    /// The send queue's tail and WR ids.
    pub(crate) sq_ring: Ring,
    /// The receive queue's tail and WR ids.
    pub(crate) rq_ring: Ring,
    /// The kernel SRQ the QP receives through, if any.
    srq: Option<Arc<SrqCore>>,
    /// The CQNs of the send and receive CQs (the CQs' `sq_list` and
    /// `rq_list` in C), for the software completions of a teardown.
    send_cqn: Option<u32>,
    recv_cqn: Option<u32>,
    /// `HNS_ROCE_FLUSH_FLAG`.
    flush_flag: AtomicBool,
    #[pin]
    flush: SpinLockIrq<Flush>,
}

impl QpCore {
    /// A core for QP `qpn` with `sq`/`rq` WQE counts, receiving through
    /// the kernel SRQ `srq` if it has one; `cqns` are the CQNs of its send
    /// and receive CQs.
    pub(crate) fn new(
        qpn: u32,
        ibqp: IbQp,
        sig_requested_only: bool,
        (sq_cnt, rq_cnt): (u32, u32),
        srq: Option<Arc<SrqCore>>,
        (send_cqn, recv_cqn): (Option<u32>, Option<u32>),
    ) -> Result<Arc<Self>> {
        let sq_ring = Ring::new(sq_cnt)?;
        let rq_ring = Ring::new(rq_cnt)?;
        Arc::pin_init(
            pin_init!(QpCore {
                qpn,
                ibqp,
                sig_requested_only,
                state: AtomicU32::new(QpState::Reset as u32),
                qkey: AtomicU32::new(0),
                path_mtu: AtomicU32::new(0),
                sl: AtomicU32::new(0),
                sq <- new_spinlock_irq!(Wq::new(), "hns_roce_rs sq"),
                rq <- new_spinlock_irq!(Wq::new(), "hns_roce_rs rq"),
                sq_ring,
                rq_ring,
                srq,
                send_cqn,
                recv_cqn,
                flush_flag: AtomicBool::new(false),
                flush <- new_spinlock_irq!(
                    Flush {
                        stopped: false,
                        pending: 0
                    },
                    "hns_roce_rs qp flush"
                ),
            }),
            GFP_KERNEL,
        )
    }

    /// QP number.
    pub(crate) fn qpn(&self) -> u32 {
        self.qpn
    }

    /// The QP's `ib_qp`.
    pub(crate) fn ibqp(&self) -> &IbQp {
        &self.ibqp
    }

    /// The kernel SRQ the QP receives through, if any.
    pub(crate) fn srq(&self) -> Option<&SrqCore> {
        self.srq.as_deref()
    }

    /// Software completions (`sw_comp`): `IB_WC_WR_FLUSH_ERR` for the
    /// outstanding WRs of the send (`send`) or receive queue, from the
    /// tail on, into `wc` from entry `n` on; the next free entry.
    fn sw_comp(&self, send: bool, wc: &mut WcArray<'_>, mut n: usize) -> usize {
        let flushed = Wc::new(WcStatus::WrFlushErr);
        let (q, ring) = if send {
            (self.sq.lock(), &self.sq_ring)
        } else {
            (self.rq.lock(), &self.rq_ring)
        };
        let mask = ring.cnt().wrapping_sub(1);
        let mut tail = ring.tail();
        while n < wc.len() && q.head != tail {
            wc.set(n, &flushed, ring.wrid(tail & mask), &self.ibqp);
            tail = tail.wrapping_add(1);
            ring.set_tail(tail);
            n += 1;
        }
        n
    }

    /// A drain WR with id `wr_id` into the send (`send`) or receive ring,
    /// for the software poll of a reset (`hns_roce_push_drain_wr`).
    ///
    /// # Errors
    ///
    /// `ENOMEM` when the ring is full (or the QP keeps none).
    pub(crate) fn push_drain_wr(&self, send: bool, wr_id: u64) -> Result {
        let (mut q, ring) = if send {
            (self.sq.lock(), &self.sq_ring)
        } else {
            (self.rq.lock(), &self.rq_ring)
        };
        let cnt = ring.cnt();
        if cnt == 0 || q.overflow(ring, 1) {
            return Err(ENOMEM);
        }
        ring.set_wrid(q.head & (cnt - 1), wr_id);
        q.head = q.head.wrapping_add(1);
        Ok(())
    }

    /// Whether the send (`send`) or receive queue has WRs that did not
    /// complete.
    fn outstanding(&self, send: bool) -> bool {
        if send {
            self.sq.lock().head != self.sq_ring.tail()
        } else {
            self.rq.lock().head != self.rq_ring.tail()
        }
    }

    /// The WR id of a completion, moving the queue's tail
    /// (`hns_roce_v2_poll_one`). Called under the CQ's lock, which
    /// serialises the polls that move this tail; the queue's own lock is
    /// not taken (as in C).
    pub(crate) fn take_wrid(&self, c: &Completion) -> u64 {
        if c.is_send() {
            let ring = &self.sq_ring;
            let cnt = ring.cnt();
            if cnt == 0 {
                return 0;
            }
            let (idx, tail) = cqe::sq_tail(ring.tail(), c.wqe_idx, cnt, self.sig_requested_only);
            ring.set_tail(tail);
            ring.wrid(idx)
        } else if let Some(srq) = &self.srq {
            // The CQE names the SRQ's WQE slot; the slot is free again.
            srq.take(u32::from(c.wqe_idx))
        } else {
            let ring = &self.rq_ring;
            let cnt = ring.cnt();
            if cnt == 0 {
                return 0;
            }
            let tail = ring.tail();
            ring.set_tail(tail.wrapping_add(1));
            ring.wrid(tail & (cnt - 1))
        }
    }

    /// Queues the move of the QP to ERR on `wq` (`flush_cqe`): once until
    /// it ran, never after `stop_flush`. A reserved QP only keeps the
    /// request: its owner moves it ([`QpCore::take_flush`]).
    pub(crate) fn flush(self: &Arc<Self>, wq: &OwnedQueue) {
        if self.flush_flag.swap(true, Ordering::AcqRel) || self.ibqp.is_reserved() {
            return;
        }
        let mut f = self.flush.lock();
        if f.stopped {
            return;
        }
        let me = self.clone();
        if wq.spawn(move || me.flush_work()).is_ok() {
            f.pending += 1;
        } else {
            self.flush_flag.store(false, Ordering::Release);
        }
    }

    /// Takes the move to ERR asked for a reserved QP, if one was.
    pub(crate) fn take_flush(&self) -> bool {
        self.flush_flag.swap(false, Ordering::AcqRel)
    }

    /// Forgets a flush asked for and not yet done: the QP went to RESET,
    /// and its next life starts without the old error. A queued work item
    /// then finds nothing to do. (C has no such step; see
    /// docs/c-driver-findings.md, finding 4.)
    pub(crate) fn cancel_flush(&self) {
        self.flush_flag.store(false, Ordering::Release);
    }

    /// `flush_work_handle`.
    fn flush_work(&self) {
        if self.flush_flag.swap(false, Ordering::AcqRel) {
            if let Err(e) = self.ibqp.modify_to_err() {
                pr_err!(
                    "modify QP to error state failed({}) during CQE flush\n",
                    e.to_errno()
                );
            }
        }
        let mut f = self.flush.lock();
        f.pending = f.pending.saturating_sub(1);
    }

    /// Stops further flushes and waits for queued ones (`destroy_qp`'s
    /// `HNS_ROCE_STOP_FLUSH_FLAG` + `flush_work`).
    pub(crate) fn stop_flush(&self) {
        self.flush.lock().stopped = true;
        while self.flush.lock().pending != 0 {
            fsleep(Delta::from_millis(1));
        }
    }

    /// An asynchronous event for this QP (`hns_roce_ib_qp_event`).
    fn event(&self, ev: u32) {
        let e = match ev {
            event::PATH_MIG => QpEvent::PathMig,
            event::COMM_EST => QpEvent::CommEst,
            event::SQ_DRAINED => QpEvent::SqDrained,
            event::SRQ_LAST_WQE_REACH => QpEvent::LastWqeReached,
            event::WQ_CATAS_ERROR => QpEvent::Fatal,
            event::PATH_MIG_FAILED => QpEvent::PathMigErr,
            event::INV_REQ_LOCAL_WQ_ERROR => QpEvent::ReqErr,
            event::LOCAL_WQ_ACCESS_ERROR | event::XRCD_VIOLATION | event::INVALID_XRCETH => {
                QpEvent::AccessErr
            }
            _ => {
                pr_debug!(
                    "roce_ib: Unexpected event type {} on QP {:06x}\n",
                    ev,
                    self.qpn
                );
                return;
            }
        };
        self.ibqp.event(e);
    }
}

/// The QPs of a device by QPN.
#[pin_data]
pub(crate) struct QpTable {
    #[pin]
    t: ObjTable<QpCore>,
}

impl QpTable {
    /// An empty table for `num_qps` (a power of two) QPs.
    pub(crate) fn new(num_qps: u32) -> impl PinInit<Self> {
        pin_init!(QpTable {
            t <- ObjTable::new(
                num_qps,
                new_spinlock_irq!(RBTree::new(), "hns_roce_rs qp_table")
            ),
        })
    }

    /// Adds a QP (`hns_roce_qp_store`), not yet reachable by events.
    pub(crate) fn insert(&self, q: Arc<QpCore>) -> Result {
        self.t.insert(q.qpn, q)
    }

    /// Makes QP `qpn` reachable: the core knows it.
    pub(crate) fn publish(&self, qpn: u32) {
        self.t.publish(qpn)
    }

    /// Takes QP `qpn` out (`hns_roce_qp_remove`) and waits for the event
    /// handlers running on it.
    pub(crate) fn remove(&self, qpn: u32) {
        self.t.remove(qpn)
    }

    /// QP `qpn` (`__hns_roce_qp_lookup`).
    pub(crate) fn get(&self, qpn: u32) -> Option<Arc<QpCore>> {
        self.t.get(qpn)
    }

    /// The software poll of CQ `cqn` during a teardown
    /// (`hns_roce_v2_sw_poll_cq`): flush completions for the outstanding
    /// send WRs of the QPs sending to it, then for the outstanding receive
    /// WRs of those receiving on it without an SRQ; how many. The QPs are
    /// used under the table lock, so none is destroyed meanwhile.
    #[cold]
    pub(crate) fn sw_poll(&self, cqn: u32, wc: &mut WcArray<'_>) -> usize {
        self.t.locked(|qps| {
            let mut n = 0;
            for q in qps.iter().filter(|q| q.send_cqn == Some(cqn)) {
                n = q.sw_comp(true, wc, n);
            }
            for q in qps.iter() {
                if q.recv_cqn == Some(cqn) && q.srq.is_none() {
                    n = q.sw_comp(false, wc, n);
                }
            }
            n
        })
    }

    /// Whether a QP has WRs that did not complete on CQ `cqn`, as
    /// `hns_roce_handle_device_err` and `left_sw_wc` look: its SQ if `cqn`
    /// is its send CQ, its RQ (not an SRQ) if `cqn` is its receive CQ.
    pub(crate) fn busy_on(&self, cqn: u32) -> bool {
        self.t.locked(|qps| {
            qps.iter().any(|q| {
                (q.send_cqn == Some(cqn) && q.outstanding(true))
                    || (q.srq.is_none() && q.recv_cqn == Some(cqn) && q.outstanding(false))
            })
        })
    }

    /// A local work-queue error from the AEQ (`hns_roce_flush_cqe`): the
    /// QP is in ERR from now on, and moves there.
    pub(crate) fn flush_event(&self, dev: &kernel::device::Device, wq: &OwnedQueue, qpn: u32) {
        match self.get(qpn) {
            Some(q) => {
                q.state.store(QpState::Err as u32, Ordering::Relaxed);
                q.flush(wq);
            }
            None => hdev_warn!(dev, "async event for bogus QP {:08x}\n", qpn),
        }
    }

    /// An asynchronous QP event (`hns_roce_qp_event`): the consumer's
    /// handler runs without the table lock, the QP kept by a reference
    /// that its destruction waits for.
    pub(crate) fn event(&self, dev: &kernel::device::Device, qpn: u32, ev: u32) {
        if self.t.with(qpn, |q| q.event(ev)).is_none() {
            hdev_warn!(dev, "async event for bogus QP {:08x}\n", qpn);
        }
    }
}

impl Qp {
    /// Whether the QP's send WRs are UD ones (`ib_ud_wr`s): UD and GSI QPs.
    /// The C driver's `post_send` reads every non-RC QP's WRs so, XRC
    /// ones included (docs/c-driver-findings.md).
    pub(crate) fn is_ud(&self) -> bool {
        matches!(self.qp_type, qpt::UD | qpt::GSI)
    }

    /// Whether a kernel caller can post send WRs on the QP. An XRC target
    /// has no send queue of its own; an XRC initiator's WQE needs the
    /// remote XRC SRQ number, which a kernel `ib_send_wr` cannot carry.
    fn takes_send_wrs(&self) -> bool {
        matches!(self.qp_type, qpt::RC | qpt::UD | qpt::GSI)
    }

    /// `hns_roce_v2_post_send` for a kernel QP. On failure, the index of
    /// the first WR not posted and the error.
    pub(crate) fn post_send<'w>(
        &self,
        env: &PostEnv<'_>,
        wrs: impl Iterator<Item = SendWr<'w, Mr>>,
    ) -> core::result::Result<(), (usize, Error)> {
        if self.user {
            // libhns posts a user QP's work itself; the kernel keeps no
            // WQE buffer or WR ids for it.
            return Err((0, EINVAL));
        }
        let core = &self.core;
        let mut sq = core.sq.lock();
        let state = self.soft_state();
        if matches!(state, QpState::Reset | QpState::Init | QpState::Rtr) {
            return Err((0, EINVAL));
        }
        if env.cmd.state().is_reset_down() {
            return Err((0, EIO));
        }
        // The QP's page of the HIP09 doorbell window, checked once here so
        // that the doorbell writes below cannot miss the window. QPNs come
        // from the function's QPN range, which the window covers, so no
        // QP of this driver is refused here.
        let sq_db = match env.sq_db {
            Some(w) => Some(w.slot(self.qpn).ok_or((0, EINVAL))?),
            None => None,
        };
        // Refused before any WR is read: no WR layout belongs to such a QP
        // (C reads its WRs as UD ones and follows their AH pointer). Not
        // ENOMEM, which would tell the caller to retry once WRs complete:
        // none ever will.
        if !self.takes_send_wrs() {
            dev_err_ratelimited!(
                env.cmd.state().device(),
                "post_send on a QP of type {} is not supported\n",
                self.qp_type
            );
            return Err((0, EOPNOTSUPP));
        }
        let ring = &core.sq_ring;
        let cnt = ring.cnt();
        let mut sge_idx = sq.next_sge;
        let mut nreq = 0u32;
        let mut res = Ok(());
        let traced = trace::enabled(trace::Costly::SqWqe);
        for wr in wrs {
            if sq.overflow(ring, nreq) {
                res = Err((nreq as usize, ENOMEM));
                break;
            }
            let sges = wr.sges();
            if sges.len() > self.sizes.sq_max_gs as usize {
                ibdev_err!(
                    env.cmd,
                    "num_sge = {} > qp->sq.max_gs = {}.\n",
                    sges.len(),
                    self.sizes.sq_max_gs
                );
                res = Err((nreq as usize, EINVAL));
                break;
            }
            let head = sq.head.wrapping_add(nreq);
            let idx = head & (cnt - 1);
            let owner = wqe::owner_bit(head, cnt);
            let r = if self.qp_type == qpt::RC {
                self.write_rc_wqe(env, &wr, sges, idx, owner, &mut sge_idx)
            } else {
                self.write_ud_wqe(env, &wr, sges, idx, owner, &mut sge_idx)
            };
            if traced {
                let bytes = 1u32.wrapping_shl(self.sizes.sq_wqe_shift);
                let off = self.sq_wqe_off(idx);
                self.mtr
                    .trace_wqe(trace::Queue::Sq, self.qpn, idx, off, bytes, wr.wr_id());
            }
            if let Err(e) = r {
                res = Err((nreq as usize, e));
                break;
            }
            ring.set_wrid(idx, wr.wr_id());
            nreq += 1;
        }
        if nreq > 0 {
            sq.head = sq.head.wrapping_add(nreq);
            sq.next_sge = sge_idx;
            if self.soft_state() == QpState::Err {
                core.flush(&env.objs.wq);
            } else {
                // The WQEs reach memory before the engine learns of them.
                barrier::dma_mb(barrier::Write);
                let sl = core.sl.load(Ordering::Relaxed);
                let db = wqe::sq_doorbell(self.qpn, sq.head, sl);
                match sq_db {
                    Some(w) => {
                        // A single WQE on a direct-WQE QP is pushed whole
                        // into the QP's page instead of the doorbell.
                        let push = if self.dwqe && nreq == 1 && res.is_ok() {
                            self.dwqe_image(sq.head, sl)
                        } else {
                            None
                        };
                        // One closure per kind of write: the doorbell's
                        // does not carry the 64-byte image.
                        let st = env.cmd.state();
                        match push {
                            Some(words) => st.ring_with(|| w.write512(&words)),
                            None => st.ring_with(|| w.write64(db)),
                        }
                    }
                    None => env
                        .cmd
                        .state()
                        .ring_db(db, DbOffset::new::<{ reg::DB_SQ_L_0 }>()),
                }
            }
        }
        res
    }

    /// The direct WQE of the one WQE just posted (`head` is the SQ head
    /// after it): the buffer's 64 bytes with the flag, SL and index in
    /// word 0, which is changed in the buffer too, as C's `write_dwqe`
    /// does. `None` when word 0 cannot be written back (the doorbell is
    /// rung then, so the engine never sees a push that differs from the
    /// buffer).
    fn dwqe_image(&self, head: u32, sl: u32) -> Option<[u32; 16]> {
        let idx = head.wrapping_sub(1) & (self.core.sq_ring.cnt() - 1);
        let mut words = self.sq_wqe_words(idx);
        words[0] = wqe::dwqe_word0(words[0], sl, head);
        self.mtr
            .write_word(self.sq_wqe_off(idx), words[0])
            .ok()
            .map(|()| words)
    }

    /// Byte offset of SQ WQE `idx`. The shift wraps instead of checking
    /// for overflow: the buffer's page lookup checks the offset.
    fn sq_wqe_off(&self, idx: u32) -> usize {
        (idx as usize).wrapping_shl(self.sizes.sq_wqe_shift)
    }

    /// The 16 words of SQ WQE `idx` as they are now.
    fn sq_wqe_words(&self, idx: u32) -> [u32; 16] {
        self.mtr
            .read_words(self.sq_wqe_off(idx))
            .unwrap_or([0u32; 16])
    }

    /// Writes a WQE: words 1..16 first, then (after a barrier when the
    /// engine reads the owner bit without a doorbell) word 0.
    fn store_wqe(&self, idx: u32, words: &[u32; 16]) -> Result {
        let off = self.sq_wqe_off(idx);
        // Words 1..16 in one copy, word 0 (the owner bit) on its own.
        let rest: [u32; 15] =
            core::array::from_fn(|i| words.as_slice().get(i + 1).copied().unwrap_or(0));
        self.mtr.write_words(off + 4, &rest)?;
        if self.owner_db {
            barrier::dma_mb(barrier::Write);
        }
        self.mtr.write_word(off, words[0])
    }

    /// Writes extended SGE `idx` (already masked).
    fn store_ext_sge(&self, idx: u32, s: &wqe::Sge) -> Result {
        let off =
            self.sge_offset + ((idx as usize) << crate::hns_roce_hw_v2::consts::sge::SGE_SHIFT);
        self.mtr.write_words(off, &s.words())
    }

    /// Inline data too long for the WQE (`fill_ext_sge_inl_data`): the
    /// bytes of `wr`'s segments one after the other in the extended SGE
    /// area from SGE `start` on, wrapping from the area's end to its start
    /// (the engine reads them so); the space past the data in the last
    /// SGE is left as it is. C's offsets and counts are not followed
    /// (docs/c-driver-findings.md 3).
    ///
    /// # Errors
    ///
    /// `EINVAL` when the data is longer than the QP's extended SGEs hold.
    #[cold]
    fn store_ext_inline(&self, env: &PostEnv<'_>, wr: &SendWr<'_, Mr>, start: u32) -> Result {
        let (_, len) = wqe::valid_sges(&WrSges(wr.sges()));
        let sge_size = sge::SGE_SIZE;
        if len > self.sizes.sq_ext_sge_cnt.saturating_mul(sge_size) {
            ibdev_err!(&env.cmd, "no enough extended sge space for inline data.\n");
            return Err(EINVAL);
        }
        // CAST (all): u32 sizes and indexes widen to usize.
        let area = self.sizes.sge_cnt as usize * sge_size as usize;
        let mask = self.sizes.sge_cnt.wrapping_sub(1);
        let mut pos = (start & mask) as usize * sge_size as usize;
        for mut seg in wr.inline_segments() {
            while !seg.is_empty() {
                let n = seg.len().min(area.saturating_sub(pos));
                if n == 0 {
                    return Err(EINVAL);
                }
                let (now, later) = seg.split_at(n);
                self.mtr.write(self.sge_offset + pos, now)?;
                pos = (pos + n) % area;
                seg = later;
            }
        }
        Ok(())
    }

    /// `set_ud_wqe`. Inlined into [`Qp::post_send`], its one caller: the
    /// WR the chain reads is then never stored whole, and no call is made
    /// per WR (left to itself the compiler stopped inlining it once
    /// `post_send` grew, and `post_send_16` took 1.4-2.0x C's time).
    #[inline(always)]
    fn write_ud_wqe(
        &self,
        env: &PostEnv<'_>,
        wr: &SendWr<'_, Mr>,
        wr_sges: &[crate::rdma::Sge],
        idx: u32,
        owner: bool,
        sge_idx: &mut u32,
    ) -> Result {
        let d = env.cmd.state().device();
        let opcode = match wr.opcode() {
            WrOpcode::Send => wqe_op::SEND,
            WrOpcode::SendWithImm => wqe_op::SEND_WITH_IMM,
            o => {
                dev_err_ratelimited!(d, "unsupported UD send opcode {:?}\n", o);
                return Err(EINVAL);
            }
        };
        let Some(ud) = wr.ud() else {
            return Err(EINVAL);
        };
        let sges = &WrSges(wr_sges);
        let flags = wr.flags();
        let (valid, msg_len) = wqe::valid_sges(sges);
        let mask = self.sizes.sge_cnt.wrapping_sub(1);
        let qkey = if ud.remote_qkey & 0x8000_0000 != 0 {
            self.core.qkey.load(Ordering::Relaxed)
        } else {
            ud.remote_qkey
        };
        let av = &ud.av;
        let p = UdSend {
            opcode,
            imm: wr.imm(),
            msg_len,
            signaled: flags & crate::rdma::SEND_SIGNALED != 0,
            solicited: flags & crate::rdma::SEND_SOLICITED != 0,
            pdn: self.pdn,
            sge_num: valid,
            start_sge: *sge_idx & mask,
            qkey,
            dqpn: ud.remote_qpn,
            av: UdAv {
                udp_sport: av.udp_sport,
                hop_limit: av.hop_limit,
                tclass: av.tclass,
                flowlabel: av.flowlabel,
                sl: av.sl,
                gid_index: av.gid_index,
                mac: av.mac,
                dgid: av.dgid,
                vlan_en: av.vlan_en != 0,
                vlan_id: av.vlan_id,
            },
            hip08: env.rev.is_hip08(),
            owner,
        };
        let words = wqe::ud_wqe(&self.sq_wqe_words(idx), &p);
        self.core.sl.store(u32::from(av.sl), Ordering::Relaxed);
        for e in wqe::ext_sges(sges, 0, *sge_idx, self.sizes.sge_cnt) {
            self.store_ext_sge(e.idx, &e.sge)?;
        }
        self.store_wqe(idx, &words)?;
        *sge_idx = sge_idx.wrapping_add(valid);
        Ok(())
    }

    /// `set_rc_wqe`. Inlined into [`Qp::post_send`], its one caller: the
    /// WR the chain reads is then never stored whole, and no call is made
    /// per WR (left to itself the compiler stopped inlining it once
    /// `post_send` grew, and `post_send_16` took 1.4-2.0x C's time).
    #[inline(always)]
    fn write_rc_wqe(
        &self,
        env: &PostEnv<'_>,
        wr: &SendWr<'_, Mr>,
        wr_sges: &[crate::rdma::Sge],
        idx: u32,
        owner: bool,
        sge_idx: &mut u32,
    ) -> Result {
        let d = env.cmd.state().device();
        let op = match wr.opcode() {
            WrOpcode::Send => RcOp::Send,
            WrOpcode::SendWithImm => RcOp::SendWithImm(wr.imm()),
            WrOpcode::SendWithInv => RcOp::SendWithInv(wr.invalidate_rkey()),
            WrOpcode::RdmaWrite => {
                let (va, rkey) = wr.remote();
                RcOp::RdmaWrite { rkey, va }
            }
            WrOpcode::RdmaWriteWithImm => {
                let (va, rkey) = wr.remote();
                RcOp::RdmaWriteWithImm {
                    rkey,
                    va,
                    imm: wr.imm(),
                }
            }
            WrOpcode::RdmaRead => {
                let (va, rkey) = wr.remote();
                RcOp::RdmaRead { rkey, va }
            }
            WrOpcode::AtomicCmpAndSwp => {
                let (va, rkey) = wr.remote();
                let (compare, swap) = wr.atomic();
                RcOp::CmpSwap {
                    rkey,
                    va,
                    compare,
                    swap,
                }
            }
            WrOpcode::AtomicFetchAndAdd => {
                let (va, rkey) = wr.remote();
                let (add, _) = wr.atomic();
                RcOp::FetchAdd { rkey, va, add }
            }
            WrOpcode::RegMr => {
                // C: HIP08 has no fast registration (its WARN_ON_ONCE is
                // left out, as for every refused opcode).
                if env.rev.is_hip08() {
                    dev_err_ratelimited!(d, "IB_WR_REG_MR is not supported on HIP08\n");
                    return Err(EOPNOTSUPP);
                }
                let f = wr
                    .reg()
                    .and_then(|r| r.mr.fast_reg(r.key, r.access, r.iova, r.length));
                let Some(f) = f else {
                    dev_err_ratelimited!(d, "IB_WR_REG_MR without a fast-register MR\n");
                    return Err(EINVAL);
                };
                RcOp::RegMr(f)
            }
            o => {
                dev_err_ratelimited!(d, "unsupported RC send opcode {:?}\n", o);
                return Err(EINVAL);
            }
        };
        let sges = &WrSges(wr_sges);
        let flags = wr.flags();
        let inline = flags & crate::rdma::SEND_INLINE != 0;
        // The inline buffer is zeroed and filled only for inline WRs (its
        // stack slot is there either way).
        let mut buf;
        let data: &[u8] = if inline {
            buf = [0u8; wqe_inl::MAX_RC_INL_INN_SZ as usize];
            let n = wr.inline_data(&mut buf);
            buf.get(..n).unwrap_or(&[])
        } else {
            &[]
        };
        let p = RcSend {
            op,
            sges,
            fence: flags & crate::rdma::SEND_FENCE != 0,
            solicited: flags & crate::rdma::SEND_SOLICITED != 0,
            signaled: flags & crate::rdma::SEND_SIGNALED != 0,
            inline,
            sge_idx: *sge_idx,
            sge_cnt: self.sizes.sge_cnt,
            owner,
        };
        // Only inline data is checked against the path MTU.
        let mtu = if inline {
            super::mtu_bytes(self.core.path_mtu.load(Ordering::Relaxed))
        } else {
            0
        };
        // The slot is edited in place, as C does: only the words C writes
        // are stored, word 0 (the owner bit) last.
        let mut slot = self.mtr.entry::<16>(self.sq_wqe_off(idx))?;
        let r = wqe::rc_wqe_in(&mut slot, &p, data, self.sizes.max_inline_data, mtu);
        let w = match r {
            Ok(w) => w,
            Err(WqeError::InlineRead) => {
                ibdev_err!(&env.cmd, "invalid inline parameters!\n");
                return Err(EINVAL);
            }
            Err(WqeError::InlineLength) => {
                let (_, len) = wqe::valid_sges(sges);
                ibdev_err!(
                    &env.cmd,
                    "invalid length of data, data len = {}, max inline len = {}, path mtu = {}.\n",
                    len,
                    self.sizes.max_inline_data,
                    mtu
                );
                return Err(EINVAL);
            }
            Err(WqeError::AtomicLength) => return Err(EINVAL),
        };
        if w.inline_ext > 0 {
            self.store_ext_inline(env, wr, *sge_idx)?;
        }
        if w.ext_n > 0 {
            let skip = crate::hns_roce_hw_v2::consts::sge::SGE_IN_WQE as usize;
            for e in wqe::ext_sges(sges, skip, *sge_idx, self.sizes.sge_cnt) {
                self.store_ext_sge(e.idx, &e.sge)?;
            }
        }
        if self.owner_db {
            barrier::dma_mb(barrier::Write);
        }
        slot.set(0, w.word0);
        *sge_idx = w.next_sge;
        Ok(())
    }
}

/// A send WR's segments as the WQE codec reads them: in place, in the
/// caller's `ib_sge` array, as the C driver does (no copy, no allocation
/// per WR).
struct WrSges<'a>(&'a [crate::rdma::Sge]);

impl wqe::SgeSource for WrSges<'_> {
    fn iter_sges(&self) -> impl Iterator<Item = wqe::Sge> + '_ {
        self.0.iter().map(|s| wqe::Sge {
            addr: s.addr(),
            len: s.length(),
            lkey: s.lkey(),
        })
    }
}
