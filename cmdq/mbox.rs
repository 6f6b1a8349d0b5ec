// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The mailbox: context commands posted to the engine with POST_MB over
//! the command ring, completed either by polling QUERY_MB_ST (poll mode,
//! during bring-up) or by a mailbox event on the AEQ that carries the token
//! of one of 32 slots (event mode, once the EQs exist).
//!
//! [`Mailbox`] holds only what the mailbox itself serialises: the poll-mode
//! lock, the event-mode slots and tokens, and the mode. Each operation is
//! given the ring it posts on and the function's [`DevState`] (reset
//! checks, counters, messages), as the device composes them in
//! [`crate::cmdq::Cmd`].

use super::desc::{CmqData, Desc};
use super::slot::{self, Done, SlotLock, TokenState, MAX_CMDS};
use super::state::DevState;
use super::{Cmd, Gate, Ring};
use crate::dfx::DfxCnt;
use crate::field::Field;
use crate::hns_roce_hw_v2::consts::cmq_op;
use crate::rdma::{new_spinlock_irq, Event, OutlineDrop, SpinLockIrq};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::{io_read, io_write, poll::read_poll_timeout},
    new_condvar,
    new_mutex,
    prelude::*,
    sync::{CondVar, Mutex},
    time::Delta, //
};

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

/// A DMA buffer a mailbox command reads a context from or writes one to.
pub(crate) struct MailboxBuf {
    buf: OutlineDrop<Coherent<[u32]>>,
}

