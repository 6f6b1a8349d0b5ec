// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Modifying a QP (`hns_roce_modify_qp`, `hns_roce_v2_modify_qp`): the
//! attribute checks, the state transitions and the QPC fields each one
//! sets (`hns_roce_v2_set_abs_fields`, `modify_qp_init_to_rtr`), the
//! optional fields and the address vector (`hns_roce_v2_set_opt_fields`,
//! `hns_roce_v2_set_path`), MODIFY_QPC, and clearing a kernel QP moved to
//! RESET. The QP itself and its create, query and destroy are in `qp.rs`.

use super::{attr, mtu_bytes, serv_type, Qp, QpEnv, RqDb, Soft};
use crate::cmdq::{write_context, DevState};
use crate::device::{UCTX_CQE_INLINE, UCTX_RQ_INLINE};
use crate::hem::HemType;
use crate::hns_roce_hw_v2::consts::{cap_flag, mbox};
use crate::hns_roce_hw_v2::qpc::{self as qpc, qpt, QpState, QpcImage};
use crate::rdma::{trace, QpAttr, TC_MAP_MODE_DSCP};
use crate::uabi::ModifyQpResp;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

impl Qp {
    /// `hns_roce_modify_qp` + `hns_roce_v2_modify_qp`; what a user modify
    /// answers (none for RESET to RESET).
    pub(crate) fn modify(&self, env: &QpEnv<'_>, a: &QpAttr) -> Result<Option<ModifyQpResp>> {
        let mut soft = self.soft.lock();
        if a.mask & attr::CUR_STATE != 0 && a.cur_qp_state != soft.state as u32 {
            return Err(EINVAL);
        }
        let cur = soft.state;
        let new = if a.mask & attr::STATE != 0 {
            QpState::from_ib(a.qp_state).ok_or(EINVAL)?
        } else {
            cur
        };
        // A user QP is flushed up to the heads libhns recorded.
        if self.user && a.mask & attr::STATE != 0 && new == QpState::Err {
            let Some(sdb) = &self.sdb else {
                ibdev_warn!(&env.cmd, "flush cqe is not supported in userspace!\n");
                return Err(EINVAL);
            };
            self.core.sq.lock().head = sdb.read();
            if let Some(RqDb::User(rdb)) = &self.rdb {
                self.core.rq.lock().head = rdb.read();
            }
        }
        if !crate::rdma::modify_qp_is_ok(cur as u32, new as u32, self.qp_type, a.mask) {
            ibdev_err!(&env.cmd, "ib_modify_qp_is_ok failed\n");
            return Err(EINVAL);
        }
        self.check_attr(env, a)?;
        if cur == QpState::Reset && new == QpState::Reset {
            return Ok(None);
        }
        self.hw_modify(env, &mut soft, a, cur, new)?;
        Ok(Some(ModifyQpResp {
            tc_mode: soft.tc_mode,
            // CAST: the service level is at most 7.
            priority: soft.sl as u8,
            ..Default::default()
        }))
    }

    /// `hns_roce_check_qp_attr`.
    fn check_attr(&self, env: &QpEnv<'_>, a: &QpAttr) -> Result {
        let c = env.caps;
        if a.mask & attr::PORT != 0 && (a.port_num == 0 || a.port_num > 1) {
            ibdev_err!(&env.cmd, "invalid attr, port_num = {}.\n", a.port_num);
            return Err(EINVAL);
        }
        if a.mask & attr::PKEY_INDEX != 0 && a.pkey_index >= c.pkey_table_len {
            ibdev_err!(&env.cmd, "invalid attr, pkey_index = {}.\n", a.pkey_index);
            return Err(EINVAL);
        }
        if a.mask & attr::MAX_QP_RD_ATOMIC != 0 && a.max_rd_atomic > c.max_qp_init_rdma {
            ibdev_err!(
                &env.cmd,
                "invalid attr, max_rd_atomic = {}.\n",
                a.max_rd_atomic
            );
            return Err(EINVAL);
        }
        if a.mask & attr::MAX_DEST_RD_ATOMIC != 0 && a.max_dest_rd_atomic > c.max_qp_dest_rdma {
            ibdev_err!(
                &env.cmd,
                "invalid attr, max_dest_rd_atomic = {}.\n",
                a.max_dest_rd_atomic
            );
            return Err(EINVAL);
        }
        if a.mask & attr::PATH_MTU != 0 {
            // IB_MTU_2048 is 4.
            let too_big = c.max_mtu >= 4 && a.path_mtu > c.max_mtu;
            if too_big || a.path_mtu < 1 || a.path_mtu > a.active_mtu {
                ibdev_err!(
                    &env.cmd,
                    "attr path_mtu({})invalid while modify qp",
                    a.path_mtu
                );
                return Err(EINVAL);
            }
        }
        Ok(())
    }

