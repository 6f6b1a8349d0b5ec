// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! QP context images for MODIFY_QPC (`core` only), as
//! `hns_roce_v2_modify_qp` builds them: a context and a mask of the same
//! size, where a mask bit 0 means "take this bit from the context" and 1
//! "keep what the engine has". RESET→INIT starts from an all-zero mask (the
//! whole context is written); every other transition starts from all ones
//! and clears the fields it sets.
//!
//! Also the sizing rules of `set_rq_size`/`set_kernel_sq_size`/
//! `set_ext_sge_param`, the RQ WQE encoding and the RQ doorbell word, so the
//! host tests and KUnit check them against the C driver's numbers.

use crate::field::Ctx;
use crate::hns_roce_hw_v2::consts::{cap_flag, db_cmd};
use crate::hns_roce_hw_v2::fields::{qpc, qpcex, Qpc, QpcEx};
use crate::hw_rev::HwRev;

/// Words in each half of a HIP09 QPC (256 bytes of QPC, 256 of extension).
pub const QPC_HALF_DWORDS: usize = 64;
/// QPC size of HIP09 (`HNS_ROCE_V3_QPC_SZ`); HIP08's is half of it.
pub const V3_QPC_SZ: u32 = 512;
/// Smallest hardware page (`HNS_HW_PAGE_SHIFT`).
const HW_PAGE_SHIFT: u32 = 12;

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

/// `IB_ACCESS_REMOTE_WRITE`, `_READ`, `_ATOMIC` (uapi values).
pub const ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// See [`ACCESS_REMOTE_WRITE`].
pub const ACCESS_REMOTE_READ: u32 = 1 << 2;
/// See [`ACCESS_REMOTE_WRITE`].
pub const ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;

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
    c.write(qpc::RQWS, log2(p.rq_max_gs));
    c.write(qpc::SGE_SHIFT, entries_shift(p.sge_cnt, SGE_SHIFT));
    c.write(qpc::SQ_SHIFT, log2(p.sq_wqe_cnt));
    c.write(qpc::RQ_SHIFT, log2(p.rq_wqe_cnt));
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

/// Shift of an extended SGE entry (`HNS_ROCE_SGE_SHIFT`).
pub const SGE_SHIFT: u32 = 4;

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

/// `enum ib_gid_type`: the kind of the source GID of a path.
pub mod gid_type {
    /// InfiniBand.
    pub const IB: u32 = 0;
    /// RoCE v1.
    pub const ROCE: u32 = 1;
    /// RoCE v2 (UDP encapsulation).
    pub const ROCE_UDP_ENCAP: u32 = 2;
}

/// Congestion control algorithms of a QP (`enum cong_type`, the bit
/// numbers of `caps.cong_cap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CongType {
    /// DCQCN.
    Dcqcn = 0,
    /// LDCP (window based).
    Ldcp = 1,
    /// HC3 (window based).
    Hc3 = 2,
    /// DCQCN with a per-destination-IP context.
    Dip = 3,
}

impl CongType {
    /// The algorithm numbered `v`; anything unknown is DCQCN, as
    /// `check_cong_type` falls back.
    pub fn from_u32(v: u32) -> Self {
        match v {
            1 => Self::Ldcp,
            2 => Self::Hc3,
            3 => Self::Dip,
            _ => Self::Dcqcn,
        }
    }

    /// The algorithm a new QP starts with (`default_congest_type`): DCQCN
    /// for UD and GSI, the device default otherwise.
    pub fn default_for(qp_type: u32, default_cong_type: u32) -> Self {
        if matches!(qp_type, qpt::UD | qpt::GSI) {
            Self::Dcqcn
        } else {
            Self::from_u32(default_cong_type)
        }
    }

    /// The algorithm libhns asked for in `cong_type_flags` of a user QP
    /// (`set_congest_type`): `EINVAL` for an unknown value, `EOPNOTSUPP`
    /// when the device lacks it or a UD QP asks for anything but DCQCN.
    pub fn from_user(flags: u64, qp_type: u32, cong_cap: u32) -> Result<Self, CongError> {
        let t = match flags {
            0 => Self::Dcqcn,
            1 => Self::Ldcp,
            2 => Self::Hc3,
            3 => Self::Dip,
            _ => return Err(CongError::Invalid),
        };
        if cong_cap & (1 << t as u32) == 0 || (qp_type == qpt::UD && t != Self::Dcqcn) {
            return Err(CongError::NotSupported);
        }
        Ok(t)
    }

