// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `hem.rs`: page sizes worked out by hand from the C
//! formula `ilog2(DIV_ROUND_UP(obj_num, bt_num * (page/8)^hop * page/obj))`,
//! and the context-table manager's geometry, indexes and get/put plans
//! worked out by hand from `hns_roce_hem.c` and `hns_roce_v2_set_hem` /
//! `hns_roce_v2_clear_hem` (the examples of hns-verbs-layer.md §5.8, the
//! hns-sim default caps, and the C driver's HEM writes on hns-sim), and
//! the BT layout of multi-region kernel MTRs worked out by hand from
//! `mtr_init_buf_cfg`, `cal_best_bt_pg_sz` and `hns_roce_hem_list_request`
//! (among them the MAD agent's GSI QP buffer on hns-sim's caps).

use super::{expect, Check};
use crate::hem::{
    best_bt_pg_sz, bt_num, calc_ba_range, calc_pg_sz, calc_root_ba, hw_hopnum, init_buf_cfg,
    is_last_step, is_mhop, last_step, BtSlot, BufRegion, HemAddr, HemIndex, HemList, HemType,
    HwWrite, Link, Mhop, MtrError, MtrLayout, PgSz, RegionAttr, RegionBt, TableCfg, TableGeom,
    HOP_NUM_0, MAX_BT_REGION,
};
use crate::hem::{best_hop_num, init_user_buf_cfg, num_dma_blocks, UmemShape, UserMtrLayout};
use crate::hns_roce_hw_v2::caps::Caps;

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

// ---------------------------------------------------------------------------
// The context-table manager. Every expected number below is worked out by
// hand from the C formulas of hns_roce_hem.c / hns_roce_hw_v2.c (written
// next to each value), never produced by the code under test.
// ---------------------------------------------------------------------------

/// A mailbox write with `in_param` pointing at `base`.
fn mb(cmd: u8, tag: u32, step: u32, base: HemAddr) -> HwWrite {
    HwWrite::Mailbox {
        cmd,
        tag,
        step,
        base: Some(base),
    }
}

/// A `DESTROY_*_BT*` mailbox (`in_param` 0).
fn destroy(cmd: u8, tag: u32, step: u32) -> HwWrite {
    HwWrite::Mailbox {
        cmd,
        tag,
        step,
        base: None,
    }
}

/// A CFG_GMV_BT command for a hop-0xff GMV chunk.
fn gmv(idx: u32, chunk: u32) -> HwWrite {
    HwWrite::GmvBt {
        idx,
        step: 0,
        base: Some(HemAddr::Chunk(chunk)),
    }
}

/// A context table with 4 KiB pages, 256 KiB flat chunks and `buf` as the
/// buffer page-size exponent.
fn cfg(ty: HemType, obj_size: u32, num_obj: u32, hop_num: u32, buf: u32, l0: u32) -> TableCfg {
    TableCfg {
        ty,
        obj_size,
        num_obj,
        hop_num,
        pg: PgSz { buf, ba: 0 },
        ba_l0_num: l0,
        chunk_sz: 1 << 18,
        page_shift: 12,
    }
}

