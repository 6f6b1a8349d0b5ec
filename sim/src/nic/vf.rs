// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The VF side of the NIC model: what `hclgevf.ko` needs from the
//! firmware and from its PF when the function is a VF (PCI device
//! 0xa22f) and no PF driver runs in the guest. hclgevf drives the same
//! command queue registers as hclge ([`super::reg`]) but asks most things
//! of the PF through the mailbox: it sends MBX_VF_TO_PF on its CSQ, and
//! the PF (here: this model, playing hclge's `hclge_mbx_handler`) answers
//! by writing MBX_PF_TO_VF descriptors into the VF's receive queue (CRQ),
//! a synchronous answer as a PF_VF_RESP message carrying the request's
//! `match_id`, and raising the VF's misc vector 0 with the RX_CMDQ bit
//! set in the vector-0 state register. docs/hns-sim.md ("VF (hclgevf)")
//! lists every command and mailbox code with its answer.

use std::collections::VecDeque;

use super::fw::NicFw;
use super::{op, reg, DESC_NUM_SHIFT};
use crate::cmq::{flag, ret, Desc, DESC_SIZE};
use crate::mem::{Bar, Dma};
use crate::trace::Trace;

/// Mailbox message codes (`enum HCLGE_MBX_OPCODE`, hclge_mbx.h), less
/// the `HCLGE_MBX_` prefix. A test re-reads the header.
#[allow(missing_docs)]
pub mod mbx {
    pub const RESET: u8 = 1;
    pub const ASSERTING_RESET: u8 = 2;
    pub const SET_UNICAST: u8 = 3;
    pub const SET_MULTICAST: u8 = 4;
    pub const SET_VLAN: u8 = 5;
    pub const MAP_RING_TO_VECTOR: u8 = 6;
    pub const UNMAP_RING_TO_VECTOR: u8 = 7;
    pub const SET_PROMISC_MODE: u8 = 8;
    pub const SET_MACVLAN: u8 = 9;
    pub const API_NEGOTIATE: u8 = 10;
    pub const GET_QINFO: u8 = 11;
    pub const GET_QDEPTH: u8 = 12;
    pub const GET_BASIC_INFO: u8 = 13;
    pub const GET_RETA: u8 = 14;
    pub const GET_RSS_KEY: u8 = 15;
    pub const GET_MAC_ADDR: u8 = 16;
    pub const PF_VF_RESP: u8 = 17;
    pub const GET_BDNUM: u8 = 18;
    pub const GET_BUFSIZE: u8 = 19;
    pub const GET_STREAMID: u8 = 20;
    pub const SET_AESTART: u8 = 21;
    pub const SET_TSOSTATS: u8 = 22;
    pub const LINK_STAT_CHANGE: u8 = 23;
    pub const GET_BASE_CONFIG: u8 = 24;
    pub const BIND_FUNC_QUEUE: u8 = 25;
    pub const GET_LINK_STATUS: u8 = 26;
    pub const QUEUE_RESET: u8 = 27;
    pub const KEEP_ALIVE: u8 = 28;
    pub const SET_ALIVE: u8 = 29;
    pub const SET_MTU: u8 = 30;
    pub const GET_QID_IN_PF: u8 = 31;
    pub const LINK_STAT_MODE: u8 = 32;
    pub const GET_LINK_MODE: u8 = 33;
    pub const PUSH_VLAN_INFO: u8 = 34;
    pub const GET_MEDIA_TYPE: u8 = 35;
    pub const PUSH_PROMISC_INFO: u8 = 36;
    pub const VF_UNINIT: u8 = 37;
    pub const HANDLE_VF_TBL: u8 = 38;
    pub const GET_RING_VECTOR_MAP: u8 = 39;
    pub const GET_VF_FLR_STATUS: u8 = 200;
    pub const PUSH_LINK_STATUS: u8 = 201;
    pub const NCSI_ERROR: u8 = 202;

