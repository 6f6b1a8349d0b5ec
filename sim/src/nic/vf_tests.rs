// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The VF's command queue and mailbox driven as hclgevf drives them:
//! requests written byte by byte as `struct hclge_mbx_vf_to_pf_cmd` lays
//! them out in a `struct hclge_desc` (opcode 0, flag 2, retval 4, payload
//! from 8: mbx_src_vfid 9, mbx_need_resp 10, msg_len 12, match_id 14,
//! msg.code 16, msg.subcode 17, msg.data 18), answers read back from the
//! CRQ at the offsets `hclgevf_mbx_handler` and
//! `hclgevf_handle_mbx_response` read (`struct hclge_mbx_pf_to_vf_cmd`:
//! match_id 14, msg.code 16, vf_mbx_msg_code 18, vf_mbx_msg_subcode 20,
//! resp_status 22, resp_data 24; msg_data 18 for a push).

use super::fw::{NicCfg, NicFw};
use super::vf::{mbx, PfReset, VfCfg, VfPf};
use super::{mark_vfs, op, poll_all, reg, rst, NicCmq, SW_RST_RDY};
use crate::mem::{Bar, Dma, VecMem};
use crate::trace::Trace;

/// Where the test VF allocates its CSQ.
const CSQ: u64 = 0x1000;
/// Where it allocates its CRQ.
const CRQ: u64 = 0x9000;
/// Where the PF's hclge, when there is one, allocates its CSQ.
const PF_CSQ: u64 = 0x11000;
// The ring size and descriptor flags are hclge's and hclgevf's alike
// (`hclge_comm_cmd_setup_basic_desc`: MBX_VF_TO_PF is a write).
use super::tests::{DESC_NUM, F_READ, F_WRITE};

/// A guest whose hclgevf has run `hclge_comm_cmd_init`: BAR2, RAM, the
/// model as `nic::attach` and `mark_vfs` leave a VF's, the CSQ's
/// next_to_use and the CRQ's (the driver's copy).
struct Hclgevf {
    bar: Bar,
    _file: std::fs::File,
    mem: VecMem,
    nics: Vec<Option<NicCmq>>,
    csq_ntu: u32,
    crq_ntu: u32,
    match_id: u16,
    /// Vectors raised, as (function, vector).
    raised: Vec<(usize, u16)>,
    /// The VF's PF in front of it (function 0, the VF then function 1):
    /// its BAR2 and its hclge's CSQ next_to_use.
    pf: Option<(Bar, std::fs::File, u32)>,
}

impl Hclgevf {
    /// A VF (or, with `vf` false, a PF) behind the default firmware.
    fn new(tag: &str, vf: bool) -> Self {
        let (bar, file) = Bar::new(&format!("hns-sim-test-nicvf-{tag}")).unwrap();
        let cmq = NicCmq::new(NicFw::new(NicCfg::default()), Trace::discard());
        let mut nics = vec![Some(cmq)];
        mark_vfs(&mut nics, &[vf]);
        Self::with(bar, file, nics, None)
    }

    /// A VF (function 1) behind its PF (function 0), whose hclge has run
    /// `hclge_comm_cmd_init` too.
    fn with_pf(tag: &str) -> Self {
        let (bar, file) = Bar::new(&format!("hns-sim-test-nicvf-{tag}")).unwrap();
        let (pbar, pfile) = Bar::new(&format!("hns-sim-test-nicvf-{tag}-pf")).unwrap();
        let cmq = || Some(NicCmq::new(NicFw::new(NicCfg::default()), Trace::discard()));
        let mut nics = vec![cmq(), cmq()];
        mark_vfs(&mut nics, &[false, true]);
        pbar.write32(reg::CSQ_BASEADDR_L, PF_CSQ as u32);
        pbar.write32(reg::CSQ_DEPTH, DESC_NUM >> 3);
        Self::with(bar, file, nics, Some((pbar, pfile, 0)))
    }

