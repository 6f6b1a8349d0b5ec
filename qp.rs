// SPDX-License-Identifier: GPL-2.0

//! Queue pairs (`hns_roce_create_qp`, `hns_roce_modify_qp`,
//! `hns_roce_v2_destroy_qp`, `hns_roce_v2_post_recv`, `hns_roce_v2_query_qp`):
//! kernel QPs (WQE buffer of SQ, extended SGE and RQ regions in kernel
//! pages, RQ record doorbell) and user QPs of libhns (the buffer and the
//! records in the process's memory), QPN, the context tables, MODIFY_QPC
//! with context and mask (address vector included), receive WQEs, CQ
//! cleaning at RESET and destroy; `post_send`, the WR-id rings and the QP
//! table are in `qp/post.rs`, the modify (state transitions, the QPC
//! fields of each, the address vector) in `qp/modify.rs`, the drain of a
//! queue in `qp/drain.rs`.
//!
//! As in C, a QP's QPC and SCCC table references are not dropped when it is
//! destroyed (only IRRL and TRRL are): the chunks stay until the function
//! goes, so a destroy sends no context-table mailbox.

pub(crate) mod drain;
mod flow_ctrl;
pub(crate) mod free_mr;
mod modify;
pub(crate) mod post;

use crate::cmdq::{query_context, Cmd, DevState};
use crate::cq::Cq;
use crate::db::{Db, DbPages, UserDb, UserDbPages};
use crate::device::{Ucontext, UCTX_EXSGE};
use crate::dip::{self, DipEntry};
use crate::hem::mtr::{KernelMtr, Mtr, Region, UserBuf, UserMtr};
use crate::hem::table::HemTables;
use crate::hem::HemType;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{cap_flag, mbox, reg, sge};
use crate::hns_roce_hw_v2::qpc::{self as qpc, qpt, QpState, QueueError, QueueRequest, QueueSizes};
use crate::hw_rev::HwRev;
use crate::rdma::{
    self, trace, DbOffset, DscpMap, IbQp, MmapCtx, MmapEntry, QpAttr, QpQuery, RecvWr, ResAttrs,
    ResRaw, SqDoorbells, UdataReq, UmemDev,
};
use crate::uabi::{CreateQp, CreateQpResp, CREATE_QP_MASK_CONGEST_TYPE};
use core::sync::atomic::Ordering;
use kernel::{
    device::{Bound, Device},
    new_mutex,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex},
    types::ScopeGuard, //
};
use post::QpCore;

/// `enum ib_qp_attr_mask` bits the driver reads, under a short name.
pub(crate) use crate::rdma::qp_attr as attr;

/// State changed by `modify_qp` (C's fields under `hr_qp->mutex`).
struct Soft {
    state: QpState,
    /// Access flags and responder depth in effect.
    atomic_rd_en: u32,
    resp_depth: u32,
    /// Service level of the path.
    sl: u32,
    /// TC mapping mode and priority the NIC gave for the path's DSCP.
    tc_mode: u8,
    priority: u8,
    /// The DIP context a DIP QP's address vector took (C's `hr_qp->dip`),
    /// released at destroy.
    dip: Option<u32>,
}

/// `enum hns_roce_qp_cap_flags` (uapi): what a user QP's `cap_flags`
/// tell libhns.
mod qp_cap {
    /// RQ record doorbell.
    pub(super) const RQ_RECORD_DB: u64 = 1 << 0;
    /// SQ record doorbell.
    pub(super) const SQ_RECORD_DB: u64 = 1 << 1;
    /// Owner-bit doorbell mode.
    pub(super) const OWNER_DB: u64 = 1 << 2;
    /// Single WQEs are pushed into the QP's page (`dwqe_mmap_key`).
    pub(super) const DIRECT_WQE: u64 = 1 << 5;
}

/// A QP request as the driver reads it: the layer's, and for a user QP
/// libhns's request (`struct hns_roce_ib_create_qp`) and what the udata's
/// lengths allow. It dereferences to the layer's request.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpInit {
    /// The layer's request; its capacities are updated to what the QP got.
    pub(crate) base: rdma::QpInit,
    /// The request is long enough to carry `sdb_addr`.
    pub(crate) user_sdb: bool,
    /// The answer buffer is long enough for `cap_flags`.
    pub(crate) user_resp: bool,
    /// What validating the request returned (0, or the errno): reported
    /// where C does, after the RQ size check.
    pub(crate) copy_ret: i32,
    /// Log2 of the SQ's basic blocks.
    pub(crate) log_sq_bb_count: u8,
    /// Log2 of the SQ's stride.
    pub(crate) log_sq_stride: u8,
    /// The user buffer.
    pub(crate) buf_addr: u64,
    /// The RQ record doorbell.
    pub(crate) db_addr: u64,
    /// The SQ record doorbell.
    pub(crate) sdb_addr: u64,
    /// The request's comp_mask.
    pub(crate) comp_mask: u64,
    /// The congestion type asked for.
    pub(crate) cong_type_flags: u64,
    /// The answer: `HNS_ROCE_QP_CAP_*`.
    pub(crate) cap_flags: u64,
    /// With `HNS_ROCE_QP_CAP_DIRECT_WQE` in `cap_flags`: the mmap offset
    /// of the QP's direct WQE page.
    pub(crate) dwqe_mmap_key: u64,
}

