// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Event queues: the completion EQs (one per completion vector) and the
//! asynchronous EQ, their contexts, interrupts and doorbells
//! (`hns_roce_v2_init_eq_table` and friends).
//!
//! The AEQ carries mailbox completions, which is what event-mode mailboxes
//! wait for, and the asynchronous events of QPs, CQs and SRQs
//! (`hns_roce_v2_aeq_int`): local work-queue errors move the QP to ERR from
//! the interrupt, every event then goes to its object from a work item, as
//! in C. CEQ entries name a CQ whose completion handler runs
//! (`hns_roce_ceq_work`). As in C, a CEQ's hard interrupt only queues a BH
//! work item on `system_bh_wq` ([`IrqRegistration::new_bh`]), which walks
//! at most the queue's depth of entries: the consumers' handlers
//! (uverbs allocates and wakes, a ULP may poll its CQ) then run with
//! interrupts on, and the time interrupts are off does not grow with the
//! number of CEQEs. Walking in the hard interrupt instead measured several
//! times the interrupt time of C for a gain in latency of the same order as
//! the noise (docs/benchmarks.md, "Completion interrupt"); upstream C left
//! the hard interrupt for soft lockups under heavy CEQE load.

use crate::cmdq::desc::Desc;
use crate::cmdq::{Cmd, DevState, MailboxBuf};
use crate::cq::poll::CqTable;
use crate::dfx::DfxCnt;
use crate::field::{Ctx, Layout};
use crate::hem::mtr::KernelMtr;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::cmq_fields::cmq_req;
use crate::hns_roce_hw_v2::consts::{cmq_op, event, hw_page, mbox, reg};
use crate::hns_roce_hw_v2::ctx as hw_ctx;
use crate::hns_roce_hw_v2::fields::{aeqe, ceqe, Aeqe, Ceqe, Eqc};
use crate::hns_roce_hw_v2::regs::{VF_ABN_INT_CFG, VF_ABN_INT_EN, VF_ABN_INT_ST, VF_EVENT_INT_EN};
use crate::qp::post::QpTable;
use crate::rdma::{
    trace, BoundDevice, DbOffset, Hnae3Handle, IrqHandler, IrqRegistration, OwnedQueue,
    ResetRequest, SrqEvent,
};
use crate::srq::SrqTable;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{
    io::{register::Array, Io},
    prelude::*,
    str::CString,
    sync::Arc, //
};

/// The objects the event handlers reach by number: CQs, QPs and SRQs.
#[pin_data]
pub(crate) struct Objects {
    /// CQs by CQN.
    #[pin]
    pub(crate) cqs: CqTable,
    /// QPs by QPN.
    #[pin]
    pub(crate) qps: QpTable,
    /// SRQs by SRQN.
    #[pin]
    pub(crate) srqs: SrqTable,
    /// Event and flush work (`irq_workq`); destroyed, after the
    /// interrupts, by `EqTable`'s `Drop`.
    pub(crate) wq: OwnedQueue,
}

impl Objects {
    /// Empty tables for the caps' numbers of CQs, QPs and SRQs, and the
    /// queue.
    pub(crate) fn new(caps: &Caps) -> Result<Arc<Self>> {
        let wq = OwnedQueue::new(c"hns_roce_irq_workq")?;
        Arc::pin_init(
            pin_init!(Objects {
                cqs <- CqTable::new(caps.num_cqs),
                qps <- QpTable::new(caps.num_qps),
                srqs <- SrqTable::new(caps.num_srqs),
                wq,
            }),
            GFP_KERNEL,
        )
    }
}

