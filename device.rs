// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The ib_device of one RoCE function: [`IbDev`], the state its verbs
//! share (the command interface, caps, HEM tables, number spaces, the
//! CQ/QP/SRQ tables), built once the engine is up (C's
//! `hns_roce_setup_hca`), and its [`IbDriver`] implementation, which the
//! rdma layer calls. Device-wide verbs (query_device/port, GIDs, ucontext,
//! counters) are answered here; the verbs of an object delegate to that
//! object's file (`pd.rs`, `ah.rs`, `mr.rs`, `cq.rs`, `qp.rs`, `srq.rs`),
//! handing it an `*Env` of the device parts it needs.

use crate::cmdq::desc::{chain, flag};
use crate::cmdq::Cmd;
use crate::hem::table::HemTables;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{cap_flag, cmq_op, msg};
use crate::hns_roce_hw_v2::gid;
use crate::hw_rev::HwRev;
use crate::pd::{Domains, IdSpace};
use crate::rdma::{
    self, AddrVec, AhIn, BoundDevice, DevAttr, DscpMap, GidEntry, Hnae3Handle, IbCq, IbDriver,
    IbQp, NetDev, PortAttr, SqDoorbells, UctxResp, WcArray,
};
use crate::{ah, bitmap, bond, cq, db, dfx, eq, hns_roce_hw_v2, mr, qp, srq};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// `alloc_ucontext` configuration bits (`hns-abi.h`), request and answer:
/// extended SGEs.
pub(crate) const UCTX_EXSGE: u32 = 1 << 0;
/// RQ inline (see [`UCTX_EXSGE`]).
pub(crate) const UCTX_RQ_INLINE: u32 = 1 << 1;
/// CQE inline (see [`UCTX_EXSGE`]).
pub(crate) const UCTX_CQE_INLINE: u32 = 1 << 2;
/// Fast-register page list limit (`HNS_ROCE_FRMR_MAX_PA`).
const FRMR_MAX_PA: u32 = 512;
/// CQ moderation limits.
const MAX_CQ_COUNT: u32 = 0xffff;
const MAX_CQ_PERIOD: u32 = 0xffff;
const MAX_CQ_PERIOD_HIP08: u32 = 65;
/// Hardware counters (`HNS_ROCE_HW_CNT_TOTAL`) and counters per descriptor.
const HW_CNT_TOTAL: usize = 22;
const CNT_PER_DESC: usize = 3;

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
    pub(crate) fn new(h: &Hnae3Handle, hw: &hns_roce_hw_v2::HwV2) -> Result<Arc<Self>> {
        let c = &hw.profile.caps;
        let id = h.pci_ident();
        let hem = hw.hem.clone();
        let dev = Arc::pin_init(
            try_pin_init!(IbDev {
                cmd: hw.cmd.clone(),
                dev: BoundDevice::new(h),
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

    /// The command interface (for messages).
    pub(crate) fn cmd(&self) -> &Cmd {
        &self.cmd
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
            .inspect_err(|_| hdev_err!(self.cmd.device(), "failed to init free mr!\n"))?;
        *self.free_mr.lock() = Some(fm);
        Ok(())
    }

    /// Destroys HIP08's free-MR objects (`free_mr_exit`).
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
        if self.cmd.is_uninit() || self.cmd.with_cmq(|q| q.is_initializing()) {
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
        init: &mut rdma::QpInit,
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
        user: Option<(rdma::UserCtx<'_, Ucontext>, &rdma::CqUreq)>,
    ) -> Result<(Arc<cq::Cq>, rdma::CqOut)> {
        let env = self.cq_env();
        let attr = cq::CqAttr { cqe, vector };
        let (depth, cqe_size) = cq::Cq::check(&env, &attr, user.as_ref().map(|u| u.1))?;
        // Kernel CQs take bank 0 on HIP09, the least loaded one on HIP08;
        // a user CQ its context's bank on HIP09.
        let bank = user.as_ref().map(|u| u.0.uctx().cq_bank);
        let cqn = self.cqns.lock().alloc(bank).map_err(|e| {
            ibdev_err!(&self.cmd, "failed to alloc CQN, ret = {:?}.\n", e);
            ENOSPC
        })?;
        let ucq = user.as_ref().map(|(u, r)| cq::UserCq {
            dev: u.dev(),
            uctx: u.uctx(),
            req: r,
        });
        let r = cq::Cq::create(&env, &attr, cqn, depth, cqe_size, ibcq, ucq).and_then(
            |(c, cap_flags)| {
                if let Err(e) = self.objs.cqs.insert(c.clone()) {
                    c.destroy(&env);
                    return Err(e);
                }
                Ok((c, cap_flags))
            },
        );
        match r {
            Ok((c, cap_flags)) => Ok((
                c,
                rdma::CqOut {
                    depth,
                    cqn,
                    cap_flags,
                },
            )),
            Err(e) => {
                let _ = self.cqns.lock().free(cqn);
                Err(e)
            }
        }
    }

    /// `hns_roce_destroy_cq`: out of the table, the CQ, its number.
    pub(crate) fn drop_cq(&self, c: &cq::Cq) {
        let cqn = c.cqn;
        // No event handler reaches the CQ once it is out of the table, and
        // none still runs on it when `remove` returns.
        self.objs.cqs.remove(cqn);
        c.destroy(&self.cq_env());
        let _ = self.cqns.lock().free(cqn);
    }

    /// `hns_roce_create_qp`: the QP, its table entry (reached by events
    /// once published, `publish_qp`), its flow control.
    fn new_qp(
        &self,
        init: &mut rdma::QpInit,
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
        let q = qp::Qp::create(&env, init, send_cq, recv_cq, ibqp, uqp)?;
        if let Err(e) = self.objs.qps.insert(q.core.clone()) {
            q.destroy(&env);
            return Err(e);
        }
        // After the QP is stored, as C; its failure undoes the creation.
        if let Err(e) = env.flow_control_init(q.qpn) {
            q.destroy(&env);
            return Err(e);
        }
        Ok(q)
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
            dev: self.cmd.device(),
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
    // The shim keeps a copy that user QPs take (`hns_shim_uctx.config`).
    #[allow(dead_code)]
    pub(crate) config: u32,
    /// Its pinned record-doorbell pages (`page_list`): map SQ/RQ/CQ records
    /// with [`db::UserDbPages::map`].
    #[pin]
    pub(crate) dbs: db::UserDbPages,
}

/// The rdma layer's handle of a CQ.
pub(crate) struct CqRef(Arc<cq::Cq>);

impl IbDriver for IbDev {
    type Ucontext = Ucontext;
    type Cq = CqRef;

    fn ib_log(&self) -> &rdma::IbLog {
        self.cmd.ib_log()
    }

    fn create_cq(
        &self,
        cqe: u32,
        vector: u32,
        ibcq: IbCq,
        user: Option<(rdma::UserCtx<'_, Ucontext>, &rdma::CqUreq)>,
    ) -> Result<(KBox<CqRef>, rdma::CqOut)> {
        let (c, out) = self.new_cq(cqe, vector, ibcq, user)?;
        match KBox::new(CqRef(c.clone()), GFP_KERNEL) {
            Ok(b) => Ok((b, out)),
            Err(e) => {
                self.drop_cq(&c);
                Err(e.into())
            }
        }
    }

    fn publish_cq(&self, c: &CqRef) {
        self.objs.cqs.publish(c.0.cqn);
    }

    fn destroy_cq(&self, c: KBox<CqRef>) {
        self.drop_cq(&c.0)
    }

    #[inline(always)]
    fn poll_cq(&self, c: &CqRef, wc: &mut WcArray<'_>) -> usize {
        c.0.poll(&self.cmd, &self.objs, wc)
    }

    fn req_notify_cq(&self, c: &CqRef, solicited: bool, report_missed: bool) -> bool {
        // While the function is down nothing is armed (the doorbells are
        // off): the outstanding WRs complete in software at UNINIT, whose
        // handlers run from `uninit_instance`. A caller that asks for
        // missed events hears whether this CQ still owes such completions
        // (`left_sw_wc`), so that it polls them instead of waiting for an
        // event that never comes.
        if self.cmd.is_down() {
            return report_missed && self.objs.qps.busy_on(c.0.cqn);
        }
        c.0.arm(&self.cmd, solicited);
        false
    }

    fn query_device(&self, a: &mut DevAttr) {
        let c = &self.caps;
        a.fw_ver = self.fw_ver;
        a.max_mr_size = u64::MAX;
        a.page_size_cap = u64::from(c.page_size_cap);
        a.vendor_id = self.vendor_id;
        a.vendor_part_id = self.part_id;
        a.hw_ver = self.hw_rev;
        a.max_qp = c.num_qps;
        a.max_qp_wr = c.max_wqes;
        a.device_cap_flags = rdma::DEVICE_PORT_ACTIVE_EVENT | rdma::DEVICE_RC_RNR_NAK_GEN;
        a.max_send_sge = c.max_sq_sg;
        a.max_recv_sge = c.max_rq_sg;
        a.max_sge_rd = c.max_sq_sg;
        a.max_cq = c.num_cqs;
        a.max_cqe = c.max_cqes;
        a.max_mr = c.num_mtpts;
        a.max_pd = c.num_pds;
        a.max_qp_rd_atom = c.max_qp_dest_rdma;
        a.max_qp_init_rd_atom = c.max_qp_init_rdma;
        a.atomic_hca = u32::from(c.flags & cap_flag::ATOMIC != 0);
        a.max_pkeys = 1;
        a.local_ca_ack_delay = c.local_ca_ack_delay;
        // CAST: INT_MAX.
        a.max_ah = i32::MAX as u32;
        a.max_cq_moderation_period = if self.rev.is_hip08() {
            MAX_CQ_PERIOD_HIP08
        } else {
            MAX_CQ_PERIOD
        };
        a.max_cq_moderation_count = MAX_CQ_COUNT;
        if c.flags & cap_flag::SRQ != 0 {
            a.max_srq = c.num_srqs;
            a.max_srq_wr = c.max_srq_wrs;
            a.max_srq_sge = c.max_srq_sges;
        }
        if c.flags & cap_flag::LIMIT_BANK != 0 {
            a.max_cq >>= 1;
            a.max_qp >>= 1;
        }
        if c.flags & cap_flag::FRMR != 0 && self.rev.is_hip09() {
            a.device_cap_flags |= rdma::DEVICE_MEM_MGT_EXTENSIONS;
            a.max_fast_reg_page_list_len = FRMR_MAX_PA;
        }
        if c.flags & cap_flag::XRC != 0 {
            a.device_cap_flags |= rdma::DEVICE_XRC;
        }
    }

    fn query_port(&self, _port: u32, a: &mut PortAttr) {
        a.max_mtu = self.caps.max_mtu;
        // The netdev's MTU, capped at what the engine takes.
        a.active_mtu = match a.ndev_mtu {
            0 => rdma::MTU_256,
            m => m.min(a.max_mtu),
        };
        a.state = a.ndev_state;
        a.phys_state = if a.state == rdma::PORT_ACTIVE {
            rdma::PORT_PHYS_STATE_LINK_UP
        } else {
            rdma::PORT_PHYS_STATE_DISABLED
        };
        a.gid_tbl_len = self.caps.gid_table_len;
        a.max_msg_sz = msg::MAX_MSG_LEN;
    }

    fn fw_ver(&self) -> u64 {
        self.fw_ver
    }

    fn set_gid(&self, index: u32, entry: Option<GidEntry<'_>>) -> Result {
        let failed =
            |e: &Error| ibdev_err!(&self.cmd, "failed to set gid, ret = {}!\n", e.to_errno());
        if !self.rev.is_hip09() {
            // HIP08: the SGID table, one entry per command.
            let mut d = chain::<1>(cmq_op::CFG_SGID_TB, false);
            let (ty, gid) = entry
                .as_ref()
                .map_or((0, None), |e| (e.ty as u32, Some(e.gid)));
            gid::write_sgid_tb(&mut d[0].data, index, ty, gid);
            return self.cmd.send(&mut d).inspect_err(failed);
        }
        let mut d = chain::<2>(cmq_op::CFG_GMV_TBL, false);
        let (ty, gid, vlan, mac) = match &entry {
            Some(e) => (e.ty as u32, Some(e.gid), e.vlan_id, *e.mac),
            None => (0, None, gid::VLAN_CFI_MASK, [0; 6]),
        };
        let [a, b] = &mut d;
        gid::write_gmv_tb(&mut a.data, &mut b.data, index, ty, gid, vlan, &mac);
        self.cmd.send(&mut d).inspect_err(failed)
    }

    fn netdev_mac(&self, mac: &[u8; 6]) -> Result {
        self.set_mac(mac)
    }

    fn doorbells_off(&self) -> bool {
        self.cmd.doorbells_off()
    }

    fn count_err(&self, c: dfx::DfxCnt) {
        self.cmd.sw_stat().inc(c);
    }

    fn active(&self) -> bool {
        // Registered but not (or no longer) taking contexts: during the
        // registration's last steps, from a reset's DOWN step on, in a
        // teardown. The caller may try again on the device's next life.
        self.cmd.is_active()
    }

    fn bond_follows(&self, ndev: NetDev, upper: NetDev) -> bool {
        self.caps.flags & cap_flag::BOND != 0 && bond::groups::follows(self.bus, ndev, upper)
    }

    fn alloc_ucontext(&self, req: u32, resp: &mut UctxResp) -> Result<(Arc<Ucontext>, u32, u64)> {
        let c = &self.caps;
        resp.qp_tab_size = c.num_qps;
        resp.srq_tab_size = c.num_srqs;
        let mut config = 0;
        if self.rev.is_hip09() {
            config = req & UCTX_EXSGE;
        }
        if config & UCTX_EXSGE != 0 {
            resp.config |= UCTX_EXSGE;
            resp.max_inline_data = c.max_sq_inline;
        }
        if c.flags & cap_flag::RQ_INLINE != 0 {
            config |= req & UCTX_RQ_INLINE;
            if config & UCTX_RQ_INLINE != 0 {
                resp.config |= UCTX_RQ_INLINE;
            }
        }
        if c.flags & cap_flag::CQE_INLINE != 0 {
            config |= req & UCTX_CQE_INLINE;
            if config & UCTX_CQE_INLINE != 0 {
                resp.config |= UCTX_CQE_INLINE;
            }
        }
        if self.rev.is_hip09() {
            resp.congest_type = c.cong_cap;
        }
        resp.cqe_size = c.cqe_sz;
        let uar = self.uars.alloc()?;
        let cq_bank = self.cqns.lock().get_bank_for_uctx();
        let u = Arc::pin_init(
            pin_init!(Ucontext {
                uar,
                cq_bank,
                config,
                dbs <- db::UserDbPages::new(),
            }),
            GFP_KERNEL,
        )
        .inspect_err(|_| {
            let _ = self.cqns.lock().put_bank_for_uctx(cq_bank);
            self.uars.free(uar);
        })?;
        // CAST: PAGE_SIZE is a power of two.
        let page_mask = !(kernel::page::PAGE_SIZE as u64 - 1);
        Ok((u, uar, self.db_bar & page_mask))
    }

    fn dealloc_ucontext(&self, u: Arc<Ucontext>) {
        let _ = self.cqns.lock().put_bank_for_uctx(u.cq_bank);
        self.uars.free(u.uar);
    }

    fn alloc_pd(&self) -> Result<u32> {
        self.domains.alloc_pd()
    }

    fn dealloc_pd(&self, pdn: u32) {
        self.domains.dealloc_pd(pdn)
    }

    fn alloc_xrcd(&self) -> Result<u32> {
        self.domains.alloc_xrcd()
    }

    fn dealloc_xrcd(&self, xrcdn: u32) {
        self.domains.dealloc_xrcd(xrcdn)
    }

    fn create_ah(&self, req: &AhIn, av: &mut AddrVec) -> Result {
        ah::create_ah(&self.ah_env(), req, av)
    }

    type Mr = mr::Mr;

    fn get_dma_mr(&self, pdn: u32, access: u32) -> Result<(Pin<KBox<mr::Mr>>, u32)> {
        let m = mr::get_dma_mr(&self.mr_env(), pdn, access)?;
        let key = m.key;
        Ok((m, key))
    }

    fn reg_user_mr(
        &self,
        dev: rdma::UmemDev<'_>,
        req: &rdma::MrReq,
    ) -> Result<(Pin<KBox<mr::Mr>>, u32)> {
        let m = mr::reg_user_mr(&self.mr_env(), dev, req)?;
        let key = m.key;
        Ok((m, key))
    }

    fn rereg_user_mr(&self, m: &mr::Mr, dev: rdma::UmemDev<'_>, req: &rdma::MrReq) -> Result {
        mr::rereg_user_mr(&self.mr_env(), m, dev, req)
    }

    fn dereg_mr(&self, m: Pin<KBox<mr::Mr>>) {
        if self.rev.is_hip08() {
            self.free_mr_round();
        }
        mr::dereg_mr(&self.mr_env(), m)
    }

    fn alloc_mr(
        &self,
        pdn: u32,
        mr_type: u32,
        max_num_sg: u32,
    ) -> Result<(Pin<KBox<mr::Mr>>, u32)> {
        let m = mr::alloc_mr(&self.mr_env(), pdn, mr_type, max_num_sg)?;
        let key = m.key;
        Ok((m, key))
    }

    fn mr_size(m: &mr::Mr) -> u64 {
        m.size()
    }

    fn map_mr_sg_begin(&self, m: &mr::Mr, page_size: u32, sg_offset: u32) -> Result {
        m.map_sg_begin(page_size, sg_offset)
    }

    fn map_mr_sg_page(m: &mr::Mr, addr: u64) -> Result {
        m.map_sg_page(addr)
    }

    fn map_mr_sg_end(&self, m: &mr::Mr, n: i32, page_size: u32) -> i32 {
        m.map_sg_end(&self.cmd, n, page_size)
    }

    type Qp = qp::Qp;

    fn create_qp(
        &self,
        init: &mut rdma::QpInit,
        send_cq: Option<&CqRef>,
        recv_cq: Option<&CqRef>,
        ibqp: IbQp,
        user: Option<rdma::UserCtx<'_, Ucontext>>,
    ) -> Result<(Pin<KBox<qp::Qp>>, u32)> {
        let q = self.new_qp(
            init,
            send_cq.map(|c| c.0.clone()),
            recv_cq.map(|c| c.0.clone()),
            ibqp,
            user,
        )?;
        let n = q.qpn;
        Ok((q, n))
    }

    fn modify_qp(&self, q: &qp::Qp, a: &rdma::QpAttr, r: &mut rdma::QpModifyResp) -> Result {
        q.modify(&self.qp_env(), a, r)
    }

    fn publish_qp(&self, q: &qp::Qp) {
        self.objs.qps.publish(q.qpn);
    }

    fn quiesce_qp(&self, q: &qp::Qp) {
        q.core.stop_flush();
    }

    fn destroy_qp(&self, q: Pin<KBox<qp::Qp>>) {
        q.destroy(&self.qp_env())
    }

    fn query_qp(&self, q: &qp::Qp, out: &mut rdma::QpQuery) -> Result {
        q.query(&self.qp_env(), out)
    }

    #[inline(always)]
    fn post_recv(
        &self,
        q: &qp::Qp,
        wrs: rdma::RecvChain<'_>,
    ) -> core::result::Result<(), (usize, Error)> {
        q.post_recv(&self.post_env(), wrs)
    }

    fn qp_is_ud(&self, q: &qp::Qp) -> bool {
        q.is_ud()
    }

    fn post_send(
        &self,
        q: &qp::Qp,
        wrs: rdma::SendChain<'_, mr::Mr>,
    ) -> core::result::Result<(), (usize, Error)> {
        q.post_send(&self.post_env(), wrs)
    }

    fn reset_down(&self) -> bool {
        self.cmd.is_reset_down()
    }

    fn push_drain_wr(&self, q: &qp::Qp, send: bool, wr_id: u64) -> Result {
        q.core.push_drain_wr(send, wr_id)
    }

    fn cq_trigger(&self, c: &CqRef) -> bool {
        c.0.trigger()
    }

    type Srq = srq::Srq;

    fn create_srq(
        &self,
        args: &mut rdma::SrqArgs,
        ibsrq: rdma::IbSrq,
        user: Option<(rdma::UserCtx<'_, Ucontext>, &rdma::SrqUreq)>,
    ) -> Result<KBox<srq::Srq>> {
        let u = user.as_ref().map(|(u, r)| srq::UserSrq {
            dev: u.dev(),
            uctx: u.uctx(),
            req: r,
        });
        srq::Srq::create(&self.srq_env(), args, ibsrq, u)
    }

    fn publish_srq(&self, s: &srq::Srq) {
        self.objs.srqs.publish(s.srqn);
    }

    fn destroy_srq(&self, s: KBox<srq::Srq>) {
        s.destroy(&self.srq_env())
    }

    fn modify_srq(&self, s: &srq::Srq, resize: bool, limit: bool, srq_limit: u32) -> Result {
        s.modify(&self.srq_env(), resize, limit.then_some(srq_limit))
    }

    fn query_srq(&self, s: &srq::Srq, a: &mut rdma::SrqAttr) -> Result {
        s.query(&self.srq_env(), a)
    }

    fn post_srq_recv(
        &self,
        s: &srq::Srq,
        wrs: rdma::RecvChain<'_>,
    ) -> core::result::Result<(), (usize, Error)> {
        s.post_recv(&self.cmd, wrs)
    }

    fn modify_cq(&self, c: &CqRef, count: u16, period: u16) -> Result {
        c.0.modify(&self.cq_env(), count, period)
    }

    fn res_cq(&self, c: &CqRef, r: &mut rdma::ResAttrs) -> Result {
        c.0.res_attrs(r)
    }

    fn res_cq_raw(&self, c: &CqRef, r: &mut rdma::ResRaw<'_>) -> Result {
        c.0.res_raw(&self.cq_env(), r)
    }

    fn res_qp(&self, q: &qp::Qp, r: &mut rdma::ResAttrs) -> Result {
        q.res_attrs(r)
    }

    fn res_qp_raw(&self, q: &qp::Qp, r: &mut rdma::ResRaw<'_>) -> Result {
        q.res_raw(&self.qp_env(), r)
    }

    fn res_srq(&self, s: &srq::Srq, r: &mut rdma::ResAttrs) -> Result {
        s.res_attrs(r)
    }

    fn res_srq_raw(&self, s: &srq::Srq, r: &mut rdma::ResRaw<'_>) -> Result {
        s.res_raw(&self.srq_env(), r)
    }

    fn res_mr(&self, m: &mr::Mr, r: &mut rdma::ResAttrs) -> Result {
        m.res_attrs(r)
    }

    fn res_mr_raw(&self, m: &mr::Mr, r: &mut rdma::ResRaw<'_>) -> Result {
        m.res_raw(&self.mr_env(), r)
    }

    fn query_counters(&self, values: &mut [u64]) -> Result<usize> {
        const DESCS: usize = HW_CNT_TOTAL.div_ceil(CNT_PER_DESC);
        let mut d = chain::<DESCS>(cmq_op::QUERY_COUNTER, true);
        self.cmd
            .send(&mut d)
            .inspect_err(|e| ibdev_err!(&self.cmd, "failed to get counter", ret = e.to_errno()))?;
        let mut n = 0;
        for (i, v) in values.iter_mut().enumerate().take(HW_CNT_TOTAL) {
            let bd = i / CNT_PER_DESC;
            let Some(desc) = d.get(bd) else { break };
            if bd != HW_CNT_TOTAL / CNT_PER_DESC && desc.flag & flag::NEXT == 0 {
                break;
            }
            let k = 2 * (i % CNT_PER_DESC);
            *v = u64::from(desc.data.word(k)) | (u64::from(desc.data.word(k + 1)) << 32);
            n = i + 1;
        }
        Ok(n)
    }
}