impl QpInit {
    /// The request `base`, with libhns's request `ureq` of a user QP.
    #[inline(never)]
    pub(crate) fn new(base: rdma::QpInit, ureq: Option<&UdataReq<CreateQp>>) -> Self {
        let Some(u) = ureq else {
            return Self {
                base,
                ..Self::default()
            };
        };
        // CAST: struct offsets, far below `u32::MAX`.
        let user_resp = u.outlen >= CreateQpResp::CAP_FLAGS_END as u32;
        Self {
            base,
            user_resp,
            // CAST: as above.
            user_sdb: user_resp && u.inlen >= CreateQp::SDB_END as u32,
            copy_ret: u.copy_ret,
            log_sq_bb_count: u.log_sq_bb_count,
            log_sq_stride: u.log_sq_stride,
            buf_addr: u.buf_addr,
            db_addr: u.db_addr,
            sdb_addr: u.sdb_addr,
            comp_mask: u.comp_mask,
            cong_type_flags: u.cong_type_flags,
            ..Self::default()
        }
    }
}

impl core::ops::Deref for QpInit {
    type Target = rdma::QpInit;

    fn deref(&self) -> &rdma::QpInit {
        &self.base
    }
}

impl core::ops::DerefMut for QpInit {
    fn deref_mut(&mut self) -> &mut rdma::QpInit {
        &mut self.base
    }
}

/// What a user QP is created with besides its request: the caller's
/// device (to pin its memory) and its context's record pages.
pub(crate) struct UserQp<'a> {
    /// Pins the caller's memory.
    pub(crate) dev: UmemDev<'a>,
    /// The user context's record pages.
    pub(crate) uctx: ArcBorrow<'a, Ucontext>,
    /// Offers the direct WQE page to the process.
    pub(crate) mmap: Option<MmapCtx<'a>>,
}

/// The RQ record doorbell: a kernel record, or one in the process.
enum RqDb {
    Kernel(Db),
    User(UserDb),
}

impl RqDb {
    fn dma(&self) -> u64 {
        match self {
            Self::Kernel(d) => d.dma,
            Self::User(d) => d.dma,
        }
    }
}

/// A QP.
#[pin_data]
pub(crate) struct Qp {
    /// QP number.
    pub(crate) qpn: u32,
    qp_type: u32,
    pdn: u32,
    send_cqn: u32,
    recv_cqn: u32,
    srqn: Option<u32>,
    xrcdn: Option<u32>,
    sq_sig_type: u32,
    /// A user QP (libhns owns the queues).
    user: bool,
    /// Congestion control algorithm.
    cong_type: qpc::CongType,
    sizes: QueueSizes,
    sge_offset: usize,
    rq_offset: usize,
    owner_db: bool,
    /// A single WQE is pushed whole into the QP's doorbell page.
    pub(crate) dwqe: bool,
    /// A user QP's direct WQE page, offered to the process.
    _dwqe_page: Option<MmapEntry>,
    mtr: Mtr,
    rdb: Option<RqDb>,
    /// A user QP's SQ record doorbell.
    sdb: Option<UserDb>,
    /// WR ids, heads, tails and the state the data path and the event
    /// handlers share.
    pub(crate) core: Arc<QpCore>,
    /// The CQs, for cleaning (their last references go in process context).
    send_cq: Option<Arc<Cq>>,
    recv_cq: Option<Arc<Cq>>,
    #[pin]
    soft: Mutex<Soft>,
}

/// What creating, modifying and destroying QPs needs from the device.
pub(crate) struct QpEnv<'a> {
    /// Commands.
    pub(crate) cmd: &'a Cmd,
    /// DMA device.
    pub(crate) dev: &'a Device<Bound>,
    /// Context tables.
    pub(crate) hem: &'a HemTables,
    /// Record doorbell pages.
    pub(crate) dbs: &'a DbPages,
    /// Capabilities.
    pub(crate) caps: &'a Caps,
    /// Revision of the engine.
    pub(crate) rev: HwRev,
    /// First congestion control template of the function.
    pub(crate) cong_tmpl_id: u32,
    /// The NIC's DSCP-to-priority map.
    pub(crate) dscp: &'a DscpMap,
    /// QP number banks.
    pub(crate) qpns: &'a Mutex<crate::bitmap::QpBanks<KVec<u64>>>,
    /// The QP table and the flush work queue.
    pub(crate) objs: &'a crate::eq::Objects,
    /// HIP09 kernel SQ doorbells (`mem_base`); `None`: the shared register.
    pub(crate) sq_db: Option<&'a SqDoorbells>,
    /// Bus address of QP 0's direct WQE page (BAR 4), with the engine's
    /// direct WQE.
    pub(crate) dwqe_page: u64,
    /// One QP flow control init at a time (C's `scc_mutex`).
    pub(crate) scc: &'a Mutex<()>,
    /// The DIP congestion contexts.
    pub(crate) dips: &'a DipTable,
}

/// The DIP congestion contexts of the device (C's `qp_table.dip_xa`, see
/// `dip.rs`): entries sorted by index, under a lock of their own (taken
/// only by QP modify, destroy and `rdma res`, all in process context; no
/// other lock is taken under it). The entries go with the device.
pub(crate) type DipTable = Mutex<KVec<DipEntry>>;

