// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! QP context images for MODIFY_QPC (`core` only), as
//! `hns_roce_v2_modify_qp` builds them: a context and a mask of the same
//! size, where a mask bit 0 means "take this bit from the context" and 1
//! "keep what the engine has". RESET→INIT starts from an all-zero mask (the
//! whole context is written); every other transition starts from all ones
//! and clears the fields it sets.
//!
//! Also the RQ doorbell word; the address vector (path) fields are in
//! `qpc/path.rs`, the sizing rules of `set_rq_size`/`set_kernel_sq_size`/
//! `set_ext_sge_param` and the RQ WQE encoding in `qpc/queue.rs`, both
//! re-exported here, so the host tests and KUnit check them against the C
//! driver's numbers.

use crate::field::Ctx;
use crate::hns_roce_hw_v2::consts::hw_page::PAGE_SHIFT as HW_PAGE_SHIFT;
use crate::hns_roce_hw_v2::consts::{cap_flag, db_cmd, sge::SGE_SHIFT};
use crate::hns_roce_hw_v2::fields::{qpc, qpcex, Qpc, QpcEx};
use crate::hw_rev::HwRev;
use crate::rdma::access::{ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};

// The parts in files of their own (explicit paths: tests/host includes this
// file by path).
#[path = "qpc/path.rs"]
mod path;
#[path = "qpc/queue.rs"]
mod queue;
pub use path::{
    calc_flow_label, gid_type, max_sl, set_path, set_sl, tclass, udp_sport, CongError, CongFields,
    CongType, PathParams,
};
pub use queue::{
    entries_size, queue_sizes, rq_wqe_segs, DataSeg, QueueError, QueueRequest, QueueSizes,
    RqWqeSegs,
};

/// Words in each half of a HIP09 QPC (256 bytes of QPC, 256 of extension).
pub const QPC_HALF_DWORDS: usize = 64;
/// QPC size of HIP09 (`HNS_ROCE_V3_QPC_SZ`); HIP08's is half of it.
pub const V3_QPC_SZ: u32 = 512;

/// `enum ib_qp_state`; the QPC's `QP_ST` uses the same numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum QpState {
    /// Reset.
    Reset = 0,
    /// Initialised.
    Init = 1,
    /// Ready to receive.
    Rtr = 2,
    /// Ready to send.
    Rts = 3,
    /// Send queue drained.
    Sqd = 4,
    /// Send queue error.
    Sqe = 5,
    /// Error.
    Err = 6,
}

impl QpState {
    /// The state numbered `v` (`IB_QPS_*`).
    pub fn from_ib(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::Reset,
            1 => Self::Init,
            2 => Self::Rtr,
            3 => Self::Rts,
            4 => Self::Sqd,
            5 => Self::Sqe,
            6 => Self::Err,
            _ => return None,
        })
    }
}

/// Transitions the engine takes (`check_qp_state`); SQD and SQE are never
/// entered.
pub fn transition_ok(cur: QpState, new: QpState) -> bool {
    use QpState::*;
    matches!(
        (cur, new),
        (Reset, Reset | Init)
            | (Init, Reset | Init | Rtr | Err)
            | (Rtr, Reset | Rts | Err)
            | (Rts, Reset | Rts | Err)
            | (Err, Reset | Err)
    )
}

/// Service types of the QPC (`to_hr_qp_type`).
pub mod serv {
    /// Reliable connected.
    pub const RC: u32 = 0;
    /// Unreliable datagram (also the GSI QP).
    pub const UD: u32 = 3;
    /// XRC initiator or target.
    pub const XRC: u32 = 5;
}

/// A context and its mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QpcImage {
    /// The QPC proper.
    pub ctx: Ctx<Qpc, QPC_HALF_DWORDS>,
    /// Its HIP09 extension.
    pub ext: Ctx<QpcEx, QPC_HALF_DWORDS>,
    /// Mask of `ctx`.
    pub mask: Ctx<Qpc, QPC_HALF_DWORDS>,
    /// Mask of `ext`.
    pub mask_ext: Ctx<QpcEx, QPC_HALF_DWORDS>,
}

