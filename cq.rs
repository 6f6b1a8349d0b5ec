// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`hns_roce_create_cq`): CQE buffer, record doorbell,
//! CQ number, CQC. A kernel CQ has its buffer in kernel pages and its
//! record in the driver's doorbell pages; a user CQ (libhns) has both in
//! the process's memory (`struct hns_roce_ib_create_cq`: buffer and record
//! addresses, CQE size 32 or 64), pinned through a [`UserMtr`] and the user
//! context's [`UserDbPages`].
//!
//! Polling, arming, cleaning and the CQ table of the event paths are in
//! `cq/poll.rs` (kernel CQs; libhns polls its own).
//!
//! A CQ lives in an `Arc`: the rdma layer's handle, the CQ table (for the
//! CEQ and AEQ handlers) and the QPs on it (for cleaning) hold it; only
//! process context drops those references, so the buffer is freed there.

pub(crate) mod poll;

use crate::cmdq::{query_context, write_context, Cmd, MailboxBuf};
use crate::db::{Db, DbPages, UserDb, UserDbPages};
use crate::device::Ucontext;
use crate::field::Ctx;
use crate::hem::mtr::{KernelMtr, Mtr, Region, UserBuf, UserMtr};
use crate::hem::table::{HemRef, HemTables};
use crate::hem::{HemType, HOP_NUM_0};
use crate::hns_roce_hw_v2::consts::{cap_flag, cqe_size, mbox};
use crate::hns_roce_hw_v2::ctx as hw_ctx;
use crate::hns_roce_hw_v2::fields::Cqc;
use crate::rdma::{new_spinlock_irq, IbCq, ResAttrs, ResRaw, SpinLockIrq, UdataReq, UmemDev};
use crate::uabi;

/// A user CQ request (libhns's `struct hns_roce_ib_create_cq`) as read
/// from the udata, with the result of reading it and the udata lengths.
pub(crate) type CqUreq = UdataReq<uabi::CreateCq>;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{
    device::{Bound, Device},
    prelude::*,
    sync::{Arc, ArcBorrow}, //
};

/// The parameters of a CQ.
pub(crate) struct CqAttr {
    /// Entries asked for.
    pub(crate) cqe: u32,
    /// Completion vector.
    pub(crate) vector: u32,
}

/// What a user CQ adds: the caller and its request.
pub(crate) struct UserCq<'a> {
    /// Pins the caller's memory.
    pub(crate) dev: UmemDev<'a>,
    /// The user context's record pages.
    pub(crate) uctx: ArcBorrow<'a, Ucontext>,
    /// The request as read from the udata.
    pub(crate) req: &'a CqUreq,
}

/// `HNS_ROCE_CQ_FLAG_RECORD_DB` (`enum hns_roce_cq_cap_flags`, uapi).
pub(crate) const CQ_FLAG_RECORD_DB: u64 = 1 << 0;
/// Bytes of `struct hns_roce_ib_create_cq` up to the end of `cqe_size`.
const UCMD_CQE_SIZE_END: u32 = uabi::CreateCq::CQE_SIZE_END;
/// Bytes of `struct hns_roce_ib_create_cq_resp` up to the end of
/// `cap_flags`.
const URESP_CAP_FLAGS_END: u32 = uabi::CreateCqResp::CAP_FLAGS_END;

/// The record doorbell.
enum CqDb {
    Kernel(Db),
    User(UserDb),
}

impl CqDb {
    fn dma(&self) -> u64 {
        match self {
            CqDb::Kernel(d) => d.dma,
            CqDb::User(d) => d.dma,
        }
    }
}

/// A CQ.
#[pin_data]
pub(crate) struct Cq {
    /// CQ number.
    pub(crate) cqn: u32,
    /// Entries (a power of two).
    pub(crate) depth: u32,
    /// Bytes per CQE.
    cqe_size: u32,
    // The context is destroyed (explicitly) before these drop.
    mtr: Mtr,
    db: Option<CqDb>,
    /// Written under `lock`.
    cons_index: AtomicU32,
    arm_sn: AtomicU32,
    /// C's `is_armed`: a teardown ran (or is about to run) the completion
    /// handler for the software completions; set once.
    is_armed: AtomicBool,
    ibcq: IbCq,
    /// C's `hr_cq->lock`: polling, cleaning.
    #[pin]
    lock: SpinLockIrq<()>,
}

