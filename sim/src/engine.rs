// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The data engine of one function: finds posted work, executes it between
//! QPs of the same device (loopback) or hands the responder's part to the
//! device owning the destination GID (a [`Wire`]), writes CQEs and
//! completion events.
//!
//! Work detection never depends on seeing every doorbell write (user SQ,
//! RQ, CQ doorbells share one 64-bit register word at 0x230 of the
//! doorbell page, plain shared memory here, so a later write can replace
//! an earlier one before the model takes it; the model takes the word with
//! an atomic exchange for 0, so it never mistakes an old value for a new
//! ring nor a new ring equal to the old value for nothing):
//! - SQ: a doorbell (the shared word, or a kernel QP's own word in the
//!   `mem_base` window) tells which QP to look at and up to which index
//!   the WQEs are complete; the owner bit of the WQE at the model's
//!   consumer index must be valid too. A WQE past the last doorbell seen
//!   is taken only when its owner bit is valid and its bytes have not
//!   changed for [`STABLE`] (the periodic scan of every QP in RTS, the
//!   backstop for lost doorbells). That delay is long on purpose: libhns'
//!   `ibv_wr_*` API (perftest's post path) sets the owner bit *first*
//!   (`ibv_wr_rdma_write` etc.) and writes length, inline data and SGEs
//!   after it, up to `ibv_wr_complete`'s doorbell; a producer preempted in
//!   between (one guest CPU shared by two busy-polling processes: a
//!   scheduler tick is 4 ms) leaves a valid owner bit on a half-written
//!   WQE. Real hardware never looks past the doorbell.
//! - RQ producer index: the record doorbell in driver memory (address in
//!   the QPC), else the last RQ doorbell seen.
//! - CQ consumer index: the record doorbell (address in the CQC), else the
//!   last CQ doorbell seen.
//! - Every CQ counts as armed from its creation until it is destroyed:
//!   every batch of CQEs on it raises a CEQE. An arm doorbell can be
//!   overwritten before the model reads it (perftest arms its send and its
//!   receive CQ back to back), so arms are not tracked at all; a spurious
//!   event is harmless (uverbs queues it only for CQs with a completion
//!   channel and counts only the events a reader took), a missed one hangs
//!   the consumer.
//!
//! Contexts are read from the driver's HEM memory: QPCs and CQCs when a
//! mailbox changed them (the [`CtxEvent`]s of the firmware), MPTs at each
//! use.

use crate::field::Ctx;
use crate::fw::Table;
use crate::hw_v2_fields::{cqc, qpc, srqc, Cqc, Qpc, Srqc};
use crate::live::{Extent, LiveDma, Owner};
use crate::mem::Dma;
use crate::wqe::{
    self, op, rop, status, Cqe, DataSeg, Doorbell, FrmrWqe, RcWqe, UdWqe, SGE_SIZE, SQ_WQE_HDR,
    SQ_WQE_SIZE,
};
use crate::xlate::{
    self, Access, KeyError, MptEntry, Mtr, Region, XlateError, MPT_ST_FREE, MPT_ST_VALID,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// FNV-1a of a WQE's bytes: tells the scan whether the producer is still
/// writing it.
fn fingerprint(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Offset of the shared SQ/RQ/SRQ/CQ doorbell word (`ROCEE_VF_DB_CFG0_OFFSET`).
pub const DB_CFG0: u64 = 0x230;
/// Offset of the `mem_base` window in BAR2 (kernel HIP09 SQ doorbells, one
/// 64 KiB page per QPN).
pub const DWQE_BASE: u64 = crate::mem::MEM_BASE_OFFSET;
/// Bytes per QPN in the `mem_base` window (`HNS_ROCE_DWQE_SIZE`).
pub const DWQE_SIZE: u64 = 65536;
/// How long a WQE past the last SQ doorbell must keep a valid owner bit
/// and the same bytes before the scan takes it: far above a guest
/// scheduler slice (4 ms ticks at HZ=250), so a producer preempted between
/// `ibv_wr_rdma_write` (owner bit set) and `ibv_wr_complete` (doorbell)
/// gets its doorbell in first; it costs a lost doorbell this much latency.
pub const STABLE: Duration = Duration::from_millis(100);
/// How often QPs in RTS are scanned for WQEs nobody rang for.
pub const SCAN_PERIOD: Duration = Duration::from_millis(1);
/// How long a send waits for a destination QP that is not ready.
pub const DEST_WAIT: Duration = Duration::from_secs(5);
/// MR pages tracked per MPT for the bad-DMA check (8 GiB of 4 KiB pages).
const MAX_TRACKED_PAGES: u64 = 1 << 21;
/// WQEs executed per QP per poll (fairness between QPs).
const BATCH: u32 = 64;
/// A QP that executed at least this many SQ WQEs logs its rate (host
/// clock) when it is reset or destroyed (`make bench`).
const RATE_MIN: u64 = 100;

/// A context change the firmware made through a mailbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtxEvent {
    /// A QPC was modified.
    Qp(u32),
    /// A MODIFY_QPC put the QP back in RESET, or into INIT from another
    /// state: its queues start over (queued before that modify's `Qp`).
    QpRestart(u32),
    /// A CQC was created, modified or destroyed.
    Cq(u32),
    /// An SRQC was created, modified or destroyed.
    Srq(u32),
    /// MPT entry `n` was created or destroyed.
    Mpt(u32),
    /// The function was cleared: forget every QP and CQ.
    Reset,
}

/// What the engine needs from the firmware.
pub trait Host {
    /// DMA address of entry `idx` of table `t`.
    fn ctx_addr<M: Dma>(&self, mem: &M, t: Table, idx: u32) -> Result<u64, String>;
    /// Writes a CEQE for `cqn` into completion EQ `ceqn` and queues its
    /// vector.
    fn post_ceqe<M: Dma>(&mut self, mem: &M, ceqn: u32, cqn: u32);
    /// Context changes since the last call.
    fn take_ctx_events(&mut self) -> Vec<CtxEvent>;
    /// GID table entry `idx` (programmed through CFG_GMV_TBL).
    fn gid(&self, idx: u32) -> Option<[u8; 16]>;
    /// Whether `gid` is in this function's GID table.
    fn owns_gid(&self, gid: &[u8; 16]) -> bool;
    /// Writes an AEQE (`event` type, `sub` type, queue number) and queues
    /// the AEQ's vector.
    fn post_event<M: Dma>(&mut self, mem: &M, event: u8, sub: u8, queue: u32);
}

/// Asynchronous event types (`enum hns_roce_event`) the engine raises.
pub mod aev {
    /// A QP of an SRQ reached its last WQE (it entered ERR).
    pub const SRQ_LAST_WQE_REACH: u8 = 0x09;
    /// An SRQ fell below its limit.
    pub const SRQ_LIMIT_REACH: u8 = 0x08;
    /// A message for an XRC target named an SRQ outside its XRC domain.
    pub const XRCD_VIOLATION: u8 = 0x16;
    /// A CQE found its CQ full.
    pub const CQ_OVERFLOW: u8 = 0x0c;
    /// The responder rejected an invalid request (the requester gets
    /// REM_INV_REQ_ERR); `IB_EVENT_QP_REQ_ERR` on the responder QP.
    pub const INV_REQ_LOCAL_WQ_ERROR: u8 = 0x06;
    /// The responder rejected a request for an rkey, PD, access or range
    /// violation (the requester gets REM_ACCESS_ERR);
    /// `IB_EVENT_QP_ACCESS_ERR` on the responder QP.
    pub const LOCAL_WQ_ACCESS_ERROR: u8 = 0x07;
}

/// The device's doorbell registers as the engine reads them.
pub trait Regs {
    /// Takes the 64-bit doorbell word at `off` of BAR2: its value, 0 left
    /// behind (0 = nothing rung since the last take).
    fn take64(&self, off: u64) -> u64;
}

impl Regs for crate::mem::Bar {
    fn take64(&self, off: u64) -> u64 {
        crate::mem::Bar::take64(self, off)
    }
}

/// QP states (`QP_ST`).
pub mod qps {
    /// Reset.
    pub const RESET: u32 = 0;
    /// Init.
    pub const INIT: u32 = 1;
    /// Ready to receive.
    pub const RTR: u32 = 2;
    /// Ready to send.
    pub const RTS: u32 = 3;
    /// Send queue drained.
    pub const SQD: u32 = 4;
    /// Error: outstanding WQEs complete with WR_FLUSH_ERR.
    pub const ERR: u32 = 6;
}

/// QP transport types (`TST`).
pub mod tst {
    /// Reliable connected.
    pub const RC: u32 = 0;
    /// Unreliable datagram (and GSI).
    pub const UD: u32 = 3;
    /// XRC (initiator or target, `XRC_QP_TYPE`).
    pub const XRC: u32 = 5;
}

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
                    },
                    Region {
                        size: sge_size,
                        hop: c.read(qpc::SGE_HOP_NUM),
                    },
                    Region {
                        size: rq_size,
                        hop: rq_hop,
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
                }],
            },
            idx: Mtr {
                root: ba(srqc::IDX_BT_BA_L, srqc::IDX_BT_BA_H),
                ba_shift: 12 + c.read(srqc::IDX_BA_PG_SZ),
                buf_shift: 12 + c.read(srqc::IDX_BUF_PG_SZ),
                regions: vec![Region {
                    size: align4k((1u64 << shift) * 4),
                    hop: c.read(srqc::IDX_HOP_NUM),
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

/// Writes the 40-byte GRH of a RoCEv2 datagram into `h`: an IPv4 header
/// at bytes 20..40 when the destination GID is IPv4-mapped, an IPv6 header
/// otherwise. Returns the CQE `PORT_TYPE` (1 IPv4, 2 IPv6).
pub fn grh(h: &mut [u8], w: &UdWqe, sgid: &[u8; 16], len: usize) -> u8 {
    h.fill(0);
    let udp_len = (len + 8 + 12 + 4) as u32; // UDP + BTH + DETH (+ ICRC)
    let v4 = w.dgid[..10].iter().all(|&b| b == 0) && w.dgid[10] == 0xff && w.dgid[11] == 0xff;
    if v4 && h.len() >= 40 {
        let ip = &mut h[20..40];
        ip[0] = 0x45;
        ip[1] = w.tclass;
        let total = (udp_len + 20) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip[8] = w.hop_limit;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&sgid[12..16]);
        ip[16..20].copy_from_slice(&w.dgid[12..16]);
        // Header checksum.
        let mut sum = 0u32;
        for c in ip.chunks_exact(2) {
            sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        1
    } else if h.len() >= 40 {
        let vtf = 6u32 << 28 | u32::from(w.tclass) << 20 | (w.flow_label & 0xf_ffff);
        h[0..4].copy_from_slice(&vtf.to_be_bytes());
        h[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        h[6] = 17;
        h[7] = w.hop_limit;
        h[8..24].copy_from_slice(sgid);
        h[24..40].copy_from_slice(&w.dgid);
        2
    } else {
        0
    }
}

/// Engine state of one QP.
#[derive(Clone, Debug, Default)]
struct Qp {
    ctx: QpCtx,
    /// Next SQ WQE to execute (counts forever; 16 bits go to CQEs).
    sq_ci: u32,
    /// Next RQ WQE to consume.
    rq_ci: u32,
    /// SQ producer index from the last doorbell seen (16 bits).
    sq_db: Option<u32>,
    /// RQ producer index from the last RQ doorbell seen (no record DB).
    rq_db: u32,
    /// A WQE past the doorbell whose owner bit was seen valid: its index,
    /// since when its bytes have not changed, and their fingerprint.
    pending: Option<(u32, Instant, u64)>,
    /// The SQ index the scan took without a doorbell (counted once, also
    /// when it has to wait).
    scan_took: Option<u32>,
    /// A restart is pending: fingerprint the SQ at the next QPC with a
    /// WQE buffer.
    snap: bool,
    /// Fingerprints of the SQ slots when the QP started over (`stale`),
    /// cleared slot by slot as the model executes them. The driver does not
    /// clear the SQ at a reset (neither libhns nor the kernel), so the
    /// slots past the first doorbells hold the previous life's WQEs, owner
    /// bits valid for the first pass: the scan must not take those.
    stale: Vec<u64>,
    /// Since when the SQ head waits for a destination that is not ready.
    blocked: Option<Instant>,
    /// RNR retries left for the SQ head after an RNR NAK (finite retry
    /// counts only), and when the next try is due (the RNR timer).
    rnr: Option<(u32, Instant)>,
    /// An error completion was written: stop until the driver modifies
    /// the QP.
    stopped: bool,
    /// Something asked to look at this QP now.
    kick: bool,
    /// SQ WQEs executed since the QP was (re)started, and the host times
    /// of the first and the last (the rate line at its reset).
    done: u64,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Qp {
    /// WQEs between the model's consumer index and the producer index of
    /// the move to ERR (16 bits), at most one ring.
    fn sq_to_flush(&self) -> u32 {
        (self.ctx.sq_flush_pi.wrapping_sub(self.sq_ci) & 0xffff).min(1 << self.ctx.sq_shift)
    }

    /// The same for the RQ (none with an SRQ).
    fn rq_to_flush(&self) -> u32 {
        if self.ctx.srq {
            return 0;
        }
        (self.ctx.rq_flush_pi.wrapping_sub(self.rq_ci) & 0xffff).min(1 << self.ctx.rq_shift)
    }

    /// Anything left to flush?
    fn flush_due(&self) -> bool {
        self.sq_to_flush() != 0 || self.rq_to_flush() != 0
    }
}

/// Engine state of one CQ.
#[derive(Clone, Debug, Default)]
struct Cq {
    ctx: CqCtx,
    /// Producer index (counts forever).
    pi: u32,
    /// Consumer index from the last CQ doorbell seen (no record DB).
    ci_db: u32,
    /// Found full once (the overflow event went out).
    overflow: bool,
}

/// Engine state of one SRQ.
#[derive(Clone, Debug, Default)]
struct Srq {
    ctx: SrqCtx,
    /// Next index queue entry to consume (counts forever).
    ci: u32,
    /// Producer index from the last SRQ doorbell seen (no record DB).
    pi_db: u32,
    /// The armed limit (0: disarmed; set by a MODIFY_SRQC, cleared when
    /// the event is raised).
    limit: u32,
}

/// Where a message is received: a WQE of the QP's RQ or of an SRQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recv {
    /// RQ WQE `ci` of QP `qpn`.
    Rq { qpn: u32, ci: u32 },
    /// Index queue entry `ci` of SRQ `srqn`, naming WQE `wqe`.
    Srq { srqn: u32, ci: u32, wqe: u32 },
}

impl Recv {
    /// `WQE_IDX` of the receive CQE (the driver ignores it for an RQ).
    fn wqe_idx(self) -> u16 {
        match self {
            Recv::Rq { ci, .. } => ci as u16,
            Recv::Srq { wqe, .. } => wqe as u16,
        }
    }
}

/// Counters of the data path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// WQEs executed.
    pub wqes: u64,
    /// CQEs written.
    pub cqes: u64,
    /// CEQEs written.
    pub ceqes: u64,
    /// Error CQEs written.
    pub errors: u64,
    /// WQEs taken by the scan without a doorbell covering them.
    pub scan_found: u64,
    /// Doorbell words seen.
    pub doorbells: u64,
    /// Messages another device took (answered, NAKed or rejected; the
    /// tries of a send that waits for a destination QP or CQ are not
    /// counted: a blocked send is tried again on every pass).
    pub wire: u64,
    /// Writes into guest memory refused because the live object they were
    /// for does not map the target (`live.rs`); 0 unless the model is wrong.
    pub bad_dma: u64,
}

/// A byte range under a memory key.
#[derive(Clone, Copy, Debug)]
struct Span {
    key: u32,
    va: u64,
    len: u64,
}

/// Outcome of one WQE.
enum Step {
    /// Executed; the SQ moves on.
    Done,
    /// Cannot run yet (no receive WQE, CQ full, destination not ready).
    Wait,
    /// Executed with an error completion; the QP stops.
    Failed,
}

/// A local or remote failure while executing a WQE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fail {
    /// Status of the requester's CQE.
    pub req: u8,
    /// Status of the responder's receive CQE, if one is consumed.
    pub resp: Option<u8>,
    /// What went wrong (for the log).
    pub why: String,
}

/// A message on the wire: what the requester's device hands the
/// responder's device (RoCEv2 addressing: the responder is the device
/// owning the destination GID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Requester QPN.
    pub sqpn: u32,
    /// Destination QPN.
    pub dqpn: u32,
    /// The operation.
    pub op: Op,
}

/// The operation a [`Request`] carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// RC/XRC.
    Rc(RcOp),
    /// UD SEND/SEND_WITH_IMM.
    Ud(UdMsg),
}

/// RC/XRC operations as they reach the responder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RcOp {
    /// SEND / SEND_WITH_IMM (`imm`) / SEND_WITH_INV (`inv`); `xrc_srqn`
    /// for an XRC target.
    Send {
        /// Immediate data.
        imm: Option<u32>,
        /// The rkey the responder invalidates (SEND_WITH_INV).
        inv: Option<u32>,
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Payload.
        data: Vec<u8>,
    },
    /// RDMA_WRITE / RDMA_WRITE_WITH_IMM (`imm`, consumes a receive WQE).
    Write {
        /// Immediate data.
        imm: Option<u32>,
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Payload.
        data: Vec<u8>,
    },
    /// RDMA_READ of `len` bytes.
    Read {
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Length.
        len: u32,
    },
    /// ATOMIC_CMP_AND_SWAP (`cmp_swap`) / ATOMIC_FETCH_AND_ADD.
    Atomic {
        /// Compare and swap (else fetch and add).
        cmp_swap: bool,
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Remote key.
        rkey: u32,
        /// Remote address (8-byte aligned).
        va: u64,
        /// Swap or add operand.
        swap_add: u64,
        /// Compare operand.
        compare: u64,
    },
}

/// A UD datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdMsg {
    /// Immediate data (SEND_WITH_IMM).
    pub imm: Option<u32>,
    /// The Q_Key the sender used.
    pub qkey: u32,
    /// `PORT_TYPE` of the receive CQE (GRH kind).
    pub port_type: u8,
    /// Service level.
    pub sl: u8,
    /// 40-byte GRH followed by the payload.
    pub data: Vec<u8>,
}

/// The responder's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// Done; READ data or the atomic's original value (8 bytes LE).
    Done(Vec<u8>),
    /// Receiver not ready (CQ full): try again later.
    Wait,
    /// RNR NAK (no receive WQE) with the responder's `MIN_RNR_TIME`.
    Rnr(u32),
    /// No such QP, or not in RTR..SQD.
    NotReady,
    /// A remote error (the requester's CQE status is in it).
    Fail(Fail),
}

/// The other devices of the same hns-sim process, as seen from one
/// device's engine.
pub trait Wire<M: Dma> {
    /// The device (an index of this wire's own) owning `gid`, if any.
    fn route(&self, gid: &[u8; 16]) -> Option<usize>;
    /// Device `dev` responds to `req`.
    fn respond(&mut self, dev: usize, mem: &M, req: &Request) -> Response;
}

/// No other device.
pub struct NoWire;

impl<M: Dma> Wire<M> for NoWire {
    fn route(&self, _gid: &[u8; 16]) -> Option<usize> {
        None
    }
    fn respond(&mut self, _dev: usize, _mem: &M, _req: &Request) -> Response {
        Response::NotReady
    }
}