    /// Every code with its name, in the header's order.
    pub const ALL: &[(u8, &str)] = &[
        (RESET, "RESET"),
        (ASSERTING_RESET, "ASSERTING_RESET"),
        (SET_UNICAST, "SET_UNICAST"),
        (SET_MULTICAST, "SET_MULTICAST"),
        (SET_VLAN, "SET_VLAN"),
        (MAP_RING_TO_VECTOR, "MAP_RING_TO_VECTOR"),
        (UNMAP_RING_TO_VECTOR, "UNMAP_RING_TO_VECTOR"),
        (SET_PROMISC_MODE, "SET_PROMISC_MODE"),
        (SET_MACVLAN, "SET_MACVLAN"),
        (API_NEGOTIATE, "API_NEGOTIATE"),
        (GET_QINFO, "GET_QINFO"),
        (GET_QDEPTH, "GET_QDEPTH"),
        (GET_BASIC_INFO, "GET_BASIC_INFO"),
        (GET_RETA, "GET_RETA"),
        (GET_RSS_KEY, "GET_RSS_KEY"),
        (GET_MAC_ADDR, "GET_MAC_ADDR"),
        (PF_VF_RESP, "PF_VF_RESP"),
        (GET_BDNUM, "GET_BDNUM"),
        (GET_BUFSIZE, "GET_BUFSIZE"),
        (GET_STREAMID, "GET_STREAMID"),
        (SET_AESTART, "SET_AESTART"),
        (SET_TSOSTATS, "SET_TSOSTATS"),
        (LINK_STAT_CHANGE, "LINK_STAT_CHANGE"),
        (GET_BASE_CONFIG, "GET_BASE_CONFIG"),
        (BIND_FUNC_QUEUE, "BIND_FUNC_QUEUE"),
        (GET_LINK_STATUS, "GET_LINK_STATUS"),
        (QUEUE_RESET, "QUEUE_RESET"),
        (KEEP_ALIVE, "KEEP_ALIVE"),
        (SET_ALIVE, "SET_ALIVE"),
        (SET_MTU, "SET_MTU"),
        (GET_QID_IN_PF, "GET_QID_IN_PF"),
        (LINK_STAT_MODE, "LINK_STAT_MODE"),
        (GET_LINK_MODE, "GET_LINK_MODE"),
        (PUSH_VLAN_INFO, "PUSH_VLAN_INFO"),
        (GET_MEDIA_TYPE, "GET_MEDIA_TYPE"),
        (PUSH_PROMISC_INFO, "PUSH_PROMISC_INFO"),
        (VF_UNINIT, "VF_UNINIT"),
        (HANDLE_VF_TBL, "HANDLE_VF_TBL"),
        (GET_RING_VECTOR_MAP, "GET_RING_VECTOR_MAP"),
        (GET_VF_FLR_STATUS, "GET_VF_FLR_STATUS"),
        (PUSH_LINK_STATUS, "PUSH_LINK_STATUS"),
        (NCSI_ERROR, "NCSI_ERROR"),
    ];

    /// Name of a code for the trace.
    pub fn name(c: u8) -> &'static str {
        ALL.iter()
            .find(|(v, _)| *v == c)
            .map_or("UNKNOWN", |(_, n)| n)
    }

    /// `SET_VLAN` subcodes (`enum hclge_mbx_vlan_cfg_subcode`).
    pub mod vlan {
        /// Add or remove a VLAN filter entry.
        pub const FILTER: u8 = 0;
        /// TX VLAN offload.
        pub const TX_OFF_CFG: u8 = 1;
        /// RX VLAN tag stripping.
        pub const RX_OFF_CFG: u8 = 2;
        /// Port-based VLAN set-up.
        pub const PORT_BASE_VLAN_CFG: u8 = 3;
        /// Query the port-based VLAN state (synchronous, one byte).
        pub const GET_PORT_BASE_VLAN_STATE: u8 = 4;
        /// Enable the VF's VLAN filter.
        pub const ENABLE_VLAN_FILTER: u8 = 5;
    }
}

/// Bit of `mbx_need_resp` (byte 2 of `struct hclge_mbx_vf_to_pf_cmd`)
/// asking for a synchronous answer (`HCLGE_MBX_NEED_RESP_B`).
pub const NEED_RESP_B: u8 = 0;
/// Bytes of `resp_data` in a PF_VF_RESP (`HCLGE_MBX_MAX_RESP_DATA_SIZE`).
pub const RESP_DATA_SIZE: usize = 8;
/// Bytes of `msg_data` in a PF-to-VF message (`HCLGE_MBX_MAX_MSG_SIZE`).
pub const MSG_SIZE: usize = 14;
/// Bit of the vector-0 state register that tells hclgevf's misc handler
/// the CRQ holds messages (`HCLGEVF_VECTOR0_RX_CMDQ_INT_B`).
pub const RX_CMDQ_INT_B: u32 = 1;
/// The bit of a CRQ descriptor's flag hclgevf checks before it takes the
/// message (`HCLGEVF_CMDQ_RX_OUTVLD_B`): the OUT flag's bit.
pub const CRQ_OUTVLD: u16 = flag::OUT;
/// `flag` of a PF_VF_RESP push in LINK_STAT_CHANGE: the PF pushes link
/// changes itself (`HCLGE_MBX_PUSH_LINK_STATUS_EN`).
pub const PUSH_LINK_STATUS_EN: u8 = 1;
/// QUEUE_RESET's one answer byte: the PF reset all the VF's queues at
/// once (`HCLGE_RESET_ALL_QUEUE_DONE`).
pub const RESET_ALL_QUEUE_DONE: u8 = 1;
/// `port_base_vlan_state` hclge answers a V3 device's VF
/// (`HNAE3_PORT_BASE_VLAN_DISABLE`).
pub const PORT_BASE_VLAN_DISABLE: u8 = 0;
/// The reset type hclge's ASSERTING_RESET carries for its own function
/// reset (`HNAE3_VF_PF_FUNC_RESET` of `enum hnae3_reset_type`): hclgevf
/// then waits for its function's reset status ([`super::rst::FUN_RST_ING`])
/// to clear.
pub const VF_PF_FUNC_RESET: u16 = 2;
/// `EINVAL`, as hclge's `resp_status` carries it (the errno's absolute
/// value).
pub const EINVAL: u16 = 22;

