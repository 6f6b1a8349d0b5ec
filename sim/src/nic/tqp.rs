// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The NIC's queue pairs (TQPs): the TX and RX descriptor rings `hns3.ko`
//! drives through the per-queue registers at BAR2 0x80000 + queue × 0x200
//! (`HCLGE_TQP_REG_OFFSET`, `HCLGE_TQP_REG_SIZE`), with the 32-byte
//! `struct hns3_desc` of hns3_enet.h. TX: the model takes the descriptors
//! the driver announced (the TX tail register is a count of descriptors
//! added, not an index), gathers each frame up to the descriptor with FE,
//! clears VLD in every descriptor it consumed (hns3 reclaims on VLD clear)
//! and moves the head register. RX: a frame goes into the next
//! descriptors whose buffers the driver gave back (the RX head register is
//! a count of descriptors refilled), with size, pkt_len, the L2/L3/L4
//! types, VLD and FE written. Frames cross [`forward`], the switch between
//! the functions of one hns-sim process. Off unless `--set nic=hclge`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::fw::NicFw;
use crate::mem::{Bar, Dma};
use crate::trace::Trace;

/// The first queue's registers in BAR2 (`HCLGE_TQP_REG_OFFSET`).
pub const TQP_REG_OFFSET: u64 = 0x80000;
/// The stride between queues (`HCLGE_TQP_REG_SIZE`).
pub const TQP_REG_SIZE: u64 = 0x200;
/// Queues from this one on use the extended layout
/// (`HCLGE_TQP_MAX_SIZE_DEV_V2`).
pub const TQP_MAX_SIZE_DEV_V2: u16 = 1024;
/// The extended queues' extra offset (`HCLGE_TQP_EXT_REG_OFFSET`).
pub const TQP_EXT_REG_OFFSET: u64 = 0x100;

/// Where queue `n`'s registers start, as `hclge_alloc_tqps` computes it.
pub fn tqp_base(n: u16) -> u64 {
    if n < TQP_MAX_SIZE_DEV_V2 {
        TQP_REG_OFFSET + n as u64 * TQP_REG_SIZE
    } else {
        TQP_REG_OFFSET + TQP_EXT_REG_OFFSET + (n - TQP_MAX_SIZE_DEV_V2) as u64 * TQP_REG_SIZE
    }
}

/// The per-queue registers (`HNS3_RING_*_REG`), offsets from
/// [`tqp_base`].
pub mod reg {
    /// RX ring base address, low word.
    pub const RX_BASEADDR_L: u64 = 0x00;
    /// RX ring base address, high word.
    pub const RX_BASEADDR_H: u64 = 0x04;
    /// RX ring size: descriptors / 8 - 1.
    pub const RX_BD_NUM: u64 = 0x08;
    /// RX buffer size type ([`super::buf_size`]).
    pub const RX_BD_LEN: u64 = 0x0c;
    /// RX tail: the model's producer index (written by the model).
    pub const RX_TAIL: u64 = 0x18;
    /// RX head: the driver's doorbell, a count of descriptors refilled.
    pub const RX_HEAD: u64 = 0x1c;
    /// RX descriptors the model may fill (written by the model).
    pub const RX_FBDNUM: u64 = 0x20;
    /// TX ring base address, low word.
    pub const TX_BASEADDR_L: u64 = 0x40;
    /// TX ring base address, high word.
    pub const TX_BASEADDR_H: u64 = 0x44;
    /// TX ring size: descriptors / 8 - 1.
    pub const TX_BD_NUM: u64 = 0x48;
    /// TX tail: the driver's doorbell, a count of descriptors added.
    pub const TX_TAIL: u64 = 0x58;
    /// TX head: the next descriptor the model reads (written by the
    /// model).
    pub const TX_HEAD: u64 = 0x5c;
    /// TX descriptors announced and not yet sent (written by the model).
    pub const TX_FBDNUM: u64 = 0x60;
    /// Queue enable, bit [`super::RING_EN_B`].
    pub const EN: u64 = 0x90;
}