/// Takes a reference on the DIP context of `dgid` for the QP `qpn`
/// (`alloc_dip_entry` and `get_dip_ctx_idx`): adds the QP's own unused
/// entry first if the table has none yet, then shares or claims one.
fn dip_get(table: &DipTable, qpn: u32, dgid: &[u8; dip::GID_LEN]) -> Result<u32> {
    let mut t = table.lock();
    if let Err(pos) = dip::slot(&t, qpn) {
        t.push(DipEntry::unused(qpn), GFP_KERNEL)?;
        t[pos..].rotate_right(1);
    }
    // With the QP's own entry in the table one entry is always unused
    // (every in-use entry has a live QP, each QP has its own entry).
    dip::get(&mut t, dgid).ok_or(ENOSPC)
}

/// Drops a QP's reference on the DIP context `idx` (`put_dip_ctx_idx`).
fn dip_put(table: &DipTable, idx: u32) {
    dip::put(&mut table.lock(), idx);
}

impl<'a> QpEnv<'a> {
    /// The part of it that posting work needs.
    pub(crate) fn post(&self) -> PostEnv<'a> {
        PostEnv {
            cmd: self.cmd,
            objs: self.objs,
            sq_db: self.sq_db,
            rev: self.rev,
        }
    }
}

/// What `post_send` and `post_recv` need of the device: four fields, built
/// at each call without a call of its own (`QpEnv` has thirteen; building
/// it took 44 instructions of a 564-instruction `post_send`, counted by
/// `make call-count`).
pub(crate) struct PostEnv<'a> {
    /// Commands.
    pub(crate) cmd: &'a Cmd,
    /// The QP table and the flush work queue.
    pub(crate) objs: &'a crate::eq::Objects,
    /// HIP09 kernel SQ doorbells (`mem_base`); `None`: the shared register.
    pub(crate) sq_db: Option<&'a SqDoorbells>,
    /// Revision of the engine.
    pub(crate) rev: HwRev,
}

/// `to_hr_qp_type`.
fn serv_type(qp_type: u32) -> u32 {
    match qp_type {
        qpt::UD | qpt::GSI => qpc::serv::UD,
        qpt::XRC_INI | qpt::XRC_TGT => qpc::serv::XRC,
        _ => qpc::serv::RC,
    }
}

/// `ib_mtu_enum_to_int`.
fn mtu_bytes(mtu: u32) -> u32 {
    match mtu {
        1..=5 => 128 << mtu,
        _ => 0,
    }
}

