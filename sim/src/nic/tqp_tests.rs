// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The queue pairs driven as hns3 drives them: registers written at the
//! `HNS3_RING_*_REG` offsets of hns3_enet.h, descriptors laid out byte by
//! byte as `struct hns3_desc` places its fields (addr 0; TX send_size 10,
//! bdtp_fe_sc_vld_ra_ri 28; RX l234_info 8, pkt_len 12, size 14,
//! bd_base_info 28), doorbells written as hns3 writes them (the count of
//! descriptors, `hns3_tx_doorbell`, `hns3_nic_alloc_rx_buffers`), and the
//! answers read back at the offsets hns3 reads.

use std::time::{Duration, Instant};

use super::fw::{NicCfg, NicFw, RingVec};
use super::tqp::{self, TX_STABLE};
use super::{poll_all, NicCmq};
use crate::mem::{Bar, Dma, VecMem};
use crate::trace::Trace;

/// Descriptors per ring in these tests.
const DESCS: u32 = 16;
/// RX buffer size type 2: 2048 bytes (`HNS3_BD_SIZE_2048_TYPE`).
const BD_LEN_2048: u32 = 2;

/// One function as hns3 sees it: BAR2 and where its rings and buffers
/// live in the shared RAM, with the driver's ring indices.
struct Fn {
    bar: Bar,
    _file: std::fs::File,
    /// Queue 0's TX ring, RX ring and first RX buffer.
    tx: u64,
    rx: u64,
    rx_buf: u64,
    /// Where the next TX payload is copied.
    tx_buf: u64,
    /// TX next_to_use, RX next_to_clean.
    ntu: u32,
    ntc: u32,
    descs: u32,
}

/// Little-endian u16/u32 at `at` in `mem`.
fn rd16(mem: &VecMem, at: u64) -> u16 {
    let mut b = [0u8; 2];
    mem.read(at, &mut b).unwrap();
    u16::from_le_bytes(b)
}
fn rd32(mem: &VecMem, at: u64) -> u32 {
    mem.read_u32(at).unwrap()
}

impl Fn {
    /// Function `i` with its memory at `i` × 1 MiB.
    fn new(tag: &str, i: u64, descs: u32) -> Self {
        let (bar, file) = Bar::new(&format!("hns-sim-test-tqp-{tag}-{i}")).unwrap();
        let at = i << 20;
        Fn {
            bar,
            _file: file,
            tx: at,
            rx: at + 0x1000,
            rx_buf: at + 0x10000,
            tx_buf: at + 0x80000,
            ntu: 0,
            ntc: 0,
            descs,
        }
    }

    /// hns3_init_ring_hw for queue 0, the RX descriptors as
    /// hns3_reuse_buffer leaves them (addr, bd_base_info 0), then
    /// hns3_tqp_enable and vector 1 (queue 0's TX and RX) let fire.
    fn up(&mut self, mem: &VecMem) {
        let q = 0x80000;
        let n = self.descs / 8 - 1;
        self.bar.write32(q, self.rx as u32);
        self.bar.write32(q + 0x4, (self.rx >> 32) as u32);
        self.bar.write32(q + 0xc, BD_LEN_2048);
        self.bar.write32(q + 0x8, n);
        self.bar.write32(q + 0x40, self.tx as u32);
        self.bar.write32(q + 0x44, (self.tx >> 32) as u32);
        self.bar.write32(q + 0x48, n);
        for i in 0..self.descs as u64 {
            let d = self.rx + i * 32;
            mem.write(d, &(self.rx_buf + i * 4096).to_le_bytes())
                .unwrap();
            mem.write(d + 28, &0u32.to_le_bytes()).unwrap();
        }
        self.bar.write32(0x20000, 1);
        let en = self.bar.read32(q + 0x90);
        self.bar.write32(q + 0x90, en | 1);
    }

    /// hns3_nic_net_xmit of a frame in `frags.len()` descriptors (VLD on
    /// each, FE ORed into the last), without the doorbell.
    fn post(&mut self, mem: &VecMem, frags: &[&[u8]]) -> u32 {
        for (k, f) in frags.iter().enumerate() {
            mem.write(self.tx_buf, f).unwrap();
            let d = self.tx + self.ntu as u64 * 32;
            mem.write(d, &self.tx_buf.to_le_bytes()).unwrap();
            mem.write(d + 10, &(f.len() as u16).to_le_bytes()).unwrap();
            mem.write(d + 28, &(1u16 << 8).to_le_bytes()).unwrap();
            if k + 1 == frags.len() {
                let v = rd16(mem, d + 28) | 1 << 4;
                mem.write(d + 28, &v.to_le_bytes()).unwrap();
            }
            self.tx_buf += 0x1000;
            self.ntu = (self.ntu + 1) % self.descs;
        }
        frags.len() as u32
    }

