// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! CQE decoding (`core` only): which entries software owns, and what the
//! C driver's `hns_roce_v2_poll_one` reads out of one (`fill_send_wc`,
//! `fill_recv_wc`, `get_cqe_status`), as plain values the rdma layer turns
//! into a `struct ib_wc`.
//!
//! The 32-byte and 64-byte CQE share the first 32 bytes; nothing past them
//! is read.

use crate::field::Head;
use crate::hns_roce_hw_v2::consts::{cqe_status as st, recv_op, wqe_op};
use crate::hns_roce_hw_v2::fields::{cqe, Cqe};
pub use crate::rdma::wc::{RecvAttrs, Wc, WcFlags, WcOpcode, WcStatus};

/// The CQE status table of `get_cqe_status`; unknown values are general
/// errors.
pub fn wc_status(hw: u32) -> WcStatus {
    use WcStatus::*;
    match hw {
        st::SUCCESS => Success,
        st::LOCAL_LENGTH_ERR => LocLenErr,
        st::LOCAL_QP_OP_ERR => LocQpOpErr,
        st::LOCAL_PROT_ERR => LocProtErr,
        st::WR_FLUSH_ERR => WrFlushErr,
        st::MW_BIND_ERR => MwBindErr,
        st::BAD_RESP_ERR => BadRespErr,
        st::LOCAL_ACCESS_ERR => LocAccessErr,
        st::REMOTE_INVAL_REQ_ERR => RemInvReqErr,
        st::REMOTE_ACCESS_ERR => RemAccessErr,
        st::REMOTE_OP_ERR => RemOpErr,
        st::TRANSPORT_RETRY_EXC_ERR => RetryExcErr,
        st::RNR_RETRY_EXC_ERR => RnrRetryExcErr,
        st::REMOTE_ABORT_ERR => RemAbortErr,
        _ => GeneralErr,
    }
}

/// `to_ib_wc_send_op`: the completion opcode of a send WQE opcode.
pub fn send_wc_opcode(hw: u32) -> Option<WcOpcode> {
    use WcOpcode::*;
    Some(match hw {
        wqe_op::SEND | wqe_op::SEND_WITH_INV | wqe_op::SEND_WITH_IMM => Send,
        wqe_op::RDMA_READ => RdmaRead,
        wqe_op::RDMA_WRITE | wqe_op::RDMA_WRITE_WITH_IMM => RdmaWrite,
        wqe_op::ATOM_CMP_AND_SWAP => CompSwap,
        wqe_op::ATOM_FETCH_AND_ADD => FetchAdd,
        wqe_op::ATOM_MSK_CMP_AND_SWAP => MaskedCompSwap,
        wqe_op::ATOM_MSK_FETCH_AND_ADD => MaskedFetchAdd,
        wqe_op::FAST_REG_PMR => RegMr,
        _ => return None,
    })
}

/// The completion opcode of a receive CQE opcode, as the IB spec wants it
/// (and libhns gives it): a received RDMA WRITE with immediate is
/// `IB_WC_RECV_RDMA_WITH_IMM`, every received SEND is `IB_WC_RECV`.
///
/// Deliberately not C's `to_ib_wc_recv_op`: its table is indexed by the
/// send WQE opcodes (`HNS_ROCE_V2_WQE_OP_*`) and maps to `IB_WC_WITH_IMM`,
/// a `wc_flags` bit (2), so a received RDMA_WRITE_IMM (0) comes out as
/// `IB_WC_RECV`, a SEND_WITH_IMM (2) as opcode 2 (`IB_WC_RDMA_READ`) and a
/// SEND_WITH_INV (3) has no entry (see docs/driver.md).
pub fn recv_wc_opcode(hw: u32) -> Option<WcOpcode> {
    match hw {
        recv_op::RDMA_WRITE_IMM => Some(WcOpcode::RecvRdmaWithImm),
        recv_op::SEND | recv_op::SEND_WITH_IMM | recv_op::SEND_WITH_INV => Some(WcOpcode::Recv),
        _ => None,
    }
}

/// Whether software owns the CQE whose first word is `word0` at consumer
/// index `ci` of a CQ of `depth` entries (`get_sw_cqe_v2`): its owner bit
/// differs from the wrap parity of `ci`.
pub fn sw_owns(word0: u32, ci: u32, depth: u32) -> bool {
    let owner = cqe::OWNER.extract(word0) != 0;
    owner != (ci & depth != 0)
}

/// What one CQE says, as `hns_roce_v2_poll_one` reads it: the work
/// completion for the RDMA core and what the driver itself needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The local QP (`CQE_LCL_QPN`).
    pub qpn: u32,
    /// WQE index (`CQE_WQE_IDX`).
    pub wqe_idx: u16,
    /// The raw CQE status.
    pub hw_status: u32,
    /// The QP must be moved to ERR (`flush_cqe`): an error status other
    /// than flush and the vendor-defined general error.
    pub flush_qp: bool,
    /// The work completion (its receive attributes set for a receive-queue
    /// CQE, `CQE_S_R`; `vendor_err` is `CQE_SUB_STATUS` for errors other
    /// than flush).
    pub wc: Wc,
}

