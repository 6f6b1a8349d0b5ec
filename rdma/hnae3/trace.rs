// SPDX-License-Identifier: GPL-2.0+

//! The `hns_roce` trace events (`bindings/hns_roce_trace.h`, instantiated
//! in `bindings/trace.c`): the C driver's ten events under the same names,
//! fields and formats.
//!
//! The events are C tracepoints of this module; the kernel crate's
//! `declare_trace!` expects them in the kernel's own bindings, so the calls
//! go through the shim, which tests each event's static key first. A site
//! whose arguments cost something to gather (the WQE and AEQE words) asks
//! [`enabled`] first, once per call of the verb.

use crate::rdma::raw;
use kernel::{device::Device, str::CStrExt};

/// Words a WQE event records at most (64 SGEs of 16 bytes).
// CAST: 256 fits `usize`.
pub(crate) const WQE_WORDS: usize = raw::HNS_SHIM_TRACE_WQE_WORDS as usize;

/// The queue a WQE or flush event is about (C's `enum hns_roce_trace_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Queue {
    /// Send queue.
    Sq = 0,
    /// Receive queue.
    Rq = 1,
    /// Shared receive queue.
    Srq = 2,
}

/// An event whose arguments are worth not gathering while it is off.
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub(crate) enum Costly {
    /// `hns_sq_wqe`.
    SqWqe = raw::hns_shim_trace_ev_HNS_SHIM_TRACE_SQ_WQE,
    /// `hns_rq_wqe`.
    RqWqe = raw::hns_shim_trace_ev_HNS_SHIM_TRACE_RQ_WQE,
    /// `hns_srq_wqe`.
    SrqWqe = raw::hns_shim_trace_ev_HNS_SHIM_TRACE_SRQ_WQE,
    /// `hns_ae_info`.
    AeInfo = raw::hns_shim_trace_ev_HNS_SHIM_TRACE_AE_INFO,
}

/// Whether event `ev` is on (someone listens).
#[inline]
pub(crate) fn enabled(ev: Costly) -> bool {
    // SAFETY: reads the event's static key; no argument is a pointer.
    unsafe { raw::hns_shim_trace_enabled(ev as u32) }
}

/// `hns_sq_wqe`/`hns_rq_wqe`/`hns_srq_wqe`: WQE `idx` of queue number `qpn`
/// (the SRQN for an SRQ), `bytes` long, of which `words` were read (CPU
/// order), posted for WR `wr_id`.
pub(crate) fn wqe(queue: Queue, qpn: u32, idx: u32, words: &[u32], bytes: u32, wr_id: u64) {
    // The event records at most the words it is given.
    // CAST: a WQE's word count is far below `u32::MAX / 4`.
    let len = bytes.min((words.len() as u32).saturating_mul(4));
    // SAFETY: `words` is valid for `len` bytes, which the event copies
    // before the call returns.
    unsafe { raw::hns_shim_trace_wqe(queue as u32, qpn, idx, words.as_ptr(), len, wr_id) }
}

/// `hns_sq_flush_cqe`/`hns_rq_flush_cqe`: QP `qpn` moves to ERR with
/// producer index `pi` on `queue` (`Sq` or `Rq`).
pub(crate) fn flush(queue: Queue, qpn: u32, pi: u32) {
    // SAFETY: plain values.
    unsafe { raw::hns_shim_trace_flush(queue as u32, qpn, pi) }
}

/// `hns_ae_info`: an AEQE of type `event` whose words (CPU order) are
/// `words`.
pub(crate) fn ae(event: u32, words: &[u32]) {
    // CAST: at most 16 words; the event type is a byte.
    let len = (words.len() as u32).saturating_mul(4);
    // SAFETY: `words` is valid for `len` bytes, copied before the return.
    unsafe { raw::hns_shim_trace_ae(event as i32, words.as_ptr(), len) }
}

/// What `hns_mr` records of an MR as it is enabled.
pub(crate) type MrTrace = raw::hns_rs_trace_mr;

/// [`MrTrace::type_`] of a memory region (user MR).
// CAST: the C driver's enum values (0, 1 and 3) fit i32.
pub(crate) const MR_TYPE_MR: i32 = raw::HNS_SHIM_TRACE_MR_MR as i32;
/// [`MrTrace::type_`] of a fast-register MR.
pub(crate) const MR_TYPE_FRMR: i32 = raw::HNS_SHIM_TRACE_MR_FRMR as i32;
/// [`MrTrace::type_`] of a DMA MR.
pub(crate) const MR_TYPE_DMA: i32 = raw::HNS_SHIM_TRACE_MR_DMA as i32;

/// `hns_mr`: an MR about to be written to the engine.
pub(crate) fn mr(m: &MrTrace) {
    // SAFETY: `m` is valid for the call.
    unsafe { raw::hns_shim_trace_mr(m) }
}

/// `hns_buf_attr`: a buffer about to be created with `regions` (bytes and
/// hop number each, at most three), pages of `1 << page_shift` bytes, and
/// only a page table of its own if `mtt_only`.
#[inline(never)]
pub(crate) fn buf_attr(regions: &[(u32, i32)], page_shift: u32, mtt_only: bool) {
    let mut a = raw::hns_rs_trace_buf_attr {
        page_shift,
        mtt_only,
        ..Default::default()
    };
    for (i, (size, hop)) in regions.iter().take(3).enumerate() {
        a.size[i] = *size;
        a.hopnum[i] = *hop;
        a.region_count += 1;
    }
    // SAFETY: `a` is valid for the call.
    unsafe { raw::hns_shim_trace_buf_attr(&a) }
}

/// `hns_cmdq_req` (`resp` false) or `hns_cmdq_resp`: a command queue
/// descriptor of function `dev` with its six payload words in CPU order.
pub(crate) fn cmdq(resp: bool, dev: &Device, opcode: u16, flag: u16, retval: u16, data: &[u32; 6]) {
    // SAFETY: the name is a NUL-terminated string and `data` six words,
    // both valid for the call, which copies them.
    unsafe {
        raw::hns_shim_trace_cmdq(
            resp,
            dev.name().as_char_ptr(),
            opcode,
            flag,
            retval,
            data.as_ptr(),
        )
    }
}