impl MailboxBuf {
    /// A zeroed 4 KiB mailbox buffer.
    #[inline(never)]
    pub(crate) fn new(dev: &Device<Bound>) -> Result<Self> {
        Ok(Self {
            buf: OutlineDrop::new(Coherent::<u32>::zeroed_slice(
                dev,
                MAILBOX_SIZE / 4,
                GFP_KERNEL,
            )?),
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
    #[inline(never)]
    pub(crate) fn write_le_words(&self, words: &[u32]) -> Result {
        for (i, w) in words.iter().enumerate() {
            io_write!(&*self.buf, [try: i], *w);
        }
        Ok(())
    }

    /// Copies the start of the buffer (little-endian words, as a QUERY
    /// mailbox left them) into `words`, one 32-bit load per word.
    ///
    /// # Errors
    ///
    /// `ERANGE` if `words` is longer than the buffer.
    #[inline(never)]
    pub(crate) fn read_le_words(&self, words: &mut [u32]) -> Result {
        for (i, w) in words.iter_mut().enumerate() {
            *w = io_read!(&*self.buf, [try: i]);
        }
        Ok(())
    }
}

/// Reads a context back from the engine: the QUERY mailbox `op` for
/// object `tag` (the `hns_roce_v2_query_*` functions), its first
/// `words.len()` words into `words` (as [`MailboxBuf::read_le_words`]).
#[inline(never)]
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

/// Writes a context to the engine: `words` (already little-endian) into a
/// fresh mailbox buffer, then the mailbox `op` for object `tag` with it as
/// input (a CREATE or MODIFY mailbox).
#[inline(never)]
pub(crate) fn write_context(
    cmd: &Cmd,
    dev: &Device<Bound>,
    op: u8,
    tag: u32,
    words: &[u32],
) -> Result {
    let mb = MailboxBuf::new(dev)?;
    mb.write_le_words(words)?;
    cmd.mbox(mb.dma(), 0, op, tag)
}

/// One mailbox command: `cmd` on object `tag`, with the DMA addresses of
/// its input and output context buffers (or 0).
#[derive(Clone, Copy)]
pub(crate) struct MboxCmd {
    /// The input buffer's address.
    pub(crate) in_param: u64,
    /// The output buffer's address.
    pub(crate) out_param: u64,
    /// The mailbox opcode.
    pub(crate) cmd: u8,
    /// The object (its number) the command is about.
    pub(crate) tag: u32,
}

impl MboxCmd {
    /// The six POST_MB payload words: the in and out buffer addresses,
    /// the command and tag, `token` and whether the completion comes as an
    /// event.
    fn words(self, token: u32, event: bool) -> [u32; 6] {
        // CAST: the halves of the 64-bit addresses.
        [
            self.in_param as u32,
            (self.in_param >> 32) as u32,
            self.out_param as u32,
            (self.out_param >> 32) as u32,
            (self.tag << 8) | u32::from(self.cmd),
            (u32::from(event) << 16) | token,
        ]
    }
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

/// The mailbox of one function: poll-mode serialisation, the event-mode
/// slots and their tokens, and which of the two modes is on.
#[pin_data]
pub(crate) struct Mailbox {
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
}

impl Mailbox {
    /// A mailbox in poll mode, every slot free with its first token.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            poll <- new_mutex!(()),
            slots <- new_mutex!(SlotState { free_head: 0, busy: 0, in_flight: 0 }),
            slot_freed <- new_condvar!(),
            // CAST: slot indexes are below 32.
            tokens <- pin_init::pin_init_array_from_fn(|i| {
                new_spinlock_irq!(TokenState::new(i as u16), "hns_roce_rs mbox slot")
            }),
            done <- pin_init::pin_init_array_from_fn(|_| Event::new()),
            use_events: AtomicBool::new(false),
        }? Error)
    }

    /// Polls QUERY_MB_ST on `ring` until no mailbox runs
    /// (`v2_wait_mbox_complete`); the completion status of the last one.
    fn wait_idle(&self, ring: &Ring, st: &DevState, timeout_ms: u32) -> Result<u32> {
        // The last status read, for the message on timeout.
        let status = core::cell::Cell::new(0);
        read_poll_timeout(
            || {
                // A reset made the mailbox unavailable: nothing runs in
                // it any more; report every status bit, not success.
                if ring.gate_now(st) != Gate::Open {
                    status.set(0);
                    return Ok(Some(MB_ST_COMPLETE_ALL));
                }
                let mut d = [Desc::new(cmq_op::QUERY_MB_ST, true)];
                let r = ring.send(st, &mut d);
                if ring.is_fatal() {
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
                hdev_err!(
                    st.device(),
                    "failed to wait mbox status {:#x}\n",
                    status.get()
                );
            }
        })
    }

    /// Posts one mailbox on `ring` after waiting for the mailbox to be
    /// free; `words` is its POST_MB payload ([`MboxCmd::words`]).
    fn post(&self, ring: &Ring, st: &DevState, words: [u32; 6]) -> Result {
        self.wait_idle(ring, st, GO_BIT_TIMEOUT_MS)
            .inspect_err(|e| {
                hdev_err!(
                    st.device(),
                    "failed to check post mbox status = 0x0",
                    ret = e.to_errno()
                )
            })?;
        let mut d = [Desc::new(cmq_op::POST_MB, false)];
        for (f, w) in POST_MB_WORDS.iter().zip(words) {
            d[0].data.write(*f, w);
        }
        ring.send(st, &mut d)
            .inspect(|()| st.sw_stat().inc(DfxCnt::MbxPosted))
            .inspect_err(|e| hdev_err!(st.device(), "failed to post mailbox", ret = e.to_errno()))
    }

    /// Runs mailbox command `c` over `ring` (`hns_roce_cmd_mbox`).
    ///
    /// # Errors
    ///
    /// `EBUSY` on a timeout or a failed completion in poll mode, `EIO` on a
    /// failed completion in event mode, or the CMQ's errno. While a reset
    /// is under way the command is not posted: success once the hardware
    /// was reset, `EBUSY` while waiting for it or while bringing the
    /// function up (see [`Ring::gate_now`]).
    pub(crate) fn run(&self, ring: &Ring, st: &DevState, c: MboxCmd) -> Result {
        if let Some(r) = ring.gate_now(st).stopped() {
            return r;
        }
        if self.use_events.load(Ordering::Acquire) {
            self.run_event(ring, st, c)
        } else {
            self.run_poll(ring, st, c)
        }
    }

    /// A mailbox in poll mode (`hns_roce_cmd_mbox_poll`).
    fn run_poll(&self, ring: &Ring, st: &DevState, c: MboxCmd) -> Result {
        let _g = self.poll.lock();
        self.post(ring, st, c.words(POLL_TOKEN, false))
            .inspect_err(|e| {
                hdev_err!(
                    st.device(),
                    "failed to post mailbox {:#x} in poll mode, ret = {}.\n",
                    c.cmd,
                    e.to_errno()
                )
            })?;
        match self.wait_idle(ring, st, CMD_TIMEOUT_MS) {
            Ok(MB_ST_COMPLETE_SUCC) => {
                st.sw_stat().inc(DfxCnt::MbxPolled);
                Ok(())
            }
            Ok(_) => Err(EBUSY),
            Err(e) => {
                hdev_err!(
                    st.device(),
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

    /// Gives slot `i` back and wakes one waiter for a slot.
    fn put_slot(&self, i: usize) {
        let mut s = self.slots.lock();
        s.busy &= !(1 << i);
        s.in_flight -= 1;
        drop(s);
        self.slot_freed.notify_one();
    }

    /// A mailbox in event mode (`hns_roce_cmd_mbox_wait`): posted with a
    /// slot's token, completed by [`Mailbox::event`].
    fn run_event(&self, ring: &Ring, st: &DevState, c: MboxCmd) -> Result {
        let i = self.take_slot();
        let (Some(state), Some(done)) = (self.tokens.get(i), self.done.get(i)) else {
            self.put_slot(i);
            return Err(EINVAL);
        };
        let token = slot::arm(state, done);
        let words = c.words(u32::from(token), true);
        let ret = match self.post(ring, st, words) {
            Err(e) => {
                hdev_err!(
                    st.device(),
                    "failed to post mailbox {:#x} in event mode, ret = {}.\n",
                    c.cmd,
                    e.to_errno()
                );
                Err(e)
            }
            Ok(()) if !done.wait_ms(CMD_TIMEOUT_MS) => {
                hdev_err!(
                    st.device(),
                    "[cmd] token {:#x} mailbox {:#x} timeout.\n",
                    token,
                    c.cmd
                );
                Err(EBUSY)
            }
            Ok(()) => match state.with(|s| s.result()) {
                0 => Ok(()),
                r => {
                    hdev_err!(
                        st.device(),
                        "[cmd] token {:#x} mailbox {:#x} error {}.\n",
                        token,
                        c.cmd,
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
    pub(crate) fn event(&self, st: &DevState, token: u16, status: u8, out_param: u64) {
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
        st.sw_stat().inc_if(DfxCnt::MbxEvent, ev.is_ok());
        if let Err(expected) = ev {
            hdev_err!(
                st.device(),
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
