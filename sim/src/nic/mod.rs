// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The NIC side of a function: the firmware command queue hclge drives
//! (its send queue, CSQ, at BAR2 0x27000), so that the unmodified
//! `hclge.ko` can probe on hns-sim. The descriptors are the RoCE command
//! queue's 32-byte format ([`crate::cmq::Desc`]); the ring follows the
//! same CI/PI rules as the RoCE ring ([`crate::device::ring_state`],
//! [`crate::device::new_ring_ready`]), with hclge's names: the driver
//! moves the tail, the firmware the head. The commands' answers are in
//! [`fw`]. The queue pairs hns3 sends and receives on, and the switch
//! between the functions, are in [`tqp`]; the PF a VF function's
//! `hclgevf.ko` asks through the mailbox, in [`vf`]. Off unless hns-sim
//! runs with `--set nic=hclge` ([`Mode`]).

pub mod fw;
pub mod op;
#[cfg(test)]
mod tests;
pub mod tqp;
#[cfg(test)]
mod tqp_tests;
pub mod vf;
#[cfg(test)]
mod vf_tests;

use crate::cmq::{Desc, DESC_SIZE};
use crate::device::{new_ring_ready, ring_state, RingState};
use crate::mem::{Bar, Dma};
use crate::trace::Trace;

/// The command queue registers in BAR2 (`HCLGE_COMM_NIC_*_REG`,
/// `HCLGE_COMM_VECTOR0_CMDQ_*`, `HCLGE_COMM_CMDQ_INTR_*`).
pub mod reg {
    /// CSQ base address, low word.
    pub const CSQ_BASEADDR_L: u64 = 0x27000;
    /// CSQ base address, high word.
    pub const CSQ_BASEADDR_H: u64 = 0x27004;
    /// CSQ depth in units of 8 descriptors, and [`super::SW_RST_RDY`].
    pub const CSQ_DEPTH: u64 = 0x27008;
    /// CSQ tail: the driver's producer index.
    pub const CSQ_TAIL: u64 = 0x27010;
    /// CSQ head: the firmware's consumer index.
    pub const CSQ_HEAD: u64 = 0x27014;
    /// CRQ base address, low word (the receive queue: messages from the
    /// firmware to the driver; the model writes it for a VF only, see
    /// [`super::vf`]).
    pub const CRQ_BASEADDR_L: u64 = 0x27018;
    /// CRQ base address, high word.
    pub const CRQ_BASEADDR_H: u64 = 0x2701c;
    /// CRQ depth in units of 8 descriptors.
    pub const CRQ_DEPTH: u64 = 0x27020;
    /// CRQ tail.
    pub const CRQ_TAIL: u64 = 0x27024;
    /// CRQ head.
    pub const CRQ_HEAD: u64 = 0x27028;
    /// Vector 0's command queue event source (read/write).
    pub const VECTOR0_CMDQ_SRC: u64 = 0x27100;
    /// Vector 0's command queue event status (read only); also
    /// `HCLGE_COMM_CMDQ_INTR_STS_REG`.
    pub const VECTOR0_CMDQ_STATE: u64 = 0x27104;
    /// Command queue interrupt enable.
    pub const CMDQ_INTR_EN: u64 = 0x27108;
    /// Command queue interrupt generation.
    pub const CMDQ_INTR_GEN: u64 = 0x2710c;
    /// The first register of the command queue's range.
    pub const FIRST: u64 = CSQ_BASEADDR_L;
    /// One past the last register of the range.
    pub const END: u64 = CMDQ_INTR_GEN + 4;
}

/// hclge's reset status registers (`hclge_main.h`) the model keeps.
pub mod rst {
    /// Function reset in progress: bit 0 (`HCLGE_FUN_RST_ING`,
    /// `HCLGE_FUN_RST_ING_B`), set from a function reset's CFG_RST_TRIGGER
    /// until the model has carried the reset out ([`super::FuncReset`]).
    pub const FUN_RST_ING: u64 = 0x20c00;
    /// The function-reset bit of [`FUN_RST_ING`]; the same register and
    /// bit on a VF (`HCLGEVF_RST_ING`, `HCLGEVF_FUN_RST_ING_BIT`), where
    /// the PF's reset sets it ([`super::vf::PfReset`]).
    pub const FUN_RST_ING_BIT: u32 = 1;
}

