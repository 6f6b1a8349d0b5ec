// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `field.rs` and `hw_v2_fields.rs`, shared by the host
//! tests (`tests/host`) and the KUnit suites (`tests/kunit`).
//!
//! Each check returns `Err` with a description of the first mismatch. The
//! expected values are written out by hand (word images computed from the bit
//! positions, positions copied from the C header), never produced by the code
//! under test.

use super::{expect, Check};
use crate::field::{Ctx, Field, Head, Layout};
use crate::hns_roce_hw_v2::fields::{cqc, mpt, qpc, Cqc, Mpt, Qpc};

/// A small two-word layout for the generic cases.
pub struct Two;

impl Layout for Two {
    const DWORDS: usize = 2;
}

/// Writes and reads fields of a zeroed context and compares the word images.
pub fn check_write_read() -> Check {
    let lo: Field<Two> = Field::new(12, 8);
    let hi: Field<Two> = Field::new(55, 32);
    let bit: Field<Two> = Field::new(63, 63);
    let mut c: Ctx<Two, 2> = Ctx::zeroed();
    c.write(lo, 5);
    c.write(hi, 0x12_3456);
    c.write_bool(bit, true);
    expect(
        c.word(0) == 0x0000_0500,
        "write(12..8, 5) gives word0 0x500",
    )?;
    expect(
        c.word(1) == 0x8012_3456,
        "write(55..32) and bit 63 give word1 0x80123456",
    )?;
    expect(c.read(lo) == 5, "read(12..8) returns 5")?;
    expect(c.read(hi) == 0x12_3456, "read(55..32) returns 0x123456")?;
    expect(c.read_bool(bit), "read_bool(63) is true")?;
    c.write_bool(bit, false);
    expect(
        c.word(1) == 0x0012_3456,
        "write_bool(63, false) clears only bit 63",
    )
}

/// A value wider than its field is truncated, neighbours are untouched.
pub fn check_truncation_and_neighbours() -> Check {
    let f: Field<Two> = Field::new(7, 6);
    let mut c: Ctx<Two, 2> = Ctx::zeroed();
    c.write(f, 0x1ff);
    expect(
        c.word(0) == 0x0000_00c0,
        "0x1ff into 7..6 sets only bits 7 and 6",
    )?;
    let mut m: Ctx<Two, 2> = Ctx::ones();
    m.clear(f);
    expect(
        m.word(0) == 0xffff_ff3f,
        "clear(7..6) on ones leaves 0xffffff3f",
    )?;
    expect(m.word(1) == 0xffff_ffff, "clear(7..6) leaves word1 alone")?;
    m.enable(f);
    expect(m.word(0) == 0xffff_ffff, "enable(7..6) restores all ones")
}

/// Full-word fields and the mask arithmetic at the edges.
pub fn check_full_word_and_masks() -> Check {
    let w: Field<Two> = Field::new(63, 32);
    let mut c: Ctx<Two, 2> = Ctx::zeroed();
    c.write(w, 0xdead_beef);
    expect(c.read(w) == 0xdead_beef, "a 32-bit field round-trips")?;
    expect(c.word(0) == 0, "a 32-bit field in word1 leaves word0 alone")?;
    expect(w.mask() == 0xffff_ffff && w.width() == 32, "full-word mask")?;
    let b: Field<Two> = Field::new(31, 31);
    expect(b.mask() == 0x8000_0000 && b.shift() == 31, "bit 31 mask")?;
    let z: Field<Two> = Field::new(0, 0);
    expect(z.mask() == 1 && z.word() == 0, "bit 0 mask")?;
    expect(
        Field::<Two>::new(44, 40).mask() == 0x1f00,
        "44..40 mask is 0x1f00",
    )
}

/// Contexts are stored little-endian whatever the CPU byte order.
pub fn check_little_endian_storage() -> Check {
    let mut c: Ctx<Two, 2> = Ctx::zeroed();
    c.write(Field::new(31, 0), 0x0102_0304);
    let raw = c.as_le_words()[0];
    expect(
        raw.to_le_bytes() == [0x04, 0x03, 0x02, 0x01],
        "word stored as LE bytes 04 03 02 01",
    )?;
    let d: Ctx<Two, 2> = Ctx::from_le_words([0x0000_0000, u32::to_le(0xa000_0000)]);
    expect(d.read(Field::new(63, 61)) == 0b101, "read from an LE image")?;
    // Bytes as in memory; a short image reads as zeros past its end.
    let e: Ctx<Two, 2> = Ctx::from_bytes(&[0x04, 0x03, 0x02, 0x01, 0xff]);
    expect(
        e.read(Field::new(31, 0)) == 0x0102_0304 && e.word(1) == 0,
        "from_bytes",
    )
}