/// What creating and destroying a CQ needs from the device.
pub(crate) struct CqEnv<'a> {
    /// Commands.
    pub(crate) cmd: &'a Cmd,
    /// DMA device.
    pub(crate) dev: &'a Device<Bound>,
    /// Context tables.
    pub(crate) hem: &'a HemTables,
    /// Record doorbell pages.
    pub(crate) dbs: &'a DbPages,
    /// Capabilities.
    pub(crate) caps: &'a crate::hns_roce_hw_v2::caps::Caps,
    /// Revision of the engine.
    pub(crate) rev: crate::hw_rev::HwRev,
}

impl Cq {
    /// Checks a CQ request as C does before it takes anything
    /// (`verify_cq_create_attr`, the udata copy, `set_cq_param`,
    /// `set_cqe_size`): returns the depth and the CQE size.
    ///
    /// # Errors
    ///
    /// `EINVAL` (logged) for no or too many entries, a vector past the
    /// CEQs, or a user CQE size other than 32 or 64; the errno of the
    /// request's copy.
    pub(crate) fn check(
        env: &CqEnv<'_>,
        attr: &CqAttr,
        user: Option<&CqUreq>,
    ) -> Result<(u32, u32)> {
        let c = env.caps;
        if attr.cqe == 0 || attr.cqe > c.max_cqes {
            ibdev_err!(
                env.cmd,
                "failed to check CQ count {}, max = {}.\n",
                attr.cqe,
                c.max_cqes
            );
            return Err(EINVAL);
        }
        if attr.vector >= c.num_comp_vectors {
            ibdev_err!(
                env.cmd,
                "failed to check CQ vector = {}, max = {}.\n",
                attr.vector,
                c.num_comp_vectors
            );
            return Err(EINVAL);
        }
        if let Some(r) = user {
            if r.copy_ret != 0 {
                return Err(Error::from_errno(r.copy_ret));
            }
        }
        let depth = attr
            .cqe
            .max(c.min_cqes)
            .checked_next_power_of_two()
            .ok_or(EINVAL)?;
        let size = match user {
            None => c.cqe_sz,
            Some(r) if r.inlen >= UCMD_CQE_SIZE_END => {
                if r.cqe_size != cqe_size::V2_CQE_SIZE && r.cqe_size != cqe_size::V3_CQE_SIZE {
                    ibdev_err!(env.cmd, "invalid cqe size {}.\n", r.cqe_size);
                    return Err(EINVAL);
                }
                r.cqe_size
            }
            Some(_) => cqe_size::V2_CQE_SIZE,
        };
        Ok((depth, size))
    }

