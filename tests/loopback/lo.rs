// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The loopback device `rlo_N`: an RDMA provider built on the rdma
//! layer's public items only (`crate::rdma`, the same files as
//! `hns_roce_rs`'s), with no `bindings::` and no `unsafe`.
//!
//! What it has: one RoCE port on `lo`, user contexts and PDs (what
//! rdma-core's siw provider asks of the kernel for `ibv_open_device`,
//! `ibv_query_*` and `ibv_alloc_pd`), the DMA MR of kernel PDs, kernel CQs
//! and kernel RC QPs whose SENDs go, in software, to the receive queue of
//! the QP they are connected to on this device (itself or another). A
//! SEND is delivered during `post_send`: the bytes are copied from its
//! SGEs into the receive WR at the head of the destination's receive
//! queue (the scatter of `queue.rs`), and both completions are queued on
//! their CQs. What it does not have is refused with the errno a C driver
//! gives: user CQs and QPs, UD and other QP types, SRQs, XRC, AHs, user
//! and fast-register MRs, RDMA and atomic WRs (`EOPNOTSUPP` at create,
//! `EINVAL` at post).
//!
//! Differences from a wire: no retry. A SEND that finds no receive WR
//! completes with `IB_WC_RNR_RETRY_EXC_ERR`, one whose destination QP is
//! gone or not ready with `IB_WC_RETRY_EXC_ERR`, one longer than the
//! receive WR with `IB_WC_REM_INV_REQ_ERR` (the receive WR with
//! `IB_WC_LOC_LEN_ERR`); the QPs concerned move to ERR, which flushes
//! their receive queues.
//!
//! Locking: one spinlock (IRQ-safe: completion handlers may post) over
//! the device's QP and CQ tables; the CQs' completion handlers are called
//! after it is released.

use crate::queue::{scatter, Ring, Segs, MAX_SGE};
use crate::rdma::{
    self,
    uabi::Empty,
    wc::{RecvAttrs, Wc, WcOpcode, WcStatus},
    AhOps, CounterOps, CqOps, CqOut, DevAttr, DeviceOps, Drain, GidEntry, IbCq, IbLog, IbQp, MrOps,
    MrReq, NoObject, PdOps, PortAttr, PostResult, QpAttr, QpInit, QpOps, QpQuery, RecvChain,
    RestrackOps, SendChain, SpinLockIrq, SrqOps, UcontextOps, UctxNew, UdataReq, UmemDev, UserCtx,
    VirtDma, VirtSeg, WcArray, WrOpcode, XrcdOps,
};
use kernel::{new_spinlock_irq, prelude::*, sync::Arc};

/// QPs and CQs the device has room for.
pub(crate) const MAX_QP: usize = 64;
/// CQs.
pub(crate) const MAX_CQ: usize = 64;
/// Receive WRs a QP holds.
pub(crate) const MAX_QP_WR: u32 = 64;
/// Completions a CQ holds.
pub(crate) const MAX_CQE: u32 = 256;
/// The key of the DMA MR of every kernel PD: the only key SGEs may carry.
pub(crate) const DMA_LKEY: u32 = 0x100;
/// The first QP number (0 and 1 are the special QPs, which this device
/// does not have).
const FIRST_QPN: u32 = 2;
/// The vendor id: no vendor's (as rxe's).
const VENDOR_ID: u32 = 0xff_ffff;
/// The largest message, bytes.
const MAX_MSG: u32 = 1 << 31;

/// A receive WR waiting for a SEND.
#[derive(Clone, Copy)]
struct RecvEnt {
    wr_id: u64,
    segs: Segs<VirtSeg>,
}

/// A completion waiting to be polled.
#[derive(Clone, Copy)]
struct Cqe {
    wc: Wc,
    wr_id: u64,
    qpn: u32,
}

/// A QP in the device's table.
struct QpEnt {
    qpn: u32,
    ibqp: Arc<IbQp>,
    state: u32,
    dest: u32,
    send_cqn: u32,
    recv_cqn: u32,
    sig_all: bool,
    max_send_sge: u32,
    max_recv_sge: u32,
    rq: Ring<RecvEnt, KVec<Option<RecvEnt>>>,
}

/// A CQ in the device's table.
struct CqEnt {
    cqn: u32,
    ibcq: Arc<IbCq>,
    armed: bool,
    ring: Ring<Cqe, KVec<Option<Cqe>>>,
}

