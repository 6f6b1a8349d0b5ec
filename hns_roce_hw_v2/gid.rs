// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The GID and source MAC table entries (`core` only).
//!
//! HIP09 keeps the port's GIDs with their VLAN and source MAC in its GMV
//! table (two CFG_GMV_TBL descriptors per entry, `config_gmv_table`). HIP08
//! keeps the GIDs in an SGID table (one CFG_SGID_TB per entry,
//! `config_sgid_table`) and the port's MAC in an SMAC table (CFG_SMAC_TB,
//! `hns_roce_v2_set_mac`). All three carry a GID as its 16 bytes in four
//! little-endian words in wire order (C copies the `ib_gid` bytes into the
//! payload as they are) and a MAC as its first four bytes in one word and
//! its last two in a half.

use crate::cmdq::desc::{CmqData, Payload};
use crate::field::Field;
use crate::hns_roce_hw_v2::cmq_fields::{gmv_tb_a, gmv_tb_b, sgid_tb, smac_tb};

/// VLAN ids from here on mean "no VLAN" in a GMV entry (`VLAN_CFI_MASK`;
/// what a deleted entry carries).
pub const VLAN_CFI_MASK: u16 = 0x1000;

/// Writes `gid` (`None`: all zero, as a deleted entry is written) into the
/// four payload fields `words`, first bytes first.
fn write_gid(data: &mut Payload, words: [Field<CmqData>; 4], gid: Option<&[u8; 16]>) {
    let gid = gid.copied().unwrap_or([0; 16]);
    for (f, b) in words.into_iter().zip(gid.chunks_exact(4)) {
        data.write(f, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
}

/// `mac` as C reads it into a payload: its first four bytes as a native
/// u32, its last two as a native u16 (little-endian on the machines HIP08
/// and HIP09 are in).
fn mac_words(mac: &[u8; 6]) -> (u32, u32) {
    (
        u32::from_ne_bytes([mac[0], mac[1], mac[2], mac[3]]),
        u32::from(u16::from_ne_bytes([mac[4], mac[5]])),
    )
}

/// Writes the CFG_SGID_TB payload of entry `index` with GID type `ty`
/// (`enum hns_roce_sgid_type`: 0 RoCE v1, also for a deleted entry, 1 RoCE
/// v2 IPv4, 2 RoCE v2 IPv6) and `gid` (`None`: a deleted entry) into
/// `data`.
pub fn write_sgid_tb(data: &mut Payload, index: u32, ty: u32, gid: Option<&[u8; 16]>) {
    data.write(sgid_tb::CFG_SGID_TB_TABLE_IDX, index);
    data.write(sgid_tb::CFG_SGID_TB_VF_SGID_TYPE, ty);
    write_gid(
        data,
        [
            sgid_tb::VF_SGID_L,
            sgid_tb::VF_SGID_ML,
            sgid_tb::VF_SGID_MH,
            sgid_tb::VF_SGID_H,
        ],
        gid,
    );
}

/// Writes the CFG_SMAC_TB payload of physical port `port` with MAC `mac`
/// into `data`.
pub fn write_smac_tb(data: &mut Payload, port: u32, mac: &[u8; 6]) {
    let (low, high) = mac_words(mac);
    data.write(smac_tb::CFG_SMAC_TB_IDX, port);
    data.write(smac_tb::CFG_SMAC_TB_VF_SMAC_H, high);
    data.write(smac_tb::VF_SMAC_L, low);
}

/// Writes the two CFG_GMV_TBL payloads (`a`, `b`) of entry `index`: GID
/// type `ty` (as [`write_sgid_tb`]), `gid`, VLAN `vlan_id` (enabled below
/// [`VLAN_CFI_MASK`]) and source MAC `mac`. A deleted entry is `None`, `0`,
/// [`VLAN_CFI_MASK`] and a zero MAC.
pub fn write_gmv_tb(
    a: &mut Payload,
    b: &mut Payload,
    index: u32,
    ty: u32,
    gid: Option<&[u8; 16]>,
    vlan_id: u16,
    mac: &[u8; 6],
) {
    write_gid(
        a,
        [
            gmv_tb_a::VF_SGID_L,
            gmv_tb_a::VF_SGID_ML,
            gmv_tb_a::VF_SGID_MH,
            gmv_tb_a::VF_SGID_H,
        ],
        gid,
    );
    a.write(gmv_tb_a::GMV_TB_A_VF_SGID_TYPE, ty);
    a.write(
        gmv_tb_a::GMV_TB_A_VF_VLAN_EN,
        u32::from(vlan_id < VLAN_CFI_MASK),
    );
    a.write(gmv_tb_a::GMV_TB_A_VF_VLAN_ID, u32::from(vlan_id));
    let (low, high) = mac_words(mac);
    b.write(gmv_tb_b::VF_SMAC_L, low);
    b.write(gmv_tb_b::GMV_TB_B_SMAC_H, high);
    b.write(gmv_tb_b::GMV_TB_B_SGID_IDX, index);
}
