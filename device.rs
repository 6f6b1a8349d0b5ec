// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The ib_device of one RoCE function: [`IbDev`], the state its verbs
//! share (the command interface, caps, HEM tables, number spaces, the
//! CQ/QP/SRQ tables), built once the engine is up (C's
//! `hns_roce_setup_hca`); the CQ and QP creation every CQ and QP takes,
//! the driver's own objects (HIP08's free-MR PD, CQ and QPs), the `*Env`
//! each object file gets, and [`Ucontext`]. Its `IbDriver` implementation,
//! the verbs the rdma layer calls, is `device/verbs.rs`.

use crate::cmdq::{Cmd, DevState};
use crate::hem::table::HemTables;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{
    cap_flag, cq_moder::MAX_CQ_PERIOD_HIP08, frmr::MAX_PA as FRMR_MAX_PA,
};
use crate::hw_rev::HwRev;
use crate::pd::{Domains, IdSpace};
use crate::rdma::{self, BoundDevice, DscpMap, Hnae3Handle, IbCq, IbQp, SqDoorbells};
use crate::{ah, bitmap, cq, db, eq, hns_roce_hw_v2, mr, qp, srq, uabi};

mod verbs;

use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    types::ScopeGuard,
};

/// `alloc_ucontext` configuration bits (`hns-abi.h`), request and answer:
/// extended SGEs.
pub(crate) const UCTX_EXSGE: u32 = 1 << 0;
/// RQ inline (see [`UCTX_EXSGE`]).
pub(crate) const UCTX_RQ_INLINE: u32 = 1 << 1;
/// CQE inline (see [`UCTX_EXSGE`]).
pub(crate) const UCTX_CQE_INLINE: u32 = 1 << 2;
/// The port's one P_Key (C's `PKEY_ID`): the full-membership default;
/// its table has that one entry.
pub(crate) const PKEY_ID: u16 = 0xffff;
/// CQ moderation limits (HIP08's period is `cq_moder::MAX_CQ_PERIOD_HIP08`).
const MAX_CQ_COUNT: u32 = 0xffff;
const MAX_CQ_PERIOD: u32 = 0xffff;
/// The hardware counters' names (C's `hns_roce_port_stats_descs`), in
/// the order QUERY_COUNTER returns them; their number is C's
/// `HNS_ROCE_HW_CNT_TOTAL`.
const HW_CNT_NAMES: &[&CStr] = &[
    c"rx_rc_pkt",
    c"rx_uc_pkt",
    c"rx_ud_pkt",
    c"rx_xrc_pkt",
    c"rx_pkt",
    c"rx_err_pkt",
    c"rx_cnp_pkt",
    c"tx_rc_pkt",
    c"tx_uc_pkt",
    c"tx_ud_pkt",
    c"tx_xrc_pkt",
    c"tx_pkt",
    c"tx_err_pkt",
    c"tx_cnp_pkt",
    c"trp_get_mpt_err_pkt",
    c"trp_get_irrl_err_pkt",
    c"ecn_doorbell",
    c"rx_buffer",
    c"trp_rx_sof",
    c"cq_cqe",
    c"cq_poe",
    c"cq_notify",
];
/// How many hardware counters there are.
const HW_CNT_TOTAL: usize = HW_CNT_NAMES.len();
/// Counters per QUERY_COUNTER descriptor.
const CNT_PER_DESC: usize = 3;
/// The hardware counters' descriptions, registered on devices that have
/// them.
pub(crate) static HW_STATS: rdma::StatDescs<HW_CNT_TOTAL> = rdma::StatDescs::new(HW_CNT_NAMES);

