// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The NIC firmware's answers to the commands hclge sends through probe
//! (`hclge_init_ae_dev`), client init and link-up: the ones whose answer
//! hclge reads get the fields it reads, laid out as the hclge command
//! structs place them (byte offsets in the payload, the 24 bytes after the
//! 8-byte header); every other command succeeds, a query with its payload
//! zeroed and a write with it left as sent. docs/hns-sim.md ("NIC command
//! queue") lists them with the hclge code that reads each answer.

use std::collections::BTreeMap;

use super::op;
use crate::cmq::{flag, ret, Desc};

/// Bits of the `caps` words of QUERY_FW_VER (`enum HCLGE_COMM_CAP_BITS`).
pub mod cap {
    /// The IMP handles RAS errors (`HCLGE_COMM_CAP_RAS_IMP_B`).
    pub const RAS_IMP: u32 = 12;
}

/// `pf_state` bits of QUERY_FUNC_STATUS (`HCLGE_PF_STATE_*`).
pub mod pf_state {
    /// The PF's reset is done.
    pub const DONE: u8 = 1 << 0;
    /// The PF is the main PF of its port.
    pub const MAIN: u8 = 1 << 1;
}

/// `result` bits of COMMON_LOOPBACK (`HCLGE_CMD_COMMON_LB_*`).
pub mod lb {
    /// The loopback change is done.
    pub const DONE: u8 = 1 << 0;
    /// It succeeded.
    pub const SUCCESS: u8 = 1 << 1;
}

/// `fun_reset_rcb_return_status` of CFG_RST_TRIGGER: the RCB reset was
/// carried out (`HCLGE_RESET_RCB_SUCCESS`).
pub const RCB_RESET_SUCCESS: u8 = 1;
/// `fun_reset_rcb` bit asking for an RCB reset (`HCLGE_CFG_RESET_RCB_B`).
pub const RESET_RCB_B: u8 = 1;
/// `mac_func_reset` bit asking for a function reset
/// (`HCLGE_CFG_RESET_FUNC_B`).
pub const RESET_FUNC_B: u8 = 7;

/// The error-status descriptor counts of QUERY_MSIX_INT_STS_BD_NUM and
/// QUERY_RAS_INT_STS_BD_NUM: the least hclge accepts
/// (`HCLGE_MPF_*_INT_MIN_BD_NUM`, `HCLGE_PF_*_INT_MIN_BD_NUM`).
pub const ERR_MPF_BD_NUM: u32 = 10;
/// See [`ERR_MPF_BD_NUM`].
pub const ERR_PF_BD_NUM: u32 = 4;

/// The `resp_code` of the MAC_VLAN table commands: the entry is missing
/// (lookup, remove); 0 is found/done.
pub const MAC_VLAN_MISS: u8 = 1;

/// Media types of GET_CFG_PARAM (`enum hnae3_media_type`).
pub mod media {
    /// Optical module: the port's speed comes from GET_SFP_INFO.
    pub const FIBER: u8 = 1;
    /// Copper with a PHY hclge drives through MDIO.
    pub const COPPER: u8 = 2;
}

