// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `hns_roce_hw_v2/scc.rs`, shared by the host tests and KUnit.

use super::{expect, Check};
use crate::cmdq::desc::{Desc, Payload};
use crate::hns_roce_hw_v2::scc::{kstrtou32, Algo, ParamAttr, Params};

/// (algorithm, name, offset, size, min, max), written out from the
/// `HNS_ROCE_{DCQCN,LDCP,HC3,DIP}_*` constants of `hns_roce_hw_v2.h`.
const EXPECTED: &[(Algo, &str, usize, usize, u32, u32)] = &[
    (Algo::Dcqcn, "ai", 0, 2, 0, 0xffff),
    (Algo::Dcqcn, "f", 2, 1, 0, 0xff),
    (Algo::Dcqcn, "tkp", 3, 1, 0, 10),
    (Algo::Dcqcn, "tmp", 4, 2, 0, 15),
    (Algo::Dcqcn, "alp", 6, 2, 0, 0xffff),
    (Algo::Dcqcn, "max_speed", 8, 4, 0, 0xffff_ffff),
    (Algo::Dcqcn, "g", 12, 1, 0, 15),
    (Algo::Dcqcn, "al", 13, 1, 0, 0xff),
    (Algo::Dcqcn, "cnp_time", 14, 1, 0, 0xff),
    (Algo::Dcqcn, "ashift", 15, 1, 0, 15),
    (Algo::Ldcp, "cwd0", 0, 4, 0, 0xffff_ffff),
    (Algo::Ldcp, "alpha", 4, 1, 0, 0xff),
    (Algo::Ldcp, "gamma", 5, 1, 0, 7),
    (Algo::Ldcp, "beta", 6, 1, 0, 7),
    (Algo::Ldcp, "eta", 7, 1, 0, 7),
    (Algo::Hc3, "initial_window", 0, 4, 0, 0xffff_ffff),
    (Algo::Hc3, "bandwidth", 4, 4, 1000, 0xffff_ffff),
    (Algo::Hc3, "qlen_shift", 8, 1, 0, 31),
    (Algo::Hc3, "port_usage_shift", 9, 1, 0, 100),
    (Algo::Hc3, "over_period", 10, 1, 0, 0xff),
    (Algo::Hc3, "max_stage", 11, 1, 0, 0xff),
    (Algo::Hc3, "gamma_shift", 12, 1, 0, 15),
    (Algo::Dip, "ai", 0, 2, 0, 0xffff),
    (Algo::Dip, "f", 2, 1, 0, 0xff),
    (Algo::Dip, "tkp", 3, 1, 0, 10),
    (Algo::Dip, "tmp", 4, 2, 0, 15),
    (Algo::Dip, "alp", 6, 2, 0, 0xffff),
    (Algo::Dip, "max_speed", 8, 4, 0, 0xffff_ffff),
    (Algo::Dip, "g", 12, 1, 0, 15),
    (Algo::Dip, "al", 13, 1, 0, 0xff),
    (Algo::Dip, "cnp_time", 14, 1, 0, 0xff),
    (Algo::Dip, "ashift", 15, 1, 0, 15),
];

/// Every table row equals the C header's constants, in the C order.
pub fn check_tables() -> Check {
    let mut rows = EXPECTED.iter();
    for algo in Algo::ALL {
        for p in algo.params() {
            let Some(&(a, name, offset, size, min, max)) = rows.next() else {
                return Err("more parameters than the C tables");
            };
            expect(a == algo, "parameter under another algorithm")?;
            expect(p.name.to_bytes() == name.as_bytes(), "parameter name")?;
            expect(p.offset == offset && p.size == size, "offset/size")?;
            expect(p.min == min && p.max == max, "min/max")?;
        }
    }
    expect(rows.next().is_none(), "fewer parameters than the C tables")
}

