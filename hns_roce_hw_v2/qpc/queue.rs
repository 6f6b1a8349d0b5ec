// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The queues of a QP (`core` only): the SQ, RQ and extended SGE sizes
//! (`set_rq_size`, `set_kernel_sq_size`/`set_user_sq_size`,
//! `set_ext_sge_param`), the bytes they take in the WQE buffer and the
//! data segments of an RQ WQE (`fill_recv_sge_to_wqe`). Re-exported by
//! `qpc.rs`.

use super::{log2, HW_PAGE_SHIFT};
use crate::hns_roce_hw_v2::consts::inv_sge;
use core::iter::FusedIterator;

/// Queue sizes of a kernel QP (`set_rq_size`, `set_kernel_sq_size`,
/// `set_ext_sge_param` on HIP09 with extended SGEs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueSizes {
    /// SQ WQEs.
    pub sq_wqe_cnt: u32,
    /// Log2 of the SQ WQE size.
    pub sq_wqe_shift: u32,
    /// SGEs per SQ WQE.
    pub sq_max_gs: u32,
    /// Extended SGEs per SQ WQE.
    pub sq_ext_sge_cnt: u32,
    /// Extended SGE entries.
    pub sge_cnt: u32,
    /// RQ WQEs (0 without RQ).
    pub rq_wqe_cnt: u32,
    /// Log2 of the RQ WQE size.
    pub rq_wqe_shift: u32,
    /// SGEs per RQ WQE, the reserved one included.
    pub rq_max_gs: u32,
    /// RQ SGEs per WQE reserved for the terminator (`rq.rsv_sge`: 1 for a
    /// kernel QP on HIP08, else 0); the QP's users get `rq_max_gs` minus
    /// these.
    pub rq_rsv_sge: u32,
    /// Inline data the SQ takes.
    pub max_inline_data: u32,
}

impl QueueSizes {
    /// SGEs a receive WR may have: `rq_max_gs` without the reserved ones
    /// (what the core is told as `max_recv_sge`).
    pub fn rq_usable_sge(&self) -> u32 {
        self.rq_max_gs - self.rq_rsv_sge
    }
}

/// The requested capacities and the device limits that size a QP.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueRequest {
    /// `cap.max_send_wr`.
    pub max_send_wr: u32,
    /// `cap.max_recv_wr`.
    pub max_recv_wr: u32,
    /// `cap.max_send_sge`.
    pub max_send_sge: u32,
    /// `cap.max_recv_sge`.
    pub max_recv_sge: u32,
    /// `cap.max_inline_data`.
    pub max_inline_data: u32,
    /// The QP has an RQ (no SRQ, not XRC).
    pub has_rq: bool,
    /// UD or GSI.
    pub ud: bool,
    /// Extended SGEs (`HNS_ROCE_EXSGE_FLAGS` in the QP's config: every
    /// kernel QP on HIP09, user QPs whose context asked for it).
    pub exsge: bool,
    /// A user QP's SQ as libhns laid it out: `(log_sq_bb_count,
    /// log_sq_stride)` of `hns_roce_ib_create_qp`; `None` for a kernel QP.
    pub user_sq: Option<(u8, u8)>,
    /// The engine is a HIP08 (`proc_rq_sge`): a kernel QP reserves one RQ
    /// SGE per WQE for the terminator, a user QP may ask for one SGE more
    /// than `max_rq_sg` (rounded up to a power of two: libhns reserves it
    /// itself).
    pub hip08: bool,
    /// `caps.max_wqes`, `min_wqes`, `max_sq_sg`, `max_rq_sg`,
    /// `max_sq_inline`, `max_sq_desc_sz`, `max_rq_desc_sz`.
    pub max_wqes: u32,
    /// See `max_wqes`.
    pub min_wqes: u32,
    /// See `max_wqes`.
    pub max_sq_sg: u32,
    /// See `max_wqes`.
    pub max_rq_sg: u32,
    /// See `max_wqes`.
    pub max_sq_inline: u32,
    /// See `max_wqes`.
    pub max_sq_desc_sz: u32,
    /// See `max_wqes`.
    pub max_rq_desc_sz: u32,
}

