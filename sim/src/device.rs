// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! One simulated RoCE function: watches the command queue registers in
//! BAR2, hands command chains to the firmware and raises the MSI-X vectors
//! it asks for.

use crate::bond::{self, Port};
use crate::cmq::{Desc, DESC_SIZE};
use crate::engine::{Engine, Host, Request, Response, Wire};
use crate::fw::Firmware;
use crate::ivshmem::Peer;
use crate::mem::{Bar, Dma, GuestRam};

/// CSQ base address, low word.
pub const CMQ_BASEADDR_L: u64 = 0x7000;
/// CSQ base address, high word.
pub const CMQ_BASEADDR_H: u64 = 0x7004;
/// CSQ depth in units of 8 descriptors.
pub const CMQ_DEPTH: u64 = 0x7008;
/// Producer index, written by the driver.
pub const CMQ_PI: u64 = 0x7010;
/// Consumer index, written by the device.
pub const CMQ_CI: u64 = 0x7014;

/// Where the model's own words (the control channel and the identity
/// words below) sit in BAR2: the last 64 KiB page of the 16 MiB register
/// window, clear of every register a driver of the function touches. The
/// RoCE registers end below 0x14000; hclge and hns3 use 0x20000..0x80000
/// (TQP and misc vectors, NIC CMQ, GRO, PTP, the extended vectors) and
/// 0x80000.. (TQPs, 0x200 each, the extended ones interleaved at +0x100;
/// under 0x110000 for the most a function has); the direct-WQE window
/// starts at 16 MiB. `hns_sim_glue.c` restates these offsets
/// (`HNS_SIM_CTRL_*`, `HNS_SIM_IDENT_*`); a test of this file compares
/// the two.
pub const MODEL_BLOCK: u64 = 0xff_0000;

/// The control channel: the guest glue writes a NUL-terminated command of
/// at most [`CTRL_CMD_LEN`] bytes at [`CTRL_CMD`], then a new sequence
/// number at [`CTRL_SEQ`]; the model carries it out
/// ([`Firmware::control`]), writes [`CTRL_RESULT`] (0 done, 1 refused)
/// and then the sequence number to [`CTRL_ACK`].
pub const CTRL_SEQ: u64 = MODEL_BLOCK;
/// See [`CTRL_SEQ`].
pub const CTRL_ACK: u64 = MODEL_BLOCK + 0x4;
/// See [`CTRL_SEQ`].
pub const CTRL_RESULT: u64 = MODEL_BLOCK + 0x8;
/// See [`CTRL_SEQ`].
pub const CTRL_CMD: u64 = MODEL_BLOCK + 0x40;
/// See [`CTRL_SEQ`].
pub const CTRL_CMD_LEN: usize = 64;

/// The function's identity for the guest glue, beside the control
/// channel: [`IDENT_MAGIC`] (the value [`IDENT_MAGIC_VALUE`], so that a
/// glue facing an older model, which leaves the word 0, keeps its HIP09
/// default) and the PCI revision the glue relabels the function with in
/// the low byte of [`IDENT_REVISION`]; since the VF personality also the
/// PCI device ID in the low half of [`IDENT_DEVICE`] (0xa222 PF, 0xa22f
/// VF; a glue that finds 0 there, an older model's, keeps 0xa222).
/// Written once, before QEMU connects ([`write_identity`]).
pub const IDENT_MAGIC: u64 = MODEL_BLOCK + 0x10;
/// See [`IDENT_MAGIC`].
pub const IDENT_REVISION: u64 = MODEL_BLOCK + 0x14;
/// See [`IDENT_MAGIC`].
pub const IDENT_DEVICE: u64 = MODEL_BLOCK + 0x18;
/// The function's place on PCI, written by the guest glue when it
/// attaches (the model only reads it): bit 31 set (the word is valid),
/// the bus number in bits 15..8 and `devfn` (slot << 3 | function) in
/// bits 7..0. The bond commands' masks are bits of the function number
/// and bonds are per bus ([`crate::bond`]). A word without bit 31 (no
/// glue yet, or one that does not write it) stands for bus 0 and the
/// device's index as the function number.
pub const IDENT_PCI: u64 = MODEL_BLOCK + 0x1c;
/// The first MSI-X vector of the RoCE engine (`Caps::roce_base_vector`),
/// which the glue reports as the handle's `rinfo.base_vector`: hclge puts
/// the NIC's vectors first and RoCE's after them. The model adds it to
/// every vector it raises.
pub const IDENT_BASE_VECTOR: u64 = MODEL_BLOCK + 0x20;
/// "HSID" as a little-endian word: the identity words are valid.
pub const IDENT_MAGIC_VALUE: u32 = 0x4449_5348;