/// Where the function reset hclge asked for (CFG_RST_TRIGGER with the
/// function bit, for the PF itself) stands. hclge asks, then tells the
/// hardware it is ready (SW_RST_RDY, `hclge_reset_handshake`), then waits
/// for [`rst::FUN_RST_ING`] to clear (`hclge_reset_wait`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FuncReset {
    /// No reset asked for.
    #[default]
    Idle,
    /// Asked for: FUN_RST_ING is set, the model waits for SW_RST_RDY.
    Asserted,
    /// SW_RST_RDY seen: the reset is carried out at this instant (the
    /// hold, [`NicCmq::reset_hold`], after the handshake).
    Running(std::time::Instant),
}

/// Bit of the CSQ depth register the driver sets when it is ready for a
/// hardware reset (`HCLGE_COMM_NIC_SW_RST_RDY`); hclge keeps it when it
/// programs the depth, so the model reads the depth from the other bits
/// and never writes the register.
pub const SW_RST_RDY: u32 = 1 << 16;
/// The depth field counts descriptors in units of 1 << this
/// (`HCLGE_COMM_NIC_CMQ_DESC_NUM_S`).
pub const DESC_NUM_SHIFT: u32 = 3;

/// The descriptor flag hclge sets on every command: answer without an
/// interrupt, the driver polls the head (`HCLGE_COMM_CMD_FLAG_NO_INTR`).
/// The other flags are [`crate::cmq::flag`]'s.
pub const FLAG_NO_INTR: u16 = 1 << 4;

/// Whether a device models the NIC command queue (`--set nic=...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Not modelled: BAR2 0x27000.. is plain memory, as it always was.
    #[default]
    Off,
    /// hclge's command queue, answered by [`fw::NicFw`].
    Hclge,
}

impl Mode {
    /// The value of `--set nic=VALUE`.
    pub fn parse(v: &str) -> Result<Self, String> {
        match v {
            "off" | "none" => Ok(Mode::Off),
            "hclge" => Ok(Mode::Hclge),
            _ => Err(format!("nic: unknown value '{v}' (hclge or off)")),
        }
    }
}

/// The NIC command queue of one function: the ring as the driver last
/// programmed it and the firmware behind it.
pub struct NicCmq {
    /// The firmware answering the commands.
    pub fw: fw::NicFw,
    /// The PF behind the function when it is a VF ([`mark_vfs`]): it
    /// answers the VF-only commands and the mailbox, through the CRQ.
    pub vf: Option<vf::VfPf>,
    /// The function's queue pairs (`tqp_num` of them).
    pub tqps: tqp::Tqps,
    /// Where the commands are written, `>` as received and `<` as answered.
    pub trace: Trace,
    /// The ring's base address and depth in descriptors, as last read.
    ring: Option<(u64, u32)>,
    /// The ring changed and the driver has not yet been seen writing its
    /// head and tail for it (see [`new_ring_ready`]).
    fresh: bool,
    /// The head the model wrote last (see [`ring_state`]).
    last_head: Option<u32>,
    /// What the model wrote back into each slot of the ring, so that a
    /// slot still holding an answered command is told from a new one:
    /// hclge re-initialises the queue on the same memory after a reset
    /// without clearing it.
    answered: std::collections::HashMap<u32, [u8; DESC_SIZE]>,
    /// The function reset under way, if any.
    pub reset: FuncReset,
    /// How long the function reset runs after the driver's SW_RST_RDY
    /// (`--set nic_reset_ms=N`; 0 by default: at the next pass).
    pub reset_hold: std::time::Duration,
    /// Function resets carried out and not yet taken by
    /// [`NicCmq::take_reset_done`] (the device loop then clears the RoCE
    /// engine's state too).
    reset_done: u32,
    /// SW_RST_RDY as the last [`NicCmq::step_reset`] saw it.
    last_rdy: bool,
    /// A PF's VFs: the functions (indices in the device list) whose PF
    /// this one is ([`mark_vfs`]), which its reset reaches ([`sync_vfs`]).
    pub vfs: Vec<usize>,
    /// The function was reset since [`sync_vfs`] last looked (its VFs told
    /// of the reset are then reset as well).
    reset_for_vfs: bool,
}