/// What the PF reports to its VF, and what QUERY_VF_RSRC reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VfCfg {
    /// GET_QINFO `num_tqps` (the vport's `alloc_tqps`) and QUERY_VF_RSRC
    /// `tqp_num`.
    pub tqp_num: u16,
    /// GET_QINFO `rss_size`.
    pub rss_size: u16,
    /// GET_QINFO `rx_buf_len`.
    pub rx_buf_len: u16,
    /// GET_QDEPTH `num_tx_desc`.
    pub num_tx_desc: u16,
    /// GET_QDEPTH `num_rx_desc`.
    pub num_rx_desc: u16,
    /// GET_BASIC_INFO `hw_tc_map`: one bit per TC of the vport.
    pub hw_tc_map: u8,
    /// GET_BASIC_INFO `pf_caps` (`HNAE3_PF_SUPPORT_*_B`).
    pub pf_caps: u32,
    /// GET_MEDIA_TYPE: the PF's media type (`enum hnae3_media_type`).
    pub media_type: u8,
    /// GET_MEDIA_TYPE: the PF's module type.
    pub module_type: u8,
    /// GET_MAC_ADDR: the address the PF gave the VF.
    pub mac: [u8; 6],
    /// LINK_STAT_CHANGE `link_status`.
    pub link_up: bool,
    /// LINK_STAT_CHANGE `speed` in Mb/s.
    pub speed: u32,
    /// LINK_STAT_CHANGE `duplex` (1 full).
    pub duplex: u16,
    /// LINK_STAT_MODE: the PF's supported link modes (idx 1).
    pub supported: u64,
    /// LINK_STAT_MODE: the PF's advertised link modes (idx 0).
    pub advertising: u64,
    /// QUERY_VF_RSRC `msixcap_localid_ba_rocee`: the RoCE vectors' offset
    /// (the NIC's are the ones before it).
    pub roce_base: u16,
    /// QUERY_VF_RSRC `vf_intr_vector_number`: the RoCE vectors, which
    /// hclgevf also takes as the NIC's vector count.
    pub vectors: u16,
}

impl Default for VfCfg {
    fn default() -> Self {
        VfCfg {
            tqp_num: 4,
            rss_size: 4,
            rx_buf_len: 2048,
            num_tx_desc: 1024,
            num_rx_desc: 1024,
            hw_tc_map: 1,
            pf_caps: 0,
            media_type: super::fw::media::FIBER,
            module_type: 0,
            mac: [0x00, 0x18, 0x2d, 0x00, 0x01, 0x01],
            link_up: true,
            speed: 100_000,
            duplex: 1,
            supported: 0,
            advertising: 0,
            roce_base: super::NIC_VECTORS,
            vectors: 8,
        }
    }
}

/// A mailbox request as hclgevf lays out `struct hclge_mbx_vf_to_pf_cmd`
/// in a descriptor's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VfMsg {
    /// `mbx_src_vfid` (byte 1, filled by the IMP).
    pub src_vfid: u8,
    /// `mbx_need_resp` bit [`NEED_RESP_B`] (byte 2).
    pub need_resp: bool,
    /// `msg_len` (byte 4).
    pub msg_len: u8,
    /// `match_id` (bytes 6..8).
    pub match_id: u16,
    /// `msg.code` (byte 8).
    pub code: u8,
    /// `msg.subcode` (byte 9).
    pub subcode: u8,
    /// `msg.data` (bytes 10..24).
    pub data: [u8; MSG_SIZE],
}