/// Which check rejected a [`QueueRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// RQ depth or SGEs out of range ("RQ config error").
    RqConfig,
    /// RQ depth above the maximum after rounding.
    RqDepth,
    /// SQ depth or SGEs out of range.
    SqConfig,
    /// SQ depth above the maximum after rounding.
    SqDepth,
    /// User SQ: `1 << log_sq_bb_count` overflows or exceeds the maximum
    /// (no message of its own).
    UserSqCount,
    /// User SQ: stride below 64 bytes or above the largest WQE.
    UserSqStride,
    /// User SQ: more SGEs than the engine takes.
    UserSqSge,
}

/// Smallest SQ WQE of a user QP, log2 (`HNS_ROCE_IB_MIN_SQ_STRIDE`).
const MIN_SQ_STRIDE: u8 = 6;

/// Sizes the queues of a QP: `set_rq_size` (with `proc_rq_sge`), then
/// `set_kernel_sq_size` or `set_user_sq_size`, both with
/// `set_ext_sge_param`.
pub fn queue_sizes(r: &QueueRequest) -> Result<QueueSizes, QueueError> {
    let mut s = QueueSizes::default();
    if r.has_rq {
        let (max_rq_sg, rsv) = match (r.hip08, r.user_sq.is_some()) {
            (false, _) => (r.max_rq_sg, 0),
            (true, true) => (
                r.max_rq_sg
                    .checked_add(1)
                    .and_then(u32::checked_next_power_of_two)
                    .ok_or(QueueError::RqConfig)?,
                0,
            ),
            (true, false) => (r.max_rq_sg, 1),
        };
        if r.max_recv_wr == 0 || r.max_recv_wr > r.max_wqes || r.max_recv_sge > max_rq_sg {
            return Err(QueueError::RqConfig);
        }
        let cnt = r
            .max_recv_wr
            .max(r.min_wqes)
            .checked_next_power_of_two()
            .ok_or(QueueError::RqDepth)?;
        if cnt > r.max_wqes {
            return Err(QueueError::RqDepth);
        }
        s.rq_max_gs = r
            .max_recv_sge
            .max(1)
            .checked_add(rsv)
            .and_then(u32::checked_next_power_of_two)
            .ok_or(QueueError::RqConfig)?;
        s.rq_rsv_sge = rsv;
        s.rq_wqe_shift = log2(r.max_rq_desc_sz.saturating_mul(s.rq_max_gs));
        s.rq_wqe_cnt = cnt;
    }
    let cnt = match r.user_sq {
        Some((count_log, stride)) => {
            let cnt = 1u32
                .checked_shl(u32::from(count_log))
                .filter(|c| *c <= r.max_wqes)
                .ok_or(QueueError::UserSqCount)?;
            let max_stride = r
                .max_sq_desc_sz
                .checked_next_power_of_two()
                .map_or(31, log2);
            if u32::from(stride) > max_stride || stride < MIN_SQ_STRIDE {
                return Err(QueueError::UserSqStride);
            }
            if r.max_send_sge > r.max_sq_sg {
                return Err(QueueError::UserSqSge);
            }
            s.sq_wqe_shift = u32::from(stride);
            cnt
        }
        None => {
            if r.max_send_wr == 0 || r.max_send_wr > r.max_wqes || r.max_send_sge > r.max_sq_sg {
                return Err(QueueError::SqConfig);
            }
            let cnt = r
                .max_send_wr
                .max(r.min_wqes)
                .checked_next_power_of_two()
                .ok_or(QueueError::SqDepth)?;
            if cnt > r.max_wqes {
                return Err(QueueError::SqDepth);
            }
            s.sq_wqe_shift = log2(r.max_sq_desc_sz);
            cnt
        }
    };
    s.sq_wqe_cnt = cnt;
    // Extended SGE parameters.
    let inline = if r.max_inline_data != 0 {
        r.max_inline_data
            .checked_next_power_of_two()
            .unwrap_or(u32::MAX)
            .min(r.max_sq_inline)
    } else {
        0
    };
    let std_sge = if r.ud { 0 } else { 2 };
    let ext_from_sge = if r.max_send_sge > std_sge {
        r.max_send_sge - std_sge
    } else {
        u32::from(r.ud)
    };
    let ext_wqe_sge = if r.exsge {
        let ext_from_inline = if inline == 0 {
            0
        } else {
            let n = inline.checked_next_power_of_two().unwrap_or(u32::MAX) / 16;
            if !r.ud && n <= 2 {
                0
            } else {
                n
            }
        };
        let ext = ext_from_sge.max(ext_from_inline);
        s.sq_ext_sge_cnt = if ext != 0 {
            ext.checked_next_power_of_two().unwrap_or(0)
        } else {
            0
        };
        s.sq_max_gs = (s.sq_ext_sge_cnt + std_sge).max(1).min(r.max_sq_sg);
        s.sq_ext_sge_cnt
    } else {
        s.sq_max_gs = r.max_send_sge.max(1).min(r.max_sq_sg);
        s.sq_ext_sge_cnt = s.sq_max_gs;
        ext_from_sge
    };
    if ext_wqe_sge != 0 {
        let total = cnt
            .saturating_mul(ext_wqe_sge)
            .checked_next_power_of_two()
            .unwrap_or(u32::MAX);
        s.sge_cnt = total.max((1 << HW_PAGE_SHIFT) / 16);
    }
    s.max_inline_data = if r.exsge {
        let sge_num = if r.ud {
            s.sq_ext_sge_cnt
        } else {
            s.sq_ext_sge_cnt.max(2)
        };
        inline.max(sge_num * 16)
    } else {
        inline
    };
    Ok(s)
}