/// What [`NicCmq::poll`] read of the ring registers: base address and
/// depth in descriptors (0 for none).
pub fn read_ring(bar: &Bar) -> (u64, u32) {
    let base =
        (bar.read32(reg::CSQ_BASEADDR_H) as u64) << 32 | bar.read32(reg::CSQ_BASEADDR_L) as u64;
    let units = bar.read32(reg::CSQ_DEPTH) & (SW_RST_RDY - 1);
    (base, units << DESC_NUM_SHIFT)
}

impl NicCmq {
    /// Marks the vectors of queue `n`'s ring `int_type` (0 TX, 1 RX)
    /// pending: a PF's from its ADD_RING_TO_VECTOR map, a VF's from the
    /// map it asked its PF for (MAP_RING_TO_VECTOR).
    fn ring_event(&mut self, int_type: u8, n: u16) {
        self.tqps.event(&self.fw, int_type, n);
        if let Some(v) = &self.vf {
            for vec in v.vectors_of(int_type, n) {
                self.tqps.mark(vec);
            }
        }
    }

    /// A command queue with firmware `fw`, tracing to `trace`.
    pub fn new(fw: fw::NicFw, trace: Trace) -> Self {
        NicCmq {
            tqps: tqp::Tqps::new(fw.cfg.tqp_num),
            fw,
            vf: None,
            trace,
            ring: None,
            fresh: false,
            last_head: None,
            answered: std::collections::HashMap::new(),
            reset: FuncReset::Idle,
            reset_hold: std::time::Duration::ZERO,
            reset_done: 0,
            last_rdy: false,
            vfs: Vec::new(),
            reset_for_vfs: false,
        }
    }

    /// Moves the function reset on (called before each [`NicCmq::poll`]):
    /// a reset asked for waits for the driver's SW_RST_RDY, then runs for
    /// [`NicCmq::reset_hold`], then is carried out as a function reset
    /// clears the function: the command queue registers (base, depth,
    /// head, tail of both queues; SW_RST_RDY, the driver's, stays), so
    /// that the queue is idle until hclge programs it again
    /// (`hclge_comm_cmd_init` after the reset), the firmware's tables
    /// hclge restores after a reset (MAC_VLAN entries, ring-to-vector
    /// map, loopback), and FUN_RST_ING. Returns whether anything changed.
    ///
    /// SW_RST_RDY set with no reset asked for is hclge's FLR path
    /// (`hclge_reset_prepare_general` with HNAE3_FLR_RESET: the handshake,
    /// then the PCI core resets the function and hclge rebuilds without
    /// waiting on FUN_RST_ING): the model resets the function at once.
    pub fn step_reset(&mut self, bar: &Bar, now: std::time::Instant) -> bool {
        let rdy = bar.read32(reg::CSQ_DEPTH) & SW_RST_RDY != 0;
        let rising = rdy && !self.last_rdy;
        self.last_rdy = rdy;
        match self.reset {
            FuncReset::Idle if rising && self.vf.is_none() => {
                self.trace
                    .note("nic FLR: SW_RST_RDY with no reset asked for, the function is reset");
                self.carry_out_reset(bar);
                true
            }
            FuncReset::Idle => false,
            FuncReset::Asserted => {
                if !rdy {
                    return false;
                }
                self.reset = FuncReset::Running(now + self.reset_hold);
                self.trace
                    .note("nic function reset: SW_RST_RDY, the reset runs");
                true
            }
            FuncReset::Running(at) if now < at => false,
            FuncReset::Running(_) => {
                self.carry_out_reset(bar);
                true
            }
        }
    }

    /// The function reset itself (see [`NicCmq::step_reset`]).
    fn carry_out_reset(&mut self, bar: &Bar) {
        self.clear_function(bar);
        self.reset = FuncReset::Idle;
        self.reset_for_vfs = true;
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        bar.write32(rst::FUN_RST_ING, 0);
        self.trace
            .note("nic function reset: done, FUN_RST_ING clear");
        self.trace.flush();
    }