    /// The engine part of a modify: context and mask, MODIFY_QPC, then the
    /// software state.
    pub(super) fn hw_modify(
        &self,
        env: &QpEnv<'_>,
        soft: &mut Soft,
        a: &QpAttr,
        cur: QpState,
        new: QpState,
    ) -> Result {
        if a.mask & !attr::STANDARD != 0 {
            return Err(EOPNOTSUPP);
        }
        let mut img = QpcImage::new();
        self.abs_fields(env, &mut img, a, cur, new)?;
        if new == QpState::Err && self.qp_type != qpt::XRC_TGT {
            let sq_head = {
                let sq = self.core.sq.lock();
                trace::flush(trace::Queue::Sq, self.qpn, sq.head);
                self.core
                    .state
                    .store(QpState::Err as u32, Ordering::Relaxed);
                sq.head
            };
            let rq_head = if self.srqn.is_none() && self.qp_type != qpt::XRC_INI {
                let rq = self.core.rq.lock();
                trace::flush(trace::Queue::Rq, self.qpn, rq.head);
                Some(rq.head)
            } else {
                None
            };
            qpc::set_flushed(&mut img, sq_head, rq_head);
        }
        self.opt_fields(env, &mut img, a, soft)?;
        let inv_credit = serv_type(self.qp_type) == qpc::serv::XRC || self.srqn.is_some();
        qpc::finish(&mut img, new, inv_credit);
        let (words, n) = img.mailbox_words(env.caps.qpc_sz);
        let r = words
            .get(..n)
            .ok_or(EINVAL)
            .and_then(|w| write_context(env.cmd, env.dev, mbox::MODIFY_QPC, self.qpn, w));
        if let Err(e) = r {
            ibdev_err_ratelimited!(&env.cmd, "failed to modify QP", ret = e.to_errno());
            return Err(e);
        }
        soft.state = new;
        self.core.state.store(new as u32, Ordering::Relaxed);
        if a.mask & attr::QKEY != 0 {
            self.core.qkey.store(a.qkey, Ordering::Relaxed);
        }
        if a.mask & attr::PATH_MTU != 0 {
            self.core.path_mtu.store(a.path_mtu, Ordering::Relaxed);
        }
        if a.mask & attr::ACCESS_FLAGS != 0 {
            soft.atomic_rd_en = a.access;
        }
        if a.mask & attr::MAX_DEST_RD_ATOMIC != 0 {
            soft.resp_depth = a.max_dest_rd_atomic;
        }
        if new == QpState::Reset {
            // A flush queued for the old life must not move the new one to
            // ERR (C lets it: docs/c-driver-findings.md, finding 4).
            self.core.cancel_flush();
            if !self.user {
                self.clear(env.cmd.state());
            }
        }
        Ok(())
    }

