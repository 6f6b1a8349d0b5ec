// SPDX-License-Identifier: GPL-2.0

//! The software event and error counters of one function (C's `dfx_cnt`),
//! shown by debugfs `sw_stat/sw_stat`.
//!
//! Nineteen counters in the C driver's order, each counted where C counts
//! it: EQEs as the interrupt handlers consume them, every CMQ send attempt
//! (one per ring write, a POST_MB retry included) and the attempts that
//! failed, mailboxes posted, polled to completion and completed by an
//! event, and the failures of the verbs C counts (at the shim's op, where
//! the RDMA core enters the driver). A function's counters live as long as
//! its state (`cmdq::DevState`): a reset's re-init starts from zero, as C frees
//! and allocates `dfx_cnt` with the instance.
//!
//! `core` only: the host tests build this file.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

/// One counter (`enum hns_roce_hw_dfx_cnt`), in the order of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum DfxCnt {
    /// AEQEs consumed.
    Aeqe,
    /// CEQEs consumed.
    Ceqe,
    /// CMQ send attempts.
    Cmds,
    /// CMQ send attempts that failed (timeout or error return code).
    CmdsErr,
    /// Mailboxes posted.
    MbxPosted,
    /// Mailboxes completed in poll mode.
    MbxPolled,
    /// Mailbox completion events with the expected token.
    MbxEvent,
    /// Failed `create_qp`.
    QpCreateErr,
    /// Failed `modify_qp`.
    QpModifyErr,
    /// Failed `create_cq`.
    CqCreateErr,
    /// Failed `modify_cq`.
    CqModifyErr,
    /// Failed `create_srq`.
    SrqCreateErr,
    /// Failed `modify_srq`.
    SrqModifyErr,
    /// Failed `alloc_xrcd`.
    XrcdAllocErr,
    /// Failed `reg_user_mr`.
    MrRegErr,
    /// Failed `rereg_user_mr`.
    MrReregErr,
    /// Failed `create_ah` / `create_user_ah`.
    AhCreateErr,
    /// Failed `mmap`.
    MmapErr,
    /// Failed `alloc_ucontext`.
    UctxAllocErr,
}

/// How many counters (`HNS_ROCE_DFX_CNT_TOTAL`).
pub const DFX_CNT_TOTAL: usize = 19;

impl DfxCnt {
    /// Every counter, in the order of the file.
    pub const ALL: [DfxCnt; DFX_CNT_TOTAL] = [
        DfxCnt::Aeqe,
        DfxCnt::Ceqe,
        DfxCnt::Cmds,
        DfxCnt::CmdsErr,
        DfxCnt::MbxPosted,
        DfxCnt::MbxPolled,
        DfxCnt::MbxEvent,
        DfxCnt::QpCreateErr,
        DfxCnt::QpModifyErr,
        DfxCnt::CqCreateErr,
        DfxCnt::CqModifyErr,
        DfxCnt::SrqCreateErr,
        DfxCnt::SrqModifyErr,
        DfxCnt::XrcdAllocErr,
        DfxCnt::MrRegErr,
        DfxCnt::MrReregErr,
        DfxCnt::AhCreateErr,
        DfxCnt::MmapErr,
        DfxCnt::UctxAllocErr,
    ];

    /// The counter at position `i` of the file, if there is one.
    pub fn from_index(i: u32) -> Option<Self> {
        // CAST: `u32` fits `usize` on the 32- and 64-bit targets.
        Self::ALL.get(i as usize).copied()
    }

    /// Its name in the file (`sw_stat_info`).
    pub fn name(self) -> &'static str {
        match self {
            DfxCnt::Aeqe => "aeqe",
            DfxCnt::Ceqe => "ceqe",
            DfxCnt::Cmds => "cmds",
            DfxCnt::CmdsErr => "cmds_err",
            DfxCnt::MbxPosted => "posted_mbx",
            DfxCnt::MbxPolled => "polled_mbx",
            DfxCnt::MbxEvent => "mbx_event",
            DfxCnt::QpCreateErr => "qp_create_err",
            DfxCnt::QpModifyErr => "qp_modify_err",
            DfxCnt::CqCreateErr => "cq_create_err",
            DfxCnt::CqModifyErr => "cq_modify_err",
            DfxCnt::SrqCreateErr => "srq_create_err",
            DfxCnt::SrqModifyErr => "srq_modify_err",
            DfxCnt::XrcdAllocErr => "xrcd_alloc_err",
            DfxCnt::MrRegErr => "mr_reg_err",
            DfxCnt::MrReregErr => "mr_rereg_err",
            DfxCnt::AhCreateErr => "ah_create_err",
            DfxCnt::MmapErr => "mmap_err",
            DfxCnt::UctxAllocErr => "uctx_alloc_err",
        }
    }
}

/// The counters of one function, zero at creation.
pub struct SwStat([AtomicU64; DFX_CNT_TOTAL]);

impl Default for SwStat {
    fn default() -> Self {
        Self::new()
    }
}

impl SwStat {
    /// All zero (`hns_roce_alloc_dfx_cnt`).
    pub const fn new() -> Self {
        SwStat([const { AtomicU64::new(0) }; DFX_CNT_TOTAL])
    }

    /// Counts one `c`; any context, interrupts included.
    #[inline]
    pub fn inc(&self, c: DfxCnt) {
        // CAST: the discriminants are 0..DFX_CNT_TOTAL.
        if let Some(a) = self.0.get(c as usize) {
            a.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one `c` if `failed`.
    #[inline]
    pub fn inc_if(&self, c: DfxCnt, failed: bool) {
        if failed {
            self.inc(c);
        }
    }

    /// The value of `c`.
    pub fn get(&self, c: DfxCnt) -> u64 {
        // CAST: as in `inc`.
        self.0
            .get(c as usize)
            .map_or(0, |a| a.load(Ordering::Relaxed))
    }

    /// The text of the debugfs file (`sw_stat_debugfs_show`): one line
    /// per counter, the name left-aligned in 20 columns, ` --- `, the
    /// value as C's signed 64-bit `%lld`.
    pub fn show(&self, f: &mut impl fmt::Write) -> fmt::Result {
        for c in DfxCnt::ALL {
            // CAST: C prints the atomic64_t as signed; the same bits.
            writeln!(f, "{:<20} --- {}", c.name(), self.get(c) as i64)?;
        }
        Ok(())
    }
}