    /// What a function reset clears: the command queue registers (SW_RST_RDY
    /// kept), the model's view of the ring, the firmware tables the driver
    /// restores; the RoCE engine's state is the device loop's
    /// ([`NicCmq::take_reset_done`]).
    fn clear_function(&mut self, bar: &Bar) {
        for r in [
            reg::CSQ_BASEADDR_L,
            reg::CSQ_BASEADDR_H,
            reg::CSQ_TAIL,
            reg::CSQ_HEAD,
            reg::CRQ_BASEADDR_L,
            reg::CRQ_BASEADDR_H,
            reg::CRQ_DEPTH,
            reg::CRQ_TAIL,
            reg::CRQ_HEAD,
        ] {
            bar.write32(r, 0);
        }
        bar.write32(reg::CSQ_DEPTH, bar.read32(reg::CSQ_DEPTH) & SW_RST_RDY);
        self.ring = None;
        self.fresh = false;
        self.last_head = None;
        self.answered.clear();
        self.fw.mac_vlan.clear();
        self.fw.vectors.clear();
        self.fw.loopback = 0;
        self.reset_done += 1;
    }

    /// A VF's function reset by its PF's reset ([`sync_vfs`]): as the PF's
    /// own (registers, tables, the RoCE state through the device loop) and
    /// the mailbox state its PF kept for it; FUN_RST_ING stays set until
    /// the PF is up again.
    fn reset_by_pf(&mut self, bar: &Bar) {
        self.clear_function(bar);
        if let Some(v) = &mut self.vf {
            v.reset_by_pf();
        }
        self.trace
            .note("nic PF reset: the function is reset with its PF, its RoCE state is cleared");
        self.trace.flush();
    }

    /// Whether a function reset was carried out since the last call.
    pub fn take_reset_done(&mut self) -> bool {
        let done = self.reset_done > 0;
        self.reset_done = 0;
        done
    }