impl VfMsg {
    /// The request in the payload `p`.
    pub fn parse(p: &[u8; 24]) -> Self {
        let mut data = [0u8; MSG_SIZE];
        data.copy_from_slice(&p[10..24]);
        VfMsg {
            src_vfid: p[1],
            need_resp: p[2] & (1 << NEED_RESP_B) != 0,
            msg_len: p[4],
            match_id: u16::from_le_bytes([p[6], p[7]]),
            code: p[8],
            subcode: p[9],
            data,
        }
    }
}

/// A PF_VF_RESP message (`hclge_gen_resp_to_vf`), as the payload of a
/// `struct hclge_mbx_pf_to_vf_cmd`: dest_vfid 0, msg_len 4, match_id 6,
/// msg.code 8, vf_mbx_msg_code 10, vf_mbx_msg_subcode 12, resp_status
/// 14, resp_data 16..24.
fn resp_payload(req: &VfMsg, status: u16, data: &[u8]) -> [u8; 24] {
    let mut p = [0u8; 24];
    p[0] = req.src_vfid;
    p[4] = req.msg_len;
    p[6..8].copy_from_slice(&req.match_id.to_le_bytes());
    p[8..10].copy_from_slice(&u16::from(mbx::PF_VF_RESP).to_le_bytes());
    p[10..12].copy_from_slice(&u16::from(req.code).to_le_bytes());
    p[12..14].copy_from_slice(&u16::from(req.subcode).to_le_bytes());
    p[14..16].copy_from_slice(&status.to_le_bytes());
    let n = data.len().min(RESP_DATA_SIZE);
    p[16..16 + n].copy_from_slice(&data[..n]);
    p
}

/// An asynchronous PF-to-VF message (`hclge_send_mbx_msg`): dest_vfid 0,
/// msg_len 4, match_id 0, msg.code 8, msg_data 10..24.
fn push_payload(dest: u8, code: u8, data: &[u8]) -> [u8; 24] {
    let mut p = [0u8; 24];
    p[0] = dest;
    let n = data.len().min(MSG_SIZE);
    // CAST: n is at most MSG_SIZE.
    p[4] = n as u8;
    p[8..10].copy_from_slice(&u16::from(code).to_le_bytes());
    p[10..10 + n].copy_from_slice(&data[..n]);
    p
}

/// The PF behind one VF, and the firmware commands only a VF sends.
#[derive(Debug, Default)]
pub struct VfPf {
    /// What the PF reports.
    pub cfg: VfCfg,
    /// PF-to-VF messages not yet written into the CRQ (payloads).
    pub outbox: VecDeque<[u8; 24]>,
    /// Mailbox requests handled, by code.
    pub counts: std::collections::BTreeMap<u8, u32>,
    /// The MTU the VF last set (SET_MTU), 0 before.
    pub mtu: u32,
    /// The VF said it is alive (SET_ALIVE).
    pub alive: bool,
    /// The VF's rings mapped to its vectors (MAP/UNMAP_RING_TO_VECTOR):
    /// (vector, ring type, queue, GL index).
    pub ring_vectors: Vec<(u8, u8, u8, u8)>,
    /// The VF's unicast and multicast addresses (SET_UNICAST,
    /// SET_MULTICAST).
    pub macs: Vec<[u8; 6]>,
    /// VLAN filter entries (SET_VLAN FILTER): VLAN ids.
    pub vlans: Vec<u16>,
    /// Requests for a VF reset (RESET).
    pub resets: u32,
    /// RESET requests the device loop has not carried out yet
    /// ([`VfPf::take_reset`]).
    resets_pending: u32,
    /// The CRQ as last read: base and depth in descriptors.
    crq: Option<(u64, u32)>,
    /// Where a reset of the PF stands for this VF.
    pub pf_reset: PfReset,
}

/// A reset of the PF as its VF lives it ([`super::sync_vfs`]): hclge
/// flags the VF's function in reset and tells it (ASSERTING_RESET), waits
/// until the VF has stopped (its SW_RST_RDY), resets itself, which resets
/// the VF's function too, and clears the VF's flag once it is up again
/// (`hclge_reset_prepare_up`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PfReset {
    /// No PF reset under way.
    #[default]
    Idle,
    /// Told: FUN_RST_ING set, ASSERTING_RESET queued; the PF waits for
    /// the VF's SW_RST_RDY.
    Informed,
    /// The PF's reset was carried out and reset this function; FUN_RST_ING
    /// stays set until the PF clears its own SW_RST_RDY.
    Reset,
}

