// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The data engine of one function: finds posted work, executes it between
//! QPs of the same device (loopback) or hands the responder's part to the
//! device owning the destination GID (a [`Wire`]), writes CQEs and
//! completion events.
//!
//! Work detection never depends on seeing every doorbell write (user SQ,
//! RQ, CQ doorbells share one 64-bit register word at 0x230 of the
//! doorbell page, plain shared memory here, so a later write can replace
//! an earlier one before the model takes it; the model takes the word with
//! an atomic exchange for 0, so it never mistakes an old value for a new
//! ring nor a new ring equal to the old value for nothing):
//! - SQ: a doorbell (the shared word, or a kernel QP's own word in the
//!   `mem_base` window) tells which QP to look at and up to which index
//!   the WQEs are complete. A direct WQE (DIRECT_WQE, cap bit 12: the
//!   driver pushes a one-WQE post's first 64 bytes into the QP's page of
//!   that window, `FLAG` set in the first qword) counts as the SQ doorbell
//!   of that page's QP; the WQE still runs from the SQ buffer, and the
//!   pushed bytes are compared with it afterwards (`Push`). The owner bit
//!   of the WQE at the model's consumer index must be valid too. A WQE
//!   past the last doorbell seen is taken only when its owner bit is
//!   valid and its bytes have not changed for [`STABLE`] (the periodic
//!   scan of every QP in RTS, the backstop for lost doorbells). That
//!   delay is long on purpose: libhns' `ibv_wr_*` API (perftest's post
//!   path) sets the owner bit *first* (`ibv_wr_rdma_write` etc.) and
//!   writes length, inline data and SGEs after it, up to
//!   `ibv_wr_complete`'s doorbell; a producer preempted in between (one
//!   guest CPU shared by two busy-polling processes: a scheduler tick is
//!   4 ms) leaves a valid owner bit on a half-written WQE. Real hardware
//!   never looks past the doorbell.
//! - RQ producer index: the record doorbell in driver memory (address in
//!   the QPC), else the last RQ doorbell seen.
//! - CQ consumer index: the record doorbell (address in the CQC), else the
//!   last CQ doorbell seen.
//! - Every CQ counts as armed from its creation until it is destroyed:
//!   every batch of CQEs on it raises a CEQE. An arm doorbell can be
//!   overwritten before the model reads it (perftest arms its send and its
//!   receive CQ back to back), so arms are not tracked at all; a spurious
//!   event is harmless (uverbs queues it only for CQs with a completion
//!   channel and counts only the events a reader took), a missed one hangs
//!   the consumer.
//!
//! Contexts are read from the driver's HEM memory: QPCs and CQCs when a
//! mailbox changed them (the [`CtxEvent`]s of the firmware), MPTs at each
//! use.