    /// hns3_tx_doorbell: `writel(pending_buf, ... TX_RING_TAIL_REG)`.
    fn tx_doorbell(&self, count: u32) {
        self.bar.write32(0x80058, count);
    }

    /// The TX descriptor `i`'s bdtp_fe_sc_vld_ra_ri.
    fn tx_bits(&self, mem: &VecMem, i: u32) -> u16 {
        rd16(mem, self.tx + i as u64 * 32 + 28)
    }

    /// hns3_handle_rx_bd for the frame at next_to_clean: its bytes and
    /// the last descriptor's l234_info, or None without VLD (-ENXIO).
    /// Clears VLD as hns3_rx_ring_move_fw does.
    fn rx_frame(&mut self, mem: &VecMem) -> Option<(Vec<u8>, u32)> {
        let mut bytes = vec![];
        loop {
            let d = self.rx + self.ntc as u64 * 32;
            let base_info = rd32(mem, d + 28);
            if base_info & 1 << 4 == 0 {
                return None;
            }
            let size = rd16(mem, d + 14) as usize;
            let addr = mem.read_u64(d).unwrap();
            let mut b = vec![0u8; size];
            mem.read(addr, &mut b).unwrap();
            bytes.extend(b);
            mem.write(d + 28, &(base_info & !(1 << 4)).to_le_bytes())
                .unwrap();
            self.ntc = (self.ntc + 1) % self.descs;
            if base_info & 1 << 8 != 0 {
                // hns3_handle_bdinfo: the last BD's pkt_len and l234_info;
                // L3L4P (bit 11) clear: CHECKSUM_NONE.
                assert_eq!(base_info & 1 << 11, 0, "no checksum verdict");
                assert_eq!(rd16(mem, d + 12) as usize, bytes.len(), "pkt_len");
                return Some((bytes, rd32(mem, d + 8)));
            }
        }
    }
}

/// An Ethernet frame from `src` to `dst` with `ethertype` and `len`
/// bytes in all.
fn frame(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8], len: usize) -> Vec<u8> {
    let mut f = vec![];
    f.extend(dst);
    f.extend(src);
    f.extend(ethertype.to_be_bytes());
    f.extend(payload);
    f.resize(len.max(f.len()), 0x5a);
    f
}

/// An IPv4 header of protocol `proto` (20 bytes, no options).
fn ipv4(proto: u8) -> Vec<u8> {
    let mut h = vec![0x45, 0, 0, 84, 0, 0, 0x40, 0, 64, proto, 0, 0];
    h.extend([10, 0, 0, 1, 10, 0, 0, 2]);
    h
}

/// The port addresses `nic::attach` gives functions 0 and 1.
const MAC0: [u8; 6] = [0x00, 0x18, 0x2d, 0x00, 0x00, 0x01];
const MAC1: [u8; 6] = [0x00, 0x18, 0x2d, 0x00, 0x00, 0x02];
const BCAST: [u8; 6] = [0xff; 6];

/// Two functions of one hns-sim process sharing RAM, each with its
/// command queue model and queue 0's TX and RX rings on vector 1.
struct Pair {
    mem: VecMem,
    f: [Fn; 2],
    nics: Vec<Option<NicCmq>>,
    raised: Vec<(usize, u16)>,
}

impl Pair {
    fn new(tag: &str, descs: u32) -> Self {
        let mem = VecMem::new(2 << 20);
        let mut f = [Fn::new(tag, 0, descs), Fn::new(tag, 1, descs)];
        let nics = [MAC0, MAC1]
            .iter()
            .map(|mac| {
                let mut fw = NicFw::new(NicCfg {
                    mac: *mac,
                    ..NicCfg::default()
                });
                // hns3_nic_init_vector_data: queue 0's TX and RX on
                // vector 1 (what ADD_RING_TO_VECTOR records).
                for t in [0, 1] {
                    fw.vectors.entry(1).or_default().push(RingVec {
                        int_type: t,
                        tqp: 0,
                        gl: t,
                        vfid: 0,
                    });
                }
                Some(NicCmq::new(fw, Trace::discard()))
            })
            .collect();
        for x in &mut f {
            x.up(&mem);
        }
        Pair {
            mem,
            f,
            nics,
            raised: vec![],
        }
    }