/// The data engine of one function.
#[derive(Default)]
pub struct Engine {
    qps: BTreeMap<u32, Qp>,
    cqs: BTreeMap<u32, Cq>,
    srqs: BTreeMap<u32, Srq>,
    /// Asynchronous events to raise at the end of the poll (type, queue).
    aeqes: Vec<(u8, u32)>,
    last_scan: Option<Instant>,
    /// A function reset came: the kernel doorbell words of the `mem_base`
    /// window still hold the last rings of the QPs it forgot; take them
    /// all before a new QP with one of those QPNs can see its
    /// predecessor's producer index as a ring of its own.
    stale_dwqe: bool,
    /// CQs that got CQEs in this poll (events go out at its end).
    touched: BTreeSet<u32>,
    /// The memory the live MRs and CQs map (checked on every write).
    live: RefCell<LiveDma>,
    /// Counters.
    pub stats: EngineStats,
    /// Log lines left before the log goes quiet.
    log_budget: u32,
    /// Where log lines go (stderr = hns-sim.log) unless disabled.
    pub quiet: bool,
}

impl Engine {
    /// An engine with nothing known.
    pub fn new() -> Self {
        Engine {
            log_budget: 200,
            ..Default::default()
        }
    }

    fn log(&mut self, s: &str) {
        if self.quiet || self.log_budget == 0 {
            return;
        }
        self.log_budget -= 1;
        eprintln!("hns-sim engine: {s}");
    }

