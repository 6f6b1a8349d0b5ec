// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Hardware context images and doorbell words of the HIP08/HIP09 engine
//! (`core` only): what `config_eqc`, `hns_roce_v2_write_cqc`,
//! `hns_roce_v2_write_mtpt` (DMA MR), `hns_roce_v2_write_srqc` and the EQ/CQ
//! doorbells put in memory, from plain inputs, so the host tests and KUnit
//! can check them against the words the C driver produced.

use crate::field::Ctx;
use crate::hns_roce_hw_v2::consts::hw_page::PAGE_SHIFT as HW_PAGE_SHIFT;
use crate::hns_roce_hw_v2::consts::{cq_moder, db_cmd, eq_db_cmd, mpt_shift, mpt_st};
use crate::hns_roce_hw_v2::fields::{cqc, eqc, mpt, srqc, Cqc, Eqc, Mpt, Srqc};
use crate::hw_rev::HwRev;

/// EQ state: valid.
const EQ_STATE_VALID: u32 = 1;
/// EQ arm state: always armed.
const EQ_ALWAYS_ARMED: u32 = 3;
/// The 64-byte EQE/CQE size.
pub const V3_ENTRY_SIZE: u32 = 64;
/// CQ state: valid.
const CQ_STATE_VALID: u32 = 1;
/// MPT state: valid.
const MPT_ST_VALID: u32 = mpt_st::VALID;

/// What an EQ context is made of.
#[derive(Clone, Copy, Debug, Default)]
pub struct EqcParams {
    /// EQ number.
    pub eqn: u32,
    /// Hop number of the EQE buffer (0 for 0xff).
    pub hop: u32,
    /// BT page size exponent (bytes).
    pub ba_pg_shift: u32,
    /// Buffer page size exponent (bytes).
    pub buf_pg_shift: u32,
    /// Entries (a power of two).
    pub entries: u32,
    /// Bytes per EQE.
    pub eqe_size: u32,
    /// Bus address of the root BT.
    pub bt_ba: u64,
    /// Bus addresses of the first two EQE pages.
    pub cur: u64,
    /// See `cur`.
    pub next: u64,
}

