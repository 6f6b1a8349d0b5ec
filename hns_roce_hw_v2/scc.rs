// SPDX-License-Identifier: GPL-2.0

//! Congestion control (SCC) algorithm parameters of the HIP09 engine
//! (`core` only).
//!
//! The firmware keeps one 16-byte parameter block per algorithm (DCQCN,
//! LDCP, HC3, DIP), read and written whole with the CFG_*_PARAM commands
//! (`hns_roce_v2_query_scc_param` / `hns_roce_v2_config_scc_param`). Inside
//! a block every parameter is a little-endian integer of 1, 2 or 4 bytes, one
//! after the other. This file has the tables the debugfs files are made from
//! (the `HNS_ROCE_{DCQCN,LDCP,HC3,DIP}_*` constants of `hns_roce_hw_v2.h`
//! and the attribute tables of `hns_roce_debugfs.c`), the block itself and
//! the number parser the debugfs writes use (`kstrtou32` with base 0).

use crate::cmdq::desc::Payload;
use crate::hns_roce_hw_v2::consts::cmq_op;
use core::ffi::CStr;

/// Words of a parameter block (`HNS_ROCE_SCC_PARAM_SIZE`).
pub const PARAM_WORDS: usize = 4;
/// Bytes of a parameter block.
pub const PARAM_BYTES: usize = 4 * PARAM_WORDS;

/// A congestion control algorithm. The discriminant is both the C driver's
/// `enum hns_roce_scc_algo` and its `enum hns_roce_cong_type` (the bit of
/// the algorithm in `caps.cong_cap`): the two enums have the same order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// DCQCN.
    Dcqcn = 0,
    /// LDCP.
    Ldcp = 1,
    /// HC3.
    Hc3 = 2,
    /// DIP.
    Dip = 3,
}

impl Algo {
    /// Every algorithm, in the order the C driver queries them.
    pub const ALL: [Algo; 4] = [Algo::Dcqcn, Algo::Ldcp, Algo::Hc3, Algo::Dip];

    /// Index of the algorithm (0..4).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The CMQ opcode that reads (query) or writes (config) the block.
    pub const fn opcode(self) -> u16 {
        match self {
            Algo::Dcqcn => cmq_op::CFG_DCQCN_PARAM,
            Algo::Ldcp => cmq_op::CFG_LDCP_PARAM,
            Algo::Hc3 => cmq_op::CFG_HC3_PARAM,
            Algo::Dip => cmq_op::CFG_DIP_PARAM,
        }
    }

    /// Name of the algorithm's debugfs directory.
    pub const fn dir_name(self) -> &'static CStr {
        match self {
            Algo::Dcqcn => c"dcqcn_cc_param",
            Algo::Ldcp => c"ldcp_cc_param",
            Algo::Hc3 => c"hc3_cc_param",
            Algo::Dip => c"dip_cc_param",
        }
    }

    /// The algorithm's parameters, in block order.
    pub const fn params(self) -> &'static [ParamAttr] {
        match self {
            Algo::Dcqcn => &DCQCN,
            Algo::Ldcp => &LDCP,
            Algo::Hc3 => &HC3,
            Algo::Dip => &DIP,
        }
    }

    /// Whether the capability bits `cong_cap` include the algorithm.
    pub const fn supported(self, cong_cap: u32) -> bool {
        cong_cap & (1 << self as u32) != 0
    }
}

/// One parameter of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamAttr {
    /// File name.
    pub name: &'static CStr,
    /// Byte offset in the block.
    pub offset: usize,
    /// Bytes (1, 2 or 4).
    pub size: usize,
    /// Smallest value a write may set.
    pub min: u32,
    /// Largest value a write may set.
    pub max: u32,
}

impl ParamAttr {
    /// Whether a write of `v` is allowed.
    pub const fn in_range(&self, v: u32) -> bool {
        v >= self.min && v <= self.max
    }
}