/// An AEQE's work (`hns_roce_irq_work_handle`): the event to its object,
/// then the log line of `dump_aeqe_log`.
fn aeqe_work(st: &DevState, objs: &Objects, ev: u32, sub: u32, queue: u32) {
    let d = st.device();
    match ev {
        event::PATH_MIG
        | event::PATH_MIG_FAILED
        | event::COMM_EST
        | event::SQ_DRAINED
        | event::WQ_CATAS_ERROR
        | event::SRQ_LAST_WQE_REACH
        | event::INV_REQ_LOCAL_WQ_ERROR
        | event::LOCAL_WQ_ACCESS_ERROR
        | event::XRCD_VIOLATION
        | event::INVALID_XRCETH => objs.qps.event(d, queue, ev),
        event::SRQ_LIMIT_REACH => objs.srqs.event(st, queue, SrqEvent::LimitReached),
        event::SRQ_CATAS_ERROR => objs.srqs.event(st, queue, SrqEvent::Err),
        event::CQ_ACCESS_ERROR | event::CQ_OVERFLOW => objs.cqs.event(st, queue),
        _ => {}
    }
    match ev {
        event::PATH_MIG => ibdev_info!(st, "path migrated succeeded.\n"),
        event::PATH_MIG_FAILED => ibdev_warn!(st, "path migration failed.\n"),
        event::COMM_EST | event::MB => {}
        event::SQ_DRAINED => dev_dbg!(d, "send queue drained.\n"),
        event::WQ_CATAS_ERROR => ibdev_err!(
            st,
            "local work queue {:#x} catast error, sub_event type is: {}\n",
            queue,
            sub
        ),
        event::INV_REQ_LOCAL_WQ_ERROR => {
            ibdev_err!(st, "invalid request local work queue {:#x} error.\n", queue)
        }
        event::LOCAL_WQ_ACCESS_ERROR => ibdev_err!(
            st,
            "local access violation work queue {:#x} error, sub_event type is: {}\n",
            queue,
            sub
        ),
        event::SRQ_LIMIT_REACH => dev_dbg!(d, "SRQ limit reach.\n"),
        event::SRQ_LAST_WQE_REACH => dev_dbg!(d, "SRQ last wqe reach.\n"),
        event::SRQ_CATAS_ERROR => ibdev_err!(st, "SRQ catas error.\n"),
        event::CQ_ACCESS_ERROR => ibdev_err!(st, "CQ {:#x} access err.\n", queue),
        event::CQ_OVERFLOW => ibdev_warn!(st, "CQ {:#x} overflow\n", queue),
        event::DB_OVERFLOW => ibdev_warn!(st, "DB overflow.\n"),
        event::FLR => ibdev_warn!(st, "function level reset.\n"),
        event::XRCD_VIOLATION => ibdev_err!(st, "xrc domain violation error.\n"),
        event::INVALID_XRCETH => ibdev_err!(st, "invalid xrceth error.\n"),
        _ => ibdev_info!(st, "Undefined event {}.\n", ev),
    }
}

/// AEQEs handled per interrupt (`HNS_AEQ_POLLING_BUDGET`).
const AEQ_POLLING_BUDGET: u32 = 64;
/// EQE buffer and BT page size exponents over `PAGE_SIZE` (0 on HIP08 and
/// HIP09: `caps->eqe_{buf,ba}_pg_sz`).
const EQE_PG_SZ: u32 = 0;
/// EQN bits in the destroy mailbox tag.
const EQN_MASK: u32 = (1 << 24) - 1;

/// Completion or asynchronous.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Ceq,
    Aeq,
}

/// One event queue.
pub(crate) struct Eq {
    cmd: Arc<Cmd>,
    eqn: u32,
    kind: Kind,
    entries: u32,
    eqe_size: u32,
    /// Written only by the EQ's handler (the AEQ's interrupt, the CEQ's BH
    /// work), which does not nest.
    cons_index: AtomicU32,
    mtr: KernelMtr,
    objs: Arc<Objects>,
    /// The engine holds a context for this EQ (CREATE_*EQC succeeded):
    /// `Drop` destroys it before the EQE buffer it points to is freed.
    created: bool,
}