use crate::field::Ctx;
use crate::fw::Table;
use crate::hw_v2_fields::{cqc, qpc, srqc, Cqc, Qpc, Srqc};
use crate::live::{Extent, LiveDma, Owner};
use crate::mem::Dma;
use crate::wqe::{
    self, op, rop, status, Cqe, DataSeg, DirectWqe, Doorbell, FrmrWqe, RcWqe, UdWqe, SGE_SIZE,
    SQ_WQE_HDR, SQ_WQE_SIZE,
};
use crate::xlate::{
    self, Access, KeyError, MptEntry, Mtr, Region, XlateError, MPT_ST_FREE, MPT_ST_VALID,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::time::{Duration, Instant};

mod cqe;
mod ctx;
mod dma;
mod keys;
mod rc;
mod sq;
#[cfg(test)]
mod tests;
mod ud;
mod wire;

pub use ctx::{CqCtx, QpCtx, SrqCtx};
pub use ud::grh;
pub use wire::{Fail, NoWire, Op, RcOp, Request, Response, UdMsg, Wire};

/// FNV-1a of a WQE's bytes: tells the scan whether the producer is still
/// writing it.
/// A `--dump-data` line: `<what> <queue> <idx> <w0> <w1> ...`, queue and
/// index in hex, the words little-endian as the driver reads them.
pub fn dump_line(what: &str, queue: u32, idx: u32, bytes: &[u8]) -> String {
    let mut s = format!("{what} {queue:06x} {idx:04x}");
    for c in bytes.chunks(4) {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        s.push_str(&format!(" {:08x}", u32::from_le_bytes(w)));
    }
    s
}

fn fingerprint(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Offset of the shared SQ/RQ/SRQ/CQ doorbell word (`ROCEE_VF_DB_CFG0_OFFSET`).
pub const DB_CFG0: u64 = 0x230;
/// Offset of the `mem_base` window in BAR2 (kernel HIP09 SQ doorbells, one
/// 64 KiB page per QPN).
pub const DWQE_BASE: u64 = crate::mem::MEM_BASE_OFFSET;
/// Bytes per QPN in the `mem_base` window (`HNS_ROCE_DWQE_SIZE`).
pub const DWQE_SIZE: u64 = 65536;
/// QPNs whose page fits the `mem_base` window (256): the kernel doorbell
/// words the engine reads, and the QPs a DIRECT_WQE function may have.
pub const DWQE_PAGES: u64 = (crate::mem::BAR_SIZE - DWQE_BASE) / DWQE_SIZE;
/// Bytes of a direct WQE (`hns_roce_write512`: eight 64-bit stores).
pub const DWQE_BYTES: usize = 64;

/// Offset in BAR2 of the page of `qpn` in the `mem_base` window, if it
/// has one.
fn dwqe_page(qpn: u32) -> Option<u64> {
    (u64::from(qpn) < DWQE_PAGES).then(|| DWQE_BASE + u64::from(qpn) * DWQE_SIZE)
}

/// How long a WQE past the last SQ doorbell must keep a valid owner bit
/// and the same bytes before the scan takes it: far above a guest
/// scheduler slice (4 ms ticks at HZ=250), so a producer preempted between
/// `ibv_wr_rdma_write` (owner bit set) and `ibv_wr_complete` (doorbell)
/// gets its doorbell in first; it costs a lost doorbell this much latency.
pub const STABLE: Duration = Duration::from_millis(100);
/// How often QPs in RTS are scanned for WQEs nobody rang for.
pub const SCAN_PERIOD: Duration = Duration::from_millis(1);
/// How long a send waits for a destination QP that is not ready.
pub const DEST_WAIT: Duration = Duration::from_secs(5);
/// How long a requester's error completion trails the responder's
/// asynchronous event that caused it. On hardware the responder's driver
/// handles its event (the C driver queues a flush of the responder QP) long
/// before the requester's process sees its error CQE, which waits for the
/// NAK's trip back; in a TCG guest the handler and its work item need
/// milliseconds of host time, so the error CQE waits this long.
pub const RESP_EVENT_LEAD: Duration = Duration::from_millis(50);
/// MR pages tracked per MPT for the bad-DMA check (8 GiB of 4 KiB pages).
const MAX_TRACKED_PAGES: u64 = 1 << 21;
/// WQEs executed per QP per poll (fairness between QPs).
const BATCH: u32 = 64;
/// A QP that executed at least this many SQ WQEs logs its rate (host
/// clock) when it is reset or destroyed (`make bench`).
const RATE_MIN: u64 = 100;

/// A context change the firmware made through a mailbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtxEvent {
    /// A QPC was modified.
    Qp(u32),
    /// A MODIFY_QPC put the QP back in RESET, or into INIT from another
    /// state: its queues start over (queued before that modify's `Qp`).
    QpRestart(u32),
    /// A CQC was created, modified or destroyed.
    Cq(u32),
    /// An SRQC was created, modified or destroyed.
    Srq(u32),
    /// MPT entry `n` was created or destroyed.
    Mpt(u32),
    /// The function was cleared: forget every QP and CQ.
    Reset,
}

/// What the engine needs from the firmware.
pub trait Host {
    /// DMA address of entry `idx` of table `t`.
    fn ctx_addr<M: Dma>(&self, mem: &M, t: Table, idx: u32) -> Result<u64, String>;
    /// Writes a CEQE for `cqn` into completion EQ `ceqn` and queues its
    /// vector.
    fn post_ceqe<M: Dma>(&mut self, mem: &M, ceqn: u32, cqn: u32);
    /// Context changes since the last call.
    fn take_ctx_events(&mut self) -> Vec<CtxEvent>;
    /// GID table entry `idx` (programmed through CFG_GMV_TBL).
    fn gid(&self, idx: u32) -> Option<[u8; 16]>;
    /// Whether `gid` is in this function's GID table.
    fn owns_gid(&self, gid: &[u8; 16]) -> bool;
    /// Writes an AEQE (`event` type, `sub` type, queue number) and queues
    /// the AEQ's vector.
    fn post_event<M: Dma>(&mut self, mem: &M, event: u8, sub: u8, queue: u32);
}

/// Asynchronous event types (`enum hns_roce_event`) the engine raises.
pub mod aev {
    /// A QP of an SRQ reached its last WQE (it entered ERR).
    pub const SRQ_LAST_WQE_REACH: u8 = 0x09;
    /// An SRQ fell below its limit.
    pub const SRQ_LIMIT_REACH: u8 = 0x08;
    /// A message for an XRC target named an SRQ outside its XRC domain.
    pub const XRCD_VIOLATION: u8 = 0x16;
    /// A CQE found its CQ full.
    pub const CQ_OVERFLOW: u8 = 0x0c;
    /// The responder rejected an invalid request (the requester gets
    /// REM_INV_REQ_ERR); `IB_EVENT_QP_REQ_ERR` on the responder QP.
    pub const INV_REQ_LOCAL_WQ_ERROR: u8 = 0x06;
    /// The responder rejected a request for an rkey, PD, access or range
    /// violation (the requester gets REM_ACCESS_ERR);
    /// `IB_EVENT_QP_ACCESS_ERR` on the responder QP.
    pub const LOCAL_WQ_ACCESS_ERROR: u8 = 0x07;
}

/// The device's doorbell registers as the engine reads them.
pub trait Regs {
    /// Takes the 64-bit doorbell word at `off` of BAR2: its value, 0 left
    /// behind (0 = nothing rung since the last take).
    fn take64(&self, off: u64) -> u64;
    /// Reads the 64-bit word at `off` of BAR2 and leaves it there (the
    /// qwords of a direct WQE after the first, and whether the first has
    /// been written again).
    fn peek64(&self, off: u64) -> u64;
}

impl Regs for crate::mem::Bar {
    fn take64(&self, off: u64) -> u64 {
        crate::mem::Bar::take64(self, off)
    }
    fn peek64(&self, off: u64) -> u64 {
        crate::mem::Bar::peek64(self, off)
    }
}

/// QP states (`QP_ST`).
pub mod qps {
    /// Reset.
    pub const RESET: u32 = 0;
    /// Init.
    pub const INIT: u32 = 1;
    /// Ready to receive.
    pub const RTR: u32 = 2;
    /// Ready to send.
    pub const RTS: u32 = 3;
    /// Send queue drained.
    pub const SQD: u32 = 4;
    /// Error: outstanding WQEs complete with WR_FLUSH_ERR.
    pub const ERR: u32 = 6;
}

/// QP transport types (`TST`).
pub mod tst {
    /// Reliable connected.
    pub const RC: u32 = 0;
    /// Unreliable datagram (and GSI).
    pub const UD: u32 = 3;
    /// XRC (initiator or target, `XRC_QP_TYPE`).
    pub const XRC: u32 = 5;
}

/// A direct WQE taken from a QP's page, until its bytes are compared
/// with the WQE the engine executed for it. The model takes the first
/// qword (the ring) as soon as it sees it; the pusher's other seven
/// stores may land later, so the comparison waits for the WQE to run and
/// then for the page to hold the rest, at most [`STABLE`].
#[derive(Clone, Debug)]
struct Push {
    /// `WQE_INDEX`: the producer index it rang; its WQE is `pi - 1`.
    pi: u32,
    /// The SL it carried (for the log).
    sl: u8,
    /// The first qword, as taken.
    qword0: u64,
    /// When it was taken.
    at: Instant,
    /// The first 64 bytes of SQ WQE `pi - 1` as the engine took it for
    /// execution.
    wqe: Option<[u8; DWQE_BYTES]>,
}

/// What a direct WQE's bytes turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PushCheck {
    /// Still waiting (its WQE has not run, or the page is being written).
    Open,
    /// The page held the executed WQE's first 64 bytes.
    Checked,
    /// The page was written again (a newer push or doorbell) before the
    /// bytes could be compared.
    Superseded,
    /// The page held other bytes.
    Mismatched,
}