/// Writes the function's identity ([`IDENT_MAGIC`]) for `caps` into BAR2.
pub fn write_identity(bar: &Bar, caps: &crate::caps::Caps) {
    bar.write32(IDENT_REVISION, caps.pci_revision.into());
    bar.write32(IDENT_DEVICE, caps.pci_device.into());
    bar.write32(IDENT_BASE_VECTOR, caps.roce_base_vector.into());
    bar.write32(IDENT_MAGIC, IDENT_MAGIC_VALUE);
}

/// `ROCEE_VF_ABN_INT_ST_REG`: the abnormal interrupt's status bits. The
/// model sets them for an injected abnormal interrupt; the driver's
/// write-1-to-clear acknowledgement is not modelled (the register is
/// plain memory and keeps what the driver wrote until the next
/// injection sets it again).
pub const VF_ABN_INT_ST: u64 = 0x13004;
/// `ROCEE_VF_ABN_INT_EN_REG`: bit 0 enables the abnormal interrupt.
pub const VF_ABN_INT_EN: u64 = 0x13008;
/// The abnormal interrupt's vector: the first of the function's "other"
/// vectors, which come before the AEQ's and the CEQs' (all of them
/// counted from the RoCE engine's first vector, [`IDENT_BASE_VECTOR`]).
pub const ABN_VECTOR: usize = 0;

/// A function and everything it is wired to.
pub struct Device<'a> {
    /// Firmware state.
    pub fw: Firmware,
    /// The data engine.
    pub engine: Engine,
    bar: &'a Bar,
    ram: &'a GuestRam,
    peer: &'a Peer,
    /// PI of a command left unanswered on purpose: nothing is processed
    /// until the driver moves PI or re-initialises the ring (which the
    /// depth latch below sees, whatever the ring's address).
    stalled: Option<u32>,
    /// The CI value the model wrote last. The driver writes CI only while
    /// (re)initialising the ring (CI = 0, then PI = 0, then commands). A CI
    /// that differs from this one means an init happened; while PI still
    /// holds the old value (= this one, the model had caught up) it is
    /// stale and the ring must not be read (else the model would run the
    /// span between the new CI and the old PI as commands). Once PI moved,
    /// the new CI is the baseline.
    last_ci: Option<u32>,
    /// The last control sequence number carried out.
    ctrl_seq: u32,
    /// The ring the driver set up last: base address and depth in
    /// descriptors. The model takes it when the driver writes the depth
    /// register and clears that register, so that the next (re)init of
    /// the ring, even at the same address, is seen.
    ring: Option<(u64, u32)>,
    /// The driver re-programmed the ring (the depth latch) and has not yet
    /// been seen writing CI and PI for it: until then CI and PI may still
    /// hold the old ring's values, and running them against the new ring
    /// would execute its zeroed slots (see [`new_ring_ready`]).
    fresh: bool,
}

/// What the CMQ registers say about the ring, given the CI the model wrote
/// last (see `Device::last_ci`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingState {
    /// Nothing unusual: run CI..PI.
    Steady,
    /// The driver rewrote CI and PI still holds the old value: wait.
    MidInit,
    /// The driver re-initialised the ring and moved PI: the new CI is the
    /// baseline; run CI..PI.
    Reinit,
}

/// Whether the driver, after re-programming the ring's address and depth,
/// has also written its CI and PI: CI is 0 (both drivers start the ring
/// at 0) and PI is 0 or already past a first command (`posted`: the slot
/// before PI holds a descriptor; a new ring is zeroed). Until then CI and
/// PI may be the old ring's, e.g. a command left unanswered at slot 4 (CI
/// 4, PI 5): running them against the new ring would execute its zeroed
/// slots, and the model's CI write could overwrite the driver's CI = 0,
/// making it run the whole ring.
pub fn new_ring_ready(ci: u32, pi: u32, posted: bool) -> bool {
    ci == 0 && (pi == 0 || posted)
}