/// The bits of [`reg::TX_BD_NUM`]/[`reg::RX_BD_NUM`] the model reads:
/// enough for hns3's largest ring (`HNS3_RING_MAX_PENDING`, 32760
/// descriptors: 4094).
pub const BD_NUM_MASK: u32 = 0xfff;

/// The longest frame the model gathers from a TX ring: hns3's largest
/// TSO frame (`HNS3_MAX_TSO_SIZE`) with room for its headers. A longer
/// one means a corrupt ring; it is treated as bad DMA.
pub const TX_MAX_FRAME: usize = (1 << 20) + 256;

/// The enable bit of [`reg::EN`] (`HNS3_RING_EN_B`).
pub const RING_EN_B: u32 = 0;

/// Byte offsets in `struct hns3_desc` (hns3_enet.h).
pub mod desc {
    /// Buffer address (`addr`, le64), both directions.
    pub const ADDR: usize = 0;
    /// TX: this descriptor's byte count (`tx.send_size`, le16).
    pub const TX_SEND_SIZE: usize = 10;
    /// TX: BD type, FE, VLD and friends (`tx.bdtp_fe_sc_vld_ra_ri`, le16).
    pub const TX_BDTP: usize = 28;
    /// RX: frame types and errors (`rx.l234_info`, le32).
    pub const RX_L234_INFO: usize = 8;
    /// RX: the frame's length, read from its last descriptor
    /// (`rx.pkt_len`, le16).
    pub const RX_PKT_LEN: usize = 12;
    /// RX: this descriptor's byte count (`rx.size`, le16).
    pub const RX_SIZE: usize = 14;
    /// RX: VLD, FE and the other base bits (`rx.bd_base_info`, le32).
    pub const RX_BD_BASE_INFO: usize = 28;
    /// Size of a descriptor.
    pub const SIZE: usize = 32;
}

/// TX `bdtp_fe_sc_vld_ra_ri`: last descriptor of a frame (`HNS3_TXD_FE_B`).
pub const TXD_FE_B: u32 = 4;
/// TX: the descriptor is the hardware's to send (`HNS3_TXD_VLD_B`).
pub const TXD_VLD_B: u32 = 8;
/// RX `bd_base_info`: the descriptor holds data (`HNS3_RXD_VLD_B`).
pub const RXD_VLD_B: u32 = 4;
/// RX: last descriptor of a frame (`HNS3_RXD_FE_B`).
pub const RXD_FE_B: u32 = 8;
/// RX `l234_info`: destination MAC type shift (`HNS3_RXD_DMAC_S`).
pub const RXD_DMAC_S: u32 = 0;
/// RX: L3 type shift (`HNS3_RXD_L3ID_S`).
pub const RXD_L3ID_S: u32 = 4;
/// RX: L4 type shift (`HNS3_RXD_L4ID_S`).
pub const RXD_L4ID_S: u32 = 8;

/// `enum hns3_pkt_l2t_type`.
pub mod l2 {
    /// Unicast destination.
    pub const UNICAST: u32 = 0;
    /// Multicast destination.
    pub const MULTICAST: u32 = 1;
    /// Broadcast destination.
    pub const BROADCAST: u32 = 2;
}

/// `enum hns3_pkt_l3type`.
pub mod l3 {
    /// IPv4 without options.
    pub const IPV4: u32 = 0;
    /// IPv6.
    pub const IPV6: u32 = 1;
    /// ARP.
    pub const ARP: u32 = 2;
    /// RARP.
    pub const RARP: u32 = 3;
    /// IPv4 with options.
    pub const IPV4_OPT: u32 = 4;
    /// LLDP.
    pub const LLDP: u32 = 6;
    /// Anything else.
    pub const PARSE_FAIL: u32 = 0xf;
}

/// `enum hns3_pkt_l4type`.
pub mod l4 {
    /// UDP.
    pub const UDP: u32 = 0;
    /// TCP.
    pub const TCP: u32 = 1;
    /// GRE.
    pub const GRE: u32 = 2;
    /// SCTP.
    pub const SCTP: u32 = 3;
    /// IGMP.
    pub const IGMP: u32 = 4;
    /// ICMP and ICMPv6.
    pub const ICMP: u32 = 5;
    /// Anything else, or no L4.
    pub const PARSE_FAIL: u32 = 0xf;
}

