// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The command queue (CMQ): the ring of descriptors through which the driver
//! talks to the RoCE engine's firmware.
//!
//! Same protocol and timeouts as the C driver: descriptors are copied into a
//! 1024-entry DMA ring, the producer index register is written, and the
//! driver busy-waits up to 30 ms (35 ms for POST_MB) for the firmware to move
//! the consumer index to it; answers are read back from the ring slots.
//!
//! Three types share the work, and [`Cmd`] composes them for the device:
//! the function's [`DevState`] (registers, doorbell and reset flags, log,
//! counters; [`state`]), the command [`Ring`] (the [`Cmq`] under its lock and
//! the reset checks around each command) and the [`Mailbox`] posted on that
//! ring ([`mbox`]). The ring and the mailbox keep no pointer to the state:
//! each operation is given it, so none of them owns more than its job.

pub mod desc;
pub mod mbox;
pub mod slot;
pub mod state;

pub(crate) use mbox::{query_context, write_context, Mailbox, MailboxBuf, MboxCmd};
pub(crate) use state::DevState;

use crate::cmdq::desc::{retval_errno, Desc, CSQ_DESC_NUM};
use crate::dfx::{DfxCnt, SwStat};
use crate::hns_roce_hw_v2::consts::cmq_op;
use crate::hns_roce_hw_v2::regs::{
    TX_CMQ_BASEADDR_H, TX_CMQ_BASEADDR_L, TX_CMQ_CI, TX_CMQ_DEPTH, TX_CMQ_PI,
};
use crate::rdma::{trace, RegWindow, Regs, ResetInfo};
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{
        io_project, io_read, io_write,
        poll::{read_poll_timeout, read_poll_timeout_atomic},
        Io,
    },
    new_mutex,
    prelude::*,
    sync::{aref::ARef, Mutex},
    time::{delay::udelay, Delta}, //
};

/// How many 1 us waits for an answer (`HNS_ROCE_CMQ_TX_TIMEOUT`).
const TX_TIMEOUT_US: u32 = 30000;
/// The same for POST_MB.
const TX_TIMEOUT_POST_MB_US: u32 = 35000;
/// Tries of a POST_MB the firmware answers with a timeout.
const POST_MB_TRY_CNT: u32 = 8;
/// Pause between those tries, in ms.
const POST_MB_RETRY_GAP_MS: u32 = 5;
/// Words per descriptor.
const DESC_WORDS: usize = 8;

/// A failed command: which opcode, and why.
#[derive(Debug)]
pub(crate) struct CmqError {
    /// The opcode of the failed command.
    pub(crate) opcode: u16,
    /// The errno.
    pub(crate) err: Error,
    /// On a timeout: the ring head was moved from `.0` back to the
    /// firmware's consumer index `.1`.
    pub(crate) moved: Option<(u32, u32)>,
    /// Refused without touching the ring (the queue is dead): the C driver
    /// prints nothing for it.
    pub(crate) unsent: bool,
}

impl From<CmqError> for Error {
    fn from(e: CmqError) -> Self {
        e.err
    }
}

/// The command send queue.
///
/// # Invariants
///
/// `head < CSQ_DESC_NUM`, and `ring` holds `CSQ_DESC_NUM * DESC_WORDS` words.
pub(crate) struct Cmq {
    ring: Coherent<[u32]>,
    /// The PCI function, whose name the trace events carry.
    dev: ARef<Device>,
    head: u32,
    fatal: bool,
    cleared: bool,
    initializing: bool,
}

impl Cmq {
    /// Allocates the ring and programs it into the engine (`init_csq`).
    pub(crate) fn new(dev: &Device<Bound>, regs: Regs<'_>) -> Result<Self> {
        // CAST: 1024 * 8 words.
        let ring =
            Coherent::<u32>::zeroed_slice(dev, CSQ_DESC_NUM as usize * DESC_WORDS, GFP_KERNEL)?;
        let dma = ring.dma_address();
        // CAST: the two halves of the 64-bit DMA address.
        regs.write_reg(TX_CMQ_BASEADDR_L::from(dma as u32));
        regs.write_reg(TX_CMQ_BASEADDR_H::from((dma >> 32) as u32));
        regs.write_reg(TX_CMQ_DEPTH::from(CSQ_DESC_NUM >> 3));
        regs.write_reg(TX_CMQ_CI::zeroed());
        regs.write_reg(TX_CMQ_PI::zeroed());
        // INVARIANT: head 0, ring of the full size.
        Ok(Cmq {
            ring,
            dev: ARef::from(&**dev),
            head: 0,
            fatal: false,
            cleared: false,
            initializing: true,
        })
    }

