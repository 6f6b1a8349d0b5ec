// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The NIC command queue driven as hclge drives it: descriptors written
//! byte by byte as `struct hclge_desc` lays them out (opcode at 0, flag 2,
//! retval 4, payload from 8) with the payload structs of hclge_cmd.h and
//! hclge_comm_cmd.h, answers read back at the byte offsets hclge reads.

use super::fw::{NicCfg, NicFw};
use super::{op, reg, Mode, NicCmq, SW_RST_RDY};
use crate::mem::{Bar, Dma, VecMem};
use crate::trace::Trace;

/// Where the test driver allocates its CSQ.
const RING: u64 = 0x1000;
/// `HCLGE_COMM_NIC_CMQ_DESC_NUM`.
pub(super) const DESC_NUM: u32 = 1024;
/// `HCLGE_COMM_CMD_FLAG_IN | HCLGE_COMM_CMD_FLAG_NO_INTR`, what
/// `hclge_comm_cmd_setup_basic_desc` sets for a write.
pub(super) const F_WRITE: u16 = 0x11;
/// The same with `HCLGE_COMM_CMD_FLAG_WR` (bit 3): a query.
pub(super) const F_READ: u16 = 0x19;
/// `HCLGE_COMM_CMD_FLAG_NEXT`.
const F_NEXT: u16 = 0x4;

/// A guest with hclge's command queue: BAR2, RAM, the model, and the
/// driver's `next_to_use`.
struct Hclge {
    bar: Bar,
    _file: std::fs::File,
    mem: VecMem,
    cmq: NicCmq,
    ntu: u32,
}

impl Hclge {
    /// A guest whose hclge has run hclge_comm_cmd_init (see
    /// [`Hclge::init_regs`]) against firmware reporting `cfg`.
    fn new(tag: &str, cfg: NicCfg) -> Self {
        let (bar, file) = Bar::new(&format!("hns-sim-test-nic-{tag}")).unwrap();
        let mut h = Hclge {
            bar,
            _file: file,
            mem: VecMem::new(0x10000),
            cmq: NicCmq::new(NicFw::new(cfg), Trace::discard()),
            ntu: 0,
        };
        h.init_regs(RING);
        h
    }

    /// The register writes of `hclge_comm_cmd_config_regs` for a CSQ at
    /// `at`; next_to_use back to 0.
    fn init_regs(&mut self, at: u64) {
        self.bar.write32(reg::CSQ_BASEADDR_L, at as u32);
        self.bar.write32(reg::CSQ_BASEADDR_H, (at >> 32) as u32);
        let keep = self.bar.read32(reg::CSQ_DEPTH) & SW_RST_RDY;
        self.bar.write32(reg::CSQ_DEPTH, keep | DESC_NUM >> 3);
        self.bar.write32(reg::CSQ_HEAD, 0);
        self.bar.write32(reg::CSQ_TAIL, 0);
        self.ntu = 0;
    }

    /// hclge_comm_cmd_send: copies the descriptors at next_to_use, moves
    /// the tail, lets the model run, checks the head caught up and returns
    /// the descriptors as written back.
    fn send(&mut self, descs: &[[u8; 32]]) -> Vec<[u8; 32]> {
        let start = self.ntu;
        for d in descs {
            self.mem
                .write(RING + self.ntu as u64 * 32, d)
                .expect("ring in RAM");
            self.ntu = (self.ntu + 1) % DESC_NUM;
        }
        self.bar.write32(reg::CSQ_TAIL, self.ntu);
        assert!(self.cmq.poll(&self.bar, &self.mem), "work done");
        assert_eq!(self.bar.read32(reg::CSQ_HEAD), self.ntu, "head == tail");
        (0..descs.len() as u32)
            .map(|i| {
                let mut b = [0u8; 32];
                let slot = (start + i) % DESC_NUM;
                self.mem.read(RING + slot as u64 * 32, &mut b).unwrap();
                b
            })
            .collect()
    }

    /// [`Hclge::send`] of one descriptor.
    fn send1(&mut self, d: [u8; 32]) -> [u8; 32] {
        self.send(&[d])[0]
    }
}

/// A descriptor as hclge_comm_cmd_setup_basic_desc leaves it, with the
/// payload bytes `data` at offset 8.
fn desc(opcode: u16, flag: u16, data: &[(usize, &[u8])]) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[0..2].copy_from_slice(&opcode.to_le_bytes());
    b[2..4].copy_from_slice(&flag.to_le_bytes());
    for (off, v) in data {
        b[8 + off..8 + off + v.len()].copy_from_slice(v);
    }
    b
}