impl Default for QpcImage {
    fn default() -> Self {
        Self::new()
    }
}

impl QpcImage {
    /// Zero context, all-ones mask: a modify that changes nothing yet.
    pub fn new() -> Self {
        Self {
            ctx: Ctx::zeroed(),
            ext: Ctx::zeroed(),
            mask: Ctx::ones(),
            mask_ext: Ctx::ones(),
        }
    }

    /// The mailbox contents in little-endian words: `qpc_sz` bytes of
    /// context, then `qpc_sz` bytes of mask (HIP08: 256, HIP09: 512), and
    /// how many words of the array are used.
    pub fn mailbox_words(&self, qpc_sz: u32) -> ([u32; 4 * QPC_HALF_DWORDS], usize) {
        let mut out = [0u32; 4 * QPC_HALF_DWORDS];
        let ext = qpc_sz >= V3_QPC_SZ;
        let half = QPC_HALF_DWORDS;
        let per = if ext { 2 * half } else { half };
        let parts: [(&[u32; QPC_HALF_DWORDS], usize); 4] = [
            (self.ctx.as_le_words(), 0),
            (self.ext.as_le_words(), half),
            (self.mask.as_le_words(), per),
            (self.mask_ext.as_le_words(), per + half),
        ];
        for (i, (words, at)) in parts.iter().enumerate() {
            if !ext && i % 2 == 1 {
                continue;
            }
            if let Some(dst) = out.get_mut(*at..*at + half) {
                dst.copy_from_slice(&words[..]);
            }
        }
        (out, 2 * per)
    }
}

/// `to_hr_hem_entries_shift`: log2 of the entries of `count << shift`
/// bytes rounded up to whole hardware pages; 0 for no entries.
pub fn entries_shift(count: u32, shift: u32) -> u32 {
    if count == 0 {
        return 0;
    }
    let bytes = u64::from(count) << shift;
    let pages = bytes.div_ceil(1 << HW_PAGE_SHIFT) << HW_PAGE_SHIFT;
    (pages >> shift).checked_ilog2().unwrap_or(0)
}

/// Log2 of a count, 0 for 0 (what `ilog2` gives the engine for empty queues).
fn log2(v: u32) -> u32 {
    v.checked_ilog2().unwrap_or(0)
}

/// `ilog2` of a queue count as C writes it into a 4-bit context field: for
/// an empty queue (a QP on an SRQ has no RQ) the kernel's `ilog2(0)` is
/// `fls(0) - 1 = -1`, which the field keeps as all ones (0xf), as the C
/// driver's MODIFY_QPC mailboxes show.
fn ctx_ilog2(v: u32) -> u32 {
    v.checked_ilog2().unwrap_or(u32::MAX)
}

/// What RESET→INIT writes (`modify_qp_reset_to_init`).
#[derive(Clone, Copy, Debug, Default)]
pub struct InitParams {
    /// Service type ([`serv`]).
    pub serv_type: u32,
    /// PD number.
    pub pdn: u32,
    /// SGEs per RQ WQE (a power of two, 0 without RQ).
    pub rq_max_gs: u32,
    /// Extended SGE entries.
    pub sge_cnt: u32,
    /// SQ WQEs.
    pub sq_wqe_cnt: u32,
    /// RQ WQEs.
    pub rq_wqe_cnt: u32,
    /// RQ record doorbell in use.
    pub rq_record_db: bool,
    /// Bus address of the RQ record doorbell (0 without one).
    pub rdb_dma: u64,
    /// SQ owner-bit doorbell mode (`HNS_ROCE_QP_CAP_OWNER_DB`).
    pub owner_db: bool,
    /// Receive CQ number.
    pub rx_cqn: u32,
    /// Send CQ number.
    pub tx_cqn: u32,
    /// SRQ number, if the QP has one.
    pub srqn: Option<u32>,
    /// XRC domain of an XRC target.
    pub xrcdn: Option<u32>,
    /// The QPC has the HIP09 extension.
    pub v3: bool,
    /// Stash enabled (`HNS_ROCE_CAP_FLAG_STASH`).
    pub stash: bool,
}

