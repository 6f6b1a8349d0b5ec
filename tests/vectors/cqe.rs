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
    let recv = [
        (0x0, Some(RecvRdmaWithImm)),
        (0x1, Some(Recv)),
        (0x2, Some(RecvRdmaWithImm)),
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