    /// Whether the ACK request frequency is tied to the loopback packet
    /// count (window algorithms, `modify_qp_init_to_rtr`).
    pub fn window(self) -> bool {
        matches!(self, Self::Ldcp | Self::Hc3)
    }
}

/// Why [`CongType::from_user`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongError {
    /// Not an algorithm number (`-EINVAL`).
    Invalid,
    /// Not available here (`-EOPNOTSUPP`).
    NotSupported,
}

/// Templates per algorithm in the engine's congestion table
/// (`HNS_ROCE_CONG_SIZE`).
const CONG_SIZE: u32 = 64;

/// The congestion part of a path (`fill_cong_field`), written when the
/// engine is not HIP08 and the source GID is not RoCE v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongFields {
    /// The QP's algorithm.
    pub ty: CongType,
    /// The function's first template (`cong_algo_tmpl_id`, the MAC id of
    /// QUERY_FUNC_INFO).
    pub tmpl_base: u32,
    /// DIP context index (only with [`CongType::Dip`]).
    pub dip_idx: Option<u32>,
}

/// What `IB_QP_AV` writes (`hns_roce_v2_set_path`), already checked and
/// resolved: GID L2 fields, UDP source port, traffic class, service level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathParams {
    /// VLAN of the source GID, 0xffff without one.
    pub vlan_id: u16,
    /// HIP08 (the only engine with VLAN enable bits in the QPC).
    pub hip08: bool,
    /// UDP source port (0 unless RoCE v2).
    pub udp_sport: u32,
    /// Source GID index (the GMV entry).
    pub sgid_index: u32,
    /// Hop limit.
    pub hop_limit: u32,
    /// Congestion fields, if written.
    pub cong: Option<CongFields>,
    /// Traffic class as the QPC takes it ([`tclass`]).
    pub tclass: u32,
    /// Flow label.
    pub flow_label: u32,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Service level.
    pub sl: u32,
}

/// The traffic class the engine takes (`get_tclass`): the DSCP (upper six
/// bits) for RoCE v2, the whole byte otherwise.
pub fn tclass(traffic_class: u8, gid_type: u32) -> u32 {
    if gid_type == gid_type::ROCE_UDP_ENCAP {
        u32::from(traffic_class >> 2)
    } else {
        u32::from(traffic_class)
    }
}

/// `rdma_calc_flow_label`: a flow label both ends derive from the two QPNs.
pub fn calc_flow_label(lqpn: u32, rqpn: u32) -> u32 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    // CAST: 20 bits.
    (v & 0xfffff) as u32
}

/// `rdma_get_udp_sport`: the UDP source port of a flow label, or of the
/// QPN pair when the label is 0.
pub fn udp_sport(fl: u32, lqpn: u32, rqpn: u32) -> u16 {
    let fl = if fl == 0 {
        calc_flow_label(lqpn, rqpn)
    } else {
        fl
    };
    crate::hns_roce_hw_v2::ctx::flow_label_to_udp_sport(fl)
}

/// Highest service level of the engine (`MAX_SERVICE_LEVEL`).
const MAX_SERVICE_LEVEL: u32 = 7;

/// The highest service level a device with `sl_num` levels takes; `sl` is
/// valid when not above it (`check_sl_valid`).
pub fn max_sl(sl_num: u32) -> u32 {
    MAX_SERVICE_LEVEL.min(sl_num.saturating_sub(1))
}