/// RX buffer bytes for the [`reg::RX_BD_LEN`] type
/// (`HNS3_BD_SIZE_*_TYPE`: 512 << type).
pub fn buf_size(ty: u32) -> usize {
    512 << (ty & 3)
}

/// The TQP vectors' control registers (`HCLGE_VECTOR_REG_BASE`,
/// `HCLGE_VECTOR_REG_OFFSET`): vector `idx` (the MSI-X index
/// ADD_RING_TO_VECTOR names, 1..=64) at base + (idx - 1) × 4; the driver
/// writes 1 to let it fire and 0 to mask it.
pub const VECTOR_REG_BASE: u64 = 0x20000;
/// See [`VECTOR_REG_BASE`].
pub const VECTOR_REG_OFFSET: u64 = 4;
/// Vectors of the first control block (`HCLGE_PF_MAX_VECTOR_NUM_DEV_V2`);
/// the model drives only these.
pub const VECTOR_MAX_V2: u16 = 64;

/// The control register of MSI-X vector `idx`, if the model drives it.
pub fn vector_ctrl(idx: u16) -> Option<u64> {
    (1..=VECTOR_MAX_V2)
        .contains(&idx)
        .then(|| VECTOR_REG_BASE + (idx - 1) as u64 * VECTOR_REG_OFFSET)
}

/// A VLD frame at the TX head that no doorbell announced is taken after
/// it has sat unchanged this long: its count was lost when the driver
/// wrote the tail twice between two polls (the register is plain shared
/// memory, so the second write replaced the first).
pub const TX_STABLE: Duration = Duration::from_millis(20);

/// Counters of the data path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames sent.
    pub tx_frames: u64,
    /// TX descriptors consumed.
    pub tx_bds: u64,
    /// Frames taken from the TX ring without a doorbell ([`TX_STABLE`]).
    pub tx_found: u64,
    /// Frames placed in an RX ring.
    pub rx_frames: u64,
    /// Frames dropped: no free RX descriptors.
    pub rx_no_buf: u64,
    /// Frames dropped: the RX ring is disabled or unprogrammed.
    pub rx_down: u64,
    /// Descriptors or buffers outside guest RAM.
    pub bad_dma: u64,
}

/// One ring as the driver last programmed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RingCfg {
    /// Descriptor ring address.
    base: u64,
    /// Descriptors.
    num: u32,
}

/// The model's side of one queue pair.
#[derive(Debug, Default)]
struct Queue {
    /// The rings as seen when the queue was enabled; `None` while it is
    /// disabled.
    live: Option<(RingCfg, RingCfg)>,
    /// TX: the next descriptor to read.
    tx_head: u32,
    /// TX: descriptors announced by doorbells and not yet consumed.
    tx_owed: u32,
    /// TX: when a VLD descriptor was first seen at the head with nothing
    /// owed, and which head that was.
    tx_unannounced: Option<(u32, Instant)>,
    /// RX: the next descriptor to fill.
    rx_tail: u32,
    /// RX: descriptors whose buffers the driver has given.
    rx_free: u32,
}

impl Queue {
    /// Takes the RX doorbell: the count of descriptors the driver
    /// refilled (`hns3_nic_alloc_rx_buffers` writes how many, not where),
    /// added to the free ones.
    fn take_refills(&mut self, bar: &Bar, base: u64, rx: RingCfg) {
        let refilled = bar.take32(base + reg::RX_HEAD);
        if refilled != 0 {
            self.rx_free = (self.rx_free + refilled).min(rx.num);
            bar.write32(base + reg::RX_FBDNUM, self.rx_free);
        }
    }
}

/// The queue pairs of one function.
#[derive(Debug, Default)]
pub struct Tqps {
    queues: Vec<Queue>,
    /// Vectors with an event to raise while their control register
    /// masked them.
    pending: BTreeSet<u16>,
    /// Data path counters.
    pub stats: Stats,
}

/// A little-endian u16 at `off` of a descriptor.
fn le16(d: &[u8; desc::SIZE], off: usize) -> u16 {
    u16::from_le_bytes([d[off], d[off + 1]])
}