/// The little-endian u16 at byte `off` of a descriptor.
fn le16(b: &[u8; 32], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// The little-endian u32 at byte `off` of a descriptor.
fn le32(b: &[u8; 32], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// `retval` of a written-back descriptor.
fn retval(b: &[u8; 32]) -> u16 {
    le16(b, 4)
}

#[test]
fn query_fw_ver_reports_a_v3_chip_with_ras_imp() {
    let mut h = Hclge::new("fwver", NicCfg::default());
    // hclge_comm_cmd_query_version_and_capability: api_caps (payload 8)
    // carries FLEX_RSS_TBL (bit 0).
    let r = h.send1(desc(op::QUERY_FW_VER, F_READ, &[(8, &[1, 0, 0, 0])]));
    assert_eq!(retval(&r), 0);
    assert_eq!(le16(&r, 0), 0x0001, "opcode kept");
    // struct hclge_comm_query_version_cmd: firmware at 8, hardware at
    // 12, caps[0] at 20.
    assert_ne!(le32(&r, 8), 0, "a firmware version");
    assert_eq!(le32(&r, 12), 0, "hardware 0: dev_version is the revision");
    let caps0 = le32(&r, 20);
    assert_ne!(caps0 & 1 << 12, 0, "HCLGE_COMM_CAP_RAS_IMP_B");
    // FD 21, PTP 3, GRO 20, FEC 13, PAUSE 14, WOL 28, TX_PUSH 6, PHY_IMP 7.
    for b in [21, 3, 20, 13, 14, 28, 6, 7] {
        assert_eq!(caps0 & 1 << b, 0, "cap bit {b} off");
    }
}

#[test]
fn function_status_and_pf_resource_pass_hclge_get_cap() {
    let mut h = Hclge::new("getcap", NicCfg::default());
    // struct hclge_func_status_cmd: pf_state at payload byte 16.
    let r = h.send1(desc(op::QUERY_FUNC_STATUS, F_READ, &[]));
    assert_eq!(retval(&r), 0);
    let pf_state = r[8 + 16];
    assert_ne!(pf_state & 1, 0, "HCLGE_PF_STATE_DONE");
    assert_ne!(pf_state & 2, 0, "HCLGE_PF_STATE_MAIN");
    assert_eq!(r[8 + 17] & 0xf, 0, "mac_id");
    // struct hclge_pf_res_cmd: tqp_num 0, buf_size 2,
    // msixcap_localid_number_nic 6, pf_intr_vector_number_roce 8,
    // ext_tqp_num 16.
    let r = h.send1(desc(op::QUERY_PF_RSRC, F_READ, &[]));
    assert_eq!(retval(&r), 0);
    assert!(le16(&r, 8) + le16(&r, 8 + 16) >= 1, "TQPs");
    assert_ne!(le16(&r, 8 + 2), 0, "packet buffer");
    assert!(le16(&r, 8 + 6) >= 2, "HNAE3_MIN_VECTOR_NUM");
    assert_ne!(le16(&r, 8 + 8), 0, "RoCE vectors");
}

#[test]
fn get_cfg_param_answers_its_two_descriptors_one_by_one() {
    let cfg = NicCfg::default();
    let mut h = Hclge::new("cfg", cfg.clone());
    // hclge_get_cfg: two descriptors without NEXT, offset i * 16 with
    // read length 16 / 4 in bits 27..24.
    let d = |i: u32| {
        let offset = (i * 16) | (4 << 24);
        desc(op::GET_CFG_PARAM, F_READ, &[(0, &offset.to_le_bytes())])
    };
    let r = h.send(&[d(0), d(1)]);
    assert_eq!(h.cmq.fw.counts[&op::GET_CFG_PARAM], 2, "two commands");
    assert!(r.iter().all(|b| retval(b) == 0));
    // hclge_parse_cfg, block 0: param[0..4] at payload 8.
    let p = |b: &[u8; 32], i: usize| le32(b, 16 + 4 * i);
    let b0 = &r[0];
    assert_eq!((p(b0, 0) >> 8) & 0xff, 1, "tc_num");
    assert_eq!(p(b0, 0) >> 16, 1024, "tqp_desc_num");
    assert_eq!((p(b0, 1) >> 8) & 0xff, 1, "media: HNAE3_MEDIA_TYPE_FIBER");
    assert_eq!(p(b0, 1) >> 16, 2048, "rx_buf_len");
    let mac = p(b0, 2) as u64 | ((p(b0, 3) & 0xffff) as u64) << 32;
    let bytes: Vec<u8> = (0..6).map(|i| (mac >> (8 * i)) as u8).collect();
    assert_eq!(bytes, cfg.mac, "MAC, byte 0 in the low bits of param[2]");
    assert_eq!(bytes[0] & 1, 0, "a unicast MAC");
    assert_eq!(
        (p(b0, 3) >> 16) & 0xff,
        5,
        "default_speed HCLGE_FW_MAC_SPEED_100G"
    );
    assert!(p(b0, 3) >> 24 >= 1, "rss_size_max");
    // Block 1: speed_ability bits 7..0 of param[1].
    let b1 = &r[1];
    assert_ne!(p(b1, 1) & 0xff, 0, "speed_ability");
    assert_eq!(p(b1, 2) & 0xf, 0, "pf_rss_size: take rss_size_max");
}

#[test]
fn query_dev_specs_chain_answers_every_descriptor() {
    let mut h = Hclge::new("specs", NicCfg::default());
    // hclge_query_dev_specs: four descriptors, NEXT on the first three:
    // one command; zeroed specs take hclge_check_dev_specs' defaults.
    let mut ds = vec![desc(op::QUERY_DEV_SPECS, F_READ | F_NEXT, &[(0, &[0xff; 24])]); 3];
    ds.push(desc(op::QUERY_DEV_SPECS, F_READ, &[(0, &[0xff; 24])]));
    let r = h.send(&ds);
    assert_eq!(h.cmq.fw.counts[&op::QUERY_DEV_SPECS], 1, "one chain");
    assert_eq!(retval(&r[3]), 0, "the last descriptor's retval");
    assert!(r.iter().all(|b| b[8..].iter().all(|&x| x == 0)), "zeroed");
    // QUERY_MAC_REG_NUM: data[0] must not be 0 (-ENODATA).
    let r = h.send1(desc(op::QUERY_MAC_REG_NUM, F_READ, &[]));
    assert_ne!(le32(&r, 8), 0);
}

#[test]
fn umv_space_loopback_link_and_sfp() {
    let mut h = Hclge::new("misc", NicCfg::default());
    // hclge_set_umv_space: space_size at payload 4, read back as data[1].
    let r = h.send1(desc(
        op::MAC_VLAN_ALLOCATE,
        F_WRITE,
        &[(0, &[1]), (4, &256u32.to_le_bytes())],
    ));
    assert_eq!((retval(&r), le32(&r, 12)), (0, 256));
    // hclge_cfg_common_loopback: the write (mask, enable), then the poll
    // for result (byte 2) DONE | SUCCESS.
    let r = h.send1(desc(op::COMMON_LOOPBACK, F_WRITE, &[(0, &[4, 4])]));
    assert_eq!(retval(&r), 0);
    assert_eq!(h.cmq.fw.loopback, 4, "parallel serdes loop on");
    let r = h.send1(desc(op::COMMON_LOOPBACK, F_READ, &[]));
    assert_eq!(r[8 + 2] & 3, 3);
    // hclge_get_mac_link_status: status bit 0.
    let r = h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
    assert_eq!(r[8] & 1, 1);
    // hclge_get_sfp_info: query_type 1 (active speed) at 4; speed at 0,
    // speed_ability at 8.
    let r = h.send1(desc(op::GET_SFP_INFO, F_READ, &[(4, &[1])]));
    assert_eq!(retval(&r), 0);
    assert_eq!(le32(&r, 8), 100_000, "HCLGE_MAC_SPEED_100G");
    assert_ne!(le32(&r, 8 + 8), 0, "speed_ability: the active-speed answer");
    // Copper: the IMP does not answer (HCLGE_COMM_CMD_NOT_SUPPORTED, 2).
    let mut h = Hclge::new(
        "copper",
        NicCfg {
            media_type: super::fw::media::COPPER,
            link_up: false,
            ..NicCfg::default()
        },
    );
    assert_eq!(retval(&h.send1(desc(op::GET_SFP_INFO, F_READ, &[]))), 2);
    assert_eq!(h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]))[8] & 1, 0);
}