/// A little-endian u16 at byte `off` of `b`.
fn le16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// What [`VfPf::poll_crq`] reads of the CRQ registers: base address and
/// depth in descriptors.
pub fn read_crq(bar: &Bar) -> (u64, u32) {
    let base =
        (bar.read32(reg::CRQ_BASEADDR_H) as u64) << 32 | bar.read32(reg::CRQ_BASEADDR_L) as u64;
    let units = bar.read32(reg::CRQ_DEPTH) & 0xffff;
    (base, units << DESC_NUM_SHIFT)
}

impl VfPf {
    /// The vectors the VF mapped queue `n`'s ring `ring_type` (0 TX, 1 RX)
    /// to (MAP_RING_TO_VECTOR): on hardware the PF's hclge writes that map
    /// with ADD_RING_TO_VECTOR for the VF's function, here the model
    /// reads it when the ring completes or receives.
    pub fn vectors_of(&self, ring_type: u8, n: u16) -> impl Iterator<Item = u16> + '_ {
        self.ring_vectors
            .iter()
            .filter(move |r| r.1 == ring_type && u16::from(r.2) == n)
            .map(|r| u16::from(r.0))
    }

    /// Whether the VF asked for a reset since the last call. hclge
    /// answers RESET by resetting the VF's function
    /// (`hclge_reset_vf`, hclge_mbx.c:650: `hclge_func_reset_cmd`
    /// with the VF's id), which clears its RoCE engine as well.
    pub fn take_reset(&mut self) -> bool {
        let asked = self.resets_pending > 0;
        self.resets_pending = 0;
        asked
    }

    /// Whether the PF's reset may go on as far as this VF is concerned
    /// (QUERY_VF_RST_RDY's `all_vf_ready`): a VF told of the reset has set
    /// its SW_RST_RDY (`hclgevf_reset_prepare_wait`, read from `bar`, the
    /// VF's BAR); one not alive (no SET_ALIVE, hclge does not tell it) or
    /// already reset does not hold the PF back; a live one not yet told
    /// does.
    pub fn ready_for_pf_reset(&self, bar: &Bar) -> bool {
        match self.pf_reset {
            PfReset::Idle => !self.alive,
            PfReset::Informed => bar.read32(reg::CSQ_DEPTH) & super::SW_RST_RDY != 0,
            PfReset::Reset => true,
        }
    }

    /// The PF is about to reset (what `hclge_set_all_vf_rst` does for a
    /// live VF, `dest`: its function id): the VF's FUN_RST_ING set in
    /// `bar` (GBL_RST_STATUS with `vf_rst`) and ASSERTING_RESET with
    /// HNAE3_VF_PF_FUNC_RESET queued for its CRQ
    /// (`hclge_inform_reset_assert_to_vf`).
    pub fn assert_pf_reset(&mut self, bar: &Bar, dest: u8, trace: &mut Trace) {
        bar.write32(
            super::rst::FUN_RST_ING,
            bar.read32(super::rst::FUN_RST_ING) | super::rst::FUN_RST_ING_BIT,
        );
        self.outbox.push_back(push_payload(
            dest,
            mbx::ASSERTING_RESET,
            &VF_PF_FUNC_RESET.to_le_bytes(),
        ));
        self.pf_reset = PfReset::Informed;
        trace.note("nic PF reset: FUN_RST_ING set, ASSERTING_RESET queued");
    }

    /// A message the PF's hclge sent this VF (MBX_PF_TO_VF, payload `p`),
    /// queued for the CRQ as the IMP carries it; an ASSERTING_RESET among
    /// them tells the VF of the PF's reset as [`VfPf::assert_pf_reset`]
    /// does.
    pub fn from_pf(&mut self, p: [u8; 24], trace: &mut Trace) {
        if u16::from_le_bytes([p[8], p[9]]) == u16::from(mbx::ASSERTING_RESET) {
            self.pf_reset = PfReset::Informed;
        }
        trace.note(&format!("nic PF mailbox to the VF: {}", mbx::name(p[8])));
        self.outbox.push_back(p);
    }

    /// GBL_RST_STATUS for this VF: its FUN_RST_ING set (`set`) or cleared
    /// in `bar`; cleared, the PF's reset is over for the VF.
    pub fn set_rst_ing(&mut self, bar: &Bar, set: bool, trace: &mut Trace) {
        if set {
            bar.write32(
                super::rst::FUN_RST_ING,
                bar.read32(super::rst::FUN_RST_ING) | super::rst::FUN_RST_ING_BIT,
            );
            trace.note("nic PF reset: GBL_RST_STATUS, FUN_RST_ING set");
        } else {
            self.release_pf_reset(bar, trace);
        }
    }

    /// The PF's reset reset this function too: what the PF keeps for the
    /// VF (its mailbox state: ring map, addresses, VLANs, MTU, alive, the
    /// messages not yet delivered) is dropped, as hclge's vport state is
    /// rebuilt from the VF's requests after the reset.
    pub fn reset_by_pf(&mut self) {
        self.outbox.clear();
        self.ring_vectors.clear();
        self.macs.clear();
        self.vlans.clear();
        self.mtu = 0;
        self.alive = false;
        self.crq = None;
        self.pf_reset = PfReset::Reset;
    }

    /// The PF is up again (`hclge_reset_prepare_up`: GBL_RST_STATUS
    /// without `vf_rst`): the VF's FUN_RST_ING cleared in `bar`, where
    /// `hclgevf_reset_wait` polls it.
    pub fn release_pf_reset(&mut self, bar: &Bar, trace: &mut Trace) {
        bar.write32(
            super::rst::FUN_RST_ING,
            bar.read32(super::rst::FUN_RST_ING) & !super::rst::FUN_RST_ING_BIT,
        );
        self.pf_reset = PfReset::Idle;
        trace.note("nic PF reset: done, FUN_RST_ING clear");
    }

    /// A PF reporting `cfg`.
    pub fn new(cfg: VfCfg) -> Self {
        VfPf {
            cfg,
            ..Default::default()
        }
    }

    /// Answers one command from the VF's CSQ: QUERY_VF_RSRC and
    /// MBX_VF_TO_PF here, every other one as `fw` answers hclge (the
    /// version and capability query, RSS, GRO, device specifications and
    /// queue commands are the same commands on a VF).
    pub fn execute(&mut self, fw: &mut NicFw, descs: &mut [Desc], trace: &mut Trace) {
        let Some(first) = descs.first() else {
            return;
        };
        let opcode = first.opcode;
        match opcode {
            op::QUERY_VF_RSRC => {
                *fw.counts.entry(opcode).or_default() += 1;
                // struct hclgevf_query_res_cmd, all __le16: tqp_num 0,
                // msixcap_localid_ba_nic 4 (0), msixcap_localid_ba_rocee
                // 6, vf_intr_vector_number 8 (bits 7..0).
                let mut p = [0u8; 24];
                p[0..2].copy_from_slice(&self.cfg.tqp_num.to_le_bytes());
                p[6..8].copy_from_slice(&self.cfg.roce_base.to_le_bytes());
                p[8..10].copy_from_slice(&(self.cfg.vectors & 0xff).to_le_bytes());
                descs[0].set_bytes(0, &p);
            }
            op::MBX_VF_TO_PF => {
                *fw.counts.entry(opcode).or_default() += 1;
                let mut p = [0u8; 24];
                p.copy_from_slice(&descs[0].to_bytes()[8..]);
                let m = VfMsg::parse(&p);
                trace.note(&format!(
                    "nic mbx > {} sub={} resp={} match={} data={:02x?}",
                    mbx::name(m.code),
                    m.subcode,
                    m.need_resp as u8,
                    m.match_id,
                    m.data
                ));
                self.mailbox(&m, trace);
            }
            _ => {
                fw.execute(descs);
                return;
            }
        }
        for d in descs.iter_mut() {
            d.flag |= flag::OUT;
            d.retval = ret::SUCCESS;
        }
    }

    /// hclge_mbx_handler for one request: the code's handler, then a
    /// PF_VF_RESP when the VF asked for one (never for the codes from
    /// GET_VF_FLR_STATUS on, the IMP's). A code hclge has no handler for
    /// gets no answer at all, as from hclge.
    pub fn mailbox(&mut self, m: &VfMsg, trace: &mut Trace) {
        *self.counts.entry(m.code).or_default() += 1;
        let Some((status, data)) = self.handle(m) else {
            trace.note(&format!(
                "nic mbx: no handler for code {} (hclge drops it)",
                m.code
            ));
            return;
        };
        if m.need_resp && m.code < mbx::GET_VF_FLR_STATUS {
            self.outbox.push_back(resp_payload(m, status, &data));
        }
    }

    /// The answer of the handler hclge runs for `m`: the status (an errno's
    /// absolute value) and the response data; None for a code without a
    /// handler in `hclge_mbx_ops_list`.
    fn handle(&mut self, m: &VfMsg) -> Option<(u16, Vec<u8>)> {
        let c = &self.cfg;
        let ok = |d: Vec<u8>| Some((0, d));
        match m.code {
            mbx::GET_BASIC_INFO => {
                // struct hclge_basic_info: hw_tc_map 0, rsv 1,
                // mbx_api_version 2 (hclge leaves 0), pf_caps 4; all 8
                // bytes are sent.
                let mut d = vec![0u8; RESP_DATA_SIZE];
                d[0] = c.hw_tc_map;
                d[4..8].copy_from_slice(&c.pf_caps.to_le_bytes());
                ok(d)
            }
            mbx::GET_QINFO => {
                // struct hclge_mbx_vf_queue_info: num_tqps, rss_size,
                // rx_buf_len.
                let mut d = Vec::with_capacity(6);
                d.extend_from_slice(&c.tqp_num.to_le_bytes());
                d.extend_from_slice(&c.rss_size.to_le_bytes());
                d.extend_from_slice(&c.rx_buf_len.to_le_bytes());
                ok(d)
            }
            mbx::GET_QDEPTH => {
                // struct hclge_mbx_vf_queue_depth: num_tx_desc,
                // num_rx_desc.
                let mut d = Vec::with_capacity(4);
                d.extend_from_slice(&c.num_tx_desc.to_le_bytes());
                d.extend_from_slice(&c.num_rx_desc.to_le_bytes());
                ok(d)
            }
            mbx::GET_MEDIA_TYPE => ok(vec![c.media_type, c.module_type]),
            mbx::GET_MAC_ADDR => ok(c.mac.to_vec()),
            mbx::GET_QID_IN_PF => {
                // The VF's queue id in the PF's numbering: the model gives
                // each VF the PF's first queues, so the same id.
                let q = le16(&m.data, 0);
                if q >= c.tqp_num {
                    return Some((EINVAL, vec![]));
                }
                ok(q.to_le_bytes().to_vec())
            }
            mbx::QUEUE_RESET => ok(vec![RESET_ALL_QUEUE_DONE]),
            mbx::SET_VLAN => match m.subcode {
                mbx::vlan::GET_PORT_BASE_VLAN_STATE => ok(vec![PORT_BASE_VLAN_DISABLE]),
                mbx::vlan::FILTER => {
                    // struct hclge_vf_vlan_cfg after code and subcode:
                    // is_kill, vlan (__le16), proto.
                    let kill = m.data[0] != 0;
                    let vlan = le16(&m.data, 1);
                    self.vlans.retain(|&v| v != vlan);
                    if !kill {
                        self.vlans.push(vlan);
                    }
                    ok(vec![])
                }
                _ => ok(vec![]),
            },
            mbx::GET_LINK_STATUS => {
                self.push_link_status(m.src_vfid);
                ok(vec![])
            }
            mbx::GET_LINK_MODE => {
                // struct hclge_mbx_link_mode (packed): idx, link_mode;
                // idx 1 asks for the supported modes.
                let idx = m.data[0];
                let modes = if idx == 1 { c.supported } else { c.advertising };
                let mut d = Vec::with_capacity(10);
                d.extend_from_slice(&u16::from(idx).to_le_bytes());
                d.extend_from_slice(&modes.to_le_bytes());
                self.outbox
                    .push_back(push_payload(m.src_vfid, mbx::LINK_STAT_MODE, &d));
                ok(vec![])
            }
            mbx::SET_MTU => {
                self.mtu = u32::from_le_bytes([m.data[0], m.data[1], m.data[2], m.data[3]]);
                ok(vec![])
            }
            mbx::SET_ALIVE => {
                self.alive = m.data[0] != 0;
                ok(vec![])
            }
            mbx::MAP_RING_TO_VECTOR | mbx::UNMAP_RING_TO_VECTOR => {
                // vector_id at msg byte 1 (the subcode's), ring_num 2,
                // then (ring_type, tqp_index, int_gl_index) triples.
                let vector = m.subcode;
                let n = usize::from(m.data[0]).min(4);
                for i in 0..n {
                    let t = &m.data[1 + 3 * i..4 + 3 * i];
                    self.ring_vectors
                        .retain(|r| (r.1, r.2) != (t[0], t[1]) || r.0 != vector);
                    if m.code == mbx::MAP_RING_TO_VECTOR {
                        self.ring_vectors.push((vector, t[0], t[1], t[2]));
                    }
                }
                ok(vec![])
            }
            mbx::SET_UNICAST | mbx::SET_MULTICAST => {
                let mut a = [0u8; 6];
                a.copy_from_slice(&m.data[..6]);
                self.macs.retain(|x| *x != a);
                // Subcodes UC_MODIFY, UC_ADD, MC_ADD keep the address.
                if matches!(m.subcode, 0 | 1 | 4) {
                    self.macs.push(a);
                }
                ok(vec![])
            }
            mbx::RESET => {
                self.resets += 1;
                self.resets_pending += 1;
                ok(vec![])
            }
            mbx::SET_PROMISC_MODE
            | mbx::KEEP_ALIVE
            | mbx::VF_UNINIT
            | mbx::HANDLE_VF_TBL
            | mbx::GET_VF_FLR_STATUS
            | mbx::PUSH_LINK_STATUS
            | mbx::NCSI_ERROR => ok(vec![]),
            mbx::GET_RSS_KEY | mbx::GET_RING_VECTOR_MAP => {
                // Asked only of a V2 device (RSS key) or by debugfs (ring
                // map): answered as success with the data zeroed.
                ok(vec![0; RESP_DATA_SIZE])
            }
            _ => None,
        }
    }

    /// Queues a LINK_STAT_CHANGE for VF `dest` (`hclge_push_vf_link_status`):
    /// struct hclge_mbx_link_status, packed: link_status 0, speed 2,
    /// duplex 6, flag 8.
    pub fn push_link_status(&mut self, dest: u8) {
        let c = &self.cfg;
        let mut d = Vec::with_capacity(9);
        d.extend_from_slice(&u16::from(c.link_up).to_le_bytes());
        d.extend_from_slice(&c.speed.to_le_bytes());
        d.extend_from_slice(&c.duplex.to_le_bytes());
        d.push(PUSH_LINK_STATUS_EN);
        self.outbox
            .push_back(push_payload(dest, mbx::LINK_STAT_CHANGE, &d));
    }

    /// Writes what the outbox holds into the CRQ while it has room, moves
    /// the CRQ tail and sets the vector-0 state bit [`RX_CMDQ_INT_B`];
    /// clears that bit once hclgevf has written the clear (bit 1 of the
    /// source register 0 while the state has it). Returns whether any
    /// message was written: then the VF's misc vector 0 is to be raised.
    /// A CRQ without address or depth (before hclgevf's command queue
    /// init) keeps the messages queued.
    pub fn poll_crq<M: Dma>(&mut self, bar: &Bar, mem: &M, trace: &mut Trace) -> bool {
        let state = bar.read32(reg::VECTOR0_CMDQ_STATE);
        if state & (1 << RX_CMDQ_INT_B) != 0
            && bar.read32(reg::VECTOR0_CMDQ_SRC) & (1 << RX_CMDQ_INT_B) == 0
        {
            bar.write32(reg::VECTOR0_CMDQ_STATE, state & !(1 << RX_CMDQ_INT_B));
        }
        let (base, depth) = read_crq(bar);
        if base == 0 || depth == 0 {
            self.crq = None;
            return false;
        }
        self.crq = Some((base, depth));
        if self.outbox.is_empty() {
            return false;
        }
        let head = bar.read32(reg::CRQ_HEAD);
        let mut tail = bar.read32(reg::CRQ_TAIL);
        if head >= depth || tail >= depth {
            trace.note(&format!(
                "NIC CRQ index out of range: tail {tail} head {head} depth {depth}"
            ));
            return false;
        }
        let mut wrote = false;
        while (tail + 1) % depth != head {
            let Some(p) = self.outbox.pop_front() else {
                break;
            };
            let mut d = Desc {
                opcode: op::MBX_PF_TO_VF,
                flag: CRQ_OUTVLD | flag::IN | super::FLAG_NO_INTR,
                ..Desc::default()
            };
            d.set_bytes(0, &p);
            let at = base + u64::from(tail) * DESC_SIZE as u64;
            if mem.write(at, &d.to_bytes()).is_err() {
                trace.note(&format!("NIC CRQ ring at {base:#x} is outside guest RAM"));
                return wrote;
            }
            trace.note(&format!(
                "nic crq < {} data={:02x?}",
                mbx::name(p[8]),
                &p[..]
            ));
            tail = (tail + 1) % depth;
            wrote = true;
        }
        if wrote {
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            bar.write32(reg::CRQ_TAIL, tail);
            let s = bar.read32(reg::VECTOR0_CMDQ_STATE);
            bar.write32(reg::VECTOR0_CMDQ_STATE, s | 1 << RX_CMDQ_INT_B);
            let src = bar.read32(reg::VECTOR0_CMDQ_SRC);
            bar.write32(reg::VECTOR0_CMDQ_SRC, src | 1 << RX_CMDQ_INT_B);
        }
        wrote
    }
}
