// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Vectors of the SRQ encoders (`hns_roce_hw_v2::srqwqe`): the C driver's
//! SRQ WQEs and index queue entries as hns-sim took them (`--dump-data`,
//! lines `srqwqe`/`srqidx`) in `ULP_SRQ=1 tests/guest/ulp-plan.sh` on
//! hns_1 (nvmet-rdma with `use_srq=1`: SRQ 0, 1024 WQEs of two segments,
//! each receive a 64-byte command capsule and a 4 KiB inline data page,
//! lkey 0x200), and its SRQ doorbell words in a boot
//! without SRQ record doorbells.

use super::{expect, Check};
use crate::hns_roce_hw_v2::qpc::DataSeg;
use crate::hns_roce_hw_v2::srqwqe::{idx_entry, idx_slot, record, srq_doorbell, srq_wqe_segs};

/// `(slot, words)` of three SRQ WQEs of the C run: the first, one from the
/// middle, the last one the engine took.
const C_SRQ_WQES: [(u32, [u32; 8]); 3] = [
    (
        0x0000,
        [
            0x0000_0040,
            0x0000_0200,
            0x0453_1900,
            0x0000_0000,
            0x0000_1000,
            0x0000_0200,
            0x090a_b000,
            0x0000_0000,
        ],
    ),
    (
        0x00c7,
        [
            0x0000_0040,
            0x0000_0200,
            0x0917_0f40,
            0x0000_0000,
            0x0000_1000,
            0x0000_0200,
            0x0923_f000,
            0x0000_0000,
        ],
    ),
    (
        0x019f,
        [
            0x0000_0040,
            0x0000_0200,
            0x092b_3380,
            0x0000_0000,
            0x0000_1000,
            0x0000_0200,
            0x0932_5000,
            0x0000_0000,
        ],
    ),
];

/// `(producer index, entry word)` of the C run's index queue: nvmet-rdma
/// posts all 1024 WQEs first, so slot `n` is named by entry `n`.
const C_SRQ_IDX: [(u32, u32); 3] = [(0x0000, 0), (0x00c7, 0xc7), (0x019f, 0x19f)];

/// The receive WR's segments behind a C WQE (what nvmet-rdma posted).
fn sges_of(w: &[u32; 8]) -> [DataSeg; 2] {
    let seg = |i: usize| DataSeg {
        len: w[4 * i],
        lkey: w[4 * i + 1],
        addr: u64::from(w[4 * i + 2]) | (u64::from(w[4 * i + 3]) << 32),
    };
    [seg(0), seg(1)]
}

/// The words of an SRQ WQE of `max_gs` segments built from `sges`.
fn wqe_words<const N: usize>(sges: &[DataSeg], max_gs: u32, rsv: u32) -> [u32; N] {
    let mut out = [0xdead_beefu32; N];
    for (i, s) in srq_wqe_segs(sges.iter().copied(), max_gs, rsv).enumerate() {
        let b = s.to_bytes();
        for k in 0..4 {
            if let Some(o) = out.get_mut(4 * i + k) {
                let mut x = [0u8; 4];
                x.copy_from_slice(&b[4 * k..4 * k + 4]);
                *o = u32::from_le_bytes(x);
            }
        }
    }
    out
}

/// The C driver's SRQ WQEs, word for word (HIP09: no reserved segment).
pub fn check_c_srq_wqes() -> Check {
    for (_, w) in C_SRQ_WQES.iter() {
        expect(
            wqe_words::<8>(&sges_of(w), 2, 0) == *w,
            "SRQ WQE of two segments",
        )?;
    }
    Ok(())
}

/// A zero-length segment is left out and the slot's rest zeroed; on HIP08
/// the reserved terminator follows the last segment and nothing after it
/// is written.
pub fn check_srq_wqe_fill() -> Check {
    let s = sges_of(&C_SRQ_WQES[0].1);
    let zero = DataSeg {
        len: 0,
        lkey: 0x200,
        addr: 0x1000,
    };
    let w = wqe_words::<16>(&[zero, s[1]], 4, 0);
    expect(
        w[..4] == C_SRQ_WQES[0].1[4..] && w[4..].iter().all(|&x| x == 0),
        "zero-length segment skipped, rest zeroed",
    )?;
    let w = wqe_words::<16>(&[s[0]], 4, 1);
    expect(
        w[..4] == C_SRQ_WQES[0].1[..4]
            && w[4..8] == [0x8000_0000, 0, 0, 0]
            && w[8..].iter().all(|&x| x == 0xdead_beef),
        "HIP08 terminator, rest untouched",
    )
}

/// `(producer index, low word, high word)` of SRQ doorbells the C driver
/// wrote for SRQ 0 when the caps had no `SRQ_RECORD_DB` (hns-sim `--set
/// cap_flags=0x08077f`, `srqdb` lines of the same plan): the first, the
/// last, and one past the 1024 WQEs (the index is not masked by the depth).
const C_SRQ_DBS: [(u32, u32, u32); 3] = [
    (0x000f, 0x0200_0000, 0x0000_000f),
    (0x005a, 0x0200_0000, 0x0000_005a),
    (0x05a3, 0x0200_0000, 0x0000_05a3),
];

/// The C driver's SRQ doorbell words.
pub fn check_c_srq_doorbells() -> Check {
    for (head, lo, hi) in C_SRQ_DBS {
        expect(
            srq_doorbell(0, head) == u64::from(lo) | (u64::from(hi) << 32),
            "C's SRQ doorbell",
        )?;
    }
    Ok(())
}

/// Index queue entries and the producer index of the doorbells.
pub fn check_idx_and_doorbell() -> Check {
    for (head, word) in C_SRQ_IDX {
        expect(
            u32::from_le_bytes(idx_entry(word)) == word && idx_slot(head, 1024) == head,
            "index queue entry",
        )?;
    }
    expect(idx_slot(1024 + 5, 1024) == 5, "index queue wraps")?;
    expect(record(0x1_0003) == 3, "record doorbell: 16 bits")?;
    // SRQN 0x12 in bits 23:0, HNS_ROCE_V2_SRQ_DB (2) in 27:24, the
    // producer index in 47:32.
    expect(
        srq_doorbell(0x12, 0x1_0203) == 0x0000_0203_0200_0012,
        "SRQ doorbell",
    )
}
