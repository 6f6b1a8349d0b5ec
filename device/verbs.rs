// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The verbs of the ib_device: [`IbDev`]'s implementation of the rdma layer's
//! per-object traits ([`rdma::Driver`]),
//! which the rdma layer calls for every op. Device-wide verbs
//! (query_device/port, GIDs, ucontext, counters) are answered here, CQ
//! verbs around the CQN; the verbs of an object delegate in one line to
//! that object's file (`pd.rs`, `ah.rs`, `mr.rs`, `cq.rs`, `qp.rs`,
//! `srq.rs`) with the `*Env` it needs.

use super::{
    CqRef, IbDev, Ucontext, CNT_PER_DESC, FRMR_MAX_PA, HW_CNT_TOTAL, MAX_CQ_COUNT, MAX_CQ_PERIOD,
    MAX_CQ_PERIOD_HIP08, UCTX_CQE_INLINE, UCTX_EXSGE, UCTX_RQ_INLINE,
};
use crate::cmdq::desc::{chain, flag};
use crate::hns_roce_hw_v2::consts::{cap_flag, cmq_op, msg};
use crate::hns_roce_hw_v2::gid;
use crate::rdma::{
    self, AddrVec, AhIn, DevAttr, FailedVerb, GidEntry, IbCq, IbQp, NetDev, NetdevEvent, PortAttr,
    PortEvents, UctxNew, UdataReq, WcArray,
};
use crate::uabi;
use crate::{ah, bond, db, dfx, mr, qp, srq};
use kernel::{prelude::*, sync::Arc, types::ScopeGuard};

// The device and its port.
#[vtable]
impl rdma::DeviceOps for IbDev {
    fn ib_log(&self) -> &rdma::IbLog {
        self.cmd.state().ib_log()
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
        a.port_cap_flags = rdma::PORT_CM_SUP
            | rdma::PORT_REINIT_SUP
            | rdma::PORT_VENDOR_CLASS_SUP
            | rdma::PORT_BOOT_MGMT_SUP;
        // One P_Key, `PKEY_ID`.
        a.pkey_tbl_len = 1;
    }

    fn fw_ver(&self) -> u64 {
        self.fw_ver
    }

    fn set_gid(&self, index: u32, entry: Option<GidEntry<'_>>) -> Result {
        let failed = |e: &Error| {
            ibdev_err!(
                self.cmd.state(),
                "failed to set gid, ret = {}!\n",
                e.to_errno()
            )
        };
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

    fn netdev_event(&self, ev: &NetdevEvent<'_>, port: &PortEvents<'_>) {
        // A bonded port follows the bond's upper device: only its events
        // are the port's then; otherwise only the port's own netdev's.
        if !(if ev.bonded() { ev.upper() } else { ev.ours() }) {
            return;
        }
        match ev.cmd() {
            rdma::NETDEV_REGISTER | rdma::NETDEV_CHANGEADDR => {
                // A failure is logged by `set_mac`; the event stands.
                let _ = self.set_mac(ev.addr());
            }
            rdma::NETDEV_UP | rdma::NETDEV_CHANGE => {
                if self.set_mac(ev.addr()).is_ok() {
                    lag_port_event(ev, port);
                }
            }
            rdma::NETDEV_DOWN => lag_port_event(ev, port),
            _ => {}
        }
    }

    fn mmap_refused(&self) -> bool {
        self.cmd.state().doorbells_off()
    }

    fn verb_failed(&self, v: FailedVerb) {
        use dfx::DfxCnt::*;
        self.cmd.state().sw_stat().inc(match v {
            FailedVerb::CreateQp => QpCreateErr,
            FailedVerb::ModifyQp => QpModifyErr,
            FailedVerb::CreateCq => CqCreateErr,
            FailedVerb::ModifyCq => CqModifyErr,
            FailedVerb::CreateSrq => SrqCreateErr,
            FailedVerb::ModifySrq => SrqModifyErr,
            FailedVerb::AllocXrcd => XrcdAllocErr,
            FailedVerb::RegUserMr => MrRegErr,
            FailedVerb::ReregUserMr => MrReregErr,
            FailedVerb::CreateAh => AhCreateErr,
            FailedVerb::Mmap => MmapErr,
            FailedVerb::AllocUcontext => UctxAllocErr,
        });
    }

    fn active(&self) -> bool {
        // Registered but not (or no longer) taking contexts: during the
        // registration's last steps, from a reset's DOWN step on, in a
        // teardown. The caller may try again on the device's next life.
        self.cmd.state().is_active()
    }

    fn port_follows_upper(&self, ndev: NetDev, upper: NetDev) -> bool {
        self.caps.flags & cap_flag::BOND != 0
            && bond::groups::follows(&self.client.bonds, self.bus, ndev, upper)
    }
}

// User contexts.
#[vtable]
impl rdma::UcontextOps for IbDev {
    type Ucontext = Ucontext;
    type UctxReq = uabi::AllocUcontext;
    type UctxResp = uabi::AllocUcontextResp;