    /// Creates a CQ with number `cqn` (allocated by the caller) after
    /// [`Cq::check`] gave `depth` and `cqe_size`: buffer (kernel pages, or
    /// the user's at the request's `buf_addr`), record doorbell (kernel, or
    /// the user's at `db_addr` if the caps have CQ record doorbells and
    /// libhns takes `cap_flags`), CQC table entry, CREATE_CQC. Returns the
    /// CQ and the response's `cap_flags`.
    ///
    /// # Errors
    ///
    /// The errno of the buffer (`ENOMEM` if the user buffer cannot be
    /// pinned), of the record (`EFAULT`...), of the table or the mailbox;
    /// everything taken is given back.
    pub(crate) fn create(
        env: &CqEnv<'_>,
        attr: &CqAttr,
        cqn: u32,
        depth: u32,
        cqe_size: u32,
        ibcq: IbCq,
        user: Option<UserCq<'_>>,
    ) -> Result<(Arc<Self>, u64)> {
        let c = env.caps;
        // CAST: PAGE_SHIFT is 12..16.
        let page_shift = kernel::page::PAGE_SHIFT as u32;
        let hop = if c.cqe_hop_num == HOP_NUM_0 {
            0
        } else {
            c.cqe_hop_num
        };
        // CAST: depth * entry size is at most a few MiB.
        let size = (depth as usize)
            .checked_mul(cqe_size as usize)
            .ok_or(EINVAL)?;
        let mtr = match &user {
            None => KernelMtr::new(
                env.dev,
                size,
                c.cqe_pg.buf + page_shift,
                c.cqe_pg.ba + page_shift,
                c.cqe_hop_num,
            )
            .map(Mtr::Kernel),
            Some(u) => UserMtr::new(
                env.dev,
                UserBuf {
                    pin: u.dev,
                    addr: u.req.buf_addr,
                    device_writes: true,
                },
                &[Region {
                    size,
                    hop: c.cqe_hop_num,
                }],
                c.cqe_pg.buf + page_shift,
                c.cqe_pg.ba + page_shift,
                u64::from(c.page_size_cap),
            )
            .map(Mtr::User),
        }
        .inspect_err(|e| {
            ibdev_err!(env.cmd, "failed to alloc CQ mtr", ret = e.to_errno());
            ibdev_err!(env.cmd, "failed to alloc CQ buf", ret = e.to_errno());
        })?;
        let has_db = c.flags & cap_flag::CQ_RECORD_DB != 0;
        let mut cap_flags = 0;
        let db = match &user {
            // A kernel CQ takes a pair of records (order 1), as C does, so
            // that the word after its consumer index is nobody else's record.
            None if has_db => Some(CqDb::Kernel(env.dbs.alloc(env.dev, 1)?)),
            None => None,
            Some(u) if has_db && u.req.outlen >= URESP_CAP_FLAGS_END => {
                let d = UserDbPages::map(u.uctx, u.dev, u.req.db_addr).inspect_err(|e| {
                    ibdev_err!(env.cmd, "failed to alloc CQ db", ret = e.to_errno())
                })?;
                cap_flags |= CQ_FLAG_RECORD_DB;
                Some(CqDb::User(d))
            }
            Some(_) => None,
        };
        let cq = Arc::pin_init(
            pin_init!(Cq {
                cqn,
                depth,
                cqe_size,
                mtr,
                db,
                cons_index: AtomicU32::new(0),
                arm_sn: AtomicU32::new(1),
                is_armed: AtomicBool::new(false),
                ibcq,
                lock <- new_spinlock_irq!((), "hns_roce_rs cq"),
            }),
            GFP_KERNEL,
        )?;
        let mut mtts = [0u64; 2];
        match &cq.mtr {
            Mtr::Kernel(m) => {
                mtts = [m.page_ba(0), m.page_ba(1)];
            }
            Mtr::User(m) => {
                m.find(0, &mut mtts).inspect_err(|e| {
                    ibdev_err!(env.cmd, "failed to find CQ mtr", ret = e.to_errno())
                })?;
            }
        }
        // `alloc_cqc`: the context's table entry, then CREATE_CQC; on an
        // error the entry goes back as the guard drops.
        let alloc = || -> Result<HemRef<'_>> {
            let cqc = env
                .hem
                .table(HemType::Cqc)?
                .get_ref(env.dev, cqn)
                .inspect_err(|e| {
                    ibdev_err!(
                        env.cmd,
                        "failed to get CQ({:#x}) context, ret = {}.\n",
                        cqn,
                        e.to_errno()
                    )
                })?;
            let ctx = cq.context(c, attr.vector, hop, mtts);
            write_context(env.cmd, env.dev, mbox::CREATE_CQC, cqn, ctx.as_le_words()).inspect_err(
                |e| {
                    ibdev_err_ratelimited!(
                        env.cmd,
                        "failed to send create cmd for CQ({:#x}), ret = {}.\n",
                        cqn,
                        e.to_errno()
                    )
                },
            )?;
            Ok(cqc)
        };
        let cqc = alloc().inspect_err(|e| {
            ibdev_err!(env.cmd, "failed to alloc CQ context", ret = e.to_errno())
        })?;
        // The CQ holds the context reference; `destroy` puts it.
        cqc.keep();
        Ok((cq, cap_flags))
    }

    /// The CQ context (`hns_roce_v2_write_cqc`); `mtts` are the first two
    /// buffer pages.
    fn context(
        &self,
        c: &crate::hns_roce_hw_v2::caps::Caps,
        vector: u32,
        hop: u32,
        mtts: [u64; 2],
    ) -> Ctx<Cqc, 16> {
        let m = &self.mtr;
        let (ba_pg_shift, buf_pg_shift, bt_ba) = (m.ba_pg_shift(), m.page_shift(), m.root_ba());
        hw_ctx::cq_context(&hw_ctx::CqcParams {
            cqn: self.cqn,
            ceqn: vector,
            depth: self.depth,
            cqe_size: self.cqe_size,
            stash: c.flags & cap_flag::STASH != 0,
            hop,
            ba_pg_shift,
            buf_pg_shift,
            bt_ba,
            cur: mtts[0],
            next: mtts[1],
            db: self.db.as_ref().map(|d| d.dma()),
        })
    }

    /// Destroys the CQ (`hns_roce_destroy_cq`); the caller has taken it
    /// out of the CQ table and frees the CQN.
    pub(crate) fn destroy(&self, env: &CqEnv<'_>) {
        if let Err(e) = env.cmd.mbox(0, 0, mbox::DESTROY_CQC, self.cqn) {
            dev_err_ratelimited!(
                env.cmd.state().device(),
                "DESTROY_CQ failed ({}) for CQN {:06x}\n",
                e.to_errno(),
                self.cqn
            );
        }
        if let Ok(t) = env.hem.table(HemType::Cqc) {
            t.put(env.dev, self.cqn);
        }
        // The buffer and the record doorbell go with the last reference.
    }

    /// Changes the CQ's interrupt moderation (`hns_roce_v2_modify_cq`):
    /// a completion event after `count` CQEs or `period` microseconds,
    /// through MODIFY_CQC with a mask that leaves the rest of the context.
    pub(crate) fn modify(&self, env: &CqEnv<'_>, count: u16, period: u16) -> Result {
        let (ctx, mask, capped) = hw_ctx::cq_moderation(count, period, env.rev);
        // C logs this unlimited; userspace can repeat it at will.
        static RS: crate::rdma::RateLimit = crate::rdma::RateLimit::new();
        if capped && RS.allow() {
            hdev_info!(
                env.cmd.state().device(),
                "cq_period({}) reached the upper limit, adjusted to 65.\n",
                period
            );
        }
        let mb = MailboxBuf::new(env.dev)?;
        let mut words = [0u32; 32];
        words[..16].copy_from_slice(ctx.as_le_words());
        words[16..].copy_from_slice(mask.as_le_words());
        mb.write_le_words(&words)?;
        env.cmd
            .mbox(mb.dma(), 0, mbox::MODIFY_CQC, self.cqn)
            .inspect_err(|e| {
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to process cmd when modifying CQ",
                    ret = e.to_errno()
                )
            })
    }

    /// What `rdma res show cq -dd` prints (`hns_roce_fill_res_cq_entry`):
    /// depth, consumer index (a user CQ's stays 0: libhns keeps its own),
    /// CQE size and the arm sequence number, which counts completion
    /// events.
    pub(crate) fn res_attrs(&self, r: &mut ResAttrs) -> Result {
        r.put(c"cq_depth", self.depth)?;
        r.put(c"cons_index", self.cons_index.load(Ordering::Relaxed))?;
        r.put(c"cqe_size", self.cqe_size)?;
        r.put(c"arm_sn", self.arm_sn.load(Ordering::Relaxed))
    }

    /// The CQ context read back (QUERY_CQC) for `rdma res show cq -r`
    /// (`hns_roce_fill_res_cq_entry_raw`).
    #[inline(never)]
    pub(crate) fn res_raw(&self, env: &CqEnv<'_>, r: &mut ResRaw<'_>) -> Result {
        let mut words = [0u32; 16];
        query_context(env.cmd, env.dev, mbox::QUERY_CQC, self.cqn, &mut words).inspect_err(
            |e| {
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to process cmd when querying CQ",
                    ret = e.to_errno()
                )
            },
        )?;
        r.push_words(&words)
    }

    /// Arms the CQ (`hns_roce_v2_req_notify_cq`): the doorbell value.
    pub(crate) fn notify_db(&self, solicited: bool) -> u64 {
        hw_ctx::cq_notify_doorbell(
            self.cqn,
            self.cons_index.load(Ordering::Relaxed),
            self.arm_sn.load(Ordering::Relaxed),
            solicited,
        )
    }
}
