// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! CQE decoding (`core` only): which entries software owns, and what the
//! C driver's `hns_roce_v2_poll_one` reads out of one (`fill_send_wc`,
//! `fill_recv_wc`, `get_cqe_status`), as plain values the rdma layer turns
//! into a `struct ib_wc`.
//!
//! The 32-byte and 64-byte CQE share the first 32 bytes; nothing past them
//! is read.

use crate::field::Ctx;
use crate::hns_roce_hw_v2::consts::{cqe_status as st, recv_op, wqe_op};
use crate::hns_roce_hw_v2::fields::{cqe, Cqe};

/// `enum ib_wc_status`, the values C maps CQE statuses to (and the ones it
/// never produces, so that the rdma layer can map the whole enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// `IB_WC_SUCCESS`.
    Success,
    /// `IB_WC_LOC_LEN_ERR`.
    LocLenErr,
    /// `IB_WC_LOC_QP_OP_ERR`.
    LocQpOpErr,
    /// `IB_WC_LOC_PROT_ERR`.
    LocProtErr,
    /// `IB_WC_WR_FLUSH_ERR`.
    WrFlushErr,
    /// `IB_WC_MW_BIND_ERR`.
    MwBindErr,
    /// `IB_WC_BAD_RESP_ERR`.
    BadRespErr,
    /// `IB_WC_LOC_ACCESS_ERR`.
    LocAccessErr,
    /// `IB_WC_REM_INV_REQ_ERR`.
    RemInvReqErr,
    /// `IB_WC_REM_ACCESS_ERR`.
    RemAccessErr,
    /// `IB_WC_REM_OP_ERR`.
    RemOpErr,
    /// `IB_WC_RETRY_EXC_ERR`.
    RetryExcErr,
    /// `IB_WC_RNR_RETRY_EXC_ERR`.
    RnrRetryExcErr,
    /// `IB_WC_REM_ABORT_ERR`.
    RemAbortErr,
    /// `IB_WC_GENERAL_ERR`.
    GeneralErr,
}

/// `enum ib_wc_opcode` values a CQE can give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcOpcode {
    /// `IB_WC_SEND`.
    Send,
    /// `IB_WC_RDMA_WRITE`.
    RdmaWrite,
    /// `IB_WC_RDMA_READ`.
    RdmaRead,
    /// `IB_WC_COMP_SWAP`.
    CompSwap,
    /// `IB_WC_FETCH_ADD`.
    FetchAdd,
    /// `IB_WC_MASKED_COMP_SWAP`.
    MaskedCompSwap,
    /// `IB_WC_MASKED_FETCH_ADD`.
    MaskedFetchAdd,
    /// `IB_WC_REG_MR`.
    RegMr,
    /// `IB_WC_RECV`.
    Recv,
    /// `IB_WC_RECV_RDMA_WITH_IMM`.
    RecvRdmaWithImm,
}

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
    let mut w = [0u32; 16];
    w[0] = word0.to_le();
    let owner = Ctx::<Cqe, 16>::from_le_words(w).read_bool(cqe::OWNER);
    owner != (ci & depth != 0)
}

/// Extra contents of an `ib_wc` (`IB_WC_*` flags of `wc_flags`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WcFlags {
    /// `IB_WC_WITH_IMM`: `imm` is valid.
    pub with_imm: bool,
    /// `IB_WC_WITH_INVALIDATE`: `invalidate_rkey` is valid.
    pub with_inv: bool,
    /// `IB_WC_GRH`: the buffer starts with a GRH.
    pub grh: bool,
    /// `IB_WC_WITH_VLAN`.
    pub with_vlan: bool,
}

/// What one CQE says, as `hns_roce_v2_poll_one` reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The local QP (`CQE_LCL_QPN`).
    pub qpn: u32,
    /// WQE index (`CQE_WQE_IDX`).
    pub wqe_idx: u16,
    /// A send-queue completion (`CQE_S_R` clear).
    pub is_send: bool,
    /// The status from the table.
    pub status: WcStatus,
    /// The raw CQE status.
    pub hw_status: u32,
    /// `CQE_SUB_STATUS` for errors other than flush (else 0): `vendor_err`.
    pub vendor_err: u32,
    /// The opcode, `None` if the table has none for the CQE's (C then
    /// leaves `wc->opcode` as it was; see `opcode_unknown`).
    pub opcode: Option<WcOpcode>,
    /// Bytes: `byte_cnt` for receives and RDMA reads, 8 for atomics,
    /// `None` where C does not set it (other sends).
    pub byte_len: Option<u32>,
    /// Immediate data in host order (the `__be32` of the `ib_wc` is its
    /// big-endian form).
    pub imm: u32,
    /// Invalidated rkey (receive of SEND_WITH_INV).
    pub invalidate_rkey: u32,
    /// Flags.
    pub flags: WcFlags,
    /// Receive: service level.
    pub sl: u8,
    /// Receive: source QP.
    pub src_qp: u32,
    /// Receive: port number (`CQE_PORTN`).
    pub port_num: u8,
    /// Receive: VLAN id, 0xffff without one.
    pub vlan_id: u16,
    /// Receive: network header type (`CQE_PORT_TYPE`, `enum rdma_network_type`).
    pub network_hdr_type: u8,
    /// The QP must be moved to ERR (`flush_cqe`): an error status other
    /// than flush and the vendor-defined general error.
    pub flush_qp: bool,
}

