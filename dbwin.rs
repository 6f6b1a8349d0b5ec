// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Where a doorbell may be written in a mapped window, in plain Rust
//! (`core` only, so the host tests build it too).
//!
//! A doorbell is one 64-bit write: its offset is a multiple of 8 and the
//! whole word lies inside the window. The typed offsets of `rdma/hnae3.rs`
//! (`DbOffset`, `SqDb`) are made only through these checks, so that the
//! writes through them cannot fall outside the window.

/// Bytes of the register window the driver touches (up to the per-EQ
/// interrupt enable registers at 0x1300c + 4 * n).
pub const REG_WINDOW: usize = 0x14000;

/// Bytes of one doorbell write.
pub const DB_BYTES: usize = 8;

/// Whether a 64-bit doorbell at byte `off` lies inside a window of
/// `window` bytes: 8-aligned, and its last byte before `window`.
pub const fn db_fits(off: usize, window: usize) -> bool {
    if off % DB_BYTES != 0 {
        return false;
    }
    match off.checked_add(DB_BYTES) {
        Some(end) => end <= window,
        None => false,
    }
}

/// The byte offset of the `qpn`-th page of `stride` bytes in a window of
/// `window` bytes, if `bytes` from its start (the 8 of a doorbell, or the
/// 64 of a direct WQE) lie inside the window; `stride` is a non-zero
/// multiple of 8.
pub const fn page_at(qpn: u32, stride: usize, bytes: usize, window: usize) -> Option<usize> {
    if stride == 0 || stride % DB_BYTES != 0 || bytes > stride {
        return None;
    }
    // CAST: u32 to usize widens on the 64-bit targets the driver builds for.
    let Some(off) = (qpn as usize).checked_mul(stride) else {
        return None;
    };
    match off.checked_add(bytes) {
        Some(end) if end <= window => Some(off),
        _ => None,
    }
}