/// Engine state of one QP.
#[derive(Clone, Debug, Default)]
struct Qp {
    ctx: QpCtx,
    /// Next SQ WQE to execute (counts forever; 16 bits go to CQEs).
    sq_ci: u32,
    /// Next RQ WQE to consume.
    rq_ci: u32,
    /// SQ producer index from the last doorbell seen (16 bits).
    sq_db: Option<u32>,
    /// RQ producer index from the last RQ doorbell seen (no record DB).
    rq_db: u32,
    /// A WQE past the doorbell whose owner bit was seen valid: its index,
    /// since when its bytes have not changed, and their fingerprint.
    pending: Option<(u32, Instant, u64)>,
    /// The SQ index the scan took without a doorbell (counted once, also
    /// when it has to wait).
    scan_took: Option<u32>,
    /// A restart is pending: fingerprint the SQ at the next QPC with a
    /// WQE buffer.
    snap: bool,
    /// A restart is pending: the kernel SQ doorbell word of this QPN may
    /// still hold the previous life's last ring (rung while the QP was
    /// outside INIT..SQD, when the word is not read); take it unread.
    old_ring: bool,
    /// Fingerprints of the SQ slots when the QP started over (`stale`),
    /// cleared slot by slot as the model executes them. The driver does not
    /// clear the SQ at a reset (neither libhns nor the kernel), so the
    /// slots past the first doorbells hold the previous life's WQEs, owner
    /// bits valid for the first pass: the scan must not take those.
    stale: Vec<u64>,
    /// Since when the SQ head waits for a destination that is not ready.
    blocked: Option<Instant>,
    /// RNR retries left for the SQ head after an RNR NAK (finite retry
    /// counts only), and when the next try is due (the RNR timer).
    rnr: Option<(u32, Instant)>,
    /// An error completion was written: stop until the driver modifies
    /// the QP.
    stopped: bool,
    /// Something asked to look at this QP now.
    kick: bool,
    /// The last direct WQE taken from the QP's page, until compared.
    push: Option<Push>,
    /// SQ WQEs executed since the QP was (re)started, and the host times
    /// of the first and the last (the rate line at its reset).
    done: u64,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Qp {
    /// WQEs between the model's consumer index and the producer index of
    /// the move to ERR (16 bits), at most one ring.
    fn sq_to_flush(&self) -> u32 {
        (self.ctx.sq_flush_pi.wrapping_sub(self.sq_ci) & 0xffff).min(1 << self.ctx.sq_shift)
    }

    /// The same for the RQ (none with an SRQ).
    fn rq_to_flush(&self) -> u32 {
        if self.ctx.srq {
            return 0;
        }
        (self.ctx.rq_flush_pi.wrapping_sub(self.rq_ci) & 0xffff).min(1 << self.ctx.rq_shift)
    }

    /// Anything left to flush?
    fn flush_due(&self) -> bool {
        self.sq_to_flush() != 0 || self.rq_to_flush() != 0
    }
}

/// Engine state of one CQ.
#[derive(Clone, Debug, Default)]
struct Cq {
    ctx: CqCtx,
    /// Producer index (counts forever).
    pi: u32,
    /// Consumer index from the last CQ doorbell seen (no record DB).
    ci_db: u32,
    /// Found full once (the overflow event went out).
    overflow: bool,
}

/// Engine state of one SRQ.
#[derive(Clone, Debug, Default)]
struct Srq {
    ctx: SrqCtx,
    /// Next index queue entry to consume (counts forever).
    ci: u32,
    /// Producer index from the last SRQ doorbell seen (no record DB).
    pi_db: u32,
    /// The armed limit (0: disarmed; set by a MODIFY_SRQC, cleared when
    /// the event is raised).
    limit: u32,
}

/// Where a message is received: a WQE of the QP's RQ or of an SRQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recv {
    /// RQ WQE `ci` of QP `qpn`.
    Rq { qpn: u32, ci: u32 },
    /// Index queue entry `ci` of SRQ `srqn`, naming WQE `wqe`.
    Srq { srqn: u32, ci: u32, wqe: u32 },
}