impl Completion {
    /// A send-queue completion.
    pub fn is_send(&self) -> bool {
        self.wc.recv.is_none()
    }
}

/// Decodes a CQE from its first eight words (CPU values). Inline: in the
/// poll loop the compiler then keeps the fields it needs in registers
/// instead of building the whole `Completion` in memory.
#[inline(always)]
pub fn decode(words: &[u32; 8]) -> Completion {
    // Every field the driver reads lies in the first eight words.
    let c = Head::<Cqe>::new(words);
    let hw_op = c.read(cqe::OPCODE);
    let is_send = !c.read_bool(cqe::S_R);
    let hw_status = c.read(cqe::STATUS);
    let mut wc = Wc::new(wc_status(hw_status));
    if is_send {
        wc.byte_len = match hw_op {
            wqe_op::RDMA_READ => Some(c.read(cqe::BYTE_CNT)),
            wqe_op::ATOM_CMP_AND_SWAP
            | wqe_op::ATOM_FETCH_AND_ADD
            | wqe_op::ATOM_MSK_CMP_AND_SWAP
            | wqe_op::ATOM_MSK_FETCH_AND_ADD => Some(8),
            _ => None,
        };
        wc.flags.with_imm = matches!(hw_op, wqe_op::SEND_WITH_IMM | wqe_op::RDMA_WRITE_WITH_IMM);
        wc.opcode = send_wc_opcode(hw_op);
    } else {
        wc.byte_len = Some(c.read(cqe::BYTE_CNT));
        match hw_op {
            recv_op::RDMA_WRITE_IMM | recv_op::SEND_WITH_IMM => {
                wc.flags.with_imm = true;
                wc.imm = c.read(cqe::RKEY_IMMTDATA);
            }
            recv_op::SEND_WITH_INV => {
                wc.flags.with_inv = true;
                wc.invalidate_rkey = c.read(cqe::RKEY_IMMTDATA);
            }
            _ => {}
        }
        wc.opcode = recv_wc_opcode(hw_op);
        wc.flags.grh = c.read_bool(cqe::GRH);
        wc.flags.with_vlan = c.read_bool(cqe::VID_VLD);
        wc.recv = Some(RecvAttrs {
            // CAST: a 3-bit field.
            sl: c.read(cqe::SL) as u8,
            src_qp: c.read(cqe::RMT_QPN),
            // CAST: a 3-bit field.
            port_num: c.read(cqe::PORTN) as u8,
            // CAST: a 12-bit field.
            vlan_id: if wc.flags.with_vlan {
                c.read(cqe::VID) as u16
            } else {
                0xffff
            },
            // CAST: a 2-bit field.
            network_hdr_type: c.read(cqe::PORT_TYPE) as u8,
        });
    }
    let flush_qp = wc.is_error() && hw_status != st::GENERAL_ERR;
    if wc.is_error() {
        wc.vendor_err = c.read(cqe::SUB_STATUS);
    }
    Completion {
        qpn: c.read(cqe::LCL_QPN),
        // CAST: a 16-bit field.
        wqe_idx: c.read(cqe::WQE_IDX) as u16,
        hw_status,
        flush_qp,
        wc,
    }
}

/// `hns_roce_v2_poll_one`'s SQ tail step: with `sq_signal_bits` (only
/// signalled WRs complete) the tail jumps to the completed WQE first.
/// Returns the index into the WR-id array and the new tail.
pub fn sq_tail(tail: u32, wqe_idx: u16, wqe_cnt: u32, sig_requested_only: bool) -> (u32, u32) {
    let mut t = tail;
    if sig_requested_only {
        // CAST: the low 16 bits of the tail, as C compares them.
        let gap = u32::from(wqe_idx.wrapping_sub(tail as u16)) & (wqe_cnt - 1);
        t = t.wrapping_add(gap);
    }
    (t & (wqe_cnt - 1), t.wrapping_add(1))
}

/// Whether a CQE of `qpn` (its `LCL_QPN`) belongs to the QP being cleaned.
pub fn cqe_qpn(words: &[u32; 8]) -> u32 {
    Head::<Cqe>::new(words).read(cqe::LCL_QPN)
}

/// Word 0 of a CQE moved to another slot by `__hns_roce_v2_cq_clean`: the
/// contents of `src`, the owner bit of the slot's old `dst`.
pub fn moved_word0(src: u32, dst: u32) -> u32 {
    let owner = cqe::OWNER.mask();
    (src & !owner) | (dst & owner)
}
