// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Kernel CQ polling (`hns_roce_v2_poll_cq`), the consumer-index doorbell,
//! CQ cleaning (`__hns_roce_v2_cq_clean`) and the CQ table the completion
//! and asynchronous event handlers look CQs up in.
//!
//! The CQ table is an [`ObjTable`] with a lock class of its own: a handler
//! runs the consumer's handler without the lock, holding a counted
//! reference, and `destroy_cq` takes the CQ out of the table first and
//! waits for those references (C: `xa_erase`, `synchronize_irq` and the
//! refcount's completion): a CEQE or AEQE that arrives later finds nothing.

use super::Cq;
use crate::cmdq::DevState;
use crate::eq::Objects;
use crate::hem::mtr::MtrEntry;
use crate::hns_roce_hw_v2::consts::{db_cmd, reg};
use crate::hns_roce_hw_v2::cqe;
use crate::hns_roce_hw_v2::wqe::WqeSlot;
use crate::objtable::ObjTable;
use crate::qp::post::{QpCore, QpTable};
use crate::rdma::{new_spinlock_irq, DbOffset, WcArray};
use crate::srq::SrqCore;
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    rbtree::RBTree,
    sync::{barrier, Arc}, //
};

/// The CQE words `decode` reads (the first 32 bytes).
const CQE_WORDS: usize = 8;

/// The consumer-index doorbell of a CQ without record doorbell
/// (`update_cq_db`): CQN, CQ command, consumer index, command sequence 1.
fn ci_doorbell(cqn: u32, ci: u32) -> u64 {
    u64::from(cqn & 0xff_ffff) | (db_cmd::CQ << 24) | (u64::from(ci & 0xff_ffff) << 32) | (1 << 57)
}

impl Cq {
    /// Byte offset of CQE `n`. Wrapping arithmetic: the buffer's page
    /// lookup checks the offset, so no overflow check is needed here.
    fn cqe_off(&self, n: u32) -> usize {
        // CAST: a u32 offset widened to usize.
        (n & self.depth.wrapping_sub(1)).wrapping_mul(self.cqe_size) as usize
    }