/// The geometry of `c`, or an error naming the table.
fn geom(c: &TableCfg, what: &'static str) -> Result<TableGeom, &'static str> {
    TableGeom::new(c).ok_or(what)
}

/// Multi-hop geometry fields shared by the 4 KiB tables (4 KiB chunks and
/// BT pages of 512 BAs, hop 1 with two levels); tables override the rest.
fn g4k(ty: HemType) -> TableGeom {
    TableGeom {
        ty,
        obj_size: 0,
        hop_num: 1,
        mhop: true,
        bt_num: 2,
        chunk_size: 4096,
        obj_per_chunk: 0,
        num_hem: 0,
        bt_chunk_size: 4096,
        bt_chunk_num: 512,
        ba_l0_num: 0,
        num_bt_l0: 0,
        num_bt_l1: 0,
    }
}

/// A multi-hop index (`bt_num` 2 unless `l1` is given).
fn ix(obj: u32, buf: u32, l0: Option<u32>, l1: Option<u32>, m: [u32; 4]) -> HemIndex {
    HemIndex {
        obj,
        buf,
        l0,
        l1,
        mhop: Some(Mhop {
            table_idx: m[0],
            l0: m[1],
            l1: m[2],
            l2: m[3],
        }),
    }
}

/// Nothing exists yet.
fn none(_: HemAddr) -> bool {
    false
}

/// The §5.8 caps (HIP09-like, 4 KiB pages) of hns-verbs-layer.md.
fn worked_qpc_hop1() -> TableCfg {
    // num_qps 0x80000, qpc_sz 512, qpc_bt_num 128, ctx hop 1.
    cfg(HemType::Qpc, 512, 0x80000, 1, 0, 128)
}

/// §5.8 calc_pg_sz: capacity = bt_num * 512^hop * (4096 / obj_size).
pub fn check_worked_pg_sz() -> Check {
    // QPC: 128 * 512 * 8 = 524288 = 0x80000 -> one chunk -> 0.
    expect(
        calc_pg_sz(0x80000, 512, 1, 128, 4096, HemType::Qpc) == Some(PgSz { buf: 0, ba: 0 }),
        "5.8 QPC buf_pg_sz 0",
    )?;
    // qpc_bt_num 64: 262144 -> 2 chunks -> 1.
    expect(
        calc_pg_sz(0x80000, 512, 1, 64, 4096, HemType::Qpc) == Some(PgSz { buf: 1, ba: 0 }),
        "5.8 QPC with 64 BTs: buf_pg_sz 1",
    )?;
    // MTPT: 64 * 512 * 64 = 2097152 >= 0x100000 -> 0.
    expect(
        calc_pg_sz(0x100000, 64, 1, 64, 4096, HemType::Mtpt) == Some(PgSz::default()),
        "5.8 MTPT 0",
    )?;
    // CQE hop 2: 512 * 512 * 64 = 16777216 >= 0x400000 -> ba 0; hop 1:
    // 32768 -> 128 chunks -> ba 7.
    expect(
        calc_pg_sz(0x400000, 64, 2, 1, 4096, HemType::Cqe) == Some(PgSz::default()),
        "5.8 CQE hop 2: ba 0",
    )?;
    expect(
        calc_pg_sz(0x400000, 64, 1, 1, 4096, HemType::Cqe) == Some(PgSz { buf: 0, ba: 7 }),
        "5.8 CQE hop 1: ba 7",
    )
}

/// §5.8 init_hem_table.
pub fn check_worked_geometry() -> Check {
    // QPC hop 1: 4096/512 = 8 per chunk, 0x80000/8 = 65536 chunks,
    // bt_l0[128], no L1.
    let want = TableGeom {
        obj_size: 512,
        obj_per_chunk: 8,
        num_hem: 65536,
        ba_l0_num: 128,
        num_bt_l0: 128,
        ..g4k(HemType::Qpc)
    };
    expect(
        geom(&worked_qpc_hop1(), "5.8 QPC hop 1")? == want,
        "5.8 QPC hop 1 geometry",
    )?;
    // 8 KiB chunks, 64 BTs: 16 per chunk, 32768 chunks, bt_l0[64].
    let want = TableGeom {
        obj_size: 512,
        chunk_size: 8192,
        obj_per_chunk: 16,
        num_hem: 32768,
        ba_l0_num: 64,
        num_bt_l0: 64,
        ..g4k(HemType::Qpc)
    };
    let c = cfg(HemType::Qpc, 512, 0x80000, 1, 1, 64);
    expect(
        geom(&c, "5.8 QPC 8K")? == want,
        "5.8 QPC 8 KiB chunks geometry",
    )?;
    // Hop 2, 4 L0 BTs: bt_num 3, 65536 chunks, bt_l0[4],
    // bt_l1[65536/512 = 128].
    let want = TableGeom {
        obj_size: 512,
        hop_num: 2,
        bt_num: 3,
        obj_per_chunk: 8,
        num_hem: 65536,
        ba_l0_num: 4,
        num_bt_l0: 4,
        num_bt_l1: 128,
        ..g4k(HemType::Qpc)
    };
    let c = cfg(HemType::Qpc, 512, 0x80000, 2, 0, 4);
    expect(geom(&c, "5.8 QPC hop 2")? == want, "5.8 QPC hop 2 geometry")?;
    // CQC: 0x10000 CQCs of 64 B, 64 per chunk -> 1024 chunks, bt_l0[32].
    let c = cfg(HemType::Cqc, 64, 0x10000, 1, 0, 32);
    let g = geom(&c, "5.8 CQC")?;
    expect(
        g.num_hem == 1024 && g.num_bt_l0 == 32 && g.obj_per_chunk == 64,
        "5.8 CQC 1024 chunks",
    )?;
    // MTPT: 0x100000 / 64 = 16384 chunks, bt_l0[64].
    let c = cfg(HemType::Mtpt, 64, 0x100000, 1, 0, 64);
    let g = geom(&c, "5.8 MTPT")?;
    expect(
        g.num_hem == 16384 && g.num_bt_l0 == 64,
        "5.8 MTPT 16384 chunks",
    )?;
    // SCCC: 0x80000 / 64 = 8192 chunks, bt_l0[64].
    let c = cfg(HemType::Sccc, 64, 0x80000, 1, 0, 64);
    let g = geom(&c, "5.8 SCCC")?;
    expect(
        g.num_hem == 8192 && g.num_bt_l0 == 64,
        "5.8 SCCC 8192 chunks",
    )?;
    // QPC timer: 256 pages of 4 KiB, hop 0xff: one chunk per page, no BTs.
    let c = cfg(HemType::QpcTimer, 4096, 256, HOP_NUM_0, 0, 256);
    let g = geom(&c, "5.8 QPC timer")?;
    expect(
        g.num_hem == 256 && g.bt_num == 1 && g.num_bt_l0 == 0 && g.num_bt_l1 == 0,
        "5.8 QPC timer 256 chunks, no BT arrays",
    )?;
    // GMV: 2 BTs * 4096/32 = 256 entries, 128 per chunk -> 2 chunks.
    let c = cfg(HemType::Gmv, 32, 256, HOP_NUM_0, 0, 2);
    let g = geom(&c, "5.8 GMV")?;
    expect(
        g.num_hem == 2 && g.obj_per_chunk == 128 && g.num_bt_l0 == 0,
        "5.8 GMV 2 chunks",
    )
}

/// §5.8 calc_hem_mhop / calc_hem_config table.
pub fn check_worked_indexes() -> Check {
    let g = geom(&worked_qpc_hop1(), "5.8 QPC hop 1")?;
    // qpn 1: 1/8 = 0 -> l0 0, l1 0, buf 0.
    expect(
        g.index(1) == Some(ix(1, 0, Some(0), None, [0, 0, 0, 0])),
        "5.8 QPC qpn 1",
    )?;
    // qpn 8: table_idx 1 -> l1 1, buf 1.
    expect(
        g.index(8) == Some(ix(8, 1, Some(0), None, [1, 0, 1, 0])),
        "5.8 QPC qpn 8",
    )?;
    // qpn 0x12345 = 74565: /8 = 9320 = 18 * 512 + 104.
    expect(
        g.index(0x12345) == Some(ix(0x12345, 9320, Some(18), None, [9320, 18, 104, 0])),
        "5.8 QPC qpn 0x12345",
    )?;
    // Chunk boundary: 0x12340 = 74560 and 0x12347 = 74567 share 9320;
    // 0x12348 = 74568 -> 9321 (l1 105).
    expect(
        g.index(0x12340).map(|i| i.buf) == Some(9320)
            && g.index(0x12347).map(|i| i.buf) == Some(9320),
        "5.8 qpn 0x12340..0x12347 share chunk 9320",
    )?;
    expect(
        g.index(0x12348) == Some(ix(0x12348, 9321, Some(18), None, [9321, 18, 105, 0])),
        "5.8 qpn 0x12348 is the next chunk",
    )?;
    // qpn 0x7ffff = 524287: /8 = 65535 = 127 * 512 + 511.
    expect(
        g.index(0x7ffff) == Some(ix(0x7ffff, 65535, Some(127), None, [65535, 127, 511, 0])),
        "5.8 QPC last qpn",
    )?;
    // 8 KiB chunks: 74565 / 16 = 4660 = 9 * 512 + 52.
    let g8 = geom(&cfg(HemType::Qpc, 512, 0x80000, 1, 1, 64), "8K")?;
    expect(
        g8.index(0x12345) == Some(ix(0x12345, 4660, Some(9), None, [4660, 9, 52, 0])),
        "5.8 QPC 8K qpn 0x12345",
    )?;
    // Hop 2, 4 L0: 9320 -> l2 = 9320 & 511 = 104, l1 = 18, l0 = 0;
    // l1 index 0 * 512 + 18 = 18, buf 18 * 512 + 104 = 9320.
    let g2 = geom(&cfg(HemType::Qpc, 512, 0x80000, 2, 0, 4), "hop 2")?;
    expect(
        g2.index(0x12345) == Some(ix(0x12345, 9320, Some(0), Some(18), [9320, 0, 18, 104])),
        "5.8 QPC hop 2 qpn 0x12345",
    )?;
    // CQC cqn 0x1234 = 4660: /64 = 72 -> l0 0, l1 72.
    let gc = geom(&cfg(HemType::Cqc, 64, 0x10000, 1, 0, 32), "CQC")?;
    expect(
        gc.index(0x1234) == Some(ix(0x1234, 72, Some(0), None, [72, 0, 72, 0])),
        "5.8 CQC cqn 0x1234",
    )?;
    // MTPT 0xABCDE = 703710: /64 = 10995 = 21 * 512 + 243.
    let gm = geom(&cfg(HemType::Mtpt, 64, 0x100000, 1, 0, 64), "MTPT")?;
    expect(
        gm.index(0xABCDE) == Some(ix(0xABCDE, 10995, Some(21), None, [10995, 21, 243, 0])),
        "5.8 MTPT 0xABCDE",
    )?;
    // SCCC qpn 0x12345: 74565 / 64 = 1165 = 2 * 512 + 141.
    let gs = geom(&cfg(HemType::Sccc, 64, 0x80000, 1, 0, 64), "SCCC")?;
    expect(
        gs.index(0x12345) == Some(ix(0x12345, 1165, Some(2), None, [1165, 2, 141, 0])),
        "5.8 SCCC qpn 0x12345",
    )?;
    // QPC timer obj 5: table_idx 5 = l0 = buf, no BT arrays.
    let gt = geom(
        &cfg(HemType::QpcTimer, 4096, 256, HOP_NUM_0, 0, 256),
        "timer",
    )?;
    expect(
        gt.index(5) == Some(ix(5, 5, None, None, [5, 5, 0, 0])),
        "5.8 QPC timer obj 5",
    )?;
    // GMV: obj 0 and 127 in chunk 0, 128 in chunk 1.
    let gg = geom(&cfg(HemType::Gmv, 32, 256, HOP_NUM_0, 0, 2), "GMV")?;
    expect(
        gg.index(0).map(|i| i.buf) == Some(0)
            && gg.index(127).map(|i| i.buf) == Some(0)
            && gg.index(128).map(|i| i.buf) == Some(1),
        "5.8 GMV 0/127/128",
    )?;
    // Cleanup objects: chunk 9320 * 4096 / 512 = 74560 = 0x12340.
    expect(
        g.chunk_first_obj(9320) == Some(0x12340),
        "first object of chunk 9320",
    )
}

/// §5.8 first-use mailboxes and the put of the last QPC of a chunk.
pub fn check_worked_plans() -> Check {
    let g = geom(&worked_qpc_hop1(), "5.8 QPC hop 1")?;
    // qpn 1 on an empty table: L0[0] and chunk 0, WRITE_QPC_BT0 (L0) and
    // WRITE_QPC_BT1 (chunk), tag 1; L0[0] slot 0 = chunk 0.
    let p = g.get_plan(1, none).ok_or("5.8 get qpn 1")?;
    expect(
        p.alloc_l0 == Some(0) && p.alloc_l1.is_none() && p.alloc_chunk == Some(0),
        "5.8 qpn 1 allocates L0[0] and chunk 0",
    )?;
    expect(
        p.links.eq_slice(&[Link {
            page: HemAddr::L0(0),
            slot: 0,
            target: HemAddr::Chunk(0),
        }]),
        "5.8 qpn 1 links chunk 0 into L0[0]",
    )?;
    expect(
        p.writes.eq_slice(&[
            mb(0x00, 1, 0, HemAddr::L0(0)),
            mb(0x01, 1, 1, HemAddr::Chunk(0)),
        ]),
        "5.8 qpn 1: WRITE_QPC_BT0 + BT1, tag 1",
    )?;
    // qpn 8 with L0[0] present: chunk 1 only, WRITE_QPC_BT1 tag 8.
    let p = g
        .get_plan(8, |a| a == HemAddr::L0(0) || a == HemAddr::Chunk(0))
        .ok_or("5.8 get qpn 8")?;
    expect(
        p.alloc_l0.is_none() && p.alloc_chunk == Some(1),
        "5.8 qpn 8 allocates chunk 1 only",
    )?;
    expect(
        p.writes.eq_slice(&[mb(0x01, 8, 1, HemAddr::Chunk(1))]),
        "5.8 qpn 8: WRITE_QPC_BT1 only, tag 8",
    )?;
    // qpn 0x12345 with L0[18] new: BT0 (L0[18]) then BT1 (chunk 9320).
    let p = g.get_plan(0x12345, none).ok_or("5.8 get 0x12345")?;
    expect(
        p.links.eq_slice(&[Link {
            page: HemAddr::L0(18),
            slot: 104,
            target: HemAddr::Chunk(9320),
        }]),
        "5.8 0x12345 links chunk 9320 at L0[18][104]",
    )?;
    expect(
        p.writes.eq_slice(&[
            mb(0x00, 0x12345, 0, HemAddr::L0(18)),
            mb(0x01, 0x12345, 1, HemAddr::Chunk(9320)),
        ]),
        "5.8 0x12345: BT0 + BT1",
    )?;
    // 0x12340 after that: chunk 9320 exists -> reference only.
    let p = g
        .get_plan(0x12340, |a| {
            a == HemAddr::Chunk(9320) || a == HemAddr::L0(18)
        })
        .ok_or("5.8 get 0x12340")?;
    expect(
        p.ref_only() && p.writes.is_empty() && p.links.is_empty() && p.alloc_l0.is_none(),
        "5.8 0x12340 shares chunk 9320",
    )?;
    // 0x12348 -> chunk 9321: BT1 only.
    let p = g
        .get_plan(0x12348, |a| {
            a == HemAddr::Chunk(9320) || a == HemAddr::L0(18)
        })
        .ok_or("5.8 get 0x12348")?;
    expect(
        p.writes
            .eq_slice(&[mb(0x01, 0x12348, 1, HemAddr::Chunk(9321))]),
        "5.8 0x12348: BT1 only",
    )?;
    // Hop 2, nothing present: BT0 (L0[0]), BT1 (L1[18]), BT2 (chunk).
    let g2 = geom(&cfg(HemType::Qpc, 512, 0x80000, 2, 0, 4), "hop 2")?;
    let p = g2.get_plan(0x12345, none).ok_or("5.8 hop 2 get")?;
    expect(
        p.alloc_l0 == Some(0) && p.alloc_l1 == Some(18) && p.alloc_chunk == Some(9320),
        "5.8 hop 2 allocates L0[0], L1[18], chunk 9320",
    )?;
    expect(
        p.links.eq_slice(&[
            Link {
                page: HemAddr::L0(0),
                slot: 18,
                target: HemAddr::L1(18),
            },
            Link {
                page: HemAddr::L1(18),
                slot: 104,
                target: HemAddr::Chunk(9320),
            },
        ]),
        "5.8 hop 2 links L1[18] at L0[0][18], chunk at L1[18][104]",
    )?;
    expect(
        p.writes.eq_slice(&[
            mb(0x00, 0x12345, 0, HemAddr::L0(0)),
            mb(0x01, 0x12345, 1, HemAddr::L1(18)),
            mb(0x02, 0x12345, 2, HemAddr::Chunk(9320)),
        ]),
        "5.8 hop 2: BT0, BT1, BT2",
    )?;
    // CQC cqn 0x1234: WRITE_CQC_BT0 (0x10) / BT1 (0x11), tag 0x1234.
    let gc = geom(&cfg(HemType::Cqc, 64, 0x10000, 1, 0, 32), "CQC")?;
    let p = gc.get_plan(0x1234, none).ok_or("5.8 CQC get")?;
    expect(
        p.writes.eq_slice(&[
            mb(0x10, 0x1234, 0, HemAddr::L0(0)),
            mb(0x11, 0x1234, 1, HemAddr::Chunk(72)),
        ]),
        "5.8 CQC 0x1234: 0x10 + 0x11",
    )?;
    // MTPT 0xABCDE: 0x20 (L0[21]) / 0x21 (chunk 10995).
    let gm = geom(&cfg(HemType::Mtpt, 64, 0x100000, 1, 0, 64), "MTPT")?;
    let p = gm.get_plan(0xABCDE, none).ok_or("5.8 MTPT get")?;
    expect(
        p.writes.eq_slice(&[
            mb(0x20, 0xABCDE, 0, HemAddr::L0(21)),
            mb(0x21, 0xABCDE, 1, HemAddr::Chunk(10995)),
        ]),
        "5.8 MTPT 0xABCDE: 0x20 + 0x21",
    )?;
    // SCCC qpn 0x12345: only WRITE_SCCC_BT0 (0xa5) with L0[2], tag = l0 = 2;
    // the chunk step is skipped but the chunk is still linked.
    let gs = geom(&cfg(HemType::Sccc, 64, 0x80000, 1, 0, 64), "SCCC")?;
    let p = gs.get_plan(0x12345, none).ok_or("5.8 SCCC get")?;
    expect(
        p.writes.eq_slice(&[mb(0xa5, 2, 0, HemAddr::L0(2))]),
        "5.8 SCCC: BT0 only, tag 2",
    )?;
    expect(
        p.alloc_chunk == Some(1165)
            && p.links.eq_slice(&[Link {
                page: HemAddr::L0(2),
                slot: 141,
                target: HemAddr::Chunk(1165),
            }]),
        "5.8 SCCC chunk 1165 at L0[2][141]",
    )?;
    // With L0[2] present an SCCC chunk needs no hardware write at all.
    let p = gs
        .get_plan(0x12345, |a| a == HemAddr::L0(2))
        .ok_or("5.8 SCCC get, L0 present")?;
    expect(
        p.alloc_chunk == Some(1165) && p.writes.is_empty(),
        "5.8 SCCC chunk under an existing L0: no write",
    )?;
    // QPC timer obj 5: WRITE_QPC_TIMER_BT0 (0x33) with chunk 5, tag 5.
    let gt = geom(
        &cfg(HemType::QpcTimer, 4096, 256, HOP_NUM_0, 0, 256),
        "timer",
    )?;
    let p = gt.get_plan(5, none).ok_or("5.8 timer get")?;
    expect(
        p.writes.eq_slice(&[mb(0x33, 5, 0, HemAddr::Chunk(5))])
            && p.links.is_empty()
            && p.alloc_l0.is_none(),
        "5.8 QPC timer obj 5: 0x33, tag 5, chunk 5",
    )?;
    // GMV: CFG_GMV_BT idx 0 for obj 0, reference for 127, idx 1 for 128.
    let gg = geom(&cfg(HemType::Gmv, 32, 256, HOP_NUM_0, 0, 2), "GMV")?;
    let p = gg.get_plan(0, none).ok_or("5.8 GMV 0")?;
    expect(p.writes.eq_slice(&[gmv(0, 0)]), "5.8 GMV obj 0: idx 0")?;
    let p = gg
        .get_plan(127, |a| a == HemAddr::Chunk(0))
        .ok_or("5.8 GMV 127")?;
    expect(p.ref_only(), "5.8 GMV obj 127: reference")?;
    let p = gg
        .get_plan(128, |a| a == HemAddr::Chunk(0))
        .ok_or("5.8 GMV 128")?;
    expect(p.writes.eq_slice(&[gmv(1, 1)]), "5.8 GMV obj 128: idx 1")?;
    // Put of the last QPC of chunk 9320: DESTROY_QPC_BT1 (0x09); with
    // every other chunk of L0[18] (9216..9727) gone also DESTROY_QPC_BT0.
    let p = g.put_plan(0x12345, none).ok_or("5.8 put")?;
    expect(
        p.free_chunk == Some(9320) && p.free_l0 == Some(18) && p.free_l1.is_none(),
        "5.8 put frees chunk 9320 and L0[18]",
    )?;
    expect(
        p.writes
            .eq_slice(&[destroy(0x09, 0x12345, 1), destroy(0x08, 0x12345, 0)]),
        "5.8 put: DESTROY_QPC_BT1 then BT0",
    )?;
    // Chunk 9727 (last of L0[18]) still there: BT1 only, L0 kept.
    let p = g
        .put_plan(0x12345, |a| a == HemAddr::Chunk(9727))
        .ok_or("5.8 put, sibling")?;
    expect(
        p.free_l0.is_none() && p.writes.eq_slice(&[destroy(0x09, 0x12345, 1)]),
        "5.8 put with a sibling chunk: BT1 only",
    )?;
    // Chunk 9728 belongs to L0[19]: does not keep L0[18].
    let p = g
        .put_plan(0x12345, |a| a == HemAddr::Chunk(9728))
        .ok_or("5.8 put, neighbour")?;
    expect(
        p.free_l0 == Some(18),
        "5.8 put: a chunk of the next L0 does not count",
    )
}

/// §5.8 IRRL (flat path, `caps.chunk_sz` chunks).
pub fn check_worked_flat() -> Check {
    // chunk_sz 256 KiB, IRRL entries 8 * 128 = 1024 B -> 256 per chunk;
    // 0x80000 QPs -> 2048 chunks.
    let c = cfg(HemType::Irrl, 8 * 128, 0x80000, 0, 0, 0);
    let g = geom(&c, "IRRL")?;
    let want = TableGeom {
        ty: HemType::Irrl,
        obj_size: 1024,
        hop_num: 0,
        mhop: false,
        bt_num: 0,
        chunk_size: 1 << 18,
        obj_per_chunk: 256,
        num_hem: 2048,
        bt_chunk_size: 0,
        bt_chunk_num: 0,
        ba_l0_num: 0,
        num_bt_l0: 0,
        num_bt_l1: 0,
    };
    expect(g == want, "IRRL geometry")?;
    // qpn 0x12345 = 74565 = 291 * 256 + 69 -> offset 69 * 1024 = 70656.
    expect(g.find(0x12345) == Some((291, 70656)), "IRRL find 0x12345")?;
    expect(
        g.index(0x12345)
            == Some(HemIndex {
                obj: 0x12345,
                buf: 291,
                l0: None,
                l1: None,
                mhop: None,
            }),
        "IRRL index",
    )?;
    // Flat tables allocate the chunk and write nothing (set_hem is a no-op).
    let p = g.get_plan(0x12345, none).ok_or("IRRL get")?;
    expect(
        p.alloc_chunk == Some(291) && p.writes.is_empty() && p.links.is_empty(),
        "IRRL get: chunk 291, no writes",
    )?;
    let p = g.put_plan(0x12345, none).ok_or("IRRL put")?;
    expect(
        p.free_chunk == Some(291) && p.writes.is_empty() && p.free_l0.is_none(),
        "IRRL put: chunk 291, no writes",
    )?;
    expect(g.mhop(0x12345).is_none(), "no multi-hop position")?;
    // Past the end: 0x80000 / 256 = 2048 = num_hem.
    expect(g.find(0x80000).is_none(), "IRRL past the end")
}

/// The hns-sim default caps after the C derivations (sim/src/caps.rs
/// `Caps::default()`, HIP09, one function, 4 KiB pages), written out by
/// hand; only what the HEM tables read is filled.
pub fn sim_default_caps() -> Caps {
    Caps {
        // 1 << num_qps_log 8, HIP09 qpc_sz 512, ctx_hop_num 1, qpc_bt_num 8.
        num_qps: 256,
        qpc_sz: 512,
        qpc_hop_num: 1,
        qpc_bt_num: 8,
        // 1 << num_mrws_log 12, mtpt_entry_sz 64.
        num_mtpts: 4096,
        mtpt_entry_sz: 64,
        mpt_hop_num: 1,
        mpt_bt_num: 8,
        // 1 << num_cqs_log 10, cqc_entry_sz 64.
        num_cqs: 1024,
        cqc_entry_sz: 64,
        cqc_hop_num: 1,
        cqc_bt_num: 8,
        // 1 << num_srqs_log 8, srqc_entry_sz 64.
        num_srqs: 256,
        srqc_entry_sz: 64,
        srqc_hop_num: 1,
        srqc_bt_num: 8,
        // HIP09 sccc_sz 64.
        sccc_sz: 64,
        sccc_hop_num: 1,
        sccc_bt_num: 8,
        // Timers: entry = PAGE_SIZE, hop 0xff, 1 page each.
        qpc_timer_entry_sz: 4096,
        qpc_timer_hop_num: HOP_NUM_0,
        qpc_timer_bt_num: 1,
        cqc_timer_entry_sz: 4096,
        cqc_timer_hop_num: HOP_NUM_0,
        cqc_timer_bt_num: 1,
        // HIP09 GMV: 32 B entries, hop 0xff, 2 BTs * 4096/32 = 256 entries.
        gmv_entry_sz: 32,
        gmv_hop_num: HOP_NUM_0,
        gmv_bt_num: 2,
        gmv_entry_num: 256,
        // IRRL 64 B and TRRL 48 B entries, max_ord 64 each way.
        irrl_entry_sz: 64,
        trrl_entry_sz: 48,
        max_qp_init_rdma: 64,
        max_qp_dest_rdma: 64,
        // 1 << chunk_size_shift 18.
        chunk_sz: 1 << 18,
        // REREG_MR | ROCE_V1_V2 | RQ_INLINE | CQ/QP_RECORD_DB | SRQ | XRC |
        // FRMR | QP_FLOW_CTRL | ATOMIC = 0x77f, SRQ_RECORD_DB (22) and
        // CQE_INLINE (19) = 0x480000.
        flags: 0x0048_077f,
        // calc_pg_sz gives 0 everywhere (e.g. QPC: 8 * 512 * 8 >= 256).
        qpc_pg: PgSz::default(),
        mpt_pg: PgSz::default(),
        cqc_pg: PgSz::default(),
        srqc_pg: PgSz::default(),
        sccc_pg: PgSz::default(),
        ..Caps::default()
    }
}

/// Every table `hns_roce_init_hem` creates from `caps` (the hns-sim
/// defaults, hand-written or decoded) against hand-derived geometry.
pub fn check_sim_default_tables(caps: &Caps) -> Check {
    let t = |ty: HemType| -> Result<TableGeom, &'static str> {
        let c = TableCfg::from_caps(caps, ty, 12).ok_or("sim default table missing")?;
        TableGeom::new(&c).ok_or("sim default table invalid")
    };
    // QPC: 512 B, 8 per 4 KiB chunk, 256/8 = 32 chunks, bt_l0[8].
    expect(
        t(HemType::Qpc)?
            == TableGeom {
                obj_size: 512,
                obj_per_chunk: 8,
                num_hem: 32,
                ba_l0_num: 8,
                num_bt_l0: 8,
                ..g4k(HemType::Qpc)
            },
        "sim QPC geometry",
    )?;
    // MTPT: 64 B, 64 per chunk, 4096/64 = 64 chunks.
    expect(
        t(HemType::Mtpt)?
            == TableGeom {
                obj_size: 64,
                obj_per_chunk: 64,
                num_hem: 64,
                ba_l0_num: 8,
                num_bt_l0: 8,
                ..g4k(HemType::Mtpt)
            },
        "sim MTPT geometry",
    )?;
    // CQC: 1024/64 = 16 chunks.
    expect(
        t(HemType::Cqc)?
            == TableGeom {
                obj_size: 64,
                obj_per_chunk: 64,
                num_hem: 16,
                ba_l0_num: 8,
                num_bt_l0: 8,
                ..g4k(HemType::Cqc)
            },
        "sim CQC geometry",
    )?;
    // SRQC and SCCC: 256/64 = 4 chunks.
    for ty in [HemType::Srqc, HemType::Sccc] {
        expect(
            t(ty)?
                == TableGeom {
                    obj_size: 64,
                    obj_per_chunk: 64,
                    num_hem: 4,
                    ba_l0_num: 8,
                    num_bt_l0: 8,
                    ..g4k(ty)
                },
            "sim SRQC/SCCC geometry",
        )?;
    }
    // Timers: one 4 KiB page, hop 0xff (bt_num 1), no BT arrays.
    for ty in [HemType::QpcTimer, HemType::CqcTimer] {
        expect(
            t(ty)?
                == TableGeom {
                    obj_size: 4096,
                    hop_num: HOP_NUM_0,
                    bt_num: 1,
                    obj_per_chunk: 1,
                    num_hem: 1,
                    ba_l0_num: 1,
                    ..g4k(ty)
                },
            "sim timer geometry",
        )?;
    }
    // GMV: 128 per chunk, 256/128 = 2 chunks, 2 L0 BTs, no BT arrays.
    expect(
        t(HemType::Gmv)?
            == TableGeom {
                obj_size: 32,
                hop_num: HOP_NUM_0,
                bt_num: 1,
                obj_per_chunk: 128,
                num_hem: 2,
                ba_l0_num: 2,
                ..g4k(HemType::Gmv)
            },
        "sim GMV geometry",
    )?;
    // IRRL: 64 * 64 = 4096 B, 256 KiB / 4096 = 64 per chunk, 4 chunks.
    let flat = |ty: HemType, obj_size: u32, obj_per_chunk: u32| TableGeom {
        ty,
        obj_size,
        hop_num: 0,
        mhop: false,
        bt_num: 0,
        chunk_size: 1 << 18,
        obj_per_chunk,
        num_hem: 4,
        bt_chunk_size: 0,
        bt_chunk_num: 0,
        ba_l0_num: 0,
        num_bt_l0: 0,
        num_bt_l1: 0,
    };
    expect(
        t(HemType::Irrl)? == flat(HemType::Irrl, 4096, 64),
        "sim IRRL geometry",
    )?;
    // TRRL: 48 * 64 = 3072 B, 262144 / 3072 = 85 per chunk,
    // DIV_ROUND_UP(256, 85) = 4 chunks.
    expect(
        t(HemType::Trrl)? == flat(HemType::Trrl, 3072, 85),
        "sim TRRL geometry",
    )?;
    // The buffer types have no context table.
    for ty in [HemType::Mtt, HemType::Cqe, HemType::SrqWqe, HemType::Idx] {
        expect(
            TableCfg::from_caps(caps, ty, 12).is_none(),
            "no table for buffer types",
        )?;
    }
    // The inputs as hns_roce_init_hem passes them: the QPC timer table has
    // qpc_timer_bt_num objects of qpc_timer_entry_sz, 0 page sizes.
    expect(
        TableCfg::from_caps(caps, HemType::QpcTimer, 12)
            == Some(TableCfg {
                ty: HemType::QpcTimer,
                obj_size: 4096,
                num_obj: 1,
                hop_num: HOP_NUM_0,
                pg: PgSz::default(),
                ba_l0_num: 1,
                chunk_sz: 1 << 18,
                page_shift: 12,
            }),
        "sim QPC timer config",
    )?;
    expect(
        TableCfg::from_caps(caps, HemType::Gmv, 12)
            == Some(TableCfg {
                ty: HemType::Gmv,
                obj_size: 32,
                num_obj: 256,
                hop_num: HOP_NUM_0,
                pg: PgSz::default(),
                ba_l0_num: 2,
                chunk_sz: 1 << 18,
                page_shift: 12,
            }),
        "sim GMV config",
    )
}