    /// One pass of the model at `now`.
    fn poll_at(&mut self, now: Instant) -> bool {
        let raised = &mut self.raised;
        let bars = [&self.f[0].bar, &self.f[1].bar];
        poll_all(&mut self.nics, &bars, &self.mem, now, &mut |i, v| {
            raised.push((i, v))
        })
    }

    fn poll(&mut self) -> bool {
        self.poll_at(Instant::now())
    }

    fn stats(&self, i: usize) -> tqp::Stats {
        self.nics[i].as_ref().unwrap().tqps.stats
    }
}

#[test]
fn tx_frames_of_one_and_of_several_bds_complete_and_the_head_moves() {
    let mut p = Pair::new("txbd", DESCS);
    let a = frame(BCAST, MAC0, 0x0806, &[0, 1, 8, 0], 60);
    let n = p.f[0].post(&p.mem, &[&a]);
    p.f[0].tx_doorbell(n);
    assert!(p.poll());
    // The head register moved past the BD; VLD cleared, FE left.
    assert_eq!(p.f[0].bar.read32(0x8005c), 1, "TX head");
    assert_eq!(p.f[0].tx_bits(&p.mem, 0), 1 << 4, "VLD clear, FE kept");
    assert_eq!(p.f[0].bar.read32(0x80058), 0, "the count was taken");
    // Three BDs: 14-byte header, 20-byte IP header, 40 bytes of payload.
    let b = frame(MAC1, MAC0, 0x0800, &ipv4(1), 74);
    let n = p.f[0].post(&p.mem, &[&b[..14], &b[14..34], &b[34..]]);
    assert_eq!(n, 3);
    p.f[0].tx_doorbell(n);
    assert!(p.poll());
    assert_eq!(p.f[0].bar.read32(0x8005c), 4, "TX head after 1 + 3 BDs");
    for i in 1..4 {
        assert_eq!(p.f[0].tx_bits(&p.mem, i) & 1 << 8, 0, "BD {i} VLD clear");
    }
    assert_eq!(p.stats(0).tx_frames, 2);
    assert_eq!(p.stats(0).tx_bds, 4);
    // Both reached function 1 whole (the broadcast and the unicast).
    assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(a));
    assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(b));
    assert_eq!(p.f[1].rx_frame(&p.mem), None);
    // Nothing came back to the sender.
    assert_eq!(p.f[0].rx_frame(&p.mem), None);
    // The sender's TX vector fired once, then masked itself.
    assert!(p.raised.contains(&(0, 1)));
    assert_eq!(p.f[0].bar.read32(0x20000), 0, "vector 1 masked");
}