impl Eq {
    /// Allocates the EQE buffer and creates the context (`hns_roce_v2_create_eq`).
    fn create(
        h: &Hnae3Handle,
        cmd: &Arc<Cmd>,
        objs: &Arc<Objects>,
        caps: &Caps,
        eqn: u32,
        kind: Kind,
    ) -> Result<Self> {
        let (entries, eqe_size, op) = match kind {
            Kind::Ceq => (caps.ceqe_depth, caps.ceqe_size, mbox::CREATE_CEQC),
            Kind::Aeq => (caps.aeqe_depth, caps.aeqe_size, mbox::CREATE_AEQC),
        };
        let dev = h.bound_device();
        let mbox = MailboxBuf::new(dev)?;
        // CAST: PAGE_SHIFT is 12..16.
        let page_shift = kernel::page::PAGE_SHIFT as u32;
        let hop = if caps.eqe_hop_num == crate::hem::HOP_NUM_0 {
            0
        } else {
            caps.eqe_hop_num
        };
        // CAST: entries * size is at most a few MiB.
        let size = (entries as usize)
            .checked_mul(eqe_size as usize)
            .ok_or(EINVAL)?;
        let mtr = KernelMtr::new(
            dev,
            size,
            EQE_PG_SZ + page_shift,
            EQE_PG_SZ + page_shift,
            hop,
        )
        .inspect_err(|e| {
            hdev_err!(
                h.device(),
                "failed to alloc EQE mtr, err {}\n",
                e.to_errno()
            )
        })?;
        let mut eq = Eq {
            cmd: cmd.clone(),
            eqn,
            kind,
            entries,
            eqe_size,
            cons_index: AtomicU32::new(0),
            mtr,
            objs: objs.clone(),
            created: false,
        };
        mbox.write_le_words(eq.context(hop).as_le_words())?;
        cmd.mbox(mbox.dma(), 0, op, eqn).inspect_err(|_| {
            hdev_err!(h.device(), "[mailbox cmd] create eqc failed.\n");
        })?;
        eq.created = true;
        Ok(eq)
    }

    /// The EQ context (`config_eqc`).
    fn context(&self, hop: u32) -> Ctx<Eqc, 16> {
        hw_ctx::eq_context(&hw_ctx::EqcParams {
            eqn: self.eqn,
            hop,
            ba_pg_shift: self.mtr.ba_pg_shift(),
            buf_pg_shift: self.mtr.page_shift(),
            entries: self.entries,
            eqe_size: self.eqe_size,
            bt_ba: self.mtr.root_ba(),
            cur: self.mtr.page_ba(0),
            next: self.mtr.page_ba(1),
        })
    }

    /// Destroys the context (`hns_roce_v2_destroy_eqc`); the buffer goes
    /// with `self`, after `Drop` has called this.
    fn destroy(&self) {
        let op = match self.kind {
            Kind::Ceq => mbox::DESTROY_CEQC,
            Kind::Aeq => mbox::DESTROY_AEQC,
        };
        if self.cmd.mbox(0, 0, op, self.eqn & EQN_MASK).is_err() {
            hdev_err!(
                self.cmd.state().device(),
                "[mailbox cmd] destroy eqc({}) failed.\n",
                self.eqn
            );
        }
    }

    /// The first `words` words of the entry at byte offset `off` (the rest
    /// zero), for the field maps.
    fn entry<L: Layout>(&self, off: usize, words: usize) -> Ctx<L, 16> {
        let mut w = [0u32; 16];
        for (i, x) in w.iter_mut().enumerate().take(words) {
            *x = self.mtr.read_word(off, i).unwrap_or(0).to_le();
        }
        Ctx::from_le_words(w)
    }

    /// Byte offset of the entry at the consumer index if software owns it
    /// (its owner bit differs from the wrap count's parity).
    fn next_entry(&self, ci: u32) -> Option<usize> {
        // CAST: index times entry size fits the buffer.
        let off = ((ci & (self.entries - 1)) * self.eqe_size) as usize;
        let owner = match self.kind {
            Kind::Aeq => self.entry::<Aeqe>(off, 1).read_bool(aeqe::OWNER),
            Kind::Ceq => self.entry::<Ceqe>(off, 1).read_bool(ceqe::OWNER),
        };
        (owner != (ci & self.entries != 0)).then_some(off)
    }

