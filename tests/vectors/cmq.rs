// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `cmdq/desc.rs`, shared by the host tests and KUnit.

use super::{expect, Check};
use crate::cmdq::desc::{chain, flag, retval_errno, Desc};
use crate::field::Field;
use crate::hns_roce_hw_v2::consts::cmq_op;

/// A read descriptor's wire words, written out by hand.
pub fn check_wire_format() -> Check {
    let mut d = Desc::new(cmq_op::QUERY_PF_CAPS_NUM, true);
    d.flag |= flag::NEXT;
    // CFG_GLOBAL_PARAM-style fields: 999 in 9..0, 4791 in 31..16.
    d.data.write(Field::new(9, 0), 999);
    d.data.write(Field::new(31, 16), 4791);
    let w = d.to_le_words();
    // opcode 0x8408 in the low half, flags IN|NEXT|WR = 0x000d in the high.
    expect(
        u32::from_le(w[0]) == 0x000d_8408,
        "word 0 is flag<<16 | opcode",
    )?;
    expect(u32::from_le(w[1]) == 0, "retval word starts at 0")?;
    expect(u32::from_le(w[2]) == (4791 << 16) | 999, "payload word 0")?;
    let back = Desc::from_le_words(&w);
    expect(back == d, "decode(encode(d)) == d")
}

/// A chained command: the flags the C driver's traces show (0x000d on all
/// but the last read descriptor, 0x0009 on the last; 0x0005 / 0x0001 for a
/// write).
pub fn check_chain() -> Check {
    let r = chain::<3>(cmq_op::QUERY_PF_RES, true);
    expect(
        r.iter().map(|d| d.flag).eq([0x000d, 0x000d, 0x0009]),
        "read chain flags",
    )?;
    expect(
        r.iter().all(|d| d.opcode == cmq_op::QUERY_PF_RES),
        "opcode on every descriptor",
    )?;
    let w = chain::<2>(cmq_op::ALLOC_VF_RES, false);
    expect(
        w.iter().map(|d| d.flag).eq([0x0005, 0x0001]),
        "write chain flags",
    )?;
    let one = chain::<1>(cmq_op::QUERY_HW_VER, true);
    expect(
        one[0] == Desc::new(cmq_op::QUERY_HW_VER, true),
        "a chain of one has no NEXT",
    )
}

/// Firmware return codes map to the C driver's errnos.
pub fn check_retval_errno() -> Check {
    let table: [(u16, i32); 13] = [
        (0, 0),
        (1, 1),
        (2, 95),
        (3, 54),
        (4, 63),
        (5, 15),
        (6, 22),
        (7, 34),
        (8, 62),
        (9, 67),
        (10, 6),
        (11, 53),
        (12, 5),
    ];
    for (rv, errno) in table {
        expect(
            retval_errno(rv) == errno,
            "retval to errno differs from the C table",
        )?;
    }
    expect(retval_errno(0xffff) == 5, "unknown return codes are EIO")
}