/// Indexes of the hns-sim default tables, at chunk and table boundaries.
pub fn check_sim_default_indexes(caps: &Caps) -> Check {
    let t = |ty: HemType| -> Result<TableGeom, &'static str> {
        let c = TableCfg::from_caps(caps, ty, 12).ok_or("sim default table missing")?;
        TableGeom::new(&c).ok_or("sim default table invalid")
    };
    let q = t(HemType::Qpc)?;
    // QP 7 is the last of chunk 0, QP 8 the first of chunk 1 (l1 1).
    expect(
        q.index(7) == Some(ix(7, 0, Some(0), None, [0, 0, 0, 0])),
        "sim QPC 7",
    )?;
    expect(
        q.index(8) == Some(ix(8, 1, Some(0), None, [1, 0, 1, 0])),
        "sim QPC 8",
    )?;
    // QP 255: 255/8 = 31, the last chunk; QP 256: chunk 32 = num_hem.
    expect(
        q.index(255) == Some(ix(255, 31, Some(0), None, [31, 0, 31, 0])),
        "sim QPC 255",
    )?;
    expect(q.index(256).is_none(), "sim QPC 256 is past the table")?;
    // MPT 4095: 4095/64 = 63; 4096 -> chunk 64 = num_hem.
    let m = t(HemType::Mtpt)?;
    expect(
        m.index(4095).map(|i| i.buf) == Some(63) && m.index(4096).is_none(),
        "sim MPT bounds",
    )?;
    // CQC 1023 -> 15; SRQC/SCCC 255 -> 3.
    expect(
        t(HemType::Cqc)?.index(1023).map(|i| i.buf) == Some(15),
        "sim CQC 1023",
    )?;
    expect(
        t(HemType::Srqc)?.index(255).map(|i| i.buf) == Some(3),
        "sim SRQC 255",
    )?;
    // SCCC obj 255: 255/64 = 3 -> l0 0, l1 3; the mailbox tag is l0 = 0.
    let s = t(HemType::Sccc)?;
    expect(
        s.index(255) == Some(ix(255, 3, Some(0), None, [3, 0, 3, 0])),
        "sim SCCC 255",
    )?;
    // QPC timer: obj 0 -> chunk 0. Obj 1: table_idx 1 >= ba_l0_num 1 wraps
    // to l0 0 -> chunk 0 again (C semantics: no range error).
    let qt = t(HemType::QpcTimer)?;
    expect(
        qt.index(0) == Some(ix(0, 0, None, None, [0, 0, 0, 0])),
        "sim QPC timer 0",
    )?;
    expect(
        qt.index(1) == Some(ix(1, 0, None, None, [1, 0, 0, 0])),
        "sim QPC timer 1 wraps onto chunk 0",
    )?;
    // GMV: 127 -> chunk 0, 128 -> chunk 1, 255 -> chunk 1; 256: table_idx
    // 2 wraps at ba_l0_num 2 onto chunk 0.
    let g = t(HemType::Gmv)?;
    expect(
        g.index(127).map(|i| i.buf) == Some(0)
            && g.index(128).map(|i| i.buf) == Some(1)
            && g.index(255).map(|i| i.buf) == Some(1),
        "sim GMV chunks",
    )?;
    expect(
        g.index(256) == Some(ix(256, 0, None, None, [2, 0, 0, 0])),
        "sim GMV 256 wraps onto chunk 0",
    )?;
    // TRRL: 84 * 3072 = 258048 is the last object of chunk 0; 85 starts
    // chunk 1; 255 = 3 * 85 starts chunk 3.
    let tr = t(HemType::Trrl)?;
    expect(
        tr.find(84) == Some((0, 258048))
            && tr.find(85) == Some((1, 0))
            && tr.find(255) == Some((3, 0)),
        "sim TRRL offsets",
    )?;
    // The last chunk has room past num_qps: 256 = 3 * 85 + 1 -> (3, 3072);
    // 340 = 4 * 85 is chunk 4 = num_hem.
    expect(tr.find(256) == Some((3, 3072)), "sim TRRL 256")?;
    expect(tr.find(340).is_none(), "sim TRRL past the end")
}

