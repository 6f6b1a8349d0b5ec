// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues (`hns_roce_srq.c` and the SRQ verbs of
//! `hns_roce_hw_v2.c`): user SRQs whose WQE buffer, index queue and record
//! doorbell live in the process (libhns: `struct hns_roce_ib_create_srq`),
//! pinned through [`UserMtr`]s and the user context's [`UserDbPages`]; the
//! SRQ number, the SRQC table entry, CREATE_SRQ / DESTROY_SRQ, the limit
//! (MODIFY_SRQC), QUERY_SRQC; and the SRQ table through which the AEQ
//! reaches an SRQ's event handler.
//!
//! XRC SRQs are the same with their domain and CQ in the context.
//!
//! Kernel SRQs (`alloc_srq_buf`/`alloc_srq_db` without udata) have their
//! WQE buffer and index queue in [`KernelMtr`]s and a kernel record
//! doorbell ([`Db`]); `post_srq_recv` (`hns_roce_v2_post_srq_recv`) takes
//! the lowest free WQE slot, writes the WQE there and the slot's number
//! into the next index queue entry, and publishes the producer index. The
//! WR ids and the slot bitmap are an [`SrqCore`], which the SRQ table
//! hands to the kernel QPs on the SRQ: their receive completions take the
//! WR id by the CQE's WQE index and free the slot (`poll_cq`, CQ
//! cleaning).

use crate::cmdq::{query_context, Cmd, DevState, MailboxBuf};
use crate::db::{Db, DbPages, UserDb, UserDbPages};
use crate::device::Ucontext;
use crate::hem::mtr::{KernelMtr, Region, UserBuf, UserMtr};
use crate::hem::table::HemTables;
use crate::hem::HemType;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{cap_flag, dev_reg, mbox, sge, srq_lim};
use crate::hns_roce_hw_v2::ctx as hw_ctx;
use crate::hns_roce_hw_v2::qpc;
use crate::hns_roce_hw_v2::srqwqe;
use crate::hw_rev::HwRev;
use crate::objtable::ObjTable;
use crate::pd::IdSpace;
use crate::rdma::{
    new_spinlock_irq, trace, DbOffset, IbSrq, RecvWr, ResAttrs, ResRaw, SpinLockIrq, SrqArgs,
    SrqAttr, SrqEvent, UdataReq, UmemDev, SRQT_XRC,
};
use kernel::{
    device::{Bound, Device},
    prelude::*,
    rbtree::RBTree,
    sync::{barrier, Arc, ArcBorrow},
};

/// `HNS_ROCE_SRQ_CAP_RECORD_DB` (`enum hns_roce_srq_cap_flags`, uapi): the
/// request asks for a record doorbell.
const SRQ_CAP_RECORD_DB: u32 = 1 << 0;
/// `HNS_ROCE_RSP_SRQ_CAP_RECORD_DB` (`enum hns_roce_srq_cap_flags_resp`,
/// uapi): the SRQ has one.
pub(crate) const RSP_SRQ_CAP_RECORD_DB: u32 = 1 << 0;

/// What creating and using an SRQ needs from the device.
pub(crate) struct SrqEnv<'a> {
    /// Commands.
    pub(crate) cmd: &'a Cmd,
    /// DMA device.
    pub(crate) dev: &'a Device<Bound>,
    /// Context tables.
    pub(crate) hem: &'a HemTables,
    /// Capabilities.
    pub(crate) caps: &'a Caps,
    /// Revision of the engine.
    pub(crate) rev: HwRev,
    /// Record doorbell pages (kernel SRQs).
    pub(crate) dbs: &'a DbPages,
    /// SRQ numbers.
    pub(crate) srqns: &'a IdSpace,
    /// The SRQ table of the event handlers.
    pub(crate) table: &'a SrqTable,
}

/// A user SRQ request (libhns's `struct hns_roce_ib_create_srq`) as read
/// from the udata, with the result of reading it.
pub(crate) type SrqUreq = UdataReq<crate::uabi::CreateSrq>;