    fn alloc_ucontext(
        &self,
        req: &uabi::AllocUcontext,
    ) -> Result<UctxNew<Ucontext, uabi::AllocUcontextResp>> {
        let req = req.config;
        let mut resp = uabi::AllocUcontextResp::default();
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
            // CAST: the uapi member is 8 bits, as C's assignment keeps.
            resp.congest_type = c.cong_cap as u8;
        }
        resp.cqe_size = c.cqe_sz;
        // Both go back (bank first) if the context cannot be made.
        let uar = ScopeGuard::new_with_data(self.uars.alloc()?, |u| self.uars.free(u));
        let cq_bank = ScopeGuard::new_with_data(self.cqns.lock().get_bank_for_uctx(), |b| {
            self.put_cq_bank(b)
        });
        let (uar_idx, bank) = (*uar, *cq_bank);
        let u = Arc::pin_init(
            pin_init!(Ucontext {
                uar: uar_idx,
                cq_bank: bank,
                config,
                dbs <- db::UserDbPages::new(),
            }),
            GFP_KERNEL,
        )?;
        cq_bank.dismiss();
        let uar = uar.dismiss();
        // CAST: PAGE_SIZE is a power of two.
        let page_mask = !(kernel::page::PAGE_SIZE as u64 - 1);
        Ok(UctxNew {
            uctx: u,
            resp,
            config: resp.config,
            db_page: Some((uar, self.db_bar & page_mask)),
        })
    }

    fn dealloc_ucontext(&self, u: Arc<Ucontext>) {
        self.put_cq_bank(u.cq_bank);
        self.uars.free(u.uar);
    }
}

// Protection domains.
#[vtable]
impl rdma::PdOps for IbDev {
    type PdResp = uabi::AllocPdResp;

    fn alloc_pd(&self) -> Result<(u32, uabi::AllocPdResp)> {
        let pdn = self.domains.alloc_pd()?;
        Ok((pdn, uabi::AllocPdResp { pdn }))
    }

    fn dealloc_pd(&self, pdn: u32) {
        self.domains.dealloc_pd(pdn)
    }
}

// XRC domains.
#[vtable]
impl rdma::XrcdOps for IbDev {
    fn alloc_xrcd(&self) -> Result<u32> {
        self.domains.alloc_xrcd()
    }

    fn dealloc_xrcd(&self, xrcdn: u32) {
        self.domains.dealloc_xrcd(xrcdn)
    }
}

// Address handles.
#[vtable]
impl rdma::AhOps for IbDev {
    type AhResp = uabi::CreateAhResp;

    fn create_ah(&self, req: &AhIn, av: &mut AddrVec) -> Result<uabi::CreateAhResp> {
        ah::create_ah(&self.ah_env(), req, av)?;
        Ok(uabi::CreateAhResp {
            dmac: av.mac,
            priority: av.sl,
            tc_mode: av.tc_mode,
        })
    }
}

// Completion queues.
#[vtable]
impl rdma::CqOps for IbDev {
    type Cq = CqRef;
    type CqReq = uabi::CreateCq;
    type CqResp = uabi::CreateCqResp;

    fn create_cq(
        &self,
        cqe: u32,
        vector: u32,
        ibcq: IbCq,
        user: Option<(rdma::UserCtx<'_, Ucontext>, &UdataReq<uabi::CreateCq>)>,
    ) -> Result<(KBox<CqRef>, rdma::CqOut<uabi::CreateCqResp>)> {
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
        c.0.poll(self.cmd.state(), &self.objs, wc)
    }

    fn req_notify_cq(&self, c: &CqRef, solicited: bool, report_missed: bool) -> bool {
        // While the function is down nothing is armed (the doorbells are
        // off): the outstanding WRs complete in software at UNINIT, whose
        // handlers run from `uninit_instance`. A caller that asks for
        // missed events hears whether this CQ still owes such completions
        // (`left_sw_wc`), so that it polls them instead of waiting for an
        // event that never comes.
        if self.cmd.state().is_down() {
            return report_missed && self.objs.qps.busy_on(c.0.cqn);
        }
        c.0.arm(self.cmd.state(), solicited);
        false
    }

    fn modify_cq(&self, c: &CqRef, count: u16, period: u16) -> Result {
        c.0.modify(&self.cq_env(), count, period)
    }
}

// Memory regions.
#[vtable]
impl rdma::MrOps for IbDev {
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
        m.map_sg_end(self.cmd.state(), n, page_size)
    }
}