/// Objects a model table can hold at once.
const LIVE: usize = 8;
/// Writes a log can hold.
const LOG: usize = 24;

/// A table manager's bookkeeping reduced to what the plans need: the BT
/// pages and chunks that exist, chunks with their refcount.
struct Model {
    g: TableGeom,
    live: [Option<(HemAddr, u32)>; LIVE],
}

/// Hardware writes in issue order.
struct Log {
    w: [Option<HwWrite>; LOG],
}

impl Log {
    fn new() -> Self {
        Log { w: [None; LOG] }
    }

    fn push(&mut self, w: HwWrite) -> Check {
        let slot = self.w.iter_mut().find(|s| s.is_none()).ok_or("log full")?;
        *slot = Some(w);
        Ok(())
    }

    fn eq_slice(&self, want: &[HwWrite]) -> bool {
        self.w.iter().flatten().eq(want.iter())
    }
}

impl Model {
    fn new(caps: &Caps, ty: HemType) -> Result<Self, &'static str> {
        let c = TableCfg::from_caps(caps, ty, 12).ok_or("model: no table")?;
        Ok(Model {
            g: TableGeom::new(&c).ok_or("model: bad geometry")?,
            live: [None; LIVE],
        })
    }

    fn exists(&self, a: HemAddr) -> bool {
        self.live.iter().flatten().any(|(x, _)| *x == a)
    }

    fn add(&mut self, a: HemAddr, refs: u32) -> Check {
        let slot = self
            .live
            .iter_mut()
            .find(|s| s.is_none())
            .ok_or("model full")?;
        *slot = Some((a, refs));
        Ok(())
    }

    fn remove(&mut self, a: Option<HemAddr>) {
        for s in self.live.iter_mut() {
            if matches!((*s, a), (Some((x, _)), Some(y)) if x == y) {
                *s = None;
            }
        }
    }

    /// Changes the refcount of chunk `buf` by `delta`; returns the new count.
    fn refs(&mut self, buf: u32, delta: i32) -> Result<u32, &'static str> {
        let (_, r) = self
            .live
            .iter_mut()
            .flatten()
            .find(|(x, _)| *x == HemAddr::Chunk(buf))
            .ok_or("model: chunk missing")?;
        *r = r.checked_add_signed(delta).ok_or("model: refcount")?;
        Ok(*r)
    }

    /// `hns_roce_table_get`.
    fn get(&mut self, obj: u32, log: &mut Log) -> Check {
        let g = self.g;
        let p = g.get_plan(obj, |a| self.exists(a)).ok_or("get: no index")?;
        if p.ref_only() {
            return self.refs(p.index.buf, 1).map(|_| ());
        }
        if let Some(i) = p.alloc_l0 {
            self.add(HemAddr::L0(i), 0)?;
        }
        if let Some(i) = p.alloc_l1 {
            self.add(HemAddr::L1(i), 0)?;
        }
        if let Some(i) = p.alloc_chunk {
            self.add(HemAddr::Chunk(i), 1)?;
        }
        for w in p.writes.iter() {
            log.push(*w)?;
        }
        Ok(())
    }

    /// `hns_roce_table_put`.
    fn put(&mut self, obj: u32, log: &mut Log) -> Check {
        let g = self.g;
        let idx = g.index(obj).ok_or("put: no index")?;
        if self.refs(idx.buf, -1)? != 0 {
            return Ok(());
        }
        let p = g.put_plan(obj, |a| self.exists(a)).ok_or("put: no plan")?;
        for w in p.writes.iter() {
            log.push(*w)?;
        }
        self.remove(p.free_chunk.map(HemAddr::Chunk));
        self.remove(p.free_l1.map(HemAddr::L1));
        self.remove(p.free_l0.map(HemAddr::L0));
        Ok(())
    }
}

/// The HEM writes of the C driver on hns-sim with default caps, in trace
/// order (probe, then objects of the guest tests): GMV entries 0..255,
/// timer pages, MR 1, CQ 0, QP 1 (QPC, IRRL, TRRL, SCCC), CQ 4, MR 2,
/// SRQ 0, QP 8; then destroy SRQ 0, MR 2, CQ 4, CQ 0, MR 1.
pub fn check_sim_default_trace(caps: &Caps) -> Check {
    let mut qpc = Model::new(caps, HemType::Qpc)?;
    let mut mpt = Model::new(caps, HemType::Mtpt)?;
    let mut cqc = Model::new(caps, HemType::Cqc)?;
    let mut srqc = Model::new(caps, HemType::Srqc)?;
    let mut sccc = Model::new(caps, HemType::Sccc)?;
    let mut qpc_timer = Model::new(caps, HemType::QpcTimer)?;
    let mut cqc_timer = Model::new(caps, HemType::CqcTimer)?;
    let mut gmv_t = Model::new(caps, HemType::Gmv)?;
    let mut irrl = Model::new(caps, HemType::Irrl)?;
    let mut trrl = Model::new(caps, HemType::Trrl)?;
    let mut log = Log::new();
    // get_hem_table: every GMV entry, then every timer page.
    for i in 0..256 {
        gmv_t.get(i, &mut log)?;
    }
    qpc_timer.get(0, &mut log)?;
    cqc_timer.get(0, &mut log)?;
    mpt.get(1, &mut log)?;
    cqc.get(0, &mut log)?;
    for (m, qpn) in [
        (&mut qpc, 1),
        (&mut irrl, 1),
        (&mut trrl, 1),
        (&mut sccc, 1),
    ] {
        m.get(qpn, &mut log)?;
    }
    cqc.get(4, &mut log)?;
    mpt.get(2, &mut log)?;
    srqc.get(0, &mut log)?;
    for (m, qpn) in [
        (&mut qpc, 8),
        (&mut irrl, 8),
        (&mut trrl, 8),
        (&mut sccc, 8),
    ] {
        m.get(qpn, &mut log)?;
    }
    srqc.put(0, &mut log)?;
    mpt.put(2, &mut log)?;
    cqc.put(4, &mut log)?;
    cqc.put(0, &mut log)?;
    mpt.put(1, &mut log)?;
    let l0 = HemAddr::L0(0);
    let c0 = HemAddr::Chunk(0);
    // build/guest/sim-c/trace-0.txt, C driver: CFG_GMV_BT idx 0 and 1;
    // WRITE_QPC_TIMER_BT0 / WRITE_CQC_TIMER_BT0 tag 0; WRITE_MPT_BT0/1
    // tag 1; WRITE_CQC_BT0/1 tag 0; WRITE_QPC_BT0/1 tag 1; WRITE_SCCC_BT0
    // tag 0; WRITE_SRQC_BT0/1 tag 0; WRITE_QPC_BT1 tag 8; DESTROY_SRQC_BT1/0
    // tag 0; DESTROY_CQC_BT1/0 tag 0; DESTROY_MPT_BT1/0 tag 1.
    let want = [
        gmv(0, 0),
        gmv(1, 1),
        mb(0x33, 0, 0, c0),
        mb(0x23, 0, 0, c0),
        mb(0x20, 1, 0, l0),
        mb(0x21, 1, 1, c0),
        mb(0x10, 0, 0, l0),
        mb(0x11, 0, 1, c0),
        mb(0x00, 1, 0, l0),
        mb(0x01, 1, 1, c0),
        mb(0xa5, 0, 0, l0),
        mb(0x30, 0, 0, l0),
        mb(0x31, 0, 1, c0),
        mb(0x01, 8, 1, HemAddr::Chunk(1)),
        destroy(0x39, 0, 1),
        destroy(0x38, 0, 0),
        destroy(0x19, 0, 1),
        destroy(0x18, 0, 0),
        destroy(0x29, 1, 1),
        destroy(0x28, 1, 0),
    ];
    expect(log.eq_slice(&want), "HEM writes equal the C driver's trace")?;
    // What is left: GMV chunks 0/1 (128 refs each), the timer pages, QPC
    // L0[0] with chunks 0 and 1, SCCC L0[0] and chunk 0 (2 refs).
    expect(
        gmv_t.refs(0, 0)? == 128 && gmv_t.refs(1, 0)? == 128,
        "GMV chunks hold 128 references each",
    )?;
    expect(
        qpc.exists(l0) && qpc.exists(c0) && qpc.exists(HemAddr::Chunk(1)),
        "QPC L0[0], chunks 0 and 1 stay",
    )?;
    expect(sccc.refs(0, 0)? == 2, "SCCC chunk 0 has QP 1 and QP 8")?;
    expect(
        !mpt.exists(l0) && !cqc.exists(l0) && !srqc.exists(l0),
        "MPT, CQC and SRQC L0 pages freed",
    )
}