/// What a user SRQ adds: the caller and its request.
pub(crate) struct UserSrq<'a> {
    /// Pins the caller's memory.
    pub(crate) dev: UmemDev<'a>,
    /// The user context's record pages.
    pub(crate) uctx: ArcBorrow<'a, Ucontext>,
    /// The request as the shim copied it.
    pub(crate) req: &'a SrqUreq,
}

/// An SRQ. Its context is destroyed (explicitly, [`Srq::destroy`]) before
/// the buffers and the record doorbell drop with it.
pub(crate) struct Srq {
    /// SRQ number.
    pub(crate) srqn: u32,
    /// WQEs (a power of two).
    wqe_cnt: u32,
    /// SGEs per WQE (a power of two), the reserved one included.
    max_gs: u32,
    /// Reserved SGEs per WQE (1 for a kernel SRQ on HIP08, else 0).
    rsv_sge: u32,
    /// Bytes per WQE, as a shift.
    wqe_shift: u32,
    /// An XRC SRQ's domain (0 for a basic SRQ, as C keeps it).
    xrcdn: u32,
    queues: Queues,
}

/// Where an SRQ's WQEs, index queue and record doorbell live.
enum Queues {
    /// In the process (libhns writes them).
    User(KBox<UserQueues>),
    /// In kernel memory (`post_srq_recv` writes them).
    Kernel(KBox<KernelQueues>),
}

/// A user SRQ's queues and record doorbell.
struct UserQueues {
    wqe: UserMtr,
    idx: UserMtr,
    db: Option<UserDb>,
}

/// A kernel SRQ's queues, record doorbell and WR ids.
struct KernelQueues {
    wqe: KernelMtr,
    idx: KernelMtr,
    db: Option<Db>,
    core: Arc<SrqCore>,
}

/// The software state of a kernel SRQ's queue (C's `idx_que` bitmap,
/// head and tail, and `wrid`).
struct SrqRing {
    /// WR id of each WQE slot.
    wrid: KVVec<u64>,
    /// Slots in use, one bit each.
    used: KVVec<u64>,
    /// Producer index (index queue entries written).
    head: u32,
    /// WQEs given back by completions and CQ cleaning.
    tail: u32,
}

impl SrqRing {
    /// `hns_roce_srqwq_overflow`: every WQE is posted.
    fn full(&self, cnt: u32) -> bool {
        self.head.wrapping_sub(self.tail) >= cnt
    }

    /// The lowest free slot (`get_srq_wqe_idx` without taking it).
    fn first_free(&self, cnt: u32) -> Option<u32> {
        for (i, w) in self.used.iter().enumerate() {
            if *w != u64::MAX {
                // CAST: a slot number below `cnt`.
                let pos = (i * 64) as u32 + w.trailing_ones();
                return (pos < cnt).then_some(pos);
            }
        }
        None
    }