/// What the device's lock protects.
struct Engine {
    /// Set once the registration returned it.
    dma: Option<VirtDma>,
    next_qpn: u32,
    next_cqn: u32,
    qps: KVec<QpEnt>,
    cqs: KVec<CqEnt>,
}

/// The CQs whose handler a verb calls once the lock is released.
#[derive(Default)]
struct Notify(Option<Arc<IbCq>>, Option<Arc<IbCq>>);

impl Notify {
    fn add(&mut self, c: Arc<IbCq>) {
        if self.0.is_none() {
            self.0 = Some(c);
        } else if self.1.is_none() {
            self.1 = Some(c);
        }
    }

    fn run(self) {
        for c in [self.0, self.1].into_iter().flatten() {
            c.completion();
        }
    }
}

impl Engine {
    fn qp(&self, qpn: u32) -> Option<usize> {
        self.qps.iter().position(|q| q.qpn == qpn)
    }

    fn cq(&self, cqn: u32) -> Option<usize> {
        self.cqs.iter().position(|c| c.cqn == cqn)
    }

    /// Queues a completion on CQ `cqn` (an overflow raises the CQ's error
    /// event and loses it, as a hardware CQ's overflow does).
    fn complete(&mut self, cqn: u32, e: Cqe, notify: &mut Notify) {
        let Some(i) = self.cq(cqn) else {
            return;
        };
        let c = &mut self.cqs[i];
        if c.ring.push(e).is_err() {
            c.ibcq.error_event();
            return;
        }
        if c.armed {
            c.armed = false;
            notify.add(c.ibcq.clone());
        }
    }

    /// Moves QP `i` to ERR: its receive WRs complete flushed.
    fn fail_qp(&mut self, i: usize, notify: &mut Notify) {
        let q = &mut self.qps[i];
        q.state = rdma::QPS_ERR;
        let (qpn, cqn) = (q.qpn, q.recv_cqn);
        while let Some(r) = self.qps[i].rq.pop() {
            let wc = Wc {
                opcode: Some(WcOpcode::Recv),
                ..Wc::new(WcStatus::WrFlushErr)
            };
            self.complete(
                cqn,
                Cqe {
                    wc,
                    wr_id: r.wr_id,
                    qpn,
                },
                notify,
            );
        }
    }

    /// Delivers a SEND of QP `qpn` (its `src` segments); the status of the
    /// send's completion.
    fn deliver(&mut self, qpn: u32, src: &Segs<VirtSeg>, n: &mut Notify) -> WcStatus {
        let Some(dma) = self.dma else {
            return WcStatus::LocProtErr;
        };
        let Some(mi) = self.qp(qpn) else {
            return WcStatus::GeneralErr;
        };
        let dest = self.qps[mi].dest;
        let Some(di) = self
            .qp(dest)
            .filter(|&d| matches!(self.qps[d].state, rdma::QPS_RTR | rdma::QPS_RTS))
        else {
            self.fail_qp(mi, n);
            return WcStatus::RetryExcErr;
        };
        let Some(r) = self.qps[di].rq.pop() else {
            self.fail_qp(mi, n);
            return WcStatus::RnrRetryExcErr;
        };
        let mut slen = [0usize; MAX_SGE];
        let mut dlen = [0usize; MAX_SGE];
        src.iter()
            .zip(slen.iter_mut())
            .for_each(|(s, l)| *l = s.len());
        r.segs
            .iter()
            .zip(dlen.iter_mut())
            .for_each(|(s, l)| *l = s.len());
        let mut failed = false;
        let total = scatter(&slen, &dlen, |st| {
            if let (Some(d), Some(s)) = (r.segs.get(st.dst), src.get(st.src)) {
                failed |= dma.copy(d, st.dst_off, s, st.src_off, st.len).is_err();
            }
        });
        let (recv_cqn, dqpn) = (self.qps[di].recv_cqn, self.qps[di].qpn);
        let (recv, send) = match total {
            Some(len) if !failed => (
                Wc {
                    opcode: Some(WcOpcode::Recv),
                    // CAST: at most four SGEs of u32 lengths, below MAX_MSG
                    // as checked at the post.
                    byte_len: Some(len as u32),
                    recv: Some(RecvAttrs {
                        src_qp: qpn,
                        port_num: 1,
                        vlan_id: 0xffff,
                        ..RecvAttrs::default()
                    }),
                    ..Wc::new(WcStatus::Success)
                },
                WcStatus::Success,
            ),
            _ => (
                Wc {
                    opcode: Some(WcOpcode::Recv),
                    ..Wc::new(WcStatus::LocLenErr)
                },
                WcStatus::RemInvReqErr,
            ),
        };
        let ok = send == WcStatus::Success;
        self.complete(
            recv_cqn,
            Cqe {
                wc: recv,
                wr_id: r.wr_id,
                qpn: dqpn,
            },
            n,
        );
        if !ok {
            self.fail_qp(di, n);
            self.fail_qp(mi, n);
        }
        send
    }
}

