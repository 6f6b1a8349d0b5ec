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

/// HIP08's CFG_SGID_TB payloads as the C driver sent them on hns-sim's
/// HIP08 personality (its trace: the port's link-local GID of
/// MAC 02:19:e5:00:03:00 at index 0 as RoCE v1 and index 1 as RoCE v2).
pub fn check_sgid_tb() -> Check {
    use crate::hns_roce_hw_v2::gid::write_sgid_tb;
    let gid: [u8; 16] = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x19, 0xe5, 0xff, 0xfe, 0x00, 0x03, 0x00,
    ];
    let mut d = Desc::new(cmq_op::CFG_SGID_TB, false);
    write_sgid_tb(&mut d.data, 0, 0, Some(&gid));
    let w = d.to_le_words();
    let trace0 = [0x0000_0000, 0x0000_80fe, 0, 0xffe5_1900, 0x0003_00fe, 0];
    expect(
        w[2..].iter().map(|x| u32::from_le(*x)).eq(trace0),
        "index 0, RoCE v1: the C driver's words",
    )?;
    let mut d = Desc::new(cmq_op::CFG_SGID_TB, false);
    write_sgid_tb(&mut d.data, 1, 2, Some(&gid));
    let w = d.to_le_words();
    let trace1 = [0x0000_0001, 0x0000_80fe, 0, 0xffe5_1900, 0x0003_00fe, 2];
    expect(
        w[2..].iter().map(|x| u32::from_le(*x)).eq(trace1),
        "index 1, RoCE v2 IPv6: the C driver's words",
    )?;
    expect(
        u32::from_le(w[0]) == 0x0001_8500,
        "opcode 0x8500, flag WR (a write: IN only)",
    )?;
    let mut d = Desc::new(cmq_op::CFG_SGID_TB, false);
    write_sgid_tb(&mut d.data, 5, 0, None);
    let w = d.to_le_words();
    expect(
        w[2..]
            .iter()
            .map(|x| u32::from_le(*x))
            .eq([5, 0, 0, 0, 0, 0]),
        "a deleted entry: index only",
    )
}

/// HIP08's CFG_SMAC_TB payload as the C driver sent it at registration on
/// hns-sim's HIP08 personality (port 0, MAC 02:19:e5:00:03:00).
pub fn check_smac_tb() -> Check {
    use crate::hns_roce_hw_v2::gid::write_smac_tb;
    let mut d = Desc::new(cmq_op::CFG_SMAC_TB, false);
    write_smac_tb(&mut d.data, 0, &[0x02, 0x19, 0xe5, 0x00, 0x03, 0x00]);
    let w = d.to_le_words();
    expect(u32::from_le(w[0]) == 0x0001_8501, "opcode 0x8501, a write")?;
    let trace = [0, 0x00e5_1902, 0x0000_0003, 0, 0, 0];
    expect(
        w[2..].iter().map(|x| u32::from_le(*x)).eq(trace),
        "port 0: the C driver's words",
    )
}

/// HIP09's CFG_GMV_TBL payloads as the C driver sent them on hns-sim's
/// default personality (the trace of `reg-c`: the link-local GID of
/// MAC 02:19:e5:00:03:00 at index 0 as RoCE v1 and index 1 as RoCE v2 IPv6,
/// no VLAN, then index 0 deleted).
pub fn check_gmv_tb() -> Check {
    use crate::hns_roce_hw_v2::gid::{write_gmv_tb, VLAN_CFI_MASK};
    let gid: [u8; 16] = [
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x19, 0xe5, 0xff, 0xfe, 0x00, 0x03, 0x00,
    ];
    let mac = [0x02, 0x19, 0xe5, 0x00, 0x03, 0x00];
    let words = |index, ty, gid, vlan, mac: &[u8; 6]| {
        let mut a = Desc::new(cmq_op::CFG_GMV_TBL, false);
        let mut b = Desc::new(cmq_op::CFG_GMV_TBL, false);
        write_gmv_tb(&mut a.data, &mut b.data, index, ty, gid, vlan, mac);
        let host = |d: &Desc| {
            let w = d.to_le_words();
            let mut out = [0u32; 6];
            for (o, x) in out.iter_mut().zip(&w[2..]) {
                *o = u32::from_le(*x);
            }
            out
        };
        (host(&a), host(&b))
    };
    // rdma_read_gid_l2_fields gives 0xffff without a VLAN; the 12-bit field
    // keeps 0xfff.
    expect(
        words(0, 0, Some(&gid), 0xffff, &mac)
            == (
                [0x0000_80fe, 0, 0xffe5_1900, 0x0003_00fe, 0x0fff_0000, 0],
                [0x00e5_1902, 0x0000_0003, 0, 0, 0, 0],
            ),
        "index 0, RoCE v1: the C driver's words",
    )?;
    expect(
        words(1, 2, Some(&gid), 0xffff, &mac)
            == (
                [0x0000_80fe, 0, 0xffe5_1900, 0x0003_00fe, 0x0fff_0002, 0],
                [0x00e5_1902, 0x0000_0003, 1, 0, 0, 0],
            ),
        "index 1, RoCE v2 IPv6: the C driver's words",
    )?;
    expect(
        words(0, 0, None, VLAN_CFI_MASK, &[0; 6]) == ([0; 6], [0; 6]),
        "index 0 deleted: all zero",
    )
}
