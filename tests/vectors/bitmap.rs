// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `bitmap.rs`: id sequences worked out by hand from the C
//! driver (`ida_alloc_range`/`ida_free` in lib/idr.c, `alloc_qpn`/`free_qpn`
//! and `hns_roce_init_qp_table` in hns_roce_qp.c, `alloc_cqn`/`free_cqn`,
//! the uctx bank helpers and `hns_roce_init_cq_table` in hns_roce_cq.c).
//!
//! Unless a vector says otherwise the caps are hns-sim's defaults
//! (sim/src/caps.rs): 2^8 QPs with 8 reserved, 2^10 CQs with none
//! reserved, 2^16 PDs, 2^8 UARs/XRCDs/SRQs, 2^12 MTPTs with 1 reserved
//! MRW, no other reserved ids, flags 0x48077f (no LIMIT_BANK), HIP09.

use super::{expect, Check};
use crate::bitmap::{
    cq_bank_words, qp_bank_words, use_ext_sge, valid_qp_bank_mask, Bank, BitmapError, CqBanks,
    IdRange, Ida, QpBanks, QpnRequest, GSI_QPN,
};
use crate::hns_roce_hw_v2::consts::cap_flag;
use crate::hw_rev::HwRev;

/// hns-sim's `caps.flags` (caps_c flags 0x77f | caps_d flags_ex 0x480 << 12).
pub const SIM_FLAGS: u32 = 0x0048_077f;
/// hns-sim's `num_qps` (`1 << num_qps_log`, log 8).
pub const SIM_NUM_QPS: u32 = 256;
/// hns-sim's `reserved_qps` (`rsv_qps`).
pub const SIM_RESERVED_QPS: u32 = 8;
/// hns-sim's `num_cqs` (`1 << num_cqs_log`, log 10).
pub const SIM_NUM_CQS: u32 = 1024;
/// hns-sim's `reserved_cqs` (`rsv_cqs`).
pub const SIM_RESERVED_CQS: u32 = 0;

/// A kernel QP without send CQ or extended SGEs.
const PLAIN: QpnRequest = QpnRequest {
    gsi: false,
    send_cqn: None,
    ext_sge: false,
};

/// A kernel QP whose send CQ is `cqn`.
fn on_cq(cqn: u32) -> QpnRequest {
    QpnRequest {
        send_cqn: Some(cqn),
        ..PLAIN
    }
}

/// A QP with extended SGEs and the given send CQ.
fn ext(send_cqn: Option<u32>) -> QpnRequest {
    QpnRequest {
        send_cqn,
        ext_sge: true,
        ..PLAIN
    }
}

/// The next `want.len()` QPNs for `req` must be `want`.
fn qp_seq(b: &mut QpBanks<&mut [u64]>, req: QpnRequest, want: &[u32], what: &'static str) -> Check {
    for &qpn in want {
        expect(b.alloc(req) == Ok(qpn), what)?;
    }
    Ok(())
}

/// The next `want.len()` CQNs for `user_bank` must be `want`.
fn cq_seq(
    b: &mut CqBanks<&mut [u64]>,
    user_bank: Option<u8>,
    want: &[u32],
    what: &'static str,
) -> Check {
    for &cqn in want {
        expect(b.alloc(user_bank) == Ok(cqn), what)?;
    }
    Ok(())
}