/// Levels, steps and opcodes of each type and hop.
pub fn check_levels_and_steps() -> Check {
    // hns_roce_get_bt_num: mapped 3/2/1 for hop 2/1/0xff, unmapped 2/1/1.
    expect(
        bt_num(HemType::Qpc, 2) == 3
            && bt_num(HemType::Qpc, 1) == 2
            && bt_num(HemType::Gmv, HOP_NUM_0) == 1
            && bt_num(HemType::Qpc, 0) == 0
            && bt_num(HemType::Qpc, 3) == 0,
        "bt_num of context types",
    )?;
    expect(
        bt_num(HemType::Mtt, 2) == 2
            && bt_num(HemType::Cqe, 1) == 1
            && bt_num(HemType::Idx, HOP_NUM_0) == 1
            && bt_num(HemType::Mtt, 3) == 0,
        "bt_num of buffer types",
    )?;
    // check_whether_mhop: 0xff counts, 0 does not, buffers never.
    expect(
        is_mhop(HemType::QpcTimer, HOP_NUM_0)
            && is_mhop(HemType::Qpc, 3)
            && !is_mhop(HemType::Qpc, 0)
            && !is_mhop(HemType::Irrl, 1),
        "is_mhop",
    )?;
    expect(
        is_last_step(HOP_NUM_0, 0)
            && is_last_step(1, 1)
            && is_last_step(2, 2)
            && !is_last_step(1, 0)
            && !is_last_step(2, 1)
            && !is_last_step(HOP_NUM_0, 1),
        "check_whether_last_step",
    )?;
    expect(
        last_step(HOP_NUM_0) == 0 && last_step(1) == 1 && last_step(2) == 2,
        "last step",
    )?;
    let write: [(HemType, Option<u8>); 9] = [
        (HemType::Qpc, Some(0x00)),
        (HemType::Mtpt, Some(0x20)),
        (HemType::Cqc, Some(0x10)),
        (HemType::Srqc, Some(0x30)),
        (HemType::Sccc, Some(0xa5)),
        (HemType::QpcTimer, Some(0x33)),
        (HemType::CqcTimer, Some(0x23)),
        (HemType::Gmv, None),
        (HemType::Mtt, None),
    ];
    expect(
        write.iter().all(|(t, op)| t.write_bt0() == *op),
        "WRITE_*_BT0 opcodes",
    )?;
    let clear: [(HemType, Option<u8>); 6] = [
        (HemType::Qpc, Some(0x08)),
        (HemType::Mtpt, Some(0x28)),
        (HemType::Cqc, Some(0x18)),
        (HemType::Srqc, Some(0x38)),
        (HemType::Sccc, None),
        (HemType::QpcTimer, None),
    ];
    expect(
        clear.iter().all(|(t, op)| t.destroy_bt0() == *op),
        "DESTROY_*_BT0 opcodes",
    )?;
    expect(
        HemType::CONTEXTS.iter().all(|t| !t.is_buffer()) && HemType::CONTEXTS.len() == 8,
        "eight context types",
    )
}

/// Hop 2: partial presence on get, the three put outcomes and the C
/// `hns_roce_check_bt_null` quirk for L1 indexes past the first L0.
pub fn check_hop2_plans() -> Check {
    // 8M QPCs of 512 B, hop 2, 8 L0 BTs: 1M chunks, bt_l1[1M/512 = 2048].
    let g = geom(&cfg(HemType::Qpc, 512, 0x80_0000, 2, 0, 8), "hop 2")?;
    expect(
        g.num_hem == 0x10_0000 && g.num_bt_l0 == 8 && g.num_bt_l1 == 2048,
        "hop 2 geometry",
    )?;
    // obj 0x12345: chunk 9320, l0 0, l1 index 18, l2 104 (as in 5.8).
    let l0 = HemAddr::L0(0);
    let l1 = HemAddr::L1(18);
    let chunk = HemAddr::Chunk(9320);
    // L0 present: allocate L1 and chunk, steps 1 and 2.
    let p = g.get_plan(0x12345, |a| a == l0).ok_or("hop 2 get, L0")?;
    expect(
        p.alloc_l0.is_none() && p.alloc_l1 == Some(18) && p.alloc_chunk == Some(9320),
        "hop 2 get with L0: L1 and chunk",
    )?;
    expect(
        p.writes
            .eq_slice(&[mb(0x01, 0x12345, 1, l1), mb(0x02, 0x12345, 2, chunk)]),
        "hop 2 get with L0: BT1 + BT2",
    )?;
    // L0 and L1 present: chunk only, step 2, one link.
    let p = g
        .get_plan(0x12345, |a| a == l0 || a == l1)
        .ok_or("hop 2 get, L0 L1")?;
    expect(
        p.writes.eq_slice(&[mb(0x02, 0x12345, 2, chunk)])
            && p.links.eq_slice(&[Link {
                page: l1,
                slot: 104,
                target: chunk,
            }]),
        "hop 2 get with L0 and L1: BT2 only",
    )?;
    // Put, nothing else left: DESTROY BT2, BT1, BT0; free chunk, L1, L0.
    let p = g
        .put_plan(0x12345, |a| a == l0 || a == l1 || a == chunk)
        .ok_or("hop 2 put")?;
    expect(
        p.free_chunk == Some(9320) && p.free_l1 == Some(18) && p.free_l0 == Some(0),
        "hop 2 put frees all three",
    )?;
    expect(
        p.writes.eq_slice(&[
            destroy(0x0a, 0x12345, 2),
            destroy(0x09, 0x12345, 1),
            destroy(0x08, 0x12345, 0),
        ]),
        "hop 2 put: DESTROY BT2, BT1, BT0",
    )?;
    // Another L1 (511) under L0[0]: L0 stays.
    let p = g
        .put_plan(0x12345, |a| a == l0 || a == l1 || a == HemAddr::L1(511))
        .ok_or("hop 2 put, L1 sibling")?;
    expect(
        p.free_l1 == Some(18)
            && p.free_l0.is_none()
            && p.writes
                .eq_slice(&[destroy(0x0a, 0x12345, 2), destroy(0x09, 0x12345, 1)]),
        "hop 2 put with another L1: BT2, BT1",
    )?;
    // Another chunk (9216) under L1[18]: only the chunk goes.
    let p = g
        .put_plan(0x12345, |a| a == HemAddr::Chunk(9216))
        .ok_or("hop 2 put, chunk sibling")?;
    expect(
        p.free_l1.is_none()
            && p.free_l0.is_none()
            && p.writes.eq_slice(&[destroy(0x0a, 0x12345, 2)]),
        "hop 2 put with another chunk: BT2 only",
    )?;
    // The quirk: obj 0x200000 = 2097152, /8 = 262144 = 512 * 512 -> l0 1,
    // l1 0, l2 0, L1 index 512, chunk 262144. check_bt_null compares the
    // relative i (0..512) with 512 and so finds the object's own L1[512]:
    // L0[1] is never freed.
    expect(
        g.index(0x20_0000) == Some(ix(0x20_0000, 262144, Some(1), Some(512), [262144, 1, 0, 0])),
        "hop 2 obj 0x200000",
    )?;
    let own = |a: HemAddr| a == HemAddr::L0(1) || a == HemAddr::L1(512);
    let p = g.put_plan(0x20_0000, own).ok_or("hop 2 put, l0 1")?;
    expect(
        p.free_l1 == Some(512)
            && p.free_l0.is_none()
            && p.writes
                .eq_slice(&[destroy(0x0a, 0x20_0000, 2), destroy(0x09, 0x20_0000, 1)]),
        "hop 2 put under L0[1]: L0 kept (C check_bt_null quirk)",
    )?;
    // Under L0[0] the own L1 is skipped, so L0[0] goes (see above).
    Ok(())
}

/// Configurations the C driver cannot use, and odd but valid ones.
pub fn check_invalid_and_edges() -> Check {
    // Hop 3 and 4 on a context table: bt_num 0.
    expect(
        TableGeom::new(&cfg(HemType::Qpc, 512, 256, 3, 0, 8)).is_none(),
        "hop 3 context table",
    )?;
    expect(
        TableGeom::new(&cfg(HemType::Cqc, 64, 256, 4, 0, 8)).is_none(),
        "hop 4 context table",
    )?;
    // Object size 0, objects larger than a chunk, no L0 BT.
    expect(
        TableGeom::new(&cfg(HemType::Qpc, 0, 256, 1, 0, 8)).is_none(),
        "object size 0",
    )?;
    expect(
        TableGeom::new(&cfg(HemType::Qpc, 8192, 256, 1, 0, 8)).is_none(),
        "object larger than a 4 KiB chunk",
    )?;
    expect(
        TableGeom::new(&cfg(HemType::Qpc, 512, 256, 1, 0, 0)).is_none(),
        "no L0 BT",
    )?;
    // Shifts: 12 + 20 = 32 does not fit; 12 + 19 = 31 does (2 GiB chunks).
    expect(
        TableGeom::new(&cfg(HemType::Qpc, 512, 256, 1, 20, 8)).is_none(),
        "buffer shift 32",
    )?;
    expect(
        TableGeom::new(&cfg(HemType::Qpc, 512, 256, 1, 19, 8)).map(|g| g.chunk_size)
            == Some(1 << 31),
        "buffer shift 31",
    )?;
    // GMV entries larger than a hardware page.
    expect(
        TableGeom::new(&cfg(HemType::Gmv, 8192, 2, HOP_NUM_0, 1, 2)).is_none(),
        "GMV entry larger than 4 KiB",
    )?;
    // Flat chunk smaller than a page.
    let mut c = cfg(HemType::Irrl, 64, 256, 0, 0, 0);
    c.chunk_sz = 2048;
    expect(TableGeom::new(&c).is_none(), "flat chunk below a page")?;
    // Hop 0 on a context table: the flat path, chunk_sz chunks, no writes.
    // 1024 CQCs of 64 B, 256 KiB / 64 = 4096 per chunk -> 1 chunk.
    let g = geom(&cfg(HemType::Cqc, 64, 1024, 0, 0, 8), "hop 0 CQC")?;
    expect(
        !g.mhop && g.bt_num == 0 && g.num_hem == 1 && g.obj_per_chunk == 4096,
        "hop 0 CQC is flat",
    )?;
    let p = g.get_plan(5, none).ok_or("hop 0 get")?;
    expect(
        p.alloc_chunk == Some(0) && p.writes.is_empty() && p.alloc_l0.is_none(),
        "hop 0 get: chunk 0, no writes",
    )?;
    // Buffer types never take the multi-hop path, whatever the hop.
    let g = geom(&cfg(HemType::Mtt, 64, 4096, 2, 0, 8), "MTT")?;
    expect(!g.mhop && g.num_hem == 1, "MTT table is flat")?;
    // Wrap: in the 5.8 QPC table 0x80000 (one past the end) has
    // table_idx 65536, l0 128 -> 128 % 128 = 0, so it aliases chunk 0.
    let g = geom(&worked_qpc_hop1(), "5.8 QPC")?;
    expect(
        g.index(0x80000) == Some(ix(0x80000, 0, Some(0), None, [65536, 0, 0, 0])),
        "l0 wraps at ba_l0_num",
    )?;
    // Put of a timer or GMV chunk: freed, nothing written.
    let t = geom(&cfg(HemType::CqcTimer, 4096, 1, HOP_NUM_0, 0, 1), "timer")?;
    let p = t.put_plan(0, none).ok_or("timer put")?;
    expect(
        p.free_chunk == Some(0) && p.writes.is_empty() && p.free_l0.is_none(),
        "timer put: no writes",
    )?;
    // SCCC put of the last chunk: L0 freed, no DESTROY.
    let s = geom(&cfg(HemType::Sccc, 64, 256, 1, 0, 8), "SCCC")?;
    let p = s.put_plan(1, none).ok_or("SCCC put")?;
    expect(
        p.free_chunk == Some(0) && p.free_l0 == Some(0) && p.writes.is_empty(),
        "SCCC put: chunk and L0, no writes",
    )?;
    // Hop 0xff with a step that has no BT page: C passes address 0.
    let q = geom(&cfg(HemType::QpcTimer, 4096, 4, HOP_NUM_0, 0, 4), "timer")?;
    let idx = q.index(2).ok_or("timer index")?;
    expect(
        q.set_hem(&idx, 1)
            == Some(HwWrite::Mailbox {
                cmd: 0x34,
                tag: 2,
                step: 1,
                base: None,
            }),
        "set_hem step 1 of hop 0xff: address 0",
    )?;
    // IRRL size overflow in from_caps.
    let caps = Caps {
        irrl_entry_sz: 0x1_0000,
        max_qp_init_rdma: 0x1_0000,
        ..sim_default_caps()
    };
    expect(
        TableCfg::from_caps(&caps, HemType::Irrl, 12).is_none(),
        "IRRL entry size overflow",
    )?;
    // Tables the caps do not ask for.
    let caps = Caps {
        flags: 0,
        trrl_entry_sz: 0,
        gmv_entry_sz: 0,
        qpc_timer_entry_sz: 0,
        ..sim_default_caps()
    };
    for ty in [
        HemType::Srqc,
        HemType::Sccc,
        HemType::Trrl,
        HemType::Gmv,
        HemType::QpcTimer,
    ] {
        expect(
            TableCfg::from_caps(&caps, ty, 12).is_none(),
            "table not created",
        )?;
    }
    expect(
        TableCfg::from_caps(&caps, HemType::CqcTimer, 12).is_some(),
        "CQC timer still created",
    )
}