    /// The guest of [`Hclgevf::new`] with the model `nics`.
    fn with(
        bar: Bar,
        file: std::fs::File,
        nics: Vec<Option<NicCmq>>,
        pf: Option<(Bar, std::fs::File, u32)>,
    ) -> Self {
        let h = Hclgevf {
            bar,
            _file: file,
            mem: VecMem::new(0x20000),
            nics,
            csq_ntu: 0,
            crq_ntu: 0,
            match_id: 0,
            raised: vec![],
            pf,
        };
        // hclge_comm_cmd_config_regs for both rings.
        for (l, hi, d, head, tail, at) in [
            (
                reg::CSQ_BASEADDR_L,
                reg::CSQ_BASEADDR_H,
                reg::CSQ_DEPTH,
                reg::CSQ_HEAD,
                reg::CSQ_TAIL,
                CSQ,
            ),
            (
                reg::CRQ_BASEADDR_L,
                reg::CRQ_BASEADDR_H,
                reg::CRQ_DEPTH,
                reg::CRQ_HEAD,
                reg::CRQ_TAIL,
                CRQ,
            ),
        ] {
            h.bar.write32(l, at as u32);
            h.bar.write32(hi, (at >> 32) as u32);
            h.bar.write32(d, DESC_NUM >> 3);
            h.bar.write32(head, 0);
            h.bar.write32(tail, 0);
        }
        h
    }

    /// The VF's index in the device list.
    fn me(&self) -> usize {
        usize::from(self.pf.is_some())
    }

    /// The model behind the function.
    fn q(&mut self) -> &mut NicCmq {
        let me = self.me();
        self.nics[me].as_mut().unwrap()
    }

    /// One pass of hns-sim's loop.
    fn pass(&mut self) {
        let now = std::time::Instant::now();
        let raised = &mut self.raised;
        let mut bars = vec![];
        if let Some((b, _, _)) = &self.pf {
            bars.push(b);
        }
        bars.push(&self.bar);
        poll_all(&mut self.nics, &bars, &self.mem, now, &mut |i, v| {
            raised.push((i, v))
        });
    }

    /// The PF's BAR2.
    fn pf_bar(&self) -> &Bar {
        &self.pf.as_ref().expect("a PF").0
    }

    /// hclge_comm_cmd_send of one descriptor on the PF's CSQ, then one
    /// pass; the descriptor as written back.
    fn pf_send(&mut self, d: [u8; 32]) -> [u8; 32] {
        let Some((bar, _, ntu)) = &mut self.pf else {
            panic!("no PF");
        };
        let slot = *ntu;
        self.mem.write(PF_CSQ + u64::from(slot) * 32, &d).unwrap();
        *ntu = (slot + 1) % DESC_NUM;
        bar.write32(reg::CSQ_TAIL, *ntu);
        let tail = *ntu;
        self.pass();
        assert_eq!(self.pf_bar().read32(reg::CSQ_HEAD), tail, "head == tail");
        let mut b = [0u8; 32];
        self.mem
            .read(PF_CSQ + u64::from(slot) * 32, &mut b)
            .unwrap();
        b
    }

    /// hclge_comm_cmd_send of one descriptor, then one pass; the
    /// descriptor as written back.
    fn send(&mut self, d: [u8; 32]) -> [u8; 32] {
        let slot = self.csq_ntu;
        self.mem.write(CSQ + slot as u64 * 32, &d).unwrap();
        self.csq_ntu = (self.csq_ntu + 1) % DESC_NUM;
        self.bar.write32(reg::CSQ_TAIL, self.csq_ntu);
        self.pass();
        assert_eq!(self.bar.read32(reg::CSQ_HEAD), self.csq_ntu, "head == tail");
        let mut b = [0u8; 32];
        self.mem.read(CSQ + slot as u64 * 32, &mut b).unwrap();
        b
    }

    /// hclgevf_send_mbx_msg: MBX_VF_TO_PF with `code`, `subcode`, `data`;
    /// with `need_resp`, the NEED_RESP bit and the next match_id.
    fn mbx(&mut self, code: u8, subcode: u8, data: &[u8], need_resp: bool) -> [u8; 32] {
        let mut d = [0u8; 32];
        d[0..2].copy_from_slice(&op::MBX_VF_TO_PF.to_le_bytes());
        d[2..4].copy_from_slice(&F_WRITE.to_le_bytes());
        if need_resp {
            // hclgevf_reset_mbx_resp_status: match_id never 0.
            self.match_id = self.match_id.wrapping_add(1).max(1);
            d[8 + 2] = 1;
            d[8 + 6..8 + 8].copy_from_slice(&self.match_id.to_le_bytes());
        }
        d[8 + 8] = code;
        d[8 + 9] = subcode;
        d[8 + 10..8 + 10 + data.len()].copy_from_slice(data);
        let r = self.send(d);
        assert_eq!(le16(&r, 4), 0, "the CSQ accepts the mailbox command");
        r
    }