/// What the firmware reports about the function and its port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicCfg {
    /// QUERY_FW_VER `firmware`: four version bytes, most significant first.
    pub fw_version: u32,
    /// QUERY_FW_VER `hardware`: 0 on a real chip (the device version is
    /// this << 8 | the PCI revision).
    pub hardware: u32,
    /// QUERY_FW_VER `caps` words (bits of [`cap`]).
    pub caps: [u32; 3],
    /// QUERY_PF_RSRC `tqp_num`: the PF's queue pairs (`ext_tqp_num` is 0).
    pub tqp_num: u16,
    /// QUERY_PF_RSRC `buf_size`, in 128-byte units.
    pub buf_units: u16,
    /// QUERY_PF_RSRC `msixcap_localid_number_nic`: the NIC's vectors (at
    /// least 2: vector 0 for misc events, one for queues).
    pub nic_vectors: u16,
    /// QUERY_PF_RSRC `pf_intr_vector_number_roce`: the RoCE vectors,
    /// which follow the NIC's.
    pub roce_vectors: u16,
    /// QUERY_FUNC_STATUS `pf_num`: PFs on the chip.
    pub pf_num: u8,
    /// QUERY_FUNC_STATUS `mac_id`.
    pub mac_id: u8,
    /// GET_CFG_PARAM `tc_num`.
    pub tc_num: u8,
    /// GET_CFG_PARAM `tqp_desc_num`: descriptors per TQP ring.
    pub tqp_desc_num: u16,
    /// GET_CFG_PARAM `phy_addr`.
    pub phy_addr: u8,
    /// GET_CFG_PARAM `media_type` ([`media`]).
    pub media_type: u8,
    /// GET_CFG_PARAM `rx_buf_len`.
    pub rx_buf_len: u16,
    /// The port's MAC address (GET_CFG_PARAM).
    pub mac: [u8; 6],
    /// GET_CFG_PARAM `default_speed` (`enum HCLGE_FIRMWARE_MAC_SPEED`).
    pub default_speed: u8,
    /// GET_CFG_PARAM `rss_size_max` (the VFs', and the PF's when
    /// `pf_rss_size` is 0).
    pub rss_size_max: u8,
    /// GET_CFG_PARAM `speed_ability` (`HCLGE_SUPPORT_*_BIT`, 8 bits).
    pub speed_ability: u8,
    /// GET_CFG_PARAM `umv_space`: unicast MAC entries (0: hclge's default).
    pub umv_space: u16,
    /// GET_SFP_INFO `speed` in Mb/s (`enum hclge_mac_speed`).
    pub speed: u32,
    /// QUERY_MAC_REG_NUM: the MAC statistics registers.
    pub mac_stats_num: u32,
    /// QUERY_LINK_STATUS: the link is up.
    pub link_up: bool,
}

impl Default for NicCfg {
    fn default() -> Self {
        NicCfg {
            fw_version: 0x0110_0000,
            hardware: 0,
            caps: [1 << cap::RAS_IMP, 0, 0],
            tqp_num: 4,
            buf_units: 0x2100,
            nic_vectors: super::NIC_VECTORS,
            roce_vectors: 8,
            pf_num: 1,
            mac_id: 0,
            tc_num: 1,
            tqp_desc_num: 1024,
            phy_addr: 0,
            media_type: media::FIBER,
            rx_buf_len: 2048,
            mac: [0x00, 0x18, 0x2d, 0x00, 0x00, 0x01],
            default_speed: 5,
            rss_size_max: 4,
            speed_ability: 1 << 4,
            umv_space: 0,
            speed: 100_000,
            mac_stats_num: 105,
            link_up: true,
        }
    }
}

/// One ADD_RING_TO_VECTOR element: a queue's TX or RX ring raising a
/// vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RingVec {
    /// 0 TX, 1 RX (`enum hclge_int_type`).
    pub int_type: u8,
    /// The queue pair.
    pub tqp: u16,
    /// The interrupt coalescing (GL) index.
    pub gl: u8,
    /// The function (`vfid`, 0 for the PF).
    pub vfid: u8,
}

/// The firmware state behind the NIC command queue.
#[derive(Debug, Default)]
pub struct NicFw {
    /// What the firmware reports.
    pub cfg: NicCfg,
    /// The unicast MAC space hclge asked for and was given.
    pub umv_allocated: u32,
    /// MAC_VLAN table: key (VLAN tag and address, payload bytes 2..10 of
    /// the first descriptor) to the payloads of the entry's descriptors.
    pub mac_vlan: BTreeMap<[u8; 8], Vec<[u8; 24]>>,
    /// Ring-to-vector map (ADD/DEL_RING_TO_VECTOR): vector to its rings.
    pub vectors: BTreeMap<u16, Vec<RingVec>>,
    /// The loopback modes enabled (COMMON_LOOPBACK `enable`).
    pub loopback: u8,
    /// Function resets asked for (CFG_RST_TRIGGER), by function id.
    pub func_resets: Vec<u8>,
    /// A function reset of the function itself (function id 0) was asked
    /// for and not yet taken by the command queue ([`super::NicCmq`]).
    pub reset_asked: bool,
    /// QUERY_VF_RST_RDY's `all_vf_ready`: whether every VF of the PF has
    /// stopped for the PF's reset (set before each pass from the VFs'
    /// state, [`super::sync_vfs`]; true for a PF without a live VF).
    pub vfs_ready: bool,
    /// A QUERY_VF_RST_RDY came since the command queue last looked: hclge
    /// is about to reset its function and waits for its VFs.
    pub vf_sync_asked: bool,
    /// Messages hclge sent its VFs (MBX_PF_TO_VF: `struct
    /// hclge_mbx_pf_to_vf_cmd` payloads), for the model to carry into
    /// the VF's CRQ as the IMP does ([`super::sync_vfs`]).
    pub to_vfs: Vec<[u8; 24]>,
    /// GBL_RST_STATUS requests (`struct hclge_vf_rst_cmd`): the VF's
    /// function id and whether its FUN_RST_ING is to be set.
    pub vf_rst: Vec<(u8, bool)>,
    /// Commands answered, by opcode.
    pub counts: BTreeMap<u16, u32>,
}