/// `IB_QP_AV`: the path fields of the context.
pub fn set_path(img: &mut QpcImage, p: &PathParams) {
    let (c, m) = (&mut img.ctx, &mut img.mask);
    if p.vlan_id < 4096 && p.hip08 {
        c.enable(qpc::RQ_VLAN_EN);
        m.clear(qpc::RQ_VLAN_EN);
        c.enable(qpc::SQ_VLAN_EN);
        m.clear(qpc::SQ_VLAN_EN);
    }
    let fields = [
        (qpc::VLAN_ID, u32::from(p.vlan_id)),
        (qpc::UDPSPN, p.udp_sport),
        (qpc::GMV_IDX, p.sgid_index),
        (qpc::HOPLIMIT, p.hop_limit),
        (qpc::TC, p.tclass),
        (qpc::FL, p.flow_label),
        (qpc::SL, p.sl),
    ];
    for (f, v) in fields {
        c.write(f, v);
        m.clear(f);
    }
    c.copy_bytes(qpc::DGID_BYTES, &p.dgid);
    m.fill_bytes(qpc::DGID_BYTES, 0);
    if let Some(cong) = &p.cong {
        // (algorithm, sub-algorithm, DIP valid, window unlimited)
        let (sel, sub, dip, wnd) = match cong.ty {
            CongType::Dcqcn => (0, 0, false, false),
            CongType::Ldcp => (1, 0, false, true),
            CongType::Hc3 => (1, 1, false, false),
            CongType::Dip => (0, 0, true, false),
        };
        c.write(
            qpc::CONG_ALGO_TMPL_ID,
            cong.tmpl_base + cong.ty as u32 * CONG_SIZE,
        );
        m.clear(qpc::CONG_ALGO_TMPL_ID);
        let (e, em) = (&mut img.ext, &mut img.mask_ext);
        for (f, v) in [
            (qpcex::CONG_ALG_SEL, sel),
            (qpcex::CONG_ALG_SUB_SEL, sub),
            (qpcex::DIP_CTX_IDX_VLD, u32::from(dip)),
            (qpcex::SQ_RQ_NOT_FORBID_EN, u32::from(wnd)),
        ] {
            e.write(f, v);
            em.clear(f);
        }
        if dip {
            if let Some(i) = cong.dip_idx {
                e.write(qpcex::DIP_CTX_IDX, i);
                em.clear(qpcex::DIP_CTX_IDX);
            }
        }
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

/// Queue sizes of a kernel QP (`set_rq_size`, `set_kernel_sq_size`,
/// `set_ext_sge_param` on HIP09 with extended SGEs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueSizes {
    /// SQ WQEs.
    pub sq_wqe_cnt: u32,
    /// Log2 of the SQ WQE size.
    pub sq_wqe_shift: u32,
    /// SGEs per SQ WQE.
    pub sq_max_gs: u32,
    /// Extended SGEs per SQ WQE.
    pub sq_ext_sge_cnt: u32,
    /// Extended SGE entries.
    pub sge_cnt: u32,
    /// RQ WQEs (0 without RQ).
    pub rq_wqe_cnt: u32,
    /// Log2 of the RQ WQE size.
    pub rq_wqe_shift: u32,
    /// SGEs per RQ WQE.
    pub rq_max_gs: u32,
    /// Inline data the SQ takes.
    pub max_inline_data: u32,
}

/// The requested capacities and the device limits that size a QP.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueRequest {
    /// `cap.max_send_wr`.
    pub max_send_wr: u32,
    /// `cap.max_recv_wr`.
    pub max_recv_wr: u32,
    /// `cap.max_send_sge`.
    pub max_send_sge: u32,
    /// `cap.max_recv_sge`.
    pub max_recv_sge: u32,
    /// `cap.max_inline_data`.
    pub max_inline_data: u32,
    /// The QP has an RQ (no SRQ, not XRC).
    pub has_rq: bool,
    /// UD or GSI.
    pub ud: bool,
    /// Extended SGEs (`HNS_ROCE_EXSGE_FLAGS` in the QP's config: every
    /// kernel QP on HIP09, user QPs whose context asked for it).
    pub exsge: bool,
    /// A user QP's SQ as libhns laid it out: `(log_sq_bb_count,
    /// log_sq_stride)` of `hns_roce_ib_create_qp`; `None` for a kernel QP.
    pub user_sq: Option<(u8, u8)>,
    /// `caps.max_wqes`, `min_wqes`, `max_sq_sg`, `max_rq_sg`,
    /// `max_sq_inline`, `max_sq_desc_sz`, `max_rq_desc_sz`.
    pub max_wqes: u32,
    /// See `max_wqes`.
    pub min_wqes: u32,
    /// See `max_wqes`.
    pub max_sq_sg: u32,
    /// See `max_wqes`.
    pub max_rq_sg: u32,
    /// See `max_wqes`.
    pub max_sq_inline: u32,
    /// See `max_wqes`.
    pub max_sq_desc_sz: u32,
    /// See `max_wqes`.
    pub max_rq_desc_sz: u32,
}

