// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The firmware: answers command queue (CMQ) commands from the caps table
//! and executes mailboxes against driver memory.
//!
//! It is independent of how descriptors arrive (see `device.rs`), so the
//! unit tests drive it with plain memory.

use crate::bond::{Bond, BondCmd, BondInfo, Chip, PciLoc, MODE_1};
use crate::caps::Caps;
use crate::cmq::{flag, op, op_name, ret, Desc};
use crate::cong::CongCheck;
use crate::engine::{qps, CtxEvent, Host};
use crate::eq::{mb_aeqe, Eq};
use crate::field::Ctx;
use crate::hem::{BtAttr, HemTable};
use crate::hw_v2_fields::{cqc, qpc, Cqc, Qpc};
use crate::mem::Dma;
use crate::trace::Trace;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The resource counts ALLOC_VF_RES gives one function and QUERY_VF_RES
/// reports to a VF (`FUNC_RES_*` in `hns_roce_hw_v2.h`; the BT indexes
/// of ALLOC_VF_RES are the firmware's own business and not kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuncRes {
    /// QPC L0 BTs.
    pub qpc: u32,
    /// SRQC L0 BTs.
    pub srqc: u32,
    /// CQC L0 BTs.
    pub cqc: u32,
    /// MPT L0 BTs.
    pub mpt: u32,
    /// EQC L0 BTs.
    pub eqc: u32,
    /// Scheduling queues (service levels).
    pub qid: u32,
    /// SCCC L0 BTs.
    pub sccc: u32,
    /// GMV BTs.
    pub gmv: u32,
}

impl FuncRes {
    /// The counts of `caps` (a VF's table holds its share).
    pub fn of_caps(c: &Caps) -> Self {
        FuncRes {
            qpc: c.qpc_bt_num,
            srqc: c.srqc_bt_num,
            cqc: c.cqc_bt_num,
            mpt: c.mpt_bt_num,
            eqc: c.eqc_bt_num,
            qid: c.qid_num,
            sccc: c.sccc_bt_num,
            gmv: c.gmv_bt_num,
        }
    }

    /// Reads the two descriptors of ALLOC_VF_RES / QUERY_VF_RES: A
    /// `FUNC_RES_A_*_BT_NUM`, B `FUNC_RES_V_QID_NUM` (115..112),
    /// `FUNC_RES_B_SCCC_BT_NUM`, `FUNC_RES_V_GMV_BT_NUM` (184..176): the
    /// positions a HIP09 PF writes in ALLOC_VF_RES and a VF reads.
    pub fn read(d: &[Desc]) -> Self {
        FuncRes {
            qpc: d[0].get(59, 48),
            srqc: d[0].get(89, 80),
            cqc: d[0].get(121, 112),
            mpt: d[0].get(153, 144),
            eqc: d[0].get(185, 176),
            qid: d[1].get(115, 112),
            sccc: d[1].get(145, 137),
            gmv: d[1].get(184, 176),
        }
    }

    /// Writes the counts at the positions [`FuncRes::read`] reads.
    pub fn write(&self, d: &mut [Desc]) {
        self.write_common(d);
        d[1].set(115, 112, self.qid);
        d[1].set(184, 176, self.gmv);
    }

    /// Writes the counts of a QUERY_PF_RES answer: the QID and GMV BT
    /// counts at the PF's positions (`FUNC_RES_B_QID_NUM` 122..112,
    /// `FUNC_RES_B_GMV_BT_NUM` 176..168).
    pub fn write_pf(&self, d: &mut [Desc]) {
        self.write_common(d);
        d[1].set(122, 112, self.qid);
        d[1].set(176, 168, self.gmv);
    }

    /// The counts at the same positions for a PF and a VF.
    fn write_common(&self, d: &mut [Desc]) {
        d[0].set(59, 48, self.qpc);
        d[0].set(89, 80, self.srqc);
        d[0].set(121, 112, self.cqc);
        d[0].set(153, 144, self.mpt);
        d[0].set(185, 176, self.eqc);
        d[1].set(145, 137, self.sccc);
    }

    fn describe(&self) -> String {
        format!(
            "qpc {} srqc {} cqc {} mpt {} eqc {} qid {} sccc {} gmv {}",
            self.qpc, self.srqc, self.cqc, self.mpt, self.eqc, self.qid, self.sccc, self.gmv
        )
    }
}

/// What a PF's command did to another of its functions, for the device
/// loop to hand to the device presenting that function
/// ([`Firmware::take_func_events`], [`Firmware::from_pf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncEvent {
    /// FUNC_CLEAR of function `.0` (> 0).
    Clear(u32),
    /// ALLOC_VF_RES gave function `.0` these resources.
    Alloc(u32, FuncRes),
    /// ALLOC_VF_RES with nothing but the function id: its resources are
    /// released (`hns_roce_free_vf_resource`).
    Free(u32),
}

impl FuncEvent {
    /// The function it is for.
    pub fn func(&self) -> u32 {
        match *self {
            FuncEvent::Clear(f) | FuncEvent::Alloc(f, _) | FuncEvent::Free(f) => f,
        }
    }
}

/// Mailbox commands (`hns_roce_cmd.h`).
pub mod mb {
    #![allow(missing_docs)]
    pub const CREATE_MPT: u8 = 0x0d;
    pub const DESTROY_MPT: u8 = 0x0f;
    pub const CREATE_CQC: u8 = 0x16;
    pub const DESTROY_CQC: u8 = 0x17;
    pub const WRITE_CQC_TIMER_BT0: u8 = 0x23;
    pub const WRITE_QPC_TIMER_BT0: u8 = 0x33;
    pub const MODIFY_QPC: u8 = 0x41;
    pub const QUERY_QPC: u8 = 0x42;
    pub const MODIFY_CQC: u8 = 0x52;
    pub const QUERY_CQC: u8 = 0x53;
    pub const QUERY_MPT: u8 = 0x62;
    pub const CREATE_SRQ: u8 = 0x70;
    pub const MODIFY_SRQC: u8 = 0x72;
    pub const QUERY_SRQC: u8 = 0x73;
    pub const DESTROY_SRQ: u8 = 0x74;
    pub const CREATE_AEQC: u8 = 0x80;
    pub const MODIFY_AEQC: u8 = 0x81;
    pub const QUERY_AEQC: u8 = 0x82;
    pub const DESTROY_AEQC: u8 = 0x83;
    pub const CREATE_CEQC: u8 = 0x90;
    pub const MODIFY_CEQC: u8 = 0x91;
    pub const QUERY_CEQC: u8 = 0x92;
    pub const DESTROY_CEQC: u8 = 0x93;
    pub const READ_CQC_TIMER_BT0: u8 = 0x27;
    pub const READ_QPC_TIMER_BT0: u8 = 0x37;
    pub const QUERY_SCCC: u8 = 0xa2;
    pub const READ_SCCC_BT0: u8 = 0xa4;
    pub const WRITE_SCCC_BT0: u8 = 0xa5;
}

/// Mailbox completion status for success.
pub const MB_OK: u8 = 1;
/// Mailbox completion status we report for a failed command.
pub const MB_FAIL: u8 = 2;

/// The HEM tables programmed by mailbox, in `CFG_BT_ATTR` order and then
/// the two timer tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// QP contexts.
    Qpc = 0,
    /// SRQ contexts.
    Srqc = 1,
    /// CQ contexts.
    Cqc = 2,
    /// Memory protection table.
    Mpt = 3,
    /// Congestion control contexts.
    Sccc = 4,
    /// QPC timer pages.
    QpcTimer = 5,
    /// CQC timer pages.
    CqcTimer = 6,
}

impl Table {
    fn name(self) -> &'static str {
        [
            "QPC",
            "SRQC",
            "CQC",
            "MPT",
            "SCCC",
            "QPC_TIMER",
            "CQC_TIMER",
        ][self as usize]
    }
}

/// What a BT mailbox command does with base address table entry 0..2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BtOp {
    /// `WRITE_*_BT<step>`: records an address.
    Write,
    /// `READ_*_BT<step>`: returns the recorded address (the RAM ECC
    /// recovery reads BT0 back before writing it again).
    Read,
    /// `DESTROY_*_BT<step>`: forgets it.
    Destroy,
}

impl BtOp {
    fn name(self) -> &'static str {
        match self {
            BtOp::Write => "WRITE",
            BtOp::Read => "READ",
            BtOp::Destroy => "DESTROY",
        }
    }
}

/// Decodes the BT mailbox commands: (table, operation, step). Of the
/// reads only BT0's (0x04, 0x14, 0x24, 0x34) exist: 0x16 is CREATE_CQC.
fn bt_cmd(cmd: u8) -> Option<(Table, BtOp, u32)> {
    let (t, base) = match cmd {
        0x00..=0x02 | 0x04 | 0x08..=0x0a => (Table::Qpc, 0x00),
        0x10..=0x12 | 0x14 | 0x18..=0x1a => (Table::Cqc, 0x10),
        0x20..=0x22 | 0x24 | 0x28..=0x2a => (Table::Mpt, 0x20),
        0x30..=0x32 | 0x34 | 0x38..=0x3a => (Table::Srqc, 0x30),
        mb::WRITE_SCCC_BT0 => return Some((Table::Sccc, BtOp::Write, 0)),
        mb::READ_SCCC_BT0 => return Some((Table::Sccc, BtOp::Read, 0)),
        mb::WRITE_QPC_TIMER_BT0 => return Some((Table::QpcTimer, BtOp::Write, 0)),
        mb::READ_QPC_TIMER_BT0 => return Some((Table::QpcTimer, BtOp::Read, 0)),
        mb::WRITE_CQC_TIMER_BT0 => return Some((Table::CqcTimer, BtOp::Write, 0)),
        mb::READ_CQC_TIMER_BT0 => return Some((Table::CqcTimer, BtOp::Read, 0)),
        _ => return None,
    };
    let rel = cmd - base;
    Some(match rel {
        8.. => (t, BtOp::Destroy, (rel - 8) as u32),
        4.. => (t, BtOp::Read, (rel - 4) as u32),
        _ => (t, BtOp::Write, rel as u32),
    })
}

/// Name of a mailbox command for traces.
pub fn mb_name(cmd: u8) -> String {
    if let Some((t, bop, step)) = bt_cmd(cmd) {
        return format!("{}_{}_BT{}", bop.name(), t.name(), step);
    }
    match cmd {
        mb::CREATE_MPT => "CREATE_MPT",
        mb::DESTROY_MPT => "DESTROY_MPT",
        mb::CREATE_CQC => "CREATE_CQC",
        mb::DESTROY_CQC => "DESTROY_CQC",
        mb::MODIFY_QPC => "MODIFY_QPC",
        mb::QUERY_QPC => "QUERY_QPC",
        mb::MODIFY_CQC => "MODIFY_CQC",
        mb::QUERY_CQC => "QUERY_CQC",
        mb::QUERY_MPT => "QUERY_MPT",
        mb::CREATE_SRQ => "CREATE_SRQ",
        mb::MODIFY_SRQC => "MODIFY_SRQC",
        mb::QUERY_SRQC => "QUERY_SRQC",
        mb::DESTROY_SRQ => "DESTROY_SRQ",
        mb::CREATE_AEQC => "CREATE_AEQC",
        mb::MODIFY_AEQC => "MODIFY_AEQC",
        mb::QUERY_AEQC => "QUERY_AEQC",
        mb::MODIFY_CEQC => "MODIFY_CEQC",
        mb::QUERY_CEQC => "QUERY_CEQC",
        mb::DESTROY_AEQC => "DESTROY_AEQC",
        mb::CREATE_CEQC => "CREATE_CEQC",
        mb::DESTROY_CEQC => "DESTROY_CEQC",
        mb::QUERY_SCCC => "QUERY_SCCC",
        _ => "UNKNOWN",
    }
    .to_string()
}

/// When an injected fault fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultMode {
    /// The next matching command only.
    Once,
    /// Every matching command.
    Always,
}

/// An injected failure: answer CMQ `opcode` with `retval`, or not at all;
/// or (`mailbox`) complete mailbox command `opcode` with status `retval`
/// without executing it, or (`late`, `hold`) execute it and hold its
/// completion event back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The CMQ opcode or mailbox command to fail.
    pub opcode: u16,
    /// A mailbox command rather than a CMQ opcode.
    pub mailbox: bool,
    /// The return code to answer.
    pub retval: u16,
    /// Never answer (the driver's CMQ wait times out).
    pub silent: bool,
    /// A mailbox: run it, but post its completion event only when the
    /// driver posts the next mailbox on the same token slot (after the
    /// driver's wait for it timed out): a late event with a stale token.
    pub late: bool,
    /// A mailbox: run it, but post its completion event only when the
    /// control command `release` comes (the driver's wait goes on
    /// meanwhile: tests widen the window of a verb that waits for it).
    pub hold: bool,
    /// A mailbox: only the one for this tag (object number: the EQN of
    /// CREATE_*EQC) matches.
    pub tag: Option<u32>,
    /// Once or always.
    pub mode: FaultMode,
}

/// Event-mode mailbox slots of the driver (`CMD_MAX_NUM`): the slot of a
/// token is the token modulo this.
const MB_SLOTS: u16 = 32;

impl Fault {
    /// Parses `OPCODE:RETVAL[:once|always]` (numbers decimal or 0x hex);
    /// RETVAL `timeout` leaves the command unanswered. `mbx:CMD:STATUS[:…]`
    /// completes mailbox command CMD with STATUS instead of running it;
    /// STATUS `late` runs it and holds its event back (see
    /// [`Fault::late`]), `hold` until `release` (see [`Fault::hold`]). A mailbox fault may end in `:tag=N`: only the
    /// command for object N matches.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (mailbox, rest) = match s.strip_prefix("mbx:") {
            Some(r) => (true, r),
            None => (false, s),
        };
        let mut parts: Vec<&str> = rest.split(':').collect();
        let tag = match parts.last().and_then(|p| p.strip_prefix("tag=")) {
            Some(t) if mailbox => {
                let t = crate::caps::parse_num(t)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| format!("fault '{s}': bad tag"))?;
                parts.pop();
                Some(t)
            }
            Some(_) => return Err(format!("fault '{s}': only a mailbox fault takes a tag")),
            None => None,
        };
        let mut it = parts.into_iter();
        let num = |x: Option<&str>| {
            x.and_then(crate::caps::parse_num)
                .ok_or_else(|| format!("fault '{s}': expected OPCODE:RETVAL|timeout[:once|always]"))
        };
        let opcode = num(it.next())? as u16;
        let rv = it.next();
        let silent = rv == Some("timeout");
        if silent && mailbox {
            return Err(format!("fault '{s}': a mailbox fault needs a status"));
        }
        let late = rv == Some("late");
        if late && !mailbox {
            return Err(format!("fault '{s}': only a mailbox event can be late"));
        }
        let hold = rv == Some("hold");
        if hold && !mailbox {
            return Err(format!("fault '{s}': only a mailbox event can be held"));
        }
        let retval = if silent || late || hold {
            0
        } else {
            num(rv)? as u16
        };
        let mode = match it.next() {
            None | Some("always") => FaultMode::Always,
            Some("once") => FaultMode::Once,
            Some(m) => return Err(format!("fault '{s}': unknown mode '{m}'")),
        };
        if it.next().is_some() {
            return Err(format!("fault '{s}': trailing fields"));
        }
        Ok(Fault {
            opcode,
            mailbox,
            retval,
            silent,
            late,
            hold,
            tag,
            mode,
        })
    }
}

/// Counters, logged at exit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// CMQ commands (descriptor groups) handled.
    pub commands: u64,
    /// Mailboxes executed.
    pub mailboxes: u64,
    /// Mailboxes that failed.
    pub mailbox_failures: u64,
    /// Commands with an unknown opcode.
    pub unknown: u64,
    /// FUNC_CLEAR commands (a PF's of its other functions included).
    pub func_clears: u64,
    /// Clears of this function (a VF) by its PF's FUNC_CLEAR.
    pub pf_clears: u64,
    /// CREATE_*EQC for an EQ number whose context was still live: the
    /// driver freed (or forgot) an EQ without DESTROY_*EQC, and the
    /// engine would have kept writing EQEs into its pages. `make check`
    /// wants 0.
    pub stale_eqcs: u64,
    /// Mailbox events posted late ([`Fault::late`]).
    pub late_events: u64,
    /// Events posted by the event storm ([`Firmware::storm`]): CEQEs for
    /// CQs, AEQEs for QPs and SRQs, around their create and destroy
    /// mailboxes.
    pub storm_events: u64,
}

/// The asynchronous event the storm posts for a QP: COMM_EST, which both
/// drivers deliver to the QP's event handler (after looking the QP up by
/// number) and nothing else.
pub const STORM_QP_EVENT: u8 = 0x03;
/// The asynchronous event the storm posts for an SRQ: SRQ_LIMIT_REACH,
/// delivered to the SRQ's event handler after the look-up.
pub const STORM_SRQ_EVENT: u8 = 0x08;

