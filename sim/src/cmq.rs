// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Command queue descriptors: the 32-byte `struct hns_roce_cmq_desc`, its
//! flags, return codes and opcode names, and bit-field access to its six
//! payload words.

/// Size of one descriptor.
pub const DESC_SIZE: usize = 32;

/// Descriptor flag bits.
pub mod flag {
    /// Request (always set by the driver).
    pub const IN: u16 = 1 << 0;
    /// Response.
    pub const OUT: u16 = 1 << 1;
    /// More descriptors of this command follow.
    pub const NEXT: u16 = 1 << 2;
    /// A read (query) command.
    pub const WR: u16 = 1 << 3;
}

/// Return codes written to `retval`.
pub mod ret {
    /// Success.
    pub const SUCCESS: u16 = 0;
    /// Not permitted (-EPERM).
    pub const NO_AUTH: u16 = 1;
    /// Unknown command (-EOPNOTSUPP).
    pub const NOT_EXIST: u16 = 2;
    /// Bad parameter (-EINVAL).
    pub const PARA_ERR: u16 = 6;
    /// Timed out (-ETIME).
    pub const TIMEOUT: u16 = 8;
}

/// Opcodes (`enum hns_roce_opcode_type`).
pub mod op {
    #![allow(missing_docs)]
    pub const QUERY_FW_VER: u16 = 0x0001;
    pub const SWITCH_PARAMETER_CFG: u16 = 0x1033;
    pub const CFG_DCQCN_PARAM: u16 = 0x1a80;
    pub const CFG_LDCP_PARAM: u16 = 0x1a81;
    pub const CFG_HC3_PARAM: u16 = 0x1a82;
    pub const CFG_DIP_PARAM: u16 = 0x1a83;
    pub const QUERY_HW_VER: u16 = 0x8000;
    pub const CFG_GLOBAL_PARAM: u16 = 0x8001;
    pub const QUERY_COUNTER: u16 = 0x8206;
    pub const QUERY_PF_RES: u16 = 0x8400;
    pub const ALLOC_VF_RES: u16 = 0x8401;
    pub const CFG_EXT_LLM: u16 = 0x8403;
    pub const QUERY_PF_TIMER_RES: u16 = 0x8406;
    pub const QUERY_FUNC_INFO: u16 = 0x8407;
    pub const QUERY_PF_CAPS_NUM: u16 = 0x8408;
    pub const CFG_ENTRY_SIZE: u16 = 0x8409;
    pub const QUERY_VF_CAPS_NUM: u16 = 0x8410;
    pub const CFG_SGID_TB: u16 = 0x8500;
    pub const CFG_SMAC_TB: u16 = 0x8501;
    pub const POST_MB: u16 = 0x8504;
    pub const QUERY_MB_ST: u16 = 0x8505;
    pub const CFG_BT_ATTR: u16 = 0x8506;
    pub const FUNC_CLEAR: u16 = 0x8508;
    pub const CLR_SCCC: u16 = 0x8509;
    pub const QUERY_SCCC: u16 = 0x850a;
    pub const RESET_SCCC: u16 = 0x850b;
    pub const CLEAR_EXTDB_LIST_INFO: u16 = 0x850d;
    pub const QUERY_VF_RES: u16 = 0x850e;
    pub const CFG_GMV_TBL: u16 = 0x850f;
    pub const CFG_GMV_BT: u16 = 0x8510;
    pub const QUERY_RAM_ECC: u16 = 0x8513;
    pub const SET_BOND_INFO: u16 = 0x8601;
    pub const CLEAR_BOND_INFO: u16 = 0x8602;
    pub const CHANGE_ACTIVE_PORT: u16 = 0x8603;
}

/// Name of an opcode for logs and traces.
pub fn op_name(o: u16) -> &'static str {
    match o {
        op::QUERY_FW_VER => "QUERY_FW_VER",
        op::SWITCH_PARAMETER_CFG => "SWITCH_PARAMETER_CFG",
        op::CFG_DCQCN_PARAM => "CFG_DCQCN_PARAM",
        op::CFG_LDCP_PARAM => "CFG_LDCP_PARAM",
        op::CFG_HC3_PARAM => "CFG_HC3_PARAM",
        op::CFG_DIP_PARAM => "CFG_DIP_PARAM",
        op::QUERY_HW_VER => "QUERY_HW_VER",
        op::CFG_GLOBAL_PARAM => "CFG_GLOBAL_PARAM",
        op::QUERY_COUNTER => "QUERY_COUNTER",
        op::QUERY_PF_RES => "QUERY_PF_RES",
        op::ALLOC_VF_RES => "ALLOC_VF_RES",
        op::CFG_EXT_LLM => "CFG_EXT_LLM",
        op::QUERY_PF_TIMER_RES => "QUERY_PF_TIMER_RES",
        op::QUERY_FUNC_INFO => "QUERY_FUNC_INFO",
        op::QUERY_PF_CAPS_NUM => "QUERY_PF_CAPS_NUM",
        op::CFG_ENTRY_SIZE => "CFG_ENTRY_SIZE",
        op::QUERY_VF_CAPS_NUM => "QUERY_VF_CAPS_NUM",
        op::CFG_SGID_TB => "CFG_SGID_TB",
        op::CFG_SMAC_TB => "CFG_SMAC_TB",
        op::POST_MB => "POST_MB",
        op::QUERY_MB_ST => "QUERY_MB_ST",
        op::CFG_BT_ATTR => "CFG_BT_ATTR",
        op::FUNC_CLEAR => "FUNC_CLEAR",
        op::CLR_SCCC => "CLR_SCCC",
        op::QUERY_SCCC => "QUERY_SCCC",
        op::RESET_SCCC => "RESET_SCCC",
        op::CLEAR_EXTDB_LIST_INFO => "CLEAR_EXTDB_LIST_INFO",
        op::QUERY_VF_RES => "QUERY_VF_RES",
        op::CFG_GMV_TBL => "CFG_GMV_TBL",
        op::CFG_GMV_BT => "CFG_GMV_BT",
        op::QUERY_RAM_ECC => "QUERY_RAM_ECC",
        op::SET_BOND_INFO => "SET_BOND_INFO",
        op::CLEAR_BOND_INFO => "CLEAR_BOND_INFO",
        op::CHANGE_ACTIVE_PORT => "CHANGE_ACTIVE_PORT",
        _ => "UNKNOWN",
    }
}

