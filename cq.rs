// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Completion queues of kernel users (`hns_roce_create_cq` without udata):
//! CQE buffer, record doorbell, CQ number, CQC; polling, arming, cleaning
//! and the CQ table of the event paths are in `cq/poll.rs`.
//!
//! A CQ lives in an `Arc`: the rdma layer's handle, the CQ table (for the
//! CEQ and AEQ handlers) and the QPs on it (for cleaning) hold it; only
//! process context drops those references, so the DMA buffer is freed
//! there. User CQs (through libhns) come with the user-memory MTR.

pub(crate) mod poll;

use crate::cmdq::{Cmd, MailboxBuf};
use crate::db::{Db, DbPages};
use crate::field::Ctx;
use crate::hem::mtr::KernelMtr;
use crate::hem::table::HemTables;
use crate::hem::{HemType, HOP_NUM_0};
use crate::hns_roce_hw_v2::consts::{cap_flag, mbox};
use crate::hns_roce_hw_v2::ctx as hw_ctx;
use crate::hns_roce_hw_v2::fields::Cqc;
use crate::rdma::IbCq;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    device::{Bound, Device},
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq}, //
};

/// The parameters of a kernel CQ.
pub(crate) struct CqAttr {
    /// Entries asked for.
    pub(crate) cqe: u32,
    /// Completion vector.
    pub(crate) vector: u32,
}

/// A kernel CQ.
#[pin_data]
pub(crate) struct Cq {
    /// CQ number.
    pub(crate) cqn: u32,
    /// Entries (a power of two).
    pub(crate) depth: u32,
    /// Bytes per CQE.
    cqe_size: u32,
    mtr: KernelMtr,
    db: Option<Db>,
    /// Written under `lock`.
    cons_index: AtomicU32,
    arm_sn: AtomicU32,
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
}

impl Cq {
    /// Creates a kernel CQ with number `cqn` (allocated by the caller):
    /// buffer, record doorbell, CQC table entry, CREATE_CQC.
    pub(crate) fn create(
        env: &CqEnv<'_>,
        attr: &CqAttr,
        cqn: u32,
        ibcq: IbCq,
    ) -> Result<Arc<Self>> {
        let c = env.caps;
        if attr.cqe == 0 || attr.cqe > c.max_cqes {
            dev_err!(
                env.cmd.device(),
                "failed to check CQ count {}, max = {}.\n",
                attr.cqe,
                c.max_cqes
            );
            return Err(EINVAL);
        }
        if attr.vector >= c.num_comp_vectors {
            dev_err!(
                env.cmd.device(),
                "failed to check CQ vector = {}, max = {}.\n",
                attr.vector,
                c.num_comp_vectors
            );
            return Err(EINVAL);
        }
        let depth = attr
            .cqe
            .max(c.min_cqes)
            .checked_next_power_of_two()
            .ok_or(EINVAL)?;
        // CAST: PAGE_SHIFT is 12..16.
        let page_shift = kernel::page::PAGE_SHIFT as u32;
        let hop = if c.cqe_hop_num == HOP_NUM_0 {
            0
        } else {
            c.cqe_hop_num
        };
        // CAST: depth * entry size is at most a few MiB.
        let size = (depth as usize)
            .checked_mul(c.cqe_sz as usize)
            .ok_or(EINVAL)?;
        let mtr = KernelMtr::new(
            env.dev,
            size,
            c.cqe_pg.buf + page_shift,
            c.cqe_pg.ba + page_shift,
            hop,
        )
        .inspect_err(|e| {
            dev_err!(
                env.cmd.device(),
                "failed to alloc CQ mtr, ret = {}.\n",
                e.to_errno()
            )
        })?;
        let db = if c.flags & cap_flag::CQ_RECORD_DB != 0 {
            Some(env.dbs.alloc(env.dev, 0)?)
        } else {
            None
        };
        let cq = Arc::pin_init(
            pin_init!(Cq {
                cqn,
                depth,
                cqe_size: c.cqe_sz,
                mtr,
                db,
                cons_index: AtomicU32::new(0),
                arm_sn: AtomicU32::new(1),
                ibcq,
                lock <- new_spinlock_irq!((), "hns_roce_rs cq"),
            }),
            GFP_KERNEL,
        )?;
        let table = env.hem.table(HemType::Cqc)?;
        if let Err(e) = table.get(env.dev, cqn) {
            dev_err!(
                env.cmd.device(),
                "failed to get CQ({:#x}) context, ret = {}.\n",
                cqn,
                e.to_errno()
            );
            dev_err!(
                env.cmd.device(),
                "failed to alloc CQ context, ret = {}.\n",
                e.to_errno()
            );
            return Err(e);
        }
        let ctx = cq.context(c, attr.vector, hop);
        let r = MailboxBuf::new(env.dev).and_then(|mb| {
            mb.write_le_words(ctx.as_le_words());
            env.cmd.mbox(mb.dma(), 0, mbox::CREATE_CQC, cqn)
        });
        if let Err(e) = r {
            dev_err!(
                env.cmd.device(),
                "failed to send create cmd for CQ({:#x}), ret = {}.\n",
                cqn,
                e.to_errno()
            );
            dev_err!(
                env.cmd.device(),
                "failed to alloc CQ context, ret = {}.\n",
                e.to_errno()
            );
            table.put(env.dev, cqn);
            return Err(e);
        }
        Ok(cq)
    }

    /// The CQ context (`hns_roce_v2_write_cqc`).
    fn context(
        &self,
        c: &crate::hns_roce_hw_v2::caps::Caps,
        vector: u32,
        hop: u32,
    ) -> Ctx<Cqc, 16> {
        hw_ctx::cq_context(&hw_ctx::CqcParams {
            cqn: self.cqn,
            ceqn: vector,
            depth: self.depth,
            cqe_size: c.cqe_sz,
            stash: c.flags & cap_flag::STASH != 0,
            hop,
            ba_pg_shift: self.mtr.ba_pg_shift(),
            buf_pg_shift: self.mtr.page_shift(),
            bt_ba: self.mtr.root_ba(),
            cur: self.mtr.page_ba(0),
            next: self.mtr.page_ba(1),
            db: self.db.as_ref().map(|d| d.dma),
        })
    }

    /// Destroys the CQ (`hns_roce_destroy_cq`); the caller has taken it
    /// out of the CQ table and frees the CQN.
    pub(crate) fn destroy(&self, env: &CqEnv<'_>) {
        if let Err(e) = env.cmd.mbox(0, 0, mbox::DESTROY_CQC, self.cqn) {
            dev_err_ratelimited!(
                env.cmd.device(),
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