/// The command the guest left at [`CTRL_CMD`]: bytes up to the first NUL,
/// as text.
pub fn read_ctrl_cmd(bar: &Bar) -> String {
    let mut bytes = Vec::with_capacity(CTRL_CMD_LEN);
    for w in 0..CTRL_CMD_LEN / 4 {
        bytes.extend_from_slice(&bar.read32(CTRL_CMD + 4 * w as u64).to_le_bytes());
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The PCI location in [`IDENT_PCI`], or for a word the glue never wrote
/// bus 0 and function `index` (the device's place in the process).
pub fn read_loc(bar: &Bar, index: usize) -> bond::PciLoc {
    bond::PciLoc::from_ident(bar.read32(IDENT_PCI)).unwrap_or_else(|| bond::PciLoc::by_index(index))
}

/// Classifies a poll (`last`: the CI the model wrote last).
pub fn ring_state(last: Option<u32>, ci: u32, pi: u32) -> RingState {
    match last {
        Some(l) if l != ci && pi == l => RingState::MidInit,
        Some(l) if l != ci => RingState::Reinit,
        _ => RingState::Steady,
    }
}

impl<'a> Device<'a> {
    /// Wires firmware to the BAR, guest RAM and the interrupt peer.
    pub fn new(fw: Firmware, bar: &'a Bar, ram: &'a GuestRam, peer: &'a Peer) -> Self {
        Device {
            fw,
            engine: Engine::new(),
            bar,
            ram,
            peer,
            stalled: None,
            last_ci: None,
            ctrl_seq: bar.read32(CTRL_SEQ),
            ring: None,
            fresh: false,
        }
    }

    /// Takes the function's PCI location from [`IDENT_PCI`] (`index`: the
    /// device's place in the process, for a word never written).
    pub fn sync_loc(&mut self, index: usize) {
        self.fw.loc = read_loc(self.bar, index);
    }

    /// Carries out a new command of the control channel, if the guest
    /// wrote one (see [`CTRL_SEQ`]); returns whether there was one.
    pub fn poll_ctrl(&mut self) -> bool {
        let seq = self.bar.read32(CTRL_SEQ);
        if seq == self.ctrl_seq {
            return false;
        }
        self.ctrl_seq = seq;
        let cmd = read_ctrl_cmd(self.bar);
        let result = match self.fw.control(&cmd) {
            Ok(()) => {
                self.fw.post_injected(self.ram);
                self.raise_irqs();
                for st in self.fw.take_abnormal() {
                    self.raise_abnormal(st);
                }
                0
            }
            Err(e) => {
                eprintln!("hns-sim: control command '{cmd}' refused: {e}");
                1
            }
        };
        self.bar.write32(CTRL_RESULT, result);
        self.bar.write32(CTRL_ACK, seq);
        true
    }

    /// An abnormal interrupt as the engine raises it: `st` into
    /// `VF_ABN_INT_ST`, then the abnormal vector if `VF_ABN_INT_EN`
    /// enables it (no driver, or one that turned it off, gets nothing).
    fn raise_abnormal(&mut self, st: u32) {
        self.bar.write32(VF_ABN_INT_ST, st);
        if self.bar.read32(VF_ABN_INT_EN) & 1 != 0 {
            self.fw
                .trace
                .note(&format!("abnormal interrupt: status {st:#x} raised"));
            self.raise(ABN_VECTOR);
        } else {
            self.fw.trace.note(&format!(
                "abnormal interrupt: status {st:#x} not raised (disabled)"
            ));
        }
    }

    /// Raises the RoCE engine's vector `v` (0: its first), MSI-X vector
    /// `roce_base_vector + v` of the function.
    fn raise(&self, v: usize) {
        self.peer.raise(self.fw.caps.roce_base_vector as usize + v);
    }

    /// Raises the vectors the firmware queued.
    fn raise_irqs(&mut self) {
        for v in self.fw.take_irqs() {
            self.raise(v);
        }
    }

    /// Moves CI (the model's side of the ring).
    fn write_ci(&mut self, v: u32) {
        self.bar.write32(CMQ_CI, v);
        self.last_ci = Some(v);
    }

    /// One pass of the data engine (doorbells, WQEs, CQEs, events);
    /// returns whether any work was executed.
    pub fn poll_data<W: Wire<GuestRam>>(&mut self, wire: &mut W) -> bool {
        let did = self.engine.poll(
            &mut self.fw,
            self.ram,
            self.bar,
            wire,
            std::time::Instant::now(),
        );
        self.raise_irqs();
        did
    }

    /// Processes every descriptor between CI and PI; returns whether there
    /// was any work.
    pub fn poll_cmq(&mut self) -> bool {
        let units = self.bar.read32(CMQ_DEPTH);
        self.poll_cmq_seen(units)
    }

    /// [`Device::poll_cmq`] with the depth register as read at the start
    /// of the poll (`units`).
    fn poll_cmq_seen(&mut self, units: u32) -> bool {
        if units != 0 {
            // The driver (re)initialised the ring: it writes the base
            // address, then the depth, then CI and PI. Whatever was stalled
            // belonged to the old ring.
            let base = (self.bar.read32(CMQ_BASEADDR_H) as u64) << 32
                | self.bar.read32(CMQ_BASEADDR_L) as u64;
            self.ring = Some((base, units * 8));
            self.bar.write32(CMQ_DEPTH, 0);
            self.stalled = None;
            self.fresh = true;
        }
        let Some((base, depth)) = self.ring else {
            return false;
        };
        let pi = self.bar.read32(CMQ_PI);
        let mut ci = self.bar.read32(CMQ_CI);
        // The driver writes the depth before CI and PI. A depth that came
        // after the read above means CI and PI may already be the new
        // ring's while `ring` is still the old one, whose memory the old
        // driver freed: running them there executes whatever now lies in
        // it (seen in `make bench`: ≈ 150 descriptors of kernel data
        // answered, CI left at 101, and the C driver's first command on
        // its new ring timed out). The next poll switches rings.
        if self.bar.read32(CMQ_DEPTH) != 0 {
            return true;
        }
        if self.fresh {
            let posted = pi != 0 && pi <= depth && {
                let mut raw = [0u8; DESC_SIZE];
                let slot = base + (pi - 1) as u64 * DESC_SIZE as u64;
                self.ram.read(slot, &mut raw).is_ok() && raw.iter().any(|&b| b != 0)
            };
            // PI read again: a changed PI means the driver is between its
            // PI = 0 write and its first post, the slot maybe half written.
            if !new_ring_ready(ci, pi, posted) || self.bar.read32(CMQ_PI) != pi {
                return false;
            }
            self.fresh = false;
            self.last_ci = Some(ci);
        }
        let mut state = ring_state(self.last_ci, ci, pi);
        if state == RingState::MidInit && depth != 0 && ci < depth {
            // PI equal to the old CI is either a driver between its CI and
            // PI writes (the new ring's slot CI still zeroed) or a new
            // driver that already posted its first command, which landed
            // on the old value (the slot holds it).
            let mut raw = [0u8; DESC_SIZE];
            let slot = base + ci as u64 * DESC_SIZE as u64;
            if self.ram.read(slot, &mut raw).is_ok() && raw.iter().any(|&b| b != 0) {
                state = RingState::Reinit;
            }
        }
        match state {
            RingState::MidInit => return false,
            RingState::Reinit => self.last_ci = Some(ci),
            RingState::Steady => {}
        }
        // A stall ends as soon as the driver moves PI (it gave up and
        // moved its head back, or posts again), even when that leaves
        // nothing to run: the stalled PI value may come back later as a
        // new command.
        if self.stalled.is_some_and(|p| p != pi) {
            self.stalled = None;
        }
        if base == 0 || depth == 0 || pi == ci || self.stalled.is_some() {
            return false;
        }
        if pi >= depth || ci >= depth {
            self.fw.trace.note(&format!(
                "CMQ index out of range: pi {pi} ci {ci} depth {depth}"
            ));
            self.write_ci(pi.min(depth - 1));
            return true;
        }
        while ci != pi {
            // Gather one command: descriptors chained by NEXT.
            let mut chain = Vec::new();
            let mut idx = ci;
            loop {
                let mut raw = [0u8; DESC_SIZE];
                if self
                    .ram
                    .read(base + idx as u64 * DESC_SIZE as u64, &mut raw)
                    .is_err()
                {
                    self.fw
                        .trace
                        .note(&format!("CMQ ring at {base:#x} is outside guest RAM"));
                    self.write_ci(pi);
                    return true;
                }
                let d = Desc::from_bytes(&raw);
                chain.push((idx, d));
                idx = (idx + 1) % depth;
                if !d.has_next() || idx == pi {
                    break;
                }
            }
            let mut descs: Vec<Desc> = chain.iter().map(|c| c.1).collect();
            if !self.fw.execute(self.ram, &mut descs) {
                // Leave CI where it is: the driver times out.
                self.stalled = Some(pi);
                self.write_ci(ci);
                self.fw.trace.flush();
                return true;
            }
            for ((i, _), d) in chain.iter().zip(&descs) {
                // Responses go back into the ring slots before CI moves.
                let _ = self
                    .ram
                    .write(base + *i as u64 * DESC_SIZE as u64, &d.to_bytes());
            }
            ci = idx;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        self.write_ci(ci);
        self.raise_irqs();
        self.fw.trace.flush();
        true
    }
}

/// The devices other than the one polling, split around it: the wire
/// between the functions of one hns-sim process (they share guest RAM).
pub struct Others<'d, 'a> {
    /// Devices before the polling one.
    pub before: &'d mut [Device<'a>],
    /// Devices after it.
    pub after: &'d mut [Device<'a>],
    /// The polling device's port: where its messages leave.
    pub from: Port,
}

impl<'a> Others<'_, 'a> {
    fn get_ref(&self, dev: usize) -> Option<&Device<'a>> {
        let n = self.before.len();
        if dev < n {
            self.before.get(dev)
        } else {
            self.after.get(dev - n)
        }
    }

    fn get(&mut self, dev: usize) -> Option<&mut Device<'a>> {
        let n = self.before.len();
        if dev < n {
            self.before.get_mut(dev)
        } else {
            self.after.get_mut(dev - n)
        }
    }
}