/// The object a create or destroy mailbox is for, as the storm sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StormTarget {
    /// A CQ: a CEQE on this completion EQ.
    Cq { cqn: u32, ceqn: u32 },
    /// A QP: a COMM_EST AEQE.
    Qp(u32),
    /// An SRQ: an SRQ_LIMIT_REACH AEQE.
    Srq(u32),
}

/// Firmware state of one function.
pub struct Firmware {
    /// The reported capabilities.
    pub caps: Caps,
    tables: [HemTable; 7],
    /// The congestion control fields of the QPs' contexts.
    cong: CongCheck,
    eqs: BTreeMap<u32, Eq>,
    /// For each live EQ, [`Firmware::cmq_stalls`] when it was created.
    eq_born: BTreeMap<u32, u64>,
    /// CMQ commands left unanswered by a `timeout` fault so far. A driver
    /// whose command queue timed out during its probe takes the queue for
    /// dead and sends nothing more (C's `HNS_ROCE_CMDQ_STATE_FATAL_ERR`),
    /// not even the DESTROY_*EQC of its error path: the EQ contexts it
    /// leaves then wait for a reset, they are not its fault.
    cmq_stalls: u64,
    mb_status: u8,
    faults: Vec<Fault>,
    /// The completion event a `late` fault held back: token, status and
    /// out_param, posted when the driver posts a mailbox on the same slot.
    late: Option<(u16, u8, u64)>,
    /// Completion events `hold` faults held back (token, status,
    /// out_param), and those the `release` control command let go, which
    /// [`Firmware::post_injected`] posts.
    held: Vec<(u16, u8, u64)>,
    released: Vec<(u16, u8, u64)>,
    /// Completion events asked for through the control channel
    /// (`ceq:CQN`), posted into CEQ 0 by [`Firmware::post_injected`].
    injected_ceqes: Vec<u32>,
    /// Asynchronous events asked for through the control channel
    /// (`aeq:TYPE:SUB:QUEUE`), posted by [`Firmware::post_injected`].
    injected: Vec<(u8, u8, u32)>,
    /// Abnormal interrupts asked for through the control channel
    /// (`abn:STATUS`, `ecc:TYPE:TAG`): the status bits each one sets,
    /// taken by the device loop ([`Firmware::take_abnormal`]).
    abnormal: Vec<u32>,
    /// The 1-bit RAM ECC error the next `QUERY_RAM_ECC` reports
    /// (`ecc:TYPE:TAG`): resource type and index; reported once.
    ram_ecc: Option<(u32, u32)>,
    irqs: Vec<usize>,
    /// GIDs by table index: four GID words as the driver sends them and
    /// a word with the GID type in bits 1..0 (CFG_GMV_TBL on HIP09,
    /// CFG_SGID_TB on HIP08).
    gids: BTreeMap<u32, [u32; 5]>,
    /// Source MACs by table index (CFG_SMAC_TB, HIP08).
    smacs: BTreeMap<u32, [u8; 6]>,
    /// The SCC context clear flag of HIP08's QP creation: RESET_SCCC
    /// lowers it, CLR_SCCC (done at once) raises it, QUERY_SCCC reads it.
    sccc_clr_done: bool,
    /// QUERY_SCCC answers still to say "not done" whatever the flag
    /// (`sccc-busy:N`): a slow clear, which keeps the driver in HIP08's
    /// QP creation for N polls (tests widen a race window with it).
    sccc_busy: u32,
    /// Create and destroy mailboxes of CQs, QPs and SRQs still to get an
    /// event storm (`storm:N`, `storm:off`): for each, one event for the
    /// object's number posted before the mailbox's completion and one
    /// after it ([`Stats::storm_events`] counts them). QPs have no create
    /// or destroy mailbox of their own: their first MODIFY_QPC out of
    /// RESET and the MODIFY_QPC back to RESET stand for them.
    storm: u32,
    gmv_bt: BTreeMap<u32, u64>,
    /// PF: the resources ALLOC_VF_RES gave each function, by function id.
    pub func_res: BTreeMap<u32, FuncRes>,
    /// PF: commands that act on another function, for the device loop.
    func_events: Vec<FuncEvent>,
    /// VF: what its PF's ALLOC_VF_RES gave it (not what QUERY_VF_RES
    /// answers, which is the VF's table; a difference is noted).
    pub pf_alloc: Option<FuncRes>,
    /// Counters.
    pub stats: Stats,
    /// Trace of every descriptor and mailbox.
    pub trace: Trace,
    /// Context changes for the data engine (drained by it).
    ctx_events: Vec<CtxEvent>,
    /// Where the function sits on PCI (the glue's identity word, else
    /// bus 0 and the device index: `Device::sync_loc`); bond commands
    /// and masks use its function number.
    pub loc: PciLoc,
    /// The function's Ethernet port: up unless the `link:down` control
    /// command took it down. The engine's routing reads it.
    pub port_up: bool,
    /// The chip this function is on: the bond table, shared by the
    /// functions of one process (`main.rs`; a lone firmware has its own).
    pub chip: Rc<RefCell<Chip>>,
}

/// `TYPE:SUBTYPE:QUEUE` of an `aeq:` control command: event type and
/// subtype (8 bits each) and the QP, CQ or SRQ number (24 bits).
fn parse_event(s: &str) -> Option<(u8, u8, u32)> {
    let mut it = s.split(':').map(crate::caps::parse_num);
    let ev = u8::try_from(it.next()??).ok()?;
    let sub = u8::try_from(it.next()??).ok()?;
    let queue = u32::try_from(it.next()??).ok().filter(|q| *q < 1 << 24)?;
    it.next().is_none().then_some((ev, sub, queue))
}

/// `TYPE:TAG` of an `ecc:` control command: the resource type
/// (`enum ecc_resource_type`) and index the RAM ECC query reports.
fn parse_ecc(s: &str) -> Option<(u32, u32)> {
    let mut it = s.split(':').map(crate::caps::parse_num);
    let ty = u32::try_from(it.next()??).ok()?;
    let tag = u32::try_from(it.next()??).ok()?;
    it.next().is_none().then_some((ty, tag))
}

impl Firmware {
    /// Firmware answering from `caps`.
    pub fn new(caps: Caps, faults: Vec<Fault>, trace: Trace) -> Self {
        let mut fw = Firmware {
            caps,
            tables: Default::default(),
            eqs: BTreeMap::new(),
            eq_born: BTreeMap::new(),
            cmq_stalls: 0,
            mb_status: MB_OK,
            faults,
            late: None,
            held: Vec::new(),
            released: Vec::new(),
            injected_ceqes: Vec::new(),
            injected: Vec::new(),
            abnormal: Vec::new(),
            ram_ecc: None,
            irqs: Vec::new(),
            gids: BTreeMap::new(),
            smacs: BTreeMap::new(),
            cong: CongCheck::default(),
            sccc_clr_done: false,
            sccc_busy: 0,
            storm: 0,
            gmv_bt: BTreeMap::new(),
            func_res: BTreeMap::new(),
            func_events: Vec::new(),
            pf_alloc: None,
            stats: Stats::default(),
            trace,
            ctx_events: Vec::new(),
            loc: PciLoc::default(),
            port_up: true,
            chip: Rc::default(),
        };
        fw.reset_tables();
        fw
    }

    fn reset_tables(&mut self) {
        self.cong.clear();
        let c = &self.caps;
        // A PF's driver divides the totals QUERY_PF_RES reports by its
        // function count: its L0 BTs are its share.
        let n = c.bt_divisor();
        let sizes = [
            (c.qpc_sz as u32, c.qpc_bt_num / n),
            (c.srqc_entry_sz as u32, c.srqc_bt_num / n),
            (c.cqc_entry_sz as u32, c.cqc_bt_num / n),
            (c.mtpt_entry_sz as u32, c.mpt_bt_num / n),
            (c.sccc_sz as u32, c.sccc_bt_num / n),
            (4096, 1),
            (4096, 1),
        ];
        for (t, (sz, n)) in self.tables.iter_mut().zip(sizes) {
            *t = HemTable {
                obj_size: sz,
                bt_num: n,
                ..Default::default()
            };
        }
        self.eqs.clear();
        self.eq_born.clear();
        self.ctx_events.clear();
        self.ctx_events.push(CtxEvent::Reset);
        self.gids.clear();
        self.smacs.clear();
        self.sccc_clr_done = false;
        self.gmv_bt.clear();
        self.mb_status = MB_OK;
        self.held.clear();
        self.released.clear();
    }

    /// A function reset carried out by the NIC side (hclge's
    /// CFG_RST_TRIGGER, [`crate::nic::NicCmq::step_reset`]): the
    /// function's contexts, HEM tables and EQs are gone, as after
    /// FUNC_CLEAR, and the trace says so.
    pub fn function_reset(&mut self) {
        self.reset_tables();
        self.trace
            .note("function reset by the NIC: RoCE state cleared");
        self.trace.flush();
    }