    /// hclgevf_mbx_handler: every descriptor between the driver's
    /// next_to_use and the CRQ tail the model wrote, then the head written
    /// back.
    fn crq(&mut self) -> Vec<[u8; 32]> {
        let tail = self.bar.read32(reg::CRQ_TAIL);
        let depth = (self.bar.read32(reg::CRQ_DEPTH) & 0xffff) << 3;
        let mut out = vec![];
        while self.crq_ntu != tail {
            let mut b = [0u8; 32];
            self.mem
                .read(CRQ + self.crq_ntu as u64 * 32, &mut b)
                .unwrap();
            out.push(b);
            self.crq_ntu = (self.crq_ntu + 1) % depth;
        }
        self.bar.write32(reg::CRQ_HEAD, self.crq_ntu);
        out
    }

    /// A synchronous request: the one PF_VF_RESP it draws, checked as
    /// `hclgevf_handle_mbx_response` and `hclgevf_get_mbx_resp` check it
    /// (OUTVLD, code, match_id, the request's code and subcode echoed);
    /// returns (resp_status, resp_data).
    fn ask(&mut self, code: u8, subcode: u8, data: &[u8]) -> (u16, [u8; 8]) {
        self.raised.clear();
        self.mbx(code, subcode, data, true);
        assert!(self.raised.contains(&(0, 0)), "misc vector 0 raised");
        let st = self.bar.read32(reg::VECTOR0_CMDQ_STATE);
        assert_ne!(st & 1 << 1, 0, "HCLGEVF_VECTOR0_RX_CMDQ_INT_B");
        let m = self.crq();
        assert_eq!(m.len(), 1, "one answer");
        let r = m[0];
        assert_eq!(le16(&r, 0), op::MBX_PF_TO_VF);
        assert_ne!(le16(&r, 2) & 1 << 1, 0, "HCLGEVF_CMDQ_RX_OUTVLD_B");
        assert_eq!(le16(&r, 8 + 8), mbx::PF_VF_RESP as u16, "msg.code");
        assert_eq!(le16(&r, 8 + 6), self.match_id, "match_id");
        assert_eq!(le16(&r, 8 + 10), code as u16, "vf_mbx_msg_code");
        assert_eq!(le16(&r, 8 + 12), subcode as u16, "vf_mbx_msg_subcode");
        let mut data = [0u8; 8];
        data.copy_from_slice(&r[8 + 16..8 + 24]);
        (le16(&r, 8 + 14), data)
    }
}

/// The little-endian u16 at byte `off`.
fn le16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// The little-endian u32 at byte `off`.
fn le32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

#[test]
fn query_vf_rsrc_gives_nic_and_roce_vectors() {
    let mut h = Hclgevf::new("rsrc", true);
    let mut d = [0u8; 32];
    d[0..2].copy_from_slice(&op::QUERY_VF_RSRC.to_le_bytes());
    d[2..4].copy_from_slice(&F_READ.to_le_bytes());
    let r = h.send(d);
    assert_eq!(le16(&r, 4), 0);
    // struct hclgevf_query_res_cmd: tqp_num 0, msixcap_localid_ba_rocee
    // 6, vf_intr_vector_number 8 (bits 7..0).
    let cfg = NicCfg::default();
    assert_eq!(le16(&r, 8), cfg.tqp_num);
    let roce_base = le16(&r, 8 + 6);
    let vectors = le16(&r, 8 + 8) & 0xff;
    assert_eq!(
        roce_base, cfg.nic_vectors,
        "the RoCE vectors after the NIC's"
    );
    assert_eq!(vectors, cfg.roce_vectors);
    // hclgevf_query_vf_resource: num_nic_msix = num_roce_msix, which must
    // reach HNAE3_MIN_VECTOR_NUM.
    assert!(vectors >= 2);
}