    /// Whether the queue was marked fatal.
    pub(crate) fn is_fatal(&self) -> bool {
        self.fatal
    }

    /// Marks the function cleared: from now on commands are not sent and
    /// report success, as the C driver does once FUNC_CLEAR completed (its
    /// `is_reset`), so teardown after the clear touches no hardware.
    pub(crate) fn set_cleared(&mut self) {
        self.cleared = true;
    }

    /// Whether the function was cleared.
    pub(crate) fn is_cleared(&self) -> bool {
        self.cleared
    }

    /// Ends the bring-up: from now on a timeout no longer marks the queue
    /// dead. Until then (the probe, a re-init after a reset, and their
    /// unwinding) the first command the firmware does not answer makes
    /// every later one fail with `EIO`, as the C driver's
    /// `update_cmdq_status` does while the instance or the reset re-init is
    /// in its INIT state (`HNS_ROCE_CMDQ_STATE_FATAL_ERR`).
    pub(crate) fn init_done(&mut self) {
        self.initializing = false;
    }

    /// Whether the bring-up (or a reset's re-init) is still running: C's
    /// instance or reset state INIT.
    pub(crate) fn is_initializing(&self) -> bool {
        self.initializing
    }

    /// Stores descriptor words `w` (already little-endian) in ring slot
    /// `idx`, word 0 first, one 32-bit store each.
    fn write_slot(&self, idx: u32, w: &[u32; DESC_WORDS]) -> Result {
        // CAST: `idx < CSQ_DESC_NUM`, so the offset is inside the ring.
        let off = idx as usize * DESC_WORDS;
        let slot = io_project!(&self.ring, [try: off..off + DESC_WORDS]);
        for (i, x) in w.iter().enumerate() {
            io_write!(slot, [try: i], *x);
        }
        Ok(())
    }

    /// Loads the words of ring slot `idx` (little-endian, as the firmware
    /// wrote its answer back), word 0 first.
    fn read_slot(&self, idx: u32) -> Result<[u32; DESC_WORDS]> {
        // CAST: as in `write_slot`.
        let off = idx as usize * DESC_WORDS;
        let slot = io_project!(&self.ring, [try: off..off + DESC_WORDS]);
        let mut w = [0u32; DESC_WORDS];
        for (i, x) in w.iter_mut().enumerate() {
            *x = io_read!(slot, [try: i]);
        }
        Ok(w)
    }

    /// Sends one command made of `descs` (chained with NEXT by the caller)
    /// and waits for the answer, which replaces `descs`.
    ///
    /// # Errors
    ///
    /// `EAGAIN` if the firmware did not answer within 30 ms, `EIO` once
    /// the queue is marked fatal, else the errno of a non-zero return code.
    /// Each attempt counts in `stat` (`cmds`, and `cmds_err` if it failed).
    pub(crate) fn send(
        &mut self,
        regs: Regs<'_>,
        descs: &mut [Desc],
        stat: &SwStat,
    ) -> Result<(), CmqError> {
        let opcode = descs.first().map_or(0, |d| d.opcode);
        let fail = |err| CmqError {
            opcode,
            err,
            moved: None,
            unsent: false,
        };
        // CAST: a command is a handful of descriptors.
        if self.fatal {
            return Err(CmqError {
                unsent: true,
                ..fail(EIO)
            });
        }
        if descs.is_empty() || descs.len() as u32 >= CSQ_DESC_NUM {
            return Err(fail(EIO));
        }
        if self.cleared {
            return Ok(());
        }
        let mut tries = if opcode == cmq_op::POST_MB {
            POST_MB_TRY_CNT
        } else {
            1
        };
        loop {
            tries -= 1;
            let r = self.send_once(regs, descs);
            stat.inc(DfxCnt::Cmds);
            stat.inc_if(DfxCnt::CmdsErr, r.is_err());
            match r {
                Err(CmqError { err, .. }) if err == ETIME && tries > 0 => {
                    udelay(Delta::from_micros(i64::from(POST_MB_RETRY_GAP_MS) * 1000));
                }
                r => return r,
            }
        }
    }

    /// The `hns_cmdq_req` (`resp` false) or `hns_cmdq_resp` event of `d`.
    fn trace_desc(&self, resp: bool, d: &Desc) {
        let data = core::array::from_fn(|i| d.data.word(i));
        trace::cmdq(resp, &self.dev, d.opcode, d.flag, d.retval, &data);
    }