impl Recv {
    /// `WQE_IDX` of the receive CQE (the driver ignores it for an RQ).
    fn wqe_idx(self) -> u16 {
        match self {
            Recv::Rq { ci, .. } => ci as u16,
            Recv::Srq { wqe, .. } => wqe as u16,
        }
    }
}

/// Counters of the data path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// WQEs executed.
    pub wqes: u64,
    /// CQEs written.
    pub cqes: u64,
    /// CEQEs written.
    pub ceqes: u64,
    /// Error CQEs written.
    pub errors: u64,
    /// WQEs taken by the scan without a doorbell covering them.
    pub scan_found: u64,
    /// Doorbell words seen.
    pub doorbells: u64,
    /// Messages another device took (answered, NAKed or rejected; the
    /// tries of a send that waits for a destination QP or CQ are not
    /// counted: a blocked send is tried again on every pass).
    pub wire: u64,
    /// FAST_REG_PMR WQEs (the kernel's `IB_WR_REG_MR`) executed without error.
    pub reg_mr: u64,
    /// LOCAL_INV WQEs executed without error.
    pub local_inv: u64,
    /// SEND_WITH_INV WQEs completed without error (requester side).
    pub send_inv: u64,
    /// Keys invalidated by this device as the responder of a SEND_WITH_INV.
    pub remote_inv: u64,
    /// Direct WQEs taken (first qwords with `FLAG` in a QP's page).
    pub direct_wqes: u64,
    /// Direct WQEs whose 64 bytes equal those of the WQE executed for them.
    pub dwqe_checked: u64,
    /// Direct WQEs whose page was written again before the comparison, or
    /// replaced by a newer one before their WQE ran.
    pub dwqe_superseded: u64,
    /// Direct WQEs whose page held other bytes than their WQE (0 unless the
    /// driver or the model is wrong).
    pub dwqe_mismatched: u64,
    /// RC QPs that began waiting because a port on the way to their
    /// destination was down (`bond::path`; once per stall).
    pub link_stalls: u64,
    /// UD datagrams dropped because a port on the way was down.
    pub link_drops: u64,
    /// RC QPs that began waiting because no device owned their DGID
    /// (several devices; once per stall).
    pub unowned_stalls: u64,
    /// UD datagrams dropped because no device owned their DGID.
    pub unowned_drops: u64,
    /// Writes into guest memory refused because the live object they were
    /// for does not map the target (`live.rs`); 0 unless the model is wrong.
    pub bad_dma: u64,
}