    /// Moves the head (the model's side of the ring).
    fn write_head(&mut self, bar: &Bar, v: u32) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        bar.write32(reg::CSQ_HEAD, v);
        self.last_head = Some(v);
    }

    /// Whether the slot `idx` of the ring at `base` holds a command the
    /// driver posted and the model has not answered: not zero (a ring the
    /// driver just allocated is zeroed) and not what the model wrote back
    /// there.
    fn slot_posted<M: Dma>(&self, mem: &M, base: u64, idx: u32) -> bool {
        let mut raw = [0u8; DESC_SIZE];
        mem.read(base + idx as u64 * DESC_SIZE as u64, &mut raw)
            .is_ok()
            && raw.iter().any(|&b| b != 0)
            && self.answered.get(&idx) != Some(&raw)
    }

    /// Answers every command between head and tail; returns whether there
    /// was any work. A ring without address or depth (before
    /// `hclge_comm_cmd_init`, after `hclge_comm_cmd_uninit`) is idle.
    pub fn poll<M: Dma>(&mut self, bar: &Bar, mem: &M) -> bool {
        let (base, depth) = read_ring(bar);
        if base == 0 || depth == 0 {
            self.ring = None;
            return false;
        }
        if self.ring != Some((base, depth)) {
            self.ring = Some((base, depth));
            self.fresh = true;
            self.answered.clear();
        }
        let tail = bar.read32(reg::CSQ_TAIL);
        let mut head = bar.read32(reg::CSQ_HEAD);
        if self.fresh {
            // Posted: the first command's first descriptor, at the head,
            // is written (the descriptors after a statistics command's
            // first are zeroed payload, so the slot before the tail
            // cannot tell).
            let posted = tail != 0 && head < depth && self.slot_posted(mem, base, head);
            if !new_ring_ready(head, tail, posted) || bar.read32(reg::CSQ_TAIL) != tail {
                return false;
            }
            self.fresh = false;
            self.last_head = Some(head);
        }
        let mut state = ring_state(self.last_head, head, tail);
        if state == RingState::MidInit && head < depth && self.slot_posted(mem, base, head) {
            // The driver re-initialised the ring and its first command
            // landed on the old head value.
            state = RingState::Reinit;
        }
        match state {
            RingState::MidInit => return false,
            RingState::Reinit => self.last_head = Some(head),
            RingState::Steady => {}
        }
        if head == tail {
            return false;
        }
        if head >= depth || tail >= depth {
            self.trace.note(&format!(
                "NIC CMQ index out of range: tail {tail} head {head} depth {depth}"
            ));
            self.write_head(bar, tail.min(depth - 1));
            return true;
        }
        while head != tail {
            // One command: descriptors chained by NEXT, ending at the tail;
            // a special opcode's command is everything up to the tail (one
            // hclge_comm_cmd_send: the driver moves the tail once per call
            // and waits for the head before the next).
            let mut chain = Vec::new();
            let mut idx = head;
            let mut special = false;
            loop {
                let mut raw = [0u8; DESC_SIZE];
                let at = base + idx as u64 * DESC_SIZE as u64;
                if mem.read(at, &mut raw).is_err() {
                    self.trace
                        .note(&format!("NIC CMQ ring at {base:#x} is outside guest RAM"));
                    self.write_head(bar, tail);
                    return true;
                }
                let d = Desc::from_bytes(&raw);
                if chain.is_empty() {
                    special = op::is_special(d.opcode);
                }
                chain.push((idx, d));
                idx = (idx + 1) % depth;
                if (!special && !d.has_next()) || idx == tail {
                    break;
                }
            }
            let mut descs: Vec<Desc> = chain.iter().map(|c| c.1).collect();
            for (i, d) in descs.iter().enumerate() {
                self.trace_desc('>', d, i);
            }
            match &mut self.vf {
                Some(v) => v.execute(&mut self.fw, &mut descs, &mut self.trace),
                None => self.fw.execute(&mut descs),
            }
            if std::mem::take(&mut self.fw.reset_asked) && self.vf.is_none() {
                // The hardware flags the reset before it answers.
                bar.write32(rst::FUN_RST_ING, 1);
                if self.reset == FuncReset::Idle {
                    self.reset = FuncReset::Asserted;
                }
                self.trace
                    .note("nic function reset: asked for, FUN_RST_ING set");
            }
            for (i, d) in descs.iter().enumerate() {
                self.trace_desc('<', d, i);
            }
            for ((i, _), d) in chain.iter().zip(&descs) {
                let raw = d.to_bytes();
                let _ = mem.write(base + *i as u64 * DESC_SIZE as u64, &raw);
                self.answered.insert(*i, raw);
            }
            head = idx;
        }
        self.write_head(bar, head);
        self.trace.flush();
        true
    }

    /// One descriptor in the trace, named by [`op::name`].
    fn trace_desc(&mut self, dir: char, d: &Desc, index: usize) {
        let data: Vec<String> = d.data.iter().map(|w| format!("{w:08x}")).collect();
        let rv = if dir == '<' {
            format!(" ret={}", d.retval)
        } else {
            String::new()
        };
        self.trace.note(&format!(
            "nic cmq {dir} op={:04x} {} #{index} flag={:04x}{rv} data={}",
            d.opcode,
            op::name(d.opcode),
            d.flag,
            data.join(" ")
        ));
    }
}

/// The NIC's MSI-X vectors when `--set roce_base_vector` does not say:
/// vector 0 for hclge's misc events and one per queue pair of
/// [`fw::NicCfg::default`]'s `tqp_num`.
pub const NIC_VECTORS: u16 = 5;

/// The fewest vectors hclge accepts for the NIC (`HNAE3_MIN_VECTOR_NUM`:
/// misc and one queue vector).
pub const MIN_NIC_VECTORS: u16 = 2;