#[test]
fn probe_requests_get_hclges_answers() {
    let mut h = Hclgevf::new("probe", true);
    // hclgevf_configure, in its order.
    let (st, d) = h.ask(mbx::GET_BASIC_INFO, 0, &[]);
    assert_eq!(st, 0);
    // struct hclge_basic_info: hw_tc_map 0, mbx_api_version 2, pf_caps 4.
    assert_eq!(d[0], 1, "hw_tc_map: TC 0");
    assert_eq!(le16(&d, 2), 0, "hclge leaves mbx_api_version 0");
    assert_eq!(le32(&d, 4), 0, "no VLAN_FLTR_MDF");
    let (st, d) = h.ask(mbx::SET_VLAN, mbx::vlan::GET_PORT_BASE_VLAN_STATE, &[]);
    assert_eq!(
        (st, d[0]),
        (0, 0),
        "a V3 device: HNAE3_PORT_BASE_VLAN_DISABLE"
    );
    let (st, d) = h.ask(mbx::GET_QINFO, 0, &[]);
    assert_eq!(st, 0);
    // struct hclge_mbx_vf_queue_info: num_tqps, rss_size, rx_buf_len.
    assert_eq!(le16(&d, 0), 4, "num_tqps");
    assert!(le16(&d, 2) >= 1, "rss_size");
    assert_eq!(le16(&d, 4), 2048, "rx_buf_len");
    let (st, d) = h.ask(mbx::GET_QDEPTH, 0, &[]);
    assert_eq!((st, le16(&d, 0), le16(&d, 2)), (0, 1024, 1024));
    let (st, d) = h.ask(mbx::GET_MEDIA_TYPE, 0, &[]);
    assert_eq!((st, d[0]), (0, 1), "HNAE3_MEDIA_TYPE_FIBER");
    // hclgevf_get_host_mac_addr.
    let (st, d) = h.ask(mbx::GET_MAC_ADDR, 0, &[]);
    assert_eq!(st, 0);
    assert_eq!(&d[..6], &[0x00, 0x18, 0x2d, 0x00, 0x01, 0x01]);
    assert_eq!(d[0] & 1, 0, "unicast");
    let port = h.q().fw.cfg.mac;
    assert_eq!(&d[..6], &port, "the switch delivers to the VF's address");
    // hclgevf_init_vlan_config: RX_OFF_CFG (no answer asked), then the
    // VLAN 0 filter (synchronous, status only).
    h.mbx(mbx::SET_VLAN, mbx::vlan::RX_OFF_CFG, &[1], false);
    assert!(h.crq().is_empty(), "no answer to an asynchronous request");
    let (st, _) = h.ask(mbx::SET_VLAN, mbx::vlan::FILTER, &[0, 0, 0, 0x81, 0x00]);
    assert_eq!(st, 0);
    // hclgevf_reset_tqp: queue 0 resets all and answers 1.
    let (st, d) = h.ask(mbx::QUEUE_RESET, 0, &[0, 0]);
    assert_eq!((st, d[0]), (0, 1), "HCLGE_RESET_ALL_QUEUE_DONE");
    // hclgevf_set_mtu.
    let (st, _) = h.ask(mbx::SET_MTU, 0, &1500u32.to_le_bytes());
    assert_eq!(st, 0);
    let v = h.q().vf.as_ref().unwrap();
    assert_eq!(v.mtu, 1500);
    assert_eq!(v.vlans, vec![0]);
    assert_eq!(v.counts[&mbx::GET_BASIC_INFO], 1);
}