/// The ring registers at `base + l`/`base + h`/`base + num`.
fn ring_cfg(bar: &Bar, base: u64, l: u64, h: u64, num: u64) -> RingCfg {
    RingCfg {
        base: (bar.read32(base + h) as u64) << 32 | bar.read32(base + l) as u64,
        num: ((bar.read32(base + num) & BD_NUM_MASK) + 1) * 8,
    }
}

/// The `l234_info` word the RX descriptor carries for `frame`: the
/// destination type and the L3/L4 types the hardware's parser reports;
/// no error bit, no checksum verdict (L3L4P stays clear).
pub fn l234_info(frame: &[u8]) -> u32 {
    let dmac = match frame.first() {
        _ if frame.len() >= 6 && frame[..6] == [0xff; 6] => l2::BROADCAST,
        Some(b) if b & 1 != 0 => l2::MULTICAST,
        _ => l2::UNICAST,
    };
    let mut off = 12;
    let mut ethertype = frame.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]));
    if ethertype == Some(0x8100) {
        off = 16;
        ethertype = frame.get(16..18).map(|b| u16::from_be_bytes([b[0], b[1]]));
    }
    let ip = off + 2;
    let (l3t, proto) = match ethertype {
        Some(0x0800) => {
            let ihl = frame.get(ip).map_or(5, |b| b & 0xf);
            let t = if ihl > 5 { l3::IPV4_OPT } else { l3::IPV4 };
            (t, frame.get(ip + 9).copied())
        }
        Some(0x86dd) => (l3::IPV6, frame.get(ip + 6).copied()),
        Some(0x0806) => (l3::ARP, None),
        Some(0x8035) => (l3::RARP, None),
        Some(0x88cc) => (l3::LLDP, None),
        _ => (l3::PARSE_FAIL, None),
    };
    let l4t = match proto {
        Some(17) => l4::UDP,
        Some(6) => l4::TCP,
        Some(47) => l4::GRE,
        Some(132) => l4::SCTP,
        Some(2) => l4::IGMP,
        Some(1) | Some(58) => l4::ICMP,
        _ => l4::PARSE_FAIL,
    };
    dmac << RXD_DMAC_S | l3t << RXD_L3ID_S | l4t << RXD_L4ID_S
}

impl Tqps {
    /// `n` queue pairs, all disabled.
    pub fn new(n: u16) -> Self {
        Tqps {
            queues: (0..n).map(|_| Queue::default()).collect(),
            ..Default::default()
        }
    }

    /// Follows the enable bits: a queue the driver enabled starts fresh
    /// (hns3 re-programs and resets its rings before every enable,
    /// `hns3_nic_net_up`, handing the hardware every RX descriptor
    /// without a doorbell); a disabled one stops.
    fn track_enable(&mut self, bar: &Bar) {
        for (n, q) in self.queues.iter_mut().enumerate() {
            // CAST: n < tqp_num, a u16.
            let base = tqp_base(n as u16);
            let on = bar.read32(base + reg::EN) & (1 << RING_EN_B) != 0;
            match (on, q.live.is_some()) {
                (true, false) => {
                    let tx = ring_cfg(
                        bar,
                        base,
                        reg::TX_BASEADDR_L,
                        reg::TX_BASEADDR_H,
                        reg::TX_BD_NUM,
                    );
                    let rx = ring_cfg(
                        bar,
                        base,
                        reg::RX_BASEADDR_L,
                        reg::RX_BASEADDR_H,
                        reg::RX_BD_NUM,
                    );
                    *q = Queue {
                        live: Some((tx, rx)),
                        rx_free: rx.num,
                        ..Queue::default()
                    };
                    // A doorbell already in the registers is for this life:
                    // the driver rings none while its queue is disabled
                    // (hns3_nic_net_down clears the rings after the
                    // disable and before the next enable).
                    bar.write32(base + reg::TX_HEAD, 0);
                    bar.write32(base + reg::TX_FBDNUM, 0);
                    bar.write32(base + reg::RX_TAIL, 0);
                    bar.write32(base + reg::RX_FBDNUM, rx.num);
                }
                (false, true) => q.live = None,
                _ => {}
            }
        }
    }