/// One table row before the offsets are laid out: name, size, min, max.
type Row = (&'static CStr, usize, u32, u32);

/// Lays the rows out one after the other from offset 0, as the chained
/// `*_OFS` constants of the C header do.
const fn layout<const N: usize>(rows: [Row; N]) -> [ParamAttr; N] {
    let mut out = [ParamAttr {
        name: c"",
        offset: 0,
        size: 0,
        min: 0,
        max: 0,
    }; N];
    let mut offset = 0;
    let mut i = 0;
    while i < N {
        let (name, size, min, max) = rows[i];
        out[i] = ParamAttr {
            name,
            offset,
            size,
            min,
            max,
        };
        offset += size;
        i += 1;
    }
    // Every block fits the 16 bytes the firmware exchanges.
    assert!(offset <= PARAM_BYTES);
    out
}

/// Largest values of the field widths.
const U8: u32 = u8::MAX as u32;
const U16: u32 = u16::MAX as u32;
const U32: u32 = u32::MAX;

/// The DCQCN parameter rows; DIP's block has the same layout.
const DCQCN_ROWS: [ParamAttr; 10] = layout([
    (c"ai", 2, 0, U16),
    (c"f", 1, 0, U8),
    (c"tkp", 1, 0, 10),
    (c"tmp", 2, 0, 15),
    (c"alp", 2, 0, U16),
    (c"max_speed", 4, 0, U32),
    (c"g", 1, 0, 15),
    (c"al", 1, 0, U8),
    (c"cnp_time", 1, 0, U8),
    (c"ashift", 1, 0, 15),
]);

/// DCQCN parameters.
pub static DCQCN: [ParamAttr; 10] = DCQCN_ROWS;

/// LDCP parameters.
pub static LDCP: [ParamAttr; 5] = layout([
    (c"cwd0", 4, 0, U32),
    (c"alpha", 1, 0, U8),
    (c"gamma", 1, 0, 7),
    (c"beta", 1, 0, 7),
    (c"eta", 1, 0, 7),
]);

/// HC3 parameters (the only algorithm with a non-zero minimum).
pub static HC3: [ParamAttr; 7] = layout([
    (c"initial_window", 4, 0, U32),
    (c"bandwidth", 4, 1000, U32),
    (c"qlen_shift", 1, 0, 31),
    (c"port_usage_shift", 1, 0, 100),
    (c"over_period", 1, 0, U8),
    (c"max_stage", 1, 0, U8),
    (c"gamma_shift", 1, 0, 15),
]);

/// DIP parameters (the same layout as DCQCN).
pub static DIP: [ParamAttr; 10] = DCQCN_ROWS;

/// The parameter block of one algorithm, as the bytes in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params([u8; PARAM_BYTES]);

impl Params {
    /// The block from the first words of a query answer.
    pub fn from_payload(p: &Payload) -> Self {
        let mut b = [0u8; PARAM_BYTES];
        for (chunk, w) in b.chunks_exact_mut(4).zip(p.as_le_words()) {
            chunk.copy_from_slice(&u32::from_le(*w).to_le_bytes());
        }
        Params(b)
    }

    /// The payload of a config command: the block, then zeros.
    pub fn to_payload(&self) -> Payload {
        let mut w = [0u32; 6];
        for (w, chunk) in w.iter_mut().zip(self.0.chunks_exact(4)) {
            let mut b = [0u8; 4];
            b.copy_from_slice(chunk);
            *w = u32::from_le_bytes(b).to_le();
        }
        Payload::from_le_words(w)
    }

    /// The value of `a` (0 if `a` lies outside the block).
    #[inline(never)]
    pub fn get(&self, a: &ParamAttr) -> u32 {
        self.0
            .get(a.offset..a.offset + a.size)
            .unwrap_or(&[])
            .iter()
            .rev()
            .fold(0u32, |v, b| (v << 8) | u32::from(*b))
    }

    /// Stores the low `a.size` bytes of `v` as `a` (nothing if `a` lies
    /// outside the block).
    pub fn set(&mut self, a: &ParamAttr, v: u32) {
        if let Some(dst) = self.0.get_mut(a.offset..a.offset + a.size) {
            for (d, s) in dst.iter_mut().zip(v.to_le_bytes()) {
                *d = s;
            }
        }
    }
}

/// `kstrtou32(buf, 0, ..)` on a string of `buf`'s bytes up to the first NUL:
/// an optional `+`, digits in base 16 (`0x` prefix), 8 (leading `0`) or 10,
/// at most one trailing newline. `None` for anything else or a value above
/// `u32::MAX`.
pub fn kstrtou32(buf: &[u8]) -> Option<u32> {
    let s = buf.split(|&b| b == 0).next().unwrap_or(&[]);
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (radix, digits) = match s {
        [b'0', x, d, ..] if x.eq_ignore_ascii_case(&b'x') && d.is_ascii_hexdigit() => {
            (16u64, s.get(2..).unwrap_or(&[]))
        }
        [b'0', ..] => (8, s),
        _ => (10, s),
    };
    let mut v: u64 = 0;
    let mut n = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' | b'A'..=b'F' => c.to_ascii_lowercase() - b'a' + 10,
            _ => break,
        };
        if u64::from(d) >= radix {
            break;
        }
        v = v.checked_mul(radix)?.checked_add(u64::from(d))?;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let rest = digits.get(n..).unwrap_or(&[]);
    let rest = rest.strip_prefix(b"\n").unwrap_or(rest);
    if !rest.is_empty() {
        return None;
    }
    u32::try_from(v).ok()
}