/// Positions of real fields, copied by hand from `hns_roce_hw_v2.h`.
const QPC_POS: &[(Field<Qpc>, u32, u32)] = &[
    (qpc::TST, 2, 0),
    (qpc::SGE_SHIFT, 7, 3),
    (qpc::SQ_HOP_NUM, 94, 93),
    (qpc::PD, 127, 104),
    (qpc::MTU, 191, 188),
    (qpc::DQPN, 439, 416),
    (qpc::QKEY_XRCD, 511, 480),
    (qpc::RQ_DB_RECORD_ADDR_L, 543, 513),
    (qpc::SRQN, 599, 576),
    (qpc::SQ_CUR_PSN, 1375, 1352),
    (qpc::RETRY_CNT, 1695, 1693),
    (qpc::TX_CQN, 2007, 1984),
];

/// CQC positions from the C header.
const CQC_POS: &[(Field<Cqc>, u32, u32)] = &[
    (cqc::CQ_ST, 1, 0),
    (cqc::SHIFT, 12, 8),
    (cqc::CEQN, 23, 15),
    (cqc::CQN, 55, 32),
    (cqc::CQE_SIZE, 60, 59),
    (cqc::CQE_BA_H, 316, 288),
    (cqc::CQE_DB_RECORD_ADDR_H, 383, 352),
];

/// MPT positions from the C header.
const MPT_POS: &[(Field<Mpt>, u32, u32)] = &[
    (mpt::ST, 1, 0),
    (mpt::PBL_HOP_NUM, 3, 2),
    (mpt::PD, 31, 8),
    (mpt::RW_EN, 38, 38),
    (mpt::PA, 65, 65),
    (mpt::LEN_L, 159, 128),
    (mpt::LKEY, 223, 192),
    (mpt::PBL_BA_L, 351, 320),
];

fn positions<L: Layout>(t: &[(Field<L>, u32, u32)]) -> Check {
    for (f, h, l) in t {
        expect(
            f.high() == *h && f.low() == *l,
            "a field position differs from the C header",
        )?;
    }
    Ok(())
}

/// The generated QPC/CQC/MPT constants sit where the C header puts them.
pub fn check_real_positions() -> Check {
    positions(QPC_POS)?;
    positions(CQC_POS)?;
    positions(MPT_POS)
}

/// A CQC image built through the generated constants matches the words the
/// C driver's `hr_reg_write` would produce.
pub fn check_cqc_image() -> Check {
    let mut c: Ctx<Cqc, 16> = Ctx::zeroed();
    c.write(cqc::CQ_ST, 1);
    c.write(cqc::SHIFT, 10);
    c.write(cqc::CEQN, 3);
    c.write(cqc::CQN, 0x42);
    c.write(cqc::CQE_SIZE, 1);
    // Word 0: ST=1 (bits 1..0), SHIFT=10 (12..8), CEQN=3 (23..15).
    expect(c.word(0) == 0x0001_8a01, "CQC word0 is 0x00018a01")?;
    // Word 1: CQN=0x42 (55..32 -> 23..0), CQE_SIZE=1 (60..59 -> 28..27).
    expect(c.word(1) == 0x0800_0042, "CQC word1 is 0x08000042")
}

/// `Head` reads fields from the words it is given, in CPU order, and 0
/// for a field past them.
pub fn check_head() -> Check {
    let words = [0x1234_5678u32, 0xdead_beef];
    let byte1 = Field::<Two>::new(15, 8);
    let high = Field::<Two>::new(63, 48);
    let bit0 = Field::<Two>::new(32, 32);
    let full = Head::<Two>::new(&words);
    expect(
        full.read(byte1) == 0x56,
        "bits 15..8 of 0x12345678 are 0x56",
    )?;
    expect(full.read(high) == 0xdead, "bits 63..48 are 0xdead")?;
    expect(full.read_bool(bit0), "bit 32 of 0xdeadbeef is set")?;
    let first = Head::<Two>::new(&words[..1]);
    expect(first.read(byte1) == 0x56, "a field of word 0 from one word")?;
    expect(first.read(high) == 0, "a field past the words reads 0")?;
    expect(!first.read_bool(bit0), "a bit past the words reads false")
}

/// A check function.
pub type CheckFn = fn() -> Check;

/// Every check, by name, for runners that iterate.
pub const ALL: &[(&str, CheckFn)] = &[
    ("write_read", check_write_read),
    ("truncation_and_neighbours", check_truncation_and_neighbours),
    ("full_word_and_masks", check_full_word_and_masks),
    ("little_endian_storage", check_little_endian_storage),
    ("real_positions", check_real_positions),
    ("cqc_image", check_cqc_image),
    ("head", check_head),
];