/// The loopback device.
#[pin_data]
pub(crate) struct LoDev {
    log: IbLog,
    #[pin]
    eng: SpinLockIrq<Engine>,
}

impl LoDev {
    /// A device with no objects, its tables allocated.
    pub(crate) fn new() -> Result<Arc<Self>> {
        let qps = KVec::with_capacity(MAX_QP, GFP_KERNEL)?;
        let cqs = KVec::with_capacity(MAX_CQ, GFP_KERNEL)?;
        Arc::pin_init(
            pin_init!(Self {
                log: IbLog::new(),
                eng <- new_spinlock_irq!(Engine {
                    dma: None,
                    next_qpn: FIRST_QPN,
                    next_cqn: 1,
                    qps,
                    cqs,
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// Gives the device its access to kernel WRs' buffers (from the
    /// registration).
    pub(crate) fn set_dma(&self, dma: VirtDma) {
        self.eng.lock().dma = Some(dma);
    }

    /// A ring of `n` empty slots.
    fn slots<T>(n: usize) -> Result<KVec<Option<T>>> {
        let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            v.push(None, GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// The scatter list of `sges` if there are at most `max` of them and,
    /// unless the data is inline (no key needed), every key is the DMA
    /// MR's.
    fn segs(dma: VirtDma, sges: &[rdma::Sge], max: u32, inline: bool) -> Option<Segs<VirtSeg>> {
        // CAST: at most a few SGEs.
        if sges.len() > max as usize || !inline && sges.iter().any(|s| s.lkey() != DMA_LKEY) {
            return None;
        }
        Segs::new(sges.iter().map(|s| dma.seg(s)))
    }
}

/// A CQ: its number in the device's table.
pub(crate) struct LoCq(u32);
/// A QP: its number.
pub(crate) struct LoQp(u32);
/// The DMA MR of a kernel PD.
pub(crate) struct LoMr;

#[vtable]
impl DeviceOps for LoDev {
    fn ib_log(&self) -> &IbLog {
        &self.log
    }

    fn query_device(&self, a: &mut DevAttr) {
        *a = DevAttr {
            fw_ver: 1 << 32,
            max_mr_size: u64::MAX,
            page_size_cap: 4096,
            vendor_id: VENDOR_ID,
            max_qp: MAX_QP as u32,
            max_qp_wr: MAX_QP_WR,
            // CAST: a small constant.
            max_send_sge: MAX_SGE as u32,
            // CAST: as above.
            max_recv_sge: MAX_SGE as u32,
            max_cq: MAX_CQ as u32,
            max_cqe: MAX_CQE,
            max_mr: 1,
            max_pd: 1 << 16,
            max_pkeys: 1,
            ..DevAttr::default()
        };
    }

    fn query_port(&self, _port: u32, a: &mut PortAttr) {
        a.max_mtu = rdma::MTU_4096;
        a.active_mtu = a.ndev_mtu.min(rdma::MTU_4096);
        a.state = a.ndev_state;
        a.phys_state = if a.ndev_state == rdma::PORT_ACTIVE {
            rdma::PORT_PHYS_STATE_LINK_UP
        } else {
            rdma::PORT_PHYS_STATE_DISABLED
        };
        a.gid_tbl_len = 16;
        a.max_msg_sz = MAX_MSG;
        a.pkey_tbl_len = 1;
    }

    fn fw_ver(&self) -> u64 {
        1 << 32
    }

    fn set_gid(&self, _index: u32, _entry: Option<GidEntry<'_>>) -> Result {
        // No hardware table: the core's cache is the table.
        Ok(())
    }
}

#[vtable]
impl UcontextOps for LoDev {
    type Ucontext = ();
    // No driver data either way, no doorbell page.
    type UctxReq = Empty;
    type UctxResp = Empty;

    fn alloc_ucontext(&self, _req: &Empty) -> Result<UctxNew<(), Empty>> {
        Ok(UctxNew {
            uctx: Arc::new((), GFP_KERNEL)?,
            resp: Empty,
            config: 0,
            db_page: None,
        })
    }

    fn dealloc_ucontext(&self, _uctx: Arc<()>) {}
}

#[vtable]
impl PdOps for LoDev {
    type PdResp = Empty;

    fn alloc_pd(&self) -> Result<(u32, Empty)> {
        // The PD number is not used: one DMA key serves every PD.
        Ok((1, Empty))
    }

    fn dealloc_pd(&self, _pdn: u32) {}
}

#[vtable]
impl XrcdOps for LoDev {}

#[vtable]
impl AhOps for LoDev {
    type AhResp = Empty;
}

#[vtable]
impl CqOps for LoDev {
    type Cq = LoCq;
    type CqReq = Empty;
    type CqResp = Empty;

    fn create_cq(
        &self,
        cqe: u32,
        _vector: u32,
        ibcq: IbCq,
        user: Option<(UserCtx<'_, ()>, &UdataReq<Empty>)>,
    ) -> Result<(KBox<LoCq>, CqOut<Empty>)> {
        if user.is_some() {
            return Err(EOPNOTSUPP);
        }
        if cqe == 0 || cqe > MAX_CQE {
            return Err(EINVAL);
        }
        let depth = cqe.next_power_of_two();
        // CAST: at most MAX_CQE.
        let ring = Ring::new(Self::slots(depth as usize)?);
        let ibcq = Arc::new(ibcq, GFP_KERNEL)?;
        let mut e = self.eng.lock();
        if e.cqs.len() == MAX_CQ {
            return Err(ENOMEM);
        }
        let cqn = e.next_cqn;
        let ent = CqEnt {
            cqn,
            ibcq,
            armed: false,
            ring,
        };
        // Never allocates: the table's capacity is MAX_CQ.
        e.cqs.push(ent, GFP_ATOMIC)?;
        e.next_cqn = cqn.wrapping_add(1).max(1);
        drop(e);
        let out = CqOut {
            depth,
            cqn,
            resp: Empty,
        };
        Ok((KBox::new(LoCq(cqn), GFP_KERNEL)?, out))
    }

    fn destroy_cq(&self, cq: KBox<LoCq>) {
        let mut e = self.eng.lock();
        let gone = e.cq(cq.0).and_then(|i| e.cqs.remove(i).ok());
        drop(e);
        drop(gone);
    }

    fn poll_cq(&self, cq: &LoCq, wc: &mut WcArray<'_>) -> usize {
        let mut e = self.eng.lock();
        let Some(ci) = e.cq(cq.0) else {
            return 0;
        };
        let mut n = 0;
        while n < wc.len() {
            let Some(c) = e.cqs[ci].ring.pop() else {
                break;
            };
            // Every completion's QP is in the table: destroying a QP
            // removes its completions first.
            if let Some(qi) = e.qp(c.qpn) {
                wc.set(n, &c.wc, c.wr_id, &e.qps[qi].ibqp);
                n += 1;
            }
        }
        n
    }

    fn req_notify_cq(&self, cq: &LoCq, _solicited: bool, report_missed: bool) -> bool {
        let mut e = self.eng.lock();
        let Some(ci) = e.cq(cq.0) else {
            return false;
        };
        let c = &mut e.cqs[ci];
        c.armed = true;
        report_missed && !c.ring.is_empty()
    }
}

#[vtable]
impl MrOps for LoDev {
    type Mr = LoMr;

    fn get_dma_mr(&self, _pdn: u32, _access: u32) -> Result<(Pin<KBox<LoMr>>, u32)> {
        Ok((KBox::pin(LoMr, GFP_KERNEL)?, DMA_LKEY))
    }

    /// No user MRs; but the op must exist: the RDMA core offers a device
    /// to kernel clients (`kverbs_provider`) only if it has every op of
    /// its mandatory list, `reg_user_mr` among them.
    fn reg_user_mr(&self, _dev: UmemDev<'_>, _req: &MrReq) -> Result<(Pin<KBox<LoMr>>, u32)> {
        Err(EOPNOTSUPP)
    }

    fn dereg_mr(&self, _mr: Pin<KBox<LoMr>>) {}
}

#[vtable]
impl QpOps for LoDev {
    type Qp = LoQp;
    type QpReq = Empty;
    type QpResp = Empty;
    type QpModifyResp = Empty;

    fn create_qp(
        &self,
        init: &mut QpInit,
        send_cq: Option<&LoCq>,
        recv_cq: Option<&LoCq>,
        ibqp: IbQp,
        user: Option<(UserCtx<'_, ()>, &UdataReq<Empty>)>,
    ) -> Result<(Pin<KBox<LoQp>>, u32, Empty)> {
        if user.is_some() || init.user || init.qp_type != rdma::QPT_RC {
            return Err(EOPNOTSUPP);
        }
        if init.has_srq || init.has_xrcd || init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        let (Some(scq), Some(rcq)) = (send_cq, recv_cq) else {
            return Err(EINVAL);
        };
        // CAST: a small constant.
        let sge = MAX_SGE as u32;
        if init.max_send_wr > MAX_QP_WR
            || init.max_recv_wr > MAX_QP_WR
            || init.max_send_sge > sge
            || init.max_recv_sge > sge
        {
            return Err(EINVAL);
        }
        init.max_send_wr = init.max_send_wr.max(1);
        init.max_recv_wr = init.max_recv_wr.max(1);
        init.max_send_sge = init.max_send_sge.max(1);
        init.max_recv_sge = init.max_recv_sge.max(1);
        // CAST: at most MAX_QP_WR.
        let rq = Ring::new(Self::slots(init.max_recv_wr as usize)?);
        let ibqp = Arc::new(ibqp, GFP_KERNEL)?;
        let mut e = self.eng.lock();
        if e.qps.len() == MAX_QP {
            return Err(ENOMEM);
        }
        let mut qpn = e.next_qpn;
        while e.qp(qpn).is_some() {
            qpn = qpn.wrapping_add(1).max(FIRST_QPN) & 0xff_ffff;
        }
        let ent = QpEnt {
            qpn,
            ibqp,
            state: rdma::QPS_RESET,
            dest: 0,
            send_cqn: scq.0,
            recv_cqn: rcq.0,
            sig_all: init.sq_sig_type == rdma::SIGNAL_ALL_WR,
            max_send_sge: init.max_send_sge,
            max_recv_sge: init.max_recv_sge,
            rq,
        };
        // Never allocates: the table's capacity is MAX_QP.
        e.qps.push(ent, GFP_ATOMIC)?;
        e.next_qpn = (qpn + 1).max(FIRST_QPN) & 0xff_ffff;
        drop(e);
        Ok((KBox::pin(LoQp(qpn), GFP_KERNEL)?, qpn, Empty))
    }

    fn modify_qp(&self, qp: &LoQp, attr: &QpAttr) -> Result<Option<Empty>> {
        let mut n = Notify::default();
        let mut e = self.eng.lock();
        let i = e.qp(qp.0).ok_or(EINVAL)?;
        let cur = if attr.mask & rdma::qp_attr::CUR_STATE != 0 {
            attr.cur_qp_state
        } else {
            e.qps[i].state
        };
        let next = if attr.mask & rdma::qp_attr::STATE != 0 {
            attr.qp_state
        } else {
            cur
        };
        if !rdma::modify_qp_is_ok(cur, next, rdma::QPT_RC, attr.mask) {
            return Err(EINVAL);
        }
        if attr.mask & rdma::qp_attr::DEST_QPN != 0 {
            e.qps[i].dest = attr.dest_qp_num;
        }
        if next == rdma::QPS_ERR {
            e.fail_qp(i, &mut n);
        } else if next == rdma::QPS_RESET {
            let q = &mut e.qps[i];
            q.state = next;
            q.rq.retain(|_| false);
        } else {
            e.qps[i].state = next;
        }
        drop(e);
        n.run();
        Ok(None)
    }

    fn destroy_qp(&self, qp: Pin<KBox<LoQp>>) {
        let mut e = self.eng.lock();
        let qpn = qp.0;
        let gone = e.qp(qpn).and_then(|i| e.qps.remove(i).ok());
        for c in e.cqs.iter_mut() {
            c.ring.retain(|x| x.qpn != qpn);
        }
        drop(e);
        drop(gone);
    }

    fn query_qp(&self, qp: &LoQp, q: &mut QpQuery) -> Result {
        let e = self.eng.lock();
        let i = e.qp(qp.0).ok_or(EINVAL)?;
        let ent = &e.qps[i];
        q.state = ent.state;
        q.dest_qp_num = ent.dest;
        q.max_send_sge = ent.max_send_sge;
        q.max_recv_sge = ent.max_recv_sge;
        // CAST: at most MAX_QP_WR.
        q.max_recv_wr = ent.rq.capacity() as u32;
        q.sq_sig_type = if ent.sig_all { rdma::SIGNAL_ALL_WR } else { 0 };
        Ok(())
    }

    fn post_recv(&self, qp: &LoQp, wrs: RecvChain<'_>) -> PostResult {
        let mut n = Notify::default();
        let mut e = self.eng.lock();
        let mut r = Ok(());
        for (k, wr) in wrs.enumerate() {
            let (Some(i), Some(dma)) = (e.qp(qp.0), e.dma) else {
                r = Err((k, EINVAL));
                break;
            };
            let q = &e.qps[i];
            let Some(segs) = LoDev::segs(dma, wr.sges, q.max_recv_sge, false) else {
                r = Err((k, EINVAL));
                break;
            };
            if q.state == rdma::QPS_RESET {
                r = Err((k, EINVAL));
                break;
            }
            if q.state == rdma::QPS_ERR {
                let (qpn, cqn) = (q.qpn, q.recv_cqn);
                let wc = Wc {
                    opcode: Some(WcOpcode::Recv),
                    ..Wc::new(WcStatus::WrFlushErr)
                };
                e.complete(
                    cqn,
                    Cqe {
                        wc,
                        wr_id: wr.wr_id,
                        qpn,
                    },
                    &mut n,
                );
                continue;
            }
            let ent = RecvEnt {
                wr_id: wr.wr_id,
                segs,
            };
            if e.qps[i].rq.push(ent).is_err() {
                r = Err((k, ENOMEM));
                break;
            }
        }
        drop(e);
        n.run();
        r
    }

    fn qp_is_ud(&self, _qp: &LoQp) -> bool {
        false
    }

    fn post_send(&self, qp: &LoQp, wrs: SendChain<'_, LoMr>) -> PostResult {
        let mut n = Notify::default();
        let mut e = self.eng.lock();
        let mut r = Ok(());
        for (k, wr) in wrs.enumerate() {
            let (Some(i), Some(dma)) = (e.qp(qp.0), e.dma) else {
                r = Err((k, EINVAL));
                break;
            };
            let q = &e.qps[i];
            let (qpn, cqn, state) = (q.qpn, q.send_cqn, q.state);
            let signaled = q.sig_all || wr.flags() & rdma::SEND_SIGNALED != 0;
            let status = if state == rdma::QPS_ERR {
                // Flushed, whatever the opcode (the drain's WRITE too).
                WcStatus::WrFlushErr
            } else if state != rdma::QPS_RTS || wr.opcode() != WrOpcode::Send {
                r = Err((k, EINVAL));
                break;
            } else {
                let total: u64 = wr.sges().iter().map(|s| u64::from(s.length())).sum();
                let inline = wr.flags() & rdma::SEND_INLINE != 0;
                match LoDev::segs(dma, wr.sges(), q.max_send_sge, inline) {
                    // CAST: at most MAX_SGE.
                    None if wr.sges().len() > q.max_send_sge as usize => {
                        r = Err((k, EINVAL));
                        break;
                    }
                    None => {
                        e.fail_qp(i, &mut n);
                        WcStatus::LocProtErr
                    }
                    Some(_) if total > u64::from(MAX_MSG) => {
                        e.fail_qp(i, &mut n);
                        WcStatus::LocLenErr
                    }
                    Some(src) => e.deliver(qpn, &src, &mut n),
                }
            };
            if signaled || status != WcStatus::Success {
                let wc = Wc {
                    opcode: Some(WcOpcode::Send),
                    ..Wc::new(status)
                };
                e.complete(
                    cqn,
                    Cqe {
                        wc,
                        wr_id: wr.wr_id(),
                        qpn,
                    },
                    &mut n,
                );
            }
        }
        drop(e);
        n.run();
        r
    }

    fn drain(&self, _qp: &LoQp, d: &Drain<'_, Self>) {
        // The generic drain: ERR flushes every WR at once, the drain WR's
        // completion included.
        if d.to_err().is_err() || d.post().is_err() {
            return;
        }
        if d.polled_directly() {
            d.poll_until_done(10);
        }
    }
}

#[vtable]
impl SrqOps for LoDev {
    type Srq = NoObject;
    type SrqReq = Empty;
    type SrqResp = Empty;
}

#[vtable]
impl CounterOps for LoDev {}

#[vtable]
impl RestrackOps for LoDev {}