    /// `hns_roce_v2_set_abs_fields`.
    fn abs_fields(
        &self,
        env: &QpEnv<'_>,
        img: &mut QpcImage,
        a: &QpAttr,
        cur: QpState,
        new: QpState,
    ) -> Result {
        use QpState::{Init, Reset, Rtr, Rts};
        if !qpc::transition_ok(cur, new) {
            return Err(EINVAL);
        }
        match (cur, new) {
            (Reset, Init) => qpc::reset_to_init(img, &self.init_params(env)),
            (Init, Init) => qpc::init_to_init(img, &self.init_params(env)),
            (Init, Rtr) => {
                let p = self.rtr_params(env, a).inspect_err(|e| {
                    ibdev_err!(&env.cmd, "failed to config rq buf", ret = e.to_errno())
                })?;
                qpc::init_to_rtr(img, &p);
            }
            (Rtr, Rts) => {
                // No alternate path and no path migration on this engine.
                if a.mask & (attr::ALT_PATH | attr::PATH_MIG_STATE) != 0 {
                    ibdev_err!(&env.cmd, "RTR2RTS attr_mask ({:#x})error\n", a.mask);
                    return Err(EINVAL);
                }
                let sq = self.mtr.find(0).ok_or_else(|| {
                    ibdev_err!(
                        &env.cmd,
                        "failed to find QP({:#x}) SQ WQE buf, ret = {}.\n",
                        self.qpn,
                        EINVAL.to_errno()
                    );
                    EINVAL
                })?;
                let sge = if self.sizes.sge_cnt > 0 {
                    self.mtr.find(self.sge_offset).ok_or(EINVAL)?
                } else {
                    0
                };
                qpc::rtr_to_rts(img, sq, sge);
            }
            _ => {}
        }
        Ok(())
    }

    fn init_params(&self, env: &QpEnv<'_>) -> qpc::InitParams {
        qpc::InitParams {
            serv_type: serv_type(self.qp_type),
            pdn: self.pdn,
            rq_max_gs: self.sizes.rq_max_gs,
            sge_cnt: self.sizes.sge_cnt,
            sq_wqe_cnt: self.sizes.sq_wqe_cnt,
            rq_wqe_cnt: self.sizes.rq_wqe_cnt,
            rq_record_db: self.rdb.is_some(),
            rdb_dma: self.rdb.as_ref().map_or(0, |d| d.dma()),
            owner_db: self.owner_db,
            rx_cqn: self.recv_cqn,
            tx_cqn: self.send_cqn,
            srqn: self.srqn,
            xrcdn: if self.qp_type == qpt::XRC_TGT {
                self.xrcdn
            } else {
                None
            },
            v3: env.caps.qpc_sz >= qpc::V3_QPC_SZ,
            stash: env.caps.flags & cap_flag::STASH != 0,
        }
    }

    /// `modify_qp_init_to_rtr`'s inputs.
    fn rtr_params(&self, env: &QpEnv<'_>, a: &QpAttr) -> Result<qpc::RtrParams> {
        let d = env.cmd.state().device();
        let c = env.caps;
        let rq_cur = self.mtr.find(self.rq_offset);
        if self.sizes.rq_wqe_cnt != 0 && rq_cur.is_none() {
            ibdev_err!(
                &env.cmd,
                "failed to find QP({:#x}) RQ WQE buf, ret = {}.\n",
                self.qpn,
                EINVAL.to_errno()
            );
            return Err(EINVAL);
        }
        // Bus address of this QP's entry in a flat table.
        let entry = |ty: HemType, name: &str| {
            env.hem
                .table(ty)
                .ok()
                .and_then(|t| t.find(self.qpn))
                .ok_or_else(|| {
                    hdev_err!(d, "failed to find qp {}_table.\n", name);
                    EINVAL
                })
        };
        let irrl_ba = entry(HemType::Irrl, "irrl")?;
        let trrl_ba = entry(HemType::Trrl, "trrl")?;
        if a.mask & attr::ALT_PATH != 0 {
            ibdev_err!(&env.cmd, "INIT2RTR attr_mask ({:#x}) error.\n", a.mask);
            return Err(EINVAL);
        }
        let hop = |h: u32, cnt: u32| crate::hem::hw_hopnum(h, cnt);
        let mtu = if matches!(self.qp_type, qpt::UD | qpt::GSI) {
            5
        } else {
            a.path_mtu
        };
        Ok(qpc::RtrParams {
            buf: qpc::WqeBufParams {
                wqe_sge_ba: self.mtr.root_ba(),
                sq_hop: hop(c.wqe_sq_hop_num, self.sizes.sq_wqe_cnt),
                sge_hop: hop(c.wqe_sge_hop_num, self.sizes.sge_cnt),
                rq_hop: hop(c.wqe_rq_hop_num, self.sizes.rq_wqe_cnt),
                ba_pg_shift: self.mtr.ba_pg_shift(),
                buf_pg_shift: self.mtr.page_shift(),
                rq_cur_blk: rq_cur.unwrap_or(0),
                rq_nxt_blk: if env.rev.is_hip08() {
                    let next = self.rq_offset + (1usize << self.mtr.page_shift());
                    Some(self.mtr.find(next).unwrap_or(0))
                } else {
                    None
                },
            },
            irrl_ba,
            trrl_ba,
            sig_type: self.sq_sig_type,
            // C's `loop_idc`, set around the free-MR QPs' move to RTR.
            lbi: if self.core.ibqp().is_reserved() {
                Some(1)
            } else {
                qpc::loopback_indicator(env.rev, a.dmac, a.dmac_local)
            },
            dest_qpn: (a.mask & attr::DEST_QPN != 0).then_some(a.dest_qp_num),
            dmac: a.dmac,
            mtu_enum: (a.mask & attr::PATH_MTU != 0).then_some(mtu),
            mtu_bytes: mtu_bytes(mtu),
            window_cong: self.cong_type.window(),
            max_ack_req_msg_len: c.max_ack_req_msg_len,
            // The configuration of the context whose udata came with the
            // modify, as C reads it: for an XRC target (created without
            // one) that is the process that modifies it.
            rq_inline: (a.udata && self.qp_type == qpt::RC && a.uctx_config & UCTX_RQ_INLINE != 0)
                .then_some(c.flags & cap_flag::RQ_INLINE != 0),
            cqe_inline: (a.udata
                && matches!(self.qp_type, qpt::RC | qpt::XRC_TGT)
                && a.uctx_config & UCTX_CQE_INLINE != 0)
                .then_some(c.flags & cap_flag::CQE_INLINE != 0),
        })
    }

