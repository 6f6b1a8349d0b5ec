// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The engine's decoded copies of the driver's contexts: QPC, CQC and SRQC
//! images read from HEM memory after a mailbox changed them.

use super::*;

/// What the engine uses of a QPC.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QpCtx {
    /// QP number.
    pub qpn: u32,
    /// `TST`.
    pub tst: u32,
    /// `QP_ST`.
    pub state: u32,
    /// `PD`.
    pub pd: u32,
    /// log2 of SQ WQEs.
    pub sq_shift: u32,
    /// log2 of extended SGEs (0: none).
    pub sge_shift: u32,
    /// log2 of RQ WQEs.
    pub rq_shift: u32,
    /// log2 of SGEs per RQ WQE.
    pub rqws: u32,
    /// The WQE buffer (SQ, extended SGE, RQ regions).
    pub buf: Mtr,
    /// Byte offset of the extended SGE region.
    pub sge_off: u64,
    /// Byte offset of the RQ region.
    pub rq_off: u64,
    /// RQ record doorbell address, if enabled.
    pub rq_db: Option<u64>,
    /// Uses an SRQ.
    pub srq: bool,
    /// `SRQN` (with `srq`).
    pub srqn: u32,
    /// An XRC target (`XRC_QP_TYPE`): receives go to the XRC SRQ the
    /// initiator names, within XRC domain `qkey`.
    pub xrc_tgt: bool,
    /// Destination QPN (RC).
    pub dqpn: u32,
    /// Destination GID (RC; `hns_roce_v2_set_path` copies it to QPC
    /// bytes 28..44).
    pub dgid: [u8; 16],
    /// CQ of the receive queue.
    pub rx_cqn: u32,
    /// CQ of the send queue.
    pub tx_cqn: u32,
    /// Every WQE completes (`SIG_TYPE` 0).
    pub sig_all: bool,
    /// Remote read enabled.
    pub rre: bool,
    /// Remote write enabled.
    pub rwe: bool,
    /// Remote atomics enabled (`ATE`).
    pub ate: bool,
    /// Q_Key (UD), XRC domain (XRC target).
    pub qkey: u32,
    /// `SQ_PRODUCER_IDX`: the driver's SQ head, written at the move to
    /// ERR (`v2_set_flushed_fields`); WQEs up to it are flushed.
    pub sq_flush_pi: u32,
    /// `RQ_PRODUCER_IDX`: the same for the RQ.
    pub rq_flush_pi: u32,
    /// `MIN_RNR_TIME`: the IB RNR timer code this QP (as responder) puts
    /// into its RNR NAKs.
    pub min_rnr: u32,
    /// `RNR_NUM_INIT`: the requester's RNR retry count (7 = infinite).
    pub rnr_retry: u32,
}

fn align4k(v: u64) -> u64 {
    v.div_ceil(4096) * 4096
}