/// What the verbs of one ib_device need: the command interface, the caps
/// and the number spaces.
#[pin_data]
pub(crate) struct IbDev {
    cmd: Arc<Cmd>,
    dev: BoundDevice,
    hem: Arc<HemTables>,
    caps: Caps,
    fw_ver: u64,
    hw_rev: u32,
    vendor_id: u32,
    part_id: u32,
    rev: HwRev,
    /// First congestion control template of the function.
    cong_tmpl_id: u32,
    /// Bus address of the doorbell BAR, mapped by user contexts.
    db_bar: u64,
    /// Bus address of the direct WQE pages (0 without direct WQE).
    dwqe_page: u64,
    /// The PCI bus (the die), for the bond groups.
    bus: u8,
    /// The module's state: the bond groups this device's port may follow.
    client: Arc<crate::client::HnsClient>,
    #[pin]
    domains: Domains,
    #[pin]
    uars: IdSpace,
    #[pin]
    mrs: IdSpace,
    /// SRQ numbers (none without the SRQ cap).
    #[pin]
    srqns: IdSpace,
    #[pin]
    cqns: Mutex<bitmap::CqBanks<KVec<u64>>>,
    /// The kernel record-doorbell pages (debugfs counts their records).
    pub(crate) dbs: db::DbPages,
    #[pin]
    qpns: Mutex<bitmap::QpBanks<KVec<u64>>>,
    /// CQs and QPs by number (shared with the event handlers).
    objs: Arc<eq::Objects>,
    /// HIP09 kernel SQ doorbells.
    sq_db: Option<SqDoorbells>,
    /// The NIC's DSCP-to-priority map, for RoCE v2 address vectors.
    dscp: DscpMap,
    /// Serialises HIP08's QP flow control init (`scc_mutex`).
    #[pin]
    scc: Mutex<()>,
    /// The DIP congestion contexts (`qp_table.dip_xa`).
    #[pin]
    dips: qp::DipTable,
    /// The MAC last written to HIP08's SMAC table (`dev_addr`; zero until
    /// the first write).
    #[pin]
    dev_addr: Mutex<[u8; 6]>,
    /// HIP08's free-MR QPs (C's `free_mr` and its mutex, held for a round).
    #[pin]
    free_mr: Mutex<Option<qp::free_mr::FreeMr>>,
}

impl IbDev {
    /// The device state of function `h`, whose engine `hw` is up (C's
    /// `hns_roce_setup_hca`).
    pub(crate) fn new(
        h: &Hnae3Handle,
        hw: &hns_roce_hw_v2::HwV2,
        client: Arc<crate::client::HnsClient>,
    ) -> Result<Arc<Self>> {
        let c = &hw.profile.caps;
        let id = h.pci_ident();
        let hem = hw.hem.clone();
        let dev = Arc::pin_init(
            try_pin_init!(IbDev {
                cmd: hw.cmd.clone(),
                dev: BoundDevice::new(h.bound_device()),
                hem,
                caps: c.clone(),
                fw_ver: u64::from(hw.profile.fw_ver),
                hw_rev: u32::from(hw.profile.hw_rev),
                vendor_id: u32::from(id.vendor),
                part_id: u32::from(id.device),
                rev: hw.profile.rev,
                cong_tmpl_id: hw.profile.cong_tmpl_id,
                db_bar: h.bar_start(2),
                // The direct WQE pages are BAR 4's (C's `dwqe_page`).
                bus: h.bus_func().0,
                client,
                dwqe_page: if c.flags & cap_flag::DIRECT_WQE != 0 {
                    h.bar_start(4)
                } else {
                    0
                },
                domains <- Domains::new(c)?,
                uars <- IdSpace::new("uar id", c.reserved_uars, c.num_uars)?,
                mrs <- IdSpace::new("id for MR key", c.reserved_mrws, c.num_mtpts)?,
                srqns <- if c.flags & cap_flag::SRQ != 0 {
                    IdSpace::new("srq", c.reserved_srqs, c.num_srqs)?
                } else {
                    // An empty range: [1, 0].
                    IdSpace::new("srq", 1, 1)?
                },
                cqns <- new_mutex!(cq_banks(c, hw.profile.rev)?),
                dbs: db::DbPages::new()?,
                qpns <- new_mutex!(qp_banks(c)?),
                objs: hw.objs.clone(),
                sq_db: if hw.profile.rev.is_hip09() {
                    // CAST: the doorbell stride, a small constant.
                    h.sq_doorbells(c.num_qps, hns_roce_hw_v2::consts::sge::DWQE_SIZE as usize)
                } else {
                    None
                },
                dscp: h.dscp_map(),
                scc <- new_mutex!(()),
                dips <- new_mutex!(KVec::new()),
                dev_addr <- new_mutex!([0; 6]),
                free_mr <- new_mutex!(None),
            }? Error),
            GFP_KERNEL,
        )?;
        // The driver's own doorbell page takes the first UAR, as in C.
        dev.uars.alloc()?;
        Ok(dev)
    }
}