/// A byte range under a memory key.
#[derive(Clone, Copy, Debug)]
struct Span {
    key: u32,
    va: u64,
    len: u64,
}

/// Outcome of one WQE.
enum Step {
    /// Executed; the SQ moves on.
    Done,
    /// Cannot run yet (no receive WQE, CQ full, destination not ready).
    Wait,
    /// Executed with an error completion; the QP stops.
    Failed,
}

/// The data engine of one function.
#[derive(Default)]
pub struct Engine {
    qps: BTreeMap<u32, Qp>,
    cqs: BTreeMap<u32, Cq>,
    srqs: BTreeMap<u32, Srq>,
    /// Asynchronous events to raise at the end of the poll (type, queue).
    aeqes: Vec<(u8, u32)>,
    /// Requester error completions held back until their time (CQ, CQE);
    /// see [`RESP_EVENT_LEAD`].
    deferred: Vec<(Instant, u32, Cqe)>,
    /// How long they are held back ([`RESP_EVENT_LEAD`]; zero writes them
    /// at once).
    resp_event_lead: Duration,
    last_scan: Option<Instant>,
    /// RC requesters waiting because a port on their path is down
    /// (counted in [`EngineStats::link_stalls`] when they start waiting).
    link_blocked: BTreeSet<u32>,
    /// A function reset came: the kernel doorbell words of the `mem_base`
    /// window still hold the last rings of the QPs it forgot; take them
    /// all before a new QP with one of those QPNs can see its
    /// predecessor's producer index as a ring of its own.
    stale_dwqe: bool,
    /// CQs that got CQEs in this poll (events go out at its end).
    touched: BTreeSet<u32>,
    /// The memory the live MRs and CQs map (checked on every write).
    live: RefCell<LiveDma>,
    /// Counters.
    pub stats: EngineStats,
    /// Log lines left before the log goes quiet.
    log_budget: u32,
    /// Where log lines go (stderr = hns-sim.log) unless disabled.
    pub quiet: bool,
    /// `--dump-data`: every SQ WQE taken, every SRQ index entry and WQE
    /// taken, every SRQ doorbell word read and every CQE written, as hex
    /// words (off unless asked for; the control trace is not affected).
    pub dump: Option<Box<dyn std::io::Write + Send>>,
}

impl Engine {
    /// An engine with nothing known.
    pub fn new() -> Self {
        Engine {
            log_budget: 200,
            resp_event_lead: RESP_EVENT_LEAD,
            ..Default::default()
        }
    }

    /// One `--dump-data` line: `what`, its queue number and index, then
    /// `bytes` as little-endian 32-bit words.
    fn dump_words(&mut self, what: &str, queue: u32, idx: u32, bytes: &[u8]) {
        let Some(out) = self.dump.as_mut() else {
            return;
        };
        let _ = writeln!(out, "{}", dump_line(what, queue, idx, bytes));
    }

    fn log(&mut self, s: &str) {
        if self.quiet || self.log_budget == 0 {
            return;
        }
        self.log_budget -= 1;
        eprintln!("hns-sim engine: {s}");
    }