    /// One pass over the TX rings: takes the doorbells and every complete
    /// frame they announced (or that sat unannounced for [`TX_STABLE`]);
    /// returns the frames with their queue and the queues whose TX ring
    /// completed descriptors. Also takes the RX doorbells.
    pub fn poll_tx<M: Dma>(
        &mut self,
        bar: &Bar,
        mem: &M,
        now: Instant,
        trace: &mut Trace,
    ) -> (Vec<(u16, Vec<u8>)>, Vec<u16>) {
        self.track_enable(bar);
        let mut frames = vec![];
        let mut done = vec![];
        for (n, q) in self.queues.iter_mut().enumerate() {
            let Some((tx, rx)) = q.live else {
                continue;
            };
            // CAST: n < tqp_num, a u16.
            let n = n as u16;
            let base = tqp_base(n);
            q.take_refills(bar, base, rx);
            let added = bar.take32(base + reg::TX_TAIL);
            q.tx_owed = (q.tx_owed + added).min(tx.num);
            let mut sent = false;
            loop {
                let frame = match gather(mem, tx, q.tx_head) {
                    Ok(f) => f,
                    Err(Gather::BadDma) => {
                        self.stats.bad_dma += 1;
                        trace.note(&format!(
                            "tqp {n} tx: descriptor or buffer outside guest RAM"
                        ));
                        q.tx_owed = 0;
                        break;
                    }
                    Err(Gather::NotReady) => {
                        if q.tx_owed != 0 {
                            // The driver rings after writing the
                            // descriptors, so a count with nothing VLD
                            // behind it is for frames already taken
                            // without it (TX_STABLE): drop it.
                            trace.note(&format!(
                                "tqp {n} tx: {} BDs announced, none VLD at head {}",
                                q.tx_owed, q.tx_head
                            ));
                            q.tx_owed = 0;
                        }
                        break;
                    }
                };
                let (bytes, bds) = frame;
                if q.tx_owed == 0 {
                    // Complete and VLD, but no doorbell counted it: take it
                    // once it has stayed so for TX_STABLE.
                    match q.tx_unannounced {
                        Some((h, since)) if h == q.tx_head => {
                            if now.duration_since(since) < TX_STABLE {
                                break;
                            }
                            self.stats.tx_found += 1;
                        }
                        _ => {
                            q.tx_unannounced = Some((q.tx_head, now));
                            break;
                        }
                    }
                }
                q.tx_unannounced = None;
                if release(mem, tx, q.tx_head, bds).is_err() {
                    self.stats.bad_dma += 1;
                    break;
                }
                q.tx_head = (q.tx_head + bds) % tx.num;
                q.tx_owed = q.tx_owed.saturating_sub(bds);
                self.stats.tx_frames += 1;
                self.stats.tx_bds += bds as u64;
                sent = true;
                trace.note(&format!(
                    "tqp {n} tx: {} bytes in {bds} BDs, head {}",
                    bytes.len(),
                    q.tx_head
                ));
                frames.push((n, bytes));
            }
            bar.write32(base + reg::TX_HEAD, q.tx_head);
            bar.write32(base + reg::TX_FBDNUM, q.tx_owed);
            if sent {
                done.push(n);
            }
        }
        (frames, done)
    }