    /// CQE `n` in place if software owns it (`get_sw_cqe_v2`): one page
    /// lookup for the owner word and, once the caller has put a read
    /// barrier after it, the other words.
    #[inline]
    fn sw_cqe(&self, n: u32) -> Option<MtrEntry<'_, CQE_WORDS>> {
        let e = self.mtr.entry::<CQE_WORDS>(self.cqe_off(n)).ok()?;
        cqe::sw_owns(e.get(0), n, self.depth).then_some(e)
    }

    /// The first words of CQE `n`, owned or not (CQ cleaning reads back
    /// entries whose owner word it already checked).
    fn cqe_words(&self, n: u32) -> [u32; CQE_WORDS] {
        self.mtr
            .read_words(self.cqe_off(n))
            .unwrap_or([0u32; CQE_WORDS])
    }

    /// Tells the engine how far software consumed (`update_cq_db`).
    fn update_ci(&self, st: &DevState) {
        let ci = self.cons_index.load(Ordering::Relaxed);
        match &self.db {
            Some(super::CqDb::Kernel(db)) => db.set(ci & 0xff_ffff),
            // A user CQ's consumer index is libhns's to write.
            Some(super::CqDb::User(_)) => {}
            None => st.ring_db(
                ci_doorbell(self.cqn, ci),
                DbOffset::new::<{ reg::DB_SQ_L_0 }>(),
            ),
        }
    }

    /// Polls up to `wc.len()` completions into `wc`
    /// (`hns_roce_v2_poll_cq`); how many.
    ///
    /// An empty CQ, the usual answer to a busy poll, is answered here in a
    /// small frame; the CQEs are taken by [`Cq::poll_owned`], out of line.
    /// Inlined into the RDMA core's entry point, its one caller, which
    /// then makes no call of its own before the lock (as C's op).
    #[inline(always)]
    pub(crate) fn poll(&self, st: &DevState, objs: &Objects, wc: &mut WcArray<'_>) -> usize {
        let _g = self.lock.lock();
        // In a teardown the engine holds no more completions (C waits for
        // UNINIT, not RST_DOWN, for that reason): the outstanding WRs
        // complete in software.
        if st.is_uninit() {
            return objs.qps.sw_poll(self.cqn, wc);
        }
        if wc.len() == 0 {
            return 0;
        }
        let ci = self.cons_index.load(Ordering::Relaxed);
        match self.sw_cqe(ci) {
            Some(first) => self.poll_owned(st, objs, wc, first, ci),
            None => 0,
        }
    }

    /// The loop of [`Cq::poll`], under the CQ lock: CQE `ci`, which
    /// software owns (`first`), and the owned ones after it, up to
    /// `wc.len()`.
    #[inline(never)]
    fn poll_owned(
        &self,
        st: &DevState,
        objs: &Objects,
        wc: &mut WcArray<'_>,
        first: MtrEntry<'_, CQE_WORDS>,
        ci: u32,
    ) -> usize {
        let mut n = 0;
        let mut cur: Option<Arc<QpCore>> = None;
        let mut next = Some((first, ci));
        while let Some((e, ci)) = next.take() {
            self.cons_index.store(ci.wrapping_add(1), Ordering::Relaxed);
            // The entry's other words only after its owner bit.
            barrier::dma_mb(barrier::Read);
            let words = e.read_all();
            let c = cqe::decode(&words);
            let qp = match cur.take() {
                Some(q) if q.qpn() == c.qpn => q,
                _ => match objs.qps.get(c.qpn) {
                    Some(q) => q,
                    None => {
                        ibdev_err!(
                            st,
                            "CQ {:06x} with entry for unknown QPN {:06x}\n",
                            self.cqn,
                            c.qpn
                        );
                        break;
                    }
                },
            };
            let wr_id = qp.take_wrid(&c);
            wc.set(n, &c.wc, wr_id, qp.ibqp());
            if c.wc.is_error() {
                ibdev_err_ratelimited!(st, "error cqe status {:#x}:\n", c.hw_status);
                dev_dbg!(st.device(), "CQE {:08x?}\n", words);
            }
            if c.flush_qp {
                qp.flush(&objs.wq);
            }
            cur = Some(qp);
            n += 1;
            if n < wc.len() {
                let ci = ci.wrapping_add(1);
                next = self.sw_cqe(ci).map(|e| (e, ci));
            }
        }
        if n > 0 {
            self.update_ci(st);
        }
        n
    }

    /// Arms the CQ (`hns_roce_v2_req_notify_cq`).
    pub(crate) fn arm(&self, st: &DevState, solicited: bool) {
        st.ring_db(
            self.notify_db(solicited),
            DbOffset::new::<{ reg::DB_SQ_L_0 }>(),
        );
    }

    /// Takes the CQEs of QP `qpn` out of the CQ, moving the later ones of
    /// other QPs down over them (`hns_roce_v2_cq_clean`); the SRQ WQE of
    /// each receive CQE taken out goes back to `srq`, the QP's kernel SRQ.
    pub(crate) fn clean(&self, st: &DevState, qpn: u32, srq: Option<&SrqCore>) {
        let _g = self.lock.lock();
        let ci = self.cons_index.load(Ordering::Relaxed);
        let mut prod = ci;
        while self.sw_cqe(prod).is_some() {
            if prod.wrapping_sub(ci) > self.depth - 1 {
                break;
            }
            prod = prod.wrapping_add(1);
        }
        let mut freed = 0u32;
        while prod != ci {
            prod = prod.wrapping_sub(1);
            let words = self.cqe_words(prod);
            if cqe::cqe_qpn(&words) == qpn {
                if let Some(srq) = srq {
                    let c = cqe::decode(&words);
                    if !c.is_send() {
                        srq.free(u32::from(c.wqe_idx));
                    }
                }
                freed += 1;
            } else if freed > 0 {
                self.move_cqe(prod, prod.wrapping_add(freed));
            }
        }
        if freed > 0 {
            self.cons_index
                .store(ci.wrapping_add(freed), Ordering::Relaxed);
            self.update_ci(st);
        }
    }

    /// Copies CQE `from` over CQE `to`, keeping `to`'s owner bit.
    fn move_cqe(&self, from: u32, to: u32) {
        let (src, dst) = (self.cqe_off(from), self.cqe_off(to));
        // CAST: 32 or 64 bytes.
        let words = (self.cqe_size / 4) as usize;
        for i in (1..words).rev() {
            if let Some(v) = self.mtr.read_word(src, i) {
                let _ = self.mtr.write_word(dst + 4 * i, v);
            }
        }
        if let (Some(s0), Some(d0)) = (self.mtr.read_word(src, 0), self.mtr.read_word(dst, 0)) {
            let _ = self.mtr.write_word(dst, cqe::moved_word0(s0, d0));
        }
    }

    /// Marks the CQ's handler as run for a reset's software completions
    /// (`is_armed`); whether it was already.
    pub(crate) fn trigger(&self) -> bool {
        self.is_armed.swap(true, Ordering::AcqRel)
    }

    /// A completion event for this CQ (`hns_roce_cq_completion`).
    fn completion(&self) {
        self.arm_sn.fetch_add(1, Ordering::Relaxed);
        self.ibcq.completion();
    }
}

