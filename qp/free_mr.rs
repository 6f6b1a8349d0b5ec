// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! HIP08's free-MR workaround (the C driver's `free_mr_*` and
//! `hns_roce_v2_dereg_mr`): a PD, a CQ and eight RC QPs, one per service
//! level, each connected to itself. Before an MR's context goes, every QP
//! posts a zero-length RDMA WRITE and the round waits for their
//! completions, so that the engine holds nothing of the MR any more.
//!
//! As in C the objects are the driver's own: no `ib_pd`, `ib_cq` or
//! `ib_qp`, nothing in `rdma res`. Where C moves a QP to ERR from its
//! flush work (an error completion, a post on a QP in ERR, an event), the
//! round does it itself, after posting and after each poll, through the
//! same modify as that work: the QPs have no `ib_qp` the work could go
//! through. The number of those moves per round follows the events, as
//! C's does (docs/c-driver-findings.md, finding 14).

use super::{attr, Qp, QpEnv};
use crate::cq::Cq;
use crate::device::IbDev;
use crate::hns_roce_hw_v2::consts::free_mr as fmr;
use crate::hns_roce_hw_v2::qpc::{qpt, QpState};
use crate::mr::Mr;
use crate::rdma::{QpAttr, WcBuf, ZeroWrite, ACCESS_REMOTE_WRITE, MTU_256};
use kernel::{
    prelude::*,
    sync::Arc,
    time::{Delta, Instant, Monotonic},
    types::ScopeGuard, //
};

/// How many QPs (and completions per round): one per service level.
const QP_NUM: usize = fmr::QP_NUM as usize;

/// The reserved objects (`struct hns_roce_v2_free_mr`; its mutex is the
/// one the device keeps this in).
pub(crate) struct FreeMr {
    pdn: u32,
    cq: Option<Arc<Cq>>,
    qps: KVec<Pin<KBox<Qp>>>,
}

impl FreeMr {
    /// Creates the PD, the CQ and the QPs and connects each QP to itself
    /// (`free_mr_init`). On failure what was made is destroyed again.
    pub(crate) fn new(dev: &IbDev) -> Result<Self> {
        // The vector before the PD: nothing to give back if it fails.
        let qps = KVec::with_capacity(QP_NUM, GFP_KERNEL)?;
        // What `populate` made goes if it fails half way.
        let mut fm = ScopeGuard::new_with_data(
            FreeMr {
                pdn: dev.reserved_pd()?,
                cq: None,
                qps,
            },
            |fm| fm.destroy(dev),
        );
        fm.populate(dev)?;
        Ok(fm.dismiss())
    }

    fn populate(&mut self, dev: &IbDev) -> Result {
        let cq = dev.reserved_cq(fmr::CQE_NUM).inspect_err(|_| {
            ibdev_err!(dev.state(), "failed to create cq for free mr.\n");
        })?;
        self.cq = Some(cq.clone());
        for _ in 0..QP_NUM {
            // The QPs name no PD (C creates them with a NULL `ib_pd`, so
            // their contexts carry PD 0; the PD above only takes its
            // number).
            let base = crate::rdma::QpInit {
                qp_type: qpt::RC,
                max_send_wr: fmr::SQWQE_NUM,
                max_send_sge: fmr::SQSGE_NUM,
                max_recv_wr: fmr::RQWQE_NUM,
                max_recv_sge: fmr::RQSGE_NUM,
                ..Default::default()
            };
            let mut init = super::QpInit::new(base, None);
            let q = dev
                .reserved_qp(&mut init, cq.clone())
                .inspect_err(|_| ibdev_err!(dev.state(), "failed to create qp for free mr.\n"))?;
            // Within the capacity reserved in `new`: no growth path.
            self.qps.push_within_capacity(q)?;
        }
        let env = dev.qp_env();
        for (sl, q) in self.qps.iter().enumerate() {
            // CAST: at most 7.
            q.connect_to_self(&env, sl as u8)?;
        }
        Ok(())
    }

    /// Destroys the QPs, the CQ and the PD (`free_mr_exit`).
    pub(crate) fn destroy(mut self, dev: &IbDev) {
        let env = dev.qp_env();
        // In creation order, as C.
        for q in self.qps.drain_all() {
            q.destroy(&env);
        }
        if let Some(cq) = self.cq.take() {
            dev.drop_cq(&cq);
        }
        dev.drop_reserved_pd(self.pdn);
    }