/// Which check rejected a [`QueueRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// RQ depth or SGEs out of range ("RQ config error").
    RqConfig,
    /// RQ depth above the maximum after rounding.
    RqDepth,
    /// SQ depth or SGEs out of range.
    SqConfig,
    /// SQ depth above the maximum after rounding.
    SqDepth,
    /// User SQ: `1 << log_sq_bb_count` overflows or exceeds the maximum
    /// (no message of its own).
    UserSqCount,
    /// User SQ: stride below 64 bytes or above the largest WQE.
    UserSqStride,
    /// User SQ: more SGEs than the engine takes.
    UserSqSge,
}

/// Smallest SQ WQE of a user QP, log2 (`HNS_ROCE_IB_MIN_SQ_STRIDE`).
const MIN_SQ_STRIDE: u8 = 6;

/// Sizes the queues of a QP on HIP09 (no reserved RQ SGE):
/// `set_rq_size`, then `set_kernel_sq_size` or `set_user_sq_size`, both
/// with `set_ext_sge_param`.
pub fn queue_sizes(r: &QueueRequest) -> Result<QueueSizes, QueueError> {
    let mut s = QueueSizes::default();
    if r.has_rq {
        if r.max_recv_wr == 0 || r.max_recv_wr > r.max_wqes || r.max_recv_sge > r.max_rq_sg {
            return Err(QueueError::RqConfig);
        }
        let cnt = r
            .max_recv_wr
            .max(r.min_wqes)
            .checked_next_power_of_two()
            .ok_or(QueueError::RqDepth)?;
        if cnt > r.max_wqes {
            return Err(QueueError::RqDepth);
        }
        s.rq_max_gs = r
            .max_recv_sge
            .max(1)
            .checked_next_power_of_two()
            .ok_or(QueueError::RqConfig)?;
        s.rq_wqe_shift = log2(r.max_rq_desc_sz.saturating_mul(s.rq_max_gs));
        s.rq_wqe_cnt = cnt;
    }
    let cnt = match r.user_sq {
        Some((count_log, stride)) => {
            let cnt = 1u32
                .checked_shl(u32::from(count_log))
                .filter(|c| *c <= r.max_wqes)
                .ok_or(QueueError::UserSqCount)?;
            let max_stride = r
                .max_sq_desc_sz
                .checked_next_power_of_two()
                .map_or(31, log2);
            if u32::from(stride) > max_stride || stride < MIN_SQ_STRIDE {
                return Err(QueueError::UserSqStride);
            }
            if r.max_send_sge > r.max_sq_sg {
                return Err(QueueError::UserSqSge);
            }
            s.sq_wqe_shift = u32::from(stride);
            cnt
        }
        None => {
            if r.max_send_wr == 0 || r.max_send_wr > r.max_wqes || r.max_send_sge > r.max_sq_sg {
                return Err(QueueError::SqConfig);
            }
            let cnt = r
                .max_send_wr
                .max(r.min_wqes)
                .checked_next_power_of_two()
                .ok_or(QueueError::SqDepth)?;
            if cnt > r.max_wqes {
                return Err(QueueError::SqDepth);
            }
            s.sq_wqe_shift = log2(r.max_sq_desc_sz);
            cnt
        }
    };
    s.sq_wqe_cnt = cnt;
    // Extended SGE parameters.
    let inline = if r.max_inline_data != 0 {
        r.max_inline_data
            .checked_next_power_of_two()
            .unwrap_or(u32::MAX)
            .min(r.max_sq_inline)
    } else {
        0
    };
    let std_sge = if r.ud { 0 } else { 2 };
    let ext_from_sge = if r.max_send_sge > std_sge {
        r.max_send_sge - std_sge
    } else {
        u32::from(r.ud)
    };
    let ext_wqe_sge = if r.exsge {
        let ext_from_inline = if inline == 0 {
            0
        } else {
            let n = inline.checked_next_power_of_two().unwrap_or(u32::MAX) / 16;
            if !r.ud && n <= 2 {
                0
            } else {
                n
            }
        };
        let ext = ext_from_sge.max(ext_from_inline);
        s.sq_ext_sge_cnt = if ext != 0 {
            ext.checked_next_power_of_two().unwrap_or(0)
        } else {
            0
        };
        s.sq_max_gs = (s.sq_ext_sge_cnt + std_sge).max(1).min(r.max_sq_sg);
        s.sq_ext_sge_cnt
    } else {
        s.sq_max_gs = r.max_send_sge.max(1).min(r.max_sq_sg);
        s.sq_ext_sge_cnt = s.sq_max_gs;
        ext_from_sge
    };
    if ext_wqe_sge != 0 {
        let total = cnt
            .saturating_mul(ext_wqe_sge)
            .checked_next_power_of_two()
            .unwrap_or(u32::MAX);
        s.sge_cnt = total.max((1 << HW_PAGE_SHIFT) / 16);
    }
    s.max_inline_data = if r.exsge {
        let sge_num = if r.ud {
            s.sq_ext_sge_cnt
        } else {
            s.sq_ext_sge_cnt.max(2)
        };
        inline.max(sge_num * 16)
    } else {
        inline
    };
    Ok(s)
}