/// The RoCE base vector of a device with hclge on its NIC side, from the
/// `roce_base_vector` it was given (0: not given). hclge hands RoCE the
/// vectors after the NIC's (`hclge_init_roce_base_info`), so this one
/// value is also the NIC vector count QUERY_PF_RSRC answers.
pub fn roce_base_vector(given: u8) -> Result<u8, String> {
    match given {
        // CAST: NIC_VECTORS is a small constant.
        0 => Ok(NIC_VECTORS as u8),
        v if u16::from(v) < MIN_NIC_VECTORS => Err(format!(
            "nic=hclge: roce_base_vector {v} leaves fewer than {MIN_NIC_VECTORS} NIC vectors"
        )),
        v => Ok(v),
    }
}

/// The NIC command queues for `mode` of the devices whose RoCE engines
/// start at MSI-X vector `vectors[i].0` (the NIC's vectors are the ones
/// before it) and use `vectors[i].1` vectors, as QUERY_PF_RSRC reports
/// them: none when off, so a boot without `--set nic=hclge` reads and
/// writes nothing in BAR2 0x27000.. and writes no NIC trace. Device i
/// traces to `OUT/nic-trace-i.txt` and has the port address
/// 00:18:2d:00:00:(i + 1), so that the switch ([`tqp::destinations`])
/// tells the functions apart.
pub fn attach(
    mode: Mode,
    out: &str,
    vectors: &[(u16, u16)],
) -> Result<Vec<Option<NicCmq>>, String> {
    vectors
        .iter()
        .enumerate()
        .map(|(i, &(base, roce))| match mode {
            Mode::Off => Ok(None),
            Mode::Hclge => {
                let trace = Trace::to_file(&format!("{out}/nic-trace-{i}.txt"), "")
                    .map_err(|e| format!("NIC trace: {e}"))?;
                let mut cfg = fw::NicCfg {
                    nic_vectors: base,
                    roce_vectors: roce,
                    ..fw::NicCfg::default()
                };
                // CAST: hns-sim serves a handful of functions, far below 255.
                cfg.mac[5] = (i as u8).wrapping_add(1);
                Ok(Some(NicCmq::new(fw::NicFw::new(cfg), trace)))
            }
        })
        .collect()
}

/// Makes the command queue of every function `vfs` marks a VF's: the
/// model then plays the PF for it ([`vf::VfPf`]), with the function's
/// queue count, vectors (QUERY_VF_RSRC: the RoCE vectors start at the
/// function's RoCE base, and hclgevf takes as many NIC vectors as RoCE
/// ones) and address (the PF-given VF address, which differs from a
/// PF's in byte 4, and which the switch delivers to). Functions not marked, or without a NIC model, are
/// left as they are.
pub fn mark_vfs(nics: &mut [Option<NicCmq>], vfs: &[bool]) {
    let pf = vfs.iter().position(|&v| !v);
    let of_pf: Vec<usize> = (0..nics.len().min(vfs.len())).filter(|&i| vfs[i]).collect();
    if let Some(Some(q)) = pf.and_then(|p| nics.get_mut(p)) {
        q.vfs = of_pf;
    }
    for (q, &is_vf) in nics.iter_mut().zip(vfs) {
        let Some(q) = q else { continue };
        if !is_vf {
            continue;
        }
        // The VF's address, which is also the port address the switch
        // delivers to (a VF sends no GET_CFG_PARAM and no MAC_VLAN_ADD).
        q.fw.cfg.mac[4] = 1;
        let c = &q.fw.cfg;
        let mac = c.mac;
        q.vf = Some(vf::VfPf::new(vf::VfCfg {
            tqp_num: c.tqp_num,
            rss_size: u16::from(c.rss_size_max).min(c.tqp_num),
            rx_buf_len: c.rx_buf_len,
            num_tx_desc: c.tqp_desc_num,
            num_rx_desc: c.tqp_desc_num,
            media_type: c.media_type,
            mac,
            link_up: c.link_up,
            speed: c.speed,
            roce_base: c.nic_vectors,
            vectors: c.roce_vectors,
            ..vf::VfCfg::default()
        }));
    }
}