    /// Hands each entry software owns, at most `budget`, to `f`, then
    /// tells the engine how far it got; how many there were.
    fn drain(&self, budget: u32, mut f: impl FnMut(usize)) -> u32 {
        let mut ci = self.cons_index.load(Ordering::Relaxed);
        let mut n = 0;
        while n < budget {
            let Some(off) = self.next_entry(ci) else {
                break;
            };
            // Read the entry only after its owner bit.
            kernel::sync::barrier::dma_mb(kernel::sync::barrier::Read);
            f(off);
            ci = ci.wrapping_add(1);
            n += 1;
        }
        self.cons_index.store(ci, Ordering::Relaxed);
        self.update_db(ci);
        n
    }

    /// Tells the engine how far software consumed (`update_eq_db`).
    fn update_db(&self, ci: u32) {
        let v = hw_ctx::eq_doorbell(self.kind == Kind::Aeq, self.eqn, ci);
        self.cmd
            .state()
            .ring_db(v, DbOffset::new::<{ reg::VF_EQ_DB_CFG0 }>());
    }

    /// AEQ interrupt (`hns_roce_v2_aeq_int`).
    fn aeq_int(&self) -> bool {
        let words = (self.eqe_size / 4) as usize;
        self.drain(AEQ_POLLING_BUDGET, |off| {
            let e = self.entry::<Aeqe>(off, words);
            let event = e.read(aeqe::EVENT_TYPE);
            let sub = e.read(aeqe::SUB_TYPE);
            let queue = e.read(aeqe::EVENT_QUEUE_NUM);
            if matches!(
                event,
                event::WQ_CATAS_ERROR
                    | event::INV_REQ_LOCAL_WQ_ERROR
                    | event::LOCAL_WQ_ACCESS_ERROR
                    | event::XRCD_VIOLATION
                    | event::INVALID_XRCETH
            ) {
                self.objs
                    .qps
                    .flush_event(self.cmd.state().device(), &self.objs.wq, queue);
            }
            if event == event::MB {
                // `event.cmd` of `struct hns_roce_aeqe`: out_param in words
                // 1-2, then the 16-bit token and the status byte.
                let out = u64::from(e.word(1)) | (u64::from(e.word(2)) << 32);
                let w3 = e.word(3);
                // CAST: token and status are the low bytes of word 3.
                self.cmd
                    .mbox_event((w3 & 0xffff) as u16, ((w3 >> 16) & 0xff) as u8, out);
            } else {
                // The rest of the work runs in process context.
                let (cmd, objs) = (self.cmd.clone(), self.objs.clone());
                let r = self
                    .objs
                    .wq
                    .spawn(move || aeqe_work(cmd.state(), &objs, event, sub, queue));
                if r.is_err() {
                    hdev_err!(
                        self.cmd.state().device(),
                        "no memory for AEQE {:#x} work\n",
                        event
                    );
                }
            }
            if trace::enabled(trace::Costly::AeInfo) {
                let all: [u32; 16] = core::array::from_fn(|i| e.word(i));
                trace::ae(event, all.get(..words).unwrap_or(&all));
            }
            self.cmd.state().sw_stat().inc(DfxCnt::Aeqe);
        }) > 0
    }

    /// CEQ work (`hns_roce_ceq_work`), in softirq context: each entry's CQ
    /// gets its completion handler called, at most a queue's depth of
    /// entries a run.
    fn ceq_int(&self) -> bool {
        self.drain(self.entries, |off| {
            let cqn = self.entry::<Ceqe>(off, 1).read(ceqe::CQN);
            self.objs.cqs.completion(self.cmd.state(), cqn);
            self.cmd.state().sw_stat().inc(DfxCnt::Ceqe);
        });
        true
    }
}

