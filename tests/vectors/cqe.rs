// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! CQE decoding against CQEs the unmodified C driver consumed on hns-sim:
//! the words are `cqe` lines of hns-sim's `--dump-data` file of
//! `tests/guest/dump-plan.sh` on `--driver c` (see there); the expected
//! values are what the workload posted (`wqe_ops.py`: opcodes, lengths,
//! immediate data; QPNs read off the same run's WQE lines).

use super::{expect, Check};
use crate::hns_roce_hw_v2::cqe::*;

/// The status table of `get_cqe_status` (hardware value, `ib_wc_status`),
/// spelled out from the C source: every mapped value, and the general
/// error for the rest.
pub fn check_status_table() -> Check {
    use WcStatus::*;
    let table = [
        (0x00, Success),
        (0x01, LocLenErr),
        (0x02, LocQpOpErr),
        (0x04, LocProtErr),
        (0x05, WrFlushErr),
        (0x06, MwBindErr),
        (0x10, BadRespErr),
        (0x11, LocAccessErr),
        (0x12, RemInvReqErr),
        (0x13, RemAccessErr),
        (0x14, RemOpErr),
        (0x15, RetryExcErr),
        (0x16, RnrRetryExcErr),
        (0x22, RemAbortErr),
        (0x23, GeneralErr),
    ];
    for (hw, want) in table {
        expect(wc_status(hw) == want, "mapped CQE status")?;
    }
    for hw in [0x03, 0x07, 0x0f, 0x17, 0x21, 0x24, 0xff] {
        expect(wc_status(hw) == GeneralErr, "unmapped CQE status")?;
    }
    Ok(())
}

/// The opcode maps of `to_ib_wc_send_op` / `to_ib_wc_recv_op`.
pub fn check_opcode_maps() -> Check {
    use WcOpcode::*;
    let send = [
        (0x0, Some(Send)),
        (0x1, Some(Send)),
        (0x2, Some(Send)),
        (0x3, Some(RdmaWrite)),
        (0x4, Some(RdmaWrite)),
        (0x5, Some(RdmaRead)),
        (0x6, Some(CompSwap)),
        (0x7, Some(FetchAdd)),
        (0x8, Some(MaskedCompSwap)),
        (0x9, Some(MaskedFetchAdd)),
        (0xa, Some(RegMr)),
        (0xb, None),
        (0xc, None),
        (0x1f, None),
    ];
    for (hw, want) in send {
        expect(send_wc_opcode(hw) == want, "send opcode map")?;
    }
    // The IB spec's receive opcodes (not C's table, see `recv_wc_opcode`).
    let recv = [
        (0x0, Some(RecvRdmaWithImm)),
        (0x1, Some(Recv)),
        (0x2, Some(Recv)),
        (0x3, Some(Recv)),
        (0x4, None),
    ];
    for (hw, want) in recv {
        expect(recv_wc_opcode(hw) == want, "receive opcode map")?;
    }
    Ok(())
}

/// Ownership and the SQ tail of `sq_signal_bits`.
pub fn check_owner_and_tail() -> Check {
    // Depth 64: lap 0 entries are software's with the owner bit set.
    expect(sw_owns(0x80, 0, 64), "owner 1, lap 0")?;
    expect(!sw_owns(0x00, 0, 64), "owner 0, lap 0")?;
    expect(sw_owns(0x00, 64, 64), "owner 0, lap 1")?;
    expect(!sw_owns(0x80, 64 + 3, 64), "owner 1, lap 1")?;
    // Every WR signalled: the tail just moves on.
    expect(sq_tail(5, 9, 16, false) == (5, 6), "tail without sig bits")?;
    // Only requested WRs complete: the tail jumps to the WQE, then past it.
    expect(sq_tail(5, 9, 16, true) == (9, 10), "tail jump")?;
    // Across the 16-bit wrap of the CQE's WQE index.
    expect(
        sq_tail(0x1_fffe, 0x0001, 16, true) == (0x1, 0x2_0002),
        "tail jump across the wrap",
    )?;
    // A moved CQE keeps the owner bit of the slot it lands in.
    expect(
        moved_word0(0x0001_0081, 0x0000_0000) == 0x0001_0001,
        "moved owner 0",
    )?;
    expect(
        moved_word0(0x0001_0001, 0x0000_0080) == 0x0001_0081,
        "moved owner 1",
    )
}