impl QpEnv<'_> {
    /// `check_qp_type`.
    fn check_type(&self, ty: u32, user: bool) -> Result {
        let hip08_user_ud = ty == qpt::UD && user && self.rev.is_hip08();
        if !qpc::qp_type_supported(ty, self.caps.flags) || hip08_user_ud {
            ibdev_err!(self.cmd.state(), "not support QP type {}\n", ty);
            return Err(EOPNOTSUPP);
        }
        Ok(())
    }

    /// The QP's sizes (`set_qp_param`), with C's messages.
    fn sizes(&self, init: &QpInit) -> Result<QueueSizes> {
        let c = self.caps;
        let user = init.user;
        let has_rq = !matches!(init.qp_type, qpt::XRC_INI | qpt::XRC_TGT)
            && !init.has_srq
            && init.max_recv_wr != 0;
        let req = QueueRequest {
            max_send_wr: init.max_send_wr,
            max_recv_wr: init.max_recv_wr,
            max_send_sge: init.max_send_sge,
            max_recv_sge: init.max_recv_sge,
            max_inline_data: init.max_inline_data,
            has_rq,
            ud: matches!(init.qp_type, qpt::UD | qpt::GSI),
            // Kernel QPs on HIP09 always use extended SGEs.
            exsge: if user {
                init.uctx_config & UCTX_EXSGE != 0
            } else {
                self.rev.is_hip09()
            },
            user_sq: user.then_some((init.log_sq_bb_count, init.log_sq_stride)),
            hip08: self.rev.is_hip08(),
            max_wqes: c.max_wqes,
            min_wqes: c.min_wqes,
            max_sq_sg: c.max_sq_sg,
            max_rq_sg: c.max_rq_sg,
            max_sq_inline: c.max_sq_inline,
            max_sq_desc_sz: c.max_sq_desc_sz,
            max_rq_desc_sz: c.max_rq_desc_sz,
        };
        let sizes = qpc::queue_sizes(&req);
        // C validates the user's request between its RQ and SQ checks.
        if init.copy_ret != 0 && !matches!(sizes, Err(QueueError::RqConfig | QueueError::RqDepth)) {
            let e = Error::from_errno(init.copy_ret);
            ibdev_err!(
                self.cmd.state(),
                "failed to set QP param",
                ret = e.to_errno()
            );
            return Err(e);
        }
        sizes.map_err(|e| {
            match e {
                QueueError::RqConfig => ibdev_err!(
                    &self.cmd,
                    "RQ config error, depth = {}, sge = {}\n",
                    init.max_recv_wr,
                    init.max_recv_sge
                ),
                QueueError::RqDepth => {
                    ibdev_err!(
                        self.cmd.state(),
                        "rq depth {} too large\n",
                        init.max_recv_wr
                    )
                }
                QueueError::SqConfig => {
                    ibdev_err!(self.cmd.state(), "failed to check SQ WR or SGE num.\n")
                }
                QueueError::SqDepth => ibdev_err!(
                    &self.cmd,
                    "failed to check WQE num, WQE num = {}.\n",
                    init.max_send_wr
                ),
                QueueError::UserSqCount => {}
                QueueError::UserSqStride => {
                    ibdev_err!(self.cmd.state(), "failed to check SQ stride size.\n")
                }
                QueueError::UserSqSge => {
                    ibdev_err!(
                        &self.cmd,
                        "failed to check SQ SGE size {}.\n",
                        init.max_send_sge
                    )
                }
            }
            let r = EINVAL.to_errno();
            match e {
                QueueError::RqConfig | QueueError::RqDepth => {
                    ibdev_err!(self.cmd.state(), "failed to set user RQ size", ret = r)
                }
                QueueError::SqConfig | QueueError::SqDepth => {
                    ibdev_err!(self.cmd.state(), "failed to set kernel SQ size", ret = r)
                }
                QueueError::UserSqStride | QueueError::UserSqSge => {
                    ibdev_err!(self.cmd.state(), "failed to check user SQ size", ret = r);
                    ibdev_err!(self.cmd.state(), "failed to set user SQ size", ret = r)
                }
                QueueError::UserSqCount => {
                    ibdev_err!(self.cmd.state(), "failed to set user SQ size", ret = r)
                }
            }
            ibdev_err!(self.cmd.state(), "failed to set QP param", ret = r);
            EINVAL
        })
    }

    /// `alloc_qpc`: QPC, IRRL, TRRL and SCCC references for `qpn`; on an
    /// error the ones already taken go back (in reverse, as guards drop).
    fn get_contexts(&self, qpn: u32) -> Result {
        let d = self.cmd.state().device();
        let qpc = self
            .hem
            .table(HemType::Qpc)?
            .get_ref(self.dev, qpn)
            .inspect_err(|_| hdev_err!(d, "failed to get QPC table\n"))?;
        let irrl = self
            .hem
            .table(HemType::Irrl)?
            .get_ref(self.dev, qpn)
            .inspect_err(|_| hdev_err!(d, "failed to get IRRL table\n"))?;
        let trrl = if self.caps.trrl_entry_sz != 0 {
            Some(
                self.hem
                    .table(HemType::Trrl)?
                    .get_ref(self.dev, qpn)
                    .inspect_err(|_| hdev_err!(d, "failed to get TRRL table\n"))?,
            )
        } else {
            None
        };
        let sccc = if self.caps.flags & cap_flag::QP_FLOW_CTRL != 0 {
            Some(
                self.hem
                    .table(HemType::Sccc)
                    .and_then(|t| t.get_ref(self.dev, qpn))
                    .inspect_err(|_| hdev_err!(d, "failed to get SCC CTX table\n"))?,
            )
        } else {
            None
        };
        // The QP holds them now: `put_contexts` gives back IRRL and TRRL.
        for r in [sccc, trrl].into_iter().flatten() {
            r.keep();
        }
        irrl.keep();
        qpc.keep();
        Ok(())
    }

    /// `free_qpc`: only the IRRL and TRRL references go (see the file doc).
    fn put_contexts(&self, qpn: u32) {
        if self.caps.trrl_entry_sz != 0 {
            if let Ok(t) = self.hem.table(HemType::Trrl) {
                t.put(self.dev, qpn);
            }
        }
        if let Ok(t) = self.hem.table(HemType::Irrl) {
            t.put(self.dev, qpn);
        }
    }

    /// Gives `qpn` back. A number that is not taken is refused by the
    /// allocator, which has nothing else to undo: the QP being torn down
    /// or not created owns no other state keyed by it here.
    fn free_qpn(&self, qpn: u32, gsi: bool) {
        if self.qpns.lock().free(qpn, gsi).is_err() {
            ibdev_warn!(self.cmd, "QPN {:#x} was not allocated\n", qpn);
        }
    }
}

impl Qp {
    /// Creates a QP (`hns_roce_create_qp_common`): a kernel QP, or with
    /// `user` one of libhns.
    pub(crate) fn create(
        env: &QpEnv<'_>,
        init: &mut QpInit,
        send_cq: Option<Arc<Cq>>,
        recv_cq: Option<Arc<Cq>>,
        ibqp: IbQp,
        user: Option<UserQp<'_>>,
    ) -> Result<Pin<KBox<Self>>> {
        let r = Self::try_create(env, init, send_cq, recv_cq, ibqp, user);
        if let Err(e) = &r {
            ibdev_err!(
                env.cmd,
                "create QP type {} failed({})\n",
                init.qp_type,
                e.to_errno()
            );
        }
        r
    }