/// Bytes of `count` entries of `1 << shift` bytes rounded up to whole
/// hardware pages (`to_hr_hem_entries_size`).
pub fn entries_size(count: u32, shift: u32) -> usize {
    let bytes = (count as usize) << shift;
    bytes.div_ceil(1 << HW_PAGE_SHIFT) << HW_PAGE_SHIFT
}

/// One data segment of an RQ WQE (`struct hns_roce_v2_wqe_data_seg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataSeg {
    /// Length in bytes.
    pub len: u32,
    /// Local key.
    pub lkey: u32,
    /// Address.
    pub addr: u64,
}

impl DataSeg {
    /// The 16 bytes the engine reads: [`Self::words`] in little-endian.
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        for (d, w) in b.chunks_exact_mut(4).zip(self.words()) {
            d.copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// The four words the engine reads (host order).
    pub fn words(self) -> [u32; 4] {
        // CAST: the two halves of the address.
        [
            self.len,
            self.lkey,
            self.addr as u32,
            (self.addr >> 32) as u32,
        ]
    }
}

/// The segments of one RQ WQE in order (`fill_recv_sge_to_wqe`): the
/// SGEs that have a length, then the reserved terminator (HIP08: `rsv`) or
/// zeros up to `max_sge` segments. `sges` is fused (once it has ended it
/// stays ended), as slice iterators and their adapters are.
pub fn rq_wqe_segs<I: FusedIterator<Item = DataSeg>>(
    sges: I,
    max_sge: usize,
    rsv: bool,
) -> RqWqeSegs<I> {
    RqWqeSegs {
        sges,
        n: 0,
        max_sge,
        rsv,
    }
}

/// Iterator of [`rq_wqe_segs`].
pub struct RqWqeSegs<I> {
    sges: I,
    /// Segments given so far.
    n: usize,
    /// Segments to fill with zeros up to; 0 once the terminator is out.
    max_sge: usize,
    /// The terminator is still to come.
    rsv: bool,
}

impl<I: FusedIterator<Item = DataSeg>> Iterator for RqWqeSegs<I> {
    type Item = DataSeg;

    fn next(&mut self) -> Option<DataSeg> {
        if let Some(s) = self.sges.find(|s| s.len != 0) {
            self.n += 1;
            return Some(s);
        }
        if self.rsv {
            // One terminator, and nothing after it.
            self.rsv = false;
            self.max_sge = 0;
            return Some(DataSeg {
                len: inv_sge::SGE_LENGTH,
                lkey: inv_sge::LKEY,
                addr: 0,
            });
        }
        if self.n < self.max_sge {
            self.n += 1;
            return Some(DataSeg::default());
        }
        None
    }
}