/// The payload of `d` as bytes.
fn payload(d: &Desc) -> [u8; 24] {
    let mut p = [0u8; 24];
    p.copy_from_slice(&d.to_bytes()[8..]);
    p
}

/// Replaces the payload of `d`.
fn set_payload(d: &mut Desc, p: &[u8; 24]) {
    d.set_bytes(0, p);
}

/// A little-endian u16 at byte `off` of a payload.
fn put16(p: &mut [u8; 24], off: usize, v: u16) {
    p[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

/// A little-endian u32 at byte `off` of a payload.
fn put32(p: &mut [u8; 24], off: usize, v: u32) {
    p[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// The little-endian u16 at byte `off` of a payload.
fn get16(p: &[u8; 24], off: usize) -> u16 {
    u16::from_le_bytes([p[off], p[off + 1]])
}

impl NicFw {
    /// Firmware reporting `cfg`.
    pub fn new(cfg: NicCfg) -> Self {
        NicFw {
            cfg,
            vfs_ready: true,
            ..Default::default()
        }
    }

    /// Answers one command (`descs`: its descriptors, chained by NEXT):
    /// every descriptor gets the OUT flag and the return code (hclge reads
    /// the last one's, or the first one's for its multi-descriptor
    /// statistics opcodes).
    pub fn execute(&mut self, descs: &mut [Desc]) {
        let Some(first) = descs.first() else {
            return;
        };
        let opcode = first.opcode;
        *self.counts.entry(opcode).or_default() += 1;
        if op::is_special(opcode) {
            // Statistics and error-status reads: every counter 0, every
            // error clear (the descriptors after the first are all
            // payload); a clear (a write) is left as sent.
            if descs[0].is_read() {
                descs[0].data = [0; 6];
                for d in &mut descs[1..] {
                    *d = Desc::default();
                }
            }
            descs[0].flag |= flag::OUT;
            descs[0].retval = ret::SUCCESS;
            return;
        }
        let rv = self.answer(opcode, descs);
        for d in descs.iter_mut() {
            d.flag |= flag::OUT;
            d.retval = rv;
        }
    }

    /// The answer's payloads and return code.
    fn answer(&mut self, opcode: u16, descs: &mut [Desc]) -> u16 {
        let read = descs[0].is_read();
        let mut p = payload(&descs[0]);
        let c = &self.cfg;
        match opcode {
            op::QUERY_FW_VER => {
                // struct hclge_comm_query_version_cmd: firmware, hardware,
                // api_caps (the driver's, left), caps[3].
                put32(&mut p, 0, c.fw_version);
                put32(&mut p, 4, c.hardware);
                for (i, w) in c.caps.iter().enumerate() {
                    put32(&mut p, 12 + 4 * i, *w);
                }
            }
            op::QUERY_FUNC_STATUS => {
                // struct hclge_func_status_cmd: vf_rst_state[4] (no VF in
                // reset), pf_state at 16, mac_id 17, pf_cnt_in_mac 19,
                // pf_num 20, vf_num 21.
                p = [0; 24];
                p[16] = pf_state::DONE | pf_state::MAIN;
                p[17] = c.mac_id;
                p[19] = 1;
                p[20] = c.pf_num;
            }
            op::QUERY_PF_RSRC => {
                // struct hclge_pf_res_cmd, all __le16: tqp_num 0, buf_size
                // 2, msixcap_localid_ba_nic 4, ..._number_nic 6,
                // pf_intr_vector_number_roce 8, pf_own_fun_number 10,
                // tx_buf_size 12, dv_buf_size 14 (0: hclge's defaults),
                // ext_tqp_num 16.
                p = [0; 24];
                put16(&mut p, 0, c.tqp_num);
                put16(&mut p, 2, c.buf_units);
                put16(&mut p, 6, c.nic_vectors);
                put16(&mut p, 8, c.roce_vectors);
                put16(&mut p, 10, 1);
            }
            op::GET_CFG_PARAM => {
                // struct hclge_cfg_param_cmd: offset (bits 19..0, the
                // block's byte offset: 0 or 16), rsv, param[4] at 8.
                let offset = u32::from_le_bytes([p[0], p[1], p[2], p[3]]) & 0xf_ffff;
                let mut w = [0u32; 4];
                if offset == 0 {
                    w[0] = (c.tc_num as u32) << 8 | (c.tqp_desc_num as u32) << 16;
                    w[1] = c.phy_addr as u32
                        | (c.media_type as u32) << 8
                        | (c.rx_buf_len as u32) << 16;
                    w[2] = u32::from_le_bytes([c.mac[0], c.mac[1], c.mac[2], c.mac[3]]);
                    w[3] = u16::from_le_bytes([c.mac[4], c.mac[5]]) as u32
                        | (c.default_speed as u32) << 16
                        | (c.rss_size_max as u32) << 24;
                } else {
                    // numa_node_map 0, speed_ability bits 7..0, umv_space
                    // 31..16; pf_rss_size 0 (= rss_size_max), no TX
                    // spare buffer.
                    w[1] = c.speed_ability as u32 | (c.umv_space as u32) << 16;
                }
                for (i, v) in w.iter().enumerate() {
                    put32(&mut p, 8 + 4 * i, *v);
                }
            }
            op::QUERY_MAC_REG_NUM => {
                p = [0; 24];
                put32(&mut p, 0, c.mac_stats_num);
            }
            op::MAC_VLAN_ALLOCATE => {
                // struct hclge_umv_spc_alc_cmd: allocate byte 0,
                // space_size at 4; the answer gives the whole request
                // (hclge reads data[1] back as the size allocated).
                self.umv_allocated = u32::from_le_bytes([p[4], p[5], p[6], p[7]]);
            }
            op::QUERY_LINK_STATUS => {
                p = [0; 24];
                p[0] = c.link_up as u8;
            }
            op::GET_SFP_INFO => {
                if c.media_type == media::COPPER {
                    return ret::NOT_EXIST;
                }
                // struct hclge_sfp_info_cmd: speed 0, query_type 4 (the
                // driver's, left), active_fec 5, autoneg 6,
                // autoneg_ability 7, speed_ability 8, module_type 12,
                // fec_ability 16, lane_num 17.
                put32(&mut p, 0, c.speed);
                p[5] = 0;
                p[6] = 0;
                p[7] = 0;
                put32(&mut p, 8, c.speed_ability as u32);
                put32(&mut p, 12, 0);
                p[16] = 0;
                p[17] = 0;
            }
            op::COMMON_LOOPBACK => {
                // struct hclge_common_lb_cmd: mask, enable, result.
                if read {
                    p[2] = lb::DONE | lb::SUCCESS;
                } else {
                    self.loopback = (self.loopback & !p[0]) | (p[1] & p[0]);
                }
            }
            op::ADD_RING_TO_VECTOR | op::DEL_RING_TO_VECTOR => {
                self.ring_to_vector(opcode == op::ADD_RING_TO_VECTOR, &p);
            }
            op::CFG_RST_TRIGGER => {
                // struct hclge_reset_cmd: mac_func_reset 0, fun_reset_vfid
                // 1, fun_reset_rcb 2, ..., fun_reset_rcb_return_status 8.
                if p[0] & (1 << RESET_FUNC_B) != 0 {
                    self.func_resets.push(p[1]);
                    self.reset_asked |= p[1] == 0;
                }
                if p[2] & (1 << RESET_RCB_B) != 0 {
                    p[8] = RCB_RESET_SUCCESS;
                }
            }
            op::QUERY_MSIX_INT_STS_BD_NUM | op::QUERY_RAS_INT_STS_BD_NUM => {
                // hclge_query_bd_num: data[0] main-PF descriptors, data[1]
                // PF descriptors, each at least hclge_err.h's minimum.
                p = [0; 24];
                put32(&mut p, 0, ERR_MPF_BD_NUM);
                put32(&mut p, 4, ERR_PF_BD_NUM);
            }
            op::MBX_PF_TO_VF => self.to_vfs.push(p),
            op::GBL_RST_STATUS if !read => {
                // struct hclge_vf_rst_cmd: dest_vfid 0, vf_rst 1.
                self.vf_rst.push((p[0], p[1] & 1 != 0));
            }
            op::QUERY_VF_RST_RDY => {
                // struct hclge_pf_rst_sync_cmd: all_vf_ready bit 0.
                p = [0; 24];
                p[0] = u8::from(self.vfs_ready);
                self.vf_sync_asked = true;
            }
            op::RESET_TQP_QUEUE if read => {
                // struct hclge_reset_tqp_queue_cmd: tqp_id 0 (left),
                // reset_req 2, ready_to_reset 3 bit 0.
                p[3] = 1;
            }
            op::MAC_VLAN_ADD | op::MAC_VLAN_REMOVE => {
                return self.mac_vlan(opcode, descs);
            }
            _ if read => p = [0; 24],
            _ => {}
        }
        set_payload(&mut descs[0], &p);
        if read && descs.len() > 1 && !matches!(opcode, op::GET_CFG_PARAM) {
            for d in &mut descs[1..] {
                set_payload(d, &[0; 24]);
            }
        }
        ret::SUCCESS
    }

    /// ADD/DEL_RING_TO_VECTOR (struct hclge_ctrl_vector_chain_cmd):
    /// int_vector_id_l 0, int_cause_num 1, tqp_type_and_id[10] at 2 (type
    /// bits 1..0, queue 12..2, GL index 14..13), vfid 22,
    /// int_vector_id_h 23.
    fn ring_to_vector(&mut self, add: bool, p: &[u8; 24]) {
        let vector = p[0] as u16 | (p[23] as u16) << 8;
        let n = (p[1] as usize).min(10);
        let rings = self.vectors.entry(vector).or_default();
        for i in 0..n {
            let e = get16(p, 2 + 2 * i);
            let r = RingVec {
                int_type: (e & 0x3) as u8,
                tqp: (e >> 2) & 0x7ff,
                gl: ((e >> 13) & 0x3) as u8,
                vfid: p[22],
            };
            rings.retain(|x| (x.int_type, x.tqp, x.vfid) != (r.int_type, r.tqp, r.vfid));
            if add {
                rings.push(r);
            }
        }
        if rings.is_empty() {
            self.vectors.remove(&vector);
        }
    }

    /// MAC_VLAN_ADD (add, or look up when a read) and MAC_VLAN_REMOVE
    /// (struct hclge_mac_vlan_tbl_entry_cmd): `resp_code` at byte 1 of the
    /// first descriptor (0 found/done, [`MAC_VLAN_MISS`]); a multicast
    /// entry carries its function bitmap in two more descriptors.
    fn mac_vlan(&mut self, opcode: u16, descs: &mut [Desc]) -> u16 {
        let read = descs[0].is_read();
        let p0 = payload(&descs[0]);
        let mut key = [0u8; 8];
        key.copy_from_slice(&p0[2..10]);
        let code = match (opcode, read) {
            (op::MAC_VLAN_ADD, false) => {
                let entry = descs.iter().map(payload).collect();
                self.mac_vlan.insert(key, entry);
                0
            }
            (op::MAC_VLAN_ADD, true) => match self.mac_vlan.get(&key) {
                Some(entry) => {
                    for (d, e) in descs.iter_mut().zip(entry).skip(1) {
                        set_payload(d, e);
                    }
                    0
                }
                None => MAC_VLAN_MISS,
            },
            _ => match self.mac_vlan.remove(&key) {
                Some(_) => 0,
                None => MAC_VLAN_MISS,
            },
        };
        let mut p = p0;
        p[1] = code;
        set_payload(&mut descs[0], &p);
        ret::SUCCESS
    }
}