/// What a PF's reset does to its VFs (`bars[i]` is device i's BAR2), as
/// hclge and the IMP do it on hardware. hclge in the guest counts no VF
/// (`pci_sriov_get_totalvfs` of a function without SR-IOV: 0), so it sends
/// neither GBL_RST_STATUS nor ASSERTING_RESET for them; the model does
/// their part at the points of hclge's reset it sees:
///
/// - `before` (ahead of the pass's commands): QUERY_VF_RST_RDY's
///   `all_vf_ready` is whether every VF is [`vf::VfPf::ready_for_pf_reset`];
/// - after the pass: a QUERY_VF_RST_RDY that came (`hclge_func_reset_sync_vf`,
///   the first sign of the reset) tells every live VF not yet told
///   ([`vf::VfPf::assert_pf_reset`], as `hclge_set_all_vf_rst` with
///   `reset` before it); the PF's reset carried out resets every VF told
///   of it; the PF's SW_RST_RDY cleared (`hclge_reset_prepare_up`) ends the
///   reset for the VFs it reset ([`vf::VfPf::release_pf_reset`]).
///
/// Returns whether a VF's state changed.
pub fn sync_vfs<B: std::borrow::Borrow<Bar>>(
    nics: &mut [Option<NicCmq>],
    bars: &[B],
    before: bool,
) -> bool {
    let mut did = false;
    for p in 0..nics.len() {
        let Some(Some(pf)) = nics.get_mut(p) else {
            continue;
        };
        if pf.vfs.is_empty() {
            continue;
        }
        // Taken out for the pass (no allocation in the device loop) and
        // put back below.
        let vfs = std::mem::take(&mut pf.vfs);
        did |= sync_pf_vfs(nics, bars, p, &vfs, before);
        if let Some(Some(pf)) = nics.get_mut(p) {
            pf.vfs = vfs;
        }
    }
    did
}

/// [`sync_vfs`] for the PF `p` and its VFs `vfs`.
fn sync_pf_vfs<B: std::borrow::Borrow<Bar>>(
    nics: &mut [Option<NicCmq>],
    bars: &[B],
    p: usize,
    vfs: &[usize],
    before: bool,
) -> bool {
    if before {
        let ready = vfs.iter().all(|&i| match (nics.get(i), bars.get(i)) {
            (Some(Some(q)), Some(b)) => {
                q.vf.as_ref()
                    .is_none_or(|v| v.ready_for_pf_reset(b.borrow()))
            }
            _ => true,
        });
        if let Some(Some(pf)) = nics.get_mut(p) {
            pf.fw.vfs_ready = ready;
        }
        return false;
    }
    let (asked, reset, pf_rdy, msgs, rsts) = match (nics.get_mut(p), bars.get(p)) {
        (Some(Some(pf)), Some(b)) => (
            std::mem::take(&mut pf.fw.vf_sync_asked),
            std::mem::take(&mut pf.reset_for_vfs),
            b.borrow().read32(reg::CSQ_DEPTH) & SW_RST_RDY != 0,
            std::mem::take(&mut pf.fw.to_vfs),
            std::mem::take(&mut pf.fw.vf_rst),
        ),
        _ => return false,
    };
    let mut did = false;
    // What the PF's hclge sent its VFs itself, by function id (1 is the
    // first VF), as the IMP carries it.
    let dest = |id: u8| vfs.get(usize::from(id).wrapping_sub(1)).copied();
    for (id, set) in rsts {
        if let Some(i) = dest(id) {
            if let (Some(Some(q)), Some(b)) = (nics.get_mut(i), bars.get(i)) {
                if let Some(v) = &mut q.vf {
                    v.set_rst_ing(b.borrow(), set, &mut q.trace);
                    did = true;
                }
            }
        }
    }
    for m in msgs {
        let to = dest(m[0]).and_then(|i| nics.get_mut(i));
        match to {
            Some(Some(NicCmq {
                vf: Some(v), trace, ..
            })) => {
                v.from_pf(m, trace);
                did = true;
            }
            _ => {
                if let Some(Some(pf)) = nics.get_mut(p) {
                    pf.trace.note(&format!(
                        "nic MBX_PF_TO_VF for function {}: no VF presents it",
                        m[0]
                    ));
                }
            }
        }
    }
    for (n, &i) in vfs.iter().enumerate() {
        let (Some(Some(q)), Some(b)) = (nics.get_mut(i), bars.get(i)) else {
            continue;
        };
        let b = b.borrow();
        let Some(v) = &mut q.vf else { continue };
        match v.pf_reset {
            vf::PfReset::Idle if asked && v.alive => {
                // CAST: the function ids of a handful of VFs, 1-based.
                v.assert_pf_reset(b, (n + 1) as u8, &mut q.trace);
            }
            vf::PfReset::Informed if reset => q.reset_by_pf(b),
            vf::PfReset::Reset if !pf_rdy => v.release_pf_reset(b, &mut q.trace),
            _ => continue,
        }
        did = true;
    }
    did
}