    fn try_create(
        env: &QpEnv<'_>,
        init: &mut QpInit,
        send_cq: Option<Arc<Cq>>,
        recv_cq: Option<Arc<Cq>>,
        ibqp: IbQp,
        user: Option<UserQp<'_>>,
    ) -> Result<Pin<KBox<Self>>> {
        env.check_type(init.qp_type, init.user)?;
        let c = env.caps;
        // An XRC target comes here as a kernel QP (the core creates it
        // without udata, for the domain): as in C it gets a kernel SQ of the
        // size user space asked for.
        if init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        // A kernel QP on an SRQ takes its receive WR ids from the SRQ's. An
        // XRC target's SRQ is an XRC SRQ of the domain's user (C takes it
        // too): its completions are never polled here, so no kernel SRQ.
        let srq = if init.has_srq && !init.user && init.qp_type != qpt::XRC_TGT {
            Some(env.objs.srqs.core(init.srqn).ok_or(EINVAL)?)
        } else {
            None
        };
        if init.user != user.is_some() {
            return Err(EINVAL);
        }
        let s = env.sizes(init)?;
        let cong_type = if init.user && init.comp_mask & CREATE_QP_MASK_CONGEST_TYPE != 0 {
            qpc::CongType::from_user(init.cong_type_flags, init.qp_type, c.cong_cap).map_err(
                |e| {
                    let e = match e {
                        qpc::CongError::Invalid => EINVAL,
                        qpc::CongError::NotSupported => EOPNOTSUPP,
                    };
                    ibdev_err!(&env.cmd, "failed to set QP param", ret = e.to_errno());
                    e
                },
            )?
        } else {
            qpc::CongType::default_for(init.qp_type, c.default_cong_type)
        };
        let gsi = init.qp_type == qpt::GSI;
        let has_sq = init.qp_type != qpt::XRC_TGT && init.max_send_wr != 0;
        let has_rq = !matches!(init.qp_type, qpt::XRC_INI | qpt::XRC_TGT)
            && !init.has_srq
            && init.max_recv_wr != 0;
        // The QP's own memory first: nothing taken below has to be given
        // back because of it.
        let slot = KBox::<Qp>::new_uninit(GFP_KERNEL)?;

        // The WQE buffer: SQ, extended SGEs, RQ, each a region when not
        // empty.
        let sq_size = qpc::entries_size(s.sq_wqe_cnt, s.sq_wqe_shift);
        let sge_size = qpc::entries_size(s.sge_cnt, sge::SGE_SHIFT);
        let rq_size = qpc::entries_size(s.rq_wqe_cnt, s.rq_wqe_shift);
        let mut all = [Region { size: 0, hop: 0 }; 3];
        let mut n = 0;
        for (size, hop) in [
            (sq_size, c.wqe_sq_hop_num),
            (sge_size, c.wqe_sge_hop_num),
            (rq_size, c.wqe_rq_hop_num),
        ] {
            if size > 0 {
                if let Some(r) = all.get_mut(n) {
                    *r = Region { size, hop };
                    n += 1;
                }
            }
        }
        let regions = all.get(..n).unwrap_or(&[]);
        // CAST: PAGE_SHIFT is 12..16.
        let page_shift = kernel::page::PAGE_SHIFT as u32;
        let mtr = match &user {
            None => KernelMtr::with_regions(
                env.dev,
                regions,
                12,
                page_shift,
                u64::from(c.page_size_cap),
            )
            .map(Mtr::Kernel),
            Some(u) => UserMtr::new(
                env.dev,
                UserBuf {
                    pin: u.dev,
                    addr: init.buf_addr,
                    device_writes: false,
                },
                regions,
                12,
                page_shift,
                u64::from(c.page_size_cap),
            )
            .map(Mtr::User),
        }
        .inspect_err(|e| {
            ibdev_err!(&env.cmd, "failed to create WQE mtr", ret = e.to_errno());
            ibdev_err!(&env.cmd, "failed to alloc QP buffer", ret = e.to_errno());
        })?;

        // The QPN goes back when creation fails from here on; the QP owns
        // it once `dismiss`ed below (its destroy gives it back).
        let qpn = ScopeGuard::new_with_data(
            if gsi {
                crate::bitmap::GSI_QPN
            } else {
                let req = crate::bitmap::QpnRequest {
                    gsi: false,
                    send_cqn: send_cq.as_ref().map(|c| c.cqn),
                    ext_sge: init.max_send_sge > 2 || init.qp_type == qpt::UD,
                };
                env.qpns.lock().alloc(req).map_err(|_| {
                    ibdev_err!(&env.cmd, "failed to alloc QPN", ret = ENOSPC.to_errno());
                    ENOSPC
                })?
            },
            |n| env.free_qpn(n, gsi),
        );

        let record_db = c.flags & cap_flag::QP_RECORD_DB != 0;
        let owner_db = c.flags & cap_flag::SDI_MODE != 0;
        // Every QP takes direct WQE when the engine has it, as C does.
        let dwqe = c.flags & cap_flag::DIRECT_WQE != 0;
        let mut cap_flags = if dwqe { qp_cap::DIRECT_WQE } else { 0 };
        if owner_db {
            cap_flags |= qp_cap::OWNER_DB;
        }
        let dbs = match &user {
            None => Self::kernel_db(env, record_db && has_rq).map(|r| (r, None, None)),
            Some(u) => Self::dwqe_page(env, u, *qpn, dwqe).and_then(|page| {
                // On failure `page` drops here, withdrawing the page.
                Self::user_dbs(env, init, u, record_db, has_sq, has_rq, &mut cap_flags)
                    .map(|(r, s)| (r, s, page))
            }),
        };
        let (rdb, sdb, dwqe_entry) = match dbs {
            Ok(x) => x,
            Err(e) => {
                ibdev_err!(&env.cmd, "failed to alloc QP doorbell", ret = e.to_errno());
                return Err(e);
            }
        };

        // IB_SIGNAL_REQ_WR is 1. Work request ids are kept for kernel QPs
        // only.
        let (sq_cnt, rq_cnt) = if init.user {
            (0, 0)
        } else {
            (s.sq_wqe_cnt, s.rq_wqe_cnt)
        };
        let cqns = (
            send_cq.as_ref().map(|c| c.cqn),
            recv_cq.as_ref().map(|c| c.cqn),
        );
        let sig = init.sq_sig_type == 1;
        let core = QpCore::new(*qpn, ibqp, sig, (sq_cnt, rq_cnt), srq, cqns)?;
        env.get_contexts(*qpn).inspect_err(|e| {
            ibdev_err!(&env.cmd, "failed to alloc QP context", ret = e.to_errno())
        })?;
        // Nothing below fails: the QP owns the number from here.
        let qpn = qpn.dismiss();

        // A kernel QP's send depth is what it got; a user QP's stays what
        // was asked (libhns sized its queue itself).
        if !init.user {
            init.max_send_wr = s.sq_wqe_cnt;
        }
        init.cap_flags = cap_flags;
        init.dwqe_mmap_key = dwqe_entry.as_ref().map_or(0, MmapEntry::key);
        init.max_recv_wr = s.rq_wqe_cnt;
        init.max_recv_sge = s.rq_usable_sge();
        init.max_inline_data = s.max_inline_data;
        let qp_init = pin_init!(Qp {
            qpn,
            qp_type: init.qp_type,
            pdn: init.pdn,
            send_cqn: send_cq.as_ref().map_or(0, |c| c.cqn),
            recv_cqn: recv_cq.as_ref().map_or(0, |c| c.cqn),
            srqn: init.has_srq.then_some(init.srqn),
            xrcdn: (init.qp_type == qpt::XRC_TGT && init.has_xrcd).then_some(init.xrcdn),
            sq_sig_type: init.sq_sig_type,
            user: init.user,
            cong_type,
            sizes: s,
            sge_offset: sq_size,
            rq_offset: sq_size + sge_size,
            owner_db,
            dwqe,
            _dwqe_page: dwqe_entry,
            mtr,
            rdb,
            sdb,
            core,
            send_cq,
            recv_cq,
            soft <- new_mutex!(Soft {
                state: QpState::Reset,
                atomic_rd_en: 0,
                resp_depth: 0,
                sl: 0,
                tc_mode: 0,
                priority: 0,
                dip: None,
            }),
        });
        match slot.write_pin_init(qp_init) {
            Ok(q) => Ok(q),
            Err(never) => match never {},
        }
    }