// ---------------------------------------------------------------------------
// Multi-region MTRs (hns_roce_mtr_create for kernel buffers). Every expected
// number is worked out by hand from the C formulas, written next to it:
//
//   mtr_init_buf_cfg:  count_i  = DIV_ROUND_UP(hr_hw_page_align(size_i), 1 << page_shift)
//                      offset_i = count_0 + ... + count_{i-1}
//                      hopnum_i = to_hr_hem_hopnum(hop_i, count_i)  (0 if count 0 or hop 0xff)
//   cal_best_bt_pg_sz: first set bit b >= shift of page_size_cap with
//                      sum_i DIV_ROUND_UP(count_i, (2^b/8)^(hopnum_i-1)) <= 2^b/8
//   hem_list_request:  unit = 2^b / 8; root = hns_roce_hem_list_calc_root_ba
//                      (hop 1: count, hop 2: DIV_ROUND_UP(count, unit)); ENOBUFS if
//                      root > unit; root entries region after region
//                      (setup_root_hem); hop-2 L1 page k of a region covers its
//                      pages k*unit .. k*unit+unit-1 (hem_list_alloc_mid_bt) and
//                      sits at root[first + k] (setup_middle_bt)
//   hem_list_find_mtt: hop 1 -> root[first + (page - offset)];
//                      hop 2 -> L1 (page - offset) / unit, slot (page - offset) % unit

/// `HNS_ROCE_V2_PAGE_SIZE_SUPPORTED` (hns_roce_hw_v2.h: 0xFFFF000, bits
/// 12..=27), the page_size_cap the driver falls back to.
const CAP_ALL: u64 = 0x0fff_f000;

/// The page_size_cap hns-sim reports in QUERY_PF_CAPS (sim/src/caps.rs:
/// 0xffff_f000, bits 12..=31).
const CAP_SIM: u64 = 0xffff_f000;

fn attr(size: u64, hop: u32) -> RegionAttr {
    RegionAttr { size, hop }
}

fn br(offset: u32, count: u32, hopnum: u32) -> BufRegion {
    BufRegion {
        offset,
        count,
        hopnum,
    }
}

fn rbt(region: BufRegion, root: u32, root_len: u32, l1: u32, l1_len: u32) -> RegionBt {
    RegionBt {
        region,
        root,
        root_len,
        l1,
        l1_len,
    }
}

fn l1(page: u32, slot: u32) -> Option<BtSlot> {
    Some(BtSlot::L1 { page, slot })
}

/// The kernel GSI QP of the MAD agent on hns-sim's caps: SQ 128 WQEs x 64 B
/// = 8 KiB (wqe_sq_hop_num 2), extended SGE 256 x 16 B = 4 KiB
/// (wqe_sge_hop_num 1), RQ 512 x 16 B = 8 KiB (wqe_rq_hop_num 2), 4 KiB
/// pages (mtt_buf_pg_sz 0), BT pages from 4 KiB (mtt_ba_pg_sz 0).
pub fn check_mtr_gsi_qp() -> Check {
    let attrs = [attr(8192, 2), attr(4096, 1), attr(8192, 2)];
    // SQ: 8192 / 4096 = 2 pages at 0; SGE: 1 page at 2; RQ: 2 pages at 3.
    let regions = init_buf_cfg(&attrs, 12).map_err(|_| "GSI regions")?;
    let want = [br(0, 2, 2), br(2, 1, 1), br(3, 2, 2)];
    expect(
        regions.as_slice() == want,
        "GSI regions: 0+2 h2, 2+1 h1, 3+2 h2",
    )?;
    expect(regions.page_count() == 5, "GSI: 5 pages")?;
    // Bit 12 is set; 512 BAs per page: SQ ceil(2/512) = 1, SGE 1 (hop 1:
    // 512^0 = 1 page per entry), RQ 1 -> 3 <= 512.
    expect(
        best_bt_pg_sz(&want, 12, CAP_SIM) == Some(12),
        "GSI: BT pages stay 4 KiB",
    )?;
    expect(calc_root_ba(&want, 512) == 3, "GSI: calc_root_ba 3")?;
    let m = MtrLayout::new(&attrs, 12, 12, CAP_SIM).map_err(|_| "GSI layout")?;
    expect(m.page_shift == 12 && m.hem.ba_pg_shift == 12, "GSI shifts")?;
    expect(
        m.hem.unit == 512 && m.hem.root_len == 3 && m.hem.l1_len == 2 && m.hem.page_count == 5,
        "GSI: unit 512, 3 root entries, 2 L1 pages, 5 pages",
    )?;
    // Root: [SQ L1 #0, SGE page 2, RQ L1 #1].
    expect(
        m.hem.regions()
            == [
                rbt(want[0], 0, 1, 0, 1),
                rbt(want[1], 1, 1, 1, 0),
                rbt(want[2], 2, 1, 1, 1),
            ],
        "GSI root: SQ L1 at 0, SGE page at 1, RQ L1 at 2",
    )?;
    expect(m.hem.l1_root(0) == Some(0), "GSI: SQ L1 in root[0]")?;
    expect(m.hem.l1_root(1) == Some(2), "GSI: RQ L1 in root[2]")?;
    expect(m.hem.l1_root(2).is_none(), "GSI: no third L1 page")?;
    // Pages 0, 1: SQ L1 slots 0, 1; page 2: root[1 + 0]; pages 3, 4: RQ L1
    // slots 0, 1.
    expect(m.hem.locate(0) == l1(0, 0), "GSI page 0: SQ L1 slot 0")?;
    expect(m.hem.locate(1) == l1(0, 1), "GSI page 1: SQ L1 slot 1")?;
    expect(
        m.hem.locate(2) == Some(BtSlot::Root(1)),
        "GSI page 2: root[1]",
    )?;
    expect(m.hem.locate(3) == l1(1, 0), "GSI page 3: RQ L1 slot 0")?;
    expect(m.hem.locate(4) == l1(1, 1), "GSI page 4: RQ L1 slot 1")?;
    expect(m.hem.locate(5).is_none(), "GSI page 5: none")?;
    // mtr_find(offset): sq.offset 0, sge.offset 8192, rq.offset 12288.
    expect(m.page_of(0) == Some(0), "GSI sq.offset -> page 0")?;
    expect(m.page_of(8191) == Some(1), "GSI byte 8191 -> page 1")?;
    expect(m.page_of(8192) == Some(2), "GSI sge.offset -> page 2")?;
    expect(m.page_of(12288) == Some(3), "GSI rq.offset -> page 3")?;
    expect(m.page_of(20479) == Some(4), "GSI last byte -> page 4")?;
    expect(m.page_of(20480).is_none(), "GSI past the end")
}

/// Regions with several L1 pages, 4 KiB BT pages (unit 512).
pub fn check_mtr_multi_l1() -> Check {
    // SQ 1025 pages hop 2, SGE 3 pages hop 1, RQ 600 pages hop 2.
    let attrs = [attr(1025 * 4096, 2), attr(3 * 4096, 1), attr(600 * 4096, 2)];
    let m = MtrLayout::new(&attrs, 12, 12, CAP_ALL).map_err(|_| "multi-L1 layout")?;
    // Offsets 0, 1025, 1028; root: SQ ceil(1025/512) = 3, SGE 3, RQ
    // ceil(600/512) = 2 -> 8 <= 512, no growth.
    let (sq, sge, rq) = (br(0, 1025, 2), br(1025, 3, 1), br(1028, 600, 2));
    expect(
        m.hem.ba_pg_shift == 12 && m.hem.root_len == 8 && m.hem.l1_len == 5,
        "multi-L1: 8 root entries, 5 L1 pages",
    )?;
    expect(m.hem.page_count == 1628, "multi-L1: 1025 + 3 + 600 pages")?;
    expect(
        m.hem.regions()
            == [
                rbt(sq, 0, 3, 0, 3),
                rbt(sge, 3, 3, 3, 0),
                rbt(rq, 6, 2, 3, 2),
            ],
        "multi-L1 root: SQ L1s 0..2, SGE pages 3..5, RQ L1s 6..7",
    )?;
    for (l, root) in [(0, 0), (1, 1), (2, 2), (3, 6), (4, 7)] {
        expect(m.hem.l1_root(l) == Some(root), "multi-L1: L1 page in root")?;
    }
    expect(m.hem.l1_root(5).is_none(), "multi-L1: 5 L1 pages only")?;
    // SQ: page 511 is the last of L1 #0, 512 the first of #1, 1024 the first
    // (and only) of #2.
    expect(m.hem.locate(511) == l1(0, 511), "page 511: L1 0 slot 511")?;
    expect(m.hem.locate(512) == l1(1, 0), "page 512: L1 1 slot 0")?;
    expect(m.hem.locate(1023) == l1(1, 511), "page 1023: L1 1 slot 511")?;
    expect(m.hem.locate(1024) == l1(2, 0), "page 1024: L1 2 slot 0")?;
    // SGE: pages 1025..1027 in root[3 + 0..2].
    expect(
        m.hem.locate(1025) == Some(BtSlot::Root(3)),
        "page 1025: root[3]",
    )?;
    expect(
        m.hem.locate(1027) == Some(BtSlot::Root(5)),
        "page 1027: root[5]",
    )?;
    // RQ: 1028 + 511 = 1539 last of L1 #3; 1540 first of #4; 1627 = 1028 +
    // 599 = 1028 + 512 + 87.
    expect(m.hem.locate(1028) == l1(3, 0), "page 1028: L1 3 slot 0")?;
    expect(m.hem.locate(1539) == l1(3, 511), "page 1539: L1 3 slot 511")?;
    expect(m.hem.locate(1540) == l1(4, 0), "page 1540: L1 4 slot 0")?;
    expect(m.hem.locate(1627) == l1(4, 87), "page 1627: L1 4 slot 87")?;
    expect(m.hem.locate(1628).is_none(), "page 1628: none")?;
    // Runs (C's find_mtt count: the entries left in the bottom BT that
    // holds the page): to the end of the L1 page or of the region.
    let run = |p: u32| m.hem.locate_run(p);
    expect(run(0) == l1(0, 0).map(|s| (s, 512)), "run at 0: 512")?;
    expect(run(511) == l1(0, 511).map(|s| (s, 1)), "run at 511: 1")?;
    expect(
        run(1024) == l1(2, 0).map(|s| (s, 1)),
        "run at 1024: SQ's last page",
    )?;
    expect(
        run(1025) == Some((BtSlot::Root(3), 3)),
        "run at 1025: 3 SGE pages",
    )?;
    expect(run(1027) == Some((BtSlot::Root(5), 1)), "run at 1027: 1")?;
    expect(run(1540) == l1(4, 0).map(|s| (s, 88)), "run at 1540: 88")?;
    expect(run(1600) == l1(4, 60).map(|s| (s, 28)), "run at 1600: 28")?;
    expect(run(1628).is_none(), "run at 1628: none")?;
    // A small unit (BT pages of 64 B, unit 8) with the same shape:
    // [0+10 h2, 10+3 h1, 13+5 h2] -> root ceil(10/8) = 2, 3, ceil(5/8) = 1
    // = 6 <= 8.
    let small = [br(0, 10, 2), br(10, 3, 1), br(13, 5, 2)];
    let h = HemList::request(&small, 6).map_err(|_| "unit 8")?;
    expect(
        h.unit == 8 && h.root_len == 6 && h.l1_len == 3,
        "unit 8: 6 root entries, 3 L1 pages",
    )?;
    expect(h.locate(9) == l1(1, 1), "unit 8 page 9: L1 1 slot 1")?;
    expect(
        h.locate(12) == Some(BtSlot::Root(4)),
        "unit 8 page 12: root[4]",
    )?;
    expect(h.locate(17) == l1(2, 4), "unit 8 page 17: L1 2 slot 4")?;
    expect(h.l1_root(2) == Some(5), "unit 8: RQ L1 in root[5]")
}