    /// One pass: context changes, doorbells, SQ work, events. Returns
    /// whether anything was executed.
    pub fn poll<M: Dma, H: Host, R: Regs, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        regs: &R,
        wire: &mut W,
        now: Instant,
    ) -> bool {
        for ev in host.take_ctx_events() {
            self.apply_event(host, mem, ev);
        }
        self.read_doorbells(regs, now);
        let scan = self
            .last_scan
            .is_none_or(|t| now.duration_since(t) >= SCAN_PERIOD);
        if scan {
            self.last_scan = Some(now);
        }
        let qpns: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| {
                q.ctx.state == qps::RTS
                    && !q.stopped
                    && !q.ctx.xrc_tgt
                    && (scan || q.kick || q.blocked.is_some())
            })
            .map(|(n, _)| *n)
            .collect();
        let mut did = false;
        for qpn in qpns {
            did |= self.run_sq(host, mem, wire, qpn, now);
        }
        self.check_pushes(regs, now);
        let errs: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| q.ctx.state == qps::ERR && q.flush_due())
            .map(|(n, _)| *n)
            .collect();
        for qpn in errs {
            did |= self.flush(mem, qpn);
        }
        did |= self.post_deferred(mem, now);
        self.raise_events(host, mem);
        self.stats.bad_dma = self.live.borrow().bad;
        did
    }

    /// Refreshes the cached context after a mailbox.
    fn apply_event<M: Dma, H: Host>(&mut self, host: &H, mem: &M, ev: CtxEvent) {
        match ev {
            CtxEvent::Reset => {
                self.qps.clear();
                self.cqs.clear();
                self.srqs.clear();
                self.live.borrow_mut().clear();
                self.stale_dwqe = true;
            }
            CtxEvent::QpRestart(qpn) => {
                // A QP back in RESET: an error completion of its previous
                // life still held back is dropped, as its WQE is.
                self.deferred.retain(|(_, _, c)| c.lcl_qpn != qpn);
                let q = self.qps.entry(qpn).or_default();
                let ctx = std::mem::take(&mut q.ctx);
                *q = Qp {
                    ctx,
                    snap: true,
                    old_ring: true,
                    ..Qp::default()
                };
            }
            CtxEvent::Qp(qpn) => {
                let mut b = [0u8; 256];
                let ctx = match host
                    .ctx_addr(mem, Table::Qpc, qpn)
                    .and_then(|a| mem.read(a, &mut b).map_err(|e| e.to_string()))
                {
                    Ok(()) => QpCtx::from_bytes(qpn, &b),
                    Err(e) => {
                        self.log(&format!("QP {qpn:#x}: QPC unreadable: {e}"));
                        return;
                    }
                };
                self.update_qp(ctx);
                self.snapshot_sq(mem, qpn);
            }
            CtxEvent::Cq(cqn) => {
                let mut b = [0u8; 64];
                let ctx = host
                    .ctx_addr(mem, Table::Cqc, cqn)
                    .and_then(|a| mem.read(a, &mut b).map_err(|e| e.to_string()))
                    .ok()
                    .and_then(|()| CqCtx::from_bytes(cqn, &b));
                self.update_cq(cqn, ctx);
                self.track_cq(mem, cqn);
            }
            CtxEvent::Mpt(idx) => self.track_mpt(host, mem, idx),
            CtxEvent::Srq(srqn) => {
                let mut b = [0u8; 64];
                let ctx = host
                    .ctx_addr(mem, Table::Srqc, srqn)
                    .and_then(|a| mem.read(a, &mut b).map_err(|e| e.to_string()))
                    .ok()
                    .and_then(|()| SrqCtx::from_bytes(srqn, &b));
                self.update_srq(srqn, ctx);
            }
        }
    }

    /// Installs a new SRQC image (`None`: destroyed). A MODIFY_SRQC (same
    /// buffers) keeps the consumer index and (re-)arms the limit.
    pub fn update_srq(&mut self, srqn: u32, ctx: Option<SrqCtx>) {
        match ctx {
            None => {
                self.srqs.remove(&srqn);
            }
            Some(c) => {
                let s = self.srqs.entry(srqn).or_default();
                if s.ctx.buf.root != c.buf.root || s.ctx.idx.root != c.idx.root {
                    *s = Srq::default();
                }
                s.limit = c.limit;
                s.ctx = c;
            }
        }
    }

    /// The model's SRQ consumer index (tests).
    pub fn srq_ci(&self, srqn: u32) -> Option<u32> {
        self.srqs.get(&srqn).map(|s| s.ci)
    }

    /// Installs a new QPC image: a QP back in RESET, or entering INIT from
    /// anything but INIT, starts its queues from 0.
    pub fn update_qp(&mut self, ctx: QpCtx) {
        let qpn = ctx.qpn;
        let q = self.qps.entry(qpn).or_default();
        let fresh = ctx.state == qps::RESET || (ctx.state == qps::INIT && q.ctx.state != qps::INIT);
        if fresh {
            if let (true, Some(a), Some(b)) = (q.done >= RATE_MIN, q.first, q.last) {
                let t = b.duration_since(a).as_secs_f64();
                let line = format!(
                    "QP {qpn:#x}: {} SQ WQEs in {:.3} s of host time ({:.0}/s, {:.1} us each)",
                    q.done,
                    t,
                    (q.done - 1) as f64 / t.max(1e-9),
                    1e6 * t / (q.done - 1) as f64
                );
                if !self.quiet {
                    eprintln!("hns-sim engine: {line}");
                }
            }
            // Whatever the SQ holds now is not new work: fingerprint it
            // once a QPC names the buffer. (Not `Qp::default()` alone: the
            // guest's RESET, INIT, RTR, RTS come one mailbox per engine
            // pass, and each fresh start here used to drop the pending
            // snapshot of the `QpRestart` before it, so the previous
            // life's WQEs were never marked stale.)
            *q = Qp {
                snap: true,
                old_ring: true,
                ..Qp::default()
            };
        }
        if ctx.state == qps::ERR && q.ctx.state != qps::ERR && ctx.srq {
            // No more receives will be taken from the SRQ for this QP.
            self.aeqes.push((aev::SRQ_LAST_WQE_REACH, qpn));
        }
        q.ctx = ctx;
        q.stopped = false;
        q.kick = true;
    }

    /// After a restart, once the QPC names a WQE buffer, keeps the
    /// fingerprint of every SQ slot: what the scan must not take for a new
    /// WQE. The C driver's INIT context has no buffer address yet
    /// (`WQE_SGE_BA` comes with RTR), so with one mailbox per pass this is
    /// the RTR image; the producer cannot post sends before RTS, so every
    /// slot still holds the previous life's bytes (or whatever the buffer
    /// held when the QP was created). A slot unreadable now reads as `0`
    /// (never a fingerprint).
    fn snapshot_sq<M: Dma>(&mut self, mem: &M, qpn: u32) {
        let Some(q) = self.qps.get_mut(&qpn) else {
            return;
        };
        if !q.snap || q.ctx.state < qps::INIT || q.ctx.state > qps::SQD || q.ctx.buf.root == 0 {
            return;
        }
        q.snap = false;
        let n = if q.ctx.sq_shift == 0 || q.ctx.xrc_tgt {
            0
        } else {
            1u32 << q.ctx.sq_shift.min(16)
        };
        let mut raw = [0u8; SQ_WQE_SIZE];
        q.stale = (0..n)
            .map(
                |i| match q.ctx.buf.read(mem, q.ctx.sq_wqe_off(i), &mut raw) {
                    Ok(()) => fingerprint(&raw),
                    Err(_) => 0,
                },
            )
            .collect();
    }

    /// Installs a new CQC image (`None`: destroyed).
    pub fn update_cq(&mut self, cqn: u32, ctx: Option<CqCtx>) {
        match ctx {
            None => {
                self.cqs.remove(&cqn);
            }
            Some(c) => {
                let cq = self.cqs.entry(cqn).or_default();
                if cq.ctx.depth == 0 || cq.ctx.buf.root != c.buf.root {
                    // Created (not a MODIFY of moderation fields).
                    *cq = Cq::default();
                }
                cq.ctx = c;
            }
        }
    }

    /// Reads the shared doorbell word and the first qword of the QPs'
    /// pages in the `mem_base` window (kernel SQ doorbells, direct WQEs).
    fn read_doorbells<R: Regs>(&mut self, regs: &R, now: Instant) {
        if std::mem::take(&mut self.stale_dwqe) {
            for qpn in 0..DWQE_PAGES {
                regs.take64(DWQE_BASE + qpn * DWQE_SIZE);
            }
        }
        let v = regs.take64(DB_CFG0);
        if v != 0 {
            let d = Doorbell::decode(v);
            if d.cmd == wqe::db::SRQ {
                // `--dump-data`: the SRQ doorbell word as the driver wrote it.
                self.dump_words("srqdb", d.tag, d.index, &v.to_le_bytes());
            }
            self.doorbell(d);
        }
        // A QP that started over in this pass cannot have been rung for
        // its new life yet (that needs RTR and RTS, more mailboxes): what
        // its kernel doorbell word holds belongs to the previous life.
        for (&qpn, q) in self.qps.iter_mut() {
            if let (true, Some(off)) = (std::mem::take(&mut q.old_ring), dwqe_page(qpn)) {
                regs.take64(off);
            }
        }
        let pages: Vec<(u32, u64)> = self
            .qps
            .iter()
            .filter(|(_, q)| q.ctx.state >= qps::INIT && q.ctx.state <= qps::SQD)
            .filter_map(|(&n, _)| Some((n, dwqe_page(n)?)))
            .collect();
        for (qpn, off) in pages {
            let v = regs.take64(off);
            if v == 0 {
                continue;
            }
            match DirectWqe::decode(v) {
                Some(d) => self.direct_wqe(regs, qpn, v, d, now),
                None => {
                    // The page's first qword was written again: a direct
                    // WQE before it is compared now or never.
                    self.settle_push(regs, qpn, now, true);
                    self.doorbell(Doorbell::decode(v));
                }
            }
        }
    }

    /// A direct WQE in the page of `qpn` (first qword `v`): the SQ
    /// doorbell of that QP with the pushed producer index (the tag is the
    /// page). An older push of the QP not compared yet is settled first:
    /// its page is being rewritten.
    fn direct_wqe<R: Regs>(&mut self, regs: &R, qpn: u32, v: u64, d: DirectWqe, now: Instant) {
        self.stats.direct_wqes += 1;
        self.settle_push(regs, qpn, now, true);
        if let Some(q) = self.qps.get_mut(&qpn) {
            q.sq_db = Some(d.pi);
            q.kick = true;
            q.push = Some(Push {
                pi: d.pi,
                sl: d.sl,
                qword0: v,
                at: now,
                wqe: None,
            });
        }
        self.kick_blocked();
    }

    /// Compares every direct WQE whose WQE has run with its page.
    fn check_pushes<R: Regs>(&mut self, regs: &R, now: Instant) {
        let ran: Vec<u32> = self
            .qps
            .iter()
            .filter(|(_, q)| q.push.as_ref().is_some_and(|p| p.wqe.is_some()))
            .map(|(n, _)| *n)
            .collect();
        for qpn in ran {
            self.settle_push(regs, qpn, now, false);
        }
    }

    /// Compares the direct WQE of `qpn` with the page it came from, if it
    /// can be decided now, and counts the outcome. `replaced`: a newer
    /// ring has been taken from the page, so there is nothing to wait for.
    fn settle_push<R: Regs>(&mut self, regs: &R, qpn: u32, now: Instant, replaced: bool) {
        let (Some(q), Some(off)) = (self.qps.get_mut(&qpn), dwqe_page(qpn)) else {
            return;
        };
        let Some(p) = q.push.take() else {
            return;
        };
        // The page as the pusher left it: the first qword as taken, the
        // other seven as they are now.
        let mut page = [0u8; DWQE_BYTES];
        for (i, b) in page.chunks_exact_mut(8).enumerate() {
            let w = if i == 0 {
                p.qword0
            } else {
                regs.peek64(off + 8 * i as u64)
            };
            b.copy_from_slice(&w.to_le_bytes());
        }
        let outcome = match &p.wqe {
            None if replaced => PushCheck::Superseded,
            None => PushCheck::Open,
            Some(w) if *w == page => PushCheck::Checked,
            Some(_) if replaced || regs.peek64(off) != 0 => PushCheck::Superseded,
            Some(w) if w[..8] != page[..8] || now.duration_since(p.at) >= STABLE => {
                PushCheck::Mismatched
            }
            Some(_) => PushCheck::Open,
        };
        if outcome == PushCheck::Open {
            q.push = Some(p);
            return;
        }
        match outcome {
            PushCheck::Checked => self.stats.dwqe_checked += 1,
            PushCheck::Superseded => self.stats.dwqe_superseded += 1,
            _ => {
                self.stats.dwqe_mismatched += 1;
                let wqe = p.wqe.map(|w| dump_line("sq", qpn, p.pi, &w));
                self.log(&format!(
                    "QP {qpn:#x}: direct WQE (PI {:#x}, SL {}) differs from its SQ WQE: {} / {}",
                    p.pi,
                    p.sl,
                    dump_line("page", qpn, p.pi, &page),
                    wqe.unwrap_or_default()
                ));
            }
        }
        // `--dump-data`: the page as compared.
        self.dump_words("dwqe", qpn, p.pi, &page);
    }

    /// Notes that SQ WQE `idx` of `qpn` is taken for execution, its bytes
    /// `raw`:
    /// the WQE of the QP's direct WQE if that rang `idx + 1`.
    fn ran_for_push(&mut self, qpn: u32, idx: u32, raw: &[u8; SQ_WQE_SIZE]) {
        let Some(p) = self.qps.get_mut(&qpn).and_then(|q| q.push.as_mut()) else {
            return;
        };
        if p.wqe.is_none() && idx.wrapping_add(1) & 0xffff == p.pi {
            let mut w = [0u8; DWQE_BYTES];
            w.copy_from_slice(&raw[..DWQE_BYTES]);
            p.wqe = Some(w);
        }
    }

    /// Anything blocked on a receive WQE or CQ space may go on.
    fn kick_blocked(&mut self) {
        for q in self.qps.values_mut() {
            if q.blocked.is_some() {
                q.kick = true;
            }
        }
    }

    /// Acts on one doorbell word.
    pub fn doorbell(&mut self, d: Doorbell) {
        self.stats.doorbells += 1;
        match d.cmd {
            wqe::db::SQ => {
                if let Some(q) = self.qps.get_mut(&d.tag) {
                    q.sq_db = Some(d.index);
                    q.kick = true;
                }
            }
            wqe::db::RQ => {
                if let Some(q) = self.qps.get_mut(&d.tag) {
                    q.rq_db = d.index;
                }
            }
            wqe::db::SRQ => {
                if let Some(s) = self.srqs.get_mut(&d.tag) {
                    s.pi_db = d.index;
                }
            }
            wqe::db::CQ_PTR => {
                if let Some(c) = self.cqs.get_mut(&d.tag) {
                    c.ci_db = d.index;
                }
            }
            wqe::db::CQ_NOTIFY => {
                if let Some(c) = self.cqs.get_mut(&d.tag) {
                    c.ci_db = d.index;
                }
            }
            _ => {}
        }
        self.kick_blocked();
    }

    /// Whether CQ `cqn` is known (tests).
    pub fn has_cq(&self, cqn: u32) -> bool {
        self.cqs.contains_key(&cqn)
    }

    /// The model's SQ consumer index of `qpn` (tests).
    pub fn sq_ci(&self, qpn: u32) -> Option<u32> {
        self.qps.get(&qpn).map(|q| q.sq_ci)
    }
}

/// The RNR timer of IB timer code `t` (IBA table 45: 0 = 655.36 ms,
/// 1 = 0.01 ms ... 31 = 491.52 ms).
pub fn rnr_delay(t: u32) -> Duration {
    const US: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
        245_760, 327_680, 491_520,
    ];
    Duration::from_micros(u64::from(US[(t & 31) as usize]))
}