#[test]
fn ring_to_vector_and_rcb_reset() {
    let mut h = Hclge::new("vec", NicCfg::default());
    // hclge_bind_ring_with_vector, vector 0x102: id_l 0x02 at 0, cause
    // count 2 at 1, tqp_type_and_id[0..2] at 2: TX of queue 3 GL 0 and
    // RX (type 1) of queue 3 GL 1; vfid 0 at 22, id_h 0x01 at 23.
    let tx = 3u16 << 2;
    let rx = 1 | 3u16 << 2 | 1 << 13;
    let mut req = [0u8; 24];
    req[0] = 0x02;
    req[1] = 2;
    req[2..4].copy_from_slice(&tx.to_le_bytes());
    req[4..6].copy_from_slice(&rx.to_le_bytes());
    req[23] = 0x01;
    let r = h.send1(desc(op::ADD_RING_TO_VECTOR, F_WRITE, &[(0, &req)]));
    assert_eq!(retval(&r), 0);
    let rings = &h.cmq.fw.vectors[&0x102];
    assert_eq!(rings.len(), 2);
    assert_eq!((rings[1].int_type, rings[1].tqp, rings[1].gl), (1, 3, 1));
    h.send1(desc(op::DEL_RING_TO_VECTOR, F_WRITE, &[(0, &req)]));
    assert!(h.cmq.fw.vectors.is_empty());
    // hclge_reset_rcb: fun_reset_rcb bit 1 at 2, vqid start 4, number 6;
    // return status at 8 is HCLGE_RESET_RCB_SUCCESS (1).
    let r = h.send1(desc(
        op::CFG_RST_TRIGGER,
        F_WRITE,
        &[(2, &[2, 0, 0, 0, 4, 0])],
    ));
    assert_eq!((retval(&r), r[8 + 8]), (0, 1));
    // hclge_func_reset_cmd: mac_func_reset bit 7, function id at 1.
    let r = h.send1(desc(op::CFG_RST_TRIGGER, F_WRITE, &[(0, &[0x80, 0])]));
    assert_eq!((retval(&r), r[8 + 8]), (0, 0));
    assert_eq!(h.cmq.fw.func_resets, [0]);
}