/// The CQ number banks of the caps.
fn cq_banks(c: &Caps, rev: HwRev) -> Result<bitmap::CqBanks<KVec<u64>>> {
    let mut words = KVec::new();
    words.resize(
        bitmap::cq_bank_words(c.num_cqs, c.reserved_cqs),
        0u64,
        GFP_KERNEL,
    )?;
    bitmap::CqBanks::new(words, c.num_cqs, c.reserved_cqs, c.flags, rev).map_err(|_| EINVAL)
}

/// The QP number banks of the caps.
fn qp_banks(c: &Caps) -> Result<bitmap::QpBanks<KVec<u64>>> {
    let mut words = KVec::new();
    words.resize(
        bitmap::qp_bank_words(c.num_qps, c.reserved_qps),
        0u64,
        GFP_KERNEL,
    )?;
    bitmap::QpBanks::new(words, c.num_qps, c.reserved_qps, c.flags).map_err(|_| EINVAL)
}

impl IbDev {
    /// Keeps the port's MAC in HIP08's SMAC table (`hns_roce_set_mac`):
    /// written when it differs from the last one written; nothing on HIP09.
    ///
    /// # Errors
    ///
    /// The command's errno.
    pub(crate) fn set_mac(&self, mac: &[u8; 6]) -> Result {
        if self.rev.is_hip09() {
            return Ok(());
        }
        let mut last = self.dev_addr.lock();
        if *last == *mac {
            return Ok(());
        }
        *last = *mac;
        hns_roce_hw_v2::set_mac(&self.cmd, 0, mac)
    }

    /// The function's state (for messages).
    pub(crate) fn state(&self) -> &DevState {
        self.cmd.state()
    }

    /// Creates HIP08's free-MR objects (`free_mr_init`, the first step of
    /// C's `hw_init`); nothing on HIP09.
    ///
    /// # Errors
    ///
    /// The errno of the failed creation or modify; nothing is left.
    pub(crate) fn init_free_mr(&self) -> Result {
        if self.rev.is_hip09() {
            return Ok(());
        }
        let fm = qp::free_mr::FreeMr::new(self)
            .inspect_err(|_| hdev_err!(self.cmd.state().device(), "failed to init free mr!\n"))?;
        *self.free_mr.lock() = Some(fm);
        Ok(())
    }

    /// Destroys HIP08's free-MR objects (`free_mr_exit`).
    #[inline(never)]
    pub(crate) fn exit_free_mr(&self) {
        let fm = self.free_mr.lock().take();
        if let Some(fm) = fm {
            fm.destroy(self);
        }
    }

    /// A free-MR round before an MR goes (`hns_roce_v2_dereg_mr`): only
    /// when the function is up, not while it is brought up, reset or
    /// removed.
    fn free_mr_round(&self) {
        if self.cmd.state().is_uninit() || self.cmd.ring().with_cmq(|q| q.is_initializing()) {
            return;
        }
        let fm = self.free_mr.lock();
        if let Some(fm) = fm.as_ref() {
            fm.round(&self.qp_env());
        }
    }

    /// A PD number for the free-MR objects.
    pub(crate) fn reserved_pd(&self) -> Result<u32> {
        self.domains.alloc_pd()
    }

    /// Gives a PD number of [`IbDev::reserved_pd`] back.
    pub(crate) fn drop_reserved_pd(&self, pdn: u32) {
        self.domains.dealloc_pd(pdn)
    }

    /// A kernel CQ of `cqe` entries on vector 0 that only the driver polls.
    pub(crate) fn reserved_cq(&self, cqe: u32) -> Result<Arc<cq::Cq>> {
        let (c, _) = self.new_cq(cqe, 0, IbCq::reserved(), None)?;
        // Complete as it is: the driver's own, no `ib_cq` to wait for.
        self.objs.cqs.publish(c.cqn);
        Ok(c)
    }