    /// Marks slot `i` used or free.
    fn mark(&mut self, i: u32, used: bool) {
        // CAST: a slot number.
        if let Some(w) = self.used.get_mut((i / 64) as usize) {
            if used {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }

    /// Whether slot `i` is in use.
    fn is_used(&self, i: u32) -> bool {
        // CAST: a slot number.
        self.used
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

/// What the CQ poll and CQ cleaning need of a kernel SRQ (no DMA memory):
/// its WR ids and which WQE slots are in use. Held by the SRQ, the SRQ
/// table and every QP on the SRQ.
#[pin_data]
pub(crate) struct SrqCore {
    wqe_cnt: u32,
    /// C's `srq->lock`.
    #[pin]
    ring: SpinLockIrq<SrqRing>,
}

impl SrqCore {
    fn new(wqe_cnt: u32) -> Result<Arc<Self>> {
        // CAST: a WQE count.
        let n = wqe_cnt as usize;
        let wrid = KVVec::from_elem(0u64, n, GFP_KERNEL)?;
        let used = KVVec::from_elem(0u64, n.div_ceil(64), GFP_KERNEL)?;
        Arc::pin_init(
            pin_init!(SrqCore {
                wqe_cnt,
                ring <- new_spinlock_irq!(
                    SrqRing {
                        wrid,
                        used,
                        head: 0,
                        tail: 0,
                    },
                    "hns_roce_rs srq"
                ),
            }),
            GFP_KERNEL,
        )
    }

    /// Gives WQE slot `wqe_idx` back (`hns_roce_free_srq_wqe`, from CQ
    /// cleaning); a slot number out of range or not in use changes nothing
    /// (C would clear a bit past its bitmap).
    pub(crate) fn free(&self, wqe_idx: u32) {
        let mut r = self.ring.lock();
        if wqe_idx < self.wqe_cnt && r.is_used(wqe_idx) {
            r.mark(wqe_idx, false);
            r.tail = r.tail.wrapping_add(1);
        }
    }

    /// The WR id of a receive completion for WQE slot `wqe_idx`, which it
    /// gives back (`hns_roce_v2_poll_one` for a QP on an SRQ).
    pub(crate) fn take(&self, wqe_idx: u32) -> u64 {
        let mut r = self.ring.lock();
        if wqe_idx >= self.wqe_cnt || !r.is_used(wqe_idx) {
            return 0;
        }
        r.mark(wqe_idx, false);
        r.tail = r.tail.wrapping_add(1);
        // CAST: below the WQE count.
        r.wrid.get(wqe_idx as usize).copied().unwrap_or(0)
    }
}

/// An SRQ number taken from the device's space, given back on drop unless
/// the SRQ keeps it.
struct Srqn<'a> {
    ids: &'a IdSpace,
    n: u32,
}

impl Srqn<'_> {
    /// The SRQ keeps its number; [`Srq::destroy`] frees it.
    fn keep(self) -> u32 {
        let n = self.n;
        core::mem::forget(self);
        n
    }
}

impl Drop for Srqn<'_> {
    fn drop(&mut self) {
        self.ids.free(self.n);
    }
}

/// An SRQ in the SRQ table, taken out on drop unless the SRQ keeps it.
struct TableEntry<'a> {
    table: &'a SrqTable,
    srqn: u32,
}

impl TableEntry<'_> {
    /// The SRQ stays in the table; [`Srq::destroy`] takes it out.
    fn keep(self) {
        core::mem::forget(self);
    }
}

impl Drop for TableEntry<'_> {
    fn drop(&mut self) {
        self.table.remove(self.srqn);
    }
}

/// The depth and SGEs of a new SRQ (`set_srq_basic_param`):
/// `(wqe_cnt, max_gs, rsv_sge)`. On HIP08 a user SRQ may have one SGE more
/// than the firmware says (libhns sizes its WQEs with the reserved one),
/// while a kernel SRQ reserves one SGE per WQE for the terminator.
///
/// # Errors
///
/// `EINVAL` (logged) for more WQEs than the caps allow, or no or too many
/// SGEs.
fn basic_param(env: &SrqEnv<'_>, max_wr: u32, max_sge: u32, user: bool) -> Result<(u32, u32, u32)> {
    let c = env.caps;
    let (sge_cap, rsv_sge) = match (env.rev.is_hip08(), user) {
        (false, _) => (c.max_srq_sges, 0),
        (true, true) => (
            c.max_srq_sges
                .checked_add(1)
                .and_then(u32::checked_next_power_of_two)
                .ok_or(EINVAL)?,
            0,
        ),
        (true, false) => (c.max_srq_sges, 1),
    };
    if max_wr > c.max_srq_wrs || max_sge > sge_cap || max_sge == 0 {
        ibdev_err_ratelimited!(
            env.cmd,
            "invalid SRQ attr, depth = {}, sge = {}.\n",
            max_wr,
            max_sge
        );
        return Err(EINVAL);
    }
    let wqe_cnt = max_wr
        .max(srq_lim::MIN_SRQ_WQE_NUM)
        .checked_next_power_of_two()
        .ok_or(EINVAL)?;
    let max_gs = (max_sge + rsv_sge)
        .checked_next_power_of_two()
        .ok_or(EINVAL)?;
    Ok((wqe_cnt, max_gs, rsv_sge))
}