/// One descriptor, fields in CPU order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Desc {
    /// Opcode.
    pub opcode: u16,
    /// Flags (`flag::*`).
    pub flag: u16,
    /// Return code, written by the firmware.
    pub retval: u16,
    /// Reserved.
    pub rsv: u16,
    /// Payload.
    pub data: [u32; 6],
}

impl Desc {
    /// Decodes the little-endian wire form.
    pub fn from_bytes(b: &[u8; DESC_SIZE]) -> Self {
        let h = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let mut data = [0u32; 6];
        for (i, d) in data.iter_mut().enumerate() {
            let o = 8 + 4 * i;
            *d = u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        }
        Desc {
            opcode: h(0),
            flag: h(2),
            retval: h(4),
            rsv: h(6),
            data,
        }
    }

    /// Encodes the little-endian wire form.
    pub fn to_bytes(&self) -> [u8; DESC_SIZE] {
        let mut b = [0u8; DESC_SIZE];
        b[0..2].copy_from_slice(&self.opcode.to_le_bytes());
        b[2..4].copy_from_slice(&self.flag.to_le_bytes());
        b[4..6].copy_from_slice(&self.retval.to_le_bytes());
        b[6..8].copy_from_slice(&self.rsv.to_le_bytes());
        for (i, d) in self.data.iter().enumerate() {
            b[8 + 4 * i..12 + 4 * i].copy_from_slice(&d.to_le_bytes());
        }
        b
    }

    /// Whether this is a read (query) command.
    pub fn is_read(&self) -> bool {
        self.flag & flag::WR != 0
    }

    /// Whether more descriptors of the same command follow.
    pub fn has_next(&self) -> bool {
        self.flag & flag::NEXT != 0
    }

    /// Bits `h..=l` of the payload (bit 0 = bit 0 of `data[0]`).
    pub fn get(&self, h: u32, l: u32) -> u32 {
        let w = self.data[(h / 32) as usize];
        let width = h - l + 1;
        let mask = if width == 32 {
            u32::MAX
        } else {
            (1 << width) - 1
        };
        (w >> (l % 32)) & mask
    }

    /// Sets bits `h..=l` of the payload to `v` (truncated to the width).
    pub fn set(&mut self, h: u32, l: u32, v: u32) {
        let width = h - l + 1;
        let mask = if width == 32 {
            u32::MAX
        } else {
            (1 << width) - 1
        };
        let w = &mut self.data[(h / 32) as usize];
        *w = (*w & !(mask << (l % 32))) | ((v & mask) << (l % 32));
    }

    /// Payload bytes `off..off+N` (for byte-oriented responses).
    pub fn set_bytes(&mut self, off: usize, v: &[u8]) {
        let mut b = self.to_bytes();
        b[8 + off..8 + off + v.len()].copy_from_slice(v);
        *self = Desc::from_bytes(&b);
    }

    /// A 64-bit value from two payload words (low first).
    pub fn get64(&self, lo: usize) -> u64 {
        self.data[lo] as u64 | (self.data[lo + 1] as u64) << 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_round_trip() {
        let mut b = [0u8; DESC_SIZE];
        for (i, x) in b.iter_mut().enumerate() {
            *x = i as u8;
        }
        let d = Desc::from_bytes(&b);
        assert_eq!(d.opcode, 0x0100);
        assert_eq!(d.flag, 0x0302);
        assert_eq!(d.retval, 0x0504);
        assert_eq!(d.data[0], 0x0b0a_0908);
        assert_eq!(d.data[5], 0x1f1e_1d1c);
        assert_eq!(d.to_bytes(), b);
    }

    #[test]
    fn bit_fields() {
        let mut d = Desc::default();
        // PF_CAPS_C_MAX_GID is bits 60..52: word 1, bits 28..20.
        d.set(60, 52, 256);
        assert_eq!(d.data[1], 256 << 20);
        assert_eq!(d.get(60, 52), 256);
        d.set(31, 0, 0xdead_beef);
        assert_eq!(d.get(31, 0), 0xdead_beef);
        d.set(19, 0, 0x1f_ffff);
        assert_eq!(d.get(19, 0), 0xf_ffff, "truncated to 20 bits");
        assert_eq!(d.get(31, 20), 0xdea, "neighbours untouched");
        d.set_bytes(2, &[0x34, 0x12]);
        assert_eq!(d.data[0] >> 16, 0x1234);
    }
}
