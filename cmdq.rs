// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The command queue (CMQ): the ring of descriptors through which the driver
//! talks to the RoCE engine's firmware.
//!
//! Same protocol and timeouts as the C driver: descriptors are copied into a
//! 1024-entry DMA ring, the producer index register is written, and the
//! driver busy-waits up to 30 ms (35 ms for POST_MB) for the firmware to move
//! the consumer index to it; answers are read back from the ring slots.
//!
//! On top of the ring sits the mailbox ([`Cmd::mbox`]): context commands
//! posted with POST_MB, completed either by polling QUERY_MB_ST (poll mode,
//! during bring-up) or by a mailbox event on the AEQ that carries the token
//! of one of 32 slots (event mode, once the EQs exist).

pub mod desc;
pub mod slot;

use crate::cmdq::desc::{retval_errno, CmqData, Desc, CSQ_DESC_NUM};
use crate::cmdq::slot::{Done, SlotLock, TokenState, MAX_CMDS};
use crate::dfx::{DfxCnt, SwStat};
use crate::field::Field;
use crate::hns_roce_hw_v2::consts::cmq_op;
use crate::hns_roce_hw_v2::regs::{
    TX_CMQ_BASEADDR_H, TX_CMQ_BASEADDR_L, TX_CMQ_CI, TX_CMQ_DEPTH, TX_CMQ_PI,
};
use crate::rdma::{
    new_spinlock_irq, trace, DbOffset, Event, IbLog, LogLevel, RegWindow, Regs, ResetInfo,
    SpinLockIrq,
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{
        io_project, io_read, io_write,
        poll::{read_poll_timeout, read_poll_timeout_atomic},
        Io,
    },
    new_condvar,
    new_mutex,
    prelude::*,
    sync::{aref::ARef, CondVar, Mutex},
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

/// Bytes of a mailbox buffer (`HNS_ROCE_MAILBOX_SIZE`).
pub(crate) const MAILBOX_SIZE: usize = 4096;
/// Token of a polled mailbox.
const POLL_TOKEN: u32 = 0xffff;
/// How long a mailbox may take, in ms (`HNS_ROCE_CMD_TIMEOUT_MSECS`).
const CMD_TIMEOUT_MS: u32 = 10000;
/// How long to wait for the mailbox to become free, in ms.
const GO_BIT_TIMEOUT_MS: u32 = 10000;
/// QUERY_MB_ST: a mailbox is being executed.
const MB_ST_HW_RUN: u32 = 1 << 31;
/// QUERY_MB_ST: completion status of the last mailbox.
const MB_ST_COMPLETE: Field<CmqData> = Field::new(7, 0);
/// QUERY_MB_ST: the whole status word.
const MB_ST_WORD: Field<CmqData> = Field::new(31, 0);
/// POST_MB: the six payload words (in, out, cmd/tag, token/event).
const POST_MB_WORDS: [Field<CmqData>; 6] = [
    Field::new(31, 0),
    Field::new(63, 32),
    Field::new(95, 64),
    Field::new(127, 96),
    Field::new(159, 128),
    Field::new(191, 160),
];
/// Completion status meaning success.
const MB_ST_COMPLETE_SUCC: u32 = 1;
/// The completion status a mailbox wait reports when a reset made the
/// mailbox unavailable (every status bit set: not success).
const MB_ST_COMPLETE_ALL: u32 = 0xff;
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

/// A DMA buffer a mailbox command reads a context from or writes one to.
pub(crate) struct MailboxBuf {
    buf: Coherent<[u32]>,
}

impl MailboxBuf {
    /// A zeroed 4 KiB mailbox buffer.
    pub(crate) fn new(dev: &Device<Bound>) -> Result<Self> {
        Ok(Self {
            buf: Coherent::<u32>::zeroed_slice(dev, MAILBOX_SIZE / 4, GFP_KERNEL)?,
        })
    }

    /// Its bus address.
    pub(crate) fn dma(&self) -> u64 {
        self.buf.dma_address()
    }

    /// Copies `words` (already little-endian) to the start of the buffer,
    /// one 32-bit store per word in order.
    ///
    /// # Errors
    ///
    /// `ERANGE` if `words` is longer than the buffer (nothing past its end
    /// is written).
    pub(crate) fn write_le_words(&self, words: &[u32]) -> Result {
        for (i, w) in words.iter().enumerate() {
            io_write!(&self.buf, [try: i], *w);
        }
        Ok(())
    }

    /// Copies the start of the buffer (little-endian words, as a QUERY
    /// mailbox left them) into `words`, one 32-bit load per word.
    ///
    /// # Errors
    ///
    /// `ERANGE` if `words` is longer than the buffer.
    pub(crate) fn read_le_words(&self, words: &mut [u32]) -> Result {
        for (i, w) in words.iter_mut().enumerate() {
            *w = io_read!(&self.buf, [try: i]);
        }
        Ok(())
    }
}

/// Reads a context back from the engine: the QUERY mailbox `op` for
/// object `tag` (the `hns_roce_v2_query_*` functions), its first
/// `words.len()` words into `words` (as [`MailboxBuf::read_le_words`]).
pub(crate) fn query_context(
    cmd: &Cmd,
    dev: &Device<Bound>,
    op: u8,
    tag: u32,
    words: &mut [u32],
) -> Result {
    let mb = MailboxBuf::new(dev)?;
    cmd.mbox(0, mb.dma(), op, tag)?;
    mb.read_le_words(words)?;
    Ok(())
}

impl SlotLock for SpinLockIrq<TokenState> {
    fn with<R>(&self, f: impl FnOnce(&mut TokenState) -> R) -> R {
        f(&mut self.lock())
    }
}

impl Done for Event {
    fn rearm(&self) {
        self.reinit();
    }

    fn complete(&self) {
        Event::complete(self);
    }
}

/// Which slots are free.
struct SlotState {
    free_head: usize,
    busy: u32,
    in_flight: usize,
}

/// The command interface of one function: the CMQ and the mailbox on it.
#[pin_data]
pub(crate) struct Cmd {
    regs: RegWindow,
    dev: ARef<Device>,
    /// The ib_device's log, for the messages the C driver prints with
    /// `ibdev_*` (see `ibdev_err!`).
    log: IbLog,
    #[pin]
    cmq: Mutex<Cmq>,
    /// Serialises polled mailboxes (post + wait), like the C `poll_sem`.
    #[pin]
    poll: Mutex<()>,
    #[pin]
    slots: Mutex<SlotState>,
    #[pin]
    slot_freed: CondVar,
    /// Each event-mode slot's token and result, under a lock that the
    /// waiter's re-arm and the AEQ handler's completion both take
    /// (`slot::arm`, `slot::event`).
    #[pin]
    tokens: [SpinLockIrq<TokenState>; MAX_CMDS],
    #[pin]
    done: [Event; MAX_CMDS],
    use_events: AtomicBool,
    /// Doorbells are not rung (C's `dis_db`).
    dis_db: AtomicBool,
    /// The function is going through a reset (C's state `RST_DOWN`).
    reset_down: AtomicBool,
    /// The instance is being torn down (C's state `UNINIT`): the engine
    /// holds no more completions, CQs are polled in software.
    uninit: AtomicBool,
    /// The function's software counters (debugfs `sw_stat`).
    stat: SwStat,
    /// The device is registered and takes user contexts (C's `active`).
    active: AtomicBool,
    /// The NIC's reset state.
    rst: ResetInfo,
    /// The NIC's count of finished hardware resets when this instance
    /// started (C's `reset_cnt`): a different count means a reset wiped
    /// the hardware since.
    reset_cnt: kernel::ffi::c_ulong,
}

impl Cmd {
    /// Wraps a ready CMQ; mailboxes start in poll mode. `rst` is the
    /// function's reset state, whose count of hardware resets is taken now.
    pub(crate) fn new(
        regs: RegWindow,
        dev: ARef<Device>,
        cmq: Cmq,
        rst: ResetInfo,
    ) -> impl PinInit<Self, Error> {
        let reset_cnt = rst.reset_cnt();
        try_pin_init!(Self {
            regs,
            dev,
            log: IbLog::new(),
            cmq <- new_mutex!(cmq),
            poll <- new_mutex!(()),
            slots <- new_mutex!(SlotState { free_head: 0, busy: 0, in_flight: 0 }),
            slot_freed <- new_condvar!(),
            // CAST: slot indexes are below 32.
            tokens <- pin_init::pin_init_array_from_fn(|i| {
                new_spinlock_irq!(TokenState::new(i as u16), "hns_roce_rs mbox slot")
            }),
            done <- pin_init::pin_init_array_from_fn(|_| Event::new()),
            use_events: AtomicBool::new(false),
            dis_db: AtomicBool::new(false),
            reset_down: AtomicBool::new(false),
            uninit: AtomicBool::new(false),
            stat: SwStat::new(),
            active: AtomicBool::new(false),
            rst,
            reset_cnt,
        }? Error)
    }

    /// The function's registers.
    pub(crate) fn regs(&self) -> Regs<'_> {
        self.regs.io()
    }

    /// Whether a doorbell may be rung now: not once doorbells are
    /// disabled, nor while the NIC reports a hardware reset (the engine
    /// would take the write for a new one's state).
    fn may_ring(&self) -> bool {
        !self.dis_db.load(Ordering::Acquire) && !self.rst.hw_resetting()
    }

    /// Rings a doorbell with one 64-bit write (`hns_roce_write64`), unless
    /// doorbells are disabled or a hardware reset is under way.
    pub(crate) fn ring_db(&self, v: u64, off: DbOffset) {
        if self.may_ring() {
            self.regs.write64(v, off);
        }
    }

    /// Rings a doorbell outside the register window (the HIP09 kernel SQ
    /// doorbells of `mem_base`, or a direct WQE) through `ring`, under the
    /// same conditions as [`Cmd::ring_db`].
    pub(crate) fn ring_with(&self, ring: impl FnOnce()) {
        if self.may_ring() {
            ring();
        }
    }

    /// Whether the NIC reports a hardware reset under way.
    pub(crate) fn hw_resetting(&self) -> bool {
        self.rst.hw_resetting()
    }

    /// Whether the NIC has finished a hardware reset since this instance
    /// started.
    pub(crate) fn reset_since_init(&self) -> bool {
        self.rst.reset_cnt() != self.reset_cnt
    }

    /// Whether the NIC's reset task is running.
    pub(crate) fn sw_resetting(&self) -> bool {
        self.rst.sw_resetting()
    }

    /// Whether `init_instance` (not a reset's re-init) is running.
    pub(crate) fn instance_initializing(&self) -> bool {
        self.rst.instance_initializing()
    }

    /// Stops doorbells: a reset is under way or done.
    pub(crate) fn disable_doorbells(&self) {
        self.dis_db.store(true, Ordering::Release);
    }

    /// The reset checks made before a command or mailbox and after a
    /// failed one (`v2_chk_mbox_is_avail` and `check_aedev_reset_status`),
    /// on the queue `q` (locked). Once the hardware is known to have been
    /// reset (the queue is cleared), nothing is sent again. A finished
    /// hardware reset clears the queue; a stopped NIC command queue waits
    /// up to a second for the reset it announces to finish; the NIC's
    /// reset task running refuses the commands of `init_instance`. Each of
    /// them stops doorbells.
    fn gate(&self, q: &mut Cmq) -> Gate {
        if q.is_cleared() {
            return Gate::Done;
        }
        let init = self.rst.initializing();
        let busy_if_init = if init { Gate::Busy } else { Gate::Done };
        if self.reset_since_init() {
            self.disable_doorbells();
            q.set_cleared();
            return busy_if_init;
        }
        if self.rst.cmdq_stopped() {
            self.disable_doorbells();
            let finished = read_poll_timeout(
                || Ok(self.rst.reset_cnt()),
                |n| *n > self.reset_cnt,
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
        if self.rst.sw_resetting() && self.rst.instance_initializing() {
            self.disable_doorbells();
            if self.reset_since_init() {
                q.set_cleared();
            }
            return Gate::Busy;
        }
        Gate::Open
    }

    /// Doorbells are not rung (a reset is under way).
    pub(crate) fn doorbells_off(&self) -> bool {
        self.dis_db.load(Ordering::Acquire)
    }

    /// The function goes down for a reset (`hns_roce_hw_v2_reset_notify_down`):
    /// doorbells stop and new work requests are refused.
    pub(crate) fn set_reset_down(&self) {
        self.active.store(false, Ordering::Release);
        self.dis_db.store(true, Ordering::Release);
        self.reset_down.store(true, Ordering::Release);
    }

    /// Whether the function is going through a reset.
    pub(crate) fn is_reset_down(&self) -> bool {
        self.reset_down.load(Ordering::Acquire)
    }

    /// The instance is being torn down (`__hns_roce_hw_v2_uninit_instance`
    /// sets `HNS_ROCE_DEVICE_STATE_UNINIT`): from now on `poll_cq` answers
    /// from the WR-id rings.
    pub(crate) fn set_uninit(&self) {
        self.active.store(false, Ordering::Release);
        self.uninit.store(true, Ordering::Release);
    }

    /// The device is registered, its MAC written and its netdev watched
    /// (the end of `hns_roce_register_device`): user contexts may open.
    pub(crate) fn set_active(&self) {
        self.active.store(true, Ordering::Release);
    }

    /// Whether user contexts may open: not before the registration ends,
    /// not from a reset's DOWN step or a teardown on.
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Whether the instance is being torn down.
    pub(crate) fn is_uninit(&self) -> bool {
        self.uninit.load(Ordering::Acquire)
    }

    /// The function's software counters.
    pub(crate) fn sw_stat(&self) -> &SwStat {
        &self.stat
    }

    /// Whether the function is down, for a reset or a teardown (C's
    /// `state >= HNS_ROCE_DEVICE_STATE_RST_DOWN`).
    pub(crate) fn is_down(&self) -> bool {
        self.is_reset_down() || self.is_uninit()
    }

    /// The PCI function, for logging.
    pub(crate) fn device(&self) -> &Device {
        &self.dev
    }

    /// The ib_device's log.
    pub(crate) fn ib_log(&self) -> &IbLog {
        &self.log
    }

    /// [`IbLog::print`] of this function's log: what every `ibdev_*!`
    /// site calls. Out of line, so that a site does not load the log and
    /// the device itself.
    #[inline(never)]
    pub(crate) fn ib_print(&self, level: LogLevel, args: core::fmt::Arguments<'_>) {
        self.log.print(level, &self.dev, args)
    }

    /// [`IbLog::print_ret`] of this function's log (the `ret =` form of the
    /// `ibdev_*!` macros), out of line as [`Cmd::ib_print`].
    #[inline(never)]
    pub(crate) fn ib_print_ret(&self, level: LogLevel, what: &str, ret: i32) {
        self.log.print_ret(level, &self.dev, what, ret)
    }

    /// Sends one command and logs a failure as the C driver does
    /// (`hns_roce_cmq_send`). The reset checks ([`Cmd::gate`]) come before
    /// it and again after a failure: a command the reset makes pointless
    /// reports success unsent (or its failure as success), one it refuses
    /// `EBUSY`.
    pub(crate) fn send(&self, d: &mut [Desc]) -> Result {
        let mut q = self.cmq.lock();
        if q.is_fatal() {
            return Err(EIO);
        }
        if let Some(r) = self.gate(&mut q).stopped() {
            return r;
        }
        let r = q.send(self.regs.io(), d, &self.stat).map_err(|e| {
            if e.unsent {
                return e.err;
            }
            if let Some((from, to)) = e.moved {
                hdev_warn!(self.dev, "CMDQ move tail from {} to {}.\n", from, to);
            }
            hdev_err!(
                self.dev,
                "Cmdq IO error, opcode = {:#x}, return = {}.\n",
                e.opcode,
                e.err.to_errno()
            );
            e.err
        });
        if r.is_err() {
            if let Some(r) = self.gate(&mut q).stopped() {
                return r;
            }
        }
        r
    }

    /// The reset checks alone, for a mailbox (`hns_roce_cmd_mbox`).
    fn mbox_gate(&self) -> Gate {
        let mut q = self.cmq.lock();
        self.gate(&mut q)
    }

    /// Runs `f` on the CMQ itself (fatal/cleared state).
    pub(crate) fn with_cmq<R>(&self, f: impl FnOnce(&mut Cmq) -> R) -> R {
        f(&mut self.cmq.lock())
    }

    /// Polls QUERY_MB_ST until no mailbox runs (`v2_wait_mbox_complete`);
    /// the completion status of the last one.
    fn wait_mbox_idle(&self, timeout_ms: u32) -> Result<u32> {
        // The last status read, for the message on timeout.
        let status = core::cell::Cell::new(0);
        read_poll_timeout(
            || {
                // A reset made the mailbox unavailable: nothing runs in
                // it any more; report every status bit, not success.
                if self.mbox_gate() != Gate::Open {
                    status.set(0);
                    return Ok(Some(MB_ST_COMPLETE_ALL));
                }
                let mut d = [Desc::new(cmq_op::QUERY_MB_ST, true)];
                let r = self.send(&mut d);
                if self.cmq.lock().is_fatal() {
                    return Err(EIO);
                }
                status.set(if r.is_ok() { d[0].get(MB_ST_WORD) } else { 0 });
                Ok(r.is_ok().then(|| d[0].get(MB_ST_COMPLETE)))
            },
            |done| done.is_some() && status.get() & MB_ST_HW_RUN == 0,
            Delta::from_micros(10),
            Delta::from_millis(i64::from(timeout_ms)),
        )
        .map(|done| done.unwrap_or(0))
        .inspect_err(|e| {
            if *e == ETIMEDOUT {
                hdev_err!(self.dev, "failed to wait mbox status {:#x}\n", status.get());
            }
        })
    }

    /// Posts one mailbox after waiting for the mailbox to be free.
    fn post(
        &self,
        in_param: u64,
        out_param: u64,
        cmd: u8,
        tag: u32,
        token: u32,
        event: bool,
    ) -> Result {
        self.wait_mbox_idle(GO_BIT_TIMEOUT_MS).inspect_err(|e| {
            hdev_err!(
                self.dev,
                "failed to check post mbox status = 0x0",
                ret = e.to_errno()
            )
        })?;
        let mut d = [Desc::new(cmq_op::POST_MB, false)];
        // CAST: the halves of the 64-bit addresses.
        let words = [
            in_param as u32,
            (in_param >> 32) as u32,
            out_param as u32,
            (out_param >> 32) as u32,
            (tag << 8) | u32::from(cmd),
            (u32::from(event) << 16) | token,
        ];
        for (f, w) in POST_MB_WORDS.iter().zip(words) {
            d[0].data.write(*f, w);
        }
        self.send(&mut d)
            .inspect(|()| self.stat.inc(DfxCnt::MbxPosted))
            .inspect_err(|e| hdev_err!(self.dev, "failed to post mailbox", ret = e.to_errno()))
    }

    /// Runs mailbox command `cmd` on object `tag` (`hns_roce_cmd_mbox`):
    /// `in_param`/`out_param` are DMA addresses of context buffers (or 0).
    ///
    /// # Errors
    ///
    /// `EBUSY` on a timeout or a failed completion in poll mode, `EIO` on a
    /// failed completion in event mode, or the CMQ's errno. While a reset
    /// is under way the command is not posted: success once the hardware
    /// was reset, `EBUSY` while waiting for it or while bringing the
    /// function up (see [`Cmd::gate`]).
    pub(crate) fn mbox(&self, in_param: u64, out_param: u64, cmd: u8, tag: u32) -> Result {
        if let Some(r) = self.mbox_gate().stopped() {
            return r;
        }
        if self.use_events.load(Ordering::Acquire) {
            self.mbox_wait(in_param, out_param, cmd, tag)
        } else {
            self.mbox_poll(in_param, out_param, cmd, tag)
        }
    }

    fn mbox_poll(&self, in_param: u64, out_param: u64, cmd: u8, tag: u32) -> Result {
        let _g = self.poll.lock();
        self.post(in_param, out_param, cmd, tag, POLL_TOKEN, false)
            .inspect_err(|e| {
                hdev_err!(
                    self.dev,
                    "failed to post mailbox {:#x} in poll mode, ret = {}.\n",
                    cmd,
                    e.to_errno()
                )
            })?;
        match self.wait_mbox_idle(CMD_TIMEOUT_MS) {
            Ok(MB_ST_COMPLETE_SUCC) => {
                self.stat.inc(DfxCnt::MbxPolled);
                Ok(())
            }
            Ok(_) => Err(EBUSY),
            Err(e) => {
                hdev_err!(
                    self.dev,
                    "failed to check mbox status = 0x0",
                    ret = e.to_errno()
                );
                Err(e)
            }
        }
    }

    /// Takes a free slot, waiting while all 32 are in flight.
    fn take_slot(&self) -> usize {
        let mut s = self.slots.lock();
        while s.in_flight >= MAX_CMDS {
            self.slot_freed.wait(&mut s);
        }
        let mut i = s.free_head;
        while s.busy & (1 << i) != 0 {
            i = (i + 1) % MAX_CMDS;
        }
        s.free_head = (i + 1) % MAX_CMDS;
        s.busy |= 1 << i;
        s.in_flight += 1;
        i
    }

    fn put_slot(&self, i: usize) {
        let mut s = self.slots.lock();
        s.busy &= !(1 << i);
        s.in_flight -= 1;
        drop(s);
        self.slot_freed.notify_one();
    }

    fn mbox_wait(&self, in_param: u64, out_param: u64, cmd: u8, tag: u32) -> Result {
        let i = self.take_slot();
        let (Some(state), Some(done)) = (self.tokens.get(i), self.done.get(i)) else {
            self.put_slot(i);
            return Err(EINVAL);
        };
        let token = slot::arm(state, done);
        let ret = match self.post(in_param, out_param, cmd, tag, u32::from(token), true) {
            Err(e) => {
                hdev_err!(
                    self.dev,
                    "failed to post mailbox {:#x} in event mode, ret = {}.\n",
                    cmd,
                    e.to_errno()
                );
                Err(e)
            }
            Ok(()) if !done.wait_ms(CMD_TIMEOUT_MS) => {
                hdev_err!(
                    self.dev,
                    "[cmd] token {:#x} mailbox {:#x} timeout.\n",
                    token,
                    cmd
                );
                Err(EBUSY)
            }
            Ok(()) => match state.with(|s| s.result()) {
                0 => Ok(()),
                r => {
                    hdev_err!(
                        self.dev,
                        "[cmd] token {:#x} mailbox {:#x} error {}.\n",
                        token,
                        cmd,
                        r
                    );
                    Err(Error::from_errno(r))
                }
            },
        };
        self.put_slot(i);
        ret
    }

    /// A mailbox completion from the AEQ (`hns_roce_cmd_event`); called in
    /// interrupt context.
    pub(crate) fn event(&self, token: u16, status: u8, out_param: u64) {
        let i = slot::slot_of(token);
        let (Some(state), Some(done)) = (self.tokens.get(i), self.done.get(i)) else {
            return;
        };
        let r = if u32::from(status) == MB_ST_COMPLETE_SUCC {
            0
        } else {
            EIO.to_errno()
        };
        let ev = slot::event(state, done, token, r, out_param);
        self.stat.inc_if(DfxCnt::MbxEvent, ev.is_ok());
        if let Err(expected) = ev {
            hdev_err!(
                self.dev,
                "[cmd] invalid ae token {:#x}, context token is {:#x}.\n",
                token,
                expected
            );
        }
    }

    /// Switches mailboxes to event mode (the AEQ must be running).
    pub(crate) fn use_events(&self) {
        self.use_events.store(true, Ordering::Release);
    }

    /// Back to poll mode, for teardown.
    pub(crate) fn use_polling(&self) {
        self.use_events.store(false, Ordering::Release);
    }
}