#[test]
fn error_bd_counts_vf_reset_ready_and_tqp_reset_status() {
    let mut h = Hclge::new("errbd", NicCfg::default());
    // hclge_query_bd_num: data[0] (main PF) >= 10, data[1] (PF) >= 4,
    // for both the MSI-X and the RAS status (hclge_err.h).
    for o in [op::QUERY_MSIX_INT_STS_BD_NUM, op::QUERY_RAS_INT_STS_BD_NUM] {
        let r = h.send1(desc(o, F_READ, &[]));
        assert_eq!(retval(&r), 0);
        assert!(le32(&r, 8) >= 10 && le32(&r, 12) >= 4, "{o:#x}");
    }
    // hclge_func_reset_sync_vf: all_vf_ready bit 0 of byte 0.
    let r = h.send1(desc(op::QUERY_VF_RST_RDY, F_READ, &[]));
    assert_eq!(r[8] & 1, 1);
    // hclge_get_reset_status: ready_to_reset bit 0 of byte 3, tqp_id kept.
    let r = h.send1(desc(op::RESET_TQP_QUEUE, F_READ, &[(0, &[2, 0])]));
    assert_eq!((le16(&r, 8), r[8 + 3] & 1), (2, 1));
}

#[test]
fn stats_mac_all_is_one_command_of_headerless_descriptors() {
    let mut h = Hclge::new("stats", NicCfg::default());
    // hclge_mac_update_stats_complete: reg_num / 4 + 1 descriptors, only
    // the first set up (no NEXT anywhere), the rest kzalloc'd; hclge
    // adds every 64-bit word from the first's payload on as a counter.
    let n = 105 / 4 + 1;
    let mut ds = vec![desc(op::STATS_MAC_ALL, F_READ, &[])];
    ds.resize(n, [0u8; 32]);
    let r = h.send(&ds);
    assert_eq!(h.cmq.fw.counts[&op::STATS_MAC_ALL], 1);
    assert_eq!(h.cmq.fw.counts.len(), 1, "no opcode-0 commands");
    assert_eq!(retval(&r[0]), 0, "the first descriptor's retval");
    assert!(r[0][8..].iter().all(|&x| x == 0));
    assert!(
        r[1..].iter().all(|b| b.iter().all(|&x| x == 0)),
        "counters 0"
    );
    // hclge_clear_hw_msix_error: a write of 10 descriptors, the payload
    // 0xff (clear everything), answered on the first, the rest left.
    let mut ds = vec![desc(
        op::QUERY_CLEAR_ALL_MPF_MSIX_INT,
        F_WRITE,
        &[(0, &[0xff; 24])],
    )];
    ds.resize(10, [0xff; 32]);
    let r = h.send(&ds);
    assert_eq!(retval(&r[0]), 0);
    assert!(r[1..].iter().all(|b| b.iter().all(|&x| x == 0xff)));
}

#[test]
fn mac_vlan_table_lookup_add_remove() {
    let mut h = Hclge::new("mac", NicCfg::default());
    // struct hclge_mac_vlan_tbl_entry_cmd: flags 0, resp_code 1,
    // vlan_tag 2, mac_addr_hi32 4, mac_addr_lo16 8.
    let mac: &[u8] = &[0x00, 0x18, 0x2d, 0x00, 0x00, 0x01];
    let e = [(0, &[1u8][..]), (4, mac)];
    let resp = |b: &[u8; 32]| (le32(b, 8) >> 8) & 0xff;
    // hclge_add_uc_addr_common: lookup (a read of MAC_VLAN_ADD) misses...
    let r = h.send1(desc(op::MAC_VLAN_ADD, F_READ, &e));
    assert_eq!((retval(&r), resp(&r)), (0, 1), "miss: -ENOENT");
    // ...then the add, then the lookup finds it.
    let r = h.send1(desc(op::MAC_VLAN_ADD, F_WRITE, &e));
    assert_eq!((retval(&r), resp(&r)), (0, 0));
    assert_eq!(resp(&h.send1(desc(op::MAC_VLAN_ADD, F_READ, &e))), 0);
    // Remove: found once, then missing.
    assert_eq!(resp(&h.send1(desc(op::MAC_VLAN_REMOVE, F_WRITE, &e))), 0);
    assert_eq!(resp(&h.send1(desc(op::MAC_VLAN_REMOVE, F_WRITE, &e))), 1);
}

#[test]
fn other_commands_succeed_queries_zeroed_writes_kept() {
    let mut h = Hclge::new("other", NicCfg::default());
    // IMP_COMPAT_CFG (write: compat word at 0) and a TM query.
    let r = h.send1(desc(op::IMP_COMPAT_CFG, F_WRITE, &[(0, &[0x3b, 0, 0, 0])]));
    assert_eq!((retval(&r), r[8]), (0, 0x3b));
    let r = h.send1(desc(op::TM_PRI_WEIGHT, F_READ, &[(0, &[7; 24])]));
    assert_eq!(retval(&r), 0);
    assert!(r[8..].iter().all(|&x| x == 0));
    // The flags hclge set are kept (NO_INTR among them).
    assert_eq!(le16(&r, 2) & F_READ, F_READ);
}