    /// `alloc_kernel_qp_db`: an RQ record when the QP has an RQ and the
    /// engine record doorbells.
    fn kernel_db(env: &QpEnv<'_>, want: bool) -> Result<Option<RqDb>> {
        if !want {
            return Ok(None);
        }
        match env.dbs.alloc(env.dev, 0) {
            Ok(db) => Ok(Some(RqDb::Kernel(db))),
            Err(e) => {
                ibdev_err!(
                    env.cmd,
                    "failed to alloc kernel RQ doorbell",
                    ret = e.to_errno()
                );
                Err(e)
            }
        }
    }

    /// `qp_mmap_entry`: a user QP's direct WQE page (64 KiB of BAR 4 per
    /// QPN), offered to the process when the engine has direct WQE.
    fn dwqe_page(
        env: &QpEnv<'_>,
        u: &UserQp<'_>,
        qpn: u32,
        dwqe: bool,
    ) -> Result<Option<MmapEntry>> {
        if !dwqe {
            return Ok(None);
        }
        let size = crate::hns_roce_hw_v2::consts::sge::DWQE_SIZE;
        let addr = u64::from(qpn)
            .checked_mul(u64::from(size))
            .and_then(|off| env.dwqe_page.checked_add(off));
        let page = match (u.mmap, addr) {
            // CAST: 64 KiB.
            (Some(m), Some(a)) => m.insert_io(a, size as usize).ok(),
            _ => None,
        };
        match page {
            Some(p) => Ok(Some(p)),
            None => {
                ibdev_err!(&env.cmd, "failed to get dwqe mmap entry.\n");
                Err(ENOMEM)
            }
        }
    }

    /// `alloc_user_qp_db`: the SQ and RQ records in the process's memory,
    /// when the engine has record doorbells and libhns takes `cap_flags`
    /// (and, for the SQ, sent `sdb_addr`).
    fn user_dbs(
        env: &QpEnv<'_>,
        init: &QpInit,
        u: &UserQp<'_>,
        record_db: bool,
        has_sq: bool,
        has_rq: bool,
        cap_flags: &mut u64,
    ) -> Result<(Option<RqDb>, Option<UserDb>)> {
        let sdb = if record_db && init.user_sdb && has_sq {
            let db = UserDbPages::map(u.uctx, u.dev, init.sdb_addr).inspect_err(|e| {
                ibdev_err!(
                    &env.cmd,
                    "failed to map user SQ doorbell",
                    ret = e.to_errno()
                )
            })?;
            *cap_flags |= qp_cap::SQ_RECORD_DB;
            Some(db)
        } else {
            None
        };
        let rdb = if record_db && init.user_resp && has_rq {
            // On failure `sdb` drops here, unmapping the SQ record.
            let db = UserDbPages::map(u.uctx, u.dev, init.db_addr).inspect_err(|e| {
                ibdev_err!(
                    &env.cmd,
                    "failed to map user RQ doorbell",
                    ret = e.to_errno()
                )
            })?;
            *cap_flags |= qp_cap::RQ_RECORD_DB;
            Some(RqDb::User(db))
        } else {
            None
        };
        Ok((rdb, sdb))
    }

    /// Takes this QP's CQEs out of its send and receive CQs; the SRQ WQEs
    /// of receive CQEs taken out are free again.
    #[inline(never)]
    fn clean_cqs(&self, st: &DevState) {
        let srq = self.core.srq();
        if let Some(c) = &self.send_cq {
            c.clean(st, self.qpn, srq);
        }
        if let Some(c) = &self.recv_cq {
            if self.send_cq.as_ref().map(|s| s.cqn) != Some(c.cqn) {
                c.clean(st, self.qpn, srq);
            }
        }
    }