#[test]
fn a_frame_crosses_the_switch_with_the_bits_hns3_reads() {
    let mut p = Pair::new("switch", DESCS);
    // A ping: IPv4/ICMP to function 1's port address.
    let ping = frame(MAC1, MAC0, 0x0800, &ipv4(1), 98);
    let n = p.f[0].post(&p.mem, &[&ping]);
    p.f[0].tx_doorbell(n);
    p.poll();
    let d = p.f[1].rx;
    let base_info = rd32(&p.mem, d + 28);
    assert_eq!(base_info & (1 << 4 | 1 << 8), 1 << 4 | 1 << 8, "VLD | FE");
    assert_eq!(rd16(&p.mem, d + 14), 98, "size");
    let (got, l234) = p.f[1].rx_frame(&p.mem).unwrap();
    assert_eq!(got, ping);
    // L2E (16), TRUNCAT (19) clear: hns3_handle_bdinfo keeps it.
    assert_eq!(l234 & (1 << 16 | 1 << 19), 0);
    assert_eq!(l234 & 0x3, 0, "DMAC: unicast");
    assert_eq!((l234 >> 4) & 0xf, 0, "L3: HNS3_L3_TYPE_IPV4");
    assert_eq!((l234 >> 8) & 0xf, 5, "L4: HNS3_L4_TYPE_ICMP");
    assert_eq!(p.f[1].bar.read32(0x80018), 1, "RX tail");
    assert!(p.raised.contains(&(1, 1)), "function 1's RX vector");
    // An ARP broadcast: L3 type ARP, DMAC broadcast.
    let arp = frame(BCAST, MAC0, 0x0806, &[0, 1, 8, 0, 6, 4, 0, 1], 60);
    let n = p.f[0].post(&p.mem, &[&arp]);
    p.f[0].tx_doorbell(n);
    p.raised.clear();
    p.poll();
    let (got, l234) = p.f[1].rx_frame(&p.mem).unwrap();
    assert_eq!(got, arp);
    assert_eq!(l234 & 0x3, 2, "DMAC: broadcast");
    assert_eq!((l234 >> 4) & 0xf, 2, "L3: HNS3_L3_TYPE_ARP");
    // Vector 1 of function 1 is still masked (the NAPI poll has not
    // written 1): the event waits for the unmask.
    assert!(!p.raised.contains(&(1, 1)), "masked");
    p.f[1].bar.write32(0x20000, 1);
    p.poll();
    assert!(p.raised.contains(&(1, 1)), "raised on unmask");
    // A 3000-byte frame takes two 2048-byte buffers: the first without
    // FE, size 2048; the last with FE, size 952, pkt_len 3000.
    let big = frame(MAC1, MAC0, 0x0800, &ipv4(17), 3000);
    let n = p.f[0].post(&p.mem, &[&big[..1500], &big[1500..]]);
    p.f[0].tx_doorbell(n);
    p.poll();
    let d0 = p.f[1].rx + p.f[1].ntc as u64 * 32;
    assert_eq!(rd32(&p.mem, d0 + 28) & (1 << 4 | 1 << 8), 1 << 4);
    assert_eq!(rd16(&p.mem, d0 + 14), 2048);
    assert_eq!(rd16(&p.mem, d0 + 32 + 14), 952);
    let (got, l234) = p.f[1].rx_frame(&p.mem).unwrap();
    assert_eq!(got, big);
    assert_eq!((l234 >> 8) & 0xf, 0, "L4: HNS3_L4_TYPE_UDP");
    // A unicast nobody owns is dropped (no uplink); function 1 gets
    // nothing.
    let stray = frame([2, 0, 0, 0, 0, 9], MAC0, 0x0800, &ipv4(1), 60);
    let n = p.f[0].post(&p.mem, &[&stray]);
    p.f[0].tx_doorbell(n);
    p.poll();
    assert_eq!(p.f[1].rx_frame(&p.mem), None);
    assert_eq!(p.stats(0).tx_frames, 4, "sent all the same");
    // An address the function added to its MAC_VLAN table reaches it.
    let extra = [0x02, 0, 0, 0, 0, 0x42];
    let mut key = [0u8; 8];
    key[2..8].copy_from_slice(&extra);
    let fw1 = &mut p.nics[1].as_mut().unwrap().fw;
    fw1.mac_vlan.insert(key, vec![[0; 24]]);
    let to_extra = frame(extra, MAC0, 0x0800, &ipv4(1), 60);
    let n = p.f[0].post(&p.mem, &[&to_extra]);
    p.f[0].tx_doorbell(n);
    p.poll();
    assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(to_extra));
}

