// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Hardware entry memory (HEM) arithmetic (`core` only): hop numbers and
//! the page sizes of the context tables, as the C driver computes them in
//! `calc_pg_sz` and `to_hr_hem_hopnum`.
//!
//! The table manager itself (chunks, refcounts, BT pages) comes with the
//! verbs objects that need it.

/// The hop number meaning "chunks addressed directly, no BT level"
/// (`HNS_ROCE_HOP_NUM_0`).
pub const HOP_NUM_0: u32 = 0xff;
/// Bytes per base address in a BT page.
pub const BA_BYTE_LEN: u64 = 8;

/// HEM table types (`enum hns_roce_hem_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum HemType {
    Qpc = 0,
    Mtpt = 1,
    Cqc = 2,
    Srqc = 3,
    Sccc = 4,
    QpcTimer = 5,
    CqcTimer = 6,
    Gmv = 7,
    Mtt = 8,
    Cqe = 9,
    SrqWqe = 10,
    Idx = 11,
    Irrl = 12,
    Trrl = 13,
}

impl HemType {
    /// Types from MTT on are buffers addressed through per-object BT trees
    /// rather than context tables programmed by mailbox.
    pub fn is_buffer(self) -> bool {
        self >= HemType::Mtt
    }
}

/// The hop number as the hardware's 2-bit field wants it
/// (`to_hr_hem_hopnum`): 0xff becomes 0, and an empty table is 0.
pub fn hw_hopnum(hop: u32, count: u32) -> u32 {
    if count == 0 || hop == HOP_NUM_0 {
        0
    } else {
        hop
    }
}

/// Page-size exponents (over `PAGE_SIZE`) of one table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgSz {
    /// Buffer (chunk) page size exponent.
    pub buf: u32,
    /// BT page size exponent.
    pub ba: u32,
}

/// The smallest page sizes that fit `obj_num` objects of `obj_size` bytes
/// into `bt_num` BTs of `hop` levels (`calc_pg_sz`): context tables grow the
/// buffer pages, buffer types grow the BT pages. `None` for a hop number
/// the driver does not support (the C driver logs and leaves both 0).
///
/// An empty table (`obj_num == 0`) gets 0; the C code would take `ilog2(0)`.
pub fn calc_pg_sz(
    obj_num: u32,
    obj_size: u32,
    hop: u32,
    bt_num: u32,
    page_size: u64,
    ty: HemType,
) -> Option<PgSz> {
    if obj_size == 0 {
        return None;
    }
    let per_ba = page_size / BA_BYTE_LEN;
    let per_chunk_default = page_size / u64::from(obj_size);
    let bt = u64::from(bt_num);
    let obj_per_chunk = match hop {
        3 => bt * per_ba * per_ba * per_ba * per_chunk_default,
        2 => bt * per_ba * per_ba * per_chunk_default,
        1 => bt * per_ba * per_chunk_default,
        HOP_NUM_0 => bt * per_chunk_default,
        _ => return None,
    };
    if obj_per_chunk == 0 {
        return None;
    }
    let chunks = u64::from(obj_num).div_ceil(obj_per_chunk);
    let exp = chunks.checked_ilog2().unwrap_or(0);
    Some(if ty.is_buffer() {
        PgSz { buf: 0, ba: exp }
    } else {
        PgSz { buf: exp, ba: 0 }
    })
}