    /// The abnormal interrupts asked for since the last call: the status
    /// bits of each (0: a RAM ECC error), for the device loop to set in
    /// `VF_ABN_INT_ST` before raising the abnormal vector.
    pub fn take_abnormal(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.abnormal)
    }

    /// MSI-X vectors to raise, in order, since the last call.
    pub fn take_irqs(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.irqs)
    }

    /// PF: what its last commands did to its other functions (FUNC_CLEAR
    /// and ALLOC_VF_RES of a function id > 0), for the device loop to
    /// hand to the devices presenting them ([`Firmware::from_pf`]).
    pub fn take_func_events(&mut self) -> Vec<FuncEvent> {
        std::mem::take(&mut self.func_events)
    }

    /// VF: carries out what its PF did to it. A FUNC_CLEAR clears the
    /// function's state (HEM BTs, EQs, GIDs: as its own FUNC_CLEAR);
    /// ALLOC_VF_RES is recorded and compared with the VF's table, which
    /// is what QUERY_VF_RES answers; a release is noted.
    pub fn from_pf(&mut self, ev: &FuncEvent) {
        match *ev {
            FuncEvent::Clear(f) => {
                self.trace.note(&format!(
                    "FUNC_CLEAR of function {f} by the PF: state cleared"
                ));
                self.stats.pf_clears += 1;
                self.reset_tables();
            }
            FuncEvent::Alloc(f, res) => {
                let own = FuncRes::of_caps(&self.caps);
                let cmp = if res == own {
                    "as this VF's QUERY_VF_RES answers".to_string()
                } else {
                    format!("QUERY_VF_RES answers {}", own.describe())
                };
                self.trace.note(&format!(
                    "ALLOC_VF_RES of function {f} by the PF: {} ({cmp})",
                    res.describe()
                ));
                self.pf_alloc = Some(res);
            }
            FuncEvent::Free(f) => {
                self.trace
                    .note(&format!("ALLOC_VF_RES of function {f} by the PF: released"));
                self.pf_alloc = None;
            }
        }
    }

    /// The table `t` (for tests and the data engine).
    pub fn table(&self, t: Table) -> &HemTable {
        &self.tables[t as usize]
    }

    /// Carries out a command of the control channel (what the guest wrote
    /// to `/sys/module/hns_sim/parameters/fault`): a fault in `--fault`'s
    /// syntax, armed from now on, or `clear`, which disarms every fault;
    /// also `abn:`, `ecc:`, `aeq:` and `ceq:CQN` injections, `release`
    /// (the events of `hold` faults), `sccc-busy:N` (the next N
    /// QUERY_SCCC answers say not done), `storm:N` / `storm:off` (events
    /// around the next N create and destroy mailboxes of CQs, QPs and
    /// SRQs, [`Firmware::storm`]), `link:up`/`link:down`
    /// (the function's port, [`Firmware::port_up`]) and `hw-reset`: a
    /// hardware reset of the function has happened (its contexts and HEM
    /// tables are gone, as after FUNC_CLEAR; the driver, told by the NIC's
    /// reset count, sends no FUNC_CLEAR of its own).
    /// The trace notes it, so that a run's trace shows where each fault
    /// was armed.
    pub fn control(&mut self, cmd: &str) -> Result<(), String> {
        let cmd = cmd.trim();
        if cmd == "clear" {
            self.faults.clear();
            self.ram_ecc = None;
            self.sccc_busy = 0;
            self.storm = 0;
            self.late = None;
            self.released.append(&mut self.held);
        } else if let Some(rest) = cmd.strip_prefix("storm:") {
            self.storm = if rest == "off" {
                0
            } else {
                crate::caps::parse_num(rest)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| format!("control '{cmd}': expected storm:N or storm:off"))?
            };
        } else if cmd == "release" {
            self.released.append(&mut self.held);
        } else if cmd == "hw-reset" {
            self.reset_tables();
        } else if let Some(rest) = cmd.strip_prefix("ceq:") {
            self.injected_ceqes.push(
                crate::caps::parse_num(rest)
                    .and_then(|v| u32::try_from(v).ok())
                    .filter(|q| *q < 1 << 24)
                    .ok_or_else(|| format!("control '{cmd}': expected ceq:CQN"))?,
            );
        } else if let Some(rest) = cmd.strip_prefix("sccc-busy:") {
            self.sccc_busy = crate::caps::parse_num(rest)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("control '{cmd}': expected sccc-busy:N"))?;
        } else if let Some(rest) = cmd.strip_prefix("abn:") {
            let st = crate::caps::parse_num(rest)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("control '{cmd}': expected abn:STATUS"))?;
            self.abnormal.push(st);
        } else if let Some(rest) = cmd.strip_prefix("ecc:") {
            let rec =
                parse_ecc(rest).ok_or_else(|| format!("control '{cmd}': expected ecc:TYPE:TAG"))?;
            self.ram_ecc = Some(rec);
            // The engine raises the abnormal interrupt with no status bit
            // for a RAM ECC error.
            self.abnormal.push(0);
        } else if let Some(rest) = cmd.strip_prefix("link:") {
            // The function's port, as hclge's link poll would see it.
            self.port_up = match rest {
                "up" => true,
                "down" => false,
                _ => return Err(format!("control '{cmd}': expected link:up or link:down")),
            };
        } else if let Some(rest) = cmd.strip_prefix("aeq:") {
            // QUEUE may be a list (Q1,Q2,...): one AEQE each, all written
            // before the interrupt, so that one pass of the driver's AEQ
            // handler finds them together.
            let (head, queues) = rest.rsplit_once(':').unwrap_or((rest, ""));
            let mut evs = Vec::new();
            for q in queues.split(',') {
                evs.push(parse_event(&format!("{head}:{q}")).ok_or_else(|| {
                    format!("control '{cmd}': expected aeq:TYPE:SUBTYPE:QUEUE[,QUEUE...]")
                })?);
            }
            self.injected.extend(evs);
        } else {
            self.faults.push(Fault::parse(cmd)?);
        }
        self.trace.note(&format!("control: {cmd}"));
        Ok(())
    }

    /// Executes one command: `descs` is the chain of descriptors linked by
    /// NEXT, answered in place (retval and response data). Returns false
    /// when an injected fault says not to answer at all.
    pub fn execute(&mut self, mem: &impl Dma, descs: &mut [Desc]) -> bool {
        let Some(first) = descs.first() else {
            return true;
        };
        let opcode = first.opcode;
        self.stats.commands += 1;
        for (i, d) in descs.iter().enumerate() {
            self.trace.cmq('>', d, i);
        }
        let injected = self
            .faults
            .iter()
            .position(|f| !f.mailbox && f.opcode == opcode);
        let rv = if let Some(i) = injected {
            let f = self.faults[i];
            if f.mode == FaultMode::Once {
                self.faults.remove(i);
            }
            if f.silent {
                self.cmq_stalls += 1;
                self.trace.note(&format!(
                    "fault: {:#06x} {} not answered",
                    opcode,
                    op_name(opcode)
                ));
                return false;
            }
            self.trace.note(&format!(
                "fault: {:#06x} {} answered {}",
                opcode,
                op_name(opcode),
                f.retval
            ));
            f.retval
        } else {
            self.dispatch(mem, descs)
        };
        for d in descs.iter_mut() {
            d.retval = rv;
            d.flag |= flag::OUT;
        }
        for (i, d) in descs.iter().enumerate() {
            self.trace.cmq('<', d, i);
        }
        true
    }

    fn dispatch(&mut self, mem: &impl Dma, d: &mut [Desc]) -> u16 {
        let c = self.caps.clone();
        if c.is_hip08() {
            if let Some(rv) = self.dispatch_hip08(mem, d) {
                return rv;
            }
        }
        if c.is_vf() {
            if let Some(rv) = self.dispatch_vf(d) {
                return rv;
            }
        }
        match d[0].opcode {
            op::QUERY_HW_VER => {
                d[0].data = [0; 6];
                d[0].set(15, 0, c.vendor_id as u32);
                d[0].set(31, 16, c.hw_version as u32);
            }
            op::QUERY_FW_VER => d[0].data = [c.fw_ver, 0, 0, 0, 0, 0],
            op::QUERY_FUNC_INFO => d[0].data = [c.func_num, 0, 0, 0, 0, 0],
            op::ALLOC_VF_RES => return self.alloc_vf_res(d),
            op::CFG_GLOBAL_PARAM
            | op::CLEAR_EXTDB_LIST_INFO
            | op::CFG_EXT_LLM
            | op::CFG_ENTRY_SIZE => {
                if d[0].opcode == op::CFG_ENTRY_SIZE {
                    // Type 1 = QPC, 2 = SCCC; the size is in word 5.
                    match d[0].data[0] {
                        1 => self.tables[Table::Qpc as usize].obj_size = d[0].data[5],
                        2 => self.tables[Table::Sccc as usize].obj_size = d[0].data[5],
                        _ => {}
                    }
                }
            }
            op::SWITCH_PARAMETER_CFG => {
                // VF_SWITCH_VF_ID (42..35): a function of this PF.
                let vf = d[0].get(42, 35);
                if vf >= c.func_num.max(1) {
                    self.trace.note(&format!(
                        "SWITCH_PARAMETER_CFG of function {vf}: not a function of this PF ({} functions)",
                        c.func_num
                    ));
                    return ret::PARA_ERR;
                }
                // A read returns the current parameters (none set); the
                // driver writes them back modified.
                if d[0].is_read() {
                    let vf = d[0].data[1];
                    d[0].data = [0, vf, 0, 0, 0, 0];
                }
            }
            op::QUERY_PF_CAPS_NUM => return self.query_caps(d),
            op::QUERY_PF_RES => {
                if d.len() < 2 {
                    return ret::PARA_ERR;
                }
                d[0].data = [0; 6];
                d[1].data = [0; 6];
                FuncRes::of_caps(&c).write_pf(d);
            }
            op::QUERY_PF_TIMER_RES => {
                d[0].data = [0; 6];
                d[0].set(60, 48, c.qpc_timer_num);
                d[0].set(91, 80, c.cqc_timer_num);
            }
            op::CFG_BT_ATTR => {
                for (i, t) in self.tables.iter_mut().take(5).enumerate() {
                    let b = 32 * i as u32;
                    t.attr = BtAttr {
                        ba_pgsz: d[0].get(b + 3, b),
                        buf_pgsz: d[0].get(b + 7, b + 4),
                        hopnum: d[0].get(b + 9, b + 8),
                    };
                }
            }
            op::CFG_GMV_BT if d[0].is_read() => {
                // The recorded BT address of index CFG_GMV_BT_IDX, as a page
                // number in BA_L / BA_H (the RAM ECC recovery reads it back
                // and writes it again).
                let idx = d[0].data[2];
                let Some(&ba) = self.gmv_bt.get(&idx) else {
                    return ret::PARA_ERR;
                };
                let pfn = ba >> 12;
                // CAST: the low and high words of the page number.
                d[0].data[0] = pfn as u32;
                d[0].set(51, 32, (pfn >> 32) as u32);
            }
            op::QUERY_RAM_ECC => {
                // 1BIT_ERR, RES_TYPE, TAG in words 0..2; the armed error is
                // reported once.
                let (err, ty, tag) = match self.ram_ecc.take() {
                    Some((ty, tag)) => (1, ty, tag),
                    None => (0, 0, 0),
                };
                d[0].data = [err, ty, tag, 0, 0, 0];
            }
            op::CFG_GMV_BT => {
                let ba = ((d[0].get(51, 32) as u64) << 32 | d[0].data[0] as u64) << 12;
                self.gmv_bt.insert(d[0].data[2], ba);
            }
            op::CFG_GMV_TBL => {
                if d.len() < 2 {
                    return ret::PARA_ERR;
                }
                let idx = d[1].get(71, 64);
                let g = [
                    d[0].data[0],
                    d[0].data[1],
                    d[0].data[2],
                    d[0].data[3],
                    d[0].data[4],
                ];
                self.set_gid(idx, g);
            }
            op::QUERY_COUNTER => {
                // 22 counters, three per descriptor, all zero; the chain's
                // NEXT flags come back as sent.
                for x in d.iter_mut() {
                    x.data = [0; 6];
                }
            }
            op::CFG_DCQCN_PARAM | op::CFG_LDCP_PARAM | op::CFG_HC3_PARAM | op::CFG_DIP_PARAM => {
                if d[0].is_read() {
                    d[0].data = [0; 6];
                }
            }
            op::FUNC_CLEAR => {
                // rst_funcid_en (word 0): the function to clear, 0 = this
                // one (a VF knows only itself: its driver sends 0).
                let func = d[0].data[0];
                if func >= c.func_num.max(1) {
                    self.trace.note(&format!(
                        "FUNC_CLEAR of function {func}: not a function of this PF ({} functions)",
                        c.func_num
                    ));
                    return ret::PARA_ERR;
                }
                if d[0].is_read() {
                    // Done at once.
                    d[0].set(32, 32, 1);
                } else {
                    self.stats.func_clears += 1;
                    if func == 0 {
                        self.reset_tables();
                    } else {
                        // Another function of this PF: the device loop
                        // clears the device presenting it.
                        self.func_events.push(FuncEvent::Clear(func));
                    }
                }
            }
            op::QUERY_MB_ST => {
                d[0].data = [self.mb_status as u32, 0, 0, 0, 0, 0];
            }
            op::POST_MB => self.post_mailbox(mem, &d[0]),
            op::SET_BOND_INFO | op::CLEAR_BOND_INFO | op::CHANGE_ACTIVE_PORT
                if c.cap_flags & crate::caps::flag::BOND != 0 && !c.is_vf() =>
            {
                return self.bond_cmd(&d[0]);
            }
            other => return self.refuse(&format!("unknown opcode {other:#06x}")),
        }
        ret::SUCCESS
    }

    /// SET_BOND_INFO, CHANGE_ACTIVE_PORT, CLEAR_BOND_INFO from a PF with
    /// the BOND cap: the payload (`struct hns_roce_bond_info`) goes into
    /// the chip's bond table under this function's bus and the bond id,
    /// with this function as the bond's main one. The real firmware's
    /// checks are unknown; the model refuses (PARA_ERR) only a bond id
    /// over 1 and a hash policy over 2, and notes in the trace what looks
    /// wrong but the C driver may send (it only warns about some).
    fn bond_cmd(&mut self, d: &Desc) -> u16 {
        let cmd = match d.opcode {
            op::SET_BOND_INFO => BondCmd::Set,
            op::CHANGE_ACTIVE_PORT => BondCmd::Change,
            _ => BondCmd::Clear,
        };
        let info = BondInfo::from_words(&d.data);
        let me = self.loc;
        let id = info.bond_id;
        let key = (me.bus, id);
        let head = format!(
            "bond {id}: {} from function {} (bus {:#04x})",
            cmd.name(),
            me.func(),
            me.bus
        );
        let mut notes = Vec::new();
        let mut chip = self.chip.borrow_mut();
        let rv = if id > 1 || (cmd != BondCmd::Clear && info.hash > 2) {
            chip.counts.entry(key).or_default().refused += 1;
            let why = if id > 1 {
                "bond id over 1"
            } else {
                "hash policy over 2"
            };
            notes.push(format!(
                "{head}: {}: {why}: answered PARA_ERR",
                info.describe()
            ));
            ret::PARA_ERR
        } else if cmd == BondCmd::Clear {
            chip.counts.entry(key).or_default().clear += 1;
            match chip.bonds.remove(&key) {
                Some(b) if b.main != me => notes.push(format!(
                    "{head}: cleared (set by function {})",
                    b.main.func()
                )),
                Some(_) => notes.push(format!("{head}: cleared")),
                None => notes.push(format!("{head}: check: no such bond")),
            }
            ret::SUCCESS
        } else {
            notes.push(format!("{head}: {}", info.describe()));
            let check = |s: String| format!("bond {id}: check: {s}");
            let f = me.func();
            if info.slave_mask & 1 << f == 0 {
                notes.push(check(format!(
                    "main function {f} not in slaves {:#x}",
                    info.slave_mask
                )));
            }
            if info.active_mask & !info.slave_mask != 0 {
                notes.push(check(format!(
                    "active {:#x} not within slaves {:#x}",
                    info.active_mask, info.slave_mask
                )));
            }
            if info.active_cnt != info.active_mask.count_ones() {
                notes.push(check(format!(
                    "active count {} but active mask {:#x}",
                    info.active_cnt, info.active_mask
                )));
            }
            if info.mode == MODE_1 && info.active_cnt != 1 {
                notes.push(check(format!(
                    "mode 1 with {} active slaves",
                    info.active_cnt
                )));
            }
            if info.mode > 1 {
                notes.push(check(format!(
                    "unknown mode {:#x} (routed as 2/4)",
                    info.mode
                )));
            }
            if info.mode == MODE_1 && info.hash != 0 {
                notes.push(check(format!("hash policy {} in mode 1", info.hash)));
            }
            let old = chip.bonds.insert(key, Bond { info, main: me });
            match old {
                None if cmd == BondCmd::Change => notes.push(check("no SET before".into())),
                Some(b) if b.main != me => notes.push(format!(
                    "bond {id}: main function now {f} (was {})",
                    b.main.func()
                )),
                _ => {}
            }
            let c = chip.counts.entry(key).or_default();
            if cmd == BondCmd::Set {
                c.set += 1;
            } else {
                c.change += 1;
            }
            ret::SUCCESS
        };
        drop(chip);
        for n in notes {
            self.trace.note(&n);
        }
        rv
    }

    /// Refuses a command this function does not know: NOT_EXIST, counted
    /// as unknown, with a trace note `<why>: answered NOT_EXIST`.
    fn refuse(&mut self, why: &str) -> u16 {
        self.stats.unknown += 1;
        self.trace.note(&format!("{why}: answered NOT_EXIST"));
        ret::NOT_EXIST
    }

    /// Stores GID table entry `idx` (four GID words and the type word), or
    /// removes it when the GID is all zero (how both drivers delete one).
    fn set_gid(&mut self, idx: u32, g: [u32; 5]) {
        if g[..4].iter().all(|w| *w == 0) {
            self.gids.remove(&idx);
        } else {
            self.gids.insert(idx, g);
        }
    }

    /// The commands whose answer differs on a HIP08 function: the GID and
    /// MAC tables and the SCC context clear of QP creation, which only
    /// HIP08 has, and the HIP09-only commands, which a HIP08 firmware
    /// does not know (NOT_EXIST, counted as unknown). `None`: answered as
    /// on HIP09.
    fn dispatch_hip08(&mut self, mem: &impl Dma, d: &mut [Desc]) -> Option<u16> {
        let opcode = d[0].opcode;
        match opcode {
            op::QUERY_FUNC_INFO
            | op::CFG_ENTRY_SIZE
            | op::CFG_GMV_TBL
            | op::CFG_GMV_BT
            | op::QUERY_RAM_ECC => {
                return Some(self.refuse(&format!(
                    "HIP08: opcode {opcode:#06x} {} is HIP09-only",
                    op_name(opcode)
                )));
            }
            op::CFG_SGID_TB => {
                // Word 0 bits 7..0 the table index, words 1..4 the GID,
                // word 5 bits 1..0 its type (struct hns_roce_cfg_sgid_tb).
                let idx = d[0].get(7, 0);
                let g = [
                    d[0].data[1],
                    d[0].data[2],
                    d[0].data[3],
                    d[0].data[4],
                    d[0].get(161, 160),
                ];
                self.set_gid(idx, g);
            }
            op::CFG_SMAC_TB => {
                // Word 0 bits 7..0 the index (the port), word 1 MAC bytes
                // 0..3, word 2 bits 15..0 bytes 4..5.
                let mut mac = [0u8; 6];
                mac[..4].copy_from_slice(&d[0].data[1].to_le_bytes());
                // CAST: the 16-bit field.
                mac[4..].copy_from_slice(&(d[0].get(79, 64) as u16).to_le_bytes());
                self.smacs.insert(d[0].get(7, 0), mac);
            }
            op::RESET_SCCC => self.sccc_clr_done = false,
            op::CLR_SCCC => {
                // Word 0: the QPN whose SCC context is cleared; the clear
                // is done at once.
                let qpn = d[0].data[0];
                if let Err(e) = self.context_clear(mem, Table::Sccc, qpn) {
                    // A QPN whose SCCC page the driver has not mapped has
                    // nothing to clear in the model.
                    self.trace
                        .note(&format!("CLR_SCCC: SCCC of QP {qpn:#x} not cleared: {e}"));
                }
                self.sccc_clr_done = true;
            }
            op::QUERY_SCCC => {
                // Word 0: the clear-done flag, held down while a slow
                // clear was asked for.
                let done = self.sccc_clr_done && self.sccc_busy == 0;
                self.sccc_busy = self.sccc_busy.saturating_sub(1);
                d[0].data = [u32::from(done), 0, 0, 0, 0, 0];
            }
            _ => return None,
        }
        Some(ret::SUCCESS)
    }

    /// ALLOC_VF_RES (PF): records what each function gets; a descriptor
    /// pair with nothing but `FUNC_RES_A_VF_ID` releases the function's
    /// resources (`hns_roce_free_vf_resource`). What it does to a VF (id
    /// > 0) goes to the device presenting it as a [`FuncEvent`].
    fn alloc_vf_res(&mut self, d: &mut [Desc]) -> u16 {
        if d.len() < 2 {
            return ret::PARA_ERR;
        }
        let func = d[0].get(7, 0);
        let funcs = self.caps.func_num.max(1);
        if func >= funcs {
            self.trace.note(&format!(
                "ALLOC_VF_RES of function {func}: not a function of this PF ({funcs} functions)"
            ));
            return ret::PARA_ERR;
        }
        let res = FuncRes::read(d);
        let ev = if res == FuncRes::default() {
            self.func_res.remove(&func);
            FuncEvent::Free(func)
        } else {
            self.func_res.insert(func, res);
            FuncEvent::Alloc(func, res)
        };
        if funcs > 1 {
            // Only with VFs: a lone PF's trace stays as it was.
            let what = match ev {
                FuncEvent::Alloc(_, r) => r.describe(),
                _ => "released".to_string(),
            };
            self.trace
                .note(&format!("ALLOC_VF_RES: function {func}: {what}"));
        }
        if func > 0 {
            self.func_events.push(ev);
        }
        ret::SUCCESS
    }

    /// The VF personality (`Caps::is_vf`): the VF's queries, and the
    /// PF-only commands, which a VF's firmware refuses (NOT_EXIST,
    /// counted as unknown, with a trace note). `None`: answered as on the
    /// PF (QUERY_HW_VER, QUERY_FW_VER, CFG_BT_ATTR, CLEAR_EXTDB_LIST_INFO,
    /// the GMV commands, FUNC_CLEAR of itself, the mailbox).
    fn dispatch_vf(&mut self, d: &mut [Desc]) -> Option<u16> {
        let opcode = d[0].opcode;
        match opcode {
            op::QUERY_FUNC_INFO
            | op::CFG_GLOBAL_PARAM
            | op::SWITCH_PARAMETER_CFG
            | op::QUERY_PF_CAPS_NUM
            | op::QUERY_PF_RES
            | op::QUERY_PF_TIMER_RES
            | op::ALLOC_VF_RES
            | op::CFG_ENTRY_SIZE
            | op::CFG_EXT_LLM
            | op::QUERY_COUNTER => Some(self.refuse(&format!(
                "VF: opcode {opcode:#06x} {} is PF-only",
                op_name(opcode)
            ))),
            // The PF's caps layout (6 descriptors).
            op::QUERY_VF_CAPS_NUM => Some(self.query_caps(d)),
            op::QUERY_VF_RES => {
                if d.len() < 2 {
                    return Some(ret::PARA_ERR);
                }
                d[0].data = [0; 6];
                d[1].data = [0; 6];
                FuncRes::of_caps(&self.caps).write(d);
                Some(ret::SUCCESS)
            }
            _ => None,
        }
    }

    fn query_caps(&mut self, d: &mut [Desc]) -> u16 {
        let c = &self.caps;
        if d.len() < 5 {
            return ret::PARA_ERR;
        }
        for x in d.iter_mut() {
            x.data = [0; 6];
        }
        // Descriptor 0: byte-oriented (struct hns_roce_query_pf_caps_a).
        let a = &mut d[0];
        a.set_bytes(0, &[1, c.local_ca_ack_delay]);
        a.set_bytes(2, &c.max_sq_sg.to_le_bytes());
        a.set_bytes(4, &c.max_sq_inline.to_le_bytes());
        a.set_bytes(6, &c.max_rq_sg.to_le_bytes());
        a.set_bytes(12, &(c.qpc_timer_num as u16).to_le_bytes());
        a.set_bytes(14, &(c.cqc_timer_num as u16).to_le_bytes());
        a.set_bytes(16, &c.max_srq_sges.to_le_bytes());
        a.set_bytes(
            18,
            &[
                c.num_aeq_vectors,
                c.num_other_vectors,
                c.max_sq_desc_sz,
                c.max_rq_desc_sz,
                0,
                c.cqe_sz,
            ],
        );
        // Descriptor 1 (caps_b).
        let b = &mut d[1];
        b.set_bytes(
            0,
            &[
                c.mtpt_entry_sz,
                c.irrl_entry_sz,
                c.trrl_entry_sz,
                c.cqc_entry_sz,
                c.srqc_entry_sz,
                c.idx_entry_sz,
                c.sccc_sz,
                c.max_mtu,
            ],
        );
        b.set_bytes(8, &c.qpc_sz.to_le_bytes());
        b.set_bytes(10, &4096u16.to_le_bytes());
        b.set_bytes(12, &4096u16.to_le_bytes());
        b.set_bytes(14, &[c.min_cqes, c.min_wqes]);
        b.set_bytes(16, &c.page_size_cap.to_le_bytes());
        b.set_bytes(
            20,
            &[
                c.pkey_table_len,
                c.phy_num_uars,
                c.ctx_hop_num,
                c.pbl_hop_num,
            ],
        );
        // Descriptor 2 (caps_c).
        let x = &mut d[2];
        x.set(19, 0, c.num_pds_log);
        x.set(31, 20, c.cap_flags & 0xfff);
        x.set(51, 32, c.num_cqs_log);
        x.set(60, 52, c.max_gid);
        x.set(86, 64, c.cq_depth_log);
        x.set(91, 87, c.num_xrcds_log);
        x.set(115, 96, c.num_mrws_log);
        x.set(147, 128, c.num_qps_log);
        x.set(155, 148, c.max_ord);
        x.set_bytes(20, &c.sq_depth_log.to_le_bytes());
        x.set_bytes(22, &c.sq_depth_log.to_le_bytes());
        // Descriptor 3 (caps_d).
        let x = &mut d[3];
        x.set(19, 0, c.num_srqs_log);
        x.set(21, 20, c.rqwqe_hop_num);
        x.set(23, 22, c.ex_sge_hop_num);
        x.set(25, 24, c.sqwqe_hop_num);
        x.set(29, 26, c.cong_cap);
        x.set_bytes(4, &c.srq_depth_log.to_le_bytes());
        x.set_bytes(6, &((c.cap_flags >> 12) as u16).to_le_bytes());
        x.set(85, 64, c.ceq_depth_log);
        x.set(95, 86, c.num_ceqs);
        x.set(117, 96, c.aeq_depth_log);
        x.set(127, 122, c.default_alg);
        x.set(147, 128, c.rsv_pds);
        x.set(155, 148, c.num_uars_log);
        x.set(179, 160, c.rsv_qps);
        x.set(187, 180, c.rsv_uars);
        // Descriptor 4 (caps_e).
        let x = &mut d[4];
        x.set(19, 0, c.rsv_mrws);
        x.set(31, 20, c.chunk_size_shift);
        x.set(51, 32, c.rsv_cqs);
        x.set(63, 52, c.rsv_xrcds);
        x.set(83, 64, c.rsv_srqs);
        x.set(115, 96, c.rsv_lkeys);
        // Descriptor 5 (caps_f, HIP09).
        if let Some(f) = d.get_mut(5) {
            f.data[0] = c.max_ack_req_msg_len;
        }
        ret::SUCCESS
    }

    fn post_mailbox(&mut self, mem: &impl Dma, d: &Desc) {
        let in_param = d.get64(0);
        let out_param = d.get64(2);
        let cmd = (d.data[4] & 0xff) as u8;
        let tag = d.data[4] >> 8;
        let token = (d.data[5] & 0xffff) as u16;
        let event = d.data[5] >> 16 & 1 != 0;
        self.stats.mailboxes += 1;
        self.trace
            .mbx_in(cmd, &mb_name(cmd), tag, in_param, out_param, event, token);
        if event {
            self.post_late(mem, token);
        }
        let injected = self.faults.iter().position(|f| {
            f.mailbox && f.opcode == u16::from(cmd) && f.tag.is_none_or(|t| t == tag)
        });
        let mut hold = false;
        let mut until_release = false;
        let storm_before = self.storm_probe(mem, cmd, tag);
        let status =
            if let Some(i) = injected.filter(|&i| self.faults[i].late || self.faults[i].hold) {
                until_release = self.faults[i].hold;
                if self.faults[i].mode == FaultMode::Once {
                    self.faults.remove(i);
                }
                hold = event;
                self.trace.note(&format!(
                    "fault: mailbox {:#04x} {} tag {:#x} token {:#x}: event held back",
                    cmd,
                    mb_name(cmd),
                    tag,
                    token
                ));
                self.run_mailbox(mem, cmd, tag, in_param, out_param)
            } else if let Some(i) = injected {
                let f = self.faults[i];
                if f.mode == FaultMode::Once {
                    self.faults.remove(i);
                }
                self.trace.note(&format!(
                    "fault: mailbox {:#04x} {} tag {:#x} completed with status {}",
                    cmd,
                    mb_name(cmd),
                    tag,
                    f.retval
                ));
                f.retval as u8
            } else {
                self.run_mailbox(mem, cmd, tag, in_param, out_param)
            };
        self.trace.mbx_out(cmd, tag, status);
        self.mb_status = status;
        let storm = if status == MB_OK && !hold {
            self.storm_target(mem, cmd, tag, storm_before)
        } else {
            None
        };
        if let Some(t) = storm {
            self.storm -= 1;
            self.trace.note(&format!(
                "storm: {t:?}: events before and after {} of tag {tag:#x} ({} mailboxes left)",
                mb_name(cmd),
                self.storm
            ));
            self.post_storm(mem, t);
        }
        if hold && until_release {
            self.held.push((token, status, out_param));
        } else if hold {
            self.late = Some((token, status, out_param));
        } else if event {
            self.post_aeqe(mem, &mb_aeqe(token, status, out_param));
        }
        if let Some(t) = storm {
            self.post_storm(mem, t);
        }
    }

    /// What the storm needs to know of object `tag` before mailbox `cmd`
    /// runs: a QP's state (MODIFY_QPC) or the CEQ of a CQ
    /// (DESTROY_CQC clears the context). None when no storm is on.
    fn storm_probe(&self, mem: &impl Dma, cmd: u8, tag: u32) -> Option<u32> {
        if self.storm == 0 {
            return None;
        }
        match cmd {
            mb::MODIFY_QPC => self.qp_state(mem, tag),
            mb::DESTROY_CQC => self.cq_ceqn(mem, tag),
            _ => None,
        }
    }

    /// The object a successful mailbox `cmd` for `tag` created or
    /// destroyed, if the storm is on and it is one (`before`: what
    /// [`Firmware::storm_probe`] read).
    fn storm_target(
        &self,
        mem: &impl Dma,
        cmd: u8,
        tag: u32,
        before: Option<u32>,
    ) -> Option<StormTarget> {
        if self.storm == 0 {
            return None;
        }
        match cmd {
            mb::CREATE_CQC => Some(StormTarget::Cq {
                cqn: tag,
                ceqn: self.cq_ceqn(mem, tag).unwrap_or(0),
            }),
            mb::DESTROY_CQC => Some(StormTarget::Cq {
                cqn: tag,
                ceqn: before.unwrap_or(0),
            }),
            mb::CREATE_SRQ | mb::DESTROY_SRQ => Some(StormTarget::Srq(tag)),
            mb::MODIFY_QPC => {
                let was = before?;
                let is = self.qp_state(mem, tag)?;
                let create = was == qps::RESET && is != qps::RESET;
                let destroy = was != qps::RESET && is == qps::RESET;
                (create || destroy).then_some(StormTarget::Qp(tag))
            }
            _ => None,
        }
    }

    /// Posts one storm event for `t` and counts it. A CQ's CEQE goes to
    /// the CEQ its context names, or the first CEQ when that one does not
    /// exist.
    fn post_storm(&mut self, mem: &impl Dma, t: StormTarget) {
        self.stats.storm_events += 1;
        match t {
            StormTarget::Cq { cqn, ceqn } => {
                let ceqn = if self.eqs.get(&ceqn).is_some_and(|e| !e.is_aeq) {
                    ceqn
                } else {
                    match self.eqs.values().find(|e| !e.is_aeq) {
                        Some(e) => e.eqn,
                        None => {
                            self.trace.note("storm: CEQE dropped: no CEQ");
                            return;
                        }
                    }
                };
                self.post_ceqe(mem, ceqn, cqn);
            }
            StormTarget::Qp(qpn) => Host::post_event(self, mem, STORM_QP_EVENT, 0, qpn),
            StormTarget::Srq(srqn) => Host::post_event(self, mem, STORM_SRQ_EVENT, 0, srqn),
        }
    }

    /// The state field of QP `qpn`'s context in the driver's QPC table.
    fn qp_state(&self, mem: &impl Dma, qpn: u32) -> Option<u32> {
        let (at, sz) = self.entry(mem, Table::Qpc, qpn).ok()?;
        let mut buf = vec![0u8; sz.max(256)];
        mem.read(at, &mut buf[..sz]).ok()?;
        Some(Ctx::<Qpc, 64>::from_bytes(&buf).read(qpc::QP_ST))
    }

    /// The CEQ number in CQ `cqn`'s context.
    fn cq_ceqn(&self, mem: &impl Dma, cqn: u32) -> Option<u32> {
        let (at, sz) = self.entry(mem, Table::Cqc, cqn).ok()?;
        let mut buf = vec![0u8; sz.max(64)];
        mem.read(at, &mut buf[..sz]).ok()?;
        Some(Ctx::<Cqc, 16>::from_bytes(&buf[..64]).read(cqc::CEQN))
    }

    /// Posts the event a `late` fault held back if `token`, the token of a
    /// mailbox being posted, names the same slot: the driver's wait for
    /// the held one has ended, and it re-used the slot.
    fn post_late(&mut self, mem: &impl Dma, token: u16) {
        let Some((old, status, out)) = self.late else {
            return;
        };
        if old % MB_SLOTS != token % MB_SLOTS {
            return;
        }
        self.late = None;
        self.stats.late_events += 1;
        self.trace.note(&format!(
            "late mailbox event: token {old:#x} posted before token {token:#x}"
        ));
        self.post_aeqe(mem, &mb_aeqe(old, status, out));
    }

    /// Runs a mailbox command: its status, and the context change for the
    /// data engine.
    fn run_mailbox(
        &mut self,
        mem: &impl Dma,
        cmd: u8,
        tag: u32,
        in_param: u64,
        out_param: u64,
    ) -> u8 {
        match self.mailbox(mem, cmd, tag, in_param, out_param) {
            Ok(()) => {
                match cmd {
                    mb::MODIFY_QPC => self.ctx_events.push(CtxEvent::Qp(tag)),
                    mb::CREATE_CQC | mb::MODIFY_CQC | mb::DESTROY_CQC => {
                        self.ctx_events.push(CtxEvent::Cq(tag))
                    }
                    mb::CREATE_SRQ | mb::MODIFY_SRQC | mb::DESTROY_SRQ => {
                        self.ctx_events.push(CtxEvent::Srq(tag))
                    }
                    mb::CREATE_MPT | mb::DESTROY_MPT => self.ctx_events.push(CtxEvent::Mpt(tag)),
                    _ => {}
                }
                MB_OK
            }
            Err(e) => {
                self.stats.mailbox_failures += 1;
                self.trace.note(&format!(
                    "mailbox {:#04x} {} tag {:#x} failed: {e}",
                    cmd,
                    mb_name(cmd),
                    tag
                ));
                MB_FAIL
            }
        }
    }

    /// Posts the asynchronous events asked for through the control
    /// channel (an AEQE each, as if the engine had raised it; nothing else
    /// of the engine's state changes).
    pub fn post_injected(&mut self, mem: &impl Dma) {
        for (token, status, out) in std::mem::take(&mut self.released) {
            self.trace
                .note(&format!("held mailbox event: token {token:#x} released"));
            self.post_aeqe(mem, &mb_aeqe(token, status, out));
        }
        for cqn in std::mem::take(&mut self.injected_ceqes) {
            self.trace.note(&format!("CEQE for CQ {cqn:#x} injected"));
            self.post_ceqe(mem, 0, cqn);
        }
        for (ev, sub, queue) in std::mem::take(&mut self.injected) {
            self.trace
                .note(&format!("event: {ev:#04x}:{sub}:{queue:#x} injected"));
            crate::engine::Host::post_event(self, mem, ev, sub, queue);
        }
    }

    /// Writes an AEQE into the first AEQ and queues its vector.
    pub fn post_aeqe(&mut self, mem: &impl Dma, body: &[u8]) {
        let other = self.caps.num_other_vectors as usize;
        let Some(eq) = self.eqs.values_mut().find(|e| e.is_aeq) else {
            self.trace.note("AEQE dropped: no AEQ");
            return;
        };
        match eq.push(mem, body) {
            Ok(()) => self.irqs.push(other),
            Err(e) => self.trace.note(&format!("AEQE dropped: {e}")),
        }
    }

    /// Writes a CEQE for `cqn` into completion EQ `ceqn` and queues its
    /// vector (`num_other_vectors + num_aeq_vectors + ceqn`, as the C
    /// driver assigns `hr_dev->irq[]`).
    pub fn post_ceqe(&mut self, mem: &impl Dma, ceqn: u32, cqn: u32) {
        let vector = self.caps.num_other_vectors as usize
            + self.caps.num_aeq_vectors as usize
            + ceqn as usize;
        let Some(eq) = self.eqs.get_mut(&ceqn).filter(|e| !e.is_aeq) else {
            return;
        };
        let mut body = [0u8; 4];
        body.copy_from_slice(&(cqn & 0xff_ffff).to_le_bytes());
        if eq.push(mem, &body).is_ok() {
            self.irqs.push(vector);
        }
    }

    /// Address and size of object `tag`'s entry in table `t`, found by
    /// walking the BTs the driver programmed.
    fn entry(&self, mem: &impl Dma, t: Table, tag: u32) -> Result<(u64, usize), String> {
        let tab = &self.tables[t as usize];
        let at = tab
            .entry_addr(mem, tag)
            .map_err(|e| format!("{} {tag}: {e}", t.name()))?;
        Ok((at, tab.obj_size as usize))
    }

    fn context_rw(&mut self, mem: &impl Dma, t: Table, tag: u32, src: u64) -> Result<(), String> {
        let (at, sz) = self.entry(mem, t, tag)?;
        let mut buf = vec![0u8; sz];
        mem.read(src, &mut buf).map_err(|e| e.to_string())?;
        mem.write(at, &buf).map_err(|e| e.to_string())?;
        self.trace.ctx(t.name(), tag, &buf);
        Ok(())
    }

    /// MODIFY_*: merges the mailbox's context under its mask into the
    /// entry; returns the entry before and after.
    fn context_merge(
        &mut self,
        mem: &impl Dma,
        t: Table,
        tag: u32,
        src: u64,
    ) -> Result<(Vec<u8>, Vec<u8>), String> {
        let (at, sz) = self.entry(mem, t, tag)?;
        let mut new = vec![0u8; 2 * sz];
        mem.read(src, &mut new).map_err(|e| e.to_string())?;
        let mut old = vec![0u8; sz];
        mem.read(at, &mut old).map_err(|e| e.to_string())?;
        let merged = merge(&old, &new[..sz], &new[sz..]);
        mem.write(at, &merged).map_err(|e| e.to_string())?;
        if matches!(t, Table::Qpc) {
            // The driver's context and mask as posted (a note: the diff of
            // two traces ignores it; the QPC vectors of the Rust driver's
            // tests are read from it).
            self.trace.ctx_note("QPC-in", tag, &new[..sz]);
            self.trace.ctx_note("QPC-mask", tag, &new[sz..]);
        }
        self.trace.ctx(t.name(), tag, &merged);
        Ok((old, merged))
    }

    fn context_query(
        &mut self,
        mem: &impl Dma,
        t: Table,
        tag: u32,
        out: u64,
    ) -> Result<(), String> {
        let (at, sz) = self.entry(mem, t, tag)?;
        let mut buf = vec![0u8; sz];
        mem.read(at, &mut buf).map_err(|e| e.to_string())?;
        mem.write(out, &buf).map_err(|e| e.to_string())
    }

    fn context_clear(&mut self, mem: &impl Dma, t: Table, tag: u32) -> Result<(), String> {
        let (at, sz) = self.entry(mem, t, tag)?;
        mem.write(at, &vec![0u8; sz]).map_err(|e| e.to_string())
    }

    fn mailbox(
        &mut self,
        mem: &impl Dma,
        cmd: u8,
        tag: u32,
        inp: u64,
        out: u64,
    ) -> Result<(), String> {
        if let Some((t, bop, step)) = bt_cmd(cmd) {
            if self.caps.is_vf() && matches!(t, Table::QpcTimer | Table::CqcTimer) {
                return Err(format!("a VF has no {} table", t.name()));
            }
            let tab = &mut self.tables[t as usize];
            let by_tag = matches!(t, Table::Sccc | Table::QpcTimer | Table::CqcTimer);
            if bop == BtOp::Read {
                // The BT0 entry as the engine's RAM holds it, into the
                // mailbox buffer (64 bits, little endian): the context
                // tables give the page number, the timer and SCCC tables
                // the address (`fmea_get_ram_res_addr`).
                let ba = tab.read_bt0(tag, by_tag).map_err(|e| e.to_string())?;
                let v = if by_tag { ba } else { ba >> 12 };
                mem.write(out, &v.to_le_bytes())
                    .map_err(|e| e.to_string())?;
                self.trace
                    .note(&format!("{} BT0 of tag {tag:#x}: {ba:#x}", t.name()));
                return Ok(());
            }
            if by_tag {
                // Indexed by the tag itself (an L0 index or a page number).
                tab.l0.insert(tag, inp);
                return Ok(());
            }
            let r = if bop == BtOp::Write {
                tab.write_bt(mem, step, tag, inp)
            } else {
                tab.destroy_bt(step, tag)
            };
            return r.map_err(|e| e.to_string());
        }
        match cmd {
            mb::CREATE_CEQC | mb::CREATE_AEQC => {
                let mut raw = [0u8; 64];
                mem.read(inp, &mut raw).map_err(|e| e.to_string())?;
                let c = ctx16(&raw);
                let eq = Eq::from_context(tag, cmd == mb::CREATE_AEQC, &c);
                self.trace
                    .ctx(if eq.is_aeq { "AEQC" } else { "CEQC" }, tag, &raw);
                let born = self.eq_born.insert(tag, self.cmq_stalls);
                if let Some(old) = self.eqs.insert(tag, eq) {
                    // The engine takes the new context as a hardware EQ
                    // would; the old one was never destroyed, and its
                    // pages may be anything of the guest's by now.
                    if born == Some(self.cmq_stalls) {
                        self.stats.stale_eqcs += 1;
                        self.trace.note(&format!(
                            "stale EQ context: EQ {tag} created again while live (root {:#x}): never destroyed",
                            old.root
                        ));
                    } else {
                        self.trace.note(&format!(
                            "EQ {tag} created again over a context left behind a CMQ timeout (root {:#x})",
                            old.root
                        ));
                    }
                }
                Ok(())
            }
            mb::DESTROY_CEQC | mb::DESTROY_AEQC => {
                self.eq_born.remove(&tag);
                self.eqs
                    .remove(&tag)
                    .map(|_| ())
                    .ok_or_else(|| format!("EQ {tag} does not exist"))
            }
            mb::MODIFY_CEQC | mb::MODIFY_AEQC => {
                let old = self
                    .eqs
                    .get(&tag)
                    .ok_or_else(|| format!("EQ {tag} does not exist"))?;
                let mut new = [0u8; 128];
                mem.read(inp, &mut new).map_err(|e| e.to_string())?;
                let merged = merge(&old.raw, &new[..64], &new[64..]);
                let mut raw = [0u8; 64];
                raw.copy_from_slice(&merged);
                // Geometry and producer index follow the merged context; the
                // running producer index is kept.
                let pi = old.pi;
                let mut eq = Eq::from_context(tag, old.is_aeq, &ctx16(&raw));
                eq.pi = pi;
                self.trace
                    .ctx(if eq.is_aeq { "AEQC" } else { "CEQC" }, tag, &raw);
                self.eqs.insert(tag, eq);
                Ok(())
            }
            mb::QUERY_CEQC | mb::QUERY_AEQC => {
                let eq = self
                    .eqs
                    .get(&tag)
                    .ok_or_else(|| format!("EQ {tag} does not exist"))?;
                mem.write(out, &eq.raw).map_err(|e| e.to_string())
            }
            mb::CREATE_CQC => self.context_rw(mem, Table::Cqc, tag, inp),
            mb::CREATE_MPT => self.context_rw(mem, Table::Mpt, tag, inp),
            mb::CREATE_SRQ => self.context_rw(mem, Table::Srqc, tag, inp),
            mb::MODIFY_QPC => {
                let (old, new) = self.context_merge(mem, Table::Qpc, tag, inp)?;
                for n in self.cong.modify(&self.caps, tag, &new) {
                    self.trace.note(&n);
                }
                // The engine reads the QPC when it next polls, by which time
                // more modifies may have happened (RESET, INIT, RTR, RTS in
                // a row): tell it here that the QP starts over.
                let st = |b: &[u8]| Ctx::<Qpc, 64>::from_bytes(b).read(qpc::QP_ST);
                let (was, is) = (st(&old), st(&new));
                if is == qps::RESET || (is == qps::INIT && was != qps::INIT) {
                    self.ctx_events.push(CtxEvent::QpRestart(tag));
                }
                Ok(())
            }
            mb::MODIFY_CQC => self.context_merge(mem, Table::Cqc, tag, inp).map(drop),
            mb::MODIFY_SRQC => self.context_merge(mem, Table::Srqc, tag, inp).map(drop),
            mb::QUERY_QPC => self.context_query(mem, Table::Qpc, tag, out),
            mb::QUERY_CQC => self.context_query(mem, Table::Cqc, tag, out),
            mb::QUERY_MPT => self.context_query(mem, Table::Mpt, tag, out),
            mb::QUERY_SRQC => self.context_query(mem, Table::Srqc, tag, out),
            mb::QUERY_SCCC => self.context_query(mem, Table::Sccc, tag, out),
            mb::DESTROY_CQC => self.context_clear(mem, Table::Cqc, tag),
            mb::DESTROY_MPT => self.context_clear(mem, Table::Mpt, tag),
            mb::DESTROY_SRQ => self.context_clear(mem, Table::Srqc, tag),
            _ => Err("unknown mailbox command".to_string()),
        }
    }

    /// The EQs created so far.
    pub fn eqs(&self) -> impl Iterator<Item = &Eq> {
        self.eqs.values()
    }

    /// GIDs programmed through CFG_GMV_TBL (CFG_SGID_TB on HIP08), by
    /// index.
    pub fn gid_count(&self) -> usize {
        self.gids.len()
    }

    /// The GID type the driver gave table entry `idx` (0 RoCE v1, 1 RoCE
    /// v2 IPv4, 2 RoCE v2 IPv6).
    pub fn gid_type(&self, idx: u32) -> Option<u32> {
        self.gids.get(&idx).map(|g| g[4] & 3)
    }

    /// The source MAC of table index `idx` (CFG_SMAC_TB, HIP08).
    pub fn smac(&self, idx: u32) -> Option<[u8; 6]> {
        self.smacs.get(&idx).copied()
    }
}