#[test]
fn a_full_rx_ring_drops_and_the_rx_head_doorbell_is_a_count() {
    // Eight descriptors (BD_NUM 0): the ring takes eight frames.
    let mut p = Pair::new("full", 8);
    let f = |i: u8| frame(MAC1, MAC0, 0x0800, &ipv4(1), 60 + i as usize);
    for i in 0..9 {
        let n = p.f[0].post(&p.mem, &[&f(i)]);
        p.f[0].tx_doorbell(n);
        p.poll();
    }
    assert_eq!(p.stats(1).rx_frames, 8);
    assert_eq!(p.stats(1).rx_no_buf, 1, "the ninth dropped");
    assert_eq!(p.f[1].bar.read32(0x80020), 0, "RX FBDNUM");
    // hns3 cleans two and refills them: writel(2, RX_RING_HEAD_REG).
    for i in 0..2 {
        assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(f(i)));
    }
    for i in 0..2u64 {
        let d = p.f[1].rx + i * 32;
        p.mem.write(d + 28, &0u32.to_le_bytes()).unwrap();
    }
    p.f[1].bar.write32(0x8001c, 2);
    let n = p.f[0].post(&p.mem, &[&f(9)]);
    p.f[0].tx_doorbell(n);
    p.poll();
    assert_eq!(p.stats(1).rx_frames, 9);
    // It went round to descriptor 0, not to index 2.
    assert_eq!(p.f[1].bar.read32(0x80018), 1, "RX tail wrapped to 1");
    let d0 = p.f[1].rx;
    assert_eq!(rd16(&p.mem, d0 + 12), 60 + 9, "pkt_len in BD 0");
    assert_eq!(p.f[1].bar.read32(0x80020), 1, "one BD left");
    // Three more cleaned (BDs 2..5) and refilled: writel(3): the model
    // now has 1 + 3 free, whatever the driver's index (5).
    for i in 2..5 {
        assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(f(i)));
    }
    for i in 2..5u64 {
        let d = p.f[1].rx + i * 32;
        p.mem.write(d + 28, &0u32.to_le_bytes()).unwrap();
    }
    p.f[1].bar.write32(0x8001c, 3);
    for i in 10..14 {
        let n = p.f[0].post(&p.mem, &[&f(i)]);
        p.f[0].tx_doorbell(n);
        p.poll();
    }
    assert_eq!(p.stats(1).rx_frames, 13, "all four placed");
    assert_eq!(p.stats(1).rx_no_buf, 1);
    assert_eq!(p.f[1].bar.read32(0x80018), 5, "RX tail");
    assert_eq!(p.f[1].bar.read32(0x80020), 0, "RX FBDNUM");
    // In ring order from the driver's next_to_clean (5); the dropped
    // frame 8 never appears.
    for i in [5, 6, 7, 9, 10, 11, 12, 13] {
        assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(f(i)), "{i}");
    }
    assert_eq!(p.f[1].rx_frame(&p.mem), None);
}

#[test]
fn the_tx_tail_doorbell_is_a_count_not_an_index() {
    let mut p = Pair::new("count", DESCS);
    let f = |i: u8| frame(MAC1, MAC0, 0x0800, &ipv4(1), 60 + i as usize);
    // Five frames: the model's head is at 5.
    for i in 0..5 {
        let n = p.f[0].post(&p.mem, &[&f(i)]);
        p.f[0].tx_doorbell(n);
        p.poll();
    }
    assert_eq!(p.f[0].bar.read32(0x8005c), 5);
    // Three more posted, a doorbell of 2 (xmit_more held the third back):
    // two go now, the third waits for its own doorbell.
    let now = Instant::now();
    for i in 5..8 {
        p.f[0].post(&p.mem, &[&f(i)]);
    }
    p.f[0].tx_doorbell(2);
    p.poll_at(now);
    assert_eq!(p.f[0].bar.read32(0x8005c), 7, "head 5 + 2, not 2");
    assert_eq!(p.stats(0).tx_frames, 7);
    assert_ne!(p.f[0].tx_bits(&p.mem, 7) & 1 << 8, 0, "BD 7 still VLD");
    p.f[0].tx_doorbell(1);
    p.poll_at(now);
    assert_eq!(p.f[0].bar.read32(0x8005c), 8);
    assert_eq!(p.stats(0).tx_found, 0);
    // Two doorbells between polls: the second write replaces the first
    // in the shared register. The count of 1 sends one frame at once;
    // the other, complete and VLD, goes after TX_STABLE.
    p.f[0].post(&p.mem, &[&f(8)]);
    p.f[0].tx_doorbell(1);
    p.f[0].post(&p.mem, &[&f(9)]);
    p.f[0].tx_doorbell(1);
    p.poll_at(now);
    assert_eq!(p.f[0].bar.read32(0x8005c), 9);
    p.poll_at(now + Duration::from_millis(1));
    assert_eq!(p.f[0].bar.read32(0x8005c), 9, "waits");
    p.poll_at(now + TX_STABLE + Duration::from_millis(1));
    assert_eq!(p.f[0].bar.read32(0x8005c), 10);
    assert_eq!(p.stats(0).tx_found, 1);
    // The late doorbell of the frame taken without one is dropped: the
    // next frame still waits for its own count.
    p.f[0].tx_doorbell(1);
    p.poll_at(now + TX_STABLE * 2);
    p.f[0].post(&p.mem, &[&f(10)]);
    p.poll_at(now + TX_STABLE * 2);
    assert_eq!(p.f[0].bar.read32(0x8005c), 10, "waits for its doorbell");
    p.f[0].tx_doorbell(1);
    p.poll_at(now + TX_STABLE * 2);
    assert_eq!(p.f[0].bar.read32(0x8005c), 11);
    assert_eq!(p.stats(0).tx_found, 1);
    for i in 0..11 {
        assert_eq!(p.f[1].rx_frame(&p.mem).map(|r| r.0), Some(f(i)), "{i}");
    }
}