    /// The path of `IB_QP_AV` (`hns_roce_v2_set_path` with `fill_cong_field`
    /// and `hns_roce_set_sl`); records the service level and TC mode the
    /// user modify answers, as C does even when the modify fails later.
    fn path(&self, env: &QpEnv<'_>, a: &QpAttr, soft: &mut Soft) -> Result<qpc::PathParams> {
        let c = env.caps;
        if a.av_grh && a.l2_ret != 0 {
            return Err(Error::from_errno(a.l2_ret));
        }
        let gt = u32::from(a.gid_type);
        let is_udp = a.av_grh && gt == qpc::gid_type::ROCE_UDP_ENCAP;
        let vlan_id = if a.av_grh { a.vlan_id } else { 0xffff };
        if u32::from(a.sgid_index) >= c.gid_table_len {
            ibdev_err!(
                &env.cmd,
                "sgid_index({}) too large. max is {}\n",
                a.sgid_index,
                c.gid_table_len
            );
            return Err(EINVAL);
        }
        if !a.av_roce {
            ibdev_err!(&env.cmd, "ah attr is not RDMA roce type\n");
            return Err(EINVAL);
        }
        let udp_sport = if is_udp {
            u32::from(qpc::udp_sport(a.flow_label, self.qpn, a.dest_qp_num))
        } else {
            0
        };
        let cong = if env.rev.is_hip08() || gt == qpc::gid_type::ROCE {
            None
        } else {
            let dip_idx = if self.cong_type == qpc::CongType::Dip {
                let idx = super::dip_get(env.dips, self.qpn, &a.dgid).inspect_err(|e| {
                    ibdev_err!(&env.cmd, "failed to fill cong field", ret = e.to_errno());
                })?;
                // A QP given an address vector again holds the new context
                // only (C keeps counting the old one, which then never
                // becomes unused).
                if let Some(old) = soft.dip.replace(idx) {
                    super::dip_put(env.dips, old);
                }
                Some(idx)
            } else {
                None
            };
            Some(qpc::CongFields {
                ty: self.cong_type,
                tmpl_base: env.cong_tmpl_id,
                dip_idx,
            })
        };
        soft.sl = u32::from(a.sl);
        if gt == qpc::gid_type::ROCE_UDP_ENCAP {
            match env.dscp.prio(a.traffic_class >> 2) {
                Ok((mode, prio)) => {
                    soft.tc_mode = mode;
                    soft.priority = prio;
                }
                Err(e) if e == EOPNOTSUPP => {}
                Err(e) => {
                    ibdev_err_ratelimited!(&env.cmd, "failed to get dscp", ret = e.to_errno());
                    return Err(e);
                }
            }
            if soft.tc_mode == TC_MAP_MODE_DSCP {
                soft.sl = u32::from(soft.priority);
            }
        }
        check_sl(env, soft.sl)?;
        Ok(qpc::PathParams {
            vlan_id,
            hip08: env.rev.is_hip08(),
            udp_sport,
            sgid_index: u32::from(a.sgid_index),
            hop_limit: u32::from(a.hop_limit),
            cong,
            tclass: qpc::tclass(a.traffic_class, gt),
            flow_label: a.flow_label,
            dgid: a.dgid,
            sl: soft.sl,
        })
    }

