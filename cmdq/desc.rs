// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Command queue descriptors (`core` only): the 32-byte descriptor, its
//! flags and the firmware return codes (the opcodes are in `hns_roce_hw_v2::consts`).

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
    /// An all-zero descriptor (no opcode, no flags).
    pub const ZERO: Desc = Desc {
        opcode: 0,
        flag: 0,
        retval: 0,
        data: Payload::zeroed(),
    };

    /// A zeroed descriptor for `opcode`: `IN`, plus `WR` for a read
    /// (`hns_roce_cmq_setup_basic_desc`).
    #[inline(never)]
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
#[inline(never)]
pub fn chain<const N: usize>(opcode: u16, read: bool) -> [Desc; N] {
    let mut descs = [const { Desc::ZERO }; N];
    set_chain(&mut descs, opcode, read);
    descs
}

/// Sets up `descs` as [`chain`] returns them. One copy for every length:
/// [`chain`] is instantiated per length and stays a few instructions.
#[inline(never)]
fn set_chain(descs: &mut [Desc], opcode: u16, read: bool) {
    let last = descs.len().saturating_sub(1);
    for (i, d) in descs.iter_mut().enumerate() {
        *d = Desc::new(opcode, read);
        if i < last {
            d.flag |= flag::NEXT;
        }
    }
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