#[test]
fn loopback_returns_frames_to_the_sender_and_disabled_rings_drop() {
    let mut p = Pair::new("lb", DESCS);
    // hns3's self test (COMMON_LOOPBACK enabled): frames to its own
    // address come back to its RX ring, none reaches function 1.
    p.nics[0].as_mut().unwrap().fw.loopback = 4;
    let own = frame(MAC0, MAC0, 0x0800, &ipv4(17), 60);
    let n = p.f[0].post(&p.mem, &[&own]);
    p.f[0].tx_doorbell(n);
    p.poll();
    assert_eq!(p.f[0].rx_frame(&p.mem).map(|r| r.0), Some(own));
    assert_eq!(p.f[1].rx_frame(&p.mem), None);
    p.nics[0].as_mut().unwrap().fw.loopback = 0;
    // hns3_tqp_disable on function 1: frames for it are dropped.
    let en = p.f[1].bar.read32(0x80090);
    p.f[1].bar.write32(0x80090, en & !1);
    let to1 = frame(MAC1, MAC0, 0x0800, &ipv4(1), 60);
    let n = p.f[0].post(&p.mem, &[&to1]);
    p.f[0].tx_doorbell(n);
    p.poll();
    assert_eq!(p.stats(1).rx_down, 1);
    assert_eq!(p.f[1].rx_frame(&p.mem), None);
}

#[test]
fn queue_bases_follow_hclge_alloc_tqps() {
    assert_eq!(tqp::tqp_base(0), 0x80000);
    assert_eq!(tqp::tqp_base(3), 0x80600);
    assert_eq!(tqp::tqp_base(1023), 0x80000 + 1023 * 0x200);
    assert_eq!(tqp::tqp_base(1024), 0x80100);
    assert_eq!(tqp::tqp_base(1025), 0x80300);
    assert_eq!(tqp::vector_ctrl(1), Some(0x20000));
    assert_eq!(tqp::vector_ctrl(4), Some(0x2000c));
    assert_eq!(tqp::vector_ctrl(0), None, "vector 0 is the misc vector");
}