impl Srq {
    /// Creates an SRQ (`hns_roce_create_srq`) as `args` asks, in C's order:
    /// the attributes, the request's copy, the index queue and the WQE
    /// buffer (a user SRQ's at the request's `que_addr` and `buf_addr`, a
    /// kernel SRQ's in kernel memory with its WR ids), the record (a user
    /// SRQ's at `db_addr` if the caps have SRQ record doorbells and the
    /// request asks; a kernel SRQ's whenever the caps have them), the
    /// SRQN, the SRQC table entry and the SRQ table, CREATE_SRQ.
    /// `args` gets the depth and SGEs (written back to the core's
    /// attributes), the SRQN and the response's `cap_flags`.
    ///
    /// # Errors
    ///
    /// `EINVAL` for bad attributes;
    /// the errno of the request's copy, of pinning (`ENOMEM`), of the
    /// record (`EFAULT`...), `ENOMEM` without a free SRQN, the errno of the
    /// table or the mailbox. Everything taken is given back.
    pub(crate) fn create(
        env: &SrqEnv<'_>,
        args: &mut SrqArgs,
        ibsrq: IbSrq,
        user: Option<UserSrq<'_>>,
    ) -> Result<KBox<Self>> {
        let c = env.caps;
        let (wqe_cnt, max_gs, rsv_sge) =
            basic_param(env, args.max_wr, args.max_sge, user.is_some())?;
        if let Some(u) = &user {
            if u.req.copy_ret != 0 {
                return Err(Error::from_errno(u.req.copy_ret));
            }
        }

        // CAST: PAGE_SHIFT is 12..16.
        let page_shift = kernel::page::PAGE_SHIFT as u32;
        let cap = u64::from(c.page_size_cap);
        let idx_shift = srq_lim::IDX_QUE_ENTRY_SZ.ilog2();
        let idx_region = Region {
            size: qpc::entries_size(wqe_cnt, idx_shift),
            hop: c.idx_hop_num,
        };
        let wqe_bytes = sge::SGE_SIZE
            .checked_mul(max_gs)
            .and_then(|b| b.max(sge::SGE_SIZE).checked_next_power_of_two())
            .ok_or(EINVAL)?;
        let wqe_shift = wqe_bytes.ilog2();
        let wqe_region = Region {
            size: qpc::entries_size(wqe_cnt, wqe_shift),
            hop: c.srqwqe_hop_num,
        };
        let idx_err = |e: &Error| {
            ibdev_err_ratelimited!(env.cmd, "failed to alloc SRQ idx mtr", ret = e.to_errno())
        };
        let wqe_err = |e: &Error| {
            ibdev_err_ratelimited!(env.cmd, "failed to alloc SRQ buf mtr", ret = e.to_errno())
        };
        let queues = match user {
            Some(u) => {
                let idx = UserMtr::new(
                    env.dev,
                    UserBuf {
                        pin: u.dev,
                        addr: u.req.que_addr,
                        device_writes: false,
                    },
                    &[idx_region],
                    c.idx_pg.buf + page_shift,
                    c.idx_pg.ba + page_shift,
                    cap,
                )
                .inspect_err(idx_err)?;
                let wqe = UserMtr::new(
                    env.dev,
                    UserBuf {
                        pin: u.dev,
                        addr: u.req.buf_addr,
                        device_writes: false,
                    },
                    &[wqe_region],
                    c.srqwqe_pg.buf + page_shift,
                    c.srqwqe_pg.ba + page_shift,
                    cap,
                )
                .inspect_err(wqe_err)?;
                let db = if c.flags & cap_flag::SRQ_RECORD_DB != 0
                    && u.req.req_cap_flags & SRQ_CAP_RECORD_DB != 0
                {
                    Some(UserDbPages::map(u.uctx, u.dev, u.req.db_addr)?)
                } else {
                    None
                };
                Queues::User(KBox::new(UserQueues { wqe, idx, db }, GFP_KERNEL)?)
            }
            None => {
                let idx = KernelMtr::with_regions(
                    env.dev,
                    &[idx_region],
                    c.idx_pg.buf + page_shift,
                    c.idx_pg.ba + page_shift,
                    cap,
                )
                .inspect_err(idx_err)?;
                let wqe = KernelMtr::with_regions(
                    env.dev,
                    &[wqe_region],
                    c.srqwqe_pg.buf + page_shift,
                    c.srqwqe_pg.ba + page_shift,
                    cap,
                )
                .inspect_err(wqe_err)?;
                let core = SrqCore::new(wqe_cnt)?;
                // A kernel SRQ takes a pair of records (order 1), as C
                // does; a new record reads 0.
                let db = if c.flags & cap_flag::SRQ_RECORD_DB != 0 {
                    Some(env.dbs.alloc(env.dev, 1)?)
                } else {
                    None
                };
                Queues::Kernel(KBox::new(KernelQueues { wqe, idx, db, core }, GFP_KERNEL)?)
            }
        };
        let mut srq = KBox::new(
            Srq {
                srqn: 0,
                wqe_cnt,
                max_gs,
                rsv_sge,
                wqe_shift,
                xrcdn: args.xrcdn,
                queues,
            },
            GFP_KERNEL,
        )?;
        // From here on what is taken goes back, in the reverse order, as
        // the guards below drop; the buffers go last with `srq`.
        let srqn = Srqn {
            ids: env.srqns,
            n: env.srqns.alloc()?,
        };
        srq.srqn = srqn.n;
        let srqc = env
            .hem
            .table(HemType::Srqc)?
            .get_ref(env.dev, srqn.n)
            .inspect_err(|e| ibdev_err!(env.cmd, "failed to get SRQC table", ret = e.to_errno()))?;
        env.table
            .insert(srqn.n, ibsrq, srq.core())
            .inspect_err(|e| ibdev_err!(env.cmd, "failed to store SRQC", ret = e.to_errno()))?;
        let entry = TableEntry {
            table: env.table,
            srqn: srqn.n,
        };
        srq.create_srqc(env, args)?;
        entry.keep();
        srqc.keep();
        args.srqn = srqn.keep();
        args.max_wr = wqe_cnt;
        args.max_sge = max_gs - rsv_sge;
        Ok(srq)
    }