impl Host for Firmware {
    fn ctx_addr<M: Dma>(&self, mem: &M, t: Table, idx: u32) -> Result<u64, String> {
        self.entry(mem, t, idx).map(|(a, _)| a)
    }

    fn post_ceqe<M: Dma>(&mut self, mem: &M, ceqn: u32, cqn: u32) {
        Firmware::post_ceqe(self, mem, ceqn, cqn)
    }

    fn take_ctx_events(&mut self) -> Vec<CtxEvent> {
        std::mem::take(&mut self.ctx_events)
    }

    fn post_event<M: Dma>(&mut self, mem: &M, event: u8, sub: u8, queue: u32) {
        // AEQE: EVENT_TYPE [7:0], SUB_TYPE [15:8], EVENT_QUEUE_NUM [55:32].
        let mut e = [0u8; 16];
        e[0] = event;
        e[1] = sub;
        e[4..8].copy_from_slice(&(queue & 0xff_ffff).to_le_bytes());
        self.post_aeqe(mem, &e);
    }

    fn gid(&self, idx: u32) -> Option<[u8; 16]> {
        // CFG_GMV_TBL and CFG_SGID_TB carry the GID bytes as they are in
        // memory.
        let g = self.gids.get(&idx)?;
        let mut out = [0u8; 16];
        for (i, w) in g[..4].iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        Some(out)
    }