/// One pass over every device's NIC command queue and queue pairs
/// (`bars[i]` is device i's BAR2): answers the commands, sends what the TX
/// rings hold across the switch into the RX rings, then raises the
/// vectors of the rings that completed or received (`raise(i, v)`: MSI-X
/// vector v of device i). Returns whether any had work.
pub fn poll_all<M: Dma, B: std::borrow::Borrow<Bar>>(
    nics: &mut [Option<NicCmq>],
    bars: &[B],
    mem: &M,
    now: std::time::Instant,
    raise: &mut dyn FnMut(usize, u16),
) -> bool {
    let mut did = false;
    let mut sent = vec![];
    sync_vfs(nics, bars, true);
    for (i, (q, bar)) in nics.iter_mut().zip(bars).enumerate() {
        let bar = bar.borrow();
        if let Some(q) = q {
            did |= q.step_reset(bar, now);
            did |= q.poll(bar, mem);
            if q.vf.as_mut().is_some_and(|v| v.take_reset()) {
                q.reset_done += 1;
                q.trace
                    .note("nic VF reset: the PF resets the function, its RoCE state is cleared");
            }
            if let Some(v) = &mut q.vf {
                if v.poll_crq(bar, mem, &mut q.trace) {
                    // The VF's misc vector: hclgevf reads the CRQ there.
                    raise(i, 0);
                    did = true;
                }
            }
            let (frames, done) = q.tqps.poll_tx(bar, mem, now, &mut q.trace);
            for n in done {
                q.ring_event(0, n);
            }
            did |= !frames.is_empty();
            sent.extend(frames.into_iter().map(|(_, f)| (i, f)));
        }
    }
    did |= sync_vfs(nics, bars, false);
    for (from, frame) in sent {
        let fws: Vec<Option<&fw::NicFw>> = nics.iter().map(|q| q.as_ref().map(|q| &q.fw)).collect();
        let to = tqp::destinations(&fws, from, &frame);
        for d in to {
            let (Some(Some(q)), Some(bar)) = (nics.get_mut(d), bars.get(d)) else {
                continue;
            };
            let bar = bar.borrow();
            match q.tqps.rx_queue() {
                Some(n) => {
                    if q.tqps.receive(bar, mem, n, &frame, &mut q.trace) {
                        q.ring_event(1, n);
                    }
                }
                None => q.tqps.stats.rx_down += 1,
            }
        }
    }
    for (i, (q, bar)) in nics.iter_mut().zip(bars).enumerate() {
        if let Some(q) = q {
            q.tqps.raise_pending(bar.borrow(), &mut |v| raise(i, v));
            if did {
                q.trace.flush();
            }
        }
    }
    did
}

/// Flushes the NIC traces and prints each queue's command count.
pub fn finish(nics: &mut [Option<NicCmq>]) {
    for (i, q) in nics.iter_mut().enumerate() {
        if let Some(q) = q {
            q.trace.flush();
            let total: u32 = q.fw.counts.values().sum();
            eprintln!(
                "hns-sim[{i}]: NIC command queue: {total} commands, {} opcodes",
                q.fw.counts.len()
            );
            let t = q.tqps.stats;
            eprintln!(
                "hns-sim[{i}]: NIC queues: {} frames sent ({} BDs, {} found without a doorbell), {} received, {} dropped for no RX buffer, {} for a disabled ring, {} bad DMA",
                t.tx_frames, t.tx_bds, t.tx_found, t.rx_frames, t.rx_no_buf, t.rx_down, t.bad_dma
            );
        }
    }
}
