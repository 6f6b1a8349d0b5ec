// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Shared receive queues (`hns_roce_srq.c` and the SRQ verbs of
//! `hns_roce_hw_v2.c`): user SRQs whose WQE buffer, index queue and record
//! doorbell live in the process (libhns: `struct hns_roce_ib_create_srq`),
//! pinned through [`UserMtr`]s and the user context's [`UserDbPages`]; the
//! SRQ number, the SRQC table entry, CREATE_SRQ / DESTROY_SRQ, the limit
//! (MODIFY_SRQC), QUERY_SRQC; and the SRQ table through which the AEQ
//! reaches an SRQ's event handler.
//!
//! XRC SRQs are the same with their domain and CQ in the context. Kernel
//! SRQs (and so `post_srq_recv`) are not ported.

use crate::cmdq::{query_context, Cmd, MailboxBuf};
use crate::db::{UserDb, UserDbPages};
use crate::hem::mtr::{Region, UserMtr};
use crate::hem::table::HemTables;
use crate::hem::HemType;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{cap_flag, mbox, sge, srq_lim};
use crate::hns_roce_hw_v2::ctx as hw_ctx;
use crate::hns_roce_hw_v2::qpc;
use crate::hw_rev::HwRev;
use crate::pd::IdSpace;
use crate::rdma::{
    IbSrq, ResAttrs, ResRaw, SrqArgs, SrqAttr, SrqEvent, SrqUreq, UmemDev, SRQT_XRC,
};
use kernel::{
    device::{Bound, Device},
    new_spinlock_irq,
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{Arc, SpinLockIrq},
};

/// `HNS_ROCE_SRQ_CAP_RECORD_DB` (`enum hns_roce_srq_cap_flags`, uapi): the
/// request asks for a record doorbell.
const SRQ_CAP_RECORD_DB: u32 = 1 << 0;
/// `HNS_ROCE_RSP_SRQ_CAP_RECORD_DB` (`enum hns_roce_srq_cap_flags_resp`,
/// uapi): the SRQ has one.
const RSP_SRQ_CAP_RECORD_DB: u32 = 1 << 0;

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
    /// SRQ numbers.
    pub(crate) srqns: &'a IdSpace,
    /// The SRQ table of the event handlers.
    pub(crate) table: &'a SrqTable,
}

/// What a user SRQ adds: the caller and its request.
pub(crate) struct UserSrq<'a> {
    /// Pins the caller's memory.
    pub(crate) dev: UmemDev<'a>,
    /// The user context's record pages.
    pub(crate) dbs: &'a Arc<UserDbPages>,
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
    /// SGEs per WQE (a power of two).
    max_gs: u32,
    /// An XRC SRQ's domain (0 for a basic SRQ, as C keeps it).
    xrcdn: u32,
    wqe: UserMtr,
    idx: UserMtr,
    db: Option<UserDb>,
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