impl Wire<GuestRam> for Others<'_, '_> {
    fn route(&self, gid: &[u8; 16]) -> Option<usize> {
        self.before
            .iter()
            .chain(self.after.iter())
            .position(|d| d.fw.owns_gid(gid))
    }

    fn path(&self, qpn: u32, dev: usize) -> Result<(), String> {
        let Some(to) = self.get_ref(dev) else {
            return Ok(());
        };
        let all = self.before.iter().chain(self.after.iter()).map(|d| &d.fw);
        fw_path(self.from, &to.fw, all, qpn)
    }

    fn others(&self) -> bool {
        !self.before.is_empty() || !self.after.is_empty()
    }

    fn respond(&mut self, dev: usize, mem: &GuestRam, req: &Request) -> Response {
        match self.get(dev) {
            // Its CQEs' events go out at that device's next poll.
            Some(d) => d.engine.respond(&mut d.fw, mem, req),
            None => Response::NotReady,
        }
    }
}

/// The routing rule ([`bond::path`]) for a message of QP `qpn` leaving a
/// function with port `from` for the function `to`, `all` being the other
/// functions of the process (`to` may be among them). Every function of
/// a process shares one chip (`to`'s is taken); with no bond and both
/// ports up it answers at once, as before ports existed.
pub fn fw_path<'f>(
    from: Port,
    to: &Firmware,
    all: impl Iterator<Item = &'f Firmware>,
    qpn: u32,
) -> Result<(), String> {
    let port = |f: &Firmware| Port {
        loc: f.loc,
        up: f.port_up,
    };
    let chip = to.chip.borrow();
    if chip.bonds.is_empty() && from.up && to.port_up {
        return Ok(());
    }
    let ports: Vec<Port> = all.map(port).collect();
    bond::path(&chip, &ports, from, port(to), qpn)
}