#[test]
fn get_link_status_draws_a_link_push() {
    let mut h = Hclgevf::new("link", true);
    // hclgevf_request_link_info: asynchronous.
    h.raised.clear();
    h.mbx(mbx::GET_LINK_STATUS, 0, &[], false);
    assert!(h.raised.contains(&(0, 0)));
    let m = h.crq();
    assert_eq!(m.len(), 1);
    let r = m[0];
    assert_ne!(le16(&r, 2) & 1 << 1, 0, "OUTVLD");
    assert_eq!(le16(&r, 8 + 8), mbx::LINK_STAT_CHANGE as u16);
    assert_eq!(le16(&r, 8 + 6), 0, "a push has no match_id");
    // hclgevf_mbx_async_handler: struct hclge_mbx_link_status (packed) at
    // msg byte 2: link_status, speed, duplex, flag.
    let p = &r[8 + 10..];
    assert_eq!(le16(p, 0), 1, "link up");
    assert_eq!(le32(p, 2), 100_000, "speed");
    assert_eq!(le16(p, 6), 1, "full duplex");
    assert_eq!(p[8], 1, "HCLGE_MBX_PUSH_LINK_STATUS_EN");
    // hclgevf_request_link_info's two GET_LINK_MODE: idx 1 supported,
    // idx 0 advertising, each a LINK_STAT_MODE push with its idx.
    h.mbx(mbx::GET_LINK_MODE, 0, &[1], false);
    h.mbx(mbx::GET_LINK_MODE, 0, &[0], false);
    let m = h.crq();
    assert_eq!(m.len(), 2);
    assert_eq!(le16(&m[0], 8 + 8), mbx::LINK_STAT_MODE as u16);
    assert_eq!(le16(&m[0], 8 + 10), 1);
    assert_eq!(le16(&m[1], 8 + 10), 0);
}

#[test]
fn an_unhandled_code_and_a_bad_queue_get_hclges_answers() {
    let mut h = Hclgevf::new("bad", true);
    // GET_BDNUM has no handler in hclge_mbx_ops_list: no answer at all.
    h.raised.clear();
    h.mbx(mbx::GET_BDNUM, 0, &[], true);
    assert!(h.crq().is_empty());
    assert!(!h.raised.contains(&(0, 0)));
    // GET_QID_IN_PF beyond the VF's queues: -EINVAL as resp_status 22.
    let (st, _) = h.ask(mbx::GET_QID_IN_PF, 0, &[9, 0]);
    assert_eq!(st, 22);
    let (st, d) = h.ask(mbx::GET_QID_IN_PF, 0, &[3, 0]);
    assert_eq!((st, le16(&d, 0)), (0, 3));
}

#[test]
fn the_crq_waits_for_room_and_the_state_bit_clears() {
    let mut h = Hclgevf::new("full", true);
    // A CRQ of 8 slots holds 7 messages; the rest wait for the head.
    h.bar.write32(reg::CRQ_DEPTH, 1);
    for _ in 0..10 {
        h.mbx(mbx::GET_LINK_STATUS, 0, &[], false);
    }
    assert_eq!(h.bar.read32(reg::CRQ_TAIL), 7);
    h.crq_ntu = 0;
    let first = h.crq();
    assert_eq!(first.len(), 7);
    // hclgevf_clear_event_cause: bit 1 written 0 to the source register.
    h.bar
        .write32(reg::VECTOR0_CMDQ_SRC, !(1u32 << super::vf::RX_CMDQ_INT_B));
    h.raised.clear();
    h.pass();
    assert!(h.raised.contains(&(0, 0)), "the waiting three delivered");
    assert_eq!(h.crq().len(), 3);
    h.bar
        .write32(reg::VECTOR0_CMDQ_SRC, !(1u32 << super::vf::RX_CMDQ_INT_B));
    h.pass();
    assert_eq!(
        h.bar.read32(reg::VECTOR0_CMDQ_STATE) & 1 << 1,
        0,
        "cleared once taken"
    );
}

#[test]
fn a_pf_gets_no_vf_model() {
    let mut h = Hclgevf::new("pf", false);
    assert!(h.q().vf.is_none());
    h.mbx(mbx::GET_QINFO, 0, &[], true);
    assert_eq!(h.bar.read32(reg::CRQ_TAIL), 0, "nothing in a PF's CRQ");
    assert!(h.raised.is_empty());
    // And a VF model on its own answers as documented.
    let mut v = VfPf::new(VfCfg::default());
    assert!(v.outbox.is_empty());
    v.push_link_status(0);
    assert_eq!(v.outbox.len(), 1);
}