    /// The SRQ context (`hns_roce_v2_write_srqc`) and CREATE_SRQ
    /// (`hns_roce_create_srqc`).
    fn create_srqc(&self, env: &SrqEnv<'_>, args: &SrqArgs) -> Result {
        let mb = MailboxBuf::new(env.dev)
            .inspect_err(|_| ibdev_err!(env.cmd, "failed to alloc mailbox for SRQC.\n"))?;
        let ctx = self.context(env, args).inspect_err(|_| {
            ibdev_err!(env.cmd, "failed to write SRQC.\n");
        })?;
        mb.write_le_words(ctx.as_le_words())?;
        env.cmd
            .mbox(mb.dma(), 0, mbox::CREATE_SRQ, self.srqn)
            .inspect_err(|e| {
                ibdev_err_ratelimited!(env.cmd, "failed to config SRQC", ret = e.to_errno())
            })
    }

    /// The context image, with the first pages of both queues; an XRC SRQ
    /// also names its domain and CQ (`set_srq_ext_param`: the shim gives
    /// the CQ of every type that has one, as C takes it).
    fn context(
        &self,
        env: &SrqEnv<'_>,
        args: &SrqArgs,
    ) -> Result<crate::field::Ctx<crate::hns_roce_hw_v2::fields::Srqc, 16>> {
        let c = env.caps;
        let mut wqe_mtts = [0u64; 2];
        let mut idx_mtts = [0u64; 2];
        match &self.queues {
            Queues::User(u) => {
                u.wqe.find(0, &mut wqe_mtts).inspect_err(|e| {
                    ibdev_err!(
                        env.cmd,
                        "failed to find mtr for SRQ WQE",
                        ret = e.to_errno()
                    )
                })?;
                u.idx.find(0, &mut idx_mtts).inspect_err(|e| {
                    ibdev_err!(
                        env.cmd,
                        "failed to find mtr for SRQ idx",
                        ret = e.to_errno()
                    )
                })?;
            }
            Queues::Kernel(k) => {
                wqe_mtts = [k.wqe.page_ba(0), k.wqe.page_ba(1)];
                idx_mtts = [k.idx.page_ba(0), k.idx.page_ba(1)];
            }
        }
        let (wqe_bt, wqe_ba_pg, wqe_pg, idx_bt, idx_ba_pg, idx_pg) = match &self.queues {
            Queues::User(u) => (
                u.wqe.root_ba(),
                u.wqe.ba_pg_shift(),
                u.wqe.page_shift(),
                u.idx.root_ba(),
                u.idx.ba_pg_shift(),
                u.idx.page_shift(),
            ),
            Queues::Kernel(k) => (
                k.wqe.root_ba(),
                k.wqe.ba_pg_shift(),
                k.wqe.page_shift(),
                k.idx.root_ba(),
                k.idx.ba_pg_shift(),
                k.idx.page_shift(),
            ),
        };
        Ok(hw_ctx::srq_context(&hw_ctx::SrqcParams {
            srqn: self.srqn,
            pdn: args.pdn,
            xrc: args.srq_type == SRQT_XRC,
            xrcdn: self.xrcdn,
            cqn: args.cqn,
            wqe_cnt: self.wqe_cnt,
            max_gs: self.max_gs,
            wqe: hw_ctx::SrqQueue {
                hop: c.srqwqe_hop_num,
                ba_pg_shift: wqe_ba_pg,
                buf_pg_shift: wqe_pg,
                bt_ba: wqe_bt,
                cur: wqe_mtts[0],
                next: wqe_mtts[1],
            },
            idx: hw_ctx::SrqQueue {
                hop: c.idx_hop_num,
                ba_pg_shift: idx_ba_pg,
                buf_pg_shift: idx_pg,
                bt_ba: idx_bt,
                cur: idx_mtts[0],
                next: idx_mtts[1],
            },
            db: self.db_dma(),
        }))
    }