/// The CQs of a device by CQN, for the event handlers.
#[pin_data]
pub(crate) struct CqTable {
    #[pin]
    t: ObjTable<Cq>,
}

impl CqTable {
    /// An empty table for `num_cqs` (a power of two) CQs.
    pub(crate) fn new(num_cqs: u32) -> impl PinInit<Self> {
        pin_init!(CqTable {
            t <- ObjTable::new(
                num_cqs,
                new_spinlock_irq!(RBTree::new(), "hns_roce_rs cq_table")
            ),
        })
    }

    /// Adds a CQ (after CREATE_CQC), not yet reachable by events.
    pub(crate) fn insert(&self, cq: Arc<Cq>) -> Result {
        self.t.insert(cq.cqn, cq)
    }

    /// Makes CQ `cqn` reachable: the core knows it.
    pub(crate) fn publish(&self, cqn: u32) {
        self.t.publish(cqn)
    }

    /// Takes CQ `cqn` out and waits for the handlers running on it; the
    /// caller keeps a reference, so the last one never goes in a handler.
    pub(crate) fn remove(&self, cqn: u32) {
        self.t.remove(cqn)
    }

    /// A CEQE for `cqn`: its completion handler, without the table lock.
    pub(crate) fn completion(&self, st: &DevState, cqn: u32) {
        if self.t.with(cqn, Cq::completion).is_none() {
            hdev_warn!(st.device(), "completion event for bogus CQ {:#08x}\n", cqn);
        }
    }

    /// The teardown's completions (`hns_roce_handle_device_err`): the
    /// handler of every CQ that has outstanding WRs of a QP in `qps`, a
    /// completion handler and no direct polling runs once, so that its
    /// owner polls the software completions. Each CQ as a CEQE's handler
    /// has it, without the table lock.
    pub(crate) fn handle_device_err(&self, qps: &QpTable) {
        self.t.for_each(|cq| {
            if qps.busy_on(cq.cqn) && cq.ibcq.armable() && !cq.trigger() {
                cq.completion();
            }
        });
    }

    /// An AEQE for `cqn` (`hns_roce_cq_event`): `IB_EVENT_CQ_ERR`, without
    /// the table lock.
    pub(crate) fn event(&self, st: &DevState, cqn: u32) {
        if self.t.with(cqn, |cq| cq.ibcq.error_event()).is_none() {
            hdev_warn!(st.device(), "async event for bogus CQ {:#08x}\n", cqn);
        }
    }
}