#[test]
fn mailbox_codes_match_hclge_mbx_h() {
    let Some(k) = super::tests::ksrc() else {
        eprintln!("no kernel source (HNS_KSRC): mailbox code check skipped");
        return;
    };
    let h = std::fs::read_to_string(k.join("drivers/net/ethernet/hisilicon/hns3/hclge_mbx.h"))
        .expect("hclge_mbx.h");
    let start = h.find("enum HCLGE_MBX_OPCODE {").expect("the enum");
    let end = start + h[start..].find("};").expect("its end");
    let mut next = 0u32;
    let mut seen = 0;
    for line in h[start..end].lines().skip(1) {
        let line = line.split("/*").next().unwrap_or("").trim();
        let line = line.trim_end_matches(',').trim();
        if line.is_empty() {
            continue;
        }
        let (name, v) = match line.split_once('=') {
            Some((n, v)) => {
                let v = v.trim();
                let v = match v.strip_prefix("0x") {
                    Some(hex) => u32::from_str_radix(hex, 16),
                    None => v.parse::<u32>(),
                };
                (n.trim(), v.expect(n))
            }
            None => (line, next),
        };
        next = v + 1;
        let short = name.strip_prefix("HCLGE_MBX_").expect(name);
        let ours = mbx::ALL.iter().find(|(_, n)| *n == short);
        assert_eq!(ours.map(|o| u32::from(o.0)), Some(v), "{name}");
        seen += 1;
    }
    assert_eq!(seen, mbx::ALL.len(), "no code of ours is missing");
}

#[test]
fn a_vf_ring_event_raises_the_vector_it_mapped() {
    let mut h = Hclgevf::new("ringvec", true);
    // hclgevf_bind_ring_to_vector: vector 1 (at the subcode's byte), one
    // ring: RX (type 1) of queue 0, GL index 1.
    h.mbx(mbx::MAP_RING_TO_VECTOR, 1, &[1, 1, 0, 1], false);
    // hns3_vector_enable: the vector's control register to 1.
    let ctrl = super::tqp::vector_ctrl(1).unwrap();
    h.bar.write32(ctrl, 1);
    h.raised.clear();
    // A frame received on queue 0 (what poll_all does after `receive`).
    h.q().ring_event(1, 0);
    h.pass();
    assert!(
        h.raised.contains(&(0, 1)),
        "vector 1 raised: {:?}",
        h.raised
    );
    assert_eq!(h.bar.read32(ctrl), 0, "masked until the poll re-enables it");
    // TX of queue 0 and RX of queue 1 were not mapped: nothing.
    h.raised.clear();
    h.bar.write32(ctrl, 1);
    h.q().ring_event(0, 0);
    h.q().ring_event(1, 1);
    h.pass();
    assert!(
        !h.raised.contains(&(0, 1)),
        "unmapped rings: {:?}",
        h.raised
    );
    // UNMAP_RING_TO_VECTOR takes the ring off again.
    h.mbx(mbx::UNMAP_RING_TO_VECTOR, 1, &[1, 1, 0, 1], false);
    h.q().ring_event(1, 0);
    h.pass();
    assert!(!h.raised.contains(&(0, 1)), "after unmap: {:?}", h.raised);
}

#[test]
fn a_vf_reset_request_resets_the_function_for_the_device_loop() {
    let mut h = Hclgevf::new("vfreset", true);
    assert!(!h.q().take_reset_done());
    // hclgevf_reset_prepare_wait: RESET, synchronous; hclge answers 0
    // once it has reset the VF's function (hclge_reset_vf).
    let (st, _) = h.ask(mbx::RESET, 0, &[]);
    assert_eq!(st, 0);
    assert!(
        h.q().take_reset_done(),
        "the device loop clears the VF's RoCE engine"
    );
    assert!(!h.q().take_reset_done(), "once per request");
    assert_eq!(h.q().vf.as_ref().unwrap().resets, 1);
    // Other requests reset nothing.
    h.ask(mbx::GET_QINFO, 0, &[]);
    assert!(!h.q().take_reset_done());
}