    /// One round (`free_mr_send_cmd_to_hw`): a zero-length RDMA WRITE on
    /// every QP, then their completions, for at most 4.5 s.
    pub(crate) fn round(&self, env: &QpEnv<'_>) {
        let Some(cq) = &self.cq else {
            return;
        };
        let mut left = 0usize;
        for q in self.qps.iter() {
            // Unsignaled in the WR, signaled by the QP (all WRs are).
            let wr = ZeroWrite::new();
            if let Err((_, e)) = q.post_send(&env.post(), wr.as_chain::<Mr>()) {
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to post wqe for free mr",
                    ret = e.to_errno()
                );
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to send wqe (qp:{:#x}) for free mr, ret = {}.\n",
                    q.qpn,
                    e.to_errno()
                );
                break;
            }
            left += 1;
        }
        // A QP in ERR took its WR without a doorbell and asked for the
        // move that flushes it.
        self.move_flushed(env);
        let start = Instant::<Monotonic>::now();
        let mut wc = WcBuf::<QP_NUM>::new();
        while left > 0 {
            let n = cq.poll(env.cmd.state(), env.objs, &mut wc.array(left));
            self.move_flushed(env);
            if start.elapsed() > Delta::from_millis(i64::from(fmr::TIMEOUT)) {
                ibdev_err_ratelimited!(
                    env.cmd,
                    "failed to poll cqe for free mr and timeout, remain {} cqe.\n",
                    left
                );
                return;
            }
            left = left.saturating_sub(n);
        }
    }

    /// Moves the QPs that asked for it to ERR (C's `flush_work_handle`).
    fn move_flushed(&self, env: &QpEnv<'_>) {
        for q in self.qps.iter() {
            if q.core.take_flush() {
                let err = QpAttr {
                    mask: attr::STATE,
                    qp_state: QpState::Err as u32,
                    ..QpAttr::default()
                };
                if let Err(e) = q.modify(env, &err) {
                    hdev_err!(
                        env.cmd.state().device(),
                        "modify QP to error state failed({}) during CQE flush\n",
                        e.to_errno()
                    );
                }
            }
        }
    }
}

impl Qp {
    /// RESET straight to INIT (as INIT→INIT), RTR looping back to itself,
    /// RTS (`free_mr_modify_rsv_qp`), with the engine modify alone: no
    /// checks and no current state of its own, as C calls
    /// `hw->modify_qp`. C asks for INIT→INIT while the QP is in RESET, so
    /// the QP's context never gets the queue geometry RESET→INIT writes;
    /// this is reproduced (docs/c-driver-findings.md, finding 13).
    fn connect_to_self(&self, env: &QpEnv<'_>, sl: u8) -> Result {
        let mut a = QpAttr {
            mask: attr::STATE | attr::PKEY_INDEX | attr::PORT | attr::ACCESS_FLAGS,
            qp_state: QpState::Init as u32,
            port_num: 1,
            access: ACCESS_REMOTE_WRITE,
            ..QpAttr::default()
        };
        let mut soft = self.soft.lock();
        self.hw_modify(env, &mut soft, &a, QpState::Init, QpState::Init)
            .inspect_err(|e| {
                ibdev_err_ratelimited!(env.cmd, "failed to modify qp to init", ret = e.to_errno())
            })?;
        a.mask = attr::STATE
            | attr::AV
            | attr::PATH_MTU
            | attr::DEST_QPN
            | attr::RQ_PSN
            | attr::MAX_DEST_RD_ATOMIC
            | attr::MIN_RNR_TIMER;
        a.qp_state = QpState::Rtr as u32;
        // Only the SL of the address is used (a QP of this kind loops back).
        a.sl = sl;
        a.path_mtu = MTU_256;
        a.dest_qp_num = self.qpn;
        a.rq_psn = fmr::PSN;
        self.hw_modify(env, &mut soft, &a, QpState::Init, QpState::Rtr)
            .inspect_err(|e| {
                ibdev_err!(env.cmd, "failed to modify qp to rtr", ret = e.to_errno())
            })?;
        a.mask = attr::STATE
            | attr::SQ_PSN
            | attr::RETRY_CNT
            | attr::TIMEOUT
            | attr::RNR_RETRY
            | attr::MAX_QP_RD_ATOMIC;
        a.qp_state = QpState::Rts as u32;
        a.sq_psn = fmr::PSN;
        a.retry_cnt = fmr::QP_RETRY_CNT;
        a.timeout = fmr::QP_TIMEOUT;
        self.hw_modify(env, &mut soft, &a, QpState::Rtr, QpState::Rts)
            .inspect_err(|e| ibdev_err!(env.cmd, "failed to modify qp to rts", ret = e.to_errno()))
    }
}