    /// `hns_roce_v2_set_opt_fields`.
    fn opt_fields(
        &self,
        env: &QpEnv<'_>,
        img: &mut QpcImage,
        a: &QpAttr,
        soft: &mut Soft,
    ) -> Result {
        let m = a.mask;
        if m & attr::AV != 0 && self.core.ibqp().is_reserved() {
            // A free-MR QP loops back to itself: only its SL is set.
            let sl = u32::from(a.sl);
            check_sl(env, sl)?;
            qpc::set_sl(img, sl);
            soft.sl = sl;
        } else if m & attr::AV != 0 {
            let p = self.path(env, a, soft)?;
            qpc::set_path(img, &p);
        }
        let on = |bit: u32, v: u32| (m & bit != 0).then_some(v);
        let timeout = if m & attr::TIMEOUT != 0 {
            let t = qpc::ack_timeout(env.rev, a.timeout);
            if t.is_none() {
                if env.rev.is_hip08() {
                    ibdev_warn!(&env.cmd, "local ACK timeout shall be 0 to 20.\n");
                } else {
                    ibdev_warn!(&env.cmd, "local ACK timeout shall be 0 to 31.\n");
                }
            }
            t
        } else {
            None
        };
        let access = (m & (attr::ACCESS_FLAGS | attr::MAX_DEST_RD_ATOMIC) != 0).then(|| {
            let depth = if m & attr::MAX_DEST_RD_ATOMIC != 0 {
                a.max_dest_rd_atomic
            } else {
                soft.resp_depth
            };
            let flags = if m & attr::ACCESS_FLAGS != 0 {
                a.access
            } else {
                soft.atomic_rd_en
            };
            (flags, depth)
        });
        qpc::opt_fields(
            img,
            &qpc::OptParams {
                timeout,
                retry_cnt: on(attr::RETRY_CNT, a.retry_cnt),
                rnr_retry: on(attr::RNR_RETRY, a.rnr_retry),
                sq_psn: on(attr::SQ_PSN, a.sq_psn),
                max_dest_rd_atomic: on(attr::MAX_DEST_RD_ATOMIC, a.max_dest_rd_atomic),
                max_rd_atomic: on(attr::MAX_QP_RD_ATOMIC, a.max_rd_atomic),
                access,
                // HIP08 always takes the 10 ns timer.
                min_rnr_timer: on(
                    attr::MIN_RNR_TIMER,
                    if env.rev.is_hip08() {
                        1
                    } else {
                        a.min_rnr_timer
                    },
                ),
                rq_psn: on(attr::RQ_PSN, a.rq_psn),
                qkey: on(attr::QKEY, a.qkey),
            },
        );
        Ok(())
    }

    /// `clear_qp` after a kernel QP's move to RESET: the QP's CQEs leave
    /// its CQs, the queues start over.
    fn clear(&self, st: &DevState) {
        self.clean_cqs(st);
        if let Some(RqDb::Kernel(db)) = &self.rdb {
            db.set(0);
        }
        self.core.rq.lock().reset(&self.core.rq_ring);
        self.core.sq.lock().reset(&self.core.sq_ring);
    }
}

/// `check_sl_valid`: `sl` within the engine's service levels.
fn check_sl(env: &QpEnv<'_>, sl: u32) -> Result {
    let max = qpc::max_sl(env.caps.sl_num);
    if sl > max {
        ibdev_err_ratelimited!(
            &env.cmd,
            "failed to set SL({}). Shouldn't be larger than {}.\n",
            sl,
            max
        );
        return Err(EINVAL);
    }
    Ok(())
}