/// Bytes of `count` entries of `1 << shift` bytes rounded up to whole
/// hardware pages (`to_hr_hem_entries_size`).
pub fn entries_size(count: u32, shift: u32) -> usize {
    let bytes = (count as usize) << shift;
    bytes.div_ceil(1 << HW_PAGE_SHIFT) << HW_PAGE_SHIFT
}

/// One data segment of an RQ WQE (`struct hns_roce_v2_wqe_data_seg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataSeg {
    /// Length in bytes.
    pub len: u32,
    /// Local key.
    pub lkey: u32,
    /// Address.
    pub addr: u64,
}

impl DataSeg {
    /// The 16 bytes the engine reads.
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.len.to_le_bytes());
        b[4..8].copy_from_slice(&self.lkey.to_le_bytes());
        b[8..16].copy_from_slice(&self.addr.to_le_bytes());
        b
    }
}

/// The segments of one RQ WQE in order (`fill_recv_sge_to_wqe`): the
/// SGEs that have a length, then the reserved terminator (HIP08: `rsv`) or
/// zeros up to `max_sge` segments.
pub fn rq_wqe_segs<I: Iterator<Item = DataSeg>>(
    sges: I,
    max_sge: usize,
    rsv: bool,
) -> RqWqeSegs<I> {
    RqWqeSegs {
        sges,
        n: 0,
        max_sge,
        rsv,
        given_done: false,
        rsv_done: false,
    }
}

/// Iterator of [`rq_wqe_segs`].
pub struct RqWqeSegs<I> {
    sges: I,
    n: usize,
    max_sge: usize,
    rsv: bool,
    given_done: bool,
    rsv_done: bool,
}

impl<I: Iterator<Item = DataSeg>> Iterator for RqWqeSegs<I> {
    type Item = DataSeg;

    fn next(&mut self) -> Option<DataSeg> {
        if !self.given_done {
            for s in self.sges.by_ref() {
                if s.len != 0 {
                    self.n += 1;
                    return Some(s);
                }
            }
            self.given_done = true;
        }
        if self.rsv {
            if self.rsv_done {
                return None;
            }
            self.rsv_done = true;
            return Some(DataSeg {
                len: 0x8000_0000,
                lkey: 0,
                addr: 0,
            });
        }
        if self.n < self.max_sge {
            self.n += 1;
            return Some(DataSeg::default());
        }
        None
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