    /// One pass: context changes, doorbells, SQ work, events. Returns
    /// whether anything was executed.
    pub fn poll<M: Dma, H: Host, R: Regs, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        regs: &R,
        wire: &mut W,
        now: Instant,
    ) -> bool {
        for ev in host.take_ctx_events() {
            self.apply_event(host, mem, ev);
        }
        self.read_doorbells(regs);
        let scan = self
            .last_scan
            .is_none_or(|t| now.duration_since(t) >= SCAN_PERIOD);
        if scan {
            self.last_scan = Some(now);
        }
        let qpns: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| {
                q.ctx.state == qps::RTS
                    && !q.stopped
                    && !q.ctx.xrc_tgt
                    && (scan || q.kick || q.blocked.is_some())
            })
            .map(|(n, _)| *n)
            .collect();
        let mut did = false;
        for qpn in qpns {
            did |= self.run_sq(host, mem, wire, qpn, now);
        }
        let errs: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| q.ctx.state == qps::ERR && q.flush_due())
            .map(|(n, _)| *n)
            .collect();
        for qpn in errs {
            did |= self.flush(mem, qpn);
        }
        self.raise_events(host, mem);
        self.stats.bad_dma = self.live.borrow().bad;
        did
    }

    /// Refreshes the cached context after a mailbox.
    fn apply_event<M: Dma, H: Host>(&mut self, host: &H, mem: &M, ev: CtxEvent) {
        match ev {
            CtxEvent::Reset => {
                self.qps.clear();
                self.cqs.clear();
                self.srqs.clear();
                self.live.borrow_mut().clear();
                self.stale_dwqe = true;
            }
            CtxEvent::QpRestart(qpn) => {
                let q = self.qps.entry(qpn).or_default();
                let ctx = std::mem::take(&mut q.ctx);
                *q = Qp {
                    ctx,
                    snap: true,
                    ..Qp::default()
                };
            }
            CtxEvent::Qp(qpn) => {
                let mut b = [0u8; 256];
                let ctx = match host
                    .ctx_addr(mem, Table::Qpc, qpn)
                    .and_then(|a| mem.read(a, &mut b).map_err(|e| e.to_string()))
                {
                    Ok(()) => QpCtx::from_bytes(qpn, &b),
                    Err(e) => {
                        self.log(&format!("QP {qpn:#x}: QPC unreadable: {e}"));
                        return;
                    }
                };
                self.update_qp(ctx);
                self.snapshot_sq(mem, qpn);
            }
            CtxEvent::Cq(cqn) => {
                let mut b = [0u8; 64];
                let ctx = host
                    .ctx_addr(mem, Table::Cqc, cqn)
                    .and_then(|a| mem.read(a, &mut b).map_err(|e| e.to_string()))
                    .ok()
                    .and_then(|()| CqCtx::from_bytes(cqn, &b));
                self.update_cq(cqn, ctx);
                self.track_cq(mem, cqn);
            }
            CtxEvent::Mpt(idx) => self.track_mpt(host, mem, idx),
            CtxEvent::Srq(srqn) => {
                let mut b = [0u8; 64];
                let ctx = host
                    .ctx_addr(mem, Table::Srqc, srqn)
                    .and_then(|a| mem.read(a, &mut b).map_err(|e| e.to_string()))
                    .ok()
                    .and_then(|()| SrqCtx::from_bytes(srqn, &b));
                self.update_srq(srqn, ctx);
            }
        }
    }

    /// Installs a new SRQC image (`None`: destroyed). A MODIFY_SRQC (same
    /// buffers) keeps the consumer index and (re-)arms the limit.
    pub fn update_srq(&mut self, srqn: u32, ctx: Option<SrqCtx>) {
        match ctx {
            None => {
                self.srqs.remove(&srqn);
            }
            Some(c) => {
                let s = self.srqs.entry(srqn).or_default();
                if s.ctx.buf.root != c.buf.root || s.ctx.idx.root != c.idx.root {
                    *s = Srq::default();
                }
                s.limit = c.limit;
                s.ctx = c;
            }
        }
    }

    /// The model's SRQ consumer index (tests).
    pub fn srq_ci(&self, srqn: u32) -> Option<u32> {
        self.srqs.get(&srqn).map(|s| s.ci)
    }

    /// Installs a new QPC image: a QP back in RESET, or entering INIT from
    /// anything but INIT, starts its queues from 0.
    pub fn update_qp(&mut self, ctx: QpCtx) {
        let qpn = ctx.qpn;
        let q = self.qps.entry(qpn).or_default();
        let fresh = ctx.state == qps::RESET || (ctx.state == qps::INIT && q.ctx.state != qps::INIT);
        if fresh {
            if let (true, Some(a), Some(b)) = (q.done >= RATE_MIN, q.first, q.last) {
                let t = b.duration_since(a).as_secs_f64();
                let line = format!(
                    "QP {qpn:#x}: {} SQ WQEs in {:.3} s of host time ({:.0}/s, {:.1} us each)",
                    q.done,
                    t,
                    (q.done - 1) as f64 / t.max(1e-9),
                    1e6 * t / (q.done - 1) as f64
                );
                if !self.quiet {
                    eprintln!("hns-sim engine: {line}");
                }
            }
            *q = Qp::default();
        }
        if ctx.state == qps::ERR && q.ctx.state != qps::ERR && ctx.srq {
            // No more receives will be taken from the SRQ for this QP.
            self.aeqes.push((aev::SRQ_LAST_WQE_REACH, qpn));
        }
        q.ctx = ctx;
        q.stopped = false;
        q.kick = true;
    }

    /// After a restart, once the QPC names a WQE buffer (INIT on), keeps
    /// the fingerprint of every SQ slot: what the scan must not take for a
    /// new WQE. A slot unreadable now reads as `0` (never a fingerprint).
    fn snapshot_sq<M: Dma>(&mut self, mem: &M, qpn: u32) {
        let Some(q) = self.qps.get_mut(&qpn) else {
            return;
        };
        if !q.snap || q.ctx.state < qps::INIT || q.ctx.state > qps::SQD {
            return;
        }
        q.snap = false;
        let n = if q.ctx.sq_shift == 0 || q.ctx.xrc_tgt {
            0
        } else {
            1u32 << q.ctx.sq_shift.min(16)
        };
        let mut raw = [0u8; SQ_WQE_SIZE];
        q.stale = (0..n)
            .map(
                |i| match q.ctx.buf.read(mem, q.ctx.sq_wqe_off(i), &mut raw) {
                    Ok(()) => fingerprint(&raw),
                    Err(_) => 0,
                },
            )
            .collect();
    }

    /// Records the pages MPT `idx` maps now (none unless valid; a DMA MR
    /// maps everything). Pages past [`MAX_TRACKED_PAGES`] are not tracked
    /// (writes there count as bad).
    fn track_mpt<M: Dma, H: Host>(&self, host: &H, mem: &M, idx: u32) {
        let o = Owner::Mr(idx);
        let m = match self.mpt(host, mem, idx << 8) {
            Err(_) => {
                // Not readable, or ST/LKEY do not match: read it raw.
                let raw = host.ctx_addr(mem, Table::Mpt, idx).ok().and_then(|a| {
                    let mut b = [0u8; 64];
                    mem.read(a, &mut b).ok().map(|()| MptEntry::from_bytes(&b))
                });
                match raw {
                    Some(m) => m,
                    None => return self.live.borrow_mut().forget(o),
                }
            }
            Ok(m) => m,
        };
        let mut live = self.live.borrow_mut();
        if m.state != xlate::MPT_ST_VALID {
            live.forget(o);
        } else if m.pa {
            live.set(o, Extent::Any);
        } else {
            live.set_pages(o, m.buf_shift, m.all_pages(mem, MAX_TRACKED_PAGES));
        }
    }

    /// Records the pages of CQ `cqn`'s CQE buffer (none once destroyed).
    fn track_cq<M: Dma>(&self, mem: &M, cqn: u32) {
        let mut live = self.live.borrow_mut();
        let Some(c) = self.cqs.get(&cqn) else {
            return live.forget(Owner::Cq(cqn));
        };
        let b = &c.ctx.buf;
        let size: u64 = b.regions.iter().map(|r| r.size).sum();
        let pages =
            (0..size.div_ceil(1 << b.buf_shift)).filter_map(|p| b.addr(mem, p << b.buf_shift).ok());
        live.set_pages(Owner::Cq(cqn), b.buf_shift, pages);
    }

    /// Writes `data` at `a` for the MR of `key`, if that MR maps it; else
    /// counts and logs a bad DMA and writes nothing.
    fn put<M: Dma>(&self, mem: &M, key: u32, a: u64, data: &[u8]) -> Result<(), String> {
        self.checked(Owner::Mr(MptEntry::index(key)), a, data.len())?;
        mem.write(a, data).map_err(|e| e.to_string())
    }

    /// Whether the live object `o` maps `len` bytes at `a`; a refusal is
    /// counted and logged (outside the log budget: it fails the run).
    fn checked(&self, o: Owner, a: u64, len: usize) -> Result<(), String> {
        let mut live = self.live.borrow_mut();
        live.check(o, a, len as u64).map_err(|why| {
            live.bad += 1;
            if !self.quiet && live.bad <= 50 {
                eprintln!("hns-sim engine: bad DMA refused: {why}");
            }
            format!("bad DMA: {why}")
        })
    }

    /// Installs a new CQC image (`None`: destroyed).
    pub fn update_cq(&mut self, cqn: u32, ctx: Option<CqCtx>) {
        match ctx {
            None => {
                self.cqs.remove(&cqn);
            }
            Some(c) => {
                let cq = self.cqs.entry(cqn).or_default();
                if cq.ctx.depth == 0 || cq.ctx.buf.root != c.buf.root {
                    // Created (not a MODIFY of moderation fields).
                    *cq = Cq::default();
                }
                cq.ctx = c;
            }
        }
    }

    /// Reads the shared doorbell word and the kernel SQ doorbell pages.
    fn read_doorbells<R: Regs>(&mut self, regs: &R) {
        if std::mem::take(&mut self.stale_dwqe) {
            for qpn in 0..(crate::mem::BAR_SIZE - DWQE_BASE) / DWQE_SIZE {
                regs.take64(DWQE_BASE + qpn * DWQE_SIZE);
            }
        }
        let v = regs.take64(DB_CFG0);
        if v != 0 {
            self.doorbell(Doorbell::decode(v));
        }
        let kernel: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| q.ctx.state >= qps::INIT && q.ctx.state <= qps::SQD)
            .map(|(n, _)| *n)
            .filter(|n| u64::from(*n) * DWQE_SIZE < crate::mem::BAR_SIZE - DWQE_BASE)
            .collect();
        for qpn in kernel {
            let v = regs.take64(DWQE_BASE + u64::from(qpn) * DWQE_SIZE);
            if v != 0 {
                self.doorbell(Doorbell::decode(v));
            }
        }
    }

    /// Acts on one doorbell word.
    pub fn doorbell(&mut self, d: Doorbell) {
        self.stats.doorbells += 1;
        match d.cmd {
            wqe::db::SQ => {
                if let Some(q) = self.qps.get_mut(&d.tag) {
                    q.sq_db = Some(d.index);
                    q.kick = true;
                }
            }
            wqe::db::RQ => {
                if let Some(q) = self.qps.get_mut(&d.tag) {
                    q.rq_db = d.index;
                }
            }
            wqe::db::SRQ => {
                if let Some(s) = self.srqs.get_mut(&d.tag) {
                    s.pi_db = d.index;
                }
            }
            wqe::db::CQ_PTR => {
                if let Some(c) = self.cqs.get_mut(&d.tag) {
                    c.ci_db = d.index;
                }
            }
            wqe::db::CQ_NOTIFY => {
                if let Some(c) = self.cqs.get_mut(&d.tag) {
                    c.ci_db = d.index;
                }
            }
            _ => {}
        }
        // Anything blocked on a receive WQE or CQ space may go on.
        for q in self.qps.values_mut() {
            if q.blocked.is_some() {
                q.kick = true;
            }
        }
    }

    /// Whether CQ `cqn` is known (tests).
    pub fn has_cq(&self, cqn: u32) -> bool {
        self.cqs.contains_key(&cqn)
    }

    /// The model's SQ consumer index of `qpn` (tests).
    pub fn sq_ci(&self, qpn: u32) -> Option<u32> {
        self.qps.get(&qpn).map(|q| q.sq_ci)
    }

    /// Executes the posted WQEs of `qpn`'s SQ; returns whether any ran.
    pub fn run_sq<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        qpn: u32,
        now: Instant,
    ) -> bool {
        let mut did = false;
        if let Some(q) = self.qps.get_mut(&qpn) {
            q.kick = false;
        }
        for _ in 0..BATCH {
            let Some(q) = self.qps.get(&qpn) else {
                break;
            };
            if q.stopped || q.ctx.state != qps::RTS {
                break;
            }
            let ctx = q.ctx.clone();
            let idx = q.sq_ci;
            let mut raw = [0u8; SQ_WQE_SIZE];
            if let Err(e) = ctx.buf.read(mem, ctx.sq_wqe_off(idx), &mut raw) {
                self.log(&format!("QP {qpn:#x}: SQ WQE {idx} unreadable: {e}"));
                if let Some(q) = self.qps.get_mut(&qpn) {
                    q.stopped = true;
                }
                break;
            }
            let w = RcWqe::from_bytes(&raw);
            if w.owner != wqe::owner_for(idx, ctx.sq_shift) {
                break;
            }
            // Covered by a doorbell, or stable long enough?
            let covered = q.sq_db.is_some_and(|pi| {
                let ahead = pi.wrapping_sub(idx) & 0xffff;
                ahead != 0 && ahead <= 1 << ctx.sq_shift
            });
            if !covered {
                let fp = fingerprint(&raw);
                let slot = (idx & ((1 << ctx.sq_shift) - 1)) as usize;
                if q.stale.get(slot) == Some(&fp) {
                    // The previous life's WQE, not a new one.
                    break;
                }
                match q.pending {
                    Some((i, t, f)) if i == idx && f == fp && now.duration_since(t) >= STABLE => {
                        if q.scan_took != Some(idx) {
                            self.stats.scan_found += 1;
                            let line = format!(
                                "QP {qpn:#x}: SQ WQE {idx} taken by the scan, unchanged for {} ms without a doorbell (last SQ doorbell {:?})",
                                now.duration_since(t).as_millis(),
                                q.sq_db,
                            );
                            self.log(&line);
                            if let Some(q) = self.qps.get_mut(&qpn) {
                                q.scan_took = Some(idx);
                            }
                        }
                    }
                    Some((i, _, f)) if i == idx && f == fp => break,
                    _ => {
                        // New, or still being written: (re)start the clock.
                        if let Some(q) = self.qps.get_mut(&qpn) {
                            q.pending = Some((idx, now, fp));
                        }
                        break;
                    }
                }
            }
            let step = match ctx.tst {
                tst::RC | tst::XRC => self.exec_rc(host, mem, wire, &ctx, idx, &raw, now),
                tst::UD => self.exec_ud(host, mem, wire, &ctx, idx, &raw),
                t => {
                    self.log(&format!("QP {qpn:#x}: transport type {t} not modelled yet"));
                    if let Some(q) = self.qps.get_mut(&qpn) {
                        q.stopped = true;
                    }
                    break;
                }
            };
            let Some(q) = self.qps.get_mut(&qpn) else {
                break;
            };
            match step {
                Step::Done | Step::Failed => {
                    let slot = (q.sq_ci & ((1 << ctx.sq_shift) - 1)) as usize;
                    if let Some(f) = q.stale.get_mut(slot) {
                        *f = 0;
                    }
                    q.sq_ci = q.sq_ci.wrapping_add(1);
                    q.pending = None;
                    q.scan_took = None;
                    q.blocked = None;
                    q.rnr = None;
                    q.done += 1;
                    q.first.get_or_insert(now);
                    q.last = Some(now);
                    self.stats.wqes += 1;
                    did = true;
                    if matches!(step, Step::Failed) {
                        q.stopped = true;
                        break;
                    }
                }
                Step::Wait => {
                    if q.blocked.is_none() {
                        q.blocked = Some(now);
                    }
                    break;
                }
            }
        }
        did
    }

    /// A QP in ERR: completes its outstanding SQ WQEs, then its RQ WQEs,
    /// up to the producer indexes the driver wrote at the move to ERR,
    /// each with a WR_FLUSH_ERR CQE (signaled or not, as the IB spec wants
    /// for flushed work); waits while a CQ is full. Returns whether any
    /// CQE was written.
    fn flush<M: Dma>(&mut self, mem: &M, qpn: u32) -> bool {
        let mut did = false;
        loop {
            let Some(q) = self.qps.get(&qpn) else {
                return did;
            };
            let ctx = q.ctx.clone();
            let (sq_left, rq_left) = (q.sq_to_flush(), q.rq_to_flush());
            let (sq_ci, rq_ci) = (q.sq_ci, q.rq_ci);
            let cqe = if sq_left != 0 {
                if !self.cq_room(mem, ctx.tx_cqn, 1) {
                    return did;
                }
                let mut raw = [0u8; SQ_WQE_HDR];
                // The opcode is informational (the driver does not decode
                // it for an error status).
                let opcode = match ctx.buf.read(mem, ctx.sq_wqe_off(sq_ci), &mut raw) {
                    Ok(()) => RcWqe::from_bytes(&raw).opcode,
                    Err(_) => op::SEND,
                };
                (
                    ctx.tx_cqn,
                    Cqe {
                        opcode,
                        status: status::WR_FLUSH_ERR,
                        wqe_idx: sq_ci as u16,
                        lcl_qpn: qpn,
                        ..Cqe::default()
                    },
                )
            } else if rq_left != 0 {
                if !self.cq_room(mem, ctx.rx_cqn, 1) {
                    return did;
                }
                (
                    ctx.rx_cqn,
                    Cqe {
                        opcode: rop::SEND,
                        is_recv: true,
                        status: status::WR_FLUSH_ERR,
                        wqe_idx: rq_ci as u16,
                        lcl_qpn: qpn,
                        ..Cqe::default()
                    },
                )
            } else {
                return did;
            };
            self.push_cqe(mem, cqe.0, &cqe.1);
            did = true;
            if let Some(q) = self.qps.get_mut(&qpn) {
                if sq_left != 0 {
                    q.sq_ci = q.sq_ci.wrapping_add(1);
                } else {
                    q.rq_ci = q.rq_ci.wrapping_add(1);
                }
            }
        }
    }

    /// Room for `n` more CQEs on `cqn`? The first time a CQ is found full
    /// it raises one CQ_OVERFLOW AEQE (queue = CQN; once per CQ, as
    /// hardware puts an overrun CQ in error): the driver reports
    /// IB_EVENT_CQ_ERR to the CQ's owner. The work that needed the CQE
    /// waits (hardware would overrun the CQ; the model loses nothing).
    fn cq_room<M: Dma>(&mut self, mem: &M, cqn: u32, n: u32) -> bool {
        let room = self.cq_space(mem, cqn, n);
        let Some(c) = self.cqs.get_mut(&cqn) else {
            return room;
        };
        if !room && !c.overflow {
            c.overflow = true;
            self.aeqes.push((aev::CQ_OVERFLOW, cqn));
            let pi = c.pi;
            self.log(&format!(
                "CQ {cqn:#x} full (producer index {pi:#x}): CQ_OVERFLOW event"
            ));
        }
        room
    }

    /// Room for the send CQE of a WQE of `s`: an overflow counts only
    /// when the WQE completes for sure (signaled); an unsignaled one only
    /// keeps room for a possible error CQE.
    fn send_cq_room<M: Dma>(&mut self, mem: &M, s: &QpCtx, signaled: bool) -> bool {
        if s.sig_all || signaled {
            self.cq_room(mem, s.tx_cqn, 1)
        } else {
            self.cq_space(mem, s.tx_cqn, 1)
        }
    }

    /// Room for `n` more CQEs on `cqn` (no side effects).
    fn cq_space<M: Dma>(&self, mem: &M, cqn: u32, n: u32) -> bool {
        let Some(c) = self.cqs.get(&cqn) else {
            return false;
        };
        let ci = match c.ctx.db {
            Some(a) => mem.read_u32(a).map(|v| v & 0xff_ffff).unwrap_or(c.ci_db),
            None => c.ci_db,
        };
        let used = c.pi.wrapping_sub(ci) & 0xff_ffff;
        used + n <= c.ctx.depth
    }

    /// Appends a CQE to `cqn`.
    fn push_cqe<M: Dma>(&mut self, mem: &M, cqn: u32, cqe: &Cqe) {
        let Some(c) = self.cqs.get(&cqn) else {
            self.log(&format!("CQE for unknown CQ {cqn:#x} dropped"));
            return;
        };
        let slot = c.pi & (c.ctx.depth - 1);
        let owner = c.pi & c.ctx.depth == 0;
        let bytes = cqe.encode(c.ctx.cqe_size as usize, owner);
        let r = c
            .ctx
            .buf
            .addr(mem, u64::from(slot) * u64::from(c.ctx.cqe_size))
            .map_err(|e| e.to_string())
            .and_then(|a| {
                self.checked(Owner::Cq(cqn), a, bytes.len())?;
                // Body first, the word with the owner bit last.
                mem.write(a + 4, &bytes[4..])
                    .and_then(|()| mem.write(a, &bytes[..4]))
                    .map_err(|e| e.to_string())
            });
        match r {
            Ok(()) => {
                if let Some(c) = self.cqs.get_mut(&cqn) {
                    c.pi = c.pi.wrapping_add(1);
                }
                self.stats.cqes += 1;
                if cqe.status != status::SUCCESS {
                    self.stats.errors += 1;
                }
                self.touched.insert(cqn);
            }
            Err(e) => self.log(&format!("CQ {cqn:#x}: CQE not written: {e}")),
        }
    }

    /// One CEQE per CQ that got CQEs (every CQ counts as armed).
    fn raise_events<M: Dma, H: Host>(&mut self, host: &mut H, mem: &M) {
        for (ev, queue) in std::mem::take(&mut self.aeqes) {
            if ev == aev::SRQ_LIMIT_REACH {
                // The limit is disarmed: a QUERY_SRQC reads 0 from now on.
                if let Ok(a) = host.ctx_addr(mem, Table::Srqc, queue) {
                    if let Ok(w) = mem.read_u32(a + 4) {
                        let _ = mem.write(a + 4, &(w & !0xffff).to_le_bytes());
                    }
                }
            }
            host.post_event(mem, ev, 0, queue);
        }
        for cqn in std::mem::take(&mut self.touched) {
            if let Some(c) = self.cqs.get(&cqn) {
                host.post_ceqe(mem, c.ctx.ceqn, cqn);
                self.stats.ceqes += 1;
            }
        }
    }

    /// The MPT entry of `key`.
    fn mpt<M: Dma, H: Host>(&self, host: &H, mem: &M, key: u32) -> Result<MptEntry, KeyError> {
        let (_, b) = self.mpt_raw(host, mem, key)?;
        Ok(MptEntry::from_bytes(&b))
    }

    /// The address and bytes of the MPT `key` names.
    fn mpt_raw<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        key: u32,
    ) -> Result<(u64, [u8; 64]), KeyError> {
        let a = host
            .ctx_addr(mem, Table::Mpt, MptEntry::index(key))
            .map_err(|_| KeyError::BadKey)?;
        let mut b = [0u8; 64];
        mem.read(a, &mut b).map_err(|_| KeyError::BadKey)?;
        Ok((a, b))
    }

    /// FAST_REG_PMR: writes the MPT of a free fast-register MR of the QP's
    /// PD from the WQE.
    fn fast_reg<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        s: &QpCtx,
        raw: &[u8],
    ) -> Result<(), String> {
        let f = FrmrWqe::from_bytes(raw);
        let (a, mut b) = self
            .mpt_raw(host, mem, f.key)
            .map_err(|e| format!("fast register key {:#x}: {e}", f.key))?;
        let m = MptEntry::from_bytes(&b);
        if !m.fre || m.state != MPT_ST_FREE || m.pd != s.pd {
            return Err(format!(
                "fast register key {:#x}: MPT not a free FRMR of PD {:#x} (state {}, FRE {}, PD {:#x})",
                f.key, s.pd, m.state, m.fre, m.pd
            ));
        }
        xlate::mpt_fast_reg(&mut b, &f);
        mem.write(a, &b).map_err(|e| e.to_string())?;
        self.track_mpt(host, mem, MptEntry::index(f.key));
        Ok(())
    }

    /// LOCAL_INV (`remote` false) / the responder's part of SEND_WITH_INV
    /// (`remote`, needs `R_INV_EN`): a valid fast-register MR of PD `pd`
    /// with key `key` goes back to free.
    fn invalidate<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        pd: u32,
        key: u32,
        remote: bool,
    ) -> Result<(), String> {
        let (a, mut b) = self
            .mpt_raw(host, mem, key)
            .map_err(|e| format!("invalidate key {key:#x}: {e}"))?;
        let m = MptEntry::from_bytes(&b);
        let ok = m.key == key
            && m.pd == pd
            && m.state == MPT_ST_VALID
            && if remote { m.r_inv } else { m.fre };
        if !ok {
            return Err(format!(
                "invalidate key {key:#x}: MPT key {:#x} state {} PD {:#x} FRE {} R_INV_EN {}",
                m.key, m.state, m.pd, m.fre, m.r_inv
            ));
        }
        xlate::mpt_invalidate(&mut b);
        mem.write(a, &b).map_err(|e| e.to_string())?;
        self.track_mpt(host, mem, MptEntry::index(key));
        Ok(())
    }

    /// The DMA pieces of `len` bytes at `va` under `key`, checked.
    fn key_pieces<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        pd: u32,
        span: Span,
        access: Access,
    ) -> Result<Vec<(u64, u64)>, KeyError> {
        let m = self.mpt(host, mem, span.key)?;
        m.check(span.key, pd, span.va, span.len, access)?;
        m.pieces(mem, span.va, span.len).inspect_err(|e| {
            if let KeyError::Xlate(XlateError::BadPage { .. }) = e {
                // Hardware would DMA wherever that walk led.
                let mut live = self.live.borrow_mut();
                live.bad += 1;
                if !self.quiet && live.bad <= 50 {
                    eprintln!("hns-sim engine: bad DMA refused: key {:#x}: {e}", span.key);
                }
            }
        })
    }

    /// The data segments of an SQ WQE (without zero-length ones).
    fn sq_sges<M: Dma>(
        &self,
        mem: &M,
        ctx: &QpCtx,
        w: &RcWqe,
        raw: &[u8],
    ) -> Result<Vec<DataSeg>, String> {
        let mut out = Vec::new();
        let n = w.sge_num as usize;
        for i in 0..n.min(wqe::SGE_IN_WQE) {
            let o = wqe::SQ_WQE_HDR + i * SGE_SIZE;
            out.push(DataSeg::from_bytes(raw.get(o..o + SGE_SIZE).unwrap_or(&[])));
        }
        for i in wqe::SGE_IN_WQE..n {
            let mut b = [0u8; SGE_SIZE];
            let at = ctx.sge_at(w.start_sge + (i - wqe::SGE_IN_WQE) as u32);
            ctx.buf.read(mem, at, &mut b).map_err(|e| e.to_string())?;
            out.push(DataSeg::from_bytes(&b));
        }
        out.retain(|s| s.len != 0);
        Ok(out)
    }

    /// The payload of a SEND/WRITE WQE: inline data or the gathered SGEs.
    fn gather<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        ctx: &QpCtx,
        w: &RcWqe,
        raw: &[u8],
    ) -> Result<Vec<u8>, Fail> {
        let len = w.msg_len as usize;
        let mut data = vec![0u8; len];
        let loc = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        if w.inline {
            if w.inline_ext {
                // Contiguous in the extended SGE ring from start_sge, wrapping.
                let mut done = 0usize;
                let mut idx = w.start_sge;
                while done < len {
                    let n = (len - done).min(SGE_SIZE);
                    ctx.buf
                        .read(mem, ctx.sge_at(idx), &mut data[done..done + n])
                        .map_err(|e| loc(status::LOC_QP_OP_ERR, format!("inline data: {e}")))?;
                    done += n;
                    idx = idx.wrapping_add(1);
                }
            } else {
                let src = raw
                    .get(wqe::SQ_WQE_HDR..wqe::SQ_WQE_HDR + len)
                    .ok_or_else(|| loc(status::LOC_LEN_ERR, format!("inline length {len}")))?;
                data.copy_from_slice(src);
            }
            return Ok(data);
        }
        let sges = self
            .sq_sges(mem, ctx, w, raw)
            .map_err(|e| loc(status::LOC_QP_OP_ERR, format!("SGE list: {e}")))?;
        let mut done = 0usize;
        for s in sges {
            if done >= len {
                break;
            }
            let n = (s.len as usize).min(len - done);
            let pieces = self
                .key_pieces(
                    host,
                    mem,
                    ctx.pd,
                    Span {
                        key: s.lkey,
                        va: s.addr,
                        len: n as u64,
                    },
                    Access::LocalRead,
                )
                .map_err(|e| loc(status::LOC_PROT_ERR, format!("lkey {:#x}: {e}", s.lkey)))?;
            for (a, l) in pieces {
                let l = l as usize;
                mem.read(a, &mut data[done..done + l])
                    .map_err(|e| loc(status::LOC_PROT_ERR, e.to_string()))?;
                done += l;
            }
        }
        if done < len {
            return Err(loc(
                status::LOC_LEN_ERR,
                format!("SGEs hold {done} of {len} bytes"),
            ));
        }
        Ok(data)
    }

    /// The receive WQE the next message for QP `d` goes to: the RQ's
    /// head, or the SRQ's next index queue entry; `None` when nothing is
    /// posted.
    fn next_recv<M: Dma>(&self, mem: &M, d: &QpCtx, srq: Option<u32>) -> Option<Recv> {
        let Some(srqn) = srq else {
            let ci = self.qps.get(&d.qpn).map_or(0, |q| q.rq_ci);
            return (self.rq_pi(mem, d) != ci & 0xffff).then_some(Recv::Rq { qpn: d.qpn, ci });
        };
        let s = self.srqs.get(&srqn)?;
        if self.srq_pi(mem, s) == s.ci & 0xffff {
            return None;
        }
        let mask = (1u32 << s.ctx.shift) - 1;
        let mut e = [0u8; 4];
        s.ctx
            .idx
            .read(mem, u64::from(s.ci & mask) * 4, &mut e)
            .ok()?;
        Some(Recv::Srq {
            srqn: s.ctx.srqn,
            ci: s.ci,
            wqe: u32::from_le_bytes(e) & mask,
        })
    }

    /// SRQ producer index (16 bits): the record doorbell, else the last
    /// SRQ doorbell seen.
    fn srq_pi<M: Dma>(&self, mem: &M, s: &Srq) -> u32 {
        match s.ctx.db {
            Some(a) => mem.read_u32(a).map(|v| v & 0xffff).unwrap_or(s.pi_db),
            None => s.pi_db,
        }
    }

    /// Scatters `data` into the receive WQE `r` of QP `d` (lkeys checked
    /// against the SRQ's PD for an SRQ, else the QP's).
    fn scatter<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        d: &QpCtx,
        r: Recv,
        data: &[u8],
    ) -> Result<(), Fail> {
        let rem = |resp: u8, req: u8, why: String| Fail {
            req,
            resp: Some(resp),
            why,
        };
        let (buf, off, rqws, pd) = match r {
            Recv::Rq { ci, .. } => (&d.buf, d.rq_wqe_off(ci), d.rqws, d.pd),
            Recv::Srq { srqn, wqe, .. } => {
                let s = self.srqs.get(&srqn).ok_or_else(|| {
                    rem(
                        status::LOC_QP_OP_ERR,
                        status::REM_OP_ERR,
                        format!("SRQ {srqn:#x} gone"),
                    )
                })?;
                let c = &s.ctx;
                (&c.buf, u64::from(wqe) << (4 + c.rqws), c.rqws, c.pd)
            }
        };
        let stride = 16usize << rqws;
        let mut raw = vec![0u8; stride];
        buf.read(mem, off, &mut raw).map_err(|e| {
            rem(
                status::LOC_QP_OP_ERR,
                status::REM_OP_ERR,
                format!("RQ WQE: {e}"),
            )
        })?;
        let mut done = 0usize;
        for c in raw.chunks_exact(SGE_SIZE) {
            if done >= data.len() {
                break;
            }
            let s = DataSeg::from_bytes(c);
            if s.len == wqe::INVALID_SGE_LENGTH && s.lkey == 0 {
                break;
            }
            if s.len == 0 {
                continue;
            }
            let n = (s.len as usize).min(data.len() - done);
            let pieces = self
                .key_pieces(
                    host,
                    mem,
                    pd,
                    Span {
                        key: s.lkey,
                        va: s.addr,
                        len: n as u64,
                    },
                    Access::LocalWrite,
                )
                .map_err(|e| {
                    rem(
                        status::LOC_PROT_ERR,
                        status::REM_OP_ERR,
                        format!("receive lkey {:#x}: {e}", s.lkey),
                    )
                })?;
            for (a, l) in pieces {
                let l = l as usize;
                self.put(mem, s.lkey, a, &data[done..done + l])
                    .map_err(|e| rem(status::LOC_PROT_ERR, status::REM_OP_ERR, e.to_string()))?;
                done += l;
            }
        }
        if done < data.len() {
            return Err(rem(
                status::LOC_LEN_ERR,
                status::REM_INV_REQ_ERR,
                format!("receive WQE holds {done} of {} bytes", data.len()),
            ));
        }
        Ok(())
    }

    /// RQ producer index of `d` (16 bits).
    fn rq_pi<M: Dma>(&self, mem: &M, d: &QpCtx) -> u32 {
        let fallback = self.qps.get(&d.qpn).map_or(0, |q| q.rq_db);
        match d.rq_db {
            Some(a) => mem.read_u32(a).map(|v| v & 0xffff).unwrap_or(fallback),
            None => fallback,
        }
    }

    /// Sends `req` to the device owning `dgid`: another device on the wire
    /// when one owns it and this one does not, else this device (loopback;
    /// also for a GID nobody owns, as before the wire existed).
    fn deliver<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        dgid: &[u8; 16],
        req: &Request,
    ) -> Response {
        if !host.owns_gid(dgid) {
            if let Some(dev) = wire.route(dgid) {
                let r = wire.respond(dev, mem, req);
                if !matches!(r, Response::Wait | Response::NotReady) {
                    self.stats.wire += 1;
                }
                return r;
            }
        }
        self.respond(host, mem, req)
    }

    /// Executes one RC WQE of `s` at SQ index `idx`: the requester's part
    /// (gather, local checks), the responder's part on the destination
    /// device ([`Engine::respond`]), then the requester's completion.
    #[allow(clippy::too_many_arguments)]
    fn exec_rc<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        s: &QpCtx,
        idx: u32,
        raw: &[u8],
        now: Instant,
    ) -> Step {
        let w = RcWqe::from_bytes(raw);
        let send_cqe = |status: u8| Cqe {
            opcode: w.opcode,
            status,
            wqe_idx: idx as u16,
            lcl_qpn: s.qpn,
            rmt_qpn: s.dqpn,
            ..Cqe::default()
        };
        // Room for the requester's CQE (always reserved: errors complete
        // even unsignaled WQEs; only a signaled WQE reports an overflow).
        if !self.send_cq_room(mem, s, w.signaled) {
            return Step::Wait;
        }
        let local = |f: Fail| Err::<RcOp, Fail>(f);
        let prepared = match w.opcode {
            op::FAST_REG_PMR | op::LOCAL_INV => {
                let done = if w.opcode == op::FAST_REG_PMR {
                    self.fast_reg(host, mem, s, raw)
                } else {
                    self.invalidate(host, mem, s.pd, w.imm, false)
                };
                if let Err(why) = done {
                    self.log(&format!(
                        "QP {:#x} WQE {idx} opcode {:#x}: {why}",
                        s.qpn, w.opcode
                    ));
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_PROT_ERR));
                    return Step::Failed;
                }
                if s.sig_all || w.signaled {
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::SUCCESS));
                }
                return Step::Done;
            }
            op::SEND | op::SEND_WITH_IMM | op::SEND_WITH_INV => {
                self.gather(host, mem, s, &w, raw).map(|data| RcOp::Send {
                    imm: (w.opcode == op::SEND_WITH_IMM).then_some(w.imm),
                    inv: (w.opcode == op::SEND_WITH_INV).then_some(w.imm),
                    xrc_srqn: w.xrc_srqn,
                    data,
                })
            }
            op::RDMA_WRITE | op::RDMA_WRITE_WITH_IMM => {
                self.gather(host, mem, s, &w, raw).map(|data| RcOp::Write {
                    imm: (w.opcode == op::RDMA_WRITE_WITH_IMM).then_some(w.imm),
                    xrc_srqn: w.xrc_srqn,
                    rkey: w.rkey,
                    va: w.va,
                    data,
                })
            }
            op::RDMA_READ => Ok(RcOp::Read {
                xrc_srqn: w.xrc_srqn,
                rkey: w.rkey,
                va: w.va,
                len: w.msg_len,
            }),
            op::ATOM_CMP_AND_SWAP | op::ATOM_FETCH_AND_ADD => {
                // The local buffer first: nothing changes remotely if it
                // is bad.
                match self.atomic_local(host, mem, s, raw) {
                    Ok(_) => {
                        let opnd = |o: usize| {
                            let mut b = [0u8; 8];
                            if let Some(x) = raw.get(o..o + 8) {
                                b.copy_from_slice(x);
                            }
                            u64::from_le_bytes(b)
                        };
                        Ok(RcOp::Atomic {
                            cmp_swap: w.opcode == op::ATOM_CMP_AND_SWAP,
                            xrc_srqn: w.xrc_srqn,
                            rkey: w.rkey,
                            va: w.va,
                            swap_add: opnd(wqe::ATOMIC_SEG),
                            compare: opnd(wqe::ATOMIC_SEG + 8),
                        })
                    }
                    Err(f) => local(f),
                }
            }
            o => local(Fail {
                req: status::LOC_QP_OP_ERR,
                resp: None,
                why: format!("opcode {o:#x} not modelled yet"),
            }),
        };
        let rc_op = match prepared {
            Ok(o) => o,
            Err(f) => {
                self.log(&format!(
                    "QP {:#x} WQE {idx} opcode {:#x}: {} (status {:#x})",
                    s.qpn, w.opcode, f.why, f.req
                ));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(f.req));
                return Step::Failed;
            }
        };
        // An RNR NAK was taken: no new try before the RNR timer expires.
        let rnr = self.qps.get(&s.qpn).and_then(|q| q.rnr);
        if rnr.is_some_and(|(_, due)| now < due) {
            return Step::Wait;
        }
        let req = Request {
            sqpn: s.qpn,
            dqpn: s.dqpn,
            op: Op::Rc(rc_op),
        };
        let result = match self.deliver(host, mem, wire, &s.dgid, &req) {
            Response::Wait => return Step::Wait,
            Response::Rnr(_) if s.rnr_retry == 7 => return Step::Wait,
            Response::Rnr(t) => {
                let left = rnr.map_or(s.rnr_retry, |(n, _)| n);
                if left == 0 {
                    self.log(&format!(
                        "QP {:#x} WQE {idx}: RNR retries ({}) exceeded",
                        s.qpn, s.rnr_retry
                    ));
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::RNR_RETRY_EXC_ERR));
                    return Step::Failed;
                }
                if let Some(q) = self.qps.get_mut(&s.qpn) {
                    q.rnr = Some((left - 1, now + rnr_delay(t)));
                }
                return Step::Wait;
            }
            Response::NotReady => return self.dest_not_ready(mem, s, idx, &w, now),
            Response::Fail(f) => Err(f),
            Response::Done(data) => match &req.op {
                Op::Rc(RcOp::Read { len, .. }) => self
                    .read_result(host, mem, s, &w, raw, &data)
                    .map(|()| *len),
                Op::Rc(RcOp::Atomic { .. }) => {
                    self.atomic_local(host, mem, s, raw).and_then(|pieces| {
                        let mut done = 0usize;
                        for (a, l) in pieces {
                            let l = l as usize;
                            let part = data.get(done..done + l).unwrap_or(&[]);
                            self.put(
                                mem,
                                DataSeg::from_bytes(raw.get(wqe::SQ_WQE_HDR..).unwrap_or(&[])).lkey,
                                a,
                                part,
                            )
                            .map_err(|e| Fail {
                                req: status::LOC_PROT_ERR,
                                resp: None,
                                why: e.to_string(),
                            })?;
                            done += l;
                        }
                        Ok(8)
                    })
                }
                _ => Ok(0),
            },
        };
        match result {
            Ok(len) => {
                if s.sig_all || w.signaled {
                    let mut c = send_cqe(status::SUCCESS);
                    c.byte_cnt = len;
                    self.push_cqe(mem, s.tx_cqn, &c);
                }
                Step::Done
            }
            Err(f) => {
                self.log(&format!(
                    "QP {:#x} WQE {idx} opcode {:#x}: {} (status {:#x})",
                    s.qpn, w.opcode, f.why, f.req
                ));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(f.req));
                Step::Failed
            }
        }
    }

    /// The responder's part of a message arriving for QP `req.dqpn` of
    /// this device (from this device or another one on the wire).
    pub fn respond<M: Dma, H: Host>(&mut self, host: &mut H, mem: &M, req: &Request) -> Response {
        let d = self.qps.get(&req.dqpn).map(|q| q.ctx.clone());
        match &req.op {
            Op::Ud(u) => self.respond_ud(host, mem, d, req.sqpn, u),
            Op::Rc(o) => {
                let Some(d) = d else {
                    return Response::NotReady;
                };
                if !(qps::RTR..=qps::SQD).contains(&d.state) {
                    return Response::NotReady;
                }
                let raised = self.aeqes.len();
                let r = self.respond_rc(host, mem, &d, req.sqpn, o);
                self.affiliated_error(&d, &r, raised);
                r
            }
        }
    }

    /// The affiliated asynchronous event of a request the responder QP
    /// `d` rejected without a CQE of its own: LOCAL_WQ_ACCESS_ERROR when
    /// the requester gets REM_ACCESS_ERR, INV_REQ_LOCAL_WQ_ERROR when it
    /// gets REM_INV_REQ_ERR. Not when the rejection already raised an event
    /// (an AEQE queued since `raised`, e.g. XRCD_VIOLATION) or completed a
    /// receive WQE in error (the CQE reports it).
    fn affiliated_error(&mut self, d: &QpCtx, r: &Response, raised: usize) {
        let Response::Fail(f) = r else {
            return;
        };
        if f.resp.is_some() || self.aeqes.len() > raised {
            return;
        }
        let ev = match f.req {
            status::REM_ACCESS_ERR => aev::LOCAL_WQ_ACCESS_ERROR,
            status::REM_INV_REQ_ERR => aev::INV_REQ_LOCAL_WQ_ERROR,
            _ => return,
        };
        self.log(&format!(
            "QP {:#x}: responder error event {ev:#x} ({})",
            d.qpn, f.why
        ));
        self.aeqes.push((ev, d.qpn));
    }

    /// RC/XRC responder: checks, then the remote memory access and/or the
    /// receive WQE and its CQE.
    fn respond_rc<M: Dma, H: Host>(
        &mut self,
        host: &mut H,
        mem: &M,
        d: &QpCtx,
        sqpn: u32,
        o: &RcOp,
    ) -> Response {
        let rerr = |why: String| {
            Response::Fail(Fail {
                req: status::REM_ACCESS_ERR,
                resp: None,
                why,
            })
        };
        // Memory keys are checked against the QP's PD; an XRC target has
        // none (the C driver writes PD 0): every request names an XRC SRQ
        // of the target's domain, and that SRQ's PD is the one (IBA 11.2.5,
        // XRC: the XRC SRQ provides the protection domain).
        let (RcOp::Read { xrc_srqn, .. }
        | RcOp::Atomic { xrc_srqn, .. }
        | RcOp::Send { xrc_srqn, .. }
        | RcOp::Write { xrc_srqn, .. }) = o;
        let xrc_srqn = *xrc_srqn;
        let pd = if d.xrc_tgt {
            let srq = self
                .srqs
                .get(&xrc_srqn)
                .filter(|x| x.ctx.xrc && x.ctx.xrcd == d.qkey);
            let Some(x) = srq else {
                self.aeqes.push((aev::XRCD_VIOLATION, d.qpn));
                return Response::Fail(Fail {
                    req: status::REM_INV_REQ_ERR,
                    resp: None,
                    why: format!(
                        "XRC SRQ {xrc_srqn:#x} not in XRC domain {:#x} of QP {:#x}",
                        d.qkey, d.qpn
                    ),
                });
            };
            x.ctx.pd
        } else {
            d.pd
        };
        let mut inv_key = None;
        let (imm, data, write) = match o {
            RcOp::Read { rkey, va, len, .. } => {
                return match self.rdma_read(host, mem, d, pd, *rkey, *va, *len) {
                    Ok(data) => Response::Done(data),
                    Err(f) => Response::Fail(f),
                };
            }
            RcOp::Atomic {
                cmp_swap,
                rkey,
                va,
                swap_add,
                compare,
                ..
            } => {
                return match self
                    .atomic(host, mem, d, pd, *cmp_swap, *rkey, *va, *swap_add, *compare)
                {
                    Ok(old) => Response::Done(old.to_le_bytes().to_vec()),
                    Err(f) => Response::Fail(f),
                };
            }
            RcOp::Send { imm, inv, data, .. } => {
                inv_key = *inv;
                (*imm, data, None)
            }
            RcOp::Write {
                imm,
                rkey,
                va,
                data,
                ..
            } => (*imm, data, Some((*rkey, *va))),
        };
        let needs_recv = write.is_none() || imm.is_some();
        let recv = if needs_recv {
            // An XRC target receives into the SRQ the initiator named
            // (checked above).
            let srq = if d.xrc_tgt {
                Some(xrc_srqn)
            } else {
                d.srq.then_some(d.srqn)
            };
            // Receiver not ready: an RNR NAK with this QP's timer.
            let Some(r) = self.next_recv(mem, d, srq) else {
                return Response::Rnr(d.min_rnr);
            };
            let rcqn = self.recv_cqn(d, r);
            if !self.cq_room(mem, rcqn, 1) {
                return Response::Wait;
            }
            Some(r)
        } else {
            None
        };
        if let Some((rkey, va)) = write {
            if !d.rwe {
                return rerr("remote write not enabled on the QP".into());
            }
            let span = Span {
                key: rkey,
                va,
                len: data.len() as u64,
            };
            let pieces = match self.key_pieces(host, mem, pd, span, Access::RemoteWrite) {
                Ok(p) => p,
                Err(e) => return rerr(format!("rkey {rkey:#x}: {e}")),
            };
            let mut done = 0usize;
            for (a, l) in pieces {
                let l = l as usize;
                if let Err(e) = self.put(mem, rkey, a, &data[done..done + l]) {
                    return rerr(e.to_string());
                }
                done += l;
            }
        }
        let Some(r) = recv else {
            return Response::Done(Vec::new());
        };
        let cqn = self.recv_cqn(d, r);
        if let Some(k) = inv_key {
            // SEND_WITH_INV: the rkey must name a valid MR of this QP's PD
            // that allows remote invalidation.
            if let Err(why) = self.invalidate(host, mem, pd, k, true) {
                return Response::Fail(Fail {
                    req: status::REM_INV_REQ_ERR,
                    resp: None,
                    why,
                });
            }
        }
        let scattered = if write.is_none() {
            self.scatter(host, mem, d, r, data)
        } else {
            Ok(())
        };
        let mut cqe = Cqe {
            opcode: match (write.is_some(), imm.is_some(), inv_key.is_some()) {
                (true, _, _) => rop::RDMA_WRITE_IMM,
                (false, true, _) => rop::SEND_WITH_IMM,
                (false, false, true) => rop::SEND_WITH_INV,
                (false, false, false) => rop::SEND,
            },
            is_recv: true,
            status: status::SUCCESS,
            wqe_idx: r.wqe_idx(),
            xrc_srqn: self.xrc_srqn(r),
            // `rkey` shares the word with `immtdata` (`fill_recv_wc`
            // reports it as `invalidate_rkey`).
            imm: imm.or(inv_key).unwrap_or(0),
            lcl_qpn: d.qpn,
            byte_cnt: data.len() as u32,
            rmt_qpn: sqpn,
            ..Cqe::default()
        };
        match scattered {
            Ok(()) => {
                self.consume(mem, r);
                self.push_cqe(mem, cqn, &cqe);
                Response::Done(Vec::new())
            }
            Err(f) => {
                if let Some(rs) = f.resp {
                    cqe.opcode = rop::SEND;
                    cqe.status = rs;
                    cqe.imm = 0;
                    cqe.byte_cnt = 0;
                    self.consume(mem, r);
                    self.push_cqe(mem, cqn, &cqe);
                    if let Some(q) = self.qps.get_mut(&d.qpn) {
                        q.stopped = true;
                    }
                }
                Response::Fail(f)
            }
        }
    }

    /// Executes one UD WQE of `s`: SEND/SEND_WITH_IMM to the QPN in the
    /// WQE on the device owning the WQE's DGID, with the 40-byte GRH in
    /// front of the payload in the receive buffer. A datagram nobody can
    /// take (no such QP, Q_Key mismatch, no receive WQE, receive too small)
    /// is dropped; the sender completes anyway, as on a wire.
    fn exec_ud<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        s: &QpCtx,
        idx: u32,
        raw: &[u8],
    ) -> Step {
        let w = UdWqe::from_bytes(raw);
        let send_cqe = |status: u8| Cqe {
            opcode: w.opcode,
            status,
            wqe_idx: idx as u16,
            lcl_qpn: s.qpn,
            ..Cqe::default()
        };
        if !self.send_cq_room(mem, s, w.signaled) {
            return Step::Wait;
        }
        if !matches!(w.opcode, op::SEND | op::SEND_WITH_IMM) {
            self.log(&format!(
                "UD QP {:#x}: opcode {:#x} not modelled",
                s.qpn, w.opcode
            ));
            self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_QP_OP_ERR));
            return Step::Failed;
        }
        // Gather: every UD SGE is in the extended SGE area (none when the
        // data is inline).
        let mut sges = Vec::new();
        for i in 0..if w.inline { 0 } else { w.sge_num } {
            let mut b = [0u8; SGE_SIZE];
            if let Err(e) = s.buf.read(mem, s.sge_at(w.start_sge + i), &mut b) {
                self.log(&format!("UD QP {:#x}: SGE unreadable: {e}", s.qpn));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_QP_OP_ERR));
                return Step::Failed;
            }
            sges.push(DataSeg::from_bytes(&b));
        }
        let len = w.data_len() as usize;
        let mut data = vec![0u8; 40 + len];
        let mut done = 0usize;
        if w.inline {
            if let Err((st, why)) = ud_inline(mem, s, &w, &mut data[40..]) {
                self.log(&format!("UD QP {:#x}: inline data: {why}", s.qpn));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(st));
                return Step::Failed;
            }
            done = len;
        }
        for g in sges.iter().filter(|g| g.len != 0) {
            if done >= len {
                break;
            }
            let n = (g.len as usize).min(len - done);
            let span = Span {
                key: g.lkey,
                va: g.addr,
                len: n as u64,
            };
            let pieces = match self.key_pieces(host, mem, s.pd, span, Access::LocalRead) {
                Ok(p) => p,
                Err(e) => {
                    self.log(&format!("UD QP {:#x}: lkey {:#x}: {e}", s.qpn, g.lkey));
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_PROT_ERR));
                    return Step::Failed;
                }
            };
            for (a, l) in pieces {
                let l = l as usize;
                if mem.read(a, &mut data[40 + done..40 + done + l]).is_err() {
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_PROT_ERR));
                    return Step::Failed;
                }
                done += l;
            }
        }
        if done < len {
            self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_LEN_ERR));
            return Step::Failed;
        }
        let sgid = host.gid(u32::from(w.sgid_index)).unwrap_or([0; 16]);
        let port_type = grh(&mut data[..40], &w, &sgid, len);
        // Bit 31 of the WQE's Q_Key: use the QP's own (libhns already
        // resolves it, the kernel may not).
        let qkey = if w.qkey & (1 << 31) != 0 {
            s.qkey
        } else {
            w.qkey
        };
        let req = Request {
            sqpn: s.qpn,
            dqpn: w.dqpn,
            op: Op::Ud(UdMsg {
                imm: (w.opcode == op::SEND_WITH_IMM).then_some(w.imm),
                qkey,
                port_type,
                sl: w.sl,
                data,
            }),
        };
        if let Response::Wait = self.deliver(host, mem, wire, &w.dgid, &req) {
            return Step::Wait;
        }
        if s.sig_all || w.signaled {
            self.push_cqe(mem, s.tx_cqn, &send_cqe(status::SUCCESS));
        }
        Step::Done
    }

    /// UD responder: the datagram goes to a receive WQE of `d` or is
    /// dropped (no QP, not ready, Q_Key mismatch, no receive WQE, too
    /// small). Waits (without dropping) only for CQ space.
    fn respond_ud<M: Dma, H: Host>(
        &mut self,
        host: &mut H,
        mem: &M,
        d: Option<QpCtx>,
        sqpn: u32,
        u: &UdMsg,
    ) -> Response {
        let dropped = Response::Done(Vec::new());
        let Some(d) = d else {
            self.log(&format!("UD QP {sqpn:#x}: no destination QP, dropped"));
            return dropped;
        };
        let ready = d.tst == tst::UD
            && (qps::RTR..=qps::SQD).contains(&d.state)
            && (d.qkey == u.qkey || d.qpn == 1);
        let srq = d.srq.then_some(d.srqn);
        let Some(r) = ready.then(|| self.next_recv(mem, &d, srq)).flatten() else {
            self.log(&format!(
                "UD QP {sqpn:#x} -> {:#x}: datagram dropped",
                d.qpn
            ));
            return dropped;
        };
        if !self.cq_room(mem, d.rx_cqn, 1) {
            return Response::Wait;
        }
        if let Err(f) = self.scatter(host, mem, &d, r, &u.data) {
            self.log(&format!("UD QP {:#x}: dropped: {}", d.qpn, f.why));
            return dropped;
        }
        self.consume(mem, r);
        let opcode = if u.imm.is_some() {
            rop::SEND_WITH_IMM
        } else {
            rop::SEND
        };
        self.push_cqe(
            mem,
            d.rx_cqn,
            &Cqe {
                opcode,
                is_recv: true,
                wqe_idx: r.wqe_idx(),
                imm: u.imm.unwrap_or(0),
                lcl_qpn: d.qpn,
                byte_cnt: u.data.len() as u32,
                port_type: u.port_type,
                rmt_qpn: sqpn,
                sl: u.sl,
                grh: true,
                ..Cqe::default()
            },
        );
        Response::Done(Vec::new())
    }

    /// The local side of an atomic WQE: the DMA pieces of its result
    /// buffer (data segment at +32, 8 bytes, `LW_EN`).
    fn atomic_local<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        s: &QpCtx,
        raw: &[u8],
    ) -> Result<Vec<(u64, u64)>, Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        let g = DataSeg::from_bytes(raw.get(wqe::SQ_WQE_HDR..).unwrap_or(&[]));
        let span = Span {
            key: g.lkey,
            va: g.addr,
            len: 8,
        };
        let local = self
            .key_pieces(host, mem, s.pd, span, Access::LocalWrite)
            .map_err(|e| fail(status::LOC_PROT_ERR, format!("lkey {:#x}: {e}", g.lkey)))?;
        if g.len < 8 {
            return Err(fail(
                status::LOC_LEN_ERR,
                format!("atomic result SGE of {} bytes", g.len),
            ));
        }
        Ok(local)
    }

    /// ATOMIC_CMP_AND_SWAP (`cmp_swap`) / ATOMIC_FETCH_AND_ADD on the 8
    /// bytes at `va`/`rkey` of the responder `d` (little-endian, as the
    /// responder's CPU sees them); returns the original value.
    #[allow(clippy::too_many_arguments)]
    fn atomic<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        d: &QpCtx,
        pd: u32,
        cmp_swap: bool,
        rkey: u32,
        va: u64,
        swap_add: u64,
        compare: u64,
    ) -> Result<u64, Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        if !d.ate {
            return Err(fail(
                status::REM_ACCESS_ERR,
                "remote atomics not enabled on the QP".into(),
            ));
        }
        if !va.is_multiple_of(8) {
            return Err(fail(
                status::REM_INV_REQ_ERR,
                format!("atomic address {va:#x} not 8-byte aligned"),
            ));
        }
        let span = Span {
            key: rkey,
            va,
            len: 8,
        };
        let remote = self
            .key_pieces(host, mem, pd, span, Access::RemoteAtomic)
            .map_err(|e| fail(status::REM_ACCESS_ERR, format!("rkey {rkey:#x}: {e}")))?;
        let &[(ra, 8)] = remote.as_slice() else {
            return Err(fail(
                status::REM_ACCESS_ERR,
                "atomic target not in one page".into(),
            ));
        };
        let mut b = [0u8; 8];
        mem.read(ra, &mut b)
            .map_err(|e| fail(status::REM_ACCESS_ERR, e.to_string()))?;
        let old = u64::from_le_bytes(b);
        let new = if cmp_swap {
            (old == compare).then_some(swap_add)
        } else {
            Some(old.wrapping_add(swap_add))
        };
        if let Some(v) = new {
            self.put(mem, rkey, ra, &v.to_le_bytes())
                .map_err(|e| fail(status::REM_ACCESS_ERR, e.to_string()))?;
        }
        Ok(old)
    }

    /// RDMA READ, responder side: `len` bytes at `va`/`rkey` of `d`, the
    /// key checked against `pd` (the QP's, or an XRC target's SRQ's).
    #[allow(clippy::too_many_arguments)]
    fn rdma_read<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        d: &QpCtx,
        pd: u32,
        rkey: u32,
        va: u64,
        len: u32,
    ) -> Result<Vec<u8>, Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        if !d.rre {
            return Err(fail(
                status::REM_ACCESS_ERR,
                "remote read not enabled on the QP".into(),
            ));
        }
        let span = Span {
            key: rkey,
            va,
            len: u64::from(len),
        };
        let remote = self
            .key_pieces(host, mem, pd, span, Access::RemoteRead)
            .map_err(|e| fail(status::REM_ACCESS_ERR, format!("rkey {rkey:#x}: {e}")))?;
        let mut data = vec![0u8; len as usize];
        let mut done = 0usize;
        for (a, l) in remote {
            let l = l as usize;
            mem.read(a, &mut data[done..done + l])
                .map_err(|e| fail(status::REM_ACCESS_ERR, e.to_string()))?;
            done += l;
        }
        Ok(data)
    }

    /// RDMA READ, requester side: the response `data` into the local SGEs
    /// of the WQE.
    fn read_result<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        s: &QpCtx,
        w: &RcWqe,
        raw: &[u8],
        data: &[u8],
    ) -> Result<(), Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        let len = data.len();
        let sges = self
            .sq_sges(mem, s, w, raw)
            .map_err(|e| fail(status::LOC_QP_OP_ERR, format!("SGE list: {e}")))?;
        let mut done = 0usize;
        for g in sges {
            if done >= len {
                break;
            }
            let n = (g.len as usize).min(len - done);
            let span = Span {
                key: g.lkey,
                va: g.addr,
                len: n as u64,
            };
            let pieces = self
                .key_pieces(host, mem, s.pd, span, Access::LocalWrite)
                .map_err(|e| fail(status::LOC_PROT_ERR, format!("lkey {:#x}: {e}", g.lkey)))?;
            for (a, l) in pieces {
                let l = l as usize;
                self.put(mem, g.lkey, a, &data[done..done + l])
                    .map_err(|e| fail(status::LOC_PROT_ERR, e.to_string()))?;
                done += l;
            }
        }
        if done < len {
            return Err(fail(
                status::LOC_LEN_ERR,
                format!("SGEs hold {done} of {len} bytes"),
            ));
        }
        Ok(())
    }

    /// Takes receive WQE `r`; an SRQ that falls below its armed limit
    /// raises SRQ_LIMIT_REACH and disarms.
    fn consume<M: Dma>(&mut self, mem: &M, r: Recv) {
        match r {
            Recv::Rq { qpn, ci } => {
                if let Some(q) = self.qps.get_mut(&qpn) {
                    q.rq_ci = ci.wrapping_add(1);
                }
            }
            Recv::Srq { srqn, ci, .. } => {
                let Some(s) = self.srqs.get(&srqn) else {
                    return;
                };
                let pi = self.srq_pi(mem, s);
                let left = pi.wrapping_sub(ci.wrapping_add(1)) & 0xffff;
                let fire = s.limit != 0 && left < s.limit;
                if let Some(s) = self.srqs.get_mut(&srqn) {
                    s.ci = ci.wrapping_add(1);
                    if fire {
                        s.limit = 0;
                        self.aeqes.push((aev::SRQ_LIMIT_REACH, srqn));
                    }
                }
            }
        }
    }

    /// `XRC_SRQN` of a receive CQE: the SRQ, when it is an XRC SRQ.
    fn xrc_srqn(&self, r: Recv) -> u32 {
        match r {
            Recv::Srq { srqn, .. } if self.srqs.get(&srqn).is_some_and(|s| s.ctx.xrc) => srqn,
            _ => 0,
        }
    }

    /// The CQ a receive completion of `d` goes to (an XRC SRQ's own CQ for
    /// XRC targets).
    fn recv_cqn(&self, d: &QpCtx, r: Recv) -> u32 {
        match r {
            Recv::Srq { srqn, .. } => match self.srqs.get(&srqn) {
                Some(s) if s.ctx.xrc => s.ctx.xrc_cqn,
                _ => d.rx_cqn,
            },
            Recv::Rq { .. } => d.rx_cqn,
        }
    }

    /// The destination QP does not exist or is not ready: wait, then
    /// complete with a retry error as a real link would after its retries.
    fn dest_not_ready<M: Dma>(
        &mut self,
        mem: &M,
        s: &QpCtx,
        idx: u32,
        w: &RcWqe,
        now: Instant,
    ) -> Step {
        let since = self.qps.get(&s.qpn).and_then(|q| q.blocked).unwrap_or(now);
        if now.duration_since(since) < DEST_WAIT {
            return Step::Wait;
        }
        self.log(&format!(
            "QP {:#x}: destination QP {:#x} not ready, retries exceeded",
            s.qpn, s.dqpn
        ));
        self.push_cqe(
            mem,
            s.tx_cqn,
            &Cqe {
                opcode: w.opcode,
                status: status::RETRY_EXC_ERR,
                wqe_idx: idx as u16,
                lcl_qpn: s.qpn,
                ..Cqe::default()
            },
        );
        Step::Failed
    }
}