impl Drop for Eq {
    /// Runs when the last reference goes, which is after the EQ's
    /// interrupt was freed (the registration holds one): the engine stops
    /// writing EQEs before the buffer is freed with the fields.
    fn drop(&mut self) {
        if self.created {
            self.destroy();
        }
    }
}

impl IrqHandler for Eq {
    fn handle(&self) -> bool {
        match self.kind {
            Kind::Aeq => self.aeq_int(),
            Kind::Ceq => self.ceq_int(),
        }
    }
}

/// What the RAM ECC recovery reads back and writes again for each
/// resource type the engine reports (`fmea_ram_res`, indexed by C's
/// `enum ecc_resource_type`, which is defined in hns_roce_hw_v2.c and so
/// not generated): the name C logs and the BT0 read and write mailboxes
/// (`None` for the GMV table, which the CMQ reprograms).
const ECC_RES: [(&str, Option<(u8, u8)>); 8] = [
    (
        "ECC_RESOURCE_QPC",
        Some((mbox::READ_QPC_BT0, mbox::WRITE_QPC_BT0)),
    ),
    (
        "ECC_RESOURCE_CQC",
        Some((mbox::READ_CQC_BT0, mbox::WRITE_CQC_BT0)),
    ),
    (
        "ECC_RESOURCE_MPT",
        Some((mbox::READ_MPT_BT0, mbox::WRITE_MPT_BT0)),
    ),
    (
        "ECC_RESOURCE_SRQC",
        Some((mbox::READ_SRQC_BT0, mbox::WRITE_SRQC_BT0)),
    ),
    ("ECC_RESOURCE_GMV", None),
    (
        "ECC_RESOURCE_QPC_TIMER",
        Some((mbox::READ_QPC_TIMER_BT0, mbox::WRITE_QPC_TIMER_BT0)),
    ),
    (
        "ECC_RESOURCE_CQC_TIMER",
        Some((mbox::READ_CQC_TIMER_BT0, mbox::WRITE_CQC_TIMER_BT0)),
    ),
    (
        "ECC_RESOURCE_SCCC",
        Some((mbox::READ_SCCC_BT0, mbox::WRITE_SCCC_BT0)),
    ),
];

/// Index in [`ECC_RES`] of the first resource whose BT0 the engine gives
/// as an address rather than a page number (`ECC_RESOURCE_QPC_TIMER`: the
/// two timer tables and the SCCC table).
const ECC_RES_FIRST_BY_ADDR: usize = 5;

/// The RAM ECC recovery of a HIP09 function (`fmea_ram_ecc_work`): queued
/// by the abnormal interrupt when it comes without a status bit.
pub(crate) struct EccRecovery {
    cmd: Arc<Cmd>,
    dev: BoundDevice,
    /// Queued and not yet started: like C's single `ecc_work`, interrupts
    /// that come meanwhile queue nothing more.
    pending: AtomicBool,
}

impl EccRecovery {
    /// Queues the recovery on `wq` unless it is already queued.
    fn queue(self: &Arc<Self>, wq: &OwnedQueue) {
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.clone();
        if wq.spawn(move || me.run()).is_err() {
            // The queue is gone (teardown): nothing runs.
            self.pending.store(false, Ordering::Release);
        }
    }

    /// `fmea_ram_ecc_work`.
    fn run(&self) {
        self.pending.store(false, Ordering::Release);
        let d = self.cmd.state().device();
        let Ok((err, ty, idx)) = self.query() else {
            hdev_err!(d, "failed to query fmea ram ecc.\n");
            return;
        };
        if err == 0 {
            hdev_err!(d, "there is no fmea ram ecc err found.\n");
            return;
        }
        // `fmea_ram_ecc_recover`.
        // CAST: a resource type, compared with a small table's length.
        let Some(&(name, ops)) = ECC_RES.get(ty as usize) else {
            hdev_err!(d, "unsupported fmea ram ecc type {}.\n", ty);
            return;
        };
        let r = match ops {
            None => self.recover_gmv(idx),
            // CAST: as above.
            Some((read, write)) => self.recover_bt0(ty as usize, read, write, idx),
        };
        if let Err(e) = r {
            hdev_err!(
                d,
                "failed to recover {}, index = {}, ret = {}.\n",
                name,
                idx,
                e.to_errno()
            );
        }
    }