    /// Places `frame` in queue `n`'s RX ring; returns whether it was
    /// placed. A frame finding too few free descriptors, or the ring
    /// disabled, is dropped and counted.
    pub fn receive<M: Dma>(
        &mut self,
        bar: &Bar,
        mem: &M,
        n: u16,
        frame: &[u8],
        trace: &mut Trace,
    ) -> bool {
        let Some(q) = self.queues.get_mut(n as usize) else {
            self.stats.rx_down += 1;
            return false;
        };
        let Some((_, rx)) = q.live else {
            self.stats.rx_down += 1;
            return false;
        };
        let base = tqp_base(n);
        q.take_refills(bar, base, rx);
        let size = buf_size(bar.read32(base + reg::RX_BD_LEN));
        let need = frame.len().div_ceil(size).max(1);
        if frame.is_empty() || need > q.rx_free as usize {
            self.stats.rx_no_buf += 1;
            trace.note(&format!(
                "tqp {n} rx: {} bytes dropped, {} BDs free",
                frame.len(),
                q.rx_free
            ));
            bar.write32(base + reg::RX_FBDNUM, q.rx_free);
            return false;
        }
        let info = l234_info(frame);
        for (i, chunk) in frame.chunks(size).enumerate() {
            let at = rx.base + ((q.rx_tail as usize + i) % rx.num as usize * desc::SIZE) as u64;
            let last = i + 1 == need;
            if fill(mem, at, chunk, last.then_some((frame.len(), info))).is_err() {
                self.stats.bad_dma += 1;
                trace.note(&format!(
                    "tqp {n} rx: descriptor or buffer outside guest RAM"
                ));
                return false;
            }
        }
        // CAST: need <= rx_free, a u32.
        let need = need as u32;
        q.rx_tail = (q.rx_tail + need) % rx.num;
        q.rx_free -= need;
        bar.write32(base + reg::RX_TAIL, q.rx_tail);
        bar.write32(base + reg::RX_FBDNUM, q.rx_free);
        self.stats.rx_frames += 1;
        trace.note(&format!(
            "tqp {n} rx: {} bytes in {need} BDs, tail {}",
            frame.len(),
            q.rx_tail
        ));
        true
    }

    /// The first enabled queue (where the switch delivers: RSS is not
    /// modelled).
    pub fn rx_queue(&self) -> Option<u16> {
        // CAST: the position of a queue, below tqp_num, a u16.
        self.queues
            .iter()
            .position(|q| q.live.is_some())
            .map(|n| n as u16)
    }

    /// The vectors an event on queue `n`'s ring `int_type` (0 TX, 1 RX)
    /// raises, from the ADD_RING_TO_VECTOR map, marked pending.
    pub fn event(&mut self, fw: &NicFw, int_type: u8, n: u16) {
        for (v, rings) in &fw.vectors {
            if rings
                .iter()
                .any(|r| r.int_type == int_type && r.tqp == n && r.vfid == 0)
            {
                self.pending.insert(*v);
            }
        }
    }

    /// Marks MSI-X vector `v` pending (a VF's ring event: its map is
    /// the PF's, [`super::vf::VfPf::vectors_of`]).
    pub fn mark(&mut self, v: u16) {
        self.pending.insert(v);
    }

    /// Raises every pending vector whose control register lets it fire,
    /// masking it as the hardware does (hns3's handler schedules NAPI and
    /// the poll writes 1 when done, `hns3_mask_vector_irq`); a masked
    /// vector stays pending until the driver writes 1.
    pub fn raise_pending(&mut self, bar: &Bar, raise: &mut dyn FnMut(u16)) {
        self.pending.retain(|&v| {
            let Some(ctrl) = vector_ctrl(v) else {
                return false;
            };
            if bar.read32(ctrl) & 1 == 0 {
                return true;
            }
            bar.write32(ctrl, 0);
            raise(v);
            false
        });
    }
}

/// Why [`gather`] returned no frame.
enum Gather {
    /// No complete frame at the head (a descriptor before FE lacks VLD).
    NotReady,
    /// A descriptor or buffer outside guest RAM, or a frame longer
    /// than [`TX_MAX_FRAME`].
    BadDma,
}

/// The frame at `head` of the TX ring: its bytes and descriptor count, if
/// every descriptor up to the one with FE has VLD.
fn gather<M: Dma>(mem: &M, tx: RingCfg, head: u32) -> Result<(Vec<u8>, u32), Gather> {
    let mut bytes = vec![];
    for i in 0..tx.num {
        let at = tx.base + ((head + i) % tx.num) as u64 * desc::SIZE as u64;
        let mut d = [0u8; desc::SIZE];
        mem.read(at, &mut d).map_err(|_| Gather::BadDma)?;
        let bits = le16(&d, desc::TX_BDTP) as u32;
        if bits & (1 << TXD_VLD_B) == 0 {
            return Err(Gather::NotReady);
        }
        let addr = u64::from_le_bytes(d[desc::ADDR..desc::ADDR + 8].try_into().unwrap_or([0; 8]));
        let len = le16(&d, desc::TX_SEND_SIZE) as usize;
        let start = bytes.len();
        if start + len > TX_MAX_FRAME {
            return Err(Gather::BadDma);
        }
        bytes.resize(start + len, 0);
        mem.read(addr, &mut bytes[start..])
            .map_err(|_| Gather::BadDma)?;
        if bits & (1 << TXD_FE_B) != 0 {
            return Ok((bytes, i + 1));
        }
    }
    // VLD everywhere and no FE: not a frame the driver finished.
    Err(Gather::NotReady)
}