    /// A kernel QP of the driver's own, on `cq`.
    pub(crate) fn reserved_qp(
        &self,
        init: &mut qp::QpInit,
        cq: Arc<cq::Cq>,
    ) -> Result<Pin<KBox<qp::Qp>>> {
        let q = self.new_qp(init, Some(cq.clone()), Some(cq), IbQp::reserved(), None)?;
        self.objs.qps.publish(q.qpn);
        Ok(q)
    }

    /// `hns_roce_create_cq`: the CQN, the CQ and its table entry, which
    /// events reach once the CQ is published (`publish_cq`).
    fn new_cq(
        &self,
        cqe: u32,
        vector: u32,
        ibcq: IbCq,
        user: Option<(rdma::UserCtx<'_, Ucontext>, &cq::CqUreq)>,
    ) -> Result<(Arc<cq::Cq>, rdma::CqOut<uabi::CreateCqResp>)> {
        let env = self.cq_env();
        let attr = cq::CqAttr { cqe, vector };
        let (depth, cqe_size) = cq::Cq::check(&env, &attr, user.as_ref().map(|u| u.1))?;
        // Kernel CQs take bank 0 on HIP09, the least loaded one on HIP08;
        // a user CQ its context's bank on HIP09.
        let bank = user.as_ref().map(|u| u.0.uctx().cq_bank);
        // Each guard undoes its step if a later one fails: the CQ is
        // destroyed, then its number goes back.
        let cqn = ScopeGuard::new_with_data(
            self.cqns.lock().alloc(bank).map_err(|e| {
                ibdev_err!(self.cmd.state(), "failed to alloc CQN, ret = {:?}.\n", e);
                ENOSPC
            })?,
            |n| self.free_cqn(n),
        );
        let ucq = user.as_ref().map(|(u, r)| cq::UserCq {
            dev: u.dev(),
            uctx: u.uctx(),
            req: r,
        });
        let (c, cap_flags) = cq::Cq::create(&env, &attr, *cqn, depth, cqe_size, ibcq, ucq)?;
        let c = ScopeGuard::new_with_data(c, |c| c.destroy(&env));
        self.objs.cqs.insert((*c).clone())?;
        let c = c.dismiss();
        Ok((
            c,
            rdma::CqOut {
                depth,
                resp: uabi::CreateCqResp {
                    cqn: (*cqn).into(),
                    cap_flags,
                },
                cqn: cqn.dismiss(),
            },
        ))
    }

    /// Gives `cqn` back; a number that is not taken is refused by the
    /// allocator and logged (nothing else is keyed by it).
    fn free_cqn(&self, cqn: u32) {
        if self.cqns.lock().free(cqn).is_err() {
            ibdev_warn!(self.cmd.state(), "CQN {:#x} was not allocated\n", cqn);
        }
    }

    /// One user context fewer on `bank` (HIP09's CQ bank balance); a
    /// count already at 0 is refused by the allocator and logged.
    pub(crate) fn put_cq_bank(&self, bank: u8) {
        if self.cqns.lock().put_bank_for_uctx(bank).is_err() {
            ibdev_warn!(
                self.cmd.state(),
                "CQ bank {} has no user context to put\n",
                bank
            );
        }
    }

    /// `hns_roce_destroy_cq`: out of the table, the CQ, its number.
    pub(crate) fn drop_cq(&self, c: &cq::Cq) {
        let cqn = c.cqn;
        // No event handler reaches the CQ once it is out of the table, and
        // none still runs on it when `remove` returns.
        self.objs.cqs.remove(cqn);
        c.destroy(&self.cq_env());
        self.free_cqn(cqn);
    }

    /// `hns_roce_create_qp`: the QP, its table entry (reached by events
    /// once published, `publish_qp`), its flow control.
    fn new_qp(
        &self,
        init: &mut qp::QpInit,
        send_cq: Option<Arc<cq::Cq>>,
        recv_cq: Option<Arc<cq::Cq>>,
        ibqp: IbQp,
        user: Option<rdma::UserCtx<'_, Ucontext>>,
    ) -> Result<Pin<KBox<qp::Qp>>> {
        let env = self.qp_env();
        let uqp = user.as_ref().map(|u| qp::UserQp {
            dev: u.dev(),
            uctx: u.uctx(),
            mmap: u.mmap(),
        });
        // Destroyed (and out of the table) if a later step fails.
        let q = ScopeGuard::new_with_data(
            qp::Qp::create(&env, init, send_cq, recv_cq, ibqp, uqp)?,
            |q| q.destroy(&env),
        );
        self.objs.qps.insert(q.core.clone())?;
        // After the QP is stored, as C; its failure undoes the creation.
        env.flow_control_init(q.qpn)?;
        Ok(q.dismiss())
    }

    /// What `qp.rs` needs of the device. Never inlined: a dozen verbs build
    /// it, and its copies cost ≈ 1.5 KB of `.text`.
    #[inline(never)]
    pub(crate) fn qp_env(&self) -> qp::QpEnv<'_> {
        qp::QpEnv {
            cmd: &self.cmd,
            dev: self.dev.get(),
            hem: &self.hem,
            dbs: &self.dbs,
            caps: &self.caps,
            rev: self.rev,
            cong_tmpl_id: self.cong_tmpl_id,
            qpns: &self.qpns,
            objs: &self.objs,
            sq_db: self.sq_db.as_ref(),
            dwqe_page: self.dwqe_page,
            dscp: &self.dscp,
            scc: &self.scc,
            dips: &self.dips,
        }
    }