/// Hands what a PF's commands did to its other functions (FUNC_CLEAR,
/// ALLOC_VF_RES of a function id > 0) to the VFs presenting them: the VF
/// device whose `vf_id` is the function id. A function no device
/// presents is noted in the PF's trace.
pub fn deliver_func_events<'a>(pf: &mut Device<'a>, others: &mut Others<'_, 'a>) {
    for ev in pf.fw.take_func_events() {
        let f = ev.func();
        match others
            .before
            .iter_mut()
            .chain(others.after.iter_mut())
            .find(|d| d.fw.caps.is_vf() && d.fw.caps.vf_id == f)
        {
            Some(vf) => vf.fw.from_pf(&ev),
            None => pf.fw.trace.note(&format!(
                "function {f}: no device presents it ({ev:?} not delivered)"
            )),
        }
    }
}

/// Polls every device once (CMQ, then data with the others as the wire);
/// returns whether any had work.
pub fn poll_all(devs: &mut [Device<'_>]) -> bool {
    let mut did = false;
    for i in 0..devs.len() {
        let (before, rest) = devs.split_at_mut(i);
        let Some((me, after)) = rest.split_first_mut() else {
            break;
        };
        me.sync_loc(i);
        let from = Port {
            loc: me.fw.loc,
            up: me.fw.port_up,
        };
        let mut others = Others {
            before,
            after,
            from,
        };
        did |= me.poll_ctrl();
        did |= me.poll_cmq();
        deliver_func_events(me, &mut others);
        did |= me.poll_data(&mut others);
    }
    did
}

#[cfg(test)]
mod tests {
    use super::{
        new_ring_ready, read_ctrl_cmd, read_loc, ring_state, write_identity, RingState, CTRL_CMD,
        CTRL_CMD_LEN,
    };
    use crate::caps::Caps;
    use crate::mem::Bar;

    #[test]
    fn identity_words_carry_the_revision() {
        // The glue (hns_sim_glue.c) reads "HSID" at 0xff0010 and the PCI
        // revision at 0xff0014; PCI_REVISION_ID_HIP08 is 0x21, HIP09 0x30.
        let (bar, _f) = Bar::new("hns-sim-test-ident").unwrap();
        assert_eq!(
            bar.read32(0xff_0010),
            0,
            "nothing before the model writes it"
        );
        write_identity(&bar, &Caps::default());
        assert_eq!(bar.read32(0xff_0010).to_le_bytes(), *b"HSID");
        assert_eq!(bar.read32(0xff_0014), 0x30);
        assert_eq!(bar.read32(0xff_0018), 0xa222);
        assert_eq!(bar.read32(0xff_0020), 0, "RoCE vectors from 0 by default");
        write_identity(&bar, &Caps::hip08());
        assert_eq!(bar.read32(0xff_0014), 0x21);
        assert_eq!(bar.read32(0xff_0018), 0xa222);
        // The VF: HNAE3_DEV_ID_RDMA_DCB_PFC_VF, a HIP09 revision.
        write_identity(&bar, &Caps::vf());
        assert_eq!(bar.read32(0xff_0014), 0x30);
        assert_eq!(bar.read32(0xff_0018), 0xa22f);
        let mut c = Caps::default();
        c.set("roce_base_vector", "3").unwrap();
        write_identity(&bar, &c);
        assert_eq!(bar.read32(0xff_0020), 3);
        // The control channel's words are not touched.
        for off in [0xff_0000, 0xff_0004, 0xff_0008, 0xff_0040] {
            assert_eq!(bar.read32(off), 0);
        }
        // Nothing in the registers hclge and hns3 program (vectors, NIC
        // CMQ, GRO, PTP, extended vectors, TQPs) either.
        for off in (0x2_0000..0x8_0000).chain(0x8_0000..0x11_0000).step_by(4) {
            assert_eq!(bar.read32(off), 0, "{off:#x}");
        }
    }

    /// `#define NAME 0x...` of the glue's C source, as a number.
    fn glue_define(src: &str, name: &str) -> u64 {
        let line = src
            .lines()
            .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
            .unwrap_or_else(|| panic!("{name} not in hns_sim_glue.c"));
        let v = line.split_whitespace().nth(2).unwrap();
        crate::caps::parse_num(v).unwrap_or_else(|| panic!("{name}: {v}"))
    }

    #[test]
    fn glue_restates_the_model_block() {
        // The glue is C in the guest and cannot use these constants; its
        // defines must say the same offsets.
        let src = include_str!("../guest/hns_sim_glue.c");
        for (name, off) in [
            ("HNS_SIM_CTRL_SEQ", super::CTRL_SEQ),
            ("HNS_SIM_CTRL_ACK", super::CTRL_ACK),
            ("HNS_SIM_CTRL_RESULT", super::CTRL_RESULT),
            ("HNS_SIM_CTRL_CMD", super::CTRL_CMD),
            ("HNS_SIM_CTRL_CMD_LEN", CTRL_CMD_LEN as u64),
            ("HNS_SIM_IDENT_MAGIC", super::IDENT_MAGIC),
            ("HNS_SIM_IDENT_REVISION", super::IDENT_REVISION),
            ("HNS_SIM_IDENT_DEVICE", super::IDENT_DEVICE),
            ("HNS_SIM_IDENT_PCI", super::IDENT_PCI),
            ("HNS_SIM_IDENT_BASE_VECTOR", super::IDENT_BASE_VECTOR),
            ("HNS_SIM_IDENT_MAGIC_VALUE", super::IDENT_MAGIC_VALUE.into()),
            ("HNS_SIM_MEM_BASE_OFFSET", crate::mem::MEM_BASE_OFFSET),
        ] {
            assert_eq!(glue_define(src, name), off, "{name}");
        }
    }

    #[test]
    fn pci_identity_word_is_read_not_written() {
        // The glue writes bit 31 | bus << 8 | devfn at 0xff001c when it
        // attaches; the model's own identity words leave it alone.
        let (bar, _f) = Bar::new("hns-sim-test-pci").unwrap();
        write_identity(&bar, &Caps::default());
        assert_eq!(bar.read32(0xff_001c), 0);
        let l = read_loc(&bar, 2);
        assert_eq!((l.bus, l.devfn, l.func()), (0, 2, 2), "default: the index");
        // 0000:00:03.1 (devfn 0x19).
        bar.write32(0xff_001c, 1 << 31 | 0x19);
        let l = read_loc(&bar, 2);
        assert_eq!((l.bus, l.devfn, l.func()), (0, 0x19, 1));
        bar.write32(0xff_001c, 1 << 31 | 0x1 << 8 | 0x20);
        let l = read_loc(&bar, 0);
        assert_eq!((l.bus, l.func()), (1, 0));
    }

    /// Writes `cmd` into the control channel and bumps its sequence.
    fn ctrl(bar: &Bar, cmd: &str) {
        let mut b = cmd.as_bytes().to_vec();
        b.resize(CTRL_CMD_LEN, 0);
        for (i, w) in b.chunks(4).enumerate() {
            bar.write32(
                CTRL_CMD + 4 * i as u64,
                u32::from_le_bytes(w.try_into().unwrap()),
            );
        }
        bar.write32(super::CTRL_SEQ, bar.read32(super::CTRL_SEQ) + 1);
    }

    /// What `n` devices of one process need, as main.rs sets them up: a
    /// 1 MiB guest RAM file, and per device a BAR and the QEMU side of its
    /// interrupt socket. Dropped: the clients close, the directory goes.
    struct Rig {
        dir: std::path::PathBuf,
        ram: crate::mem::GuestRam,
        bars: Vec<Bar>,
        peers: Vec<crate::ivshmem::Peer>,
        clients: Vec<std::os::unix::net::UnixStream>,
    }

    impl Rig {
        fn new(tag: &str, n: usize) -> Self {
            use std::os::unix::net::{UnixListener, UnixStream};
            let dir =
                std::env::temp_dir().join(format!("hns-sim-test-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let ram_path = dir.join("ram");
            std::fs::File::create(&ram_path)
                .unwrap()
                .set_len(1 << 20)
                .unwrap();
            let ram = crate::mem::GuestRam::open(ram_path.to_str().unwrap(), 0).unwrap();
            let mut rig = Rig {
                dir,
                ram,
                bars: vec![],
                peers: vec![],
                clients: vec![],
            };
            for i in 0..n {
                let (bar, file) = Bar::new(&format!("hns-sim-test-{tag}-{i}")).unwrap();
                let sock = rig.dir.join(format!("s{i}"));
                let l = UnixListener::bind(&sock).unwrap();
                rig.clients.push(UnixStream::connect(&sock).unwrap());
                rig.peers
                    .push(crate::ivshmem::Peer::accept(&l, &file, 1).unwrap());
                rig.bars.push(bar);
            }
            rig
        }
    }

    impl Drop for Rig {
        fn drop(&mut self) {
            self.clients.clear();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn bond_commands_and_links_through_the_device_loop() {
        // Three functions of one process as main.rs wires them: one
        // chip, BOND cap; functions 00:03.0 and 00:03.1 from the glue's
        // identity word, the third without it (function = index 2).
        use super::{poll_all, Device, Others, CMQ_BASEADDR_L, CMQ_DEPTH, CMQ_PI, IDENT_PCI};
        use crate::bond::{Chip, Port};
        use crate::cmq::{flag, op, ret, Desc, DESC_SIZE};
        use crate::engine::Wire;
        use crate::fw::Firmware;
        use crate::mem::Dma;
        use crate::trace::Trace;
        let rig = Rig::new("bondloop", 3);
        let (ram, bars, peers) = (&rig.ram, &rig.bars, &rig.peers);
        bars[0].write32(IDENT_PCI, 1 << 31 | 3 << 3);
        bars[1].write32(IDENT_PCI, 1 << 31 | 3 << 3 | 1);
        let chip = std::rc::Rc::new(std::cell::RefCell::new(Chip::default()));
        let mut devs: Vec<Device<'_>> = (0..3)
            .map(|i| {
                let mut c = Caps::default();
                c.cap_flags |= crate::caps::flag::BOND;
                let mut f = Firmware::new(c, vec![], Trace::discard());
                f.chip = chip.clone();
                Device::new(f, &bars[i], ram, &peers[i])
            })
            .collect();
        poll_all(&mut devs);
        let funcs: Vec<u8> = devs.iter().map(|d| d.fw.loc.func()).collect();
        assert_eq!(funcs, [0, 1, 2]);
        assert_eq!(devs[1].fw.loc.devfn, 0x19);
        assert_eq!(devs[2].fw.loc.devfn, 2, "no identity word: the index");
        // Function 1 (the main after a switch_main_dev, say) sends
        // SET_BOND_INFO on its CMQ ring at 0x1000 (8 descriptors): mode 1,
        // slaves 0x3, function 0 active.
        let b1 = &bars[1];
        b1.write32(CMQ_BASEADDR_L, 0x1000);
        b1.write32(CMQ_DEPTH, 1);
        poll_all(&mut devs);
        let mut d = Desc {
            opcode: op::SET_BOND_INFO,
            flag: flag::IN,
            ..Default::default()
        };
        d.data = [0, 0, 1, 0x1, 0x3, 0];
        ram.write(0x1000, &d.to_bytes()).unwrap();
        b1.write32(CMQ_PI, 1);
        assert!(poll_all(&mut devs));
        let mut raw = [0u8; DESC_SIZE];
        ram.read(0x1000, &mut raw).unwrap();
        assert_eq!(Desc::from_bytes(&raw).retval, ret::SUCCESS);
        assert_eq!(chip.borrow().bonds[&(0, 0)].main.devfn, 0x19);
        // Function 0's port goes down through the control channel.
        ctrl(&bars[0], "link:down");
        poll_all(&mut devs);
        assert_eq!(bars[0].read32(super::CTRL_RESULT), 0);
        assert!(!devs[0].fw.port_up);
        ctrl(&bars[0], "link:sideways");
        poll_all(&mut devs);
        assert_eq!(bars[0].read32(super::CTRL_RESULT), 1, "refused");
        // The wire as device 2 (function 2) sees it: the bond (device 1)
        // is reachable through function 1's port; the other way the
        // bond's egress is function 0's port, which is down.
        let port = |d: &Device<'_>| Port {
            loc: d.fw.loc,
            up: d.fw.port_up,
        };
        let (before, rest) = devs.split_at_mut(2);
        let from = port(&rest[0]);
        let w = Others {
            before,
            after: &mut [],
            from,
        };
        assert_eq!(w.path(8, 1), Ok(()));
        let (before, rest) = devs.split_at_mut(1);
        let (me, after) = rest.split_first_mut().unwrap();
        let from = port(me);
        let w = Others {
            before,
            after,
            from,
        };
        assert!(w.path(8, 1).unwrap_err().contains("function 0"));
        drop(devs);
    }

    #[test]
    fn reinit_between_the_depth_read_and_pi_runs_nothing_of_the_old_ring() {
        use super::{Device, CMQ_BASEADDR_L, CMQ_CI, CMQ_DEPTH, CMQ_PI};
        use crate::cmq::{flag, op, ret, Desc, DESC_SIZE};
        use crate::fw::Firmware;
        use crate::mem::Dma;
        use crate::trace::Trace;
        let rig = Rig::new("reinit", 1);
        let (ram, bar) = (&rig.ram, &rig.bars[0]);
        let mut dev = Device::new(
            Firmware::new(Caps::default(), vec![], Trace::discard()),
            bar,
            ram,
            &rig.peers[0],
        );
        let cmd = |opcode| {
            Desc {
                opcode,
                flag: flag::IN,
                ..Default::default()
            }
            .to_bytes()
        };
        let answer = |at| {
            let mut raw = [0u8; DESC_SIZE];
            ram.read(at, &mut raw).unwrap();
            Desc::from_bytes(&raw)
        };
        // The old driver's ring at 0x1000 (8 descriptors): two commands,
        // both answered (CI 2).
        bar.write32(CMQ_BASEADDR_L, 0x1000);
        bar.write32(CMQ_DEPTH, 1);
        bar.write32(CMQ_CI, 0);
        bar.write32(CMQ_PI, 0);
        dev.poll_cmq();
        for i in 0..2u64 {
            ram.write(0x1000 + i * DESC_SIZE as u64, &cmd(op::QUERY_HW_VER))
                .unwrap();
        }
        bar.write32(CMQ_PI, 2);
        assert!(dev.poll_cmq());
        assert_eq!(bar.read32(CMQ_CI), 2);
        // Its memory is freed and reused; a new driver reads the depth
        // register... (the model's read, before the driver's writes)
        let seen = bar.read32(CMQ_DEPTH);
        ram.write(0x1000, &cmd(op::QUERY_FW_VER)).unwrap();
        // ...then initialises its ring at 0x2000 and posts its first
        // command, all before the model reads CI and PI.
        bar.write32(CMQ_BASEADDR_L, 0x2000);
        bar.write32(CMQ_DEPTH, 1);
        bar.write32(CMQ_CI, 0);
        bar.write32(CMQ_PI, 0);
        ram.write(0x2000, &cmd(op::QUERY_HW_VER)).unwrap();
        bar.write32(CMQ_PI, 1);
        dev.poll_cmq_seen(seen);
        assert_eq!(bar.read32(CMQ_CI), 0, "nothing ran");
        assert_ne!(
            answer(0x1000).flag & flag::OUT,
            flag::OUT,
            "old slot untouched"
        );
        // The next poll takes the new ring and answers its command.
        assert!(dev.poll_cmq());
        assert_eq!(bar.read32(CMQ_CI), 1);
        assert_eq!(answer(0x2000).retval, ret::SUCCESS);
    }

    #[test]
    fn control_command_is_read_up_to_its_nul() {
        let (bar, _f) = Bar::new("hns-sim-test-ctrl").unwrap();
        assert_eq!(read_ctrl_cmd(&bar), "");
        let cmd = b"mbx:0x23:0x11:once\0garbage";
        for (i, w) in cmd.chunks(4).enumerate() {
            let mut b = [0u8; 4];
            b[..w.len()].copy_from_slice(w);
            bar.write32(CTRL_CMD + 4 * i as u64, u32::from_le_bytes(b));
        }
        assert_eq!(read_ctrl_cmd(&bar), "mbx:0x23:0x11:once");
    }

    #[test]
    fn ring_reinit_races() {
        // First contact, and the usual case.
        assert_eq!(ring_state(None, 0, 0), RingState::Steady);
        assert_eq!(ring_state(Some(190), 190, 192), RingState::Steady);
        // A new driver wrote CI = 0 but PI is still the old 190: waiting,
        // not running 0..190 of the new (zeroed) ring.
        assert_eq!(ring_state(Some(190), 0, 190), RingState::MidInit);
        // PI = 0 came too: baseline 0, nothing to run.
        assert_eq!(ring_state(Some(190), 0, 0), RingState::Reinit);
        // The driver already posted its first command before this poll: it
        // must run (the bug of waiting for PI == CI).
        assert_eq!(ring_state(Some(190), 0, 1), RingState::Reinit);
    }

    #[test]
    fn new_ring_waits_for_the_drivers_ci_and_pi() {
        // A command was left unanswered at slot 4 of the old ring (CI 4,
        // PI 5) and the new driver has only written address and depth:
        // wait (the bug: the zeroed slot 4 ran as opcode 0, the model's
        // CI 5 overwrote the driver's CI 0 and then ran the whole ring).
        assert!(!new_ring_ready(4, 5, false));
        // CI = 0 written, PI still the old 5, slot 4 of the new ring empty.
        assert!(!new_ring_ready(0, 5, false));
        // Old ring stalled at slot 0 (CI 0, PI 1) looks like a first post
        // but its slot is empty: wait.
        assert!(!new_ring_ready(0, 1, false));
        // PI = 0 written, or the first command already posted.
        assert!(new_ring_ready(0, 0, false));
        assert!(new_ring_ready(0, 1, true));
    }
}