/// First eight words of CQEs of the C driver's run (hex words of the
/// `cqe` lines): QP 1's receive of a CM MAD and its send completion
/// (CQ 0), an RC receive of SEND_WITH_IMM (QP 9, CQ 8) and the requester's
/// completion of it (QP 8, CQ 4), an RC receive of RDMA_WRITE_WITH_IMM, an
/// RDMA READ completed with a remote access error, a flushed receive and a
/// flushed CMP_AND_SWAP.
const GSI_RECV: [u32; 8] = [
    0x000000c1, 0, 0, 0x00000001, 0x00000128, 0, 0x00010000, 0x48000001,
];
const GSI_SEND: [u32; 8] = [0x00000080, 0, 0, 0x00000001, 0, 0, 0, 0x08000000];
const RC_RECV_IMM: [u32; 8] = [
    0x000100c2, 0x78563412, 0, 0x00000009, 0x00000008, 0, 0, 0x08000008,
];
const RC_SEND_IMM: [u32; 8] = [0x00010082, 0, 0, 0x00000008, 0, 0, 0, 0x08000009];
const RC_RECV_WRITE_IMM: [u32; 8] = [
    0x000200c0, 0xa5a50000, 0, 0x00000009, 0x00000008, 0, 0, 0x08000008,
];
const RC_READ_ACCESS_ERR: [u32; 8] = [0x00041385, 0, 0, 0x00000008, 0, 0, 0, 0x08000009];
const RC_RECV_FLUSHED: [u32; 8] = [0x000305c1, 0, 0, 0x00000009, 0, 0, 0, 0x08000000];
const RC_CAS_FLUSHED: [u32; 8] = [0x00050586, 0, 0, 0x00000008, 0, 0, 0, 0x08000000];

/// Decoding of the C run's CQEs.
pub fn check_c_cqes() -> Check {
    // A CM MAD into QP 1: 256 bytes behind a 40-byte GRH, from QP 1 (the
    // same device), port 1, network header type 1, no VLAN.
    let c = decode(&GSI_RECV);
    expect(
        (c.qpn, c.wqe_idx, c.is_send(), c.wc.status) == (1, 0, false, WcStatus::Success),
        "GSI receive: QP, index, direction, status",
    )?;
    expect(
        c.wc.opcode == Some(WcOpcode::Recv) && c.wc.byte_len == Some(0x128),
        "GSI receive: opcode, length",
    )?;
    expect(
        c.wc.flags
            == WcFlags {
                grh: true,
                ..WcFlags::default()
            },
        "GSI receive: flags",
    )?;
    expect(
        c.wc.recv
            == Some(RecvAttrs {
                src_qp: 1,
                sl: 0,
                port_num: 1,
                vlan_id: 0xffff,
                network_hdr_type: 1,
            }),
        "GSI receive: source QP, SL, port, VLAN, network type",
    )?;
    let c = decode(&GSI_SEND);
    expect(
        (c.qpn, c.is_send(), c.wc.opcode, c.wc.byte_len, c.flush_qp)
            == (1, true, Some(WcOpcode::Send), None, false),
        "GSI send completion",
    )?;
    // SEND_WITH_IMM 0x12345678 as the WR gave it (big-endian): the CQE
    // word holds it byte-swapped.
    let c = decode(&RC_RECV_IMM);
    expect(
        (
            c.qpn,
            c.wqe_idx,
            c.wc.opcode,
            c.wc.byte_len,
            c.wc.imm,
            c.wc.recv.map(|r| r.src_qp),
        ) == (9, 1, Some(WcOpcode::Recv), Some(8), 0x7856_3412, Some(8)),
        "RC receive of SEND_WITH_IMM",
    )?;
    expect(c.wc.flags.with_imm && !c.wc.flags.grh, "RC receive flags")?;
    let c = decode(&RC_SEND_IMM);
    expect(
        (c.qpn, c.wc.opcode, c.wc.flags.with_imm, c.wc.byte_len)
            == (8, Some(WcOpcode::Send), true, None),
        "SEND_WITH_IMM send completion",
    )?;
    let c = decode(&RC_RECV_WRITE_IMM);
    expect(
        (c.wc.opcode, c.wc.imm, c.wc.flags.with_imm, c.wc.byte_len)
            == (Some(WcOpcode::RecvRdmaWithImm), 0xa5a5_0000, true, Some(8)),
        "receive of RDMA_WRITE_WITH_IMM",
    )?;
    let c = decode(&RC_READ_ACCESS_ERR);
    expect(
        (
            c.wc.status,
            c.hw_status,
            c.wc.opcode,
            c.wc.vendor_err,
            c.flush_qp,
        ) == (
            WcStatus::RemAccessErr,
            0x13,
            Some(WcOpcode::RdmaRead),
            0,
            true,
        ),
        "RDMA READ with a remote access error",
    )?;
    let c = decode(&RC_RECV_FLUSHED);
    expect(
        (c.wc.status, c.is_send(), c.flush_qp) == (WcStatus::WrFlushErr, false, false),
        "flushed receive",
    )?;
    let c = decode(&RC_CAS_FLUSHED);
    expect(
        (c.wc.status, c.wc.opcode, c.wc.byte_len, c.wqe_idx)
            == (WcStatus::WrFlushErr, Some(WcOpcode::CompSwap), Some(8), 5),
        "flushed CMP_AND_SWAP",
    )?;
    expect(
        cqe_qpn(&GSI_RECV) == 1 && cqe_qpn(&RC_RECV_IMM) == 9,
        "QPN for cleaning",
    )
}