    /// Bus address of the record doorbell, if the SRQ has one.
    pub(crate) fn db_dma(&self) -> Option<u64> {
        match &self.queues {
            Queues::User(u) => u.db.as_ref().map(|d| d.dma),
            Queues::Kernel(k) => k.db.as_ref().map(|d| d.dma),
        }
    }

    /// A kernel SRQ's WR ids and slots (`None` for a user SRQ).
    fn core(&self) -> Option<Arc<SrqCore>> {
        match &self.queues {
            Queues::User(_) => None,
            Queues::Kernel(k) => Some(k.core.clone()),
        }
    }

    /// Posts receive WRs (`hns_roce_v2_post_srq_recv`): each one into the
    /// lowest free WQE slot, the slot's number into the next index queue
    /// entry, then one record doorbell store (or SRQ doorbell) for all.
    ///
    /// # Errors
    ///
    /// The index of the first WR not posted and `EINVAL` for too many
    /// SGEs, `ENOMEM` when every WQE is posted, `ENOSPC` without a free
    /// slot (C's errnos and messages); `EINVAL` for a user SRQ (libhns
    /// posts those itself). As in C, a reset does not stop it (the
    /// doorbell is off then; the memory stays the SRQ's).
    pub(crate) fn post_recv<'w>(
        &self,
        st: &DevState,
        wrs: impl Iterator<Item = RecvWr<'w>>,
    ) -> core::result::Result<(), (usize, Error)> {
        let Queues::Kernel(k) = &self.queues else {
            return Err((0, EINVAL));
        };
        let KernelQueues { wqe, idx, db, core } = &**k;
        let cnt = self.wqe_cnt;
        let max_sge = self.max_gs - self.rsv_sge;
        let mut r = core.ring.lock();
        let mut nreq = 0usize;
        let mut res = Ok(());
        let traced = trace::enabled(trace::Costly::SrqWqe);
        for wr in wrs {
            // CAST: at most the caps' SGEs.
            if wr.sges.len() > max_sge as usize {
                ibdev_err!(
                    st,
                    "failed to check sge, wr->num_sge = {}, max_sge = {}.\n",
                    wr.sges.len(),
                    max_sge
                );
                res = Err((nreq, EINVAL));
                break;
            }
            if r.full(cnt) {
                ibdev_err!(st, "failed to check srqwq status, srqwq is full.\n");
                res = Err((nreq, ENOMEM));
                break;
            }
            let Some(slot) = r.first_free(cnt) else {
                res = Err((nreq, ENOSPC));
                break;
            };
            // CAST: slot offsets fit the buffer.
            let at = (slot as usize) << self.wqe_shift;
            let given = wr.sges.iter().map(|g| qpc::DataSeg {
                len: g.length(),
                lkey: g.lkey(),
                addr: g.addr(),
            });
            let mut wrote = Ok(());
            for (i, seg) in srqwqe::srq_wqe_segs(given, self.max_gs, self.rsv_sge).enumerate() {
                wrote = wqe.write_words(at + 16 * i, &seg.words());
                if wrote.is_err() {
                    break;
                }
            }
            // CAST: an index queue entry's offset fits the queue; the
            // entry size is 4.
            let entry = srqwqe::idx_slot(r.head, cnt) as usize * srq_lim::IDX_QUE_ENTRY_SZ as usize;
            if let Err(e) = wrote.and_then(|()| idx.write(entry, &srqwqe::idx_entry(slot))) {
                res = Err((nreq, e));
                break;
            }
            r.mark(slot, true);
            // CAST: below the WQE count.
            if let Some(w) = r.wrid.get_mut(slot as usize) {
                *w = wr.wr_id;
            }
            if traced {
                let bytes = 1u32.wrapping_shl(self.wqe_shift);
                wqe.trace_wqe(trace::Queue::Srq, self.srqn, slot, at, bytes, wr.wr_id);
            }
            r.head = r.head.wrapping_add(1);
            nreq += 1;
        }
        if nreq > 0 {
            // The WQEs and index entries reach memory before the engine
            // learns of them.
            barrier::dma_mb(barrier::Write);
            match db {
                Some(db) => db.set(srqwqe::record(r.head)),
                None => st.ring_db(
                    srqwqe::srq_doorbell(self.srqn, r.head),
                    DbOffset::new::<{ dev_reg::SRQ_DB_REG }>(),
                ),
            }
        }
        res
    }

    /// Destroys the SRQ (`hns_roce_destroy_srq`): DESTROY_SRQ, out of the
    /// SRQ table (no event reaches it after), the SRQC entry and the SRQN
    /// back; the record and the buffers are unpinned as the box drops.
    pub(crate) fn destroy(self: KBox<Self>, env: &SrqEnv<'_>) {
        if let Err(e) = env.cmd.mbox(0, 0, mbox::DESTROY_SRQ, self.srqn) {
            dev_err_ratelimited!(
                env.cmd.state().device(),
                "DESTROY_SRQ failed ({}) for SRQN {:06x}\n",
                e.to_errno(),
                self.srqn
            );
        }
        env.table.remove(self.srqn);
        if let Ok(t) = env.hem.table(HemType::Srqc) {
            t.put(env.dev, self.srqn);
        }
        env.srqns.free(self.srqn);
    }

    /// Modifies the SRQ (`hns_roce_v2_modify_srq`): a new limit through
    /// MODIFY_SRQC with a mask that leaves the rest of the context.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` for a resize (not supported, as in C), `EINVAL` for a
    /// limit above the depth, the mailbox's errno.
    pub(crate) fn modify(&self, env: &SrqEnv<'_>, resize: bool, limit: Option<u32>) -> Result {
        if resize {
            return Err(EOPNOTSUPP);
        }
        let Some(limit) = limit else {
            return Ok(());
        };
        if limit > self.wqe_cnt {
            return Err(EINVAL);
        }
        let (ctx, mask) = hw_ctx::srq_limit(limit);
        let mut words = [0u32; 32];
        words[..16].copy_from_slice(ctx.as_le_words());
        words[16..].copy_from_slice(mask.as_le_words());
        let mb = MailboxBuf::new(env.dev)?;
        mb.write_le_words(&words)?;
        env.cmd
            .mbox(mb.dma(), 0, mbox::MODIFY_SRQC, self.srqn)
            .inspect_err(|e| {
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to handle cmd of modifying SRQ",
                    ret = e.to_errno()
                )
            })
    }

    /// Queries the SRQ (`hns_roce_v2_query_srq`): the limit from the
    /// context (QUERY_SRQC), depth and SGEs as created.
    pub(crate) fn query(&self, env: &SrqEnv<'_>, a: &mut SrqAttr) -> Result {
        let mut words = [0u32; 16];
        query_context(env.cmd, env.dev, mbox::QUERY_SRQC, self.srqn, &mut words).inspect_err(
            |e| {
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to process cmd of querying SRQ",
                    ret = e.to_errno()
                )
            },
        )?;
        a.srq_limit = hw_ctx::srq_limit_of(words);
        a.max_wr = self.wqe_cnt;
        a.max_sge = self.max_gs;
        Ok(())
    }
}