    /// `fmea_ram_ecc_query`: QUERY_RAM_ECC's 1-bit error flag, resource
    /// type and index.
    fn query(&self) -> Result<(u32, u32, u32)> {
        let mut q = [Desc::new(cmq_op::QUERY_RAM_ECC, true)];
        self.cmd.send(&mut q)?;
        let g = |f| q[0].get(f);
        Ok((
            g(cmq_req::QUERY_RAM_ECC_1BIT_ERR),
            g(cmq_req::QUERY_RAM_ECC_RES_TYPE),
            g(cmq_req::QUERY_RAM_ECC_TAG),
        ))
    }

    /// `fmea_recover_gmv`: reads GMV BT `idx` back through CFG_GMV_BT and
    /// writes it again.
    fn recover_gmv(&self, idx: u32) -> Result {
        let mut q = [Desc::new(cmq_op::CFG_GMV_BT, true)];
        q[0].data.write(cmq_req::CFG_GMV_BT_IDX, idx);
        self.cmd.send(&mut q).inspect_err(|e| {
            hdev_err!(
                self.cmd.state().device(),
                "failed to execute cmd to read gmv",
                ret = e.to_errno()
            )
        })?;
        let lo = q[0].get(cmq_req::CFG_GMV_BT_BA_L);
        let hi = q[0].get(cmq_req::CFG_GMV_BT_BA_H);
        let mut w = [Desc::new(cmq_op::CFG_GMV_BT, false)];
        w[0].data.write(cmq_req::CFG_GMV_BT_BA_L, lo);
        w[0].data.write(cmq_req::CFG_GMV_BT_BA_H, hi);
        w[0].data.write(cmq_req::CFG_GMV_BT_IDX, idx);
        self.cmd.send(&mut w)
    }

    /// `fmea_recover_others`: reads BT0 of entry `idx` back by mailbox
    /// (`read`) and writes it again (`write`).
    fn recover_bt0(&self, ty: usize, read: u8, write: u8, idx: u32) -> Result {
        let d = self.cmd.state().device();
        let mb = MailboxBuf::new(self.dev.get())?;
        self.cmd.mbox(0, mb.dma(), read, idx).inspect_err(|e| {
            hdev_err!(
                d,
                "failed to execute cmd to read fmea ram",
                ret = e.to_errno()
            )
        })?;
        let mut w = [0u32; 2];
        mb.read_le_words(&mut w)?;
        let v = u64::from(u32::from_le(w[0])) | u64::from(u32::from_le(w[1])) << 32;
        // `fmea_get_ram_res_addr`: a page number but for the timer and
        // SCCC tables.
        let addr = if ty >= ECC_RES_FIRST_BY_ADDR {
            v
        } else {
            v << hw_page::PAGE_SHIFT
        };
        self.cmd.mbox(addr, 0, write, idx).inspect_err(|e| {
            hdev_err!(
                d,
                "failed to execute cmd to write fmea ram",
                ret = e.to_errno()
            )
        })
    }
}

/// The abnormal-interrupt vector.
pub(crate) struct Abnormal {
    cmd: Arc<Cmd>,
    objs: Arc<Objects>,
    reset: ResetRequest,
    /// HIP09's RAM ECC recovery (`None` before HIP09, where C only logs).
    ecc: Option<Arc<EccRecovery>>,
}

