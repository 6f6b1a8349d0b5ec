// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `hem.rs`: page sizes worked out by hand from the C
//! formula `ilog2(DIV_ROUND_UP(obj_num, bt_num * (page/8)^hop * page/obj))`.

use super::{expect, Check};
use crate::hem::{calc_pg_sz, hw_hopnum, HemType, PgSz, HOP_NUM_0};

/// Tables that fit in single pages get exponent 0.
pub fn check_small_tables() -> Check {
    // 256 QPCs of 512 B, hop 1, 8 BTs: 8 * 512 * 8 = 32768 per chunk.
    expect(
        calc_pg_sz(256, 512, 1, 8, 4096, HemType::Qpc) == Some(PgSz { buf: 0, ba: 0 }),
        "256 QPCs",
    )?;
    // 4096 MPTs of 64 B: 8 * 512 * 64 per chunk.
    expect(
        calc_pg_sz(4096, 64, 1, 8, 4096, HemType::Mtpt) == Some(PgSz::default()),
        "4096 MPTs",
    )
}

/// Big tables grow the buffer pages (contexts) or the BT pages (buffers).
pub fn check_growth() -> Check {
    // 2^19 QPCs of 512 B, hop 1, one BT: 4096 per chunk, 128 chunks -> 7.
    expect(
        calc_pg_sz(1 << 19, 512, 1, 1, 4096, HemType::Qpc) == Some(PgSz { buf: 7, ba: 0 }),
        "2^19 QPCs",
    )?;
    // 2^20 CQCs of 64 B, hop 0xff, 2 BTs: 128 per chunk, 8192 chunks -> 13.
    expect(
        calc_pg_sz(1 << 20, 64, HOP_NUM_0, 2, 4096, HemType::Cqc) == Some(PgSz { buf: 13, ba: 0 }),
        "2^20 CQCs, zero hop",
    )?;
    // 2^24 SRQ WQE segments of 64 B, hop 1, one BT: 32768 per chunk, 512
    // chunks -> the BT page grows by 9.
    expect(
        calc_pg_sz(1 << 24, 64, 1, 1, 4096, HemType::SrqWqe) == Some(PgSz { buf: 0, ba: 9 }),
        "2^24 SRQ WQE segments",
    )?;
    // A count that is not a power of two rounds the chunk count up first:
    // 4097 QPCs of 512 B, hop 0xff, one BT: 8 per chunk, 513 chunks -> 9.
    expect(
        calc_pg_sz(4097, 512, HOP_NUM_0, 1, 4096, HemType::Qpc) == Some(PgSz { buf: 9, ba: 0 }),
        "4097 QPCs",
    )?;
    // 64 KiB pages: 2^19 QPCs, hop 1, one BT: 8192 * 128 per chunk -> 0.
    expect(
        calc_pg_sz(1 << 19, 512, 1, 1, 65536, HemType::Qpc) == Some(PgSz::default()),
        "64K pages",
    )
}

/// Unsupported hop numbers and the hardware hop field.
pub fn check_hops() -> Check {
    expect(
        calc_pg_sz(256, 512, 4, 8, 4096, HemType::Qpc).is_none(),
        "hop 4 is rejected",
    )?;
    expect(
        calc_pg_sz(256, 512, 0, 8, 4096, HemType::Qpc).is_none(),
        "hop 0 is rejected",
    )?;
    expect(hw_hopnum(HOP_NUM_0, 10) == 0, "0xff is written as 0")?;
    expect(hw_hopnum(2, 10) == 2, "2 stays 2")?;
    expect(hw_hopnum(2, 0) == 0, "an empty table gets 0")
}