/// RESET→INIT: the whole context is written (the mask is all zeros).
pub fn reset_to_init(img: &mut QpcImage, p: &InitParams) {
    img.mask = Ctx::zeroed();
    if p.v3 {
        img.mask_ext = Ctx::zeroed();
    }
    let c = &mut img.ctx;
    c.write(qpc::TST, p.serv_type);
    c.write(qpc::PD, p.pdn);
    c.write(qpc::RQWS, ctx_ilog2(p.rq_max_gs));
    c.write(qpc::SGE_SHIFT, entries_shift(p.sge_cnt, SGE_SHIFT));
    c.write(qpc::SQ_SHIFT, ctx_ilog2(p.sq_wqe_cnt));
    c.write(qpc::RQ_SHIFT, ctx_ilog2(p.rq_wqe_cnt));
    c.write(qpc::VLAN_ID, 0xfff);
    if let Some(x) = p.xrcdn {
        c.write(qpc::QKEY_XRCD, x);
        c.enable(qpc::XRC_QP_TYPE);
    }
    if p.rq_record_db {
        c.enable(qpc::RQ_RECORD_EN);
    }
    if p.owner_db {
        c.enable(qpc::OWNER_MODE);
    }
    // CAST: the two halves of the address; the low one drops bit 0.
    c.write(qpc::RQ_DB_RECORD_ADDR_L, (p.rdb_dma as u32) >> 1);
    c.write(qpc::RQ_DB_RECORD_ADDR_H, (p.rdb_dma >> 32) as u32);
    c.write(qpc::RX_CQN, p.rx_cqn);
    if let Some(s) = p.srqn {
        c.enable(qpc::SRQ_EN);
        c.write(qpc::SRQN, s);
    }
    c.enable(qpc::FRE);
    c.write(qpc::TX_CQN, p.tx_cqn);
    if p.v3 && p.stash {
        img.ext.enable(qpcex::STASH);
    }
}

/// INIT→INIT (`modify_qp_init_to_init`): PD and CQs again.
pub fn init_to_init(img: &mut QpcImage, p: &InitParams) {
    let (c, m) = (&mut img.ctx, &mut img.mask);
    c.write(qpc::TST, p.serv_type);
    m.clear(qpc::TST);
    c.write(qpc::PD, p.pdn);
    m.clear(qpc::PD);
    c.write(qpc::RX_CQN, p.rx_cqn);
    m.clear(qpc::RX_CQN);
    c.write(qpc::TX_CQN, p.tx_cqn);
    m.clear(qpc::TX_CQN);
    if let Some(s) = p.srqn {
        c.enable(qpc::SRQ_EN);
        m.clear(qpc::SRQ_EN);
        c.write(qpc::SRQN, s);
        m.clear(qpc::SRQN);
    }
}

/// The WQE buffer as INIT→RTR describes it (`config_qp_rq_buf`).
#[derive(Clone, Copy, Debug, Default)]
pub struct WqeBufParams {
    /// Bus address of the buffer's root BT.
    pub wqe_sge_ba: u64,
    /// Hop numbers of the SQ, SGE and RQ regions (after `to_hr_hem_hopnum`).
    pub sq_hop: u32,
    /// See `sq_hop`.
    pub sge_hop: u32,
    /// See `sq_hop`.
    pub rq_hop: u32,
    /// BT page size exponent (bytes).
    pub ba_pg_shift: u32,
    /// Buffer page size exponent (bytes).
    pub buf_pg_shift: u32,
    /// Bus address of the first RQ page.
    pub rq_cur_blk: u64,
    /// Bus address of the second RQ page: HIP08 only.
    pub rq_nxt_blk: Option<u64>,
}