impl QpCtx {
    /// Decodes the first 256 bytes of a QPC as `hns_roce_v2_modify_qp`
    /// builds it.
    pub fn from_bytes(qpn: u32, b: &[u8]) -> Self {
        let c: Ctx<Qpc, 64> = Ctx::from_bytes(b);
        let sq_shift = c.read(qpc::SQ_SHIFT);
        let sge_shift = c.read(qpc::SGE_SHIFT);
        let rq_shift = c.read(qpc::RQ_SHIFT);
        let rqws = c.read(qpc::RQWS);
        let srq = c.read_bool(qpc::SRQ_EN);
        let sq_size = align4k((1u64 << sq_shift) * SQ_WQE_SIZE as u64);
        let sge_size = if sge_shift == 0 {
            0
        } else {
            align4k((1u64 << sge_shift) * SGE_SIZE as u64)
        };
        let rq_hop = c.read(qpc::RQ_HOP_NUM);
        let rq_size = if srq {
            0
        } else {
            align4k((1u64 << rq_shift) << (4 + rqws))
        };
        let root =
            u64::from(c.read(qpc::WQE_SGE_BA_L)) << 3 | u64::from(c.read(qpc::WQE_SGE_BA_H)) << 35;
        // A region's current block: its first page's address >> 12.
        let blk = |l, h| (u64::from(c.read(l)) | u64::from(c.read(h)) << 32) << 12;
        let rq_db = (u64::from(c.read(qpc::RQ_DB_RECORD_ADDR_L)) << 1)
            | u64::from(c.read(qpc::RQ_DB_RECORD_ADDR_H)) << 32;
        QpCtx {
            qpn,
            tst: c.read(qpc::TST),
            state: c.read(qpc::QP_ST),
            pd: c.read(qpc::PD),
            sq_shift,
            sge_shift,
            rq_shift,
            rqws,
            buf: Mtr {
                root,
                ba_shift: 12 + c.read(qpc::WQE_SGE_BA_PG_SZ),
                buf_shift: 12 + c.read(qpc::WQE_SGE_BUF_PG_SZ),
                regions: vec![
                    Region {
                        size: sq_size,
                        hop: c.read(qpc::SQ_HOP_NUM),
                        base: blk(qpc::SQ_CUR_BLK_ADDR_L, qpc::SQ_CUR_BLK_ADDR_H),
                    },
                    Region {
                        size: sge_size,
                        hop: c.read(qpc::SGE_HOP_NUM),
                        base: blk(qpc::SQ_CUR_SGE_BLK_ADDR_L, qpc::SQ_CUR_SGE_BLK_ADDR_H),
                    },
                    Region {
                        size: rq_size,
                        hop: rq_hop,
                        base: blk(qpc::RQ_CUR_BLK_ADDR_L, qpc::RQ_CUR_BLK_ADDR_H),
                    },
                ],
            },
            sge_off: sq_size,
            rq_off: sq_size + sge_size,
            rq_db: c.read_bool(qpc::RQ_RECORD_EN).then_some(rq_db),
            srq,
            srqn: c.read(qpc::SRQN),
            xrc_tgt: c.read(qpc::TST) == tst::XRC && c.read_bool(qpc::XRC_QP_TYPE),
            dqpn: c.read(qpc::DQPN),
            dgid: {
                let mut g = [0u8; 16];
                if let Some(x) = b.get(28..44) {
                    g.copy_from_slice(x);
                }
                g
            },
            rx_cqn: c.read(qpc::RX_CQN),
            tx_cqn: c.read(qpc::TX_CQN),
            sig_all: !c.read_bool(qpc::SIG_TYPE),
            rre: c.read_bool(qpc::RRE),
            rwe: c.read_bool(qpc::RWE),
            ate: c.read_bool(qpc::ATE),
            qkey: c.read(qpc::QKEY_XRCD),
            sq_flush_pi: c.read(qpc::SQ_PRODUCER_IDX),
            rq_flush_pi: c.read(qpc::RQ_PRODUCER_IDX),
            min_rnr: c.read(qpc::MIN_RNR_TIME),
            rnr_retry: c.read(qpc::RNR_NUM_INIT),
        }
    }

    /// Buffer offset of SQ WQE `idx`.
    pub fn sq_wqe_off(&self, idx: u32) -> u64 {
        u64::from(idx & ((1u32 << self.sq_shift) - 1)) * SQ_WQE_SIZE as u64
    }

    /// Buffer offset of extended SGE `idx`.
    pub fn sge_at(&self, idx: u32) -> u64 {
        let cnt = 1u64 << self.sge_shift;
        self.sge_off + (u64::from(idx) & (cnt - 1)) * SGE_SIZE as u64
    }

    /// Buffer offset of RQ WQE `idx`.
    pub fn rq_wqe_off(&self, idx: u32) -> u64 {
        self.rq_off + (u64::from(idx & ((1u32 << self.rq_shift) - 1)) << (4 + self.rqws))
    }
}

/// What the engine uses of a CQC.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CqCtx {
    /// CQ number.
    pub cqn: u32,
    /// Entries (power of two).
    pub depth: u32,
    /// Bytes per CQE (32 or 64).
    pub cqe_size: u32,
    /// The CQE buffer.
    pub buf: Mtr,
    /// Completion EQ.
    pub ceqn: u32,
    /// Consumer index record doorbell, if enabled.
    pub db: Option<u64>,
}