/// Opcodes, directory names and the `cong_cap` bits.
pub fn check_algos() -> Check {
    expect(
        Algo::ALL.map(Algo::opcode) == [0x1a80, 0x1a81, 0x1a82, 0x1a83],
        "CFG_*_PARAM opcodes",
    )?;
    expect(
        Algo::Dcqcn.dir_name().to_bytes() == b"dcqcn_cc_param"
            && Algo::Dip.dir_name().to_bytes() == b"dip_cc_param",
        "directory names",
    )?;
    expect(
        Algo::ALL.map(|a| a.supported(0b1010)) == [false, true, false, true],
        "cong_cap bit n is algorithm n",
    )?;
    // The query is a plain read: IN | WR (the C trace's flag=0009).
    expect(
        Desc::new(Algo::Hc3.opcode(), true).to_le_words()[0] == 0x0009_1a82u32.to_le(),
        "query descriptor word 0",
    )
}

/// The block is the first four payload words in memory order; values are
/// little-endian integers at their offsets.
pub fn check_params() -> Check {
    let dcqcn = Algo::Dcqcn.params();
    let find = |name: &str| dcqcn.iter().find(|p| p.name.to_bytes() == name.as_bytes());
    let (Some(ai), Some(tkp), Some(max_speed), Some(ashift)) =
        (find("ai"), find("tkp"), find("max_speed"), find("ashift"))
    else {
        return Err("DCQCN parameter missing");
    };
    let words = [
        0x0a05_1234,
        0x0007_0003,
        0x1234_5678,
        0x0c00_0000,
        0xdead,
        0xbeef,
    ];
    let p = Params::from_payload(&Payload::from_le_words(words.map(u32::to_le)));
    expect(p.get(ai) == 0x1234, "ai: bytes 0..2")?;
    expect(p.get(tkp) == 0x0a, "tkp: byte 3")?;
    expect(p.get(max_speed) == 0x1234_5678, "max_speed: bytes 8..12")?;
    expect(p.get(ashift) == 0x0c, "ashift: byte 15")?;
    let back = p.to_payload();
    let want = [words[0], words[1], words[2], words[3], 0, 0].map(u32::to_le);
    expect(
        back.as_le_words() == &want,
        "config payload: the block, then zeros",
    )?;
    let mut q = p;
    q.set(tkp, 7);
    q.set(ai, 0xffff);
    expect(
        q.to_payload().word(0) == 0x0705_ffff && q.to_payload().word(1) == 0x0007_0003,
        "set writes only its bytes",
    )?;
    // A value wider than the parameter keeps only its low bytes.
    q.set(ashift, 0x1ff);
    expect(q.get(ashift) == 0xff, "set truncates to the size")?;
    let out = ParamAttr {
        name: c"x",
        offset: 15,
        size: 4,
        min: 0,
        max: 0,
    };
    q.set(&out, 1);
    expect(
        q.get(&out) == 0 && q.get(ashift) == 0xff,
        "outside the block",
    )?;
    let bw = Algo::Hc3.params().get(1).ok_or("HC3 bandwidth")?;
    expect(
        !bw.in_range(999) && bw.in_range(1000) && bw.in_range(u32::MAX),
        "HC3 bandwidth range",
    )?;
    expect(tkp.in_range(10) && !tkp.in_range(11), "tkp range")
}

/// `kstrtou32(s, 0, ..)` as the kernel's `lib/kstrtox.c` answers.
pub fn check_kstrtou32() -> Check {
    let ok: &[(&[u8], u32)] = &[
        (b"0", 0),
        (b"15", 15),
        (b"15\n", 15),
        (b"+7", 7),
        (b"0x1f", 31),
        (b"0X1F\n", 31),
        (b"017", 15),
        (b"00", 0),
        (b"4294967295", u32::MAX),
        (b"0xffffffff", u32::MAX),
        (b"12\0garbage", 12),
    ];
    for &(s, v) in ok {
        expect(kstrtou32(s) == Some(v), "accepted value")?;
    }
    let bad: &[&[u8]] = &[
        b"",
        b"\n",
        b"-1",
        b"++1",
        b"0x",
        b"0xg",
        b"08",
        b"1a",
        b" 1",
        b"1 ",
        b"1\n\n",
        b"4294967296",
        b"0x100000000",
        b"99999999999999999999999",
    ];
    for &s in bad {
        expect(kstrtou32(s).is_none(), "rejected string")?;
    }
    Ok(())
}