/// What INIT→RTR writes besides the buffer (`modify_qp_init_to_rtr`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RtrParams {
    /// The WQE buffer.
    pub buf: WqeBufParams,
    /// Bus address of the QP's IRRL entry.
    pub irrl_ba: u64,
    /// Bus address of the QP's TRRL entry.
    pub trrl_ba: u64,
    /// `enum ib_sig_type` of the SQ: 0 every WR signalled
    /// (`IB_SIGNAL_ALL_WR`), 1 only the WRs that ask (`IB_SIGNAL_REQ_WR`).
    pub sig_type: u32,
    /// Loopback indicator to write, when the destination MAC is ours or
    /// the device loops back.
    pub lbi: Option<u32>,
    /// Destination QPN (`IB_QP_DEST_QPN`).
    pub dest_qpn: Option<u32>,
    /// Destination MAC.
    pub dmac: [u8; 6],
    /// Path MTU enum to write (`IB_QP_PATH_MTU`).
    pub mtu_enum: Option<u32>,
    /// The MTU in bytes (4096 for UD and GSI).
    pub mtu_bytes: u32,
    /// LDCP or HC3 congestion control (ACK frequency tied to the packet
    /// count).
    pub window_cong: bool,
    /// `caps.max_ack_req_msg_len`.
    pub max_ack_req_msg_len: u32,
    /// RQ inline enable to write (user RC QPs that asked for it).
    pub rq_inline: Option<bool>,
    /// CQE inline enable to write (user RC/XRC-target QPs).
    pub cqe_inline: Option<bool>,
}

/// `LP_PKTN_INI` and `ACK_REQ_FREQ` for an MTU: the packets of a loopback
/// message of at least 1 KiB, and the ACK request period, which may not be
/// smaller and equals it under LDCP/HC3 or when the caps' message length is
/// below the loopback message.
pub fn lp_and_ack_freq(mtu_bytes: u32, window_cong: bool, max_ack_req_msg_len: u32) -> (u32, u32) {
    let mtu = mtu_bytes.max(1);
    let lp_msg_len = mtu.max(1024);
    let lp_pktn_ini = log2(lp_msg_len / mtu);
    let ack = if window_cong || max_ack_req_msg_len < lp_msg_len {
        lp_pktn_ini
    } else {
        log2(max_ack_req_msg_len / mtu)
    };
    (lp_pktn_ini, ack)
}

