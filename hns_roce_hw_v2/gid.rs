// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The HIP08 source GID and source MAC table entries (`core` only).
//!
//! HIP08 keeps the port's GIDs in an SGID table written one entry per
//! CFG_SGID_TB command (`config_sgid_table`), and the port's MAC in an SMAC
//! table (CFG_SMAC_TB, `hns_roce_v2_set_mac`); HIP09 has the GMV table
//! instead (CFG_GMV_TBL, built in `IbDev::set_gid`), which holds both. A GID
//! entry is the table index, the GID type and the 16 GID bytes as four
//! little-endian words in wire order (C copies the `ib_gid` bytes into the
//! payload as they are); a MAC entry the port, the MAC's first four bytes
//! as one little-endian word and its last two as a little-endian half.

use crate::cmdq::desc::Payload;
use crate::field::Field;
use crate::hns_roce_hw_v2::cmq_fields::{sgid_tb, smac_tb};

/// The four payload fields that hold the GID, first bytes first.
const SGID_WORDS: [Field<crate::cmdq::desc::CmqData>; 4] = [
    sgid_tb::VF_SGID_L,
    sgid_tb::VF_SGID_ML,
    sgid_tb::VF_SGID_MH,
    sgid_tb::VF_SGID_H,
];

/// Writes the CFG_SGID_TB payload of entry `index` with GID type `ty`
/// (`enum hns_roce_sgid_type`: 0 RoCE v1, also for a deleted entry, 1 RoCE
/// v2 IPv4, 2 RoCE v2 IPv6) and `gid` (`None`: all zero, as a deleted entry
/// is written) into `data`.
pub fn write_sgid_tb(data: &mut Payload, index: u32, ty: u32, gid: Option<&[u8; 16]>) {
    data.write(sgid_tb::CFG_SGID_TB_TABLE_IDX, index);
    data.write(sgid_tb::CFG_SGID_TB_VF_SGID_TYPE, ty);
    let gid = gid.copied().unwrap_or([0; 16]);
    for (f, b) in SGID_WORDS.iter().zip(gid.chunks_exact(4)) {
        data.write(*f, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
}

/// Writes the CFG_SMAC_TB payload of physical port `port` with MAC `mac`
/// into `data`.
pub fn write_smac_tb(data: &mut Payload, port: u32, mac: &[u8; 6]) {
    data.write(smac_tb::CFG_SMAC_TB_IDX, port);
    // C reads the MAC's bytes as a native u16 and u32 (little-endian on
    // the machines HIP08 and HIP09 are in).
    data.write(
        smac_tb::CFG_SMAC_TB_VF_SMAC_H,
        u32::from(u16::from_ne_bytes([mac[4], mac[5]])),
    );
    data.write(
        smac_tb::VF_SMAC_L,
        u32::from_ne_bytes([mac[0], mac[1], mac[2], mac[3]]),
    );
}
