// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Work completions as the RDMA core defines them (`struct ib_wc`), in
//! plain Rust (`core` only, so the host tests build it too).
//!
//! A driver decodes its hardware's completion entries into a [`Wc`]; the
//! layer's `WcArray` writes it into the caller's `ib_wc` array. The enums
//! name every value of `enum ib_wc_status` and the `enum ib_wc_opcode`
//! values a completion of a send or receive queue can carry, so no driver
//! type crosses into the layer.

/// `enum ib_wc_status`.
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

/// The `enum ib_wc_opcode` values of send and receive completions.
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

/// The `wc_flags` bits (`enum ib_wc_flags`) a completion carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WcFlags {
    /// `IB_WC_WITH_IMM`: [`Wc::imm`] is valid.
    pub with_imm: bool,
    /// `IB_WC_WITH_INVALIDATE`: [`Wc::invalidate_rkey`] is valid.
    pub with_inv: bool,
    /// `IB_WC_GRH`: the receive buffer starts with a GRH.
    pub grh: bool,
    /// `IB_WC_WITH_VLAN`.
    pub with_vlan: bool,
}

/// What a receive completion adds: the sender and how the packet came.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvAttrs {
    /// Service level.
    pub sl: u8,
    /// Source QP.
    pub src_qp: u32,
    /// Port number.
    pub port_num: u8,
    /// VLAN id, 0xffff without one.
    pub vlan_id: u16,
    /// `enum rdma_network_type` of the packet's network header.
    pub network_hdr_type: u8,
}

/// One work completion: the `struct ib_wc` members a driver sets, but for
/// the WR id and the QP, which the caller supplies when writing it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wc {
    /// Status.
    pub status: WcStatus,
    /// Vendor error syndrome (`vendor_err`), 0 when there is none.
    pub vendor_err: u32,
    /// The opcode; `None` leaves `ib_wc.opcode` at zero.
    pub opcode: Option<WcOpcode>,
    /// Bytes transferred (`byte_len`); `None` leaves it at zero.
    pub byte_len: Option<u32>,
    /// Immediate data in host order (written big-endian, as `__be32
    /// imm_data` wants), valid with [`WcFlags::with_imm`].
    pub imm: u32,
    /// The invalidated rkey, valid with [`WcFlags::with_inv`].
    pub invalidate_rkey: u32,
    /// `wc_flags`.
    pub flags: WcFlags,
    /// Receive completions only.
    pub recv: Option<RecvAttrs>,
}

impl Wc {
    /// A completion with `status` and nothing else set.
    pub const fn new(status: WcStatus) -> Self {
        Self {
            status,
            vendor_err: 0,
            opcode: None,
            byte_len: None,
            imm: 0,
            invalidate_rkey: 0,
            flags: WcFlags {
                with_imm: false,
                with_inv: false,
                grh: false,
                with_vlan: false,
            },
            recv: None,
        }
    }

    /// Whether the status is neither success nor a flush.
    pub fn is_error(&self) -> bool {
        !matches!(self.status, WcStatus::Success | WcStatus::WrFlushErr)
    }
}