/// The inline payload of UD WQE `w` of `s` into `out` (`w.data_len()` bytes),
/// as libhns' `set_ud_inl` lays it out: up to [`wqe::UD_INL_INN_SZ`] bytes
/// in the WQE (`INLINE_TYPE` 0), else (`INLINE_TYPE` 1) contiguous in the
/// extended SGE ring from `MSG_START_SGE_IDX`, wrapping at its end
/// (`fill_ext_sge_inl_data`).
fn ud_inline<M: Dma>(mem: &M, s: &QpCtx, w: &UdWqe, out: &mut [u8]) -> Result<(), (u8, String)> {
    if !w.inline_ext {
        let src = w.inner.get(..out.len()).ok_or_else(|| {
            (
                status::LOC_LEN_ERR,
                format!("{} bytes in the WQE", out.len()),
            )
        })?;
        out.copy_from_slice(src);
        return Ok(());
    }
    let mut idx = w.start_sge;
    for c in out.chunks_mut(SGE_SIZE) {
        s.buf
            .read(mem, s.sge_at(idx), c)
            .map_err(|e| (status::LOC_QP_OP_ERR, e.to_string()))?;
        idx = idx.wrapping_add(1);
    }
    Ok(())
}

/// The RNR timer of IB timer code `t` (IBA table 45: 0 = 655.36 ms,
/// 1 = 0.01 ms ... 31 = 491.52 ms).
pub fn rnr_delay(t: u32) -> Duration {
    const US: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
        245_760, 327_680, 491_520,
    ];
    Duration::from_micros(u64::from(US[(t & 31) as usize]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw_v2_fields::{cqc, qpc};
    use crate::mem::VecMem;
    use std::cell::Cell;

    /// Contexts at fixed addresses of a [`VecMem`]; CEQEs recorded.
    #[derive(Default)]
    struct FakeHost {
        ctx: BTreeMap<(u32, u32), u64>,
        ceqes: Vec<(u32, u32)>,
        aeqes: Vec<(u8, u8, u32)>,
        events: Vec<CtxEvent>,
        /// The GID of every index (default [`GID_0`]).
        gid: Option<[u8; 16]>,
    }

    /// The GID of the test worlds' device 0.
    const GID_0: [u8; 16] = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x19, 0xe5, 0xff, 0xfe, 0, 3, 0,
    ];
    /// The GID of device 1 in the two-device test.
    const GID_1: [u8; 16] = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x19, 0xe5, 0xff, 0xfe, 0, 4, 0,
    ];

    impl Host for FakeHost {
        fn ctx_addr<M: Dma>(&self, _mem: &M, t: Table, idx: u32) -> Result<u64, String> {
            self.ctx
                .get(&(t as u32, idx))
                .copied()
                .ok_or_else(|| format!("no entry {idx}"))
        }
        fn post_ceqe<M: Dma>(&mut self, _mem: &M, ceqn: u32, cqn: u32) {
            self.ceqes.push((ceqn, cqn));
        }
        fn take_ctx_events(&mut self) -> Vec<CtxEvent> {
            std::mem::take(&mut self.events)
        }
        fn post_event<M: Dma>(&mut self, _mem: &M, event: u8, sub: u8, queue: u32) {
            self.aeqes.push((event, sub, queue));
        }
        fn gid(&self, _idx: u32) -> Option<[u8; 16]> {
            Some(self.gid.unwrap_or(GID_0))
        }
        fn owns_gid(&self, gid: &[u8; 16]) -> bool {
            self.gid(0).as_ref() == Some(gid)
        }
    }

    /// The 0x230 word, and the other doorbell words by offset.
    struct FakeRegs(Cell<u64>, std::cell::RefCell<BTreeMap<u64, u64>>);

    impl FakeRegs {
        fn new() -> Self {
            FakeRegs(Cell::new(0), Default::default())
        }
    }

    impl Regs for FakeRegs {
        fn take64(&self, off: u64) -> u64 {
            if off == DB_CFG0 {
                self.0.replace(0)
            } else {
                self.1.borrow_mut().remove(&off).unwrap_or(0)
            }
        }
    }

    fn put64(m: &VecMem, a: u64, v: u64) {
        m.write(a, &v.to_le_bytes()).unwrap();
    }
    fn put32(m: &VecMem, a: u64, v: u32) {
        m.write(a, &v.to_le_bytes()).unwrap();
    }
    fn get32(m: &VecMem, a: u64) -> u32 {
        m.read_u32(a).unwrap()
    }
    fn bytes<const N: usize>(w: &[u32; N]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    // Memory map of the test world (all 4 KiB pages).
    const QPC_A: u64 = 0x1000; // QP 8
    const QPC_B: u64 = 0x1200; // QP 9
    const CQC_1: u64 = 0x1400;
    const CQC_2: u64 = 0x1440;
    const MPT_1: u64 = 0x1480; // key 0x100, PD 3, LW+RW
    const MPT_2: u64 = 0x14c0; // key 0x200, PD 4 (another PD), LW
    const RQ_DB_B: u64 = 0x1800;
    const RQ_DB_A: u64 = 0x1808;
    const CQ_DB_1: u64 = 0x1810;
    const CQ_DB_2: u64 = 0x1818;
    const ROOT_A: u64 = 0x2000; // [SQ page, RQ page]
    const ROOT_B: u64 = 0x3000;
    const SQ_A: u64 = 0x4000;
    const RQ_A: u64 = 0x5000;
    const SQ_B: u64 = 0x6000;
    const RQ_B: u64 = 0x7000;
    const CQ1_ROOT: u64 = 0x8000;
    const CQ1_BUF: u64 = 0x9000;
    const CQ2_ROOT: u64 = 0xa000;
    const CQ2_BUF: u64 = 0xb000;
    const PBL_1: u64 = 0xc000;
    // MR 1: VA 0x7000_0000 .. +0x2000 on pages 0x20000 and 0x30000.
    const MR_VA: u64 = 0x7000_0000;
    const MR_P0: u64 = 0x20000;
    const MR_P1: u64 = 0x30000;

    /// QPC of an RC QP in RTS: PD 3, 64 SQ WQEs (hop 1, one page), no
    /// extended SGE, 64 RQ WQEs of one SGE (hop 1, one page), all WQEs
    /// signaled, remote write enabled, RNR retry 7.
    fn qpc_image(dqpn: u32, root: u64, rq_db: u64, rx: u32, tx: u32) -> Vec<u8> {
        qpc_with(dqpn, root, rq_db, rx, tx, |_| {})
    }

    /// [`qpc_image`] with `f` applied last.
    fn qpc_with(
        dqpn: u32,
        root: u64,
        rq_db: u64,
        rx: u32,
        tx: u32,
        f: impl FnOnce(&mut Ctx<Qpc, 64>),
    ) -> Vec<u8> {
        let mut c: Ctx<Qpc, 64> = Ctx::zeroed();
        c.write(qpc::TST, 0);
        c.write(qpc::PD, 3);
        c.write(qpc::SQ_SHIFT, 6);
        c.write(qpc::RQ_SHIFT, 6);
        c.write(qpc::RQWS, 0);
        c.write(qpc::SQ_HOP_NUM, 1);
        c.write(qpc::RQ_HOP_NUM, 1);
        c.write(qpc::WQE_SGE_BA_L, (root >> 3) as u32);
        c.write(qpc::WQE_SGE_BA_H, (root >> 35) as u32);
        c.enable(qpc::RQ_RECORD_EN);
        c.write(qpc::RQ_DB_RECORD_ADDR_L, (rq_db as u32) >> 1);
        c.write(qpc::RQ_DB_RECORD_ADDR_H, (rq_db >> 32) as u32);
        c.write(qpc::DQPN, dqpn);
        c.write(qpc::RX_CQN, rx);
        c.write(qpc::TX_CQN, tx);
        c.enable(qpc::RWE);
        c.write(qpc::QP_ST, qps::RTS);
        // rnr_retry 7 (infinite), as the rdma-core examples set it.
        c.write(qpc::RNR_NUM_INIT, 7);
        c.write(qpc::RNR_CNT, 7);
        f(&mut c);
        bytes(c.as_le_words())
    }

    fn cqc_image(cqn: u32, root: u64, db: u64) -> Vec<u8> {
        let mut c: Ctx<Cqc, 16> = Ctx::zeroed();
        c.write(cqc::CQ_ST, 1);
        c.write(cqc::SHIFT, 6);
        c.write(cqc::CQN, cqn);
        c.write(cqc::CQE_SIZE, 1);
        c.write(cqc::CQE_HOP_NUM, 1);
        c.write(cqc::CEQN, 0);
        c.write(cqc::CQE_BA_L, (root >> 3) as u32);
        c.write(cqc::CQE_BA_H, (root >> 35) as u32);
        c.enable(cqc::DB_RECORD_EN);
        c.write(cqc::CQE_DB_RECORD_ADDR_L, (db as u32) >> 1);
        c.write(cqc::CQE_DB_RECORD_ADDR_H, (db >> 32) as u32);
        bytes(c.as_le_words())
    }

    /// MPT words as hns_roce_v2_write_mtpt writes them (hw_v2.h layout).
    fn mpt_image(key: u32, pd: u32, acc: u32, va: u64, len: u32, pbl: u64) -> Vec<u8> {
        let mut w = [0u32; 16];
        w[0] = 1 | 1 << 2 | pd << 8; // ST valid, PBL hop 1, PD
        w[1] = acc; // RW_EN bit 6, LW_EN bit 7
        w[4] = len;
        w[6] = key;
        w[7] = va as u32;
        w[8] = (va >> 32) as u32;
        // PBL_SIZE: the 4 KiB pages [va, va + len) touches. PA0/PA1 and
        // INNER_PA_VLD are left out, so the page list is always walked.
        w[9] = ((va & 0xfff) + u64::from(len)).div_ceil(0x1000) as u32;
        w[10] = (pbl >> 3) as u32;
        bytes(&w)
    }

    struct World {
        mem: VecMem,
        host: FakeHost,
        regs: FakeRegs,
        eng: Engine,
        t0: Instant,
    }

    fn world() -> World {
        let mem = VecMem::new(0x40000);
        let mut host = FakeHost::default();
        mem.write(QPC_A, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1))
            .unwrap();
        mem.write(QPC_B, &qpc_image(8, ROOT_B, RQ_DB_B, 2, 2))
            .unwrap();
        mem.write(CQC_1, &cqc_image(1, CQ1_ROOT, CQ_DB_1)).unwrap();
        mem.write(CQC_2, &cqc_image(2, CQ2_ROOT, CQ_DB_2)).unwrap();
        mem.write(MPT_1, &mpt_image(0x100, 3, 0xc0, MR_VA, 0x2000, PBL_1))
            .unwrap();
        mem.write(MPT_2, &mpt_image(0x200, 4, 0x80, MR_VA, 0x2000, PBL_1))
            .unwrap();
        for (root, sq, rq) in [(ROOT_A, SQ_A, RQ_A), (ROOT_B, SQ_B, RQ_B)] {
            put64(&mem, root, sq);
            put64(&mem, root + 8, rq);
        }
        put64(&mem, CQ1_ROOT, CQ1_BUF);
        put64(&mem, CQ2_ROOT, CQ2_BUF);
        put64(&mem, PBL_1, MR_P0);
        put64(&mem, PBL_1 + 8, MR_P1);
        let t = Table::Qpc as u32;
        host.ctx.insert((t, 8), QPC_A);
        host.ctx.insert((t, 9), QPC_B);
        host.ctx.insert((Table::Cqc as u32, 1), CQC_1);
        host.ctx.insert((Table::Cqc as u32, 2), CQC_2);
        host.ctx.insert((Table::Mpt as u32, 1), MPT_1);
        host.ctx.insert((Table::Mpt as u32, 2), MPT_2);
        host.events = vec![
            CtxEvent::Cq(1),
            CtxEvent::Cq(2),
            CtxEvent::Mpt(1),
            CtxEvent::Mpt(2),
            CtxEvent::Qp(8),
            CtxEvent::Qp(9),
        ];
        World {
            mem,
            host,
            regs: FakeRegs::new(),
            eng: Engine {
                quiet: true,
                ..Engine::new()
            },
            t0: Instant::now(),
        }
    }

    impl World {
        fn poll(&mut self, ms: u64) -> bool {
            let now = self.t0 + Duration::from_millis(ms);
            self.eng
                .poll(&mut self.host, &self.mem, &self.regs, &mut NoWire, now)
        }

        /// Writes SQ WQE `idx` of QP A (owner bit of the first pass) and
        /// rings the SQ doorbell with PI `idx + 1`.
        fn post_a(&self, idx: u32, dw0: u32, words: &[(usize, u32)], ring: bool) {
            let at = SQ_A + 64 * u64::from(idx);
            self.mem.write(at, &[0u8; 64]).unwrap();
            for &(i, v) in words {
                put32(&self.mem, at + 4 * i as u64, v);
            }
            put32(&self.mem, at, dw0 | 0x80);
            if ring {
                self.regs.0.set(u64::from(idx + 1) << 32 | 8);
            }
        }

        /// Posts RQ WQE `idx` of QP B: one SGE, and moves its record DB.
        fn recv_b(&self, idx: u32, len: u32, lkey: u32, va: u64) {
            let at = RQ_B + 16 * u64::from(idx);
            put32(&self.mem, at, len);
            put32(&self.mem, at + 4, lkey);
            put64(&self.mem, at + 8, va);
            put32(&self.mem, RQ_DB_B, idx + 1);
        }
    }

    #[test]
    fn qpc_decode_builds_the_three_region_buffer() {
        let q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
        assert_eq!((q.tst, q.state, q.pd, q.dqpn), (tst::RC, qps::RTS, 3, 9));
        assert_eq!(q.buf.root, ROOT_A);
        // 64 x 64 B SQ = 4 KiB, no ext SGE, 64 x 16 B RQ aligned to 4 KiB.
        assert_eq!(q.buf.regions[0], Region { size: 4096, hop: 1 });
        assert_eq!(q.buf.regions[1].size, 0);
        assert_eq!(q.buf.regions[2], Region { size: 4096, hop: 1 });
        assert_eq!((q.sge_off, q.rq_off), (4096, 4096));
        assert_eq!(q.rq_db, Some(RQ_DB_A));
        assert_eq!(q.sq_wqe_off(65), 64);
        assert_eq!(q.rq_wqe_off(3), 4096 + 48);
        let c = CqCtx::from_bytes(1, &cqc_image(1, CQ1_ROOT, CQ_DB_1)).unwrap();
        assert_eq!((c.depth, c.cqe_size, c.db), (64, 64, Some(CQ_DB_1)));
        assert_eq!(CqCtx::from_bytes(1, &[0u8; 64]), None);
    }

    #[test]
    fn send_crosses_pages_and_completes_both_sides() {
        let mut w = world();
        // Source: 100 bytes at MR offset 0xfc0 (0x40 in page 0, 0x24 in
        // page 1). Destination buffer: MR offset 0x1800 (page 1).
        let src: Vec<u8> = (0..100u8).collect();
        w.mem.write(MR_P0 + 0xfc0, &src[..0x40]).unwrap();
        w.mem.write(MR_P1, &src[0x40..]).unwrap();
        w.recv_b(0, 0x200, 0x100, MR_VA + 0x1800);
        // SEND, signaled, 1 SGE: len 100, lkey 0x100, va MR_VA + 0xfc0.
        let va = MR_VA + 0xfc0;
        w.post_a(
            0,
            0x100,
            &[
                (1, 100),
                (3, 1 << 24),
                (8, 100),
                (9, 0x100),
                (10, va as u32),
                (11, (va >> 32) as u32),
            ],
            true,
        );
        assert!(w.poll(0));
        let mut got = [0u8; 100];
        w.mem.read(MR_P1 + 0x800, &mut got).unwrap();
        assert_eq!(got.to_vec(), src);
        // Receive CQE, CQ 2 slot 0: opcode SEND (1) | S_R | owner, WQE 0.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9); // LCL_QPN
        assert_eq!(get32(&w.mem, CQ2_BUF + 16), 100); // BYTE_CNT
        assert_eq!(get32(&w.mem, CQ2_BUF + 28) & 0xff_ffff, 8); // RMT_QPN
                                                                // Send CQE, CQ 1 slot 0: opcode SEND (0), owner, WQE 0, QPN 8.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
        assert_eq!(get32(&w.mem, CQ1_BUF + 12), 8);
        assert_eq!(w.eng.sq_ci(8), Some(1));
        // No arm doorbell was seen, yet both CQs got their event (CEQ 0).
        assert_eq!(w.host.ceqes, vec![(0, 1), (0, 2)]);
    }

    #[test]
    fn receiver_not_ready_waits_and_every_cq_gets_events() {
        let mut w = world();
        // Arm CQ 2 (CQ_NOTIFY doorbell, CI 0): no CQE, no event.
        w.regs.0.set(0x0400_0002);
        w.poll(0);
        assert!(w.host.ceqes.is_empty());
        // SEND_WITH_IMM of 8 inline bytes, no receive posted yet.
        w.post_a(
            0,
            0x02 | 0x1000,
            &[(1, 8), (2, 0x1234_5678), (8, 0x6463_6261), (9, 0x6867_6665)],
            true,
        );
        assert!(!w.poll(1));
        assert_eq!(w.eng.sq_ci(8), Some(0));
        assert_eq!(get32(&w.mem, CQ2_BUF), 0);
        // A receive arrives (only the record doorbell moves).
        w.recv_b(0, 64, 0x100, MR_VA);
        assert!(w.poll(2));
        let mut got = [0u8; 8];
        w.mem.read(MR_P0, &mut got).unwrap();
        assert_eq!(&got, b"abcdefgh");
        // SEND_WITH_IMM (2) | S_R | owner; the immediate as posted.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c2);
        assert_eq!(get32(&w.mem, CQ2_BUF + 4), 0x1234_5678);
        // One event per CQ on CEQ 0 (CQ 1, whose arm the model never
        // saw, included).
        assert_eq!(w.host.ceqes, vec![(0, 1), (0, 2)]);
        // Armed for ever: a second completion raises again.
        w.recv_b(1, 64, 0x100, MR_VA);
        w.post_a(1, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
        assert!(w.poll(3));
        assert_eq!(w.host.ceqes, vec![(0, 1), (0, 2), (0, 1), (0, 2)]);
        // Second CQE at slot 1, WQE index 1.
        assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0x0001_00c1);
    }

    const MPT_FR: u64 = 0x1700; // FRMR, index 3

    /// A world with a free FRMR at MPT index 3 (PD 3) as
    /// `hns_roce_v2_frmr_write_mtpt` leaves it: ST free (2), PBL_HOP_NUM 1,
    /// R_INV_EN (bit 33), FRE (bit 64), PBL_BA = PBL_1.
    fn frmr_world() -> World {
        let mut w = world();
        let mut m = [0u32; 16];
        m[0] = 2 | 1 << 2 | 3 << 8;
        m[1] = 1 << 1;
        m[2] = 1;
        m[9] = 2;
        m[10] = (PBL_1 >> 3) as u32;
        w.mem.write(MPT_FR, &bytes(&m)).unwrap();
        w.host.ctx.insert((Table::Mpt as u32, 3), MPT_FR);
        w.host.events.push(CtxEvent::Mpt(3));
        w
    }

    /// FAST_REG_PMR words of QP A: key `key`, PBL_1 (2 pages of 4 KiB),
    /// length 0x2000 at IOVA 0x5000_0000, LW + RW.
    fn fast_reg_words(key: u32) -> Vec<(usize, u32)> {
        vec![
            (1, PBL_1 as u32),
            (2, 0),
            (3, 0x2000),
            (4, 0),
            (5, key),
            (6, 0x5000_0000),
            (7, 0),
            (8, 2),
            (9, 1 << 13 | 1 << 14),
        ]
    }

    #[test]
    fn fast_reg_then_write_through_it_then_send_with_invalidate() {
        let mut w = frmr_world();
        // Register key 0x305 (index 3).
        w.post_a(0, 0x0a, &fast_reg_words(0x305), true);
        assert!(w.poll(0));
        // Send CQE: opcode FAST_REG_PMR (0xa) | owner, success.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_008a);
        // The MPT: ST valid, RW_EN | LW_EN | R_INV_EN, LEN, LKEY, VA.
        assert_eq!(get32(&w.mem, MPT_FR), 1 | 1 << 2 | 3 << 8);
        assert_eq!(get32(&w.mem, MPT_FR + 4), 1 << 1 | 1 << 6 | 1 << 7);
        assert_eq!(get32(&w.mem, MPT_FR + 16), 0x2000);
        assert_eq!(get32(&w.mem, MPT_FR + 24), 0x305);
        assert_eq!(get32(&w.mem, MPT_FR + 28), 0x5000_0000);
        assert_eq!(get32(&w.mem, MPT_FR + 36), 2);
        assert_eq!(get32(&w.mem, MPT_FR + 40), (PBL_1 >> 3) as u32);
        // RDMA_WRITE of 8 inline bytes to IOVA 0x5000_1004 (page 1).
        w.post_a(
            1,
            0x03 | 0x1000,
            &[
                (1, 8),
                (5, 0x305),
                (6, 0x5000_1004),
                (8, 0x6463_6261),
                (9, 0x6867_6665),
            ],
            true,
        );
        assert!(w.poll(1));
        let mut got = [0u8; 8];
        w.mem.read(MR_P1 + 4, &mut got).unwrap();
        assert_eq!(&got, b"abcdefgh");
        // SEND_WITH_INV of rkey 0x305 (inv_key, dw2) into QP B's receive.
        w.recv_b(0, 64, 0x100, MR_VA);
        w.post_a(
            2,
            0x01 | 0x1000,
            &[(1, 4), (2, 0x305), (8, 0x3433_3231)],
            true,
        );
        assert!(w.poll(2));
        // Receive CQE: opcode SEND_WITH_INV (3) | S_R | owner; dw1 (rkey)
        // = the invalidated key.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c3);
        assert_eq!(get32(&w.mem, CQ2_BUF + 4), 0x305);
        assert_eq!(get32(&w.mem, CQ2_BUF + 16), 4);
        assert_eq!(get32(&w.mem, MPT_FR) & 3, 2); // ST free
                                                  // The key is gone: a WRITE through it is a remote access error.
        w.post_a(
            3,
            0x03 | 0x1000,
            &[(1, 4), (5, 0x305), (6, 0x5000_0000), (8, 1)],
            true,
        );
        assert!(w.poll(3));
        assert_eq!(get32(&w.mem, CQ1_BUF + 3 * 64), 0x0003_1383);
    }

    #[test]
    fn local_invalidate_frees_the_key_and_fast_reg_needs_a_free_frmr() {
        let mut w = frmr_world();
        // Key 0x3_07: index 3 with the low byte bumped by the ULP.
        w.post_a(0, 0x0a, &fast_reg_words(0x307), true);
        assert!(w.poll(0));
        assert_eq!(get32(&w.mem, MPT_FR + 24), 0x307);
        // Registering a valid MR again: local protection error, QP stops.
        let mut v = frmr_world();
        v.post_a(0, 0x0a, &fast_reg_words(0x307), true);
        v.poll(0);
        v.post_a(1, 0x0a, &fast_reg_words(0x308), true);
        assert!(v.poll(1));
        assert_eq!(get32(&v.mem, CQ1_BUF + 64), 0x0001_048a);
        // LOCAL_INV (0xb) of 0x307, then a SEND gathering from it.
        w.post_a(1, 0x0b, &[(2, 0x307)], true);
        assert!(w.poll(1));
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_008b);
        assert_eq!(get32(&w.mem, MPT_FR) & 3, 2);
        w.recv_b(0, 64, 0x100, MR_VA);
        w.post_a(
            2,
            0x00,
            &[(1, 8), (3, 1 << 24), (8, 8), (9, 0x307), (10, 0x5000_0000)],
            true,
        );
        assert!(w.poll(2));
        // LOC_PROT_ERR (0x04), SEND (0), WQE 2.
        assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0480);
    }

    #[test]
    fn rnr_retries_run_out_after_the_responders_timer() {
        let mut w = world();
        // QP A: rnr_retry 1; QP B: min_rnr_timer 16 (2.56 ms).
        let a = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
            c.write(qpc::RNR_NUM_INIT, 1);
            c.write(qpc::RNR_CNT, 1);
        });
        let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| c.write(qpc::MIN_RNR_TIME, 16));
        w.mem.write(QPC_A, &a).unwrap();
        w.mem.write(QPC_B, &b).unwrap();
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
        // First try: RNR NAK, one retry left, due at 2.56 ms.
        assert!(!w.poll(0));
        assert!(!w.poll(1));
        assert!(!w.poll(2));
        assert_eq!(get32(&w.mem, CQ1_BUF), 0);
        // The retry at 3 ms finds no receive either: RNR_RETRY_EXC_ERR.
        assert!(w.poll(3));
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1680);
        assert_eq!(get32(&w.mem, CQ2_BUF), 0);

        // A receive posted during the timer is taken by the retry.
        let mut w = world();
        w.mem.write(QPC_A, &a).unwrap();
        w.mem.write(QPC_B, &b).unwrap();
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
        assert!(!w.poll(0));
        w.recv_b(0, 64, 0x100, MR_VA);
        assert!(!w.poll(1));
        assert!(w.poll(3));
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);

        // rnr_retry 0: the first RNR NAK ends it.
        let mut w = world();
        let a0 = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
            c.write(qpc::RNR_NUM_INIT, 0);
            c.write(qpc::RNR_CNT, 0);
        });
        w.mem.write(QPC_A, &a0).unwrap();
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
        assert!(w.poll(0));
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1680);
    }

    #[test]
    fn rnr_delay_follows_the_ib_timer_table() {
        assert_eq!(rnr_delay(0), Duration::from_micros(655_360));
        assert_eq!(rnr_delay(1), Duration::from_micros(10));
        assert_eq!(rnr_delay(12), Duration::from_micros(640));
        assert_eq!(rnr_delay(31), Duration::from_micros(491_520));
    }

    #[test]
    fn rdma_write_with_imm_and_bad_rkey() {
        let mut w = world();
        w.mem.write(MR_P0, b"0123456789abcdef").unwrap();
        w.recv_b(0, 0, 0, 0);
        // WRITE_WITH_IMM 16 bytes from MR_VA to MR_VA + 0x1010 (rkey 0x100).
        let dst = MR_VA + 0x1010;
        w.post_a(
            0,
            0x04,
            &[
                (1, 16),
                (2, 0xabcd),
                (3, 1 << 24),
                (5, 0x100),
                (6, dst as u32),
                (7, (dst >> 32) as u32),
                (8, 16),
                (9, 0x100),
                (10, MR_VA as u32),
                (11, (MR_VA >> 32) as u32),
            ],
            true,
        );
        assert!(w.poll(0));
        let mut got = [0u8; 16];
        w.mem.read(MR_P1 + 0x10, &mut got).unwrap();
        assert_eq!(&got, b"0123456789abcdef");
        // Receive CQE: RDMA_WRITE_IMM (0) | S_R | owner, imm, byte count.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c0);
        assert_eq!(get32(&w.mem, CQ2_BUF + 4), 0xabcd);
        assert_eq!(get32(&w.mem, CQ2_BUF + 16), 16);
        // A plain WRITE with rkey 0x200 (an MR of PD 4, no remote write):
        // requester CQE REM_ACCESS_ERR (0x13), memory untouched, QP stops.
        w.post_a(
            1,
            0x03,
            &[
                (1, 16),
                (3, 1 << 24),
                (5, 0x200),
                (6, MR_VA as u32),
                (7, (MR_VA >> 32) as u32),
                (8, 16),
                (9, 0x100),
                (10, (MR_VA + 0x1800) as u32),
                (11, (MR_VA >> 32) as u32),
            ],
            true,
        );
        assert!(w.poll(1));
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_1383);
        let mut same = [0u8; 16];
        w.mem.read(MR_P0, &mut same).unwrap();
        assert_eq!(&same, b"0123456789abcdef");
        // The responder QP 9 gets LOCAL_WQ_ACCESS_ERROR (0x07).
        assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
        // Stopped: a further WQE is not executed.
        w.post_a(2, 0x03, &[(1, 0)], true);
        assert!(!w.poll(2));
        assert_eq!(w.eng.sq_ci(8), Some(2));
    }

    #[test]
    fn rdma_read_into_local_sges() {
        let mut w = world();
        w.mem.write(MR_P1 + 0x100, b"remote!!").unwrap();
        // READ 8 bytes from MR_VA + 0x1100 (rkey 0x100) into MR_VA + 0x10:
        // QP B has no remote read enabled yet -> REM_ACCESS_ERR.
        let src = MR_VA + 0x1100;
        let words = [
            (1, 8),
            (3, 1 << 24),
            (5, 0x100),
            (6, src as u32),
            (7, (src >> 32) as u32),
            (8, 8),
            (9, 0x100),
            (10, (MR_VA + 0x10) as u32),
            (11, (MR_VA >> 32) as u32),
        ];
        w.post_a(0, 0x05, &words, true);
        assert!(w.poll(0));
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1385);
        assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
        // With RRE on QP B and RR_EN on the MR it completes, and the send
        // CQE reports the length read.
        let mut b = w
            .mem
            .0
            .borrow()
            .get(QPC_B as usize..QPC_B as usize + 256)
            .unwrap()
            .to_vec();
        b[75] |= 1 << 1; // RRE is bit 601 = byte 75 bit 1
        w.mem.write(QPC_B, &b).unwrap();
        let mut m = [0u8; 4];
        w.mem.read(MPT_1 + 4, &mut m).unwrap();
        put32(&w.mem, MPT_1 + 4, u32::from_le_bytes(m) | 1 << 5); // RR_EN
        let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
        q.state = qps::RESET;
        w.eng.update_qp(q);
        w.host.events = vec![CtxEvent::Qp(8), CtxEvent::Qp(9)];
        w.post_a(0, 0x05, &words, true);
        // The doorbell word is the same as before the reset: still a new
        // ring (the model takes the word, it does not compare values).
        assert!(w.poll(1));
        assert_eq!(w.eng.stats.scan_found, 0);
        let mut got = [0u8; 8];
        w.mem.read(MR_P0 + 0x10, &mut got).unwrap();
        assert_eq!(&got, b"remote!!");
        // CQ 1 slot 1 (its PI survived the QP reset): READ (5), owner, 8 bytes.
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0000_0085);
        assert_eq!(get32(&w.mem, CQ1_BUF + 64 + 16), 8);
    }

    #[test]
    fn lkey_of_another_pd_is_a_local_protection_error() {
        let mut w = world();
        w.recv_b(0, 64, 0x100, MR_VA);
        // SEND gathering through lkey 0x200 (PD 4) on a QP of PD 3.
        w.post_a(
            0,
            0x00,
            &[
                (1, 8),
                (3, 1 << 24),
                (8, 8),
                (9, 0x200),
                (10, MR_VA as u32),
                (11, (MR_VA >> 32) as u32),
            ],
            true,
        );
        assert!(w.poll(0));
        // LOC_PROT_ERR (0x04) on the requester; the receive is untouched.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0480);
        assert_eq!(get32(&w.mem, CQ2_BUF), 0);
    }

    #[test]
    fn receive_too_small_is_a_length_error_on_both_sides() {
        let mut w = world();
        w.recv_b(0, 4, 0x100, MR_VA);
        w.post_a(0, 0x1000, &[(1, 8), (8, 1), (9, 2)], true);
        assert!(w.poll(0));
        // Responder: LOC_LEN_ERR (0x01); requester: REM_INV_REQ_ERR (0x12).
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_01c1);
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1280);
        // The responder's CQE reports it: no asynchronous event.
        assert!(w.host.aeqes.is_empty());
    }

    #[test]
    fn lost_doorbell_found_by_the_scan_after_the_stability_delay() {
        let mut w = world();
        w.recv_b(0, 64, 0x100, MR_VA);
        // Posted, but the doorbell word was overwritten (no SQ doorbell).
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], false);
        assert!(!w.poll(0));
        assert!(!w.poll(5));
        assert!(!w.poll(99));
        assert_eq!(w.eng.sq_ci(8), Some(0));
        // Valid and unchanged STABLE later: executed.
        assert!(w.poll(100));
        assert_eq!(w.eng.sq_ci(8), Some(1));
        assert_eq!(w.eng.stats.scan_found, 1);
        let mut got = [0u8; 4];
        w.mem.read(MR_P0, &mut got).unwrap();
        assert_eq!(&got, b"ABCD");
    }

    /// libhns' `ibv_wr_*` path: the owner bit goes valid when the WQE is
    /// started, length and inline data come later, then the doorbell. A
    /// producer preempted in between must not have its WQE taken half
    /// written (ib_write_lat hung on that: its 2-byte inline write went out
    /// with the fresh slot's zero length).
    #[test]
    fn a_wqe_still_being_written_waits_for_its_doorbell() {
        let mut w = world();
        w.recv_b(0, 64, 0x100, MR_VA);
        let at = SQ_A;
        // Started: opcode SEND, owner bit, inline; no length, no data yet.
        put32(&w.mem, at, 0x1000 | 0x80);
        assert!(!w.poll(0));
        // Preempted for a few scheduler ticks: nothing taken.
        assert!(!w.poll(20));
        // Finished 30 ms later (the bytes changed: the clock restarts)...
        put32(&w.mem, at + 4, 4);
        put32(&w.mem, at + 32, 0x4443_4241);
        assert!(!w.poll(30));
        assert!(!w.poll(110));
        assert_eq!(w.eng.sq_ci(8), Some(0));
        // ...and rung: executed with its final contents, no scan involved.
        w.regs.0.set(1u64 << 32 | 8);
        assert!(w.poll(111));
        assert_eq!(w.eng.stats.scan_found, 0);
        let mut got = [0u8; 4];
        w.mem.read(MR_P0, &mut got).unwrap();
        assert_eq!(&got, b"ABCD");
        // Had the doorbell been lost, the scan would have taken it STABLE
        // after the last change, not before.
        assert_eq!(w.eng.sq_ci(8), Some(1));
    }

    #[test]
    fn a_function_reset_drops_the_kernel_doorbells_left_behind() {
        let mut w = world();
        w.poll(0);
        // QP 8's last kernel ring (PI 5) was never taken: the QP left RTS
        // first.
        let at = DWQE_BASE + 8 * DWQE_SIZE;
        let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
        q.state = qps::ERR;
        w.eng.update_qp(q);
        w.regs.1.borrow_mut().insert(at, 5u64 << 32 | 8);
        w.poll(1);
        assert_eq!(w.regs.1.borrow().get(&at), Some(&(5u64 << 32 | 8)));
        // FUNC_CLEAR: the next pass takes every kernel doorbell word, so a
        // new QP 8 does not start with PI 5 "rung".
        w.host.events = vec![CtxEvent::Reset];
        w.poll(2);
        assert!(w.regs.1.borrow().is_empty());
        assert_eq!(w.eng.stats.doorbells, 0);
    }

    #[test]
    fn the_same_doorbell_value_twice_is_two_rings() {
        let mut w = world();
        w.recv_b(0, 64, 0x100, MR_VA);
        w.recv_b(1, 64, 0x100, MR_VA);
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
        assert!(w.poll(0));
        assert_eq!(w.eng.stats.doorbells, 1);
        // Nothing rung: the word the model took stays taken.
        assert!(!w.poll(1));
        assert_eq!(w.eng.stats.doorbells, 1);
        // The QP is reset and reused: its first doorbell is the same word.
        let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
        q.state = qps::RESET;
        w.eng.update_qp(q);
        w.host.events = vec![CtxEvent::Qp(8)];
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x4847_4645)], true);
        assert!(w.poll(2));
        assert_eq!(w.eng.stats.doorbells, 2);
        assert_eq!(w.eng.stats.scan_found, 0);
    }

    #[test]
    fn a_qp_back_in_reset_starts_from_zero() {
        let mut w = world();
        w.recv_b(0, 64, 0x100, MR_VA);
        w.post_a(0, 0x1000, &[(1, 1), (8, 1)], true);
        assert!(w.poll(0));
        assert_eq!(w.eng.sq_ci(8), Some(1));
        let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
        q.state = qps::RESET;
        w.eng.update_qp(q.clone());
        assert_eq!(w.eng.sq_ci(8), Some(0));
        // A CQ destroyed (CQ_ST 0) is forgotten.
        assert!(w.eng.has_cq(1));
        w.eng.update_cq(1, None);
        assert!(!w.eng.has_cq(1));
    }

    /// pyverbs' `restate_qps` (test_mr): RESET, INIT, RTR, RTS on a used QP
    /// (the C driver and libhns leave the SQ as it was), all before the
    /// engine's next pass. The model restarts at 0, and the previous life's
    /// WQEs in the slots past the new doorbells, owner bits valid for the
    /// first pass, are not new work for the scan: it used to execute them
    /// (a stale SEND took the peer's next receive, `Data validation
    /// failure`; one on an RNR-waiting peer was re-taken 6199 times).
    #[test]
    fn the_scan_leaves_the_wqes_of_a_qps_previous_life_alone() {
        let mut w = world();
        for i in 0..3 {
            w.recv_b(i, 64, 0x100, MR_VA + 64 * u64::from(i));
            w.post_a(i, 0x1000, &[(1, 1), (8, u32::from(b'a') + i)], true);
            assert!(w.poll(u64::from(i)));
        }
        assert_eq!(w.eng.sq_ci(8), Some(3));
        // RESET .. RTS in one go: the firmware queued a restart, the QPC
        // read at the pass says RTS.
        w.host.events.push(CtxEvent::QpRestart(8));
        w.host.events.push(CtxEvent::Qp(8));
        assert!(!w.poll(10));
        assert_eq!(w.eng.sq_ci(8), Some(0));
        // One new WQE with its doorbell; B has a fresh receive (its RQ
        // restarted as well: record DB 4 of a 4th slot).
        w.recv_b(3, 64, 0x100, MR_VA + 0x400);
        w.post_a(0, 0x1000, &[(1, 1), (8, u32::from(b'x'))], true);
        assert!(w.poll(20));
        assert_eq!(w.eng.sq_ci(8), Some(1));
        // Slots 1 and 2 stay untouched however long they look valid.
        assert!(!w.poll(200));
        assert!(!w.poll(400));
        assert_eq!(w.eng.sq_ci(8), Some(1));
        assert_eq!(w.eng.stats.scan_found, 0);
        // A new WQE there whose doorbell is lost is still found.
        w.recv_b(4, 64, 0x100, MR_VA + 0x440);
        w.post_a(1, 0x1000, &[(1, 1), (8, u32::from(b'y'))], false);
        assert!(!w.poll(500));
        assert!(w.poll(600));
        assert_eq!(w.eng.sq_ci(8), Some(2));
        assert_eq!(w.eng.stats.scan_found, 1);
    }

    /// The bad-DMA check: MR 1's page list is rewritten behind the
    /// firmware's back (no CREATE_MPT: what a stale translation looks
    /// like), so a receive into it would land on a page MR 1 never mapped.
    /// The write is refused and counted, the page untouched, the receive
    /// completes in error; a destroyed CQ gets no CQE either.
    #[test]
    fn writes_outside_the_live_objects_are_refused_and_counted() {
        let mut w = world();
        assert!(!w.poll(0)); // the creation events
        const ELSEWHERE: u64 = 0x38000;
        put64(&w.mem, PBL_1, ELSEWHERE);
        w.recv_b(0, 64, 0x100, MR_VA);
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
        assert!(w.poll(1));
        assert_eq!(w.eng.stats.bad_dma, 1);
        assert_eq!(get32(&w.mem, ELSEWHERE), 0);
        // B's receive CQE: LOC_PROT_ERR (0x04), A's: REM_OP_ERR (0x14).
        assert_eq!(get32(&w.mem, CQ2_BUF) >> 8 & 0xff, 0x04);
        assert_eq!(get32(&w.mem, CQ1_BUF) >> 8 & 0xff, 0x14);
        // CQ 1 destroyed by its CQC, then a CQE for it: not written.
        w.mem.write(CQC_1, &[0u8; 64]).unwrap();
        w.host.events.push(CtxEvent::Cq(1));
        assert!(!w.poll(2));
        w.eng.live.borrow_mut().set_pages(Owner::Cq(1), 12, []);
        w.eng
            .update_cq(1, CqCtx::from_bytes(1, &cqc_image(1, CQ1_ROOT, CQ_DB_1)));
        w.eng.push_cqe(&w.mem, 1, &Cqe::default());
        assert_eq!(w.eng.stats.bad_dma, 1);
        assert_eq!(w.eng.live.borrow().bad, 2);
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0);
    }

    /// Moves QP 8 (QPC_A) to ERR with the driver's heads `sq`/`rq`, as
    /// v2_set_flushed_fields writes them, through a mailbox event.
    fn qp_a_to_err(w: &mut World, sq: u32, rq: u32) {
        let img = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
            c.write(qpc::QP_ST, qps::ERR);
            c.write(qpc::SQ_PRODUCER_IDX, sq);
            c.write(qpc::RQ_PRODUCER_IDX, rq);
        });
        w.mem.write(QPC_A, &img).unwrap();
        w.host.events.push(CtxEvent::Qp(8));
    }

    #[test]
    fn move_to_err_flushes_outstanding_sq_and_rq_wqes() {
        let mut w = world();
        // QP A: two receives posted (RQ WQEs 0 and 1, head 2).
        for i in 0..2u64 {
            put32(&w.mem, RQ_A + 16 * i, 64);
            put32(&w.mem, RQ_A + 16 * i + 4, 0x100);
        }
        put32(&w.mem, RQ_DB_A, 2);
        // WQE 0: a SEND that completes. B has one receive only, so the
        // SENDs 1 and 2 wait (receiver not ready).
        w.recv_b(0, 64, 0x100, MR_VA);
        w.post_a(0, 0x1000, &[(1, 1), (8, 0x41)], true);
        assert!(w.poll(0));
        w.post_a(1, 0x1000, &[(1, 1), (8, 0x42)], false);
        w.post_a(2, 0x1000, &[(1, 1), (8, 0x43)], true);
        assert!(!w.poll(1));
        assert_eq!(w.eng.sq_ci(8), Some(1));
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0);
        // The driver moves A to ERR with sq.head 3 and rq.head 2.
        qp_a_to_err(&mut w, 3, 2);
        assert!(w.poll(2));
        // CQ 1 (A's send and receive CQ): slot 0 the SEND's success, then
        // SQ WQEs 1 and 2 flushed (status 5, opcode SEND, WQE index), then
        // RQ WQEs 0 and 1 flushed (S_R set, RQ WQE index), QPN 8 in each.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0580);
        assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0580);
        assert_eq!(get32(&w.mem, CQ1_BUF + 192), 0x0000_05c1);
        assert_eq!(get32(&w.mem, CQ1_BUF + 256), 0x0001_05c1);
        for slot in 1..5u64 {
            assert_eq!(get32(&w.mem, CQ1_BUF + 64 * slot + 12), 8);
        }
        assert_eq!(get32(&w.mem, CQ1_BUF + 320), 0);
        assert_eq!(w.eng.sq_ci(8), Some(3));
        // Nothing more: a second pass writes nothing.
        assert!(!w.poll(3));
        // A WQE posted in ERR: the driver moves to ERR again with head 4;
        // only WQE 3 is flushed (slot 5).
        w.post_a(3, 0x03, &[(1, 0)], true);
        qp_a_to_err(&mut w, 4, 2);
        assert!(w.poll(4));
        assert_eq!(get32(&w.mem, CQ1_BUF + 320), 0x0003_0583);
        assert_eq!(get32(&w.mem, CQ1_BUF + 384), 0);
        // Back to RESET: the indexes start from 0 again, nothing flushed.
        let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
        q.state = qps::RESET;
        w.eng.update_qp(q);
        assert_eq!(w.eng.sq_ci(8), Some(0));
    }

    #[test]
    fn flush_waits_for_cq_space() {
        let mut w = world();
        // CQ 1 holds 64 CQEs, its consumer index (record doorbell) at 0.
        // 30 SQ and 40 RQ WQEs outstanding at the move to ERR.
        qp_a_to_err(&mut w, 30, 40);
        assert!(w.poll(0));
        // 64 flush CQEs fill the CQ: SQ WQEs 0..29, RQ WQEs 0..33.
        assert_eq!(get32(&w.mem, CQ1_BUF + 6 * 64), 0x0006_0580);
        assert_eq!(get32(&w.mem, CQ1_BUF + 29 * 64), 0x001d_0580);
        assert_eq!(get32(&w.mem, CQ1_BUF + 30 * 64), 0x0000_05c1);
        assert_eq!(get32(&w.mem, CQ1_BUF + 63 * 64), 0x0021_05c1);
        // The 65th found CQ 1 full: one CQ_OVERFLOW AEQE for CQ 1.
        assert_eq!(w.host.aeqes, vec![(aev::CQ_OVERFLOW, 0, 1)]);
        assert!(!w.poll(1));
        // Still full: no second event.
        assert_eq!(w.host.aeqes.len(), 1);
        // The consumer frees 10 slots: the last 6 RQ flushes (WQEs 34..39)
        // go to slots 0..5 with owner bit 0 (second pass); slot 6 keeps
        // its first-pass CQE.
        put32(&w.mem, CQ_DB_1, 10);
        assert!(w.poll(2));
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0022_0541);
        assert_eq!(get32(&w.mem, CQ1_BUF + 5 * 64), 0x0027_0541);
        assert_eq!(get32(&w.mem, CQ1_BUF + 6 * 64), 0x0006_0580);
        assert!(!w.poll(3));
        assert_eq!(w.host.aeqes.len(), 1);
    }

    const SRQC_5: u64 = 0x1500;
    const SRQ_DB: u64 = 0x1820;
    const SRQ_WQE_ROOT: u64 = 0xd000;
    const SRQ_IDX_ROOT: u64 = 0xd800;
    const SRQ_WQE: u64 = 0xe000;
    const SRQ_IDX: u64 = 0xf000;

    /// SRQC of SRQ 5 as hns_roce_v2_write_srqc builds it: 16 WQEs of one
    /// SGE, PD 3, WQE buffer and index queue hop 1, record doorbell,
    /// limit `limit`.
    fn srqc_image(limit: u32) -> Vec<u8> {
        let mut c: Ctx<Srqc, 16> = Ctx::zeroed();
        c.write(srqc::SRQ_ST, 1);
        c.write(srqc::SRQN, 5);
        c.write(srqc::SHIFT, 4);
        c.write(srqc::RQWS, 0);
        c.write(srqc::PD, 3);
        c.write(srqc::WQE_HOP_NUM, 1);
        c.write(srqc::WQE_BT_BA_L, (SRQ_WQE_ROOT >> 3) as u32);
        c.write(srqc::IDX_HOP_NUM, 1);
        c.write(srqc::IDX_BT_BA_L, (SRQ_IDX_ROOT >> 3) as u32);
        c.enable(srqc::DB_RECORD_EN);
        c.write(srqc::DB_RECORD_ADDR_L, (SRQ_DB as u32) >> 1);
        c.write(srqc::LIMIT_WL, limit);
        bytes(c.as_le_words())
    }

    /// QP B (9) on SRQ 5, SRQ 5 with limit 2, both announced.
    fn srq_world() -> World {
        let mut w = world();
        w.mem.write(SRQC_5, &srqc_image(2)).unwrap();
        put64(&w.mem, SRQ_WQE_ROOT, SRQ_WQE);
        put64(&w.mem, SRQ_IDX_ROOT, SRQ_IDX);
        let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| {
            c.enable(qpc::SRQ_EN);
            c.write(qpc::SRQN, 5);
        });
        w.mem.write(QPC_B, &b).unwrap();
        w.host.ctx.insert((Table::Srqc as u32, 5), SRQC_5);
        w.host.events.push(CtxEvent::Srq(5));
        w
    }

    impl World {
        /// Posts SRQ WQE `wqe` (one SGE: 64 bytes at `va`, lkey 0x100) as
        /// the `h`-th index queue entry, record doorbell `h + 1`.
        fn srq_recv(&self, h: u32, wqe: u32, va: u64) {
            let at = SRQ_WQE + 16 * u64::from(wqe);
            put32(&self.mem, at, 64);
            put32(&self.mem, at + 4, 0x100);
            put64(&self.mem, at + 8, va);
            put32(&self.mem, SRQ_IDX + 4 * u64::from(h), wqe);
            put32(&self.mem, SRQ_DB, h + 1);
        }
    }

    #[test]
    fn srqc_decode() {
        let c = SrqCtx::from_bytes(5, &srqc_image(2)).unwrap();
        assert_eq!((c.srqn, c.shift, c.rqws, c.pd, c.limit), (5, 4, 0, 3, 2));
        assert_eq!(
            (c.buf.root, c.idx.root, c.db),
            (SRQ_WQE_ROOT, SRQ_IDX_ROOT, Some(SRQ_DB))
        );
        // 16 x 16 B WQEs and 16 x 4 B index entries, each one 4 KiB page.
        assert_eq!(c.buf.regions, vec![Region { size: 4096, hop: 1 }]);
        assert_eq!(c.idx.regions, vec![Region { size: 4096, hop: 1 }]);
        assert!(!c.xrc);
        assert_eq!(SrqCtx::from_bytes(5, &[0u8; 64]), None);
    }

    #[test]
    fn send_to_an_srq_qp_takes_wqes_in_index_queue_order() {
        let mut w = srq_world();
        // Index queue: WQE 7 (MR_VA), then WQE 3 (MR_VA + 0x100).
        w.srq_recv(0, 7, MR_VA);
        w.srq_recv(1, 3, MR_VA + 0x100);
        w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
        assert!(w.poll(0));
        let mut got = [0u8; 4];
        w.mem.read(MR_P0, &mut got).unwrap();
        assert_eq!(&got, b"ABCD");
        // Receive CQE on B's CQ 2: SEND | S_R | owner, WQE_IDX = SRQ WQE 7.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0007_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9);
        // One WQE left < limit 2: SRQ_LIMIT_REACH (0x08) for SRQ 5, and
        // the limit in the SRQC is disarmed (LIMIT_WL, dw1 15:0).
        assert_eq!(w.host.aeqes, vec![(0x08, 0, 5)]);
        assert_eq!(get32(&w.mem, SRQC_5 + 4) & 0xffff, 0);
        w.post_a(1, 0x1000, &[(1, 4), (8, 0x4847_4645)], true);
        assert!(w.poll(1));
        w.mem.read(MR_P0 + 0x100, &mut got).unwrap();
        assert_eq!(&got, b"EFGH");
        assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0x0003_00c1);
        assert_eq!(w.eng.srq_ci(5), Some(2));
        // Disarmed: no second event.
        assert_eq!(w.host.aeqes.len(), 1);
        // SRQ empty: the next SEND waits (receiver not ready).
        w.post_a(2, 0x1000, &[(1, 4), (8, 0x4c4b_4a49)], true);
        assert!(!w.poll(2));
        assert_eq!(w.eng.sq_ci(8), Some(2));
        // A new receive (WQE 0) lets it through.
        w.srq_recv(2, 0, MR_VA + 0x200);
        assert!(w.poll(3));
        assert_eq!(get32(&w.mem, CQ2_BUF + 128), 0x0000_00c1);
        // B to ERR with RQ head 5: no RQ flush (it has no RQ), but the
        // last-WQE-reached event (0x09) for QP 9.
        let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| {
            c.enable(qpc::SRQ_EN);
            c.write(qpc::SRQN, 5);
            c.write(qpc::QP_ST, qps::ERR);
            c.write(qpc::RQ_PRODUCER_IDX, 5);
        });
        w.mem.write(QPC_B, &b).unwrap();
        w.host.events.push(CtxEvent::Qp(9));
        w.poll(4);
        assert_eq!(w.host.aeqes, vec![(0x08, 0, 5), (0x09, 0, 9)]);
        assert_eq!(get32(&w.mem, CQ2_BUF + 192), 0);
        // A MODIFY_SRQC re-arms the limit, keeps the consumer index.
        w.mem.write(SRQC_5, &srqc_image(4)).unwrap();
        w.host.events.push(CtxEvent::Srq(5));
        w.poll(5);
        assert_eq!(w.eng.srq_ci(5), Some(3));
    }

    #[test]
    fn xrc_initiator_sends_into_the_named_srq_of_the_target_domain() {
        let mut w = world();
        // SRQ 5: an XRC SRQ of XRC domain 7 completing on CQ 2.
        let mut img = srqc_image(0);
        {
            let mut words = [0u32; 16];
            for (i, x) in words.iter_mut().enumerate() {
                *x = u32::from_ne_bytes(img[4 * i..4 * i + 4].try_into().unwrap());
            }
            let mut c: Ctx<Srqc, 16> = Ctx::from_le_words(words);
            c.enable(srqc::SRQ_TYPE);
            c.write(srqc::XRCD, 7);
            c.write(srqc::XRC_CQN, 2);
            img = bytes(c.as_le_words());
        }
        w.mem.write(SRQC_5, &img).unwrap();
        put64(&w.mem, SRQ_WQE_ROOT, SRQ_WQE);
        put64(&w.mem, SRQ_IDX_ROOT, SRQ_IDX);
        w.host.ctx.insert((Table::Srqc as u32, 5), SRQC_5);
        // A (8): XRC initiator. B (9): XRC target of domain 7 whose own
        // RX_CQN (1) must not be used.
        let a = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| c.write(qpc::TST, tst::XRC));
        let b = qpc_with(8, ROOT_B, RQ_DB_B, 1, 1, |c| {
            c.write(qpc::TST, tst::XRC);
            c.enable(qpc::XRC_QP_TYPE);
            c.write(qpc::QKEY_XRCD, 7);
            c.write(qpc::QP_ST, qps::RTR);
        });
        w.mem.write(QPC_A, &a).unwrap();
        w.mem.write(QPC_B, &b).unwrap();
        w.host.events.push(CtxEvent::Srq(5));
        w.srq_recv(0, 2, MR_VA + 0x40);
        // SEND 4 inline bytes naming XRC SRQ 5 (dw3 23:0).
        w.post_a(0, 0x1000, &[(1, 4), (3, 5), (8, 0x6463_6261)], true);
        assert!(w.poll(0));
        let mut got = [0u8; 4];
        w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
        assert_eq!(&got, b"abcd");
        // Receive CQE on the SRQ's CQ 2: SEND | S_R | owner, SRQ WQE 2,
        // XRC_SRQN 5, LCL_QPN 9 (the target).
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0002_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 8), 5);
        assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9);
        // CQ 1 has only A's send completion.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
        assert_eq!(get32(&w.mem, CQ1_BUF + 12), 8);
        // Naming SRQ 6 (none): REM_INV_REQ_ERR for A, XRCD_VIOLATION
        // (0x16) for the target QP.
        w.srq_recv(1, 3, MR_VA + 0x80);
        w.post_a(1, 0x1000, &[(1, 4), (3, 6), (8, 0x6463_6261)], true);
        assert!(w.poll(1));
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_1280);
        assert_eq!(w.host.aeqes, vec![(0x16, 0, 9)]);
        assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0);
    }

    /// pyverbs `test_xrc_atomic_*`: an XRC target has no PD of its own (the
    /// C driver writes QPC PD 0, `get_pdn(NULL)`); the rkey of an atomic
    /// (or READ/WRITE) is checked against the PD of the XRC SRQ the
    /// initiator names. Before, the target's PD 0 was compared with the
    /// MR's and every XRC atomic failed with REM_ACCESS_ERR.
    #[test]
    fn xrc_target_checks_remote_keys_against_its_srqs_pd() {
        let mut w = world();
        // SRQ 5: XRC SRQ of XRC domain 7, PD 3 (MR 1's PD).
        let mut c: Ctx<Srqc, 16> = Ctx::from_bytes(&srqc_image(0));
        c.enable(srqc::SRQ_TYPE);
        c.write(srqc::XRCD, 7);
        c.write(srqc::XRC_CQN, 2);
        w.mem.write(SRQC_5, &bytes(c.as_le_words())).unwrap();
        w.host.ctx.insert((Table::Srqc as u32, 5), SRQC_5);
        let a = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| c.write(qpc::TST, tst::XRC));
        let b = qpc_with(8, ROOT_B, RQ_DB_B, 1, 1, |c| {
            c.write(qpc::TST, tst::XRC);
            c.enable(qpc::XRC_QP_TYPE);
            c.write(qpc::QKEY_XRCD, 7);
            c.write(qpc::PD, 0);
            c.enable(qpc::ATE);
            c.write(qpc::QP_ST, qps::RTR);
        });
        w.mem.write(QPC_A, &a).unwrap();
        w.mem.write(QPC_B, &b).unwrap();
        w.host.events.push(CtxEvent::Srq(5));
        let acc = get32(&w.mem, MPT_1 + 4);
        put32(&w.mem, MPT_1 + 4, acc | 1 << 4); // ATOMIC_EN
        put64(&w.mem, MR_P1 + 8, 5);
        // FETCH_AND_ADD 2 naming XRC SRQ 5 (dw3 23:0).
        let mut words = atomic_words(MR_VA + 0x1008, 2, 0);
        words[1] = (3, 1 << 24 | 5);
        w.post_a(0, 0x07, &words, true);
        assert!(w.poll(0));
        assert_eq!(get64(&w.mem, MR_P1 + 8), 7);
        assert_eq!(get64(&w.mem, MR_P0 + 0x20), 5);
        // Success CQE: ATOM_FETCH_AND_ADD (7) | owner, BYTE_CNT 8.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0087);
        assert!(w.host.aeqes.is_empty());
        // Naming an SRQ outside the domain: REM_INV_REQ_ERR, XRCD_VIOLATION.
        let mut words = atomic_words(MR_VA + 0x1008, 2, 0);
        words[1] = (3, 1 << 24 | 6);
        w.post_a(1, 0x07, &words, true);
        assert!(w.poll(1));
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_1287);
        assert_eq!(get64(&w.mem, MR_P1 + 8), 7);
        assert_eq!(w.host.aeqes, vec![(0x16, 0, 9)]);
    }

    /// World with QP B's ATE set to `ate` and ATOMIC_EN on MR 1.
    fn atomic_world(ate: bool) -> World {
        let mut w = world();
        let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| {
            c.write(qpc::ATE, u32::from(ate))
        });
        w.mem.write(QPC_B, &b).unwrap();
        w.host.events.push(CtxEvent::Qp(9));
        let acc = get32(&w.mem, MPT_1 + 4);
        put32(&w.mem, MPT_1 + 4, acc | 1 << 4); // ATOMIC_EN
        w
    }

    /// Atomic WQE words: remote `va` (rkey 0x100), result to MR_VA + 0x20
    /// (lkey 0x100), operands `a` (swap/add) and `c` (compare).
    fn atomic_words(va: u64, a: u64, c: u64) -> Vec<(usize, u32)> {
        let res = MR_VA + 0x20;
        vec![
            (1, 8),
            (3, 1 << 24),
            (5, 0x100),
            (6, va as u32),
            (7, (va >> 32) as u32),
            (8, 8),
            (9, 0x100),
            (10, res as u32),
            (11, (res >> 32) as u32),
            (12, a as u32),
            (13, (a >> 32) as u32),
            (14, c as u32),
            (15, (c >> 32) as u32),
        ]
    }

    fn get64(m: &VecMem, a: u64) -> u64 {
        let mut b = [0u8; 8];
        m.read(a, &mut b).unwrap();
        u64::from_le_bytes(b)
    }

    #[test]
    fn atomics_fetch_add_and_compare_swap() {
        let mut w = atomic_world(true);
        let target = MR_VA + 0x1008; // MR page 1 + 8
        put64(&w.mem, MR_P1 + 8, 5);
        // FETCH_AND_ADD 0x1_0000_0000: remote 5 -> 0x1_0000_0005, the
        // original 5 lands in the local result buffer.
        w.post_a(0, 0x07, &atomic_words(target, 1 << 32, 0), true);
        assert!(w.poll(0));
        assert_eq!(get64(&w.mem, MR_P1 + 8), 0x1_0000_0005);
        assert_eq!(get64(&w.mem, MR_P0 + 0x20), 5);
        // Send CQE: ATOM_FETCH_AND_ADD (7) | owner, BYTE_CNT 8.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0087);
        assert_eq!(get32(&w.mem, CQ1_BUF + 16), 8);
        // No receive consumed, nothing on B's CQ.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0);
        // CMP_AND_SWAP that matches: swapped.
        w.post_a(1, 0x06, &atomic_words(target, 99, 0x1_0000_0005), true);
        assert!(w.poll(1));
        assert_eq!(get64(&w.mem, MR_P1 + 8), 99);
        assert_eq!(get64(&w.mem, MR_P0 + 0x20), 0x1_0000_0005);
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0086);
        // One that does not match: memory unchanged, original returned.
        w.post_a(2, 0x06, &atomic_words(target, 7, 1), true);
        assert!(w.poll(2));
        assert_eq!(get64(&w.mem, MR_P1 + 8), 99);
        assert_eq!(get64(&w.mem, MR_P0 + 0x20), 99);
        assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0086);
        // Not 8-byte aligned: REM_INV_REQ_ERR (0x12), nothing written.
        w.post_a(3, 0x07, &atomic_words(target + 4, 1, 0), true);
        assert!(w.poll(3));
        assert_eq!(get32(&w.mem, CQ1_BUF + 192), 0x0003_1287);
        assert_eq!(get64(&w.mem, MR_P1 + 8), 99);
        // INV_REQ_LOCAL_WQ_ERROR (0x06) on the responder QP 9.
        assert_eq!(w.host.aeqes, vec![(0x06, 0, 9)]);
    }

    #[test]
    fn atomics_need_the_responders_ate() {
        let mut w = atomic_world(false);
        put64(&w.mem, MR_P1 + 8, 5);
        w.post_a(0, 0x07, &atomic_words(MR_VA + 0x1008, 1, 0), true);
        assert!(w.poll(0));
        // REM_ACCESS_ERR (0x13), remote and local untouched.
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1387);
        assert_eq!(get64(&w.mem, MR_P1 + 8), 5);
        assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
        assert_eq!(get64(&w.mem, MR_P0 + 0x20), 0);
    }

    /// The wire of the two-device test: device 1 alone.
    struct TestWire<'x> {
        eng: &'x mut Engine,
        host: &'x mut FakeHost,
    }

    impl Wire<VecMem> for TestWire<'_> {
        fn route(&self, gid: &[u8; 16]) -> Option<usize> {
            self.host.owns_gid(gid).then_some(0)
        }
        fn respond(&mut self, dev: usize, mem: &VecMem, req: &Request) -> Response {
            assert_eq!(dev, 0);
            self.eng.respond(self.host, mem, req)
        }
    }

    #[test]
    fn two_devices_deliver_by_destination_gid() {
        // The world split in two devices on one guest memory: device 0
        // has QP 8 (CQ 1), device 1 (GID_1) has QP 9 (CQ 2); QP 8's QPC
        // names GID_1 as its DGID (bytes 28..44).
        let w = world();
        let mut a = FakeHost::default();
        let mut b = FakeHost {
            gid: Some(GID_1),
            ..FakeHost::default()
        };
        for (k, v) in &w.host.ctx {
            let qp_or_cq_of_b = *k == (Table::Qpc as u32, 9) || *k == (Table::Cqc as u32, 2);
            let qp_or_cq_of_a = *k == (Table::Qpc as u32, 8) || *k == (Table::Cqc as u32, 1);
            if !qp_or_cq_of_b {
                a.ctx.insert(*k, *v);
            }
            if !qp_or_cq_of_a {
                b.ctx.insert(*k, *v);
            }
        }
        a.events = vec![
            CtxEvent::Cq(1),
            CtxEvent::Mpt(1),
            CtxEvent::Mpt(2),
            CtxEvent::Qp(8),
        ];
        b.events = vec![
            CtxEvent::Cq(2),
            CtxEvent::Mpt(1),
            CtxEvent::Mpt(2),
            CtxEvent::Qp(9),
        ];
        w.mem.write(QPC_A + 28, &GID_1).unwrap();
        let mut e0 = Engine {
            quiet: true,
            ..Engine::new()
        };
        let mut e1 = Engine {
            quiet: true,
            ..Engine::new()
        };
        let idle = FakeRegs::new();
        let t0 = w.t0;
        e1.poll(&mut b, &w.mem, &idle, &mut NoWire, t0);
        // SEND of 8 inline bytes; no receive posted on device 1 yet: the
        // responder is not ready, the WQE stays at the head.
        w.post_a(
            0,
            0x1000,
            &[(1, 8), (8, 0x6463_6261), (9, 0x6867_6665)],
            true,
        );
        let mut wire = TestWire {
            eng: &mut e1,
            host: &mut b,
        };
        assert!(!e0.poll(&mut a, &w.mem, &w.regs, &mut wire, t0));
        assert_eq!(e0.sq_ci(8), Some(0));
        assert_eq!(e0.stats.wire, 1);
        // Device 0 alone does not know QP 9: without the wire the SEND
        // waits for ever (no loopback by mistake).
        assert!(!e0.poll(
            &mut a,
            &w.mem,
            &w.regs,
            &mut NoWire,
            t0 + Duration::from_millis(1)
        ));
        assert_eq!(e0.sq_ci(8), Some(0));
        // A receive on device 1: delivered over the wire.
        w.recv_b(0, 64, 0x100, MR_VA + 0x40);
        let mut wire = TestWire {
            eng: &mut e1,
            host: &mut b,
        };
        assert!(e0.poll(
            &mut a,
            &w.mem,
            &w.regs,
            &mut wire,
            t0 + Duration::from_millis(2)
        ));
        assert_eq!(e0.sq_ci(8), Some(1));
        let mut got = [0u8; 8];
        w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
        assert_eq!(&got, b"abcdefgh");
        // Receive CQE on device 1's CQ 2: SEND (1) | S_R | owner, LCL_QPN
        // 9, 8 bytes, RMT_QPN 8; send CQE on device 0's CQ 1.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9);
        assert_eq!(get32(&w.mem, CQ2_BUF + 16), 8);
        assert_eq!(get32(&w.mem, CQ2_BUF + 28) & 0xff_ffff, 8);
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
        assert_eq!(get32(&w.mem, CQ1_BUF + 12), 8);
        // Each device raises its own CQ's event: device 0 at once, device
        // 1 at its next poll.
        assert_eq!(a.ceqes, vec![(0, 1)]);
        assert!(b.ceqes.is_empty());
        e1.poll(&mut b, &w.mem, &idle, &mut NoWire, t0);
        assert_eq!(b.ceqes, vec![(0, 2)]);
        assert_eq!(e1.stats.cqes, 1);
        assert_eq!(e0.stats.cqes, 1);
    }

    #[test]
    fn gsi_qp_takes_datagrams_of_any_qkey_with_the_grh() {
        // The responder half of a MAD (QP1 to QP1, as ib_mad sends with
        // Q_Key 0x80010000): UD QP 1 in RTS with Q_Key 0x1111, one receive
        // of 0x100 bytes at MR offset 0x40.
        let w = world();
        let mut host = FakeHost::default();
        host.ctx = w.host.ctx.clone();
        let mut e = Engine {
            quiet: true,
            ..Engine::new()
        };
        e.update_cq(2, CqCtx::from_bytes(2, &cqc_image(2, CQ2_ROOT, CQ_DB_2)));
        e.track_cq(&w.mem, 2);
        e.track_mpt(&host, &w.mem, 1);
        let ud = |qpn: u32| {
            QpCtx::from_bytes(
                qpn,
                &qpc_with(0, ROOT_B, RQ_DB_B, 2, 2, |c| {
                    c.write(qpc::TST, tst::UD);
                    c.write(qpc::QKEY_XRCD, 0x1111);
                }),
            )
        };
        e.update_qp(ud(1));
        w.recv_b(0, 0x100, 0x100, MR_VA + 0x40);
        let mut data = vec![0x60u8; 40];
        data.extend_from_slice(b"MAD!");
        let req = |dqpn: u32| Request {
            sqpn: 1,
            dqpn,
            op: Op::Ud(UdMsg {
                imm: None,
                qkey: 0x8001_0000,
                port_type: 2,
                sl: 0,
                data: data.clone(),
            }),
        };
        assert_eq!(
            e.respond(&mut host, &w.mem, &req(1)),
            Response::Done(vec![])
        );
        let mut got = [0u8; 44];
        w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
        assert_eq!(&got[..], &data[..]);
        // Receive CQE: SEND (1) | S_R | owner; LCL_QPN 1; 44 bytes (GRH
        // included); PORT_TYPE 2 (dw6 17:16); RMT_QPN 1, bit 27 and GRH
        // (bit 30) in dw7.
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 12), 1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 16), 44);
        assert_eq!(get32(&w.mem, CQ2_BUF + 24), 2 << 16);
        assert_eq!(get32(&w.mem, CQ2_BUF + 28), 1 | 1 << 27 | 1 << 30);
        // Any other UD QP checks the Q_Key: the datagram is dropped (the
        // sender completes anyway), the receive stays posted.
        e.update_qp(ud(9));
        w.recv_b(1, 0x100, 0x100, MR_VA + 0x40);
        assert_eq!(
            e.respond(&mut host, &w.mem, &req(9)),
            Response::Done(vec![])
        );
        assert_eq!(e.stats.cqes, 1);
    }

    #[test]
    fn ud_inline_in_the_wqe_and_in_the_extended_sge_ring() {
        // QPs 8 (A) and 9 (B) as UD, Q_Key 0x1111; A with a 4-entry
        // extended SGE ring (SGE_SHIFT 2, SGE_HOP_NUM 1: buffer page 1,
        // i.e. RQ_A).
        let mut w = world();
        let ud = |dqpn, root, db, rx, tx, shift| {
            qpc_with(dqpn, root, db, rx, tx, |c| {
                c.write(qpc::TST, tst::UD);
                c.write(qpc::QKEY_XRCD, 0x1111);
                c.write(qpc::SGE_SHIFT, shift);
                c.write(qpc::SGE_HOP_NUM, 1);
            })
        };
        w.mem
            .write(QPC_A, &ud(9, ROOT_A, RQ_DB_A, 1, 1, 2))
            .unwrap();
        w.mem
            .write(QPC_B, &ud(8, ROOT_B, RQ_DB_B, 2, 2, 0))
            .unwrap();
        w.recv_b(0, 0x100, 0x100, MR_VA + 0x40);
        w.recv_b(1, 0x100, 0x100, MR_VA + 0x140);
        // What libhns' set_ud_inl_seg writes for "abcdefg" (7 bytes):
        // INLINE (dw0 12) | CQE (8), SEND (0); msg_len 7 with "ab" in
        // 31:16; "c" in dw3 31:24; "def" in dw4 23:0; "g" in dw5 15:0.
        let gid =
            |i: usize| u32::from_le_bytes([GID_0[i], GID_0[i + 1], GID_0[i + 2], GID_0[i + 3]]);
        let dgid = [(12, gid(0)), (13, gid(4)), (14, gid(8)), (15, gid(12))];
        let mut words = vec![
            (1, 7 | 0x6261 << 16),
            (3, 0x63 << 24),
            (4, 0x66_6564),
            (5, 0x67),
            (6, 0x1111),
            (7, 9),
        ];
        words.extend(dgid);
        w.post_a(0, 1 << 12 | 1 << 8, &words, true);
        assert!(w.poll(0));
        // B's buffer: the 40-byte GRH, then the 7 bytes; byte count 47.
        let mut got = [0u8; 8];
        w.mem.read(MR_P0 + 0x40 + 40, &mut got).unwrap();
        assert_eq!(&got, b"abcdefg\0");
        assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 16), 47);
        assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
        // 20 bytes: INLINE_TYPE 1 (dw4 31), MSG_START_SGE_IDX 3, SGE_NUM 2,
        // msg_len 20; the bytes contiguous from SGE 3, wrapping to SGE 0.
        let text = b"0123456789ABCDEFGHIJ";
        w.mem.write(RQ_A + 48, &text[..16]).unwrap();
        w.mem.write(RQ_A, &text[16..]).unwrap();
        let mut words = vec![(1, 20), (3, 2 << 24), (4, 1 << 31 | 3), (6, 0x1111), (7, 9)];
        words.extend(dgid);
        w.post_a(1, 1 << 12 | 1 << 8, &words, true);
        assert!(w.poll(1));
        let mut got = [0u8; 20];
        w.mem.read(MR_P0 + 0x140 + 40, &mut got).unwrap();
        assert_eq!(&got, text);
        assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0x0001_00c1);
        assert_eq!(get32(&w.mem, CQ2_BUF + 64 + 16), 60);
        assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0080);
        // 9 bytes claimed in the WQE itself (more than it holds):
        // LOC_LEN_ERR (0x01), nothing delivered.
        let mut words = vec![(1, 9), (6, 0x1111), (7, 9)];
        words.extend(dgid);
        w.post_a(2, 1 << 12 | 1 << 8, &words, true);
        assert!(w.poll(2));
        assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0180);
        assert_eq!(get32(&w.mem, CQ2_BUF + 128), 0);
    }
}