/// hclge_func_reset_sync_vf's query: QUERY_VF_RST_RDY on the PF's CSQ;
/// its `all_vf_ready`.
fn vfs_ready(h: &mut Hclgevf) -> bool {
    let mut d = [0u8; 32];
    d[0..2].copy_from_slice(&op::QUERY_VF_RST_RDY.to_le_bytes());
    d[2..4].copy_from_slice(&F_READ.to_le_bytes());
    let r = h.pf_send(d);
    assert_eq!(le16(&r, 4), 0);
    r[8] & 1 != 0
}

/// Sets or clears SW_RST_RDY in `bar`, as `hclge_reset_handshake` and
/// `hclgevf_reset_handshake` do.
fn handshake(bar: &Bar, on: bool) {
    let v = bar.read32(reg::CSQ_DEPTH);
    bar.write32(
        reg::CSQ_DEPTH,
        if on { v | SW_RST_RDY } else { v & !SW_RST_RDY },
    );
}

#[test]
fn a_pf_reset_takes_its_live_vf_through_hclgevfs_reset() {
    let mut h = Hclgevf::with_pf("pfreset");
    // hclgevf_client_start: the VF is alive; a ring mapped.
    h.mbx(mbx::SET_ALIVE, 0, &[1], false);
    h.mbx(mbx::MAP_RING_TO_VECTOR, 1, &[1, 1, 0, 1], false);
    h.crq();
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    // hclge_func_reset_sync_vf: the first query finds the live VF not
    // stopped; the VF is told: FUN_RST_ING set, ASSERTING_RESET with
    // HNAE3_VF_PF_FUNC_RESET (2) in its CRQ, its misc vector raised.
    h.raised.clear();
    assert!(!vfs_ready(&mut h), "the VF has not stopped yet");
    h.pass();
    assert_eq!(
        h.bar.read32(rst::FUN_RST_ING) & 1,
        1,
        "HCLGEVF_FUN_RST_ING_BIT"
    );
    assert!(
        h.raised.contains(&(1, 0)),
        "the VF's misc vector: {:?}",
        h.raised
    );
    let m = h.crq();
    assert_eq!(m.len(), 1);
    assert_ne!(le16(&m[0], 2) & 1 << 1, 0, "OUTVLD");
    assert_eq!(
        le16(&m[0], 8 + 8),
        u16::from(mbx::ASSERTING_RESET),
        "msg.code"
    );
    assert_eq!(le16(&m[0], 8 + 10), 2, "msg_q[1]: HNAE3_VF_PF_FUNC_RESET");
    assert_eq!(h.q().vf.as_ref().unwrap().pf_reset, PfReset::Informed);
    // Told once: hclge keeps polling until the VF has stopped.
    assert!(!vfs_ready(&mut h));
    assert!(h.crq().is_empty(), "no second ASSERTING_RESET");
    // hclgevf_reset_prepare_wait: the VF's handshake.
    handshake(&h.bar, true);
    assert!(vfs_ready(&mut h), "all_vf_ready once the VF is ready");
    // The PF's own reset: the trigger, its handshake, the reset carried
    // out (no hold) resets the VF's function with it; the VF's
    // FUN_RST_ING stays set while the PF rebuilds.
    let mut d = [0u8; 32];
    d[0..2].copy_from_slice(&op::CFG_RST_TRIGGER.to_le_bytes());
    d[2..4].copy_from_slice(&super::tests::F_WRITE.to_le_bytes());
    d[8] = 0x80;
    h.pf_send(d);
    assert_eq!(h.pf_bar().read32(rst::FUN_RST_ING), 1);
    handshake(h.pf_bar(), true);
    assert!(!h.q().take_reset_done());
    h.pass();
    h.pass();
    assert_eq!(
        h.pf_bar().read32(rst::FUN_RST_ING),
        0,
        "the PF's reset ended"
    );
    assert!(
        h.q().take_reset_done(),
        "the device loop clears the VF's RoCE state"
    );
    for r in [
        reg::CSQ_BASEADDR_L,
        reg::CSQ_TAIL,
        reg::CRQ_BASEADDR_L,
        reg::CRQ_TAIL,
    ] {
        assert_eq!(h.bar.read32(r), 0, "the VF's queue register {r:#x} cleared");
    }
    assert_eq!(
        h.bar.read32(reg::CSQ_DEPTH),
        SW_RST_RDY,
        "the VF's handshake kept"
    );
    let v = h.q().vf.as_ref().unwrap();
    assert!(
        v.ring_vectors.is_empty() && !v.alive,
        "the PF's record of the VF dropped"
    );
    assert_eq!(h.bar.read32(rst::FUN_RST_ING) & 1, 1, "still in reset");
    h.pass();
    assert_eq!(h.bar.read32(rst::FUN_RST_ING) & 1, 1, "until the PF is up");
    // hclge_reset_prepare_up: the PF's handshake cleared; the VF's
    // hclgevf_reset_wait ends.
    handshake(h.pf_bar(), false);
    h.pass();
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    assert_eq!(h.q().vf.as_ref().unwrap().pf_reset, PfReset::Idle);
    assert!(!h.q().take_reset_done(), "reset once");
}