/// The IDA ranges of the C init functions with hns-sim's caps, and the
/// first ids their users get.
pub fn check_ida_ranges() -> Check {
    // hns_roce_init_pd_table: [reserved_pds, num_pds - 1] = [0, 65535].
    let pd = IdRange::from_count(0, 1 << 16);
    expect(pd == IdRange::new(0, 65535), "PD range")?;
    expect(pd.words() == 1024, "PD storage: 65536 / 64 words")?;
    // hns_roce_init_mr_table: [reserved_mrws, num_mtpts - 1] = [1, 4095];
    // 4095 ids from 1 need 64 words.
    let mr = IdRange::from_count(1, 1 << 12);
    expect(mr == IdRange::new(1, 4095), "MTPT range")?;
    expect(mr.words() == 64, "MTPT storage")?;
    let mut w = [0u64; 64];
    let mut ida = Ida::new(mr, &mut w[..]).map_err(|_| "MTPT IDA")?;
    expect(ida.alloc() == Ok(1), "first MR key index is 1 (0 reserved)")?;
    expect(ida.alloc() == Ok(2), "second MR key index")?;

    // UARs: [0, 255]. hns_roce_setup_hca takes the first for priv_uar, so
    // the first user context gets 1; a freed one is reused first.
    let uar = IdRange::from_count(0, 1 << 8);
    expect(uar.words() == 4, "UAR storage")?;
    let mut w = [0u64; 4];
    let mut ida = Ida::new(uar, &mut w[..]).map_err(|_| "UAR IDA")?;
    expect(ida.alloc() == Ok(0), "priv_uar gets 0")?;
    expect(ida.alloc() == Ok(1), "first ucontext gets UAR 1")?;
    expect(ida.alloc() == Ok(2), "second ucontext gets UAR 2")?;
    expect(ida.free(1) == Ok(()), "dealloc ucontext 1")?;
    expect(ida.alloc() == Ok(1), "UAR 1 is reused (lowest free)")?;
    expect(ida.alloc() == Ok(3), "then UAR 3")?;
    expect(
        ida.is_allocated(3) && !ida.is_allocated(4),
        "UAR 3 taken, 4 free",
    )?;

    // SRQs and XRCDs: [0, 255].
    let srq = IdRange::from_count(0, 1 << 8);
    expect(srq == IdRange::new(0, 255), "SRQ range")?;
    let mut w = [0u64; 4];
    let mut ida = Ida::new(srq, &mut w[..]).map_err(|_| "SRQ IDA")?;
    expect(ida.alloc() == Ok(0), "first SRQN 0")?;
    expect(ida.alloc() == Ok(1), "second SRQN 1")?;
    expect(ida.free(0) == Ok(()), "destroy SRQ 0")?;
    expect(ida.alloc() == Ok(0), "SRQN 0 reused")?;
    expect(ida.alloc() == Ok(2), "then SRQN 2")
}

/// Running out, the `ida_alloc_range` edge cases and bad frees.
pub fn check_ida_full_and_errors() -> Check {
    // [2, 4]: 2, 3, 4, then -ENOSPC.
    let mut w = [0u64; 1];
    let mut ida = Ida::new(IdRange::new(2, 4), &mut w[..]).map_err(|_| "small IDA")?;
    expect(ida.is_empty(), "new IDA is empty")?;
    expect(ida.alloc() == Ok(2), "2")?;
    expect(ida.alloc() == Ok(3), "3")?;
    expect(ida.alloc() == Ok(4), "4")?;
    expect(ida.alloc() == Err(BitmapError::Full), "full")?;
    expect(ida.free(3) == Ok(()), "free 3")?;
    expect(ida.alloc() == Ok(3), "3 again")?;
    // ida_free WARNs for ids that are not allocated.
    expect(ida.free(5) == Err(BitmapError::NotAllocated), "free 5")?;
    expect(ida.free(1) == Err(BitmapError::NotAllocated), "free 1")?;
    expect(ida.free(2) == Ok(()), "free 2")?;
    expect(ida.free(2) == Err(BitmapError::NotAllocated), "double free")?;
    // `if ((int)id < 0) return;`
    expect(ida.free(0x8000_0000) == Ok(()), "negative id ignored")?;
    // min > max and (int)min < 0 are -ENOSPC.
    expect(ida.alloc_range(4, 3) == Err(BitmapError::Full), "min > max")?;
    expect(
        ida.alloc_range(0x8000_0000, 0x8000_0001) == Err(BitmapError::Full),
        "negative min",
    )?;
    // Outside the storage.
    expect(
        ida.alloc_range(0, 4) == Err(BitmapError::Invalid),
        "below min",
    )?;
    expect(
        ida.alloc_range(2, 5) == Err(BitmapError::Invalid),
        "above max",
    )?;
    expect(ida.alloc_range(2, 4) == Ok(2), "in range")?;
    ida.clear();
    expect(ida.is_empty() && ida.alloc() == Ok(2), "ida_destroy")?;

    // [0, 64] needs 2 words.
    let mut w = [0u64; 1];
    expect(
        Ida::new(IdRange::new(0, 64), &mut w[..]).is_err(),
        "storage too small",
    )?;
    // reserved == num: [8, 7] is empty, every allocation is -ENOSPC.
    let empty = IdRange::from_count(8, 8);
    expect(empty.words() == 0, "empty range needs no storage")?;
    let mut ida = Ida::new(empty, &mut w[..]).map_err(|_| "empty IDA")?;
    expect(ida.alloc() == Err(BitmapError::Full), "empty range")?;
    // num == 0: max wraps to u32::MAX, clamped to INT_MAX: 2^31 ids.
    let all = IdRange::from_count(0, 0);
    expect(all == IdRange::new(0, u32::MAX), "num 0 wraps")?;
    expect(all.words() == 1 << 25, "INT_MAX clamp")
}