/// The root BT's limit: ENOBUFS from `hem_list_request`, growth of the BT
/// page by `cal_best_bt_pg_sz`, ERANGE when no size of the cap fits.
pub fn check_mtr_root_limits() -> Check {
    // One hop-1 region fills the 512 root entries exactly; 513 overflow.
    let h = HemList::request(&[br(0, 512, 1)], 12).map_err(|_| "512 hop-1 pages")?;
    expect(h.root_len == 512, "512 hop-1 pages: full root")?;
    expect(
        h.locate(511) == Some(BtSlot::Root(511)),
        "page 511: root[511]",
    )?;
    expect(
        HemList::request(&[br(0, 513, 1)], 12) == Err(MtrError::NoBufs),
        "513 hop-1 pages: ENOBUFS",
    )?;
    // Hop 2: 512 * 512 = 262144 pages need 512 L1 pages; one more page
    // needs 513.
    let h = HemList::request(&[br(0, 262144, 2)], 12).map_err(|_| "262144 hop-2 pages")?;
    expect(h.root_len == 512 && h.l1_len == 512, "262144 pages: 512 L1")?;
    expect(
        h.locate(262143) == l1(511, 511),
        "page 262143: L1 511 slot 511",
    )?;
    expect(
        HemList::request(&[br(0, 262145, 2)], 12) == Err(MtrError::NoBufs),
        "262145 hop-2 pages: ENOBUFS",
    )?;
    // Three regions that together overflow: 2 + 509 + 2 = 513.
    expect(
        HemList::request(&[br(0, 600, 2), br(600, 509, 1), br(1109, 513, 2)], 12)
            == Err(MtrError::NoBufs),
        "regions together: ENOBUFS",
    )?;
    // cal_best_bt_pg_sz: 512 hop-1 pages fill bit 12's 512 entries exactly
    // (`ba_num <= ba_per_bt`), as do 262144 hop-2 pages (512 L1 pages).
    expect(
        best_bt_pg_sz(&[br(0, 512, 1)], 12, CAP_ALL) == Some(12),
        "512 pages: 4 KiB",
    )?;
    expect(
        best_bt_pg_sz(&[br(0, 262144, 2)], 12, CAP_ALL) == Some(12),
        "262144 hop-2 pages: 4 KiB",
    )?;
    // 513 hop-1 pages do not fit 512 (bit 12); bit 13 gives 1024 >= 513.
    expect(
        best_bt_pg_sz(&[br(0, 513, 1)], 12, CAP_ALL) == Some(13),
        "513 pages: BT page grows to 8 KiB",
    )?;
    // Without bit 13 the next set bit is 14 (2048 entries).
    expect(
        best_bt_pg_sz(&[br(0, 513, 1)], 12, (1 << 12) | (1 << 14)) == Some(14),
        "513 pages, no bit 13: 16 KiB",
    )?;
    expect(
        best_bt_pg_sz(&[br(0, 513, 1)], 12, 1 << 12).is_none(),
        "513 pages, only 4 KiB: none",
    )?;
    // Hop 2, 262145 pages: bit 12 needs 513; bit 13: ceil(262145/1024) =
    // 257 <= 1024.
    expect(
        best_bt_pg_sz(&[br(0, 262145, 2)], 12, CAP_ALL) == Some(13),
        "262145 hop-2 pages: 8 KiB",
    )?;
    // The scan starts at the given shift even if its bit is clear (11 ->
    // 12), and finds nothing past bit 27.
    expect(
        best_bt_pg_sz(&[br(0, 1, 1)], 11, CAP_ALL) == Some(12),
        "shift 11 -> 12",
    )?;
    expect(
        best_bt_pg_sz(&[br(0, 1, 1)], 28, CAP_ALL).is_none(),
        "shift 28: no bit left",
    )?;
    // hns-sim's cap has bits 28..=31 too; bit 31 still fits C's unsigned
    // int (2^31 / 8 entries), and nothing is tried past it.
    expect(
        best_bt_pg_sz(&[br(0, 1, 1)], 28, CAP_SIM) == Some(28),
        "shift 28, sim cap: 28",
    )?;
    expect(
        best_bt_pg_sz(&[br(0, 1, 1)], 32, u64::MAX).is_none(),
        "bits 32 and up: never",
    )?;
    // Through hns_roce_mtr_create: 513 pages of 4 KiB, hop 1.
    let m = MtrLayout::new(&[attr(513 * 4096, 1)], 12, 12, CAP_ALL).map_err(|_| "grown")?;
    expect(
        m.hem.ba_pg_shift == 13 && m.hem.unit == 1024 && m.hem.root_len == 513,
        "513 pages: 8 KiB BT, 513 root entries",
    )?;
    expect(
        MtrLayout::new(&[attr(513 * 4096, 1)], 12, 12, 1 << 12) == Err(MtrError::Range),
        "513 pages, 4 KiB only: ERANGE",
    )
}

/// Region sizes, hop numbers and the errors of `mtr_init_buf_cfg`.
pub fn check_mtr_regions_and_hops() -> Check {
    // hr_hw_page_align: 100 B -> 4096 -> 1 page; 8 KiB pages: 12288 B ->
    // 2 pages; an empty region gets hop 0 (to_hr_hem_hopnum), 0xff too.
    let r = init_buf_cfg(&[attr(100, 1)], 12).map_err(|_| "100 B")?;
    expect(r.as_slice() == [br(0, 1, 1)], "100 B: one page")?;
    let r = init_buf_cfg(&[attr(12288, 2)], 13).map_err(|_| "8K pages")?;
    expect(r.as_slice() == [br(0, 2, 2)], "12 KiB in 8 KiB pages: 2")?;
    let r = init_buf_cfg(&[attr(8192, 2), attr(0, 1), attr(4096, HOP_NUM_0)], 12)
        .map_err(|_| "empty and 0xff")?;
    expect(
        r.as_slice() == [br(0, 2, 2), br(2, 0, 0), br(2, 1, 0)],
        "empty region hop 0, 0xff -> 0",
    )?;
    // An empty middle region takes no root entry: [SQ L1, RQ L1].
    let m = MtrLayout::new(&[attr(8192, 2), attr(0, 1), attr(8192, 2)], 12, 12, CAP_ALL)
        .map_err(|_| "empty SGE")?;
    expect(
        m.hem.regions()
            == [
                rbt(br(0, 2, 2), 0, 1, 0, 1),
                rbt(br(2, 0, 0), 1, 0, 1, 0),
                rbt(br(2, 2, 2), 1, 1, 1, 1),
            ],
        "empty SGE: RQ L1 in root[1]",
    )?;
    expect(m.hem.root_len == 2, "empty SGE: 2 root entries")?;
    expect(m.hem.locate(2) == l1(1, 0), "empty SGE: page 2 is RQ's")?;
    // One region (EQ / CQ): hop 1 -> root[page], hop 2 -> L1 0.
    let m = MtrLayout::new(&[attr(4096, 1)], 12, 12, 1 << 12).map_err(|_| "EQ")?;
    expect(
        m.hem.root_len == 1 && m.hem.l1_len == 0 && m.hem.locate(0) == Some(BtSlot::Root(0)),
        "one hop-1 page",
    )?;
    let m = MtrLayout::new(&[attr(3 * 4096, 2)], 12, 12, 1 << 12).map_err(|_| "CQ")?;
    expect(
        m.hem.root_len == 1 && m.hem.l1_len == 1 && m.hem.locate(2) == l1(0, 2),
        "three hop-2 pages",
    )?;
    // hem_list_calc_ba_range and calc_root_ba for hop 3 (unit^2 pages per
    // root entry): 262145 pages -> 2.
    expect(calc_ba_range(1, 0, 512) == 512, "range 1/0")?;
    expect(calc_ba_range(2, 0, 512) == 262144, "range 2/0")?;
    expect(calc_ba_range(2, 1, 512) == 512, "range 2/1")?;
    expect(calc_ba_range(3, 1, 512) == 262144, "range 3/1")?;
    expect(calc_ba_range(3, 2, 512) == 512, "range 3/2")?;
    expect(calc_ba_range(2, 2, 512) == 0, "range 2/2")?;
    expect(calc_root_ba(&[br(0, 262145, 3)], 512) == 2, "root hop 3")?;
    expect(
        calc_root_ba(&[br(0, 5, 0), br(5, 5, 1), br(10, 513, 2)], 512) == 7,
        "root: hop 0 none, hop 1 5, hop 2 ceil(513/512) = 2",
    )?;
    // Errors: region count, page shift (is_buf_attr_valid).
    expect(
        init_buf_cfg(&[], 12) == Err(MtrError::Inval),
        "no region: EINVAL",
    )?;
    expect(
        init_buf_cfg(&[attr(4096, 1); MAX_BT_REGION + 1], 12) == Err(MtrError::Inval),
        "4 regions: EINVAL",
    )?;
    expect(
        init_buf_cfg(&[attr(4096, 1)], 11) == Err(MtrError::Inval),
        "page shift 11: EINVAL",
    )?;
    // Hops: above 3 rejected (hem_list_alloc_mid_bt), every region of hop
    // 0 (direct kernel buffer) not supported.
    expect(
        MtrLayout::new(&[attr(8192, 4)], 12, 12, CAP_ALL) == Err(MtrError::Inval),
        "hop 4: EINVAL",
    )?;
    expect(
        MtrLayout::new(&[attr(8192, 0)], 12, 12, CAP_ALL) == Err(MtrError::Inval),
        "direct mode: EINVAL",
    )?;
    expect(
        MtrLayout::new(&[attr(8192, HOP_NUM_0), attr(4096, 0)], 12, 12, CAP_ALL)
            == Err(MtrError::Inval),
        "direct mode (0xff): EINVAL",
    )?;
    expect(
        MtrLayout::new(&[attr(0, 2)], 12, 12, CAP_ALL) == Err(MtrError::Inval),
        "no pages: EINVAL",
    )?;
    expect(
        HemList::request(&[br(0, 0, 0)], 12) == Err(MtrError::NoMem),
        "empty root: ENOMEM",
    )?;
    // mtr_map_bufs: two 2 KiB regions need 1 + 1 pages, hns_roce_buf_alloc
    // made ceil(4096 / 4096) = 1.
    expect(
        MtrLayout::new(&[attr(2048, 1), attr(2048, 1)], 12, 12, CAP_ALL) == Err(MtrError::NoBufs),
        "short kernel buffer: ENOBUFS",
    )
}