#[test]
fn a_pf_reset_neither_tells_nor_waits_for_a_vf_not_alive() {
    let mut h = Hclgevf::with_pf("pfreset-idle");
    h.raised.clear();
    assert!(vfs_ready(&mut h), "no live VF to wait for");
    h.pass();
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    assert!(h.crq().is_empty());
    assert!(!h.raised.contains(&(1, 0)));
    assert_eq!(h.q().vf.as_ref().unwrap().pf_reset, PfReset::Idle);
}

/// The PF's own command `opcode` (a write) with payload bytes `p`, on
/// its CSQ.
fn pf_write(h: &mut Hclgevf, opcode: u16, p: &[u8]) -> [u8; 32] {
    let mut d = [0u8; 32];
    d[0..2].copy_from_slice(&opcode.to_le_bytes());
    d[2..4].copy_from_slice(&super::tests::F_WRITE.to_le_bytes());
    d[8..8 + p.len()].copy_from_slice(p);
    let r = h.pf_send(d);
    assert_eq!(le16(&r, 4), 0, "accepted");
    r
}

#[test]
fn hclges_own_vf_reset_commands_reach_the_vf() {
    // A PF whose hclge counts the VF (SR-IOV) sends the per-VF part of its
    // reset itself: GBL_RST_STATUS (struct hclge_vf_rst_cmd: dest_vfid,
    // vf_rst) and ASSERTING_RESET through MBX_PF_TO_VF (struct
    // hclge_mbx_pf_to_vf_cmd: dest_vfid 0, msg_len 4, msg.code 8, data 10).
    let mut h = Hclgevf::with_pf("pfmbx");
    h.mbx(mbx::SET_ALIVE, 0, &[1], false);
    h.crq();
    pf_write(&mut h, op::GBL_RST_STATUS, &[1, 1]);
    h.pass();
    assert_eq!(h.bar.read32(rst::FUN_RST_ING) & 1, 1, "vf_rst 1 sets it");
    let mut m = [0u8; 12];
    m[0] = 1;
    m[4] = 2;
    m[8] = mbx::ASSERTING_RESET;
    m[10] = 2;
    h.raised.clear();
    pf_write(&mut h, op::MBX_PF_TO_VF, &m);
    h.pass();
    assert!(h.raised.contains(&(1, 0)), "the VF's misc vector");
    let c = h.crq();
    assert_eq!(c.len(), 1, "carried once: the query tells the VF no more");
    assert_eq!(le16(&c[0], 8 + 8), u16::from(mbx::ASSERTING_RESET));
    assert_eq!(le16(&c[0], 8 + 10), 2);
    assert_eq!(h.q().vf.as_ref().unwrap().pf_reset, PfReset::Informed);
    assert!(!vfs_ready(&mut h));
    h.pass();
    assert!(h.crq().is_empty(), "not told twice");
    handshake(&h.bar, true);
    assert!(vfs_ready(&mut h));
    // vf_rst 0 (hclge_reset_prepare_up) clears it again.
    pf_write(&mut h, op::GBL_RST_STATUS, &[1, 0]);
    h.pass();
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    assert_eq!(h.q().vf.as_ref().unwrap().pf_reset, PfReset::Idle);
    // A message for a function no device presents goes nowhere.
    m[0] = 7;
    pf_write(&mut h, op::MBX_PF_TO_VF, &m);
    h.pass();
    assert!(h.crq().is_empty());
}