    /// `hns_roce_v2_post_recv`: writes the WQEs and publishes the new head.
    /// On failure, the index of the first WR not posted and the error.
    /// Inlined into the RDMA core's entry point, its one caller.
    #[inline(always)]
    pub(crate) fn post_recv<'w>(
        &self,
        env: &PostEnv<'_>,
        wrs: impl Iterator<Item = RecvWr<'w>>,
    ) -> core::result::Result<(), (usize, Error)> {
        if env.cmd.state().is_reset_down() {
            return Err((0, EIO));
        }
        if self.soft_state() == QpState::Reset || self.user {
            return Err((0, EINVAL));
        }
        // An XRC target has no receive queue and no receive CQ (where C
        // oopses on the CQ's lock); other QPs without a receive queue (an
        // SRQ, an XRC initiator, no receive WRs) answer C's ENOMEM from the
        // empty ring below.
        if self.qp_type == qpt::XRC_TGT {
            return Err((0, EOPNOTSUPP));
        }
        let max_sge = self.sizes.rq_usable_sge() as usize;
        let rsv = self.sizes.rq_rsv_sge != 0;
        let cnt = self.sizes.rq_wqe_cnt;
        let mut rq = self.core.rq.lock();
        let mut nreq = 0u32;
        let mut res = Ok(());
        let traced = trace::enabled(trace::Costly::RqWqe);
        for wr in wrs {
            if rq.overflow(&self.core.rq_ring, nreq) {
                res = Err((nreq as usize, ENOMEM));
                break;
            }
            if wr.sges.len() > max_sge {
                ibdev_err!(
                    env.cmd,
                    "num_sge = {} >= max_sge = {}.\n",
                    wr.sges.len(),
                    max_sge
                );
                res = Err((nreq as usize, EINVAL));
                break;
            }
            let idx = rq.head.wrapping_add(nreq) & (cnt - 1);
            // Wrapping: the buffer's page lookup checks the offsets.
            let at = self
                .rq_offset
                .wrapping_add((idx as usize).wrapping_shl(self.sizes.rq_wqe_shift));
            let given = wr.sges.iter().map(|g| qpc::DataSeg {
                len: g.length(),
                lkey: g.lkey(),
                addr: g.addr(),
            });
            let mut wrote = Ok(());
            for (i, s) in qpc::rq_wqe_segs(given, max_sge, rsv).enumerate() {
                // CAST: a 16-byte segment size widens losslessly.
                let seg = i.wrapping_mul(sge::SGE_SIZE as usize);
                wrote = self.mtr.write_words(at.wrapping_add(seg), &s.words());
                if wrote.is_err() {
                    break;
                }
            }
            if let Err(e) = wrote {
                res = Err((nreq as usize, e));
                break;
            }
            if traced {
                let bytes = 1u32.wrapping_shl(self.sizes.rq_wqe_shift);
                self.mtr
                    .trace_wqe(trace::Queue::Rq, self.qpn, idx, at, bytes, wr.wr_id);
            }
            self.core.rq_ring.set_wrid(idx, wr.wr_id);
            nreq += 1;
        }
        if nreq > 0 {
            // The WQEs reach memory before the engine learns of them.
            kernel::sync::barrier::dma_mb(kernel::sync::barrier::Write);
            rq.head = rq.head.wrapping_add(nreq);
            if self.soft_state() == QpState::Err {
                // `update_rq_db`: a QP in ERR flushes instead.
                self.core.flush(&env.objs.wq);
                return res;
            }
            match &self.rdb {
                Some(RqDb::Kernel(db)) => db.set(rq.head & 0xffff),
                // post_recv is never called on a user QP (checked above).
                Some(RqDb::User(_)) => {}
                None => env.cmd.state().ring_db(
                    qpc::rq_doorbell(self.qpn, rq.head),
                    DbOffset::new::<{ reg::DB_SQ_L_0 }>(),
                ),
            }
        }
        res
    }

    fn soft_state(&self) -> QpState {
        QpState::from_ib(self.core.state.load(Ordering::Relaxed)).unwrap_or(QpState::Reset)
    }

    /// `hns_roce_v2_query_qp`: the state and attributes read back from the
    /// engine (QUERY_QPC) unless the QP is in RESET; the engine's state
    /// becomes the QP's.
    pub(crate) fn query(&self, env: &QpEnv<'_>, q: &mut QpQuery) -> Result {
        let mut soft = self.soft.lock();
        let s = &self.sizes;
        q.max_recv_wr = s.rq_wqe_cnt;
        q.max_recv_sge = s.rq_usable_sge();
        q.max_inline_data = s.max_inline_data;
        q.max_send_wr = s.sq_wqe_cnt;
        q.max_send_sge = s.sq_max_gs;
        q.sq_sig_type = self.sq_sig_type;
        if soft.state == QpState::Reset {
            q.state = QpState::Reset as u32;
            return Ok(());
        }
        let mut words = [0u32; qpc::QPC_HALF_DWORDS];
        let r = query_context(env.cmd, env.dev, mbox::QUERY_QPC, self.qpn, &mut words);
        if let Err(e) = r {
            ibdev_err_ratelimited!(&env.cmd, "failed to query QPC", ret = e.to_errno());
            return Err(EINVAL);
        }
        let ctx = crate::field::Ctx::from_le_words(words);
        let a = qpc::query_attrs(&ctx, self.qp_type, env.rev);
        let st = QpState::from_ib(a.state).ok_or_else(|| {
            ibdev_err_ratelimited!(&env.cmd, "Illegal ib_qp_state\n");
            EINVAL
        })?;
        soft.state = st;
        self.core.state.store(a.state, Ordering::Relaxed);
        q.queried = true;
        q.state = a.state;
        q.path_mtu = a.path_mtu;
        q.qkey = a.qkey;
        q.rq_psn = a.rq_psn;
        q.sq_psn = a.sq_psn;
        q.dest_qp_num = a.dest_qp_num;
        q.access = a.access;
        q.grh = a.grh;
        // CAST: fields of at most 8 bits.
        q.sl = a.sl as u8;
        q.sgid_index = a.sgid_index as u8;
        q.hop_limit = a.hop_limit as u8;
        q.traffic_class = a.traffic_class as u8;
        q.flow_label = a.flow_label;
        q.dgid = a.dgid;
        q.max_rd_atomic = a.max_rd_atomic;
        q.max_dest_rd_atomic = a.max_dest_rd_atomic;
        // CAST: fields of at most 5 bits.
        q.min_rnr_timer = a.min_rnr_timer as u8;
        q.timeout = a.timeout as u8;
        q.retry_cnt = a.retry_cnt as u8;
        q.rnr_retry = a.rnr_retry as u8;
        Ok(())
    }

    /// What `rdma res show qp -dd` prints (`hns_roce_fill_res_qp_entry`):
    /// the queue sizes, in hex.
    pub(crate) fn res_attrs(&self, r: &mut ResAttrs) -> Result {
        let s = &self.sizes;
        r.put_hex(c"sq_wqe_cnt", s.sq_wqe_cnt)?;
        r.put_hex(c"sq_max_gs", s.sq_max_gs)?;
        r.put_hex(c"rq_wqe_cnt", s.rq_wqe_cnt)?;
        r.put_hex(c"rq_max_gs", s.rq_max_gs)?;
        r.put_hex(c"ext_sge_sge_cnt", s.sge_cnt)
    }

    /// The QP context and its congestion control context read back for
    /// `rdma res show qp -r` (`hns_roce_fill_res_qp_entry_raw`): QUERY_QPC
    /// (`qpc_sz` bytes of a 512-byte image), then QUERY_SCCC if the engine
    /// has per-QP flow control. A DIP QP's SCC context is its DIP
    /// context's (the index is a QPN); one without a DIP context yet (no
    /// address vector) reads as zero, as in C; so does one whose query
    /// fails (only warned about, as in C).
    pub(crate) fn res_raw(&self, env: &QpEnv<'_>, r: &mut ResRaw<'_>) -> Result {
        const QPC_WORDS: usize = 2 * qpc::QPC_HALF_DWORDS;
        const SCCC_WORDS: usize = 16;
        let mut qpc = [0u32; QPC_WORDS];
        // CAST: `qpc_sz` is 256 or 512.
        let n = (env.caps.qpc_sz as usize / 4).min(QPC_WORDS);
        query_context(env.cmd, env.dev, mbox::QUERY_QPC, self.qpn, &mut qpc[..n])?;
        r.push_words(&qpc)?;
        let mut sccc = [0u32; SCCC_WORDS];
        let sccn = if self.cong_type == qpc::CongType::Dip {
            self.soft.lock().dip
        } else {
            Some(self.qpn)
        };
        if let (true, Some(sccn)) = (env.caps.flags & cap_flag::QP_FLOW_CTRL != 0, sccn) {
            if let Err(e) = query_context(env.cmd, env.dev, mbox::QUERY_SCCC, sccn, &mut sccc) {
                sccc = [0; SCCC_WORDS];
                ibdev_warn_ratelimited!(env.cmd, "failed to query SCCC", ret = e.to_errno());
            }
        }
        r.push_words(&sccc)
    }

    /// Destroys the QP (`hns_roce_v2_destroy_qp`): back to RESET when the
    /// type allows it, then the contexts, QPN, buffer and doorbell.
    pub(crate) fn destroy(self: Pin<KBox<Self>>, env: &QpEnv<'_>) {
        let gsi = self.qp_type == qpt::GSI;
        #[cfg(not(variant_destroy_unquiesced))]
        self.core.stop_flush();
        {
            let mut soft = self.soft.lock();
            if !gsi && soft.state != QpState::Reset {
                let a = QpAttr::default();
                let cur = soft.state;
                if let Err(e) = self.hw_modify(env, &mut soft, &a, cur, QpState::Reset) {
                    ibdev_err_ratelimited!(
                        env.cmd,
                        "failed to modify QP to RST",
                        ret = e.to_errno()
                    );
                    ibdev_err_ratelimited!(
                        env.cmd,
                        "failed to destroy QP, QPN = {:#08x}, ret = {}.\n",
                        self.qpn,
                        e.to_errno()
                    );
                }
            }
            // The DIP context is released whatever the move to RESET did.
            if let Some(i) = soft.dip.take() {
                dip_put(env.dips, i);
            }
        }
        // A kernel QP's CQEs go (the GSI QP was not moved to RESET).
        if !self.user {
            self.clean_cqs(env.cmd.state());
        }
        env.objs.qps.remove(self.qpn);
        env.put_contexts(self.qpn);
        env.free_qpn(self.qpn, gsi);
        // The buffer and the record doorbell go with `self`.
    }
}