/// A umem of `length` bytes at user address `address`, I/O address `iova`,
/// on a 4 KiB-page kernel.
fn umem(address: u64, iova: u64, length: u64) -> UmemShape {
    UmemShape {
        address,
        iova,
        length,
        kernel_page_shift: 12,
    }
}

/// User MTRs (`hns_roce_mtr_create` with udata), worked out by hand from
/// `ib_umem_num_dma_blocks`, `get_best_hop_num` and `mtr_init_buf_cfg`, on
/// the PBL BT pages of HIP09 (16 KiB: 2048 addresses) and the MRs of the
/// user-object workload (4 KiB, 2 MiB, 64 MiB).
pub fn check_user_mtr() -> Check {
    // ib_umem_num_dma_blocks: iova aligned down, end aligned up.
    expect(num_dma_blocks(0x1000, 0x1000, 0x1000) == 1, "one page")?;
    expect(num_dma_blocks(0x1800, 0x1000, 0x1000) == 2, "straddling")?;
    expect(
        num_dma_blocks(0x20_0000, 0x20_0000, 0x20_0000) == 1,
        "2 MiB huge page",
    )?;
    expect(
        num_dma_blocks(0x1000, 0x1000, 0x1800) == 0,
        "not a power of two",
    )?;
    // get_best_hop_num, 16 KiB BT pages: 1 page -> 0, 2048 -> 1, 2049 ->
    // 2, 2048^2 -> 2, one more -> 3, 2048^3 + 1 -> none.
    expect(best_hop_num(1, 14) == Some(0), "1 page: hop 0")?;
    expect(best_hop_num(2, 14) == Some(1), "2 pages: hop 1")?;
    expect(best_hop_num(2048, 14) == Some(1), "2048: hop 1")?;
    expect(best_hop_num(2049, 14) == Some(2), "2049: hop 2")?;
    expect(best_hop_num(16384, 14) == Some(2), "64 MiB of 4 KiB: hop 2")?;
    expect(best_hop_num(2048 * 2048 + 1, 14) == Some(3), "past hop 2")?;
    expect(best_hop_num(2048u64.pow(3) + 1, 14).is_none(), "past hop 3")?;
    // PBL: one page per DMA block, whatever the size says.
    let u = umem(0x7f00_0000_0800, 0x7f00_0000_0800, 0x1000);
    let r = init_user_buf_cfg(&[attr(0x1000, 1)], 12, true, &u).map_err(|_| "pbl")?;
    expect(
        r.as_slice() == [br(0, 2, 1)],
        "PBL 4 KiB off a page: 2 blocks",
    )?;
    // Queue buffer: the first region grows by the offset into its page.
    let u = umem(0x7f00_0000_0040, 0x7f00_0000_0040, 0x2000);
    let r = init_user_buf_cfg(&[attr(0x2000, 2)], 12, false, &u).map_err(|_| "cq")?;
    expect(
        r.as_slice() == [br(0, 3, 2)],
        "8 KiB + 64 B offset: 3 pages",
    )?;
    // A one-page MR is direct: no BT, the BT page size is the page size.
    let u = umem(0x10_0000, 0x10_0000, 0x1000);
    let m =
        UserMtrLayout::new(&[attr(0x1000, 0)], 12, 14, CAP_SIM, true, &u).map_err(|_| "direct")?;
    expect(
        m.direct && m.ba_pg_shift == 12 && m.page_count() == 1 && m.hem.root_len == 0,
        "4 KiB MR: direct",
    )?;
    // 2 MiB of 4 KiB pages: hop 1, 512 root entries in one 16 KiB page.
    let u = umem(0x20_0000, 0x20_0000, 0x20_0000);
    let m =
        UserMtrLayout::new(&[attr(0x20_0000, 1)], 12, 14, CAP_SIM, true, &u).map_err(|_| "2M")?;
    expect(
        !m.direct && m.ba_pg_shift == 14 && m.hem.root_len == 512 && m.hem.l1_len == 0,
        "2 MiB: hop 1, 512 root entries",
    )?;
    // 64 MiB of 4 KiB pages: hop 2, 8 L1 pages of 2048 entries.
    let u = umem(0x400_0000, 0x400_0000, 0x400_0000);
    let m =
        UserMtrLayout::new(&[attr(0x400_0000, 2)], 12, 14, CAP_SIM, true, &u).map_err(|_| "64M")?;
    expect(
        m.hem.root_len == 8 && m.hem.l1_len == 8 && m.hem.locate(2049) == l1(1, 1),
        "64 MiB: 8 L1 pages, page 2049 in L1 1 slot 1",
    )?;
    // A umem shorter than the regions: ENOBUFS (mtr_map_bufs).
    let u = umem(0x10_0000, 0x10_0000, 0x1000);
    expect(
        UserMtrLayout::new(&[attr(0x2000, 1)], 12, 14, CAP_SIM, false, &u) == Err(MtrError::NoBufs),
        "short umem: ENOBUFS",
    )?;
    // Direct over two pages is not supported (C checks contiguity).
    let u = umem(0x10_0000, 0x10_0000, 0x2000);
    expect(
        UserMtrLayout::new(&[attr(0x2000, 0)], 12, 14, CAP_SIM, true, &u) == Err(MtrError::Inval),
        "direct, 2 pages: EINVAL",
    )
}

/// A kernel QP buffer with hop 3, hop 0 and hop 1 regions (hns-sim's
/// hip08 boot caps: wqe_sq_hop_num 3, wqe_sge_hop_num 0, wqe_rq_hop_num
/// 1), worked out from `hns_roce_hem_list_request`: the SQ's L1 page in
/// root[0] (`setup_middle_bt`, step `unit * unit`), its L2 page in the L1
/// page's entry 0 (`hem_list_alloc_mid_bt`'s link), the SGE pages in a BT
/// of their own that takes no root entry (`alloc_fake_root_bt` with hop
/// 0), the RQ pages in root[1..].
pub fn check_mtr_hop3_hop0() -> Check {
    // SQ 8 KiB (2 pages), SGE 4 KiB (1 page), RQ 8 KiB (2 pages).
    let attrs = [attr(8192, 3), attr(4096, 0), attr(8192, 1)];
    let regions = init_buf_cfg(&attrs, 12).map_err(|_| "hop 3/0/1 regions")?;
    let want = [br(0, 2, 3), br(2, 1, 0), br(3, 2, 1)];
    expect(regions.as_slice() == want, "hop 3/0/1 regions")?;
    // Root: SQ ceil(2 / 512^2) = 1, SGE none, RQ 2.
    expect(calc_root_ba(&want, 512) == 3, "hop 3/0/1: 3 root entries")?;
    expect(
        best_bt_pg_sz(&want, 12, CAP_SIM) == Some(12),
        "hop 3/0/1: BT pages stay 4 KiB",
    )?;
    let m = MtrLayout::new(&attrs, 12, 12, CAP_SIM).map_err(|_| "hop 3/0/1 layout")?;
    let h = &m.hem;
    // BT pages: SQ L1 #0, SQ L2 #1, SGE's own BT #2.
    expect(
        h.root_len == 3 && h.l1_len == 3 && h.page_count == 5,
        "hop 3/0/1: 3 root entries, 3 BT pages, 5 pages",
    )?;
    expect(
        h.regions()
            == [
                rbt(want[0], 0, 1, 0, 2),
                rbt(want[1], 1, 0, 2, 1),
                rbt(want[2], 1, 2, 3, 0),
            ],
        "hop 3/0/1: region BTs",
    )?;
    expect(h.parent(0) == Some(BtSlot::Root(0)), "SQ L1 in root[0]")?;
    expect(h.parent(1) == l1(0, 0), "SQ L2 in L1 entry 0")?;
    expect(h.parent(2).is_none(), "SGE BT linked nowhere")?;
    expect(h.l1_root(1).is_none(), "SQ L2 not in the root")?;
    expect(
        h.bt_entries(0) == Some(512) && h.bt_entries(1) == Some(512) && h.bt_entries(2) == Some(1),
        "BT entries: unit, unit, the SGE's page count",
    )?;
    expect(h.bt_entries(3).is_none(), "no 4th BT page")?;
    expect(
        h.locate_run(0) == Some((BtSlot::L1 { page: 1, slot: 0 }, 2)),
        "SQ page 0: L2 slot 0",
    )?;
    expect(h.locate(1) == l1(1, 1), "SQ page 1: L2 slot 1")?;
    expect(
        h.locate_run(2) == Some((BtSlot::L1 { page: 2, slot: 0 }, 1)),
        "SGE page: own BT",
    )?;
    expect(h.locate(3) == Some(BtSlot::Root(1)), "RQ page 0: root[1]")?;
    expect(h.locate(4) == Some(BtSlot::Root(2)), "RQ page 1: root[2]")?;
    expect(h.locate(5).is_none(), "no page 5")
}

/// A hop-3 region across L1 and L2 page boundaries (a user MR of 16 GiB
/// and one 4 KiB page with 16 KiB BT pages: 2048 entries each), from
/// `hem_list_alloc_mid_bt`: L1 page `j` covers pages `j * 2048^2..`, L2
/// page `k` pages `k * 2048..`, linked from entry `k % 2048` of L1 page
/// `k / 2048`.
pub fn check_mtr_hop3_mr() -> Check {
    let pages = 2048 * 2048 + 1;
    expect(best_hop_num(pages, 14) == Some(3), "16 GiB + 4 KiB: hop 3")?;
    // CAST: fits u32.
    let n = pages as u32;
    let h = HemList::request(&[br(0, n, 3)], 14).map_err(|_| "hop 3 MR")?;
    // 2 L1 pages, 2049 L2 pages.
    expect(
        h.unit == 2048 && h.root_len == 2 && h.l1_len == 2 + 2049,
        "hop 3 MR: 2 root entries, 2 L1 and 2049 L2 pages",
    )?;
    expect(h.parent(1) == Some(BtSlot::Root(1)), "L1 #1 in root[1]")?;
    expect(h.parent(2) == l1(0, 0), "L2 #0 in L1 #0 entry 0")?;
    expect(
        h.parent(2 + 2047) == l1(0, 2047),
        "L2 #2047 in L1 #0 entry 2047",
    )?;
    expect(h.parent(2 + 2048) == l1(1, 0), "L2 #2048 in L1 #1 entry 0")?;
    expect(h.parent(2 + 2049).is_none(), "no L2 #2049")?;
    expect(
        h.locate_run(2048 * 2048)
            == Some((
                BtSlot::L1 {
                    page: 2 + 2048,
                    slot: 0,
                },
                1,
            )),
        "last page: L2 #2048 slot 0, run 1",
    )?;
    expect(
        h.locate_run(2048 * 1024 + 5)
            == Some((
                BtSlot::L1 {
                    page: 2 + 1024,
                    slot: 5,
                },
                2043,
            )),
        "page 2048 * 1024 + 5: L2 #1024 slot 5, run to the L2 page's end",
    )?;
    // The most pages a region can have take 1024 of the 2048 root entries.
    expect(
        calc_root_ba(&[br(0, u32::MAX, 3)], 2048) == 1024,
        "u32::MAX pages: 1024 L1 pages",
    )
}