/// The depth and SGEs of a new SRQ (`set_srq_basic_param` for a user SRQ;
/// libhns reserves no SGE, so `rsv_sge` is 0): `(wqe_cnt, max_gs)`.
///
/// # Errors
///
/// `EINVAL` (logged) for more WQEs than the caps allow, or no or too many
/// SGEs.
fn basic_param(env: &SrqEnv<'_>, max_wr: u32, max_sge: u32) -> Result<(u32, u32)> {
    let c = env.caps;
    // HIP08 has one SGE more than the firmware says for a user SRQ (libhns
    // sizes its WQEs with the reserved one).
    let sge_cap = if env.rev.is_hip08() {
        c.max_srq_sges
            .checked_add(1)
            .and_then(u32::checked_next_power_of_two)
            .ok_or(EINVAL)?
    } else {
        c.max_srq_sges
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
    let max_gs = max_sge.checked_next_power_of_two().ok_or(EINVAL)?;
    Ok((wqe_cnt, max_gs))
}

impl Srq {
    /// Creates an SRQ (`hns_roce_create_srq`) as `args` asks, in C's order:
    /// the attributes, the request's copy, the index queue and the WQE
    /// buffer at the request's `que_addr` and `buf_addr`, the record at
    /// `db_addr` (if the caps have SRQ record doorbells and the request
    /// asks), the SRQN, the SRQC table entry and the SRQ table, CREATE_SRQ.
    /// `args` gets the depth and SGEs (written back to the core's
    /// attributes), the SRQN and the response's `cap_flags`.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` for a kernel SRQ; `EINVAL` for bad attributes;
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
        let Some(u) = user else {
            ibdev_err_ratelimited!(env.cmd, "kernel SRQs are not supported yet\n");
            return Err(EOPNOTSUPP);
        };
        let (wqe_cnt, max_gs) = basic_param(env, args.max_wr, args.max_sge)?;
        if u.req.copy_ret != 0 {
            return Err(Error::from_errno(u.req.copy_ret));
        }

        // CAST: PAGE_SHIFT is 12..16.
        let page_shift = kernel::page::PAGE_SHIFT as u32;
        let cap = u64::from(c.page_size_cap);
        let idx_shift = srq_lim::IDX_QUE_ENTRY_SZ.ilog2();
        let idx = UserMtr::new(
            env.dev,
            u.dev,
            u.req.que_addr,
            &[Region {
                size: qpc::entries_size(wqe_cnt, idx_shift),
                hop: c.idx_hop_num,
            }],
            c.idx_pg.buf + page_shift,
            c.idx_pg.ba + page_shift,
            cap,
        )
        .inspect_err(|e| {
            ibdev_err_ratelimited!(
                env.cmd,
                "failed to alloc SRQ idx mtr, ret = {}.\n",
                e.to_errno()
            )
        })?;
        let wqe_bytes = sge::SGE_SIZE
            .checked_mul(max_gs)
            .and_then(|b| b.max(sge::SGE_SIZE).checked_next_power_of_two())
            .ok_or(EINVAL)?;
        let wqe = UserMtr::new(
            env.dev,
            u.dev,
            u.req.buf_addr,
            &[Region {
                size: qpc::entries_size(wqe_cnt, wqe_bytes.ilog2()),
                hop: c.srqwqe_hop_num,
            }],
            c.srqwqe_pg.buf + page_shift,
            c.srqwqe_pg.ba + page_shift,
            cap,
        )
        .inspect_err(|e| {
            ibdev_err_ratelimited!(
                env.cmd,
                "failed to alloc SRQ buf mtr, ret = {}.\n",
                e.to_errno()
            )
        })?;
        let db = if c.flags & cap_flag::SRQ_RECORD_DB != 0
            && u.req.req_cap_flags & SRQ_CAP_RECORD_DB != 0
        {
            Some(u.dbs.map(u.dev, u.req.db_addr)?)
        } else {
            None
        };
        let mut srq = KBox::new(
            Srq {
                srqn: 0,
                wqe_cnt,
                max_gs,
                xrcdn: args.xrcdn,
                wqe,
                idx,
                db,
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
            .inspect_err(|e| {
                ibdev_err!(
                    env.cmd,
                    "failed to get SRQC table, ret = {}.\n",
                    e.to_errno()
                )
            })?;
        env.table.insert(srqn.n, ibsrq).inspect_err(|e| {
            ibdev_err!(env.cmd, "failed to store SRQC, ret = {}.\n", e.to_errno())
        })?;
        let entry = TableEntry {
            table: env.table,
            srqn: srqn.n,
        };
        srq.create_srqc(env, args)?;
        entry.keep();
        srqc.keep();
        args.srqn = srqn.keep();
        args.max_wr = wqe_cnt;
        args.max_sge = max_gs;
        args.cap_flags = if srq.db.is_some() {
            RSP_SRQ_CAP_RECORD_DB
        } else {
            0
        };
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
                ibdev_err_ratelimited!(env.cmd, "failed to config SRQC, ret = {}.\n", e.to_errno())
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
        self.wqe.find(0, &mut wqe_mtts).inspect_err(|e| {
            ibdev_err!(
                env.cmd,
                "failed to find mtr for SRQ WQE, ret = {}.\n",
                e.to_errno()
            )
        })?;
        let mut idx_mtts = [0u64; 2];
        self.idx.find(0, &mut idx_mtts).inspect_err(|e| {
            ibdev_err!(
                env.cmd,
                "failed to find mtr for SRQ idx, ret = {}.\n",
                e.to_errno()
            )
        })?;
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
                ba_pg_shift: self.wqe.ba_pg_shift(),
                buf_pg_shift: self.wqe.page_shift(),
                bt_ba: self.wqe.root_ba(),
                cur: wqe_mtts[0],
                next: wqe_mtts[1],
            },
            idx: hw_ctx::SrqQueue {
                hop: c.idx_hop_num,
                ba_pg_shift: self.idx.ba_pg_shift(),
                buf_pg_shift: self.idx.page_shift(),
                bt_ba: self.idx.root_ba(),
                cur: idx_mtts[0],
                next: idx_mtts[1],
            },
            db: self.db.as_ref().map(|r| r.dma),
        }))
    }

    /// Destroys the SRQ (`hns_roce_destroy_srq`): DESTROY_SRQ, out of the
    /// SRQ table (no event reaches it after), the SRQC entry and the SRQN
    /// back; the record and the buffers are unpinned as the box drops.
    pub(crate) fn destroy(self: KBox<Self>, env: &SrqEnv<'_>) {
        if let Err(e) = env.cmd.mbox(0, 0, mbox::DESTROY_SRQ, self.srqn) {
            dev_err_ratelimited!(
                env.cmd.device(),
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
                    "failed to handle cmd of modifying SRQ, ret = {}.\n",
                    e.to_errno()
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
                    "failed to process cmd of querying SRQ, ret = {}.\n",
                    e.to_errno()
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
    mask: u32,
    #[pin]
    map: SpinLockIrq<RBTree<u32, IbSrq>>,
}

impl SrqTable {
    /// An empty table for `num_srqs` (a power of two, or 0) SRQs.
    pub(crate) fn new(num_srqs: u32) -> impl PinInit<Self> {
        pin_init!(SrqTable {
            mask: num_srqs.wrapping_sub(1),
            map <- new_spinlock_irq!(RBTree::new(), "hns_roce_rs srq_table"),
        })
    }

    /// Adds SRQ `srqn`.
    fn insert(&self, srqn: u32, ibsrq: IbSrq) -> Result {
        let node = RBTreeNode::new(srqn & self.mask, ibsrq, GFP_KERNEL)?;
        self.map.lock().insert(node);
        Ok(())
    }

    /// Takes SRQ `srqn` out.
    fn remove(&self, srqn: u32) {
        self.map.lock().remove(&(srqn & self.mask));
    }

    /// An AEQE for `srqn` (`hns_roce_srq_event`): its event handler, under
    /// the table lock.
    pub(crate) fn event(&self, cmd: &Cmd, srqn: u32, ev: SrqEvent) {
        let map = self.map.lock();
        match map.get(&(srqn & self.mask)) {
            Some(s) => s.event(ev),
            None => dev_warn!(cmd.device(), "Async event for bogus SRQ {:08x}\n", srqn),
        }
    }
}