#[test]
fn head_follows_the_tail_round_the_ring_and_rst_rdy_is_left() {
    let mut h = Hclge::new("wrap", NicCfg::default());
    // hclge_reset_handshake sets SW_RST_RDY in the depth register: the
    // model reads the depth past it and never writes the register.
    let depth = h.bar.read32(reg::CSQ_DEPTH);
    h.bar.write32(reg::CSQ_DEPTH, depth | SW_RST_RDY);
    for i in 0..DESC_NUM + 5 {
        let r = h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
        assert_eq!(retval(&r), 0, "command {i}");
    }
    assert_eq!(h.ntu, 5, "wrapped");
    let ran: Vec<u16> = h.cmq.fw.counts.keys().copied().collect();
    assert_eq!(
        ran,
        [op::QUERY_LINK_STATUS],
        "nothing past the ring's end ran"
    );
    assert_eq!(h.cmq.fw.counts[&op::QUERY_LINK_STATUS], DESC_NUM + 5);
    assert_eq!(h.bar.read32(reg::CSQ_DEPTH), DESC_NUM >> 3 | SW_RST_RDY);
    // A chain across the end of the ring.
    while h.ntu != DESC_NUM - 2 {
        h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
    }
    let mut ds = vec![desc(op::QUERY_DEV_SPECS, F_READ | F_NEXT, &[]); 3];
    ds.push(desc(op::QUERY_DEV_SPECS, F_READ, &[]));
    let r = h.send(&ds);
    assert_eq!(retval(&r[3]), 0);
    assert_eq!(
        h.cmq.fw.counts[&op::QUERY_DEV_SPECS],
        1,
        "one chain over the wrap"
    );
}

#[test]
fn uninit_and_reinit_at_the_same_address() {
    let mut h = Hclge::new("reinit", NicCfg::default());
    for _ in 0..3 {
        h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
    }
    // hclge_comm_cmd_uninit: every register 0: idle.
    for r in [
        reg::CSQ_BASEADDR_L,
        reg::CSQ_BASEADDR_H,
        reg::CSQ_DEPTH,
        reg::CSQ_HEAD,
        reg::CSQ_TAIL,
    ] {
        h.bar.write32(r, 0);
    }
    assert!(!h.cmq.poll(&h.bar, &h.mem));
    // The reset's re-init reuses the DMA memory, still holding old
    // descriptors; the first command lands at slot 0.
    h.init_regs(RING);
    let r = h.send1(desc(op::QUERY_FW_VER, F_READ, &[]));
    assert_eq!(retval(&r), 0);
    assert_eq!(h.cmq.fw.counts[&op::QUERY_FW_VER], 1);
    assert_eq!(h.cmq.fw.counts[&op::QUERY_LINK_STATUS], 3, "nothing re-run");
    // A re-init without uninit (same address and depth): head and tail
    // back to 0 before the model sees them, and a first command.
    h.init_regs(RING);
    h.send1(desc(op::QUERY_FW_VER, F_READ, &[]));
    assert_eq!(h.cmq.fw.counts[&op::QUERY_FW_VER], 2);
    assert_eq!(h.cmq.fw.counts[&op::QUERY_LINK_STATUS], 3);
}

#[test]
fn mode_option() {
    assert_eq!(Mode::parse("hclge"), Ok(Mode::Hclge));
    assert_eq!(Mode::parse("off"), Ok(Mode::Off));
    assert!(Mode::parse("hclgevf").is_err());
    assert_eq!(Mode::default(), Mode::Off);
}

/// The 7.3 source tree, as make host-test passes it (HNS_KSRC) or as
/// make setup records it.
pub(super) fn ksrc() -> Option<std::path::PathBuf> {
    if let Ok(k) = std::env::var("HNS_KSRC") {
        return Some(k.into());
    }
    let home = std::env::var("HOME").ok()?;
    let p = std::fs::read_to_string(format!("{home}/.cache/hns-roce-rs/kernel-src.path")).ok()?;
    Some(p.trim().into())
}