impl Srq {
    /// What `rdma res show srq -dd` prints (`hns_roce_fill_res_srq_entry`):
    /// number, depth, SGEs and XRC domain (0 for a basic SRQ), in hex.
    pub(crate) fn res_attrs(&self, r: &mut ResAttrs) -> Result {
        r.put_hex(c"srqn", self.srqn)?;
        r.put_hex(c"wqe_cnt", self.wqe_cnt)?;
        r.put_hex(c"max_gs", self.max_gs)?;
        r.put_hex(c"xrcdn", self.xrcdn)
    }

    /// The SRQ context read back (QUERY_SRQC, `hns_roce_v2_query_srqc`)
    /// for `rdma res show srq -r` (`hns_roce_fill_res_srq_entry_raw`).
    pub(crate) fn res_raw(&self, env: &SrqEnv<'_>, r: &mut ResRaw<'_>) -> Result {
        let mut words = [0u32; 16];
        query_context(env.cmd, env.dev, mbox::QUERY_SRQC, self.srqn, &mut words)?;
        r.push_words(&words)
    }
}

/// The SRQs of a device by SRQN, for the event handler (C's `srq_table.xa`).
#[pin_data]
pub(crate) struct SrqTable {
    #[pin]
    t: ObjTable<TableSrq>,
}