    /// One attempt of [`Cmq::send`].
    fn send_once(&mut self, regs: Regs<'_>, descs: &mut [Desc]) -> Result<(), CmqError> {
        let opcode = descs.first().map_or(0, |d| d.opcode);
        let fail = |err| CmqError {
            opcode,
            err,
            moved: None,
            unsent: false,
        };
        let timeout = if opcode == cmq_op::POST_MB {
            TX_TIMEOUT_POST_MB_US
        } else {
            TX_TIMEOUT_US
        };
        let start = self.head;
        for d in descs.iter() {
            self.trace_desc(false, d);
            self.write_slot(self.head, &d.to_le_words()).map_err(fail)?;
            // INVARIANT: wraps below `CSQ_DESC_NUM`.
            self.head = (self.head + 1) % CSQ_DESC_NUM;
        }
        // The MMIO write orders the ring stores before it.
        regs.write_reg(TX_CMQ_PI::from(self.head));
        // CAST: a `u32` count of 1 us waits fits `usize`.
        let answered = read_poll_timeout_atomic(
            || Ok(u32::from(regs.read(TX_CMQ_CI))),
            |ci| *ci == self.head,
            Delta::from_micros(1),
            timeout as usize,
        );
        if answered.is_err() {
            let from = self.head;
            // INVARIANT: the firmware's CI is below the depth it was given.
            self.head = u32::from(regs.read(TX_CMQ_CI)) % CSQ_DESC_NUM;
            if self.initializing {
                self.fatal = true;
            }
            return Err(CmqError {
                opcode,
                err: EAGAIN,
                moved: Some((from, self.head)),
                unsent: false,
            });
        }
        let mut ret = Ok(());
        let mut idx = start;
        for d in descs.iter_mut() {
            let w = self.read_slot(idx).map_err(fail)?;
            *d = Desc::from_le_words(&w);
            self.trace_desc(true, d);
            if d.retval != 0 {
                ret = Err(fail(Error::from_errno(-retval_errno(d.retval))));
            }
            idx = (idx + 1) % CSQ_DESC_NUM;
        }
        ret
    }
}

/// How long a command waits for a reset the NIC's stopped command queue
/// announces to finish, and how often it looks (`HW_RESET_TIMEOUT_US`,
/// `HW_RESET_SLEEP_US`).
const HW_RESET_WAIT_MS: i64 = 1000;
const HW_RESET_POLL_MS: i64 = 1;
/// What the reset checks allow a command or mailbox
/// (`v2_chk_mbox_is_avail`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    /// No reset: send it.
    Open,
    /// A reset took the hardware's state away: skip it and report
    /// success, there is nothing left to change.
    Done,
    /// A reset is under way, or came while the function was being brought
    /// up: refuse it with `EBUSY`.
    Busy,
}

impl Gate {
    /// What a command the gate stops reports (success for [`Gate::Done`],
    /// `EBUSY` for [`Gate::Busy`]); `None` when it may be sent.
    fn stopped(self) -> Option<Result> {
        match self {
            Gate::Open => None,
            Gate::Done => Some(Ok(())),
            Gate::Busy => Some(Err(EBUSY)),
        }
    }
}

/// The command ring of one function: the [`Cmq`] under its lock, with the
/// reset checks made around each command.
///
/// Every operation is given the function's [`DevState`]: its registers,
/// its reset state (for the checks) and its counters.
#[pin_data]
pub(crate) struct Ring {
    #[pin]
    cmq: Mutex<Cmq>,
}

impl Ring {
    /// Wraps a ready CMQ.
    pub(crate) fn new(cmq: Cmq) -> impl PinInit<Self> {
        pin_init!(Self {
            cmq <- new_mutex!(cmq),
        })
    }

    /// The reset checks made before a command or mailbox and after a
    /// failed one (`v2_chk_mbox_is_avail` and `check_aedev_reset_status`),
    /// on the queue `q` (locked). Once the hardware is known to have been
    /// reset (the queue is cleared), nothing is sent again. A finished
    /// hardware reset clears the queue; a stopped NIC command queue waits
    /// up to a second for the reset it announces to finish; the NIC's
    /// reset task running refuses the commands of `init_instance`. Each of
    /// them stops doorbells.
    fn gate(st: &DevState, q: &mut Cmq) -> Gate {
        if q.is_cleared() {
            return Gate::Done;
        }
        let rst = st.reset_info();
        let init = rst.initializing();
        let busy_if_init = if init { Gate::Busy } else { Gate::Done };
        if st.reset_since_init() {
            st.disable_doorbells();
            q.set_cleared();
            return busy_if_init;
        }
        if rst.cmdq_stopped() {
            st.disable_doorbells();
            let finished = read_poll_timeout(
                || Ok(rst.reset_cnt()),
                |n| *n > st.reset_cnt_at_init(),
                Delta::from_millis(HW_RESET_POLL_MS),
                Delta::from_millis(HW_RESET_WAIT_MS),
            )
            .is_ok();
            if !finished {
                return Gate::Busy;
            }
            q.set_cleared();
            return busy_if_init;
        }
        if rst.sw_resetting() && rst.instance_initializing() {
            st.disable_doorbells();
            if st.reset_since_init() {
                q.set_cleared();
            }
            return Gate::Busy;
        }
        Gate::Open
    }