impl IrqHandler for Abnormal {
    /// `hns_roce_v2_msix_interrupt_abn`.
    fn handle(&self) -> bool {
        let regs = self.cmd.state().regs();
        let d = self.cmd.state().device();
        let st = regs.read(VF_ABN_INT_ST);
        if u32::from(st) != 0 {
            // `abnormal_interrupt_basic`.
            if !st.aeq_overflow() {
                hdev_err!(d, "there is no basic abn irq found.\n");
                return false;
            }
            hdev_err!(d, "AEQ overflow!\n");
            let en = regs.read(VF_ABN_INT_EN);
            // Acknowledge the status bit, ask the ae_dev for a function
            // reset, keep the interrupt enabled.
            regs.write_reg(VF_ABN_INT_ST::zeroed().with_aeq_overflow(true));
            self.reset.request();
            regs.write_reg(en.with_enable(true));
            true
        } else if let Some(ecc) = &self.ecc {
            // No status bit on HIP09: a RAM ECC error, recovered from the
            // IRQ work queue.
            ecc.queue(&self.objs.wq);
            true
        } else {
            hdev_err!(d, "there is no abnormal irq found.\n");
            false
        }
    }
}

/// All EQs of a function with their interrupts.
pub(crate) struct EqTable {
    cmd: Arc<Cmd>,
    objs: Arc<Objects>,
    eq_num: u32,
    /// Set once `new` has enabled the interrupts, which `Drop` then
    /// disables. Whether or not it is set, `Drop` frees what `new` got and
    /// destroys every EQ context `new` created (as the error path of
    /// `hns_roce_v2_init_eq_table` does).
    enabled: bool,
    // Declared before `eqs`: interrupts are freed before the queues go.
    abn_irqs: KVec<IrqRegistration<Abnormal>>,
    irqs: KVec<IrqRegistration<Eq>>,
    eqs: KVec<Arc<Eq>>,
}

/// `hns-<pci>-<what>-<n>`, the C driver's interrupt names.
fn irq_name(h: &Hnae3Handle, what: &str, n: u32) -> Result<CString> {
    CString::try_from_fmt(fmt!(
        "hns-{}-{}-{}",
        h.pci_name().to_str().unwrap_or("?"),
        what,
        n
    ))
}

impl EqTable {
    /// Creates the CEQs and the AEQ, requests their interrupts and enables
    /// them (`hns_roce_v2_init_eq_table`).
    pub(crate) fn new(
        h: &Hnae3Handle,
        cmd: &Arc<Cmd>,
        objs: &Arc<Objects>,
        caps: &Caps,
        hip09: bool,
    ) -> Result<Self> {
        if caps.aeqe_depth < AEQ_POLLING_BUDGET {
            return Err(EINVAL);
        }
        let comp = caps.num_comp_vectors;
        let aeq = caps.num_aeq_vectors;
        let other = caps.num_other_vectors;
        let eq_num = comp + aeq;
        let mut t = EqTable {
            cmd: cmd.clone(),
            objs: objs.clone(),
            eq_num,
            enabled: false,
            abn_irqs: KVec::with_capacity(other as usize, GFP_KERNEL)?,
            irqs: KVec::with_capacity(eq_num as usize, GFP_KERNEL)?,
            eqs: KVec::with_capacity(eq_num as usize, GFP_KERNEL)?,
        };
        for i in 0..eq_num {
            let kind = if i < comp { Kind::Ceq } else { Kind::Aeq };
            let eq = Eq::create(h, cmd, objs, caps, i, kind)
                .inspect_err(|_| hdev_err!(h.device(), "failed to create eq.\n"))?;
            // Within the capacity reserved for the loop: no growth path.
            t.eqs.push_within_capacity(Arc::new(eq, GFP_KERNEL)?)?;
        }
        t.request_irqs(h, comp, aeq, other, hip09)
            .inspect_err(|_| hdev_err!(h.device(), "failed to request irq.\n"))?;
        t.int_enable(true);
        t.enabled = true;
        Ok(t)
    }