    fn owns_gid(&self, gid: &[u8; 16]) -> bool {
        self.gids.keys().any(|&i| self.gid(i).as_ref() == Some(gid))
    }
}

/// `new = (old & mask) | (ctx & !mask)`: a mask bit 0 takes the bit from
/// the context.
pub fn merge(old: &[u8], ctx: &[u8], mask: &[u8]) -> Vec<u8> {
    old.iter()
        .zip(ctx)
        .zip(mask)
        .map(|((o, c), m)| (o & m) | (c & !m))
        .collect()
}

fn ctx16<L: crate::field::Layout>(raw: &[u8; 64]) -> Ctx<L, 16> {
    Ctx::from_bytes(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::VecMem;

    fn fw() -> Firmware {
        Firmware::new(Caps::default(), vec![], Trace::discard())
    }

    fn desc(opcode: u16, read: bool) -> Desc {
        Desc {
            opcode,
            flag: flag::IN | if read { flag::WR } else { 0 },
            ..Default::default()
        }
    }

    #[test]
    fn unknown_opcode_is_not_exist() {
        let mem = VecMem::new(4096);
        let mut f = fw();
        let mut d = [desc(0x7777, true)];
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::NOT_EXIST);
        assert_eq!(f.stats.unknown, 1);
    }

    #[test]
    fn caps_descriptors_decode_like_the_driver() {
        let mem = VecMem::new(4096);
        let mut f = fw();
        let mut d: Vec<Desc> = (0..6).map(|_| desc(op::QUERY_PF_CAPS_NUM, true)).collect();
        for x in d.iter_mut().take(5) {
            x.flag |= flag::NEXT;
        }
        f.execute(&mem, &mut d);
        assert!(d.iter().all(|x| x.retval == 0));
        assert!(d[..5].iter().all(|x| x.has_next()), "NEXT flags are kept");
        // caps_a byte 23 = cqe_sz, byte 18/19 = aeq/other vectors.
        assert_eq!(d[0].data[5] >> 24, 64);
        assert_eq!(d[0].data[4] >> 16 & 0xff, 1);
        // caps_b bytes 8-9 qpc_sz.
        assert_eq!(d[1].data[2] & 0xffff, 512);
        // caps_c: NUM_QPS (147..128) and CAP_FLAGS (31..20).
        assert_eq!(d[2].data[4] & 0xf_ffff, 8);
        assert_eq!(d[2].data[0] >> 20, 0x77f);
        // caps_d cap_flags_ex (bytes 6-7): CQE_INLINE (19) and SRQ_RECORD_DB (22).
        assert_eq!(d[3].data[1] >> 16, (1 << 7) | (1 << 10));
        // NUM_CEQS 95..86.
        assert_eq!(d[3].data[2] >> 22, 1);
    }

    #[test]
    fn fault_once_then_normal() {
        let mem = VecMem::new(4096);
        let mut f = Firmware::new(
            Caps::default(),
            vec![Fault::parse("0x8408:2:once").unwrap()],
            Trace::discard(),
        );
        let mut d: Vec<Desc> = (0..6).map(|_| desc(op::QUERY_PF_CAPS_NUM, true)).collect();
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, 2);
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, 0);
        assert!(Fault::parse("0x8408").is_err());
        let t = Fault::parse("0x8408:timeout:once").unwrap();
        assert!(t.silent);
        let mut f = Firmware::new(Caps::default(), vec![t], Trace::discard());
        assert!(!f.execute(&mem, &mut d), "a silent fault is not answered");
        assert!(f.execute(&mem, &mut d), "once: the next one is");
        assert_eq!(Fault::parse("1:6").unwrap().mode, FaultMode::Always);
        let m = Fault::parse("mbx:0x23:0x11:once").unwrap();
        assert!(m.mailbox && m.opcode == 0x23 && m.retval == 0x11);
        assert!(Fault::parse("mbx:0x23:timeout").is_err());
    }

    #[test]
    fn hw_reset_control_drops_the_eq_contexts() {
        // An EQ created, then a hardware reset reported by the control
        // channel: the next CREATE of that EQ is not over a live context.
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.control("hw-reset").unwrap();
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 0);
        // Without it, the same sequence counts one.
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 1);
    }

    #[test]
    fn function_reset_by_the_nic_drops_the_eq_contexts() {
        // As the hw-reset control: hclge's function reset, carried out by
        // the NIC side, leaves no live EQ context behind.
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.function_reset();
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 0);
    }

    #[test]
    fn control_arms_and_clears_faults() {
        let mem = VecMem::new(4096);
        let mut f = Firmware::new(Caps::default(), Vec::new(), Trace::discard());
        let mut d: Vec<Desc> = (0..6).map(|_| desc(op::QUERY_PF_CAPS_NUM, true)).collect();
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, 0, "no fault before the control command");
        f.control("0x8408:2:once\n").unwrap();
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, 2, "armed at run time");
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, 0, "once");
        f.control("0x8408:timeout").unwrap();
        assert!(!f.execute(&mem, &mut d));
        assert!(!f.execute(&mem, &mut d), "always, until cleared");
        f.control("clear").unwrap();
        assert!(f.execute(&mem, &mut d));
        assert!(f.control("0x8408").is_err());
        assert!(f.control("bogus").is_err());
    }

    #[test]
    fn control_injects_aeqes() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.take_irqs();
        assert!(f.control("aeq:0x5:0").is_err(), "queue missing");
        assert!(f.control("aeq:0x100:0:1").is_err(), "type over 8 bits");
        assert!(
            f.control("aeq:5:0:0x1000000").is_err(),
            "queue over 24 bits"
        );
        f.control("aeq:0x5:0:0x12").unwrap();
        assert!(
            f.take_irqs().is_empty(),
            "posted only when the loop says so"
        );
        f.post_injected(&mem);
        assert_eq!(f.take_irqs().len(), 1);
        let w0 = mem.read_u32(0x2000).unwrap();
        let w1 = mem.read_u32(0x2004).unwrap();
        assert_eq!((w0 & 0xff, (w0 >> 8) & 0xff, w1 & 0xff_ffff), (5, 0, 0x12));
        f.post_injected(&mem);
        assert!(f.take_irqs().is_empty(), "each injection once");
    }

    #[test]
    fn control_injects_a_list_of_aeqes_at_once() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.take_irqs();
        assert!(f.control("aeq:0x7:0:0x12,").is_err(), "empty queue");
        assert!(f.control("aeq:0x7:0:0x12,x").is_err());
        f.control("aeq:0x7:0:0x12,0x13").unwrap();
        f.post_injected(&mem);
        assert_eq!(f.take_irqs().len(), 2);
        let q = |i: u64| mem.read_u32(0x2004 + 64 * i).unwrap() & 0xff_ffff;
        assert_eq!((q(0), q(1)), (0x12, 0x13), "both written, in order");
    }

    #[test]
    fn mask_merge() {
        let old = [0xffu8, 0x00, 0xaa];
        let ctx = [0x00u8, 0xff, 0x55];
        let mask = [0xffu8, 0x00, 0x0f];
        // mask 1 keeps old, mask 0 takes ctx.
        assert_eq!(merge(&old, &ctx, &mask), vec![0xff, 0xff, 0x5a]);
    }

    fn post(
        f: &mut Firmware,
        mem: &VecMem,
        cmd: u8,
        tag: u32,
        inp: u64,
        out: u64,
        event: bool,
    ) -> u8 {
        let mut d = desc(op::POST_MB, false);
        d.data = [
            inp as u32,
            (inp >> 32) as u32,
            out as u32,
            (out >> 32) as u32,
            tag << 8 | cmd as u32,
            (event as u32) << 16 | 7,
        ];
        f.execute(mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, 0);
        let mut q = desc(op::QUERY_MB_ST, true);
        f.execute(mem, std::slice::from_mut(&mut q));
        q.data[0] as u8
    }

    #[test]
    fn mailbox_fault_completes_with_status_and_skips_the_command() {
        let mem = VecMem::new(1 << 16);
        let mut f = Firmware::new(
            Caps::default(),
            vec![Fault::parse("mbx:0x23:0x11:once").unwrap()],
            Trace::discard(),
        );
        // WRITE_CQC_TIMER_BT0: the injected status, then the real one.
        assert_eq!(post(&mut f, &mem, 0x23, 0, 0x1000, 0, false), 0x11);
        assert_eq!(post(&mut f, &mem, 0x23, 0, 0x1000, 0, false), MB_OK);
        // A CMQ fault with the same number does not touch mailboxes.
        let mut f = Firmware::new(
            Caps::default(),
            vec![Fault::parse("0x23:2").unwrap()],
            Trace::discard(),
        );
        assert_eq!(post(&mut f, &mem, 0x23, 0, 0x1000, 0, false), MB_OK);
    }

    /// Posts mailbox `cmd` for `tag` in event mode with `token`.
    fn post_event(f: &mut Firmware, mem: &VecMem, cmd: u8, tag: u32, token: u16) {
        let mut d = desc(op::POST_MB, false);
        d.data = [
            0,
            0,
            0x3000,
            0,
            tag << 8 | cmd as u32,
            1 << 16 | token as u32,
        ];
        f.execute(mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, 0);
    }

    /// The token of AEQE `n` of the AEQ of [`create_aeq`].
    fn aeqe_token(mem: &VecMem, n: u64) -> u16 {
        mem.read_u32(0x2000 + 64 * n + 12).unwrap() as u16
    }

    #[test]
    fn mailbox_fault_by_tag() {
        let m = Fault::parse("mbx:0x80:0x11:once:tag=1").unwrap();
        assert_eq!((m.opcode, m.tag, m.mode), (0x80, Some(1), FaultMode::Once));
        assert_eq!(Fault::parse("mbx:0x90:0x11:tag=0x2").unwrap().tag, Some(2));
        assert_eq!(Fault::parse("mbx:0x90:0x11").unwrap().tag, None);
        assert!(
            Fault::parse("0x8408:2:tag=1").is_err(),
            "CMQ faults have no tag"
        );
        assert!(Fault::parse("mbx:0x90:0x11:once:tag=x").is_err());
        assert!(Fault::parse("mbx:0x90:0x11:once:1").is_err());
        let mem = VecMem::new(1 << 16);
        let mut f = Firmware::new(Caps::default(), vec![], Trace::discard());
        f.control("mbx:0x23:0x11:once:tag=5").unwrap();
        assert_eq!(
            post(&mut f, &mem, 0x23, 4, 0x1000, 0, false),
            MB_OK,
            "another tag"
        );
        assert_eq!(post(&mut f, &mem, 0x23, 5, 0x1000, 0, false), 0x11);
        assert_eq!(post(&mut f, &mem, 0x23, 5, 0x1000, 0, false), MB_OK, "once");
    }

    #[test]
    fn eq_context_created_over_a_live_one_is_counted() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 0);
        assert_eq!(post(&mut f, &mem, mb::DESTROY_AEQC, 1, 0, 0, false), MB_OK);
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 0, "destroyed before");
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 1, "still live");
        // FUNC_CLEAR drops the function's contexts (the C driver sends no
        // DESTROY after it).
        let mut d = desc(op::FUNC_CLEAR, false);
        f.execute(&mem, std::slice::from_mut(&mut d));
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 1);
        // A CMQ command left unanswered: the driver takes its queue for
        // dead and cannot destroy what it created; not counted.
        f.control("0x850d:timeout:once").unwrap();
        let mut d = desc(0x850d, false);
        assert!(!f.execute(&mem, std::slice::from_mut(&mut d)));
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 1, "left behind a CMQ timeout");
        create_aeq(&mut f, &mem);
        assert_eq!(f.stats.stale_eqcs, 2, "created after the timeout");
    }

    #[test]
    fn late_mailbox_event_comes_before_the_next_on_its_slot() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.take_irqs();
        assert!(
            Fault::parse("0x8408:late").is_err(),
            "a CMQ command has no event"
        );
        f.control("mbx:0x42:late:once").unwrap();
        // QUERY_QPC of QP 0 fails in this bare model (no QPC table): the
        // status is what the late event carries.
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 7);
        assert!(f.take_irqs().is_empty(), "held back");
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 8);
        assert_eq!(f.take_irqs().len(), 1, "another slot: its own event only");
        assert_eq!(aeqe_token(&mem, 0), 8);
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 7 + 32);
        assert_eq!(f.take_irqs().len(), 2, "the late event, then its own");
        assert_eq!((aeqe_token(&mem, 1), aeqe_token(&mem, 2)), (7, 39));
        assert_eq!(f.stats.late_events, 1);
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 7 + 64);
        assert_eq!(f.take_irqs().len(), 1, "once");
    }

    #[test]
    fn held_mailbox_event_comes_at_release() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.take_irqs();
        assert!(
            Fault::parse("0x8408:hold").is_err(),
            "a CMQ command has no event"
        );
        f.control("mbx:0x42:hold:once").unwrap();
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 7);
        assert!(f.take_irqs().is_empty(), "held back");
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 7 + 32);
        assert_eq!(
            f.take_irqs().len(),
            1,
            "not let go by the next on its slot, once"
        );
        assert_eq!(aeqe_token(&mem, 0), 39);
        f.control("release").unwrap();
        assert!(f.take_irqs().is_empty(), "posted when the loop says so");
        f.post_injected(&mem);
        assert_eq!(f.take_irqs().len(), 1, "released");
        assert_eq!(aeqe_token(&mem, 1), 7);
        f.control("release").unwrap();
        f.post_injected(&mem);
        assert!(f.take_irqs().is_empty(), "released once");
        f.control("mbx:0x42:hold").unwrap();
        post_event(&mut f, &mem, mb::QUERY_QPC, 0, 9);
        f.control("clear").unwrap();
        f.post_injected(&mem);
        assert_eq!(f.take_irqs().len(), 1, "clear lets held events go too");
        assert_eq!(aeqe_token(&mem, 2), 9);
    }

    #[test]
    fn control_injects_ceqes() {
        let mut f = fw();
        assert!(f.control("ceq:").is_err());
        assert!(f.control("ceq:0x1000000").is_err(), "over 24 bits");
        f.control("ceq:0x12").unwrap();
        assert_eq!(f.injected_ceqes, [0x12]);
        let mem = VecMem::new(4096);
        f.post_injected(&mem);
        assert!(f.injected_ceqes.is_empty(), "each injection once");
    }

    /// Creates AEQ 1: 64-byte EQEs, hop 0, depth 16 at 0x2000 (EQC staged
    /// at 0x1000).
    fn create_aeq(f: &mut Firmware, mem: &VecMem) {
        let mut eqc: Ctx<crate::hw_v2_fields::Eqc, 16> = Ctx::zeroed();
        use crate::hw_v2_fields::eqc as e;
        eqc.write(e::SHIFT, 4);
        eqc.write(e::EQE_SIZE, 1);
        eqc.write(e::EQE_BA_L, 0x2000 >> 3);
        let img: Vec<u8> = eqc
            .as_le_words()
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect();
        mem.write(0x1000, &img).unwrap();
        assert_eq!(post(f, mem, mb::CREATE_AEQC, 1, 0x1000, 0, false), MB_OK);
    }

    #[test]
    fn cqc_lives_in_driver_memory_and_mb_event_is_posted() {
        let mem = VecMem::new(1 << 20);
        let mut f = fw();
        // CFG_BT_ATTR: CQC hop 1, 4 KiB pages.
        let mut bt = desc(op::CFG_BT_ATTR, false);
        bt.set(73, 72, 1);
        f.execute(&mem, std::slice::from_mut(&mut bt));
        create_aeq(&mut f, &mem);
        assert!(f.take_irqs().is_empty(), "no event in poll mode");
        // CQC table: L0 page at 0x4000 whose slot 0 points at chunk 0x8000.
        mem.write(0x4000, &0x8000u64.to_le_bytes()).unwrap();
        assert_eq!(post(&mut f, &mem, 0x10, 3, 0x4000, 0, true), MB_OK);
        assert_eq!(post(&mut f, &mem, 0x11, 3, 0x8000, 0, true), MB_OK);
        // CREATE_CQC for CQN 3 with a recognisable context.
        let ctxb: Vec<u8> = (0..64).collect();
        mem.write(0x6000, &ctxb).unwrap();
        assert_eq!(
            post(&mut f, &mem, mb::CREATE_CQC, 3, 0x6000, 0, true),
            MB_OK
        );
        let mut stored = vec![0u8; 64];
        mem.read(0x8000 + 3 * 64, &mut stored).unwrap();
        assert_eq!(stored, ctxb);
        // QUERY_CQC reads it back from there.
        assert_eq!(post(&mut f, &mem, mb::QUERY_CQC, 3, 0, 0x7000, true), MB_OK);
        let mut q = vec![0u8; 64];
        mem.read(0x7000, &mut q).unwrap();
        assert_eq!(q, ctxb);
        // Each event-mode mailbox wrote one AEQE (type 0x13, token 7,
        // status 1, owner 1) and raised the AEQ vector (1).
        assert_eq!(f.take_irqs(), vec![1, 1, 1, 1]);
        for i in 0..4u64 {
            let w0 = mem.read_u32(0x2000 + 64 * i).unwrap();
            assert_eq!(w0, 0x8000_0013);
            assert_eq!(
                mem.read_u32(0x2000 + 64 * i + 12).unwrap() & 0xff_ffff,
                0x01_0007
            );
        }
        // CQN 600 (chunk 9) is not mapped: the mailbox fails.
        assert_eq!(
            post(&mut f, &mem, mb::CREATE_CQC, 600, 0x6000, 0, false),
            MB_FAIL
        );
    }

    #[test]
    fn storm_control_parses() {
        let mut f = fw();
        f.control("storm:3").unwrap();
        assert_eq!(f.storm, 3);
        f.control("storm:off").unwrap();
        assert_eq!(f.storm, 0);
        f.control("storm:0x10").unwrap();
        assert_eq!(f.storm, 16);
        f.control("clear").unwrap();
        assert_eq!(f.storm, 0, "clear ends the storm");
        assert!(f.control("storm:").is_err());
        assert!(f.control("storm:x").is_err());
        assert!(f.control("storm:-1").is_err());
        assert!(f.control("storm:0x100000000").is_err());
    }

    #[test]
    fn storm_posts_around_cq_create_and_destroy() {
        let mem = VecMem::new(1 << 20);
        let mut f = fw();
        let mut bt = desc(op::CFG_BT_ATTR, false);
        bt.set(73, 72, 1);
        f.execute(&mem, std::slice::from_mut(&mut bt));
        create_aeq(&mut f, &mem);
        // CEQ 0: 16 entries of 64 B at 0xa000.
        let mut eqc: Ctx<crate::hw_v2_fields::Eqc, 16> = Ctx::zeroed();
        use crate::hw_v2_fields::eqc as e;
        eqc.write(e::SHIFT, 4);
        eqc.write(e::EQE_SIZE, 1);
        eqc.write(e::EQE_BA_L, 0xa000 >> 3);
        let img: Vec<u8> = eqc
            .as_le_words()
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect();
        mem.write(0x1000, &img).unwrap();
        assert_eq!(
            post(&mut f, &mem, mb::CREATE_CEQC, 0, 0x1000, 0, false),
            MB_OK
        );
        mem.write(0x4000, &0x8000u64.to_le_bytes()).unwrap();
        assert_eq!(post(&mut f, &mem, 0x10, 3, 0x4000, 0, false), MB_OK);
        assert_eq!(post(&mut f, &mem, 0x11, 3, 0x8000, 0, false), MB_OK);
        f.take_irqs();
        // A CQC naming CEQ 0.
        mem.write(0x6000, &[0u8; 64]).unwrap();
        f.control("storm:2").unwrap();
        // A mailbox that is not a create or destroy takes no storm.
        assert_eq!(post(&mut f, &mem, mb::QUERY_CQC, 3, 0, 0x7000, true), MB_OK);
        f.take_irqs();
        assert_eq!(f.stats.storm_events, 0);
        assert_eq!(
            post(&mut f, &mem, mb::CREATE_CQC, 3, 0x6000, 0, true),
            MB_OK
        );
        // CEQ 0's vector (other 1 + AEQ 1 + 0), the mailbox's AEQE, the
        // CEQ again.
        assert_eq!(f.take_irqs(), vec![2, 1, 2]);
        assert_eq!(f.stats.storm_events, 2);
        for i in 0..2u64 {
            assert_eq!(
                mem.read_u32(0xa000 + 64 * i).unwrap(),
                0x8000_0003,
                "CEQE {i}: CQN 3, owner bit"
            );
        }
        assert_eq!(post(&mut f, &mem, mb::DESTROY_CQC, 3, 0, 0, true), MB_OK);
        assert_eq!(f.take_irqs(), vec![2, 1, 2]);
        assert_eq!(f.stats.storm_events, 4);
        // Two mailboxes had their storm: the third gets none.
        assert_eq!(
            post(&mut f, &mem, mb::CREATE_CQC, 3, 0x6000, 0, true),
            MB_OK
        );
        assert_eq!(f.take_irqs(), vec![1]);
        assert_eq!(f.stats.storm_events, 4);
        // A failed create gets none either (CQN 600 is not mapped).
        f.control("storm:1").unwrap();
        assert_eq!(
            post(&mut f, &mem, mb::CREATE_CQC, 600, 0x6000, 0, true),
            MB_FAIL
        );
        assert_eq!(f.take_irqs(), vec![1]);
        assert_eq!((f.stats.storm_events, f.storm), (4, 1));
    }

    #[test]
    fn storm_posts_srq_and_qp_aeqes() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.take_irqs();
        f.control("storm:1").unwrap();
        let t = f.storm_target(&mem, mb::CREATE_SRQ, 0x21, None).unwrap();
        assert_eq!(t, StormTarget::Srq(0x21));
        f.post_storm(&mem, t);
        f.post_storm(&mem, StormTarget::Qp(0x45));
        let w = |i: u64| {
            (
                mem.read_u32(0x2000 + 64 * i).unwrap() & 0xff,
                mem.read_u32(0x2004 + 64 * i).unwrap() & 0xff_ffff,
            )
        };
        assert_eq!(w(0), (u32::from(STORM_SRQ_EVENT), 0x21));
        assert_eq!(w(1), (u32::from(STORM_QP_EVENT), 0x45));
        assert_eq!(f.take_irqs(), vec![1, 1]);
        // A QP's create is its first MODIFY_QPC out of RESET, its destroy
        // the one back to RESET; nothing else of MODIFY_QPC.
        assert_eq!(f.storm_target(&mem, mb::MODIFY_QPC, 5, None), None);
        assert_eq!(f.storm_target(&mem, mb::QUERY_QPC, 5, Some(0)), None);
    }

    #[test]
    fn access_error_events_are_aeqes_with_the_qpn() {
        use crate::engine::{aev, Host};
        let mem = VecMem::new(1 << 16);
        let mut f = fw();
        create_aeq(&mut f, &mem);
        f.post_event(&mem, aev::LOCAL_WQ_ACCESS_ERROR, 0, 9);
        f.post_event(&mem, aev::INV_REQ_LOCAL_WQ_ERROR, 0, 0x12_3456);
        assert_eq!(f.take_irqs(), vec![1, 1]);
        // Word 0: owner (31) | EVENT_TYPE 0x07 / 0x06 (7:0), SUB_TYPE 0;
        // word 1: EVENT_QUEUE_NUM (the QPN, 23:0).
        let words = |i: u64| {
            let a = 0x2000 + 64 * i;
            [mem.read_u32(a).unwrap(), mem.read_u32(a + 4).unwrap()]
        };
        assert_eq!(words(0), [0x8000_0007, 9]);
        assert_eq!(words(1), [0x8000_0006, 0x12_3456]);
    }

    #[test]
    fn control_abnormal_and_ram_ecc() {
        let mem = VecMem::new(4096);
        let mut f = fw();
        assert!(f.control("abn:").is_err(), "status missing");
        assert!(f.control("abn:0x100000000").is_err(), "status over 32 bits");
        assert!(f.control("ecc:1").is_err(), "tag missing");
        assert!(f.control("ecc:1:2:3").is_err(), "too many numbers");
        assert!(f.take_abnormal().is_empty(), "refused commands do nothing");
        let mut q = desc(op::QUERY_RAM_ECC, true);
        f.execute(&mem, std::slice::from_mut(&mut q));
        assert_eq!(q.retval, ret::SUCCESS);
        assert_eq!(q.data[..3], [0, 0, 0], "no error armed");
        f.control("abn:0x1").unwrap();
        f.control("ecc:2:0x1f").unwrap();
        // An abnormal interrupt each: the ECC error has no status bit.
        assert_eq!(f.take_abnormal(), vec![1, 0]);
        assert!(f.take_abnormal().is_empty());
        f.execute(&mem, std::slice::from_mut(&mut q));
        assert_eq!(q.data[..3], [1, 2, 0x1f], "1BIT_ERR, RES_TYPE, TAG");
        f.execute(&mem, std::slice::from_mut(&mut q));
        assert_eq!(q.data[..3], [0, 0, 0], "reported once");
        f.control("ecc:0:5").unwrap();
        f.control("clear").unwrap();
        f.execute(&mem, std::slice::from_mut(&mut q));
        assert_eq!(q.data[0], 0, "clear disarms it");
    }

    #[test]
    fn ram_ecc_recovery_reads_and_rewrites_bt0() {
        let mem = VecMem::new(1 << 20);
        let mut f = fw();
        // CQC hop 1 (CFG_BT_ATTR), L0 page at 0x4000.
        let mut bt = desc(op::CFG_BT_ATTR, false);
        bt.set(73, 72, 1);
        f.execute(&mem, std::slice::from_mut(&mut bt));
        mem.write(0x4000, &0x8000u64.to_le_bytes()).unwrap();
        assert_eq!(post(&mut f, &mem, 0x10, 3, 0x4000, 0, false), MB_OK);
        // READ_CQC_BT0 gives the page number of the L0 page.
        assert_eq!(mb_name(0x14), "READ_CQC_BT0");
        assert_eq!(post(&mut f, &mem, 0x14, 3, 0, 0x7000, false), MB_OK);
        assert_eq!(mem.read_u64(0x7000).unwrap(), 0x4);
        // Written back: the CQC still resolves through it.
        assert_eq!(post(&mut f, &mem, 0x10, 3, 0x4 << 12, 0, false), MB_OK);
        assert_eq!(
            f.table(Table::Cqc).entry_addr(&mem, 3).unwrap(),
            0x8000 + 3 * 64
        );
        // Nothing recorded for the QPC table: the read fails.
        assert_eq!(mb_name(0x04), "READ_QPC_BT0");
        assert_eq!(post(&mut f, &mem, 0x04, 3, 0, 0x7000, false), MB_FAIL);
        // Timer tables are indexed by the tag and read back as addresses.
        assert_eq!(
            post(&mut f, &mem, mb::WRITE_QPC_TIMER_BT0, 2, 0x9000, 0, false),
            MB_OK
        );
        assert_eq!(mb_name(mb::READ_QPC_TIMER_BT0), "READ_QPC_TIMER_BT0");
        assert_eq!(
            post(&mut f, &mem, mb::READ_QPC_TIMER_BT0, 2, 0, 0x7000, false),
            MB_OK
        );
        assert_eq!(mem.read_u64(0x7000).unwrap(), 0x9000);
        assert_eq!(mb_name(mb::READ_CQC_TIMER_BT0), "READ_CQC_TIMER_BT0");
        assert_eq!(mb_name(mb::READ_SCCC_BT0), "READ_SCCC_BT0");
        assert_eq!(mb_name(0x08), "DESTROY_QPC_BT0");
        assert_eq!(mb_name(0x22), "WRITE_MPT_BT2");
    }

    #[test]
    fn gmv_bt_reads_back_as_a_page_number() {
        let mem = VecMem::new(4096);
        let mut f = fw();
        let mut w = desc(op::CFG_GMV_BT, false);
        w.data = [0x12345, 0x7, 0, 0, 0, 0];
        f.execute(&mem, std::slice::from_mut(&mut w));
        let mut r = desc(op::CFG_GMV_BT, true);
        r.data[2] = 0;
        f.execute(&mem, std::slice::from_mut(&mut r));
        assert_eq!(r.retval, ret::SUCCESS);
        assert_eq!((r.data[0], r.data[1] & 0xf_ffff), (0x12345, 0x7));
        // The read did not overwrite the recorded address.
        f.execute(&mem, std::slice::from_mut(&mut r));
        assert_eq!(r.data[0], 0x12345);
        // An index never written is refused.
        r.data[2] = 1;
        f.execute(&mem, std::slice::from_mut(&mut r));
        assert_eq!(r.retval, ret::PARA_ERR);
    }

    fn fw_hip08() -> Firmware {
        Firmware::new(Caps::hip08(), vec![], Trace::discard())
    }

    /// CFG_SGID_TB as `config_sgid_table` fills it (struct
    /// hns_roce_cfg_sgid_tb): index in bits 7..0 of word 0, the GID's
    /// bytes as four little-endian words 1..4, the type in bits 161..160.
    fn sgid_tb(idx: u32, gid: &[u8; 16], ty: u32) -> Desc {
        let mut d = desc(op::CFG_SGID_TB, false);
        d.data[0] = idx;
        for i in 0..4 {
            d.data[1 + i] = u32::from_le_bytes(gid[4 * i..4 * i + 4].try_into().unwrap());
        }
        d.data[5] = ty;
        d
    }

    #[test]
    fn hip08_sgid_table_fills_the_gid_map_the_engine_routes_by() {
        use crate::engine::Host;
        let mem = VecMem::new(4096);
        let mut f = fw_hip08();
        // fe80::219:e5ff:fe00:300, RoCE v2 IPv6 (GID_TYPE_FLAG_ROCE_V2_IPV6 = 2).
        let gid = [
            0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x19, 0xe5, 0xff, 0xfe, 0x00, 0x03, 0x00,
        ];
        let mut d = sgid_tb(1, &gid, 2);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.gid_count(), 1);
        assert_eq!(f.gid(1), Some(gid));
        assert_eq!(f.gid_type(1), Some(2));
        assert!(f.owns_gid(&gid));
        assert_eq!(f.gid(0), None);
        // Index 255 (the field's 8 bits), RoCE v1 (type 0).
        let mut d = sgid_tb(255, &[0x11; 16], 0);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(f.gid(255), Some([0x11; 16]));
        assert_eq!(f.gid_type(255), Some(0));
        // A delete is the all-zero GID.
        let mut d = sgid_tb(1, &[0; 16], 0);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.gid(1), None);
        assert!(!f.owns_gid(&gid));
        assert_eq!(f.gid_count(), 1);
        assert_eq!(f.stats.unknown, 0);
    }

    #[test]
    fn hip08_smac_table_records_the_mac_per_index() {
        let mem = VecMem::new(4096);
        let mut f = fw_hip08();
        // struct hns_roce_cfg_smac_tb: index bits 7..0, MAC bytes 0..3 in
        // word 1, bytes 4..5 in bits 79..64.
        let mac = [0x02, 0x19, 0xe5, 0x00, 0x03, 0x00];
        let mut d = desc(op::CFG_SMAC_TB, false);
        d.data[0] = 0;
        d.data[1] = u32::from_le_bytes(mac[..4].try_into().unwrap());
        d.data[2] = u16::from_le_bytes([mac[4], mac[5]]) as u32;
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.smac(0), Some(mac));
        assert_eq!(f.smac(1), None);
    }

    #[test]
    fn hip08_sccc_clear_is_reset_cleared_and_queried() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw_hip08();
        // CFG_BT_ATTR: SCCC hop 1 (CFG_BT_ATTR_SCCC_HOPNUM, bits 137..136),
        // 4 KiB pages; L0 page 0x4000 whose slot 0 is the chunk at 0x8000.
        let mut bt = desc(op::CFG_BT_ATTR, false);
        bt.set(137, 136, 1);
        f.execute(&mem, std::slice::from_mut(&mut bt));
        mem.write(0x4000, &0x8000u64.to_le_bytes()).unwrap();
        assert_eq!(
            post(&mut f, &mem, mb::WRITE_SCCC_BT0, 0, 0x4000, 0, false),
            MB_OK
        );
        mem.write(0x8000, &[0xa5; 4096]).unwrap();
        let query = |f: &mut Firmware| {
            let mut q = desc(op::QUERY_SCCC, true);
            f.execute(&mem, std::slice::from_mut(&mut q));
            assert_eq!(q.retval, ret::SUCCESS);
            q.data[0]
        };
        // hns_roce_v2_qp_flow_control_init: RESET_SCCC, CLR_SCCC with the
        // QPN in word 0 (struct hns_roce_sccc_clr), then QUERY_SCCC until
        // clr_done (word 0, struct hns_roce_sccc_clr_done) is set.
        let mut r = desc(op::RESET_SCCC, false);
        f.execute(&mem, std::slice::from_mut(&mut r));
        assert_eq!(r.retval, ret::SUCCESS);
        assert_eq!(query(&mut f), 0, "not cleared since the reset");
        let mut c = desc(op::CLR_SCCC, false);
        c.data[0] = 3;
        f.execute(&mem, std::slice::from_mut(&mut c));
        assert_eq!(c.retval, ret::SUCCESS);
        assert_eq!(query(&mut f), 1);
        // A slow clear: the next two queries say not done, the third done.
        f.control("sccc-busy:2").unwrap();
        assert_eq!((query(&mut f), query(&mut f), query(&mut f)), (0, 0, 1));
        assert!(f.control("sccc-busy:x").is_err());
        f.control("sccc-busy:5").unwrap();
        f.control("clear").unwrap();
        assert_eq!(query(&mut f), 1, "clear forgets a slow clear");
        // QP 3's 32-byte SCC context is zeroed, its neighbours are not.
        let mut b = [0u8; 128];
        mem.read(0x8000 + 2 * 32, &mut b).unwrap();
        assert!(b[..32].iter().all(|&x| x == 0xa5));
        assert!(b[32..64].iter().all(|&x| x == 0));
        assert!(b[64..].iter().all(|&x| x == 0xa5));
        // A QPN whose SCCC chunk is not mapped: nothing to clear, done.
        f.execute(&mem, std::slice::from_mut(&mut r));
        c.data[0] = 200;
        f.execute(&mem, std::slice::from_mut(&mut c));
        assert_eq!(c.retval, ret::SUCCESS);
        assert_eq!(query(&mut f), 1);
        assert_eq!(f.stats.unknown, 0);
    }

    #[test]
    fn hip08_refuses_the_hip09_only_commands() {
        let mem = VecMem::new(4096);
        let mut f = fw_hip08();
        for (n, o) in [0x8407u16, 0x8409, 0x850f, 0x8510, 0x8513]
            .into_iter()
            .enumerate()
        {
            let mut d = [desc(o, false), desc(o, false)];
            d[0].flag |= flag::NEXT;
            f.execute(&mem, &mut d);
            assert_eq!(d[0].retval, ret::NOT_EXIST, "opcode {o:#x}");
            assert_eq!(f.stats.unknown, n as u64 + 1);
        }
        // The GMV table write was not taken.
        assert_eq!(f.gid_count(), 0);
        // The HIP08 table reports no GMV BTs: QUERY_PF_RES
        // FUNC_RES_B_GMV_BT_NUM (176..168 of the second descriptor).
        let mut d = [desc(op::QUERY_PF_RES, true), desc(op::QUERY_PF_RES, true)];
        d[0].flag |= flag::NEXT;
        f.execute(&mem, &mut d);
        assert_eq!(d[1].retval, ret::SUCCESS);
        assert_eq!(d[1].get(176, 168), 0);
        // The 5-descriptor caps query of HIP08 (no caps_f): QPC size in
        // caps_b bytes 8..9, CQE size in caps_a byte 23.
        let mut d: Vec<Desc> = (0..5).map(|_| desc(op::QUERY_PF_CAPS_NUM, true)).collect();
        for x in d.iter_mut().take(4) {
            x.flag |= flag::NEXT;
        }
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::SUCCESS);
        assert_eq!(d[1].data[2] & 0xffff, 256);
        assert_eq!(d[0].data[5] >> 24, 32);
    }

    fn fw_vf() -> Firmware {
        Firmware::new(Caps::vf(), vec![], Trace::discard())
    }

    /// A command of `n` descriptors chained by NEXT.
    fn chain(o: u16, read: bool, n: usize) -> Vec<Desc> {
        let mut d: Vec<Desc> = (0..n).map(|_| desc(o, read)).collect();
        for x in d.iter_mut().take(n - 1) {
            x.flag |= flag::NEXT;
        }
        d
    }

    #[test]
    fn vf_answers_the_vf_queries_at_the_c_field_positions() {
        let mem = VecMem::new(4096);
        let mut f = fw_vf();
        // QUERY_VF_CAPS_NUM (0x8410): the PF's 6-descriptor layout;
        // PF_CAPS_C_NUM_QPS 147..128 of caps_c, caps_a byte 0 = 1.
        let mut d = chain(op::QUERY_VF_CAPS_NUM, true, 6);
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::SUCCESS);
        assert_eq!(d[2].get(147, 128), 8);
        assert_eq!(d[0].data[0] & 0xff, 1);
        // No timer tables on a VF: caps_a bytes 12..15 (the timer counts).
        assert_eq!(d[0].data[3], 0);
        // QUERY_VF_RES (0x850e), hns_roce_hw_v2.h: FUNC_RES_A_QPC_BT_NUM
        // 59..48, _SRQC_ 89..80, _CQC_ 121..112, _MPT_ 153..144, _EQC_
        // 185..176; FUNC_RES_V_QID_NUM 115..112, FUNC_RES_B_SCCC_BT_NUM
        // 145..137, FUNC_RES_V_GMV_BT_NUM 184..176: the VF's share of the
        // PF's totals (8 BTs, 8 QIDs, 2 GMV BTs) with one VF.
        let mut d = chain(op::QUERY_VF_RES, true, 2);
        f.execute(&mem, &mut d);
        assert_eq!(d[1].retval, ret::SUCCESS);
        assert_eq!(d[0].data[1] >> 16 & 0xfff, 4);
        assert_eq!(d[0].data[2] >> 16 & 0x3ff, 4);
        assert_eq!(d[0].data[3] >> 16 & 0x3ff, 4);
        assert_eq!(d[0].data[4] >> 16 & 0x3ff, 4);
        assert_eq!(d[0].data[5] >> 16 & 0x3ff, 4);
        assert_eq!(d[1].data[3] >> 16 & 0xf, 4);
        assert_eq!(d[1].data[4] >> 9 & 0x1ff, 4);
        assert_eq!(d[1].data[5] >> 16 & 0x1ff, 1);
        // Nothing at the PF positions of QID (122..112: bits 116..122 of
        // the 11-bit field) and GMV (176..168: its low byte).
        assert_eq!(d[1].data[3] >> 20 & 0x7f, 0);
        assert_eq!(d[1].data[5] >> 8 & 0xff, 0);
        assert_eq!(FuncRes::read(&d), FuncRes::of_caps(&Caps::vf()));
        // The VF still answers what it sends as a PF would.
        for o in [op::QUERY_HW_VER, op::QUERY_FW_VER, op::CFG_BT_ATTR] {
            let mut d = desc(o, o != op::CFG_BT_ATTR);
            f.execute(&mem, std::slice::from_mut(&mut d));
            assert_eq!(d.retval, ret::SUCCESS, "opcode {o:#x}");
        }
        assert_eq!(f.stats.unknown, 0);
        // Its tables have its share of L0 BTs, not divided again.
        assert_eq!(f.table(Table::Qpc).bt_num, 4);
    }

    #[test]
    fn vf_refuses_the_pf_only_commands() {
        let mem = VecMem::new(1 << 16);
        let mut f = fw_vf();
        let pf_only = [
            op::QUERY_FUNC_INFO,
            op::CFG_GLOBAL_PARAM,
            op::SWITCH_PARAMETER_CFG,
            op::QUERY_PF_CAPS_NUM,
            op::QUERY_PF_RES,
            op::QUERY_PF_TIMER_RES,
            op::ALLOC_VF_RES,
            op::CFG_ENTRY_SIZE,
            op::CFG_EXT_LLM,
            op::QUERY_COUNTER,
        ];
        for (n, o) in pf_only.into_iter().enumerate() {
            let mut d = chain(o, false, 2);
            f.execute(&mem, &mut d);
            assert_eq!(d[0].retval, ret::NOT_EXIST, "opcode {o:#x}");
            assert_eq!(f.stats.unknown, n as u64 + 1);
        }
        // No timer tables: WRITE_QPC_TIMER_BT0 (0x33) and
        // WRITE_CQC_TIMER_BT0 (0x23) fail.
        assert_eq!(post(&mut f, &mem, 0x33, 0, 0x1000, 0, false), MB_FAIL);
        assert_eq!(post(&mut f, &mem, 0x23, 0, 0x1000, 0, false), MB_FAIL);
        // FUNC_CLEAR of itself (the VF's driver sends function 0).
        let mut d = desc(op::FUNC_CLEAR, false);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.stats.func_clears, 1);
        let mut d = desc(op::FUNC_CLEAR, true);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.get(32, 32), 1);
        // A PF does not know the VF queries.
        let mut p = fw();
        let mut d = chain(op::QUERY_VF_RES, true, 2);
        p.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::NOT_EXIST);
        let mut d = chain(op::QUERY_VF_CAPS_NUM, true, 6);
        p.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::NOT_EXIST);
    }

    #[test]
    fn pf_with_a_vf_allocates_and_clears_it_by_function_id() {
        let mem = VecMem::new(4096);
        let mut f = Firmware::new(
            Caps {
                func_num: 2,
                ..Caps::default()
            },
            vec![],
            Trace::discard(),
        );
        // QUERY_FUNC_INFO: own_func_num in word 0.
        let mut d = desc(op::QUERY_FUNC_INFO, true);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.data[0], 2);
        // The PF's tables: its share of the totals QUERY_PF_RES reports.
        assert_eq!(f.table(Table::Qpc).bt_num, 4);
        assert_eq!(f.table(Table::Sccc).bt_num, 4);
        // SWITCH_PARAMETER_CFG: VF_SWITCH_VF_ID 42..35.
        for (vf, rv) in [(0, ret::SUCCESS), (1, ret::SUCCESS), (2, ret::PARA_ERR)] {
            let mut d = desc(op::SWITCH_PARAMETER_CFG, true);
            d.set(42, 35, vf);
            f.execute(&mem, std::slice::from_mut(&mut d));
            assert_eq!(d.retval, rv, "function {vf}");
        }
        // ALLOC_VF_RES of function 1 as config_vf_hem_resource writes it
        // (FUNC_RES_A_VF_ID 7..0, counts and BT indexes).
        let give = FuncRes {
            qpc: 4,
            srqc: 4,
            cqc: 4,
            mpt: 4,
            eqc: 4,
            qid: 4,
            sccc: 4,
            gmv: 1,
        };
        let mut d = chain(op::ALLOC_VF_RES, false, 2);
        d[0].set(7, 0, 1);
        give.write(&mut d);
        d[0].set(42, 32, 4); // FUNC_RES_A_QPC_BT_IDX
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::SUCCESS);
        assert_eq!(f.func_res.get(&1), Some(&give));
        assert_eq!(f.take_func_events(), vec![FuncEvent::Alloc(1, give)]);
        // ... and what the VF's QUERY_VF_RES then answers equals it.
        assert_eq!(FuncRes::of_caps(&Caps::vf()), give);
        // Function 2 does not exist.
        let mut d = chain(op::ALLOC_VF_RES, false, 2);
        d[0].set(7, 0, 2);
        f.execute(&mem, &mut d);
        assert_eq!(d[0].retval, ret::PARA_ERR);
        // CFG_BT_ATTR, then FUNC_CLEAR of function 1 (rst_funcid_en, word
        // 0): handed on, the PF's own state stays.
        let mut d = desc(op::CFG_BT_ATTR, false);
        d.set(9, 8, 1);
        f.execute(&mem, std::slice::from_mut(&mut d));
        let mut d = desc(op::FUNC_CLEAR, false);
        d.data[0] = 1;
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.table(Table::Qpc).attr.hopnum, 1);
        assert_eq!(f.take_func_events(), vec![FuncEvent::Clear(1)]);
        let mut d = desc(op::FUNC_CLEAR, true);
        d.data[0] = 1;
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.get(32, 32), 1);
        // Its resources released: ALLOC_VF_RES with only the function id.
        let mut d = chain(op::ALLOC_VF_RES, false, 2);
        d[0].set(7, 0, 1);
        f.execute(&mem, &mut d);
        assert_eq!(f.func_res.get(&1), None);
        assert_eq!(f.take_func_events(), vec![FuncEvent::Free(1)]);
        // FUNC_CLEAR of function 0 clears the PF itself; 2 is refused.
        let mut d = desc(op::FUNC_CLEAR, false);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(f.table(Table::Qpc).attr.hopnum, 0);
        assert!(f.take_func_events().is_empty());
        let mut d = desc(op::FUNC_CLEAR, false);
        d.data[0] = 2;
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(d.retval, ret::PARA_ERR);
        assert_eq!(f.stats.func_clears, 2);
    }

    #[test]
    fn vf_is_cleared_by_its_pf() {
        let mem = VecMem::new(4096);
        let mut f = fw_vf();
        let mut d = desc(op::CFG_BT_ATTR, false);
        d.set(9, 8, 1);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!(f.table(Table::Qpc).attr.hopnum, 1);
        f.from_pf(&FuncEvent::Alloc(1, FuncRes::of_caps(&Caps::vf())));
        assert!(f.pf_alloc.is_some());
        f.from_pf(&FuncEvent::Clear(1));
        assert_eq!(f.table(Table::Qpc).attr.hopnum, 0);
        assert_eq!((f.stats.pf_clears, f.stats.func_clears), (1, 0));
        f.from_pf(&FuncEvent::Free(1));
        assert!(f.pf_alloc.is_none());
    }

    #[test]
    fn hip09_default_keeps_its_command_set() {
        let mem = VecMem::new(4096);
        let mut f = fw();
        // The HIP08-only commands are unknown to the default (HIP09) model...
        for o in [0x8500u16, 0x8501, 0x8509, 0x850a, 0x850b] {
            let mut d = desc(o, false);
            d.data[0] = 1;
            d.data[1] = 0x1234;
            f.execute(&mem, std::slice::from_mut(&mut d));
            assert_eq!(d.retval, ret::NOT_EXIST, "opcode {o:#x}");
        }
        assert_eq!(f.stats.unknown, 5);
        assert_eq!(f.gid_count(), 0);
        // ...and its own are answered as before.
        let mut d = desc(op::QUERY_FUNC_INFO, true);
        f.execute(&mem, std::slice::from_mut(&mut d));
        assert_eq!((d.retval, d.data[0]), (ret::SUCCESS, 1));
        let mut g = [desc(op::CFG_GMV_TBL, false), desc(op::CFG_GMV_TBL, false)];
        g[0].flag |= flag::NEXT;
        g[0].data[0] = 0xfe80;
        g[1].set(71, 64, 4);
        f.execute(&mem, &mut g);
        assert_eq!(g[0].retval, ret::SUCCESS);
        assert_eq!(f.gid_count(), 1);
    }

    /// A HIP09 PF with the BOND cap (bit 21) at function `func` of bus 0
    /// slot 3, tracing into `trace` (a file name under the temp dir).
    fn fw_bond(func: u8, trace: &str) -> (Firmware, std::path::PathBuf) {
        let mut c = Caps::default();
        c.cap_flags |= crate::caps::flag::BOND;
        let path =
            std::env::temp_dir().join(format!("hns-sim-test-{trace}-{}", std::process::id()));
        let t = Trace::to_file(path.to_str().unwrap(), "").unwrap();
        let mut f = Firmware::new(c, vec![], t);
        f.loc = PciLoc {
            bus: 0,
            devfn: 3 << 3 | func,
        };
        (f, path)
    }

    /// Executes on `f` the descriptor `hns_roce_cmd_bond` sends: opcode, a
    /// write (no WR flag), the six words of `struct hns_roce_bond_info` in
    /// data[0..6]; the descriptor as answered.
    fn run_bond(f: &mut Firmware, mem: &VecMem, opcode: u16, words: [u32; 6]) -> Desc {
        let mut d = desc(opcode, false);
        d.data = words;
        f.execute(mem, std::slice::from_mut(&mut d));
        d
    }

    fn notes(f: &mut Firmware, path: &std::path::Path) -> Vec<String> {
        f.trace.flush();
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .filter_map(|l| l.strip_prefix("# "))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn bond_commands_are_not_exist_without_the_cap_or_on_a_vf() {
        let mem = VecMem::new(4096);
        for mut f in [fw(), fw_vf()] {
            for o in [
                op::SET_BOND_INFO,
                op::CLEAR_BOND_INFO,
                op::CHANGE_ACTIVE_PORT,
            ] {
                let d = run_bond(&mut f, &mem, o, [0, 0, 1, 1, 3, 0]);
                assert_eq!(d.retval, ret::NOT_EXIST, "opcode {o:#x}");
            }
            assert_eq!(f.stats.unknown, 3);
            assert!(f.chip.borrow().bonds.is_empty());
        }
        // A VF with the bit in its table still refuses (C clears the cap
        // on a VF).
        let mut c = Caps::vf();
        c.cap_flags |= crate::caps::flag::BOND;
        let mut f = Firmware::new(c, vec![], Trace::discard());
        let d = run_bond(&mut f, &mem, op::SET_BOND_INFO, [0, 0, 1, 1, 3, 0]);
        assert_eq!(d.retval, ret::NOT_EXIST);
    }

    #[test]
    fn bond_set_change_clear_in_c_layout() {
        let mem = VecMem::new(4096);
        let (mut f, path) = fw_bond(0, "bond-cmds");
        // set_bond of an active-backup pair, functions 0 and 1, function 0
        // active: bond_id 0, BOND_MODE_1 (0), cnt 1, active 0x1, slaves
        // 0x3, hash 0.
        let d = run_bond(&mut f, &mem, op::SET_BOND_INFO, [0, 0, 1, 0x1, 0x3, 0]);
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(d.flag & flag::OUT, flag::OUT);
        {
            let chip = f.chip.borrow();
            let b = chip.bonds[&(0, 0)];
            assert_eq!(b.info.to_words(), [0, 0, 1, 0x1, 0x3, 0]);
            assert_eq!(b.main, f.loc);
        }
        // The failover: function 1 active.
        let d = run_bond(&mut f, &mem, op::CHANGE_ACTIVE_PORT, [0, 0, 1, 0x2, 0x3, 0]);
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.chip.borrow().bonds[&(0, 0)].info.active_mask, 0x2);
        // CLEAR carries the bond id only.
        let d = run_bond(&mut f, &mem, op::CLEAR_BOND_INFO, [0, 0, 0, 0, 0, 0]);
        assert_eq!(d.retval, ret::SUCCESS);
        assert!(f.chip.borrow().bonds.is_empty());
        let c = f.chip.borrow().counts[&(0, 0)];
        assert_eq!((c.set, c.change, c.clear, c.refused), (1, 1, 1, 0));
        assert_eq!(f.stats.unknown, 0);
        assert_eq!(
            notes(&mut f, &path),
            [
                "bond 0: SET from function 0 (bus 0x00): mode 1 slaves 0x3 active 0x1 (1) hash -",
                "bond 0: CHANGE_ACTIVE_PORT from function 0 (bus 0x00): mode 1 slaves 0x3 active 0x2 (1) hash -",
                "bond 0: CLEAR from function 0 (bus 0x00): cleared",
            ]
        );
        // The summary hns-sim.log gets.
        assert_eq!(
            f.chip.borrow().summary(),
            ["bond 0 (bus 0x00): 1 SET, 1 CHANGE_ACTIVE_PORT, 1 CLEAR, 0 refused; cleared"]
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn bond_checks_are_notes_and_two_are_para_err() {
        let mem = VecMem::new(4096);
        let (mut f, path) = fw_bond(2, "bond-checks");
        // balance-xor, layer3+4 (BOND_MODE_2_4 = 1, BOND_HASH_L34 = 1),
        // from function 2 which is not a slave; active 0x4 outside the
        // slaves; count 1 for two active bits.
        let d = run_bond(&mut f, &mem, op::SET_BOND_INFO, [1, 1, 1, 0x5, 0x3, 1]);
        assert_eq!(d.retval, ret::SUCCESS, "checks are notes");
        // Mode 1 with two active slaves: C only warns, so do we.
        let d = run_bond(&mut f, &mem, op::CHANGE_ACTIVE_PORT, [0, 0, 2, 0x3, 0x3, 0]);
        assert_eq!(d.retval, ret::SUCCESS);
        // Bond id 2 and hash 3: PARA_ERR, not recorded.
        let d = run_bond(&mut f, &mem, op::SET_BOND_INFO, [2, 0, 1, 0x1, 0x3, 0]);
        assert_eq!(d.retval, ret::PARA_ERR);
        let d = run_bond(&mut f, &mem, op::SET_BOND_INFO, [0, 1, 1, 0x1, 0x3, 3]);
        assert_eq!(d.retval, ret::PARA_ERR);
        // CLEAR of a bond nobody set: noted, answered.
        let d = run_bond(&mut f, &mem, op::CLEAR_BOND_INFO, [0, 0, 0, 0, 0, 0]);
        assert_eq!(d.retval, ret::SUCCESS);
        let d = run_bond(&mut f, &mem, op::CLEAR_BOND_INFO, [0, 0, 0, 0, 0, 0]);
        assert_eq!(d.retval, ret::SUCCESS);
        assert_eq!(f.chip.borrow().bonds.len(), 1, "bond 1 stays");
        assert_eq!(f.chip.borrow().counts[&(0, 0)].refused, 1);
        assert_eq!(f.chip.borrow().counts[&(0, 2)].refused, 1);
        assert_eq!(
            notes(&mut f, &path),
            [
                "bond 1: SET from function 2 (bus 0x00): mode 2/4 slaves 0x3 active 0x5 (1) hash L34",
                "bond 1: check: main function 2 not in slaves 0x3",
                "bond 1: check: active 0x5 not within slaves 0x3",
                "bond 1: check: active count 1 but active mask 0x5",
                "bond 0: CHANGE_ACTIVE_PORT from function 2 (bus 0x00): mode 1 slaves 0x3 active 0x3 (2) hash -",
                "bond 0: check: main function 2 not in slaves 0x3",
                "bond 0: check: mode 1 with 2 active slaves",
                "bond 0: check: no SET before",
                "bond 2: SET from function 2 (bus 0x00): mode 1 slaves 0x3 active 0x1 (1) hash -: bond id over 1: answered PARA_ERR",
                "bond 0: SET from function 2 (bus 0x00): mode 2/4 slaves 0x3 active 0x1 (1) hash ?: hash policy over 2: answered PARA_ERR",
                "bond 0: CLEAR from function 2 (bus 0x00): cleared",
                "bond 0: CLEAR from function 2 (bus 0x00): check: no such bond",
            ]
        );
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn bond_table_is_shared_by_the_functions_of_a_chip() {
        // Function 0 sets the bond, the main moves to function 1
        // (switch_main_dev), which changes and clears it; a function on
        // another bus has a bond 0 of its own.
        let mem = VecMem::new(4096);
        let (mut f0, p0) = fw_bond(0, "bond-share-0");
        let (mut f1, p1) = fw_bond(1, "bond-share-1");
        let (mut g, p2) = fw_bond(0, "bond-share-2");
        g.loc.bus = 1;
        f1.chip = f0.chip.clone();
        g.chip = f0.chip.clone();
        run_bond(&mut f0, &mem, op::SET_BOND_INFO, [0, 0, 1, 0x1, 0x3, 0]);
        run_bond(&mut g, &mem, op::SET_BOND_INFO, [0, 1, 2, 0x3, 0x3, 2]);
        assert_eq!(f0.chip.borrow().bonds.len(), 2);
        let d = run_bond(
            &mut f1,
            &mem,
            op::CHANGE_ACTIVE_PORT,
            [0, 0, 1, 0x2, 0x2, 0],
        );
        assert_eq!(d.retval, ret::SUCCESS);
        {
            let chip = f0.chip.borrow();
            assert_eq!(chip.bonds[&(0, 0)].main, f1.loc);
            assert!(chip.bond_of_main(f0.loc).is_none());
            assert_eq!(chip.bonds[&(1, 0)].info.hash, 2);
        }
        let d = run_bond(&mut f1, &mem, op::CLEAR_BOND_INFO, [0; 6]);
        assert_eq!(d.retval, ret::SUCCESS);
        let chip = f0.chip.borrow();
        assert_eq!(chip.bonds.keys().copied().collect::<Vec<_>>(), [(1, 0)]);
        assert_eq!(
            chip.summary(),
            [
                "bond 0 (bus 0x00): 1 SET, 1 CHANGE_ACTIVE_PORT, 1 CLEAR, 0 refused; cleared",
                "bond 0 (bus 0x01): 1 SET, 0 CHANGE_ACTIVE_PORT, 0 CLEAR, 0 refused; main function 0, mode 2/4 slaves 0x3 active 0x3 (2) hash L23",
            ]
        );
        drop(chip);
        assert_eq!(
            notes(&mut f1, &p1),
            [
                "bond 0: CHANGE_ACTIVE_PORT from function 1 (bus 0x00): mode 1 slaves 0x2 active 0x2 (1) hash -",
                "bond 0: main function now 1 (was 0)",
                "bond 0: CLEAR from function 1 (bus 0x00): cleared",
            ]
        );
        for p in [p0, p1, p2] {
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn link_control_sets_the_port() {
        let mut f = fw();
        assert!(f.port_up, "up by default");
        f.control("link:down").unwrap();
        assert!(!f.port_up);
        f.control("link:up\n").unwrap();
        assert!(f.port_up);
        assert!(f.control("link:sideways").is_err());
        assert!(f.control("link:").is_err());
        assert!(f.port_up);
        // `clear` disarms faults, not the link.
        f.control("link:down").unwrap();
        f.control("clear").unwrap();
        assert!(!f.port_up);
    }
}
