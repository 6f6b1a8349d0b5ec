// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `dbwin.rs`: which doorbell offsets lie inside their
//! window. The registers are the ones the C driver rings
//! (`ROCEE_DB_SQ_L_0_REG`, `ROCEE_VF_EQ_DB_CFG0_REG`); the SQ window is
//! HIP09's `mem_base`, one `HNS_ROCE_DWQE_SIZE` page per QP.

use super::{expect, Check};
use crate::dbwin::{db_fits, page_at, REG_WINDOW};

/// `HNS_ROCE_DWQE_SIZE`: the SQ doorbell window's stride.
const STRIDE: usize = 65536;
/// Bytes of a direct WQE.
const DWQE: usize = 64;

/// The registers the driver rings fit; the window's last word fits, the
/// word at its end and unaligned words do not.
pub fn check_reg_doorbells() -> Check {
    expect(db_fits(0x230, REG_WINDOW), "ROCEE_DB_SQ_L_0_REG fits")?;
    expect(db_fits(0x238, REG_WINDOW), "ROCEE_VF_EQ_DB_CFG0_REG fits")?;
    expect(db_fits(REG_WINDOW - 8, REG_WINDOW), "last word fits")?;
    expect(!db_fits(REG_WINDOW, REG_WINDOW), "word at the end refused")?;
    expect(
        !db_fits(REG_WINDOW - 4, REG_WINDOW),
        "straddling word refused",
    )?;
    expect(!db_fits(0x234, REG_WINDOW), "unaligned word refused")?;
    expect(
        !db_fits(usize::MAX - 7, usize::MAX),
        "overflowing end refused",
    )
}

/// Every QP of the window has its page, the next QPN has none; strides
/// that are not a multiple of 8 or smaller than the write are refused.
pub fn check_sq_pages() -> Check {
    let qps = 512u32;
    let window = qps as usize * STRIDE;
    expect(page_at(0, STRIDE, DWQE, window) == Some(0), "QP 0's page")?;
    expect(
        page_at(qps - 1, STRIDE, DWQE, window) == Some((qps as usize - 1) * STRIDE),
        "last QP's page",
    )?;
    expect(
        page_at(qps, STRIDE, DWQE, window).is_none(),
        "QPN past the window",
    )?;
    expect(
        page_at(1, STRIDE, DWQE, STRIDE + DWQE - 1).is_none(),
        "cut-off page",
    )?;
    expect(
        page_at(1, STRIDE, DWQE, STRIDE + DWQE) == Some(STRIDE),
        "just-whole page",
    )?;
    expect(page_at(0, 0, 8, window).is_none(), "zero stride")?;
    expect(page_at(0, 12, 8, window).is_none(), "unaligned stride")?;
    expect(
        page_at(0, 32, DWQE, window).is_none(),
        "stride below the write",
    )?;
    expect(
        page_at(u32::MAX, usize::MAX / 2, 8, usize::MAX).is_none(),
        "overflowing QPN",
    )
}