/// The WQE buffer part of INIT→RTR (`config_qp_rq_buf`).
fn rq_buf(img: &mut QpcImage, b: &WqeBufParams) {
    let (c, m) = (&mut img.ctx, &mut img.mask);
    let ba = b.wqe_sge_ba >> 3;
    let cur = b.rq_cur_blk >> HW_PAGE_SHIFT;
    // CAST: the fields take the listed slices of the addresses.
    c.write(qpc::WQE_SGE_BA_L, ba as u32);
    m.clear(qpc::WQE_SGE_BA_L);
    c.write(qpc::WQE_SGE_BA_H, (ba >> 32) as u32);
    m.clear(qpc::WQE_SGE_BA_H);
    c.write(qpc::SQ_HOP_NUM, b.sq_hop);
    m.clear(qpc::SQ_HOP_NUM);
    c.write(qpc::SGE_HOP_NUM, b.sge_hop);
    m.clear(qpc::SGE_HOP_NUM);
    c.write(qpc::RQ_HOP_NUM, b.rq_hop);
    m.clear(qpc::RQ_HOP_NUM);
    c.write(
        qpc::WQE_SGE_BA_PG_SZ,
        b.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    m.clear(qpc::WQE_SGE_BA_PG_SZ);
    c.write(
        qpc::WQE_SGE_BUF_PG_SZ,
        b.buf_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    m.clear(qpc::WQE_SGE_BUF_PG_SZ);
    c.write(qpc::RQ_CUR_BLK_ADDR_L, cur as u32);
    m.clear(qpc::RQ_CUR_BLK_ADDR_L);
    c.write(qpc::RQ_CUR_BLK_ADDR_H, (cur >> 32) as u32);
    m.clear(qpc::RQ_CUR_BLK_ADDR_H);
    if let Some(n) = b.rq_nxt_blk {
        let n = n >> HW_PAGE_SHIFT;
        c.write(qpc::RQ_NXT_BLK_ADDR_L, n as u32);
        m.clear(qpc::RQ_NXT_BLK_ADDR_L);
        c.write(qpc::RQ_NXT_BLK_ADDR_H, (n >> 32) as u32);
        m.clear(qpc::RQ_NXT_BLK_ADDR_H);
    }
}

/// The loopback indicator INIT→RTR writes (`modify_qp_init_to_rtr`): 0
/// when the destination MAC equals the source MAC the C driver keeps in
/// `hr_dev->dev_addr`. Only HIP08 fills that from the netdev
/// (`dmac_is_own`: the destination is the port's MAC); on later engines it
/// stays all zeros, so only a QP without a MAC (UD, GSI) gets the
/// indicator, a real loopback never.
pub fn loopback_indicator(rev: HwRev, dmac: [u8; 6], dmac_is_own: bool) -> Option<u32> {
    let same = if rev.is_hip08() {
        dmac_is_own
    } else {
        dmac == [0; 6]
    };
    same.then_some(0)
}

/// INIT→RTR.
pub fn init_to_rtr(img: &mut QpcImage, p: &RtrParams) {
    rq_buf(img, &p.buf);
    let (c, m) = (&mut img.ctx, &mut img.mask);
    // CAST: slices of the two addresses, as the field positions say.
    c.write(qpc::TRRL_BA_L, (p.trrl_ba >> 4) as u32);
    m.clear(qpc::TRRL_BA_L);
    c.write(qpc::TRRL_BA_M, (p.trrl_ba >> 20) as u32);
    m.clear(qpc::TRRL_BA_M);
    c.write(qpc::TRRL_BA_H, (p.trrl_ba >> 52) as u32);
    m.clear(qpc::TRRL_BA_H);
    c.write(qpc::IRRL_BA_L, (p.irrl_ba >> 6) as u32);
    m.clear(qpc::IRRL_BA_L);
    c.write(qpc::IRRL_BA_H, (p.irrl_ba >> 38) as u32);
    m.clear(qpc::IRRL_BA_H);
    c.enable(qpc::RMT_E2E);
    m.clear(qpc::RMT_E2E);
    c.write(qpc::SIG_TYPE, p.sig_type);
    m.clear(qpc::SIG_TYPE);
    if let Some(l) = p.lbi {
        c.write(qpc::LBI, l);
        m.clear(qpc::LBI);
    }
    if let Some(q) = p.dest_qpn {
        c.write(qpc::DQPN, q);
        m.clear(qpc::DQPN);
    }
    let d = p.dmac;
    c.write(qpc::DMAC_L, u32::from_le_bytes([d[0], d[1], d[2], d[3]]));
    m.clear(qpc::DMAC_L);
    c.write(qpc::DMAC_H, u32::from(u16::from_le_bytes([d[4], d[5]])));
    m.clear(qpc::DMAC_H);
    let (lp, ack) = lp_and_ack_freq(p.mtu_bytes, p.window_cong, p.max_ack_req_msg_len);
    if let Some(mtu) = p.mtu_enum {
        c.write(qpc::MTU, mtu);
        m.clear(qpc::MTU);
    }
    c.write(qpc::LP_PKTN_INI, lp);
    m.clear(qpc::LP_PKTN_INI);
    c.write(qpc::ACK_REQ_FREQ, ack);
    m.clear(qpc::ACK_REQ_FREQ);
    m.clear(qpc::RX_REQ_PSN_ERR);
    m.clear(qpc::RX_REQ_MSN);
    m.clear(qpc::RX_REQ_LAST_OPTYPE);
    c.clear(qpc::RQ_RNR_TIMER);
    m.clear(qpc::RQ_RNR_TIMER);
    m.clear(qpc::TRRL_HEAD_MAX);
    m.clear(qpc::TRRL_TAIL_MAX);
    // The engine sends 2^3 segments at a time.
    c.write(qpc::LP_SGEN_INI, 3);
    m.clear(qpc::LP_SGEN_INI);
    if let Some(on) = p.rq_inline {
        c.write_bool(qpc::RQIE, on);
        m.clear(qpc::RQIE);
    }
    if let Some(on) = p.cqe_inline {
        c.write_bool(qpc::CQEIE, on);
        m.clear(qpc::CQEIE);
        c.write(qpc::CQEIS, 0);
        m.clear(qpc::CQEIS);
    }
}

/// RTR→RTS (`modify_qp_rtr_to_rts` with `config_qp_sq_buf`): the first SQ
/// and extended-SGE pages, and the requester state cleared.
pub fn rtr_to_rts(img: &mut QpcImage, sq_cur_blk: u64, sge_cur_blk: u64) {
    let (c, m) = (&mut img.ctx, &mut img.mask);
    let sq = sq_cur_blk >> HW_PAGE_SHIFT;
    let sge = sge_cur_blk >> HW_PAGE_SHIFT;
    // CAST: the halves of the page addresses.
    let pairs = [
        (qpc::SQ_CUR_BLK_ADDR_L, qpc::SQ_CUR_BLK_ADDR_H, sq),
        (qpc::SQ_CUR_SGE_BLK_ADDR_L, qpc::SQ_CUR_SGE_BLK_ADDR_H, sge),
        (qpc::RX_SQ_CUR_BLK_ADDR_L, qpc::RX_SQ_CUR_BLK_ADDR_H, sq),
    ];
    for (l, h, v) in pairs {
        c.write(l, v as u32);
        c.write(h, (v >> 32) as u32);
        m.clear(l);
        m.clear(h);
    }
    for f in [
        qpc::IRRL_SGE_IDX,
        qpc::RX_ACK_MSN,
        qpc::ACK_LAST_OPTYPE,
        qpc::IRRL_PSN_VLD,
        qpc::IRRL_PSN,
        qpc::IRRL_TAIL_REAL,
        qpc::RETRY_MSG_MSN,
        qpc::RNR_RETRY_FLAG,
        qpc::CHECK_FLG,
        qpc::V2_IRRL_HEAD,
    ] {
        m.clear(f);
    }
}

/// The producer indexes written on the move to ERR
/// (`v2_set_flushed_fields`): the SQ's, and the RQ's when the QP has one.
pub fn set_flushed(img: &mut QpcImage, sq_head: u32, rq_head: Option<u32>) {
    img.ctx.write(qpc::SQ_PRODUCER_IDX, sq_head);
    img.mask.clear(qpc::SQ_PRODUCER_IDX);
    if let Some(h) = rq_head {
        img.ctx.write(qpc::RQ_PRODUCER_IDX, h);
        img.mask.clear(qpc::RQ_PRODUCER_IDX);
    }
}

/// Optional attributes of a modify (`hns_roce_v2_set_opt_fields`), path
/// excepted; each `Some` is written.
#[derive(Clone, Copy, Debug, Default)]
pub struct OptParams {
    /// ACK timeout, already checked and offset (`check_qp_timeout_cfg_range`).
    pub timeout: Option<u32>,
    /// Retry count.
    pub retry_cnt: Option<u32>,
    /// RNR retry count.
    pub rnr_retry: Option<u32>,
    /// Send PSN.
    pub sq_psn: Option<u32>,
    /// Responder resources (only when not zero).
    pub max_dest_rd_atomic: Option<u32>,
    /// Initiator depth (only when not zero).
    pub max_rd_atomic: Option<u32>,
    /// Remote access: `(IB_ACCESS_* flags, responder depth)` in effect.
    pub access: Option<(u32, u32)>,
    /// RNR timer.
    pub min_rnr_timer: Option<u32>,
    /// Receive PSN.
    pub rq_psn: Option<u32>,
    /// Q_Key.
    pub qkey: Option<u32>,
}

/// `fls(v - 1)`: the exponent of the smallest power of two >= `v`.
fn fls_minus_one(v: u32) -> u32 {
    32 - v.saturating_sub(1).leading_zeros()
}

/// The optional attributes.
pub fn opt_fields(img: &mut QpcImage, o: &OptParams) {
    let (c, m) = (&mut img.ctx, &mut img.mask);
    if let Some(t) = o.timeout {
        c.write(qpc::AT, t);
        m.clear(qpc::AT);
    }
    if let Some(r) = o.retry_cnt {
        c.write(qpc::RETRY_NUM_INIT, r);
        m.clear(qpc::RETRY_NUM_INIT);
        c.write(qpc::RETRY_CNT, r);
        m.clear(qpc::RETRY_CNT);
    }
    if let Some(r) = o.rnr_retry {
        c.write(qpc::RNR_NUM_INIT, r);
        m.clear(qpc::RNR_NUM_INIT);
        c.write(qpc::RNR_CNT, r);
        m.clear(qpc::RNR_CNT);
    }
    if let Some(psn) = o.sq_psn {
        for f in [
            qpc::SQ_CUR_PSN,
            qpc::SQ_MAX_PSN,
            qpc::RETRY_MSG_PSN_L,
            qpc::RETRY_MSG_FPKT_PSN,
            qpc::RX_ACK_EPSN,
        ] {
            c.write(f, psn);
            m.clear(f);
        }
        c.write(qpc::RETRY_MSG_PSN_H, psn >> 16);
        m.clear(qpc::RETRY_MSG_PSN_H);
    }
    if let Some(d) = o.max_dest_rd_atomic.filter(|d| *d != 0) {
        c.write(qpc::RR_MAX, fls_minus_one(d));
        m.clear(qpc::RR_MAX);
    }
    if let Some(d) = o.max_rd_atomic.filter(|d| *d != 0) {
        c.write(qpc::SR_MAX, fls_minus_one(d));
        m.clear(qpc::SR_MAX);
    }
    if let Some((flags, depth)) = o.access {
        let flags = if depth == 0 {
            flags & ACCESS_REMOTE_WRITE
        } else {
            flags
        };
        let atomic = flags & ACCESS_REMOTE_ATOMIC != 0;
        for (f, on) in [
            (qpc::RRE, flags & ACCESS_REMOTE_READ != 0),
            (qpc::RWE, flags & ACCESS_REMOTE_WRITE != 0),
            (qpc::ATE, atomic),
            (qpc::EXT_ATE, atomic),
        ] {
            c.write_bool(f, on);
            m.clear(f);
        }
    }
    if let Some(t) = o.min_rnr_timer {
        c.write(qpc::MIN_RNR_TIME, t);
        m.clear(qpc::MIN_RNR_TIME);
    }
    if let Some(psn) = o.rq_psn {
        c.write(qpc::RX_REQ_EPSN, psn);
        m.clear(qpc::RX_REQ_EPSN);
        c.write(qpc::RAQ_PSN, psn.wrapping_sub(1));
        m.clear(qpc::RAQ_PSN);
    }
    if let Some(q) = o.qkey {
        c.write(qpc::QKEY_XRCD, q);
        m.clear(qpc::QKEY_XRCD);
    }
}

/// Every modify ends with the credit mode and the new state.
pub fn finish(img: &mut QpcImage, new: QpState, inv_credit: bool) {
    img.ctx.write_bool(qpc::INV_CREDIT, inv_credit);
    img.mask.clear(qpc::INV_CREDIT);
    img.ctx.write(qpc::QP_ST, new as u32);
    img.mask.clear(qpc::QP_ST);
}

/// The ACK timeout the engine takes for `t` (`check_qp_timeout_cfg_range`):
/// HIP08 accepts 0..=20 and adds 10, later revisions accept 0..=31; `None`
/// when out of range (the attribute is then ignored with a warning).
pub fn ack_timeout(rev: HwRev, t: u32) -> Option<u32> {
    if rev.is_hip08() {
        (t <= 20).then_some(t + 10)
    } else {
        (t <= 31).then_some(t)
    }
}

/// `enum ib_qp_type` values the driver takes.
pub mod qpt {
    /// The GSI QP (QP1).
    pub const GSI: u32 = 1;
    /// Reliable connected.
    pub const RC: u32 = 2;
    /// Unreliable datagram.
    pub const UD: u32 = 4;
    /// XRC initiator.
    pub const XRC_INI: u32 = 9;
    /// XRC target.
    pub const XRC_TGT: u32 = 10;
}

/// Whether the device takes QPs of type `ty` (an [`qpt`] value) given its
/// `caps.flags` (`check_qp_type`): XRC initiators and targets only with
/// [`cap_flag::XRC`].
pub fn qp_type_supported(ty: u32, cap_flags: u32) -> bool {
    match ty {
        qpt::XRC_INI | qpt::XRC_TGT => cap_flags & cap_flag::XRC != 0,
        qpt::UD | qpt::RC | qpt::GSI => true,
        _ => false,
    }
}

/// The RQ doorbell word of a QP without record doorbell (`update_rq_db`).
pub fn rq_doorbell(qpn: u32, head: u32) -> u64 {
    u64::from(qpn & 0xff_ffff) | (db_cmd::RQ << 24) | (u64::from(head & 0xffff) << 32)
}

/// What `query_qp` reads from a queried QPC (`hns_roce_v2_query_qp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryAttr {
    /// `enum ib_qp_state`.
    pub state: u32,
    /// Path MTU enum.
    pub path_mtu: u32,
    /// Q_Key (UD only, else 0).
    pub qkey: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// Send PSN.
    pub sq_psn: u32,
    /// Destination QPN.
    pub dest_qp_num: u32,
    /// `IB_ACCESS_REMOTE_*` flags.
    pub access: u32,
    /// Whether the path below was read (RC and XRC).
    pub grh: bool,
    /// Service level.
    pub sl: u32,
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u32,
    /// Hop limit.
    pub hop_limit: u32,
    /// Traffic class as stored.
    pub traffic_class: u32,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Initiator depth.
    pub max_rd_atomic: u32,
    /// Responder resources.
    pub max_dest_rd_atomic: u32,
    /// RNR timer.
    pub min_rnr_timer: u32,
    /// ACK timeout as the user gave it.
    pub timeout: u32,
    /// Retry count.
    pub retry_cnt: u32,
    /// RNR retry count.
    pub rnr_retry: u32,
}

/// `to_ib_qp_st`: the verbs state of the engine's `QP_ST` (SQ draining
/// counts as SQD).
pub fn ib_state_of(st: u32) -> u32 {
    if st == 7 {
        QpState::Sqd as u32
    } else {
        st
    }
}

/// Decodes a QPC read back with QUERY_QPC for a QP of type `qp_type`.
pub fn query_attrs(c: &Ctx<Qpc, QPC_HALF_DWORDS>, qp_type: u32, rev: HwRev) -> QueryAttr {
    let mut a = QueryAttr {
        state: ib_state_of(c.read(qpc::QP_ST)),
        path_mtu: c.read(qpc::MTU),
        rq_psn: c.read(qpc::RX_REQ_EPSN),
        sq_psn: c.read(qpc::SQ_CUR_PSN),
        dest_qp_num: c.read(qpc::DQPN),
        max_rd_atomic: 1 << c.read(qpc::SR_MAX),
        max_dest_rd_atomic: 1 << c.read(qpc::RR_MAX),
        min_rnr_timer: c.read(qpc::MIN_RNR_TIME),
        retry_cnt: c.read(qpc::RETRY_NUM_INIT),
        rnr_retry: c.read(qpc::RNR_NUM_INIT),
        ..Default::default()
    };
    a.access = (c.read(qpc::RRE) << 2) | (c.read(qpc::RWE) << 1) | (c.read(qpc::ATE) << 3);
    if qp_type == qpt::UD {
        a.qkey = c.read(qpc::QKEY_XRCD);
    }
    let at = c.read(qpc::AT);
    // HIP08 stores the timeout with an offset of 10; the C driver
    // subtracts it in a u8.
    a.timeout = if rev.is_hip08() {
        // CAST: a 5-bit field.
        u32::from((at as u8).wrapping_sub(10))
    } else {
        at
    };
    if matches!(qp_type, qpt::RC | qpt::XRC_INI | qpt::XRC_TGT) {
        a.grh = true;
        a.sl = c.read(qpc::SL);
        a.flow_label = c.read(qpc::FL);
        a.sgid_index = c.read(qpc::GMV_IDX);
        a.hop_limit = c.read(qpc::HOPLIMIT);
        a.traffic_class = c.read(qpc::TC);
        for (i, b) in qpc::DGID_BYTES.zip(a.dgid.iter_mut()) {
            *b = c.word(i / 4).to_le_bytes()[i % 4];
        }
    }
    a
}