/// An SRQ as the table holds it: its `ib_srq` for events and, for a
/// kernel SRQ, what its QPs' completions need.
struct TableSrq {
    ibsrq: IbSrq,
    core: Option<Arc<SrqCore>>,
}

impl SrqTable {
    /// An empty table for `num_srqs` (a power of two, or 0) SRQs.
    pub(crate) fn new(num_srqs: u32) -> impl PinInit<Self> {
        pin_init!(SrqTable {
            t <- ObjTable::new(
                num_srqs,
                new_spinlock_irq!(RBTree::new(), "hns_roce_rs srq_table")
            ),
        })
    }

    /// Adds SRQ `srqn`, not yet reachable by events.
    fn insert(&self, srqn: u32, ibsrq: IbSrq, core: Option<Arc<SrqCore>>) -> Result {
        let s = Arc::new(TableSrq { ibsrq, core }, GFP_KERNEL)?;
        self.t.insert(srqn, s)
    }

    /// Makes SRQ `srqn` reachable: the core knows it.
    pub(crate) fn publish(&self, srqn: u32) {
        self.t.publish(srqn)
    }

    /// Takes SRQ `srqn` out and waits for the event handlers running on
    /// it.
    fn remove(&self, srqn: u32) {
        self.t.remove(srqn)
    }

    /// The WR ids and slots of kernel SRQ `srqn`, for a kernel QP on it
    /// (`None` for a user SRQ or an unknown SRQN).
    pub(crate) fn core(&self, srqn: u32) -> Option<Arc<SrqCore>> {
        self.t.get(srqn).and_then(|s| s.core.clone())
    }

    /// An AEQE for `srqn` (`hns_roce_srq_event`): its event handler,
    /// without the table lock.
    pub(crate) fn event(&self, st: &DevState, srqn: u32, ev: SrqEvent) {
        if self.t.with(srqn, |s| s.ibsrq.event(ev)).is_none() {
            hdev_warn!(st.device(), "Async event for bogus SRQ {:08x}\n", srqn);
        }
    }
}