#[test]
fn attach_gives_each_function_its_own_port_address() {
    let dir = std::env::temp_dir().join(format!("hns-sim-test-tqp-attach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let on = super::attach(super::Mode::Hclge, dir.to_str().unwrap(), &[(5, 1), (5, 1)]).unwrap();
    let macs: Vec<[u8; 6]> = on.iter().map(|q| q.as_ref().unwrap().fw.cfg.mac).collect();
    assert_eq!(macs, [MAC0, MAC1]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The 7.3 source tree (HNS_KSRC, or what make setup recorded).
fn ksrc() -> Option<std::path::PathBuf> {
    if let Ok(k) = std::env::var("HNS_KSRC") {
        return Some(k.into());
    }
    let home = std::env::var("HOME").ok()?;
    let p = std::fs::read_to_string(format!("{home}/.cache/hns-roce-rs/kernel-src.path")).ok()?;
    Some(p.trim().into())
}

/// The value of `#define NAME VALUE` in `text` (hex or decimal).
fn define(text: &str, name: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
        .unwrap_or_else(|| panic!("{name} not in the header"));
    let v = line.split_whitespace().nth(2).unwrap();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => v.parse().unwrap(),
    }
}

#[test]
fn constants_match_hns3_enet_h_and_hclge_headers() {
    let Some(k) = ksrc() else {
        eprintln!("no kernel source (HNS_KSRC): header check skipped");
        return;
    };
    let dir = k.join("drivers/net/ethernet/hisilicon/hns3");
    let enet = std::fs::read_to_string(dir.join("hns3_enet.h")).unwrap();
    let cmd = std::fs::read_to_string(dir.join("hns3pf/hclge_cmd.h")).unwrap();
    let main = std::fs::read_to_string(dir.join("hns3pf/hclge_main.h")).unwrap();
    use tqp::reg;
    for (name, ours) in [
        ("HNS3_RING_RX_RING_BASEADDR_L_REG", reg::RX_BASEADDR_L),
        ("HNS3_RING_RX_RING_BASEADDR_H_REG", reg::RX_BASEADDR_H),
        ("HNS3_RING_RX_RING_BD_NUM_REG", reg::RX_BD_NUM),
        ("HNS3_RING_RX_RING_BD_LEN_REG", reg::RX_BD_LEN),
        ("HNS3_RING_RX_RING_TAIL_REG", reg::RX_TAIL),
        ("HNS3_RING_RX_RING_HEAD_REG", reg::RX_HEAD),
        ("HNS3_RING_RX_RING_FBDNUM_REG", reg::RX_FBDNUM),
        ("HNS3_RING_TX_RING_BASEADDR_L_REG", reg::TX_BASEADDR_L),
        ("HNS3_RING_TX_RING_BASEADDR_H_REG", reg::TX_BASEADDR_H),
        ("HNS3_RING_TX_RING_BD_NUM_REG", reg::TX_BD_NUM),
        ("HNS3_RING_TX_RING_TAIL_REG", reg::TX_TAIL),
        ("HNS3_RING_TX_RING_HEAD_REG", reg::TX_HEAD),
        ("HNS3_RING_TX_RING_FBDNUM_REG", reg::TX_FBDNUM),
        ("HNS3_RING_EN_REG", reg::EN),
        ("HNS3_RING_EN_B", tqp::RING_EN_B as u64),
        ("HNS3_TXD_FE_B", tqp::TXD_FE_B as u64),
        ("HNS3_TXD_VLD_B", tqp::TXD_VLD_B as u64),
        ("HNS3_RXD_VLD_B", tqp::RXD_VLD_B as u64),
        ("HNS3_RXD_FE_B", tqp::RXD_FE_B as u64),
        ("HNS3_RXD_DMAC_S", tqp::RXD_DMAC_S as u64),
        ("HNS3_RXD_L3ID_S", tqp::RXD_L3ID_S as u64),
        ("HNS3_RXD_L4ID_S", tqp::RXD_L4ID_S as u64),
        ("HNS3_BD_SIZE_2048_TYPE", BD_LEN_2048 as u64),
    ] {
        assert_eq!(define(&enet, name), ours, "{name}");
    }
    assert_eq!(tqp::buf_size(BD_LEN_2048), 2048);
    for (name, ours) in [
        ("HCLGE_TQP_REG_OFFSET", tqp::TQP_REG_OFFSET),
        ("HCLGE_TQP_REG_SIZE", tqp::TQP_REG_SIZE),
        ("HCLGE_TQP_MAX_SIZE_DEV_V2", tqp::TQP_MAX_SIZE_DEV_V2 as u64),
        ("HCLGE_TQP_EXT_REG_OFFSET", tqp::TQP_EXT_REG_OFFSET),
    ] {
        assert_eq!(define(&cmd, name), ours, "{name}");
    }
    for (name, ours) in [
        ("HCLGE_VECTOR_REG_BASE", tqp::VECTOR_REG_BASE),
        ("HCLGE_VECTOR_REG_OFFSET", tqp::VECTOR_REG_OFFSET),
    ] {
        assert_eq!(define(&main, name), ours, "{name}");
    }
    // The descriptor is 32 bytes and the fields sit where the tests
    // write them: struct hns3_desc's first member is the 8-byte addr
    // union, then the tx/rx union; the tx struct's last members are
    // bdtp_fe_sc_vld_ra_ri and mss_hw_csum (2 + 2), the rx struct's
    // bd_base_info (4).
    let s = enet.find("struct __packed hns3_desc {").unwrap();
    let body = &enet[s..s + enet[s..].find("\n};").unwrap()];
    let order = [
        "__le64 addr",
        "__le16 vlan_tag",
        "__le16 send_size",
        "__le16 bdtp_fe_sc_vld_ra_ri",
        "__le16 mss_hw_csum",
        "__le32 l234_info",
        "__le16 pkt_len",
        "__le16 size",
        "__le32 bd_base_info",
    ];
    let mut at = 0;
    for f in order {
        let i = body[at..].find(f).unwrap_or_else(|| panic!("{f} in order"));
        at += i;
    }
}
