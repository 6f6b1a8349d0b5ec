// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Command queue descriptors (`core` only): the 32-byte descriptor, its
//! flags, the opcodes this driver sends and the firmware return codes.

use crate::field::{Ctx, Field, Layout};

/// Layout of a descriptor's six payload words.
pub struct CmqData;

impl Layout for CmqData {
    const DWORDS: usize = 6;
}

/// A request/response payload.
pub type Payload = Ctx<CmqData, 6>;

/// Descriptor flag bits.
pub mod flag {
    /// Request (always set).
    pub const IN: u16 = 1 << 0;
    /// More descriptors of this command follow.
    pub const NEXT: u16 = 1 << 2;
    /// A read (query) command.
    pub const WR: u16 = 1 << 3;
}

/// Opcodes (`enum hns_roce_opcode_type` in the C driver).
pub mod op {
    /// Firmware version.
    pub const QUERY_FW_VER: u16 = 0x0001;
    /// Loopback switch parameters of a function.
    pub const SWITCH_PARAMETER_CFG: u16 = 0x1033;
    /// Hardware version.
    pub const QUERY_HW_VER: u16 = 0x8000;
    /// Global parameters (1 us cycles, UDP port).
    pub const CFG_GLOBAL_PARAM: u16 = 0x8001;
    /// PF resources (BT numbers, queues).
    pub const QUERY_PF_RES: u16 = 0x8400;
    /// Give a function its share of the resources.
    pub const ALLOC_VF_RES: u16 = 0x8401;
    /// PF timer resources.
    pub const QUERY_PF_TIMER_RES: u16 = 0x8406;
    /// Number of functions (HIP09).
    pub const QUERY_FUNC_INFO: u16 = 0x8407;
    /// PF capabilities.
    pub const QUERY_PF_CAPS_NUM: u16 = 0x8408;
    /// Context entry sizes (HIP09).
    pub const CFG_ENTRY_SIZE: u16 = 0x8409;
    /// Page sizes and hops of the context tables.
    pub const CFG_BT_ATTR: u16 = 0x8506;
    /// Function clear.
    pub const FUNC_CLEAR: u16 = 0x8508;
    /// Clear the extended doorbell list state.
    pub const CLEAR_EXTDB_LIST_INFO: u16 = 0x850d;
    /// Program the extended link-list memory (link table).
    pub const CFG_EXT_LLM: u16 = 0x8403;
    /// Post a mailbox command.
    pub const POST_MB: u16 = 0x8504;
    /// Mailbox status.
    pub const QUERY_MB_ST: u16 = 0x8505;
    /// Program a GMV table base address.
    pub const CFG_GMV_BT: u16 = 0x8510;
    /// Write one GID/MAC/VLAN entry.
    pub const CFG_GMV_TBL: u16 = 0x850f;
    /// Read the hardware counters.
    pub const QUERY_COUNTER: u16 = 0x8206;
    /// Read or write the DCQCN parameter block.
    pub const CFG_DCQCN_PARAM: u16 = 0x1a80;
    /// Read or write the LDCP parameter block.
    pub const CFG_LDCP_PARAM: u16 = 0x1a81;
    /// Read or write the HC3 parameter block.
    pub const CFG_HC3_PARAM: u16 = 0x1a82;
    /// Read or write the DIP parameter block.
    pub const CFG_DIP_PARAM: u16 = 0x1a83;
}

/// Descriptors in the command send queue.
pub const CSQ_DESC_NUM: u32 = 1024;
/// Size of one descriptor in bytes.
pub const DESC_SIZE: usize = 32;

/// One descriptor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Desc {
    /// Opcode.
    pub opcode: u16,
    /// Flags.
    pub flag: u16,
    /// Firmware return code.
    pub retval: u16,
    /// Payload.
    pub data: Payload,
}

impl Desc {
    /// A zeroed descriptor for `opcode`: `IN`, plus `WR` for a read
    /// (`hns_roce_cmq_setup_basic_desc`).
    pub fn new(opcode: u16, read: bool) -> Self {
        Desc {
            opcode,
            flag: flag::IN | if read { flag::WR } else { 0 },
            retval: 0,
            data: Payload::zeroed(),
        }
    }

    /// The descriptor as eight little-endian words, as the ring holds it.
    pub fn to_le_words(&self) -> [u32; 8] {
        let mut w = [0u32; 8];
        w[0] = (u32::from(self.opcode) | u32::from(self.flag) << 16).to_le();
        w[1] = u32::from(self.retval).to_le();
        w[2..].copy_from_slice(self.data.as_le_words());
        w
    }

    /// Decodes eight little-endian words from the ring.
    pub fn from_le_words(w: &[u32; 8]) -> Self {
        let w0 = u32::from_le(w[0]);
        let mut d = [0u32; 6];
        d.copy_from_slice(&w[2..]);
        Desc {
            // CAST: halves of a 32-bit word.
            opcode: w0 as u16,
            flag: (w0 >> 16) as u16,
            retval: u32::from_le(w[1]) as u16,
            data: Payload::from_le_words(d),
        }
    }

    /// Bits `h..=l` of the payload.
    pub fn get(&self, f: Field<CmqData>) -> u32 {
        self.data.read(f)
    }
}

/// A command of `N` descriptors for `opcode` (each set up as [`Desc::new`]
/// does), chained with NEXT on all but the last.
pub fn chain<const N: usize>(opcode: u16, read: bool) -> [Desc; N] {
    core::array::from_fn(|i| {
        let mut d = Desc::new(opcode, read);
        if i + 1 < N {
            d.flag |= flag::NEXT;
        }
        d
    })
}

/// The errno for a firmware return code (`hns_roce_cmd_err_convert_errno`),
/// as a positive number; 0 for success.
pub fn retval_errno(retval: u16) -> i32 {
    // Values of the Linux errno constants (asm-generic/errno*.h).
    const EPERM: i32 = 1;
    const ENXIO: i32 = 6;
    const ENOTBLK: i32 = 15;
    const EINVAL: i32 = 22;
    const ERANGE: i32 = 34;
    const EBADR: i32 = 53;
    const EXFULL: i32 = 54;
    const ETIME: i32 = 62;
    const ENOSR: i32 = 63;
    const ENOLINK: i32 = 67;
    const EOPNOTSUPP: i32 = 95;
    const EIO: i32 = 5;
    match retval {
        0 => 0,
        1 => EPERM,
        2 => EOPNOTSUPP,
        3 => EXFULL,
        4 => ENOSR,
        5 => ENOTBLK,
        6 => EINVAL,
        7 => ERANGE,
        8 => ETIME,
        9 => ENOLINK,
        10 => ENXIO,
        11 => EBADR,
        _ => EIO,
    }
}