#[test]
fn opcodes_match_hclge_comm_cmd_h() {
    let Some(k) = ksrc() else {
        eprintln!("no kernel source (HNS_KSRC): opcode check skipped");
        return;
    };
    let h = std::fs::read_to_string(
        k.join("drivers/net/ethernet/hisilicon/hns3/hns3_common/hclge_comm_cmd.h"),
    )
    .expect("hclge_comm_cmd.h");
    let start = h.find("enum hclge_opcode_type {").expect("the enum");
    let end = start + h[start..].find("};").expect("its end");
    let mut seen = 0;
    for line in h[start..end].lines().skip(1) {
        let line = line.split("/*").next().unwrap_or("");
        let Some((name, val)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        let short = ["HCLGEVF_OPC_", "HCLGE_OPC_", "HCLGE_"]
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .unwrap_or(name);
        let val = val.trim().trim_end_matches(',').trim();
        let v = u16::from_str_radix(val.trim_start_matches("0x").trim_start_matches("0X"), 16)
            .expect(name);
        let ours = op::ALL.iter().find(|(_, n)| *n == short);
        assert_eq!(ours.map(|o| o.0), Some(v), "{name}");
        seen += 1;
    }
    assert_eq!(
        seen,
        op::ALL.len(),
        "no opcode of ours is missing from the header"
    );
}

#[test]
fn attach_is_nothing_when_off_and_reports_the_vectors_when_on() {
    let dir = std::env::temp_dir().join(format!("hns-sim-test-nic-attach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.to_str().unwrap();
    let off = super::attach(Mode::Off, out, &[(5, 10), (5, 10)]).unwrap();
    assert!(off.iter().all(Option::is_none));
    assert!(!dir.join("nic-trace-0.txt").exists(), "no trace when off");
    let mut on = super::attach(Mode::Hclge, out, &[(5, 10), (6, 3)]).unwrap();
    assert!(dir.join("nic-trace-1.txt").exists());
    let q = on[1].take().unwrap();
    assert_eq!(q.fw.cfg.roce_vectors, 3);
    // struct hclge_pf_res_cmd: msixcap_localid_number_nic at payload byte
    // 6 is the RoCE base, pf_intr_vector_number_roce at 8 the RoCE count.
    let mut h = Hclge::new("attach", q.fw.cfg.clone());
    let r = h.send1(desc(op::QUERY_PF_RSRC, F_READ, &[]));
    assert_eq!(le16(&r, 8 + 6), 6);
    assert_eq!(le16(&r, 8 + 8), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn roce_base_vector_defaults_to_the_nic_vectors_and_leaves_hclge_two() {
    assert_eq!(super::roce_base_vector(0), Ok(super::NIC_VECTORS as u8));
    assert_eq!(super::roce_base_vector(2), Ok(2));
    assert!(super::roce_base_vector(1).is_err());
}

#[test]
fn reinit_caught_between_its_head_and_tail_writes_reruns_nothing() {
    let mut h = Hclge::new("midinit", NicCfg::default());
    for _ in 0..5 {
        h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
    }
    // A reset's hclge_comm_cmd_init on the same (unzeroed) ring: the
    // model polls after the head = 0 write, before tail = 0: the tail
    // still says 5 and slots 0..5 hold the answered commands.
    h.bar.write32(reg::CSQ_HEAD, 0);
    assert!(!h.cmq.poll(&h.bar, &h.mem), "waits");
    assert_eq!(h.cmq.fw.counts[&op::QUERY_LINK_STATUS], 5, "nothing re-run");
    assert_eq!(h.bar.read32(reg::CSQ_HEAD), 0, "the driver's head kept");
    // tail = 0, then the first command: the new life runs from slot 0.
    h.bar.write32(reg::CSQ_TAIL, 0);
    h.ntu = 0;
    let r = h.send1(desc(op::QUERY_FW_VER, F_READ, &[]));
    assert_eq!(retval(&r), 0);
    assert_eq!(h.cmq.fw.counts[&op::QUERY_LINK_STATUS], 5);
    // The same race when the driver's first command already sits in slot
    // 0 while the tail still holds the old value it will overwrite: here
    // the old tail equals the new one (1), the slot's bytes are new.
    h.bar.write32(reg::CSQ_HEAD, 0);
    h.bar.write32(reg::CSQ_TAIL, 0);
    h.ntu = 0;
    let r = h.send1(desc(op::QUERY_FW_VER, F_READ, &[]));
    assert_eq!(retval(&r), 0);
    assert_eq!(h.cmq.fw.counts[&op::QUERY_FW_VER], 2);
}

#[test]
fn probe_client_init_and_link_up_in_hclges_order_all_succeed() {
    // The sends of hclge_init_ae_dev (V3), the NIC client's init and
    // hns3_nic_net_open as (opcode, query?, descriptors, NEXT-chained?):
    // every one answered, the head caught up, the return code hclge reads
    // (the last descriptor's; the first's for STATS_MAC_ALL) 0.
    let sends: &[(u16, bool, usize, bool)] = &[
        (op::QUERY_FW_VER, true, 1, false),
        (op::IMP_COMPAT_CFG, false, 1, false),
        (op::CLEAR_HW_RESOURCE, false, 1, false),
        (op::QUERY_FUNC_STATUS, true, 1, false),
        (op::QUERY_PF_RSRC, true, 1, false),
        (op::QUERY_MAC_REG_NUM, true, 1, false),
        (op::QUERY_DEV_SPECS, true, 4, true),
        (op::GET_CFG_PARAM, true, 2, false),
        (op::SET_TQP_MAP, false, 1, false),
        (op::MAC_VLAN_ALLOCATE, false, 1, false),
        (op::CONFIG_SPEED_DUP, false, 1, false),
        (op::CONFIG_MAC_MODE, false, 1, false),
        (op::CONFIG_MAX_FRM_SIZE, false, 1, false),
        (op::TX_BUFF_ALLOC, false, 1, false),
        (op::RX_PRIV_BUFF_ALLOC, false, 1, false),
        (op::RX_PRIV_WL_ALLOC, false, 2, true),
        (op::RX_COM_THRD_ALLOC, false, 2, true),
        (op::RX_COM_WL_ALLOC, false, 1, false),
        (op::TSO_GENERIC_CONFIG, false, 1, false),
        (op::VLAN_FILTER_CTRL, true, 1, false),
        (op::VLAN_FILTER_CTRL, false, 1, false),
        (op::VLAN_PORT_TX_CFG, false, 1, false),
        (op::VLAN_PORT_RX_CFG, false, 1, false),
        (op::TM_PG_TO_PRI_LINK, false, 1, false),
        (op::TM_QS_TO_PRI_LINK, false, 1, false),
        (op::TM_NQ_TO_QS_LINK, false, 1, false),
        (op::CFG_MAC_PARA, true, 1, false),
        (op::CFG_MAC_PARA, false, 1, false),
        (op::RSS_GENERIC_CONFIG, false, 1, false),
        (op::RSS_INDIR_TABLE, false, 1, false),
        (op::RSS_TC_MODE, false, 1, false),
        (op::GET_SFP_INFO, true, 1, false),
        (op::CONFIG_AN_MODE, false, 1, false),
        (op::MAC_VLAN_SWITCH_PARAM, true, 1, false),
        (op::MAC_VLAN_SWITCH_PARAM, false, 1, false),
        (op::ADD_RING_TO_VECTOR, false, 1, false),
        (op::CFG_COM_TQP_QUEUE, false, 1, false),
        (op::CFG_RST_TRIGGER, false, 1, false),
        (op::MAC_VLAN_ADD, true, 1, false),
        (op::MAC_VLAN_ADD, false, 1, false),
        (op::CFG_PROMISC_MODE, false, 1, false),
        (op::QUERY_LINK_STATUS, true, 1, false),
        (op::STATS_MAC_ALL, true, 27, false),
    ];
    let mut h = Hclge::new("order", NicCfg::default());
    let mut ran = 0;
    for &(o, query, n, chained) in sends {
        let f = if query { F_READ } else { F_WRITE };
        let ds: Vec<[u8; 32]> = (0..n)
            .map(|i| {
                if o == op::STATS_MAC_ALL && i > 0 {
                    [0u8; 32]
                } else if chained && i + 1 < n {
                    desc(o, f | F_NEXT, &[])
                } else {
                    desc(o, f, &[])
                }
            })
            .collect();
        let r = h.send(&ds);
        let rv = if op::is_special(o) { &r[0] } else { &r[n - 1] };
        assert_eq!(retval(rv), 0, "{}", op::name(o));
        ran += 1;
    }
    assert_eq!(
        h.cmq.fw.counts.values().sum::<u32>(),
        ran + 1,
        "GET_CFG_PARAM twice"
    );
}

/// `hclge_func_reset_cmd` of function `f`: CFG_RST_TRIGGER with
/// `mac_func_reset` bit 7 and the function id at byte 1.
fn func_reset(f: u8) -> [u8; 32] {
    desc(op::CFG_RST_TRIGGER, F_WRITE, &[(0, &[0x80, f])])
}

#[test]
fn function_reset_runs_from_the_trigger_through_the_handshake() {
    use super::{rst, FuncReset};
    let mut h = Hclge::new("funcrst", NicCfg::default());
    let t0 = std::time::Instant::now();
    // A MAC_VLAN entry and a ring-to-vector binding hclge restores after
    // a reset: the reset clears them.
    let mut req = [0u8; 24];
    req[0] = 0x01;
    req[1] = 1;
    h.send1(desc(op::ADD_RING_TO_VECTOR, F_WRITE, &[(0, &req)]));
    assert!(!h.cmq.fw.vectors.is_empty());
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0, "no reset yet");
    // hclge_reset_prepare_wait: the trigger, then (after 100 ms) the
    // handshake; hclge_reset_wait then polls FUN_RST_ING.
    let r = h.send1(func_reset(0));
    assert_eq!(retval(&r), 0);
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 1, "flagged with the answer");
    assert_eq!(h.cmq.reset, FuncReset::Asserted);
    assert!(!h.cmq.step_reset(&h.bar, t0), "waits for SW_RST_RDY");
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 1);
    let depth = h.bar.read32(reg::CSQ_DEPTH);
    h.bar.write32(reg::CSQ_DEPTH, depth | SW_RST_RDY);
    assert!(h.cmq.step_reset(&h.bar, t0), "the reset starts");
    assert!(!h.cmq.take_reset_done(), "not carried out yet");
    assert!(h.cmq.step_reset(&h.bar, t0), "and ends (no hold)");
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0, "hclge_reset_wait ends");
    assert!(h.cmq.take_reset_done(), "the RoCE side is told once");
    assert!(!h.cmq.take_reset_done());
    assert_eq!(h.cmq.reset, FuncReset::Idle);
    assert!(!h.cmq.step_reset(&h.bar, t0));
    // The queue is cleared, SW_RST_RDY kept: a command written on the
    // old ring is not answered.
    for r in [reg::CSQ_BASEADDR_L, reg::CSQ_HEAD, reg::CSQ_TAIL] {
        assert_eq!(h.bar.read32(r), 0, "{r:#x}");
    }
    assert_eq!(h.bar.read32(reg::CSQ_DEPTH), SW_RST_RDY);
    assert!(h.cmq.fw.vectors.is_empty(), "ring-to-vector map cleared");
    h.mem
        .write(
            RING + h.ntu as u64 * 32,
            &desc(op::QUERY_LINK_STATUS, F_READ, &[]),
        )
        .unwrap();
    h.bar.write32(reg::CSQ_TAIL, h.ntu + 1);
    assert!(!h.cmq.poll(&h.bar, &h.mem), "an idle queue");
    // hclge_comm_cmd_init programs it again: commands run.
    h.bar.write32(reg::CSQ_TAIL, 0);
    h.init_regs(RING);
    let r = h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
    assert_eq!(retval(&r), 0);
}

#[test]
fn function_reset_holds_fun_rst_ing_for_the_hold() {
    use super::rst;
    let mut h = Hclge::new("funcrsthold", NicCfg::default());
    h.cmq.reset_hold = std::time::Duration::from_millis(500);
    let t0 = std::time::Instant::now();
    h.send1(func_reset(0));
    let depth = h.bar.read32(reg::CSQ_DEPTH);
    h.bar.write32(reg::CSQ_DEPTH, depth | SW_RST_RDY);
    assert!(h.cmq.step_reset(&h.bar, t0));
    let later = t0 + std::time::Duration::from_millis(499);
    assert!(!h.cmq.step_reset(&h.bar, later), "still running");
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 1);
    assert!(!h.cmq.take_reset_done());
    let end = t0 + std::time::Duration::from_millis(500);
    assert!(h.cmq.step_reset(&h.bar, end));
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    assert!(h.cmq.take_reset_done());
}