// Queue pairs.
#[vtable]
impl rdma::QpOps for IbDev {
    type Qp = qp::Qp;
    type QpReq = uabi::CreateQp;
    type QpResp = uabi::CreateQpResp;
    type QpModifyResp = uabi::ModifyQpResp;

    fn create_qp(
        &self,
        init: &mut rdma::QpInit,
        send_cq: Option<&CqRef>,
        recv_cq: Option<&CqRef>,
        ibqp: IbQp,
        user: Option<(rdma::UserCtx<'_, Ucontext>, &UdataReq<uabi::CreateQp>)>,
    ) -> Result<(Pin<KBox<qp::Qp>>, u32, uabi::CreateQpResp)> {
        let mut qi = qp::QpInit::new(*init, user.as_ref().map(|u| u.1));
        let q = self.new_qp(
            &mut qi,
            send_cq.map(|c| c.0.clone()),
            recv_cq.map(|c| c.0.clone()),
            ibqp,
            user.map(|u| u.0),
        )?;
        *init = qi.base;
        let n = q.qpn;
        Ok((
            q,
            n,
            uabi::CreateQpResp {
                cap_flags: qi.cap_flags,
                dwqe_mmap_key: qi.dwqe_mmap_key,
            },
        ))
    }

    fn modify_qp(&self, q: &qp::Qp, a: &rdma::QpAttr) -> Result<Option<uabi::ModifyQpResp>> {
        q.modify(&self.qp_env(), a)
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
    fn post_recv(&self, q: &qp::Qp, wrs: rdma::RecvChain<'_>) -> rdma::PostResult {
        q.post_recv(&self.post_env(), wrs)
    }

    fn qp_is_ud(&self, q: &qp::Qp) -> bool {
        q.is_ud()
    }

    fn post_send(&self, q: &qp::Qp, wrs: rdma::SendChain<'_, mr::Mr>) -> rdma::PostResult {
        q.post_send(&self.post_env(), wrs)
    }

    fn drain(&self, q: &qp::Qp, d: &rdma::Drain<'_, Self>) {
        qp::drain::drain(self.cmd.state(), q, d, |c: &CqRef| c.0.trigger())
    }
}

// Shared receive queues.
#[vtable]
impl rdma::SrqOps for IbDev {
    type Srq = srq::Srq;
    type SrqReq = uabi::CreateSrq;
    type SrqResp = uabi::CreateSrqResp;

    fn create_srq(
        &self,
        args: &mut rdma::SrqArgs,
        ibsrq: rdma::IbSrq,
        user: Option<(rdma::UserCtx<'_, Ucontext>, &UdataReq<uabi::CreateSrq>)>,
    ) -> Result<(KBox<srq::Srq>, uabi::CreateSrqResp)> {
        let u = user.as_ref().map(|(u, r)| srq::UserSrq {
            dev: u.dev(),
            uctx: u.uctx(),
            req: r,
        });
        let s = srq::Srq::create(&self.srq_env(), args, ibsrq, u)?;
        let resp = uabi::CreateSrqResp {
            srqn: s.srqn,
            cap_flags: if s.db_dma().is_some() {
                srq::RSP_SRQ_CAP_RECORD_DB
            } else {
                0
            },
        };
        Ok((s, resp))
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

    fn post_srq_recv(&self, s: &srq::Srq, wrs: rdma::RecvChain<'_>) -> rdma::PostResult {
        s.post_recv(self.cmd.state(), wrs)
    }
}

// The hardware counters.
#[vtable]
impl rdma::CounterOps for IbDev {
    fn query_counters(&self, values: &mut [u64]) -> Result<usize> {
        const DESCS: usize = HW_CNT_TOTAL.div_ceil(CNT_PER_DESC);
        let mut d = chain::<DESCS>(cmq_op::QUERY_COUNTER, true);
        self.cmd.send(&mut d).inspect_err(|e| {
            ibdev_err!(
                self.cmd.state(),
                "failed to get counter",
                ret = e.to_errno()
            )
        })?;
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

// What `rdma res show` prints of the objects.
#[vtable]
impl rdma::RestrackOps for IbDev {
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
}

/// A LAG master the port follows reports its state as the port's: port
/// error when it went down, port active otherwise, each only when the
/// state differs from the last one reported (C's `handle_en_event`).
fn lag_port_event(ev: &NetdevEvent<'_>, port: &PortEvents<'_>) {
    if !ev.lag_master() || !port.swap_last_state(ev.state()) {
        return;
    }
    port.dispatch(if ev.state() == rdma::PORT_DOWN {
        rdma::EVENT_PORT_ERR
    } else {
        rdma::EVENT_PORT_ACTIVE
    });
}
