// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Hardware context images and doorbell words of the HIP08/HIP09 engine
//! (`core` only): what `config_eqc`, `hns_roce_v2_write_cqc`,
//! `hns_roce_v2_write_mtpt` (DMA MR) and the EQ/CQ doorbells put in memory,
//! from plain inputs, so the host tests and KUnit can check them against the
//! words the C driver produced.

use crate::field::Ctx;
use crate::hns_roce_hw_v2::consts::{db_cmd, eq_db_cmd};
use crate::hns_roce_hw_v2::fields::{cqc, eqc, mpt, Cqc, Eqc, Mpt};

/// Smallest page the hardware addresses (`HNS_HW_PAGE_SHIFT`).
pub const HW_PAGE_SHIFT: u32 = 12;
/// EQ state: valid.
const EQ_STATE_VALID: u32 = 1;
/// EQ arm state: always armed.
const EQ_ALWAYS_ARMED: u32 = 3;
/// The 64-byte EQE/CQE size.
pub const V3_ENTRY_SIZE: u32 = 64;
/// CQ state: valid.
const CQ_STATE_VALID: u32 = 1;
/// MPT state: valid.
const MPT_ST_VALID: u32 = 1;

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
#[derive(Clone, Copy, Debug, Default)]
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
