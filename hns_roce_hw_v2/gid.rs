// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The HIP08 source GID table entry (`core` only).
//!
//! HIP08 keeps the port's GIDs in an SGID table written one entry per
//! CFG_SGID_TB command (`config_sgid_table`); HIP09 uses the GMV table
//! instead (CFG_GMV_TBL, built in `IbDev::set_gid`). An entry is the table
//! index, the GID type and the 16 GID bytes as four little-endian words in
//! wire order (C copies the `ib_gid` bytes into the payload as they are).

use crate::cmdq::desc::Payload;
use crate::field::Field;
use crate::hns_roce_hw_v2::cmq_fields::sgid_tb;

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