impl CqCtx {
    /// Decodes a 64-byte CQC as `hns_roce_v2_write_cqc` builds it; `None`
    /// when the CQ is not valid (`CQ_ST` 0: destroyed).
    pub fn from_bytes(cqn: u32, b: &[u8]) -> Option<Self> {
        let c: Ctx<Cqc, 16> = Ctx::from_bytes(b);
        if c.read(cqc::CQ_ST) == 0 {
            return None;
        }
        let depth = 1u32 << c.read(cqc::SHIFT).min(24);
        let cqe_size = if c.read(cqc::CQE_SIZE) == 1 { 64 } else { 32 };
        let root = u64::from(c.read(cqc::CQE_BA_L)) << 3 | u64::from(c.read(cqc::CQE_BA_H)) << 35;
        let db = (u64::from(c.read(cqc::CQE_DB_RECORD_ADDR_L)) << 1)
            | u64::from(c.read(cqc::CQE_DB_RECORD_ADDR_H)) << 32;
        Some(CqCtx {
            cqn,
            depth,
            cqe_size,
            buf: Mtr {
                root,
                ba_shift: 12 + c.read(cqc::CQE_BAR_PG_SZ),
                buf_shift: 12 + c.read(cqc::CQE_BUF_PG_SZ),
                regions: vec![Region {
                    size: align4k(u64::from(depth) * u64::from(cqe_size)),
                    hop: c.read(cqc::CQE_HOP_NUM),
                    base: 0,
                }],
            },
            ceqn: c.read(cqc::CEQN),
            db: c.read_bool(cqc::DB_RECORD_EN).then_some(db),
        })
    }
}

/// What the engine uses of an SRQC (`hns_roce_v2_write_srqc`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SrqCtx {
    /// SRQ number.
    pub srqn: u32,
    /// log2 of the WQE count (`SHIFT`).
    pub shift: u32,
    /// log2 of SGEs per WQE (`RQWS`): the WQE stride is `16 << rqws`.
    pub rqws: u32,
    /// `PD`.
    pub pd: u32,
    /// The WQE buffer (one region).
    pub buf: Mtr,
    /// The index queue (one region of 4-byte entries).
    pub idx: Mtr,
    /// Producer index record doorbell, if enabled.
    pub db: Option<u64>,
    /// `LIMIT_WL`: raise SRQ_LIMIT_REACH below this many WQEs (0: off).
    pub limit: u32,
    /// XRC SRQ (`SRQ_TYPE`).
    pub xrc: bool,
    /// `XRCD` (XRC SRQs).
    pub xrcd: u32,
    /// `XRC_CQN`: the CQ of an XRC SRQ's receive completions.
    pub xrc_cqn: u32,
}

impl SrqCtx {
    /// Decodes a 64-byte SRQC; `None` when not valid (`SRQ_ST` 0).
    pub fn from_bytes(srqn: u32, b: &[u8]) -> Option<Self> {
        let c: Ctx<Srqc, 16> = Ctx::from_bytes(b);
        if c.read(srqc::SRQ_ST) == 0 {
            return None;
        }
        let shift = c.read(srqc::SHIFT);
        let rqws = c.read(srqc::RQWS);
        let ba = |l, h| u64::from(c.read(l)) << 3 | u64::from(c.read(h)) << 35;
        let db = (u64::from(c.read(srqc::DB_RECORD_ADDR_L)) << 1)
            | u64::from(c.read(srqc::DB_RECORD_ADDR_H)) << 32;
        Some(SrqCtx {
            srqn,
            shift,
            rqws,
            pd: c.read(srqc::PD),
            buf: Mtr {
                root: ba(srqc::WQE_BT_BA_L, srqc::WQE_BT_BA_H),
                ba_shift: 12 + c.read(srqc::WQE_BA_PG_SZ),
                buf_shift: 12 + c.read(srqc::WQE_BUF_PG_SZ),
                regions: vec![Region {
                    size: align4k((1u64 << shift) << (4 + rqws)),
                    hop: c.read(srqc::WQE_HOP_NUM),
                    base: 0,
                }],
            },
            idx: Mtr {
                root: ba(srqc::IDX_BT_BA_L, srqc::IDX_BT_BA_H),
                ba_shift: 12 + c.read(srqc::IDX_BA_PG_SZ),
                buf_shift: 12 + c.read(srqc::IDX_BUF_PG_SZ),
                regions: vec![Region {
                    size: align4k((1u64 << shift) * 4),
                    hop: c.read(srqc::IDX_HOP_NUM),
                    base: 0,
                }],
            },
            db: c.read_bool(srqc::DB_RECORD_EN).then_some(db),
            limit: c.read(srqc::LIMIT_WL),
            xrc: c.read_bool(srqc::SRQ_TYPE),
            xrcd: c.read(srqc::XRCD),
            xrc_cqn: c.read(srqc::XRC_CQN),
        })
    }
}