/// The EQ context (`config_eqc`, HIP09: no period scaling).
pub fn eq_context(p: &EqcParams) -> Ctx<Eqc, 16> {
    let mut c = Ctx::<Eqc, 16>::zeroed();
    // CAST: the fields take the listed bit slices of the addresses (the
    // writes drop bits above each field's width).
    c.write(eqc::EQ_ST, EQ_STATE_VALID);
    c.write(eqc::EQE_HOP_NUM, p.hop);
    c.write(eqc::ARM_ST, EQ_ALWAYS_ARMED);
    c.write(eqc::EQN, p.eqn);
    c.write(
        eqc::EQE_BA_PG_SZ,
        p.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    c.write(
        eqc::EQE_BUF_PG_SZ,
        p.buf_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    c.write(eqc::EQE_BA_L, (p.bt_ba >> 3) as u32);
    c.write(eqc::EQE_BA_H, (p.bt_ba >> 35) as u32);
    c.write(eqc::SHIFT, p.entries.checked_ilog2().unwrap_or(0));
    c.write(eqc::CUR_EQE_BA_L, (p.cur >> 12) as u32);
    c.write(eqc::CUR_EQE_BA_M, (p.cur >> 28) as u32);
    c.write(eqc::CUR_EQE_BA_H, (p.cur >> 60) as u32);
    c.write(eqc::NEX_EQE_BA_L, (p.next >> 12) as u32);
    c.write(eqc::NEX_EQE_BA_H, (p.next >> 44) as u32);
    // A 2-bit field holding 1 for 64-byte entries (not all ones).
    c.write(eqc::EQE_SIZE, u32::from(p.eqe_size == V3_ENTRY_SIZE));
    c
}

/// The EQ doorbell word (`update_eq_db`, always armed).
pub fn eq_doorbell(aeq: bool, eqn: u32, ci: u32) -> u64 {
    let (tag, cmd) = if aeq {
        (0, eq_db_cmd::AEQ)
    } else {
        (u64::from(eqn & 0xff), eq_db_cmd::CEQ)
    };
    tag | (cmd << 16) | (u64::from(ci & 0xff_ffff) << 32)
}

/// What a CQ context is made of.
#[derive(Clone, Copy, Debug, Default)]
pub struct CqcParams {
    /// CQ number.
    pub cqn: u32,
    /// Completion vector (CEQ).
    pub ceqn: u32,
    /// Entries (a power of two).
    pub depth: u32,
    /// Bytes per CQE.
    pub cqe_size: u32,
    /// Stash enabled (`HNS_ROCE_CAP_FLAG_STASH`).
    pub stash: bool,
    /// Hop number of the CQE buffer (0 for 0xff).
    pub hop: u32,
    /// BT page size exponent (bytes).
    pub ba_pg_shift: u32,
    /// Buffer page size exponent (bytes).
    pub buf_pg_shift: u32,
    /// Bus address of the root BT.
    pub bt_ba: u64,
    /// Bus addresses of the first two CQE pages.
    pub cur: u64,
    /// See `cur`.
    pub next: u64,
    /// Bus address of the record doorbell, if any.
    pub db: Option<u64>,
}

/// The CQ context (`hns_roce_v2_write_cqc`).
pub fn cq_context(p: &CqcParams) -> Ctx<Cqc, 16> {
    let mut x = Ctx::<Cqc, 16>::zeroed();
    let cur = p.cur >> HW_PAGE_SHIFT;
    let next = p.next >> HW_PAGE_SHIFT;
    let db = p.db.unwrap_or(0);
    // CAST: as in `eq_context`.
    x.write(cqc::CQ_ST, CQ_STATE_VALID);
    x.write(cqc::SHIFT, p.depth.checked_ilog2().unwrap_or(0));
    x.write(cqc::CEQN, p.ceqn);
    x.write(cqc::CQN, p.cqn);
    if p.cqe_size == V3_ENTRY_SIZE {
        x.write(cqc::CQE_SIZE, 1);
    }
    if p.stash {
        x.enable(cqc::STASH);
    }
    x.write(cqc::CQE_CUR_BLK_ADDR_L, cur as u32);
    x.write(cqc::CQE_CUR_BLK_ADDR_H, (cur >> 32) as u32);
    x.write(cqc::CQE_HOP_NUM, p.hop);
    x.write(cqc::CQE_NEX_BLK_ADDR_L, next as u32);
    x.write(cqc::CQE_NEX_BLK_ADDR_H, (next >> 32) as u32);
    x.write(
        cqc::CQE_BAR_PG_SZ,
        p.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    x.write(
        cqc::CQE_BUF_PG_SZ,
        p.buf_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    x.write(cqc::CQE_BA_L, (p.bt_ba >> 3) as u32);
    x.write(cqc::CQE_BA_H, (p.bt_ba >> 35) as u32);
    x.write(cqc::DB_RECORD_EN, u32::from(p.db.is_some()));
    x.write(cqc::CQE_DB_RECORD_ADDR_L, (db as u32) >> 1);
    x.write(cqc::CQE_DB_RECORD_ADDR_H, (db >> 32) as u32);
    x
}

/// A CQ moderation change (`hns_roce_v2_modify_cq`): the MODIFY_CQC
/// context and its mask (all ones but the two fields changed), and
/// whether HIP08's period limit cut `period` down.
pub fn cq_moderation(count: u16, period: u16, rev: HwRev) -> (Ctx<Cqc, 16>, Ctx<Cqc, 16>, bool) {
    let mut c = Ctx::<Cqc, 16>::zeroed();
    let mut m = Ctx::<Cqc, 16>::from_le_words([u32::MAX; 16]);
    c.write(cqc::CQ_MAX_CNT, u32::from(count));
    m.clear(cqc::CQ_MAX_CNT);
    let mut period = u32::from(period);
    let mut capped = false;
    if rev.is_hip08() {
        if period * cq_moder::CLOCK_ADJUST > u32::from(u16::MAX) {
            period = cq_moder::MAX_CQ_PERIOD_HIP08;
            capped = true;
        }
        period *= cq_moder::CLOCK_ADJUST;
    }
    c.write(cqc::CQ_PERIOD, period);
    m.clear(cqc::CQ_PERIOD);
    (c, m, capped)
}

/// The CQ arm doorbell word (`hns_roce_v2_req_notify_cq`): `solicited`
/// selects the C driver's `V2_CQ_DB_REQ_NOT` (1), else `_NOT_SOL` (0).
pub fn cq_notify_doorbell(cqn: u32, ci: u32, arm_sn: u32, solicited: bool) -> u64 {
    u64::from(cqn & 0xff_ffff)
        | (db_cmd::CQ_NOTIFY << 24)
        | (u64::from(ci & 0xff_ffff) << 32)
        | (u64::from(solicited) << 56)
        | (u64::from(arm_sn & 3) << 57)
}

/// Access rights of an MR (`IB_ACCESS_*` as booleans).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MrAccess {
    /// Remote atomics.
    pub remote_atomic: bool,
    /// Remote reads.
    pub remote_read: bool,
    /// Remote writes.
    pub remote_write: bool,
    /// Local writes.
    pub local_write: bool,
}

/// The MPT entry of a DMA MR (`hns_roce_v2_write_mtpt` for `MR_TYPE_DMA`):
/// whole address space, physical addresses.
pub fn dma_mr_mpt(pdn: u32, access: MrAccess, key: u32) -> Ctx<Mpt, 16> {
    let mut c = Ctx::<Mpt, 16>::zeroed();
    c.write(mpt::ST, MPT_ST_VALID);
    c.write(mpt::PD, pdn);
    c.write_bool(mpt::ATOMIC_EN, access.remote_atomic);
    c.write_bool(mpt::RR_EN, access.remote_read);
    c.write_bool(mpt::RW_EN, access.remote_write);
    c.write_bool(mpt::LW_EN, access.local_write);
    c.write(mpt::LKEY, key);
    c.enable(mpt::PA);
    c
}

/// The MPT's `va_l`/`va_h` words: a 64-bit field the C driver stores as two
/// `__le32` members right after `lkey`.
const MPT_VA_L_WORD: usize = mpt::LKEY.word() + 1;
const MPT_VA_H_WORD: usize = mpt::LKEY.word() + 2;

/// What the page list of an MR puts in its MPT entry (`set_mtpt_pbl`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MptPbl {
    /// Pages of the MR (`mr->npages`, `PBL_SIZE`).
    pub npages: u32,
    /// Bus address of the page list's root (`hns_roce_get_mtr_ba`): the
    /// root BT, or the only page when the hop number is 0.
    pub pbl_ba: u64,
    /// Bus addresses of the first two pages (`hns_roce_mtr_find`; 0 where
    /// there is none).
    pub pages: [u64; 2],
    /// Buffer page size exponent (bytes).
    pub buf_pg_shift: u32,
}

/// What a user MR's MPT entry is made of (`hns_roce_v2_write_mtpt` for
/// `MR_TYPE_MR`).
#[derive(Clone, Copy, Debug, Default)]
pub struct UserMptParams {
    /// PD number.
    pub pdn: u32,
    /// Access rights.
    pub access: MrAccess,
    /// The MR key (lkey = rkey).
    pub key: u32,
    /// I/O virtual address of the first byte.
    pub iova: u64,
    /// Bytes.
    pub size: u64,
    /// Hop number of the page list (`mr->pbl_hop_num`: 0..=3).
    pub hop: u32,
    /// BT page size exponent (bytes; the buffer page size when hop 0).
    pub ba_pg_shift: u32,
    /// The page list.
    pub pbl: MptPbl,
}

/// Writes the page list into an MPT image (`set_mtpt_pbl`): `PBL_SIZE`,
/// `PBL_BA` (in 8-byte units), `PA0`/`PA1` (in 64-byte units),
/// `PBL_BUF_PG_SZ`.
pub fn set_mpt_pbl(c: &mut Ctx<Mpt, 16>, p: &MptPbl) {
    let ba = p.pbl_ba >> mpt_shift::PBL_BA_ADDR_S;
    let pa0 = p.pages[0] >> mpt_shift::PBL_BUF_ADDR_S;
    let pa1 = p.pages[1] >> mpt_shift::PBL_BUF_ADDR_S;
    // CAST: the low and high halves of the shifted addresses; the high
    // fields keep the bits they have room for.
    c.write(mpt::PBL_SIZE, p.npages);
    c.write(mpt::PBL_BA_L, ba as u32);
    c.write(mpt::PBL_BA_H, (ba >> 32) as u32);
    c.write(mpt::PA0_L, pa0 as u32);
    c.write(mpt::PA0_H, (pa0 >> 32) as u32);
    c.write(mpt::PA1_L, pa1 as u32);
    c.write(mpt::PA1_H, (pa1 >> 32) as u32);
    c.write(
        mpt::PBL_BUF_PG_SZ,
        p.buf_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
}

/// Writes the MR's address and length (the `va_*`/`len_*` members).
fn set_mpt_range(c: &mut Ctx<Mpt, 16>, iova: u64, size: u64) {
    // CAST: low and high halves.
    c.write(mpt::LEN_L, size as u32);
    c.write(mpt::LEN_H, (size >> 32) as u32);
    c.set_word(MPT_VA_L_WORD, iova as u32);
    c.set_word(MPT_VA_H_WORD, (iova >> 32) as u32);
}

/// Writes the access bits.
fn set_mpt_access(c: &mut Ctx<Mpt, 16>, a: MrAccess) {
    c.write_bool(mpt::ATOMIC_EN, a.remote_atomic);
    c.write_bool(mpt::RR_EN, a.remote_read);
    c.write_bool(mpt::RW_EN, a.remote_write);
    c.write_bool(mpt::LW_EN, a.local_write);
}

/// The MPT entry of a user MR (`hns_roce_v2_write_mtpt` for `MR_TYPE_MR`):
/// virtual addresses through the page list.
pub fn user_mr_mpt(p: &UserMptParams) -> Ctx<Mpt, 16> {
    let mut c = Ctx::<Mpt, 16>::zeroed();
    c.write(mpt::ST, MPT_ST_VALID);
    c.write(mpt::PD, p.pdn);
    set_mpt_access(&mut c, p.access);
    set_mpt_range(&mut c, p.iova, p.size);
    c.write(mpt::LKEY, p.key);
    c.write(mpt::PBL_HOP_NUM, p.hop);
    c.write(
        mpt::PBL_BA_PG_SZ,
        p.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    c.enable(mpt::INNER_PA_VLD);
    set_mpt_pbl(&mut c, &p.pbl);
    c
}

/// What a fast-register MR's MPT entry is made of
/// (`hns_roce_v2_frmr_write_mtpt`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FrmrMptParams {
    /// PD number.
    pub pdn: u32,
    /// Bus address of the page list's BT.
    pub pbl_ba: u64,
    /// Pages the page list can hold (`mr->npages` at allocation).
    pub npages: u32,
    /// BT page size exponent (bytes).
    pub ba_pg_shift: u32,
    /// Buffer page size exponent (bytes; the CPU page at allocation).
    pub buf_pg_shift: u32,
}

/// The MPT entry of a fast-register MR (`hns_roce_v2_frmr_write_mtpt`):
/// free until a REG_MR work request makes it valid, remote access and
/// remote invalidation allowed, fast registration enabled, one hop of page
/// list, no key and no range (the REG_MR WQE brings them).
pub fn frmr_mpt(p: &FrmrMptParams) -> Ctx<Mpt, 16> {
    let mut c = Ctx::<Mpt, 16>::zeroed();
    c.write(mpt::ST, mpt_st::FREE);
    c.write(mpt::PD, p.pdn);
    c.enable(mpt::RA_EN);
    c.enable(mpt::R_INV_EN);
    c.enable(mpt::FRE);
    c.enable(mpt::BPD);
    c.clear(mpt::PA);
    c.write(mpt::PBL_HOP_NUM, 1);
    c.write(
        mpt::PBL_BA_PG_SZ,
        p.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    // No pages yet: PA0/PA1 stay 0.
    set_mpt_pbl(
        &mut c,
        &MptPbl {
            npages: p.npages,
            pbl_ba: p.pbl_ba,
            pages: [0; 2],
            buf_pg_shift: p.buf_pg_shift,
        },
    );
    c
}

/// What a re-registration changes (`IB_MR_REREG_*` as booleans).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rereg {
    /// New translation (`IB_MR_REREG_TRANS`): address, length, page list.
    pub trans: bool,
    /// New access rights (`IB_MR_REREG_ACCESS`).
    pub access: bool,
}

/// The MPT entry of a re-registered MR from the one the engine had
/// (`hns_roce_v2_rereg_write_mtpt` on the QUERY_MPT answer): state valid,
/// PD, and what `what` says changed. Unlike C, a new translation also
/// rewrites `PBL_HOP_NUM` and `PBL_BA_PG_SZ` for the new page list
/// (`docs/c-driver-findings.md`, finding 1): C keeps the old MR's, which
/// breaks an MR that grew past what its old hop number addresses.
pub fn rereg_mpt(old: &Ctx<Mpt, 16>, what: Rereg, p: &UserMptParams) -> Ctx<Mpt, 16> {
    let mut c = old.clone();
    c.write(mpt::ST, MPT_ST_VALID);
    c.write(mpt::PD, p.pdn);
    if what.access {
        set_mpt_access(&mut c, p.access);
    }
    if what.trans {
        set_mpt_range(&mut c, p.iova, p.size);
        c.write(mpt::PBL_HOP_NUM, p.hop);
        c.write(
            mpt::PBL_BA_PG_SZ,
            p.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
        );
        set_mpt_pbl(&mut c, &p.pbl);
    }
    c
}

/// The key of MPT entry `idx` (`hw_index_to_key`).
pub const fn index_to_key(idx: u32) -> u32 {
    idx.rotate_left(8)
}

/// The MPT entry of `key` (`key_to_hw_index`).
pub const fn key_to_index(key: u32) -> u32 {
    key.rotate_right(8)
}

/// The UDP source port a flow label selects (`rdma_flow_label_to_udp_sport`).
pub fn flow_label_to_udp_sport(fl: u32) -> u16 {
    let low = (fl & 0x03fff) ^ ((fl & 0xfc000) >> 14);
    // CAST: 14 bits ORed into 0xc000.
    (low | 0xc000) as u16
}

/// One queue of an SRQ (WQEs or indexes) as the SRQ context points to it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SrqQueue {
    /// Hop number of the caps (`HOP_NUM_0` for direct).
    pub hop: u32,
    /// BT page size exponent (bytes).
    pub ba_pg_shift: u32,
    /// Buffer page size exponent (bytes).
    pub buf_pg_shift: u32,
    /// Bus address of the root BT.
    pub bt_ba: u64,
    /// Bus addresses of the first two pages.
    pub cur: u64,
    /// See `cur`.
    pub next: u64,
}

/// What an SRQ context is made of.
#[derive(Clone, Copy, Debug, Default)]
pub struct SrqcParams {
    /// SRQ number.
    pub srqn: u32,
    /// Protection domain.
    pub pdn: u32,
    /// An XRC SRQ (`IB_SRQT_XRC`).
    pub xrc: bool,
    /// XRC domain (0 for a basic SRQ).
    pub xrcdn: u32,
    /// CQ of an XRC SRQ (0 for a basic SRQ).
    pub cqn: u32,
    /// WQEs (a power of two).
    pub wqe_cnt: u32,
    /// SGEs per WQE (a power of two).
    pub max_gs: u32,
    /// The WQE buffer.
    pub wqe: SrqQueue,
    /// The index queue.
    pub idx: SrqQueue,
    /// Bus address of the record doorbell, if any.
    pub db: Option<u64>,
}

/// SRQ state: valid.
const SRQ_STATE_VALID: u32 = 1;
/// The BT base addresses of an SRQ context drop their low 3 bits
/// (`DMA_WQE_SHIFT`, `DMA_IDX_SHIFT`).
const SRQ_BT_BA_SHIFT: u32 = 3;

/// The SRQ context (`hns_roce_v2_write_srqc` and
/// `hns_roce_v2_write_srqc_index_queue`).
pub fn srq_context(p: &SrqcParams) -> Ctx<Srqc, 16> {
    let mut x = Ctx::<Srqc, 16>::zeroed();
    // CAST: every 64-bit value below is split into its two halves.
    x.write(srqc::SRQ_ST, SRQ_STATE_VALID);
    x.write_bool(srqc::SRQ_TYPE, p.xrc);
    x.write(srqc::PD, p.pdn);
    x.write(srqc::SRQN, p.srqn);
    x.write(srqc::XRCD, p.xrcdn);
    x.write(srqc::XRC_CQN, p.cqn);
    x.write(srqc::SHIFT, p.wqe_cnt.checked_ilog2().unwrap_or(0));
    // `fls(max_gs - 1)`: bits needed for the largest SGE index.
    x.write(srqc::RQWS, 32 - p.max_gs.saturating_sub(1).leading_zeros());

    let w = &p.wqe;
    x.write(srqc::WQE_HOP_NUM, crate::hem::hw_hopnum(w.hop, p.wqe_cnt));
    let ba = w.bt_ba >> SRQ_BT_BA_SHIFT;
    x.write(srqc::WQE_BT_BA_L, ba as u32);
    x.write(srqc::WQE_BT_BA_H, (ba >> 32) as u32);
    x.write(
        srqc::WQE_BA_PG_SZ,
        w.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    x.write(
        srqc::WQE_BUF_PG_SZ,
        w.buf_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    if let Some(db) = p.db {
        x.enable(srqc::DB_RECORD_EN);
        x.write(srqc::DB_RECORD_ADDR_L, (db as u32) >> 1);
        x.write(srqc::DB_RECORD_ADDR_H, (db >> 32) as u32);
    }

    let i = &p.idx;
    x.write(srqc::IDX_HOP_NUM, crate::hem::hw_hopnum(i.hop, p.wqe_cnt));
    let ba = i.bt_ba >> SRQ_BT_BA_SHIFT;
    x.write(srqc::IDX_BT_BA_L, ba as u32);
    x.write(srqc::IDX_BT_BA_H, (ba >> 32) as u32);
    x.write(
        srqc::IDX_BA_PG_SZ,
        i.ba_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    x.write(
        srqc::IDX_BUF_PG_SZ,
        i.buf_pg_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    let cur = i.cur >> HW_PAGE_SHIFT;
    let next = i.next >> HW_PAGE_SHIFT;
    x.write(srqc::IDX_CUR_BLK_ADDR_L, cur as u32);
    x.write(srqc::IDX_CUR_BLK_ADDR_H, (cur >> 32) as u32);
    x.write(srqc::IDX_NXT_BLK_ADDR_L, next as u32);
    x.write(srqc::IDX_NXT_BLK_ADDR_H, (next >> 32) as u32);
    x
}

/// A new SRQ limit (`hns_roce_v2_modify_srq` with `IB_SRQ_LIMIT`): the
/// MODIFY_SRQC context and its mask (all ones but the limit).
pub fn srq_limit(limit: u32) -> (Ctx<Srqc, 16>, Ctx<Srqc, 16>) {
    let mut c = Ctx::<Srqc, 16>::zeroed();
    let mut m = Ctx::<Srqc, 16>::ones();
    c.write(srqc::LIMIT_WL, limit);
    m.clear(srqc::LIMIT_WL);
    (c, m)
}

/// The limit in an SRQ context read back with QUERY_SRQC
/// (`hns_roce_v2_query_srq`).
pub fn srq_limit_of(words: [u32; 16]) -> u32 {
    Ctx::<Srqc, 16>::from_le_words(words).read(srqc::LIMIT_WL)
}
