// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! SRQ encoding (`core` only): what `hns_roce_v2_post_srq_recv` writes for
//! a kernel SRQ. A receive WR becomes a WQE in a free slot of the WQE
//! buffer (the same data segments as an RQ WQE, `fill_recv_sge_to_wqe`),
//! the slot's number goes into the next entry of the index queue (the
//! engine takes WQEs in index-queue order, not slot order), and the new
//! producer index is published through the record doorbell or, without
//! one, the SRQ doorbell word.

use crate::hns_roce_hw_v2::consts::{db_cmd, srq_lim};
use crate::hns_roce_hw_v2::qpc::{rq_wqe_segs, DataSeg, RqWqeSegs};
use core::iter::FusedIterator;

/// The data segments of the SRQ WQE of `sges`, in slot order
/// (`fill_recv_sge_to_wqe` for an SRQ of `max_gs` segments per WQE of which
/// `rsv_sge` are reserved): the segments that have a length, then on HIP08
/// (`rsv_sge` 1) the reserved terminator and nothing after it (C leaves
/// the rest of the slot as it was), else zeroed segments up to `max_gs`.
/// The caller checks first that `sges` has at most `max_gs - rsv_sge`.
pub fn srq_wqe_segs<I: FusedIterator<Item = DataSeg>>(
    sges: I,
    max_gs: u32,
    rsv_sge: u32,
) -> RqWqeSegs<I> {
    // CAST: at most the caps' SGEs per WQE.
    rq_wqe_segs(sges, max_gs.saturating_sub(rsv_sge) as usize, rsv_sge != 0)
}

/// The index queue entry that names WQE slot `wqe_idx` (`fill_wqe_idx`):
/// the slot number, little-endian, in an entry of
/// [`srq_lim::IDX_QUE_ENTRY_SZ`] bytes (the return type holds both to 4).
// CAST: 4 fits usize.
pub fn idx_entry(wqe_idx: u32) -> [u8; srq_lim::IDX_QUE_ENTRY_SZ as usize] {
    wqe_idx.to_le_bytes()
}

/// Which index queue entry the producer index `head` fills, for a queue of
/// `wqe_cnt` (a power of two) entries.
pub fn idx_slot(head: u32, wqe_cnt: u32) -> u32 {
    head & wqe_cnt.wrapping_sub(1)
}

/// The producer index as the record doorbell holds it
/// (`V2_DB_PRODUCER_IDX_M`: 16 bits).
pub fn record(head: u32) -> u32 {
    head & 0xffff
}

/// The SRQ doorbell of an SRQ without record doorbell (`update_srq_db`):
/// SRQN, SRQ command, producer index.
pub fn srq_doorbell(srqn: u32, head: u32) -> u64 {
    u64::from(srqn & 0xff_ffff) | (db_cmd::SRQ << 24) | (u64::from(record(head)) << 32)
}