    /// Sends one command and logs a failure as the C driver does
    /// (`hns_roce_cmq_send`). The reset checks ([`Ring::gate`]) come before
    /// it and again after a failure: a command the reset makes pointless
    /// reports success unsent (or its failure as success), one it refuses
    /// `EBUSY`.
    pub(crate) fn send(&self, st: &DevState, d: &mut [Desc]) -> Result {
        let mut q = self.cmq.lock();
        if q.is_fatal() {
            return Err(EIO);
        }
        if let Some(r) = Self::gate(st, &mut q).stopped() {
            return r;
        }
        let r = q.send(st.regs(), d, st.sw_stat()).map_err(|e| {
            if e.unsent {
                return e.err;
            }
            if let Some((from, to)) = e.moved {
                hdev_warn!(st.device(), "CMDQ move tail from {} to {}.\n", from, to);
            }
            hdev_err!(
                st.device(),
                "Cmdq IO error, opcode = {:#x}, return = {}.\n",
                e.opcode,
                e.err.to_errno()
            );
            e.err
        });
        if r.is_err() {
            if let Some(r) = Self::gate(st, &mut q).stopped() {
                return r;
            }
        }
        r
    }

    /// The reset checks alone, for a mailbox (`hns_roce_cmd_mbox`).
    fn gate_now(&self, st: &DevState) -> Gate {
        let mut q = self.cmq.lock();
        Self::gate(st, &mut q)
    }

    /// Whether the queue was marked fatal.
    fn is_fatal(&self) -> bool {
        self.cmq.lock().is_fatal()
    }

    /// Runs `f` on the CMQ itself (fatal/cleared state).
    pub(crate) fn with_cmq<R>(&self, f: impl FnOnce(&mut Cmq) -> R) -> R {
        f(&mut self.cmq.lock())
    }
}

/// The command interface of one function as the device composes it: its
/// [`DevState`], the command [`Ring`] and the [`Mailbox`] posted on that
/// ring.
///
/// Shared (`Arc`) with the interrupt handlers, the HEM tables and debugfs.
/// Code that only needs the state (doorbells, messages, counters, the
/// lifecycle flags) takes [`Cmd::state`]; sending commands and mailboxes
/// needs the ring and the state together, which is what [`Cmd::send`] and
/// [`Cmd::mbox`] pass on.
#[pin_data]
pub(crate) struct Cmd {
    state: DevState,
    #[pin]
    ring: Ring,
    #[pin]
    mailbox: Mailbox,
}

impl Cmd {
    /// Composes the state of a function with its ready CMQ; mailboxes
    /// start in poll mode. `rst` is the function's reset state, whose count
    /// of hardware resets is taken now.
    pub(crate) fn new(
        regs: RegWindow,
        dev: ARef<Device>,
        cmq: Cmq,
        rst: ResetInfo,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            state: DevState::new(regs, dev, rst),
            ring <- Ring::new(cmq),
            mailbox <- Mailbox::new(),
        }? Error)
    }

    /// The function's state: doorbells, lifecycle, reset, counters, log.
    pub(crate) fn state(&self) -> &DevState {
        &self.state
    }

    /// The command ring.
    pub(crate) fn ring(&self) -> &Ring {
        &self.ring
    }

    /// The mailbox.
    pub(crate) fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    /// [`Ring::send`] on this function's ring and state.
    #[inline(never)]
    pub(crate) fn send(&self, d: &mut [Desc]) -> Result {
        self.ring.send(&self.state, d)
    }

    /// [`Mailbox::run`] on this function's mailbox, ring and state.
    pub(crate) fn mbox(&self, in_param: u64, out_param: u64, cmd: u8, tag: u32) -> Result {
        let c = MboxCmd {
            in_param,
            out_param,
            cmd,
            tag,
        };
        self.mailbox.run(&self.ring, &self.state, c)
    }

    /// [`Mailbox::event`] for this function (AEQ interrupt context).
    pub(crate) fn mbox_event(&self, token: u16, status: u8, out_param: u64) {
        self.mailbox.event(&self.state, token, status, out_param)
    }
}

impl AsRef<DevState> for Cmd {
    fn as_ref(&self) -> &DevState {
        &self.state
    }
}