/// Decodes a CQE from its first eight little-endian words.
pub fn decode(words: &[u32; 8]) -> Completion {
    let mut w = [0u32; 16];
    w[..8].copy_from_slice(words);
    let c = Ctx::<Cqe, 16>::from_le_words(w.map(u32::to_le));
    let hw_op = c.read(cqe::OPCODE);
    let is_send = !c.read_bool(cqe::S_R);
    let hw_status = c.read(cqe::STATUS);
    let status = wc_status(hw_status);
    let mut out = Completion {
        qpn: c.read(cqe::LCL_QPN),
        // CAST: a 16-bit field.
        wqe_idx: c.read(cqe::WQE_IDX) as u16,
        is_send,
        status,
        hw_status,
        vendor_err: 0,
        opcode: None,
        byte_len: None,
        imm: 0,
        invalidate_rkey: 0,
        flags: WcFlags::default(),
        sl: 0,
        src_qp: 0,
        port_num: 0,
        vlan_id: 0,
        network_hdr_type: 0,
        flush_qp: false,
    };
    if is_send {
        out.byte_len = match hw_op {
            wqe_op::RDMA_READ => Some(c.read(cqe::BYTE_CNT)),
            wqe_op::ATOM_CMP_AND_SWAP
            | wqe_op::ATOM_FETCH_AND_ADD
            | wqe_op::ATOM_MSK_CMP_AND_SWAP
            | wqe_op::ATOM_MSK_FETCH_AND_ADD => Some(8),
            _ => None,
        };
        out.flags.with_imm = matches!(hw_op, wqe_op::SEND_WITH_IMM | wqe_op::RDMA_WRITE_WITH_IMM);
        out.opcode = send_wc_opcode(hw_op);
    } else {
        out.byte_len = Some(c.read(cqe::BYTE_CNT));
        match hw_op {
            recv_op::RDMA_WRITE_IMM | recv_op::SEND_WITH_IMM => {
                out.flags.with_imm = true;
                out.imm = c.read(cqe::RKEY_IMMTDATA);
            }
            recv_op::SEND_WITH_INV => {
                out.flags.with_inv = true;
                out.invalidate_rkey = c.read(cqe::RKEY_IMMTDATA);
            }
            _ => {}
        }
        out.opcode = recv_wc_opcode(hw_op);
        // CAST: 3-bit fields.
        out.sl = c.read(cqe::SL) as u8;
        out.src_qp = c.read(cqe::RMT_QPN);
        out.flags.grh = c.read_bool(cqe::GRH);
        // CAST: a 3-bit field.
        out.port_num = c.read(cqe::PORTN) as u8;
        if c.read_bool(cqe::VID_VLD) {
            // CAST: a 12-bit field.
            out.vlan_id = c.read(cqe::VID) as u16;
            out.flags.with_vlan = true;
        } else {
            out.vlan_id = 0xffff;
        }
        // CAST: a 2-bit field.
        out.network_hdr_type = c.read(cqe::PORT_TYPE) as u8;
    }
    if !matches!(status, WcStatus::Success | WcStatus::WrFlushErr) {
        out.vendor_err = c.read(cqe::SUB_STATUS);
        out.flush_qp = hw_status != st::GENERAL_ERR;
    }
    out
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
    let mut w = [0u32; 16];
    w[..8].copy_from_slice(words);
    Ctx::<Cqe, 16>::from_le_words(w.map(u32::to_le)).read(cqe::LCL_QPN)
}

/// Word 0 of a CQE moved to another slot by `__hns_roce_v2_cq_clean`: the
/// contents of `src`, the owner bit of the slot's old `dst`.
pub fn moved_word0(src: u32, dst: u32) -> u32 {
    let owner = cqe::OWNER.mask();
    (src & !owner) | (dst & owner)
}