/// Lowest-first across word boundaries, and dirty storage is cleared.
pub fn check_ida_word_boundaries() -> Check {
    let mut w = [u64::MAX; 3];
    let mut ida = Ida::new(IdRange::new(0, 129), &mut w[..]).map_err(|_| "IDA")?;
    for id in 0..130u32 {
        expect(ida.alloc() == Ok(id), "ids 0..=129 in order")?;
    }
    expect(ida.alloc() == Err(BitmapError::Full), "130 ids, full")?;
    expect(
        ida.free(64) == Ok(()) && ida.free(100) == Ok(()),
        "free 64, 100",
    )?;
    expect(ida.alloc_range(65, 129) == Ok(100), "search from 65")?;
    expect(ida.alloc() == Ok(64), "64")?;
    expect(
        ida.free(129) == Ok(()) && ida.free(63) == Ok(()),
        "free 63, 129",
    )?;
    expect(ida.alloc_range(64, 129) == Ok(129), "last bit")?;
    expect(ida.alloc_range(63, 63) == Ok(63), "single id")?;
    expect(ida.alloc() == Err(BitmapError::Full), "full again")
}

/// QPNs with hns-sim's caps: 8 banks of ids [1, 31] (QPNs 0-7 reserved),
/// least-loaded bank first, send CQ affinity, no reuse before wrap.
pub fn check_qp_sim_defaults() -> Check {
    expect(
        qp_bank_words(SIM_NUM_QPS, SIM_RESERVED_QPS) == 8,
        "one word per bank",
    )?;
    let mut w = [0u64; 8];
    let mut b = QpBanks::new(&mut w[..], SIM_NUM_QPS, SIM_RESERVED_QPS, SIM_FLAGS)
        .map_err(|_| "QP banks")?;
    let fresh = Bank {
        inuse: 1,
        min: 1,
        max: 31,
        next: 1,
    };
    for i in 0..8u8 {
        expect(b.bank(i) == Some(fresh), "each bank has 1 reserved QPN")?;
    }
    expect(b.bank(8).is_none(), "8 banks")?;

    // All banks at 1: banks 0..7 in turn get id 1 (QPNs 8..15), then all
    // at 2 -> bank 0 id 2 (16), bank 1 id 2 (17).
    qp_seq(
        &mut b,
        PLAIN,
        &[8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
        "8..=17",
    )?;
    expect(
        b.bank(0)
            == Some(Bank {
                inuse: 3,
                next: 3,
                ..fresh
            }),
        "bank 0 after 16",
    )?;
    expect(
        b.bank(2)
            == Some(Bank {
                inuse: 2,
                next: 2,
                ..fresh
            }),
        "bank 2 after 10",
    )?;
    // Send CQ 4 is in CQ bank 0: QP banks 0 and 1 (both 3 in use).
    qp_seq(&mut b, on_cq(4), &[24, 25], "CQ bank 0 -> QP banks 0, 1")?;
    // Freeing 8 lowers bank 0 to 3; banks 2..7 are at 2 -> bank 2 id 2.
    expect(b.free(8, false) == Ok(()), "free 8")?;
    expect(!b.is_allocated(8), "8 is free")?;
    qp_seq(&mut b, PLAIN, &[18], "least loaded is bank 2")?;
    // Banks 0 (3) and 1 (4): bank 0, whose cursor is at 4, so QPN 8 is not
    // reused: 4 << 3 = 32.
    qp_seq(&mut b, on_cq(0), &[32], "no reuse before wrap")?;
    expect(
        b.bank(0)
            == Some(Bank {
                inuse: 4,
                next: 5,
                ..fresh
            }),
        "bank 0 after 32",
    )?;
    // GSI: always QPN 1, no bank touched; freeing it does nothing.
    expect(
        b.alloc(QpnRequest {
            gsi: true,
            ..on_cq(4)
        }) == Ok(GSI_QPN),
        "GSI is QPN 1",
    )?;
    expect(b.free(GSI_QPN, true) == Ok(()), "free GSI")?;
    expect(b.free(3, false) == Ok(()), "reserved QPNs are not freed")?;
    expect(
        b.bank(0).map(|x| x.inuse) == Some(4) && b.bank(1).map(|x| x.inuse) == Some(4),
        "GSI and reserved frees left the counts",
    )?;
    expect(
        b.free(8, false) == Err(BitmapError::NotAllocated),
        "double free",
    )?;
    expect(
        b.bank(0).map(|x| x.inuse) == Some(4),
        "double free left count",
    )?;
    // CQ 7 -> CQ bank 3 -> QP banks 6, 7 (both 2): bank 6 id 2 = 22.
    // CQ 5 -> CQ bank 1 -> QP banks 2 (3), 3 (2): bank 3 id 2 = 19.
    qp_seq(&mut b, on_cq(7), &[22], "CQ bank 3 -> QP bank 6")?;
    qp_seq(&mut b, on_cq(5), &[19], "CQ bank 1 -> QP bank 3")?;
    expect(b.is_allocated(32) && b.is_allocated(19), "allocated QPNs")?;
    expect(!b.is_allocated(3) && !b.is_allocated(1), "reserved QPNs")?;
    expect(b.alloc_in_bank(8) == Err(BitmapError::Invalid), "bank 8")
}

/// A small table: the `next` cursor, the wrap to `min`, reuse after the
/// wrap, running out, and reserved QPNs spread unevenly.
pub fn check_qp_wrap_and_reserved() -> Check {
    // 32 QPs, 8 reserved: banks of ids [1, 3].
    let mut w = [0u64; 8];
    let mut b = QpBanks::new(&mut w[..], 32, 8, 0).map_err(|_| "QP banks")?;
    expect(b.alloc_in_bank(0) == Ok(8), "id 1")?;
    expect(b.alloc_in_bank(0) == Ok(16), "id 2")?;
    expect(b.alloc_in_bank(0) == Ok(24), "id 3")?;
    // id 3 + 1 > max: the cursor wraps to min.
    expect(
        b.bank(0)
            == Some(Bank {
                inuse: 4,
                min: 1,
                max: 3,
                next: 1,
            }),
        "cursor wrapped",
    )?;
    expect(b.alloc_in_bank(0) == Err(BitmapError::Full), "bank 0 full")?;
    expect(b.bank(0).map(|x| x.inuse) == Some(4), "full leaves inuse")?;
    expect(b.free(16, false) == Ok(()), "free 16")?;
    // [next = 1, 3] finds id 2.
    expect(b.alloc_in_bank(0) == Ok(16), "16 again")?;
    expect(b.bank(0).map(|x| x.next) == Some(3), "cursor 3")?;
    expect(b.free(8, false) == Ok(()), "free 8")?;
    // [3, 3] is taken, then [1, 3] finds id 1.
    expect(b.alloc_in_bank(0) == Ok(8), "second search from min")?;
    expect(b.bank(0).map(|x| x.next) == Some(2), "cursor 2")?;
    // select_qp_bankid now skips the full bank 0 only by load: bank 0 has
    // 4 in use, the others 1.
    qp_seq(&mut b, PLAIN, &[9, 10], "least loaded after bank 0")?;

    // 64 QPs, 13 reserved: QPNs 0-12 give banks 0-4 two reserved ids and
    // banks 5-7 one; ids [min, 7].
    expect(qp_bank_words(64, 13) == 8, "one word per bank")?;
    let mut w = [0u64; 8];
    let mut b = QpBanks::new(&mut w[..], 64, 13, 0).map_err(|_| "QP banks 13")?;
    expect(
        b.bank(4)
            == Some(Bank {
                inuse: 2,
                min: 2,
                max: 7,
                next: 2,
            }),
        "bank 4",
    )?;
    expect(
        b.bank(5)
            == Some(Bank {
                inuse: 1,
                min: 1,
                max: 7,
                next: 1,
            }),
        "bank 5",
    )?;
    // Banks 5, 6, 7 (1 in use) first, then all at 2 from bank 0.
    qp_seq(&mut b, PLAIN, &[13, 14, 15, 16, 17], "13..=17")?;
    expect(b.free(12, false) == Ok(()), "QPN 12 < 13 is reserved")?;

    // Too few QPs for 8 banks, too little storage.
    expect(qp_bank_words(4, 0) == 0, "4 QPs")?;
    expect(QpBanks::new(&mut w[..], 4, 0, 0).is_err(), "4 QPs rejected")?;
    let mut w = [0u64; 7];
    expect(
        QpBanks::new(&mut w[..], SIM_NUM_QPS, SIM_RESERVED_QPS, SIM_FLAGS).is_err(),
        "7 words for 8 banks",
    )
}

/// `HNS_ROCE_CAP_FLAG_LIMIT_BANK`: QPs with extended SGEs only in banks 1
/// and 6, and the empty mask falling back to bank 0.
pub fn check_qp_limit_bank() -> Check {
    expect(valid_qp_bank_mask(None, true, true) == 0x42, "limit + ext")?;
    expect(valid_qp_bank_mask(None, false, true) == 0xff, "no limit")?;
    expect(valid_qp_bank_mask(None, true, false) == 0xff, "no ext SGE")?;
    expect(valid_qp_bank_mask(Some(0), true, true) == 0x02, "CQ bank 0")?;
    expect(
        valid_qp_bank_mask(Some(1), true, true) == 0,
        "CQ bank 1: none",
    )?;
    expect(
        valid_qp_bank_mask(Some(2), true, true) == 0,
        "CQ bank 2: none",
    )?;
    expect(valid_qp_bank_mask(Some(7), true, true) == 0x40, "CQ bank 3")?;
    expect(
        valid_qp_bank_mask(Some(6), false, false) == 0x30,
        "CQ bank 2",
    )?;
    expect(
        !use_ext_sge(2, false) && use_ext_sge(3, false) && use_ext_sge(0, true),
        "use_ext_sge",
    )?;

    let mut w = [0u64; 8];
    let mut b = QpBanks::new(
        &mut w[..],
        SIM_NUM_QPS,
        SIM_RESERVED_QPS,
        SIM_FLAGS | cap_flag::LIMIT_BANK,
    )
    .map_err(|_| "QP banks")?;
    // Banks 1 and 6 alternate (ties go to bank 1).
    qp_seq(&mut b, ext(None), &[9, 14, 17, 22], "banks 1 and 6")?;
    // Without extended SGEs every bank: banks 0, 2-5, 7 are at 1.
    qp_seq(&mut b, PLAIN, &[8], "bank 0")?;
    // Send CQ in CQ bank 0 -> {0, 1} & {1, 6} = bank 1 (id 3).
    qp_seq(&mut b, ext(Some(0)), &[25], "CQ bank 0 -> bank 1")?;
    // CQ bank 3 -> {6, 7} & {1, 6} = bank 6 (id 3).
    qp_seq(&mut b, ext(Some(3)), &[30], "CQ bank 3 -> bank 6")?;
    // CQ bank 1 -> {2, 3} & {1, 6} = {}: bank 0 (id 2) regardless.
    qp_seq(&mut b, ext(Some(1)), &[16], "empty mask -> bank 0")
}

/// CQNs on HIP09 with hns-sim's caps: kernel CQs in bank 0, user CQs in
/// their context's bank, contexts spread over the valid banks.
pub fn check_cq_hip09() -> Check {
    expect(
        cq_bank_words(SIM_NUM_CQS, SIM_RESERVED_CQS) == 16,
        "4 banks of 256 ids",
    )?;
    let mut w = [0u64; 16];
    let mut b = CqBanks::new(
        &mut w[..],
        SIM_NUM_CQS,
        SIM_RESERVED_CQS,
        SIM_FLAGS,
        HwRev::HIP09,
    )
    .map_err(|_| "CQ banks")?;
    let fresh = Bank {
        inuse: 0,
        min: 0,
        max: 255,
        next: 0,
    };
    expect(b.bank(3) == Some(fresh), "bank 3")?;
    expect(b.valid_bank_mask() == 0xf, "all banks valid")?;
    // Kernel CQs: bank 0 whatever the load.
    cq_seq(&mut b, None, &[0, 4, 8, 12], "kernel CQs in bank 0")?;
    expect(b.free(4) == Ok(()), "free 4")?;
    cq_seq(&mut b, None, &[4, 16], "lowest id reused")?;
    expect(
        b.bank(0) == Some(Bank { inuse: 5, ..fresh }),
        "bank 0 count",
    )?;
    // Contexts: 0, 1, 2, 3, then 0 again.
    for want in [0u8, 1, 2, 3, 0] {
        expect(b.get_bank_for_uctx() == want, "uctx banks in turn")?;
    }
    expect(
        b.ctx_num(0) == Some(2) && b.ctx_num(1) == Some(1),
        "ctx_num",
    )?;
    expect(b.put_bank_for_uctx(1) == Ok(()), "put 1")?;
    expect(b.get_bank_for_uctx() == 1, "bank 1 is least used again")?;
    // User CQs of a bank-2 context.
    cq_seq(&mut b, Some(2), &[2, 6, 10], "bank 2")?;
    expect(b.free(6) == Ok(()), "free 6")?;
    cq_seq(&mut b, Some(2), &[6], "6 reused")?;
    expect(
        b.free(1) == Err(BitmapError::NotAllocated),
        "1 not allocated",
    )?;
    expect(b.alloc(Some(4)) == Err(BitmapError::Invalid), "bank 4")?;
    expect(b.put_bank_for_uctx(4) == Err(BitmapError::Invalid), "put 4")?;
    expect(b.is_allocated(16) && !b.is_allocated(20), "is_allocated")?;

    // LIMIT_BANK: contexts only get banks 0 and 3.
    let mut w = [0u64; 16];
    let mut b = CqBanks::new(
        &mut w[..],
        SIM_NUM_CQS,
        SIM_RESERVED_CQS,
        SIM_FLAGS | cap_flag::LIMIT_BANK,
        HwRev::HIP09,
    )
    .map_err(|_| "CQ banks, limit")?;
    expect(b.valid_bank_mask() == 0x9, "banks 0 and 3")?;
    for want in [0u8, 3, 0, 3] {
        expect(b.get_bank_for_uctx() == want, "limit uctx banks")?;
    }

    // 8 CQs: bank 0 holds ids 0, 1 only; kernel CQs do not spill over.
    let mut w = [0u64; 4];
    let mut b = CqBanks::new(&mut w[..], 8, 0, SIM_FLAGS, HwRev::HIP09).map_err(|_| "8 CQs")?;
    cq_seq(&mut b, None, &[0, 4], "8 CQs")?;
    expect(b.alloc(None) == Err(BitmapError::Full), "bank 0 full")?;
    expect(b.alloc(Some(1)) == Ok(1), "bank 1 still has room")
}

/// CQNs on HIP08: least-loaded bank (lowest on ties), reserved CQNs, no
/// user context banks.
pub fn check_cq_hip08() -> Check {
    // 6 reserved: banks 0, 1 hold two (0, 4; 1, 5), banks 2, 3 one.
    expect(cq_bank_words(1024, 6) == 16, "storage")?;
    let mut w = [0u64; 16];
    let mut b = CqBanks::new(&mut w[..], 1024, 6, 0, HwRev::HIP08).map_err(|_| "CQ banks")?;
    expect(
        b.bank(1)
            == Some(Bank {
                inuse: 2,
                min: 2,
                max: 255,
                next: 0,
            }),
        "bank 1",
    )?;
    expect(
        b.bank(2)
            == Some(Bank {
                inuse: 1,
                min: 1,
                max: 255,
                next: 0,
            }),
        "bank 2",
    )?;
    expect(b.least_load_bank() == 2, "bank 2 least loaded")?;
    cq_seq(&mut b, None, &[6, 7, 8, 9, 10], "6..=10")?;
    // The context's bank is ignored before HIP09: bank 3 (2 in use).
    cq_seq(&mut b, Some(1), &[11], "user bank ignored")?;
    expect(b.get_bank_for_uctx() == 0, "no uctx bank")?;
    expect(b.ctx_num(0) == Some(0), "no ctx count")?;
    expect(b.put_bank_for_uctx(0) == Ok(()), "put is a no-op")?;
    // free_cqn does not filter reserved CQNs: ida_free WARNs.
    expect(b.free(0) == Err(BitmapError::NotAllocated), "reserved CQN")?;
    expect(b.free(8) == Ok(()), "free 8")?;
    // Bank 0 is back at 2, the others at 3: id 2 of bank 0 again.
    cq_seq(&mut b, None, &[8, 12], "8 reused, then bank 0 id 3")?;
    expect(
        CqBanks::new(&mut w[..], 2, 0, 0, HwRev::HIP08).is_err(),
        "2 CQs",
    )?;
    expect(cq_bank_words(2, 0) == 0, "2 CQs need nothing")
}