    fn request_irqs(
        &mut self,
        h: &Hnae3Handle,
        comp: u32,
        aeq: u32,
        other: u32,
        hip09: bool,
    ) -> Result {
        // One recovery for the function (C's `hr_dev->ecc_work`), shared by
        // its abnormal vectors.
        let ecc = if hip09 {
            Some(Arc::new(
                EccRecovery {
                    cmd: self.cmd.clone(),
                    dev: BoundDevice::new(h.bound_device()),
                    pending: AtomicBool::new(false),
                },
                GFP_KERNEL,
            )?)
        } else {
            None
        };
        for j in 0..other {
            let r = IrqRegistration::new(
                h.irq_vector(j)?,
                irq_name(h, "abn", j)?,
                Arc::new(
                    Abnormal {
                        cmd: self.cmd.clone(),
                        objs: self.objs.clone(),
                        reset: h.reset_request(
                            h.pci_ident().device == crate::debugfs::DEV_ID_RDMA_DCB_PFC_VF,
                        ),
                        ecc: ecc.clone(),
                    },
                    GFP_KERNEL,
                )?,
            );
            // Within the capacity reserved in `new`: no growth path.
            self.abn_irqs.push_within_capacity(
                r.inspect_err(|_| hdev_err!(h.device(), "request irq error!\n"))?,
            )?;
        }
        // Vectors: abnormal ones, then the AEQ, then the CEQs; EQ `i < comp`
        // is a CEQ, the rest are AEQs.
        for (i, eq) in self.eqs.iter().enumerate() {
            // CAST: fewer than 2^32 EQs.
            let i = i as u32;
            let (vec, name) = if i < comp {
                (other + aeq + i, irq_name(h, "ceq", i)?)
            } else {
                (other + i - comp, irq_name(h, "aeq", i - comp)?)
            };
            // A CEQ's walk runs as BH work, the AEQ's in the interrupt.
            let r = if i < comp {
                IrqRegistration::new_bh(h.irq_vector(vec)?, name, eq.clone())
            } else {
                IrqRegistration::new(h.irq_vector(vec)?, name, eq.clone())
            }
            .inspect_err(|_| hdev_err!(h.device(), "request irq error!\n"))?;
            // Within the capacity reserved in `new`: no growth path.
            self.irqs.push_within_capacity(r)?;
        }
        Ok(())
    }

    /// Enables or disables the EQ and abnormal interrupts.
    fn int_enable(&self, on: bool) {
        let regs = self.cmd.state().regs();
        let v = u32::from(on);
        // CAST: a handful of EQs.
        for i in 0..self.eq_num as usize {
            // Registers past the window (more EQs than registers) are
            // skipped.
            if let Some(at) = VF_EVENT_INT_EN::try_at(i) {
                regs.write(at, VF_EVENT_INT_EN::from(v));
            }
        }
        regs.write_reg(VF_ABN_INT_EN::from(v));
        regs.write_reg(VF_ABN_INT_CFG::from(v));
    }
}

impl Drop for EqTable {
    /// Disables and frees the interrupts (a CEQ's BH work cancelled or
    /// waited for with its line), drains the work queue, then
    /// destroys the EQ contexts and frees their buffers
    /// (`hns_roce_v2_cleanup_eq_table`; for a table `new` gave up on, its
    /// error path).
    fn drop(&mut self) {
        if self.enabled {
            self.int_enable(false);
        }
        self.irqs.clear();
        self.abn_irqs.clear();
        // No interrupt and no verb queues work any more (a failed `new`
        // registered no device).
        self.objs.wq.destroy();
        // The table holds the last reference of each EQ now: dropping it
        // destroys the context, then frees the buffer. A torn-down table
        // goes in creation order, a failed `new` in reverse, as in C.
        if self.enabled {
            self.eqs.clear();
        } else {
            while self.eqs.pop().is_some() {}
        }
    }
}