/// Clears VLD in the `n` descriptors from `head`: they are the driver's
/// again (`hns3_nic_reclaim_desc` frees up to the first with VLD).
fn release<M: Dma>(mem: &M, tx: RingCfg, head: u32, n: u32) -> Result<(), crate::mem::BadDma> {
    for i in 0..n {
        let at = tx.base + ((head + i) % tx.num) as u64 * desc::SIZE as u64 + desc::TX_BDTP as u64;
        let mut b = [0u8; 2];
        mem.read(at, &mut b)?;
        let bits = u16::from_le_bytes(b) & !(1 << TXD_VLD_B);
        mem.write(at, &bits.to_le_bytes())?;
    }
    Ok(())
}

/// Writes `chunk` into the buffer of the RX descriptor at `at` and the
/// descriptor's words; `last` carries the frame's length and `l234_info`
/// for its last descriptor (FE). `bd_base_info` is written last, so VLD
/// appears after everything it covers.
fn fill<M: Dma>(
    mem: &M,
    at: u64,
    chunk: &[u8],
    last: Option<(usize, u32)>,
) -> Result<(), crate::mem::BadDma> {
    let addr = mem.read_u64(at + desc::ADDR as u64)?;
    mem.write(addr, chunk)?;
    // rx.l234_info .. rx.ol_info: bytes 8..28 of the descriptor.
    let mut words = [0u8; 20];
    let (pkt_len, info) = last.unwrap_or((0, 0));
    words[0..4].copy_from_slice(&info.to_le_bytes());
    // CAST: frames are at most a few KiB (HNS3_MAX_NON_TSO_SIZE 9728).
    words[4..6].copy_from_slice(&(pkt_len as u16).to_le_bytes());
    // CAST: a chunk is at most one buffer, 4096 bytes.
    words[6..8].copy_from_slice(&(chunk.len() as u16).to_le_bytes());
    mem.write(at + desc::RX_L234_INFO as u64, &words)?;
    let mut base_info = 1u32 << RXD_VLD_B;
    if last.is_some() {
        base_info |= 1 << RXD_FE_B;
    }
    std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
    mem.write(at + desc::RX_BD_BASE_INFO as u64, &base_info.to_le_bytes())
}

/// Whether function `fw` owns unicast address `mac`: the port's address
/// (GET_CFG_PARAM) or a unicast entry of its MAC_VLAN table (key bytes
/// 2..8 are the address, `hclge_prepare_mac_addr`).
pub fn owns(fw: &NicFw, mac: &[u8]) -> bool {
    fw.cfg.mac[..] == *mac || fw.mac_vlan.keys().any(|k| k[2..8] == *mac)
}

/// The functions a frame sent by function `from` reaches: itself only
/// while a loopback mode is on (COMMON_LOOPBACK: the frame turns round
/// before the wire); else every other function for a broadcast or
/// multicast destination, and the functions owning a unicast one (none:
/// dropped, there is no uplink).
pub fn destinations(fws: &[Option<&NicFw>], from: usize, frame: &[u8]) -> Vec<usize> {
    if fws
        .get(from)
        .copied()
        .flatten()
        .is_some_and(|f| f.loopback != 0)
    {
        return vec![from];
    }
    let Some(dst) = frame.get(0..6) else {
        return vec![];
    };
    (0..fws.len())
        .filter(|&i| i != from)
        .filter(|&i| fws[i].is_some_and(|f| f.loopback == 0 && (dst[0] & 1 != 0 || owns(f, dst))))
        .collect()
}