    /// What posting work needs of the device, built inline at each post.
    fn post_env(&self) -> qp::PostEnv<'_> {
        qp::PostEnv {
            cmd: &self.cmd,
            objs: &self.objs,
            sq_db: self.sq_db.as_ref(),
            rev: self.rev,
        }
    }

    #[inline(never)]
    fn cq_env(&self) -> cq::CqEnv<'_> {
        cq::CqEnv {
            cmd: &self.cmd,
            dev: self.dev.get(),
            hem: &self.hem,
            dbs: &self.dbs,
            caps: &self.caps,
            rev: self.rev,
        }
    }

    /// What `srq.rs` needs of the device; never inlined, as
    /// [`IbDev::qp_env`] (≈ 270 bytes).
    #[inline(never)]
    fn srq_env(&self) -> srq::SrqEnv<'_> {
        srq::SrqEnv {
            cmd: &self.cmd,
            dev: self.dev.get(),
            hem: &self.hem,
            caps: &self.caps,
            rev: self.rev,
            dbs: &self.dbs,
            srqns: &self.srqns,
            table: &self.objs.srqs,
        }
    }

    /// What `ah.rs` needs of the device.
    fn ah_env(&self) -> ah::AhEnv<'_> {
        ah::AhEnv {
            dev: self.cmd.state().device(),
            caps: &self.caps,
            rev: self.rev,
            dscp: &self.dscp,
        }
    }

    /// What `mr.rs` needs of the device; never inlined, as
    /// [`IbDev::qp_env`] (≈ 190 bytes).
    #[inline(never)]
    fn mr_env(&self) -> mr::MrEnv<'_> {
        mr::MrEnv {
            cmd: &self.cmd,
            dev: self.dev.get(),
            hem: &self.hem,
            caps: &self.caps,
            ids: &self.mrs,
        }
    }
}

/// The driver's state of a user context (`struct hns_roce_ucontext`); user
/// verbs reach it through `rdma::UserCtx::uctx`. One allocation, as C's
/// context is one: the record doorbells mapped from it hold a reference.
#[pin_data]
pub(crate) struct Ucontext {
    /// Its doorbell page (UAR) index.
    pub(crate) uar: u32,
    /// The CQ bank its CQs take on HIP09 (`cq_bank_id`).
    pub(crate) cq_bank: u8,
    /// The `HNS_ROCE_*` configuration bits libhns asked for and got
    /// (`config`: extended SGE, RQ inline, CQE inline).
    // The shim keeps a copy that user QPs take (`rdma_shim_uctx.config`).
    #[allow(dead_code)]
    pub(crate) config: u32,
    /// Its pinned record-doorbell pages (`page_list`): map SQ/RQ/CQ records
    /// with [`db::UserDbPages::map`].
    #[pin]
    pub(crate) dbs: db::UserDbPages,
}

/// The rdma layer's handle of a CQ.
pub(crate) struct CqRef(Arc<cq::Cq>);