#[test]
fn a_vf_function_reset_leaves_the_pf_alone() {
    use super::{rst, FuncReset};
    let mut h = Hclge::new("vfrst", NicCfg::default());
    let t0 = std::time::Instant::now();
    // hclge resets a VF (function id 1) for it: recorded, the PF's
    // registers untouched.
    h.send1(func_reset(1));
    assert_eq!(h.cmq.fw.func_resets, [1]);
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    assert!(!h.cmq.step_reset(&h.bar, t0));
    assert_eq!(h.cmq.reset, FuncReset::Idle);
    assert!(!h.cmq.take_reset_done());
    assert_ne!(h.bar.read32(reg::CSQ_BASEADDR_L), 0, "the queue is kept");
}

#[test]
fn a_handshake_without_a_reset_asked_for_is_an_flr() {
    use super::rst;
    let mut h = Hclge::new("flr", NicCfg::default());
    let t0 = std::time::Instant::now();
    assert!(!h.cmq.step_reset(&h.bar, t0), "nothing to do");
    // hclge_reset_prepare_general(FLR): the handshake, no CFG_RST_TRIGGER;
    // the function is reset at once (hclge does not wait on FUN_RST_ING).
    let depth = h.bar.read32(reg::CSQ_DEPTH);
    h.bar.write32(reg::CSQ_DEPTH, depth | SW_RST_RDY);
    assert!(h.cmq.step_reset(&h.bar, t0));
    assert!(h.cmq.take_reset_done(), "the RoCE side is told");
    assert_eq!(h.bar.read32(reg::CSQ_BASEADDR_L), 0, "the queue is cleared");
    assert_eq!(h.bar.read32(reg::CSQ_DEPTH), SW_RST_RDY);
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    // Once: SW_RST_RDY staying set is no new FLR; hclge programs the
    // queue again and clears SW_RST_RDY (hclge_reset_prepare_up).
    assert!(!h.cmq.step_reset(&h.bar, t0));
    h.init_regs(RING);
    assert!(!h.cmq.step_reset(&h.bar, t0));
    assert!(!h.cmq.take_reset_done());
    h.bar
        .write32(reg::CSQ_DEPTH, h.bar.read32(reg::CSQ_DEPTH) & !SW_RST_RDY);
    assert!(!h.cmq.step_reset(&h.bar, t0));
    let r = h.send1(desc(op::QUERY_LINK_STATUS, F_READ, &[]));
    assert_eq!(retval(&r), 0);
}

#[test]
fn the_device_loop_carries_the_function_reset_out() {
    use super::rst;
    let mut h = Hclge::new("rstloop", NicCfg::default());
    h.send1(func_reset(0));
    let depth = h.bar.read32(reg::CSQ_DEPTH);
    h.bar.write32(reg::CSQ_DEPTH, depth | SW_RST_RDY);
    let fresh = NicCmq::new(NicFw::new(NicCfg::default()), Trace::discard());
    let mut nics = [Some(std::mem::replace(&mut h.cmq, fresh))];
    let now = std::time::Instant::now();
    // One pass sees the handshake, the next ends the reset (no hold).
    for _ in 0..2 {
        super::poll_all(&mut nics, &[&h.bar], &h.mem, now, &mut |_, _| {});
    }
    assert_eq!(h.bar.read32(rst::FUN_RST_ING), 0);
    assert!(nics[0].as_mut().is_some_and(|q| q.take_reset_done()));
}
