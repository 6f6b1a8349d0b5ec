// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `cmdq/slot.rs`: interleavings of a mailbox waiter and
//! completion events on one slot, played on one thread by a model of the
//! slot's lock and completion.
//!
//! The model's lock cannot block: a waiter that would spin on it while an
//! event holds it is run when the event lets go, which is where a real
//! waiter would get the lock.

use super::{expect, Check};
use crate::cmdq::slot::{arm, event, Done, SlotLock, TokenState, MAX_CMDS};
use core::cell::Cell;

/// One slot: its locked state, its completion's count and the next
/// waiter's re-arm, which an event's `complete` can set off.
struct Model {
    /// The locked state (a copy is worked on while the lock is held).
    state: Cell<TokenState>,
    held: Cell<bool>,
    /// `struct completion`'s `done` count.
    done: Cell<u32>,
    /// The next waiter re-arms the slot from inside the next `complete`
    /// (its predecessor timed out, it took the slot): the interleaving
    /// under test.
    arm_in_complete: Cell<bool>,
    /// That waiter's re-arm waits for the lock.
    arm_pending: Cell<bool>,
    /// The token that waiter got.
    new_token: Cell<Option<u16>>,
}

impl Model {
    fn new(slot: u16) -> Self {
        Self {
            state: Cell::new(TokenState::new(slot)),
            held: Cell::new(false),
            done: Cell::new(0),
            arm_in_complete: Cell::new(false),
            arm_pending: Cell::new(false),
            new_token: Cell::new(None),
        }
    }

    fn token(&self) -> u16 {
        self.state.get().token()
    }
}

impl SlotLock for Model {
    fn with<R>(&self, f: impl FnOnce(&mut TokenState) -> R) -> R {
        self.held.set(true);
        let mut s = self.state.get();
        let r = f(&mut s);
        self.state.set(s);
        self.held.set(false);
        if self.arm_pending.replace(false) {
            // The waiter that was spinning on the lock gets it now.
            self.new_token.set(Some(arm(self, self)));
        }
        r
    }
}

impl Done for Model {
    fn rearm(&self) {
        self.done.set(0);
    }

    fn complete(&self) {
        if self.arm_in_complete.replace(false) {
            if self.held.get() {
                self.arm_pending.set(true);
            } else {
                self.new_token.set(Some(arm(self, self)));
            }
        }
        self.done.set(self.done.get().wrapping_add(1));
    }
}

/// A waiter's mailbox answered in time: its event completes it with the
/// result; tokens step by `MAX_CMDS` and wrap at 16 bits.
pub fn check_event_completes_its_waiter() -> Check {
    let m = Model::new(5);
    let t = arm(&m, &m);
    expect(t == 5 + MAX_CMDS as u16, "first token of slot 5")?;
    expect(m.done.get() == 0, "armed: not done")?;
    expect(event(&m, &m, t, -5, 0x1234) == Ok(()), "own event accepted")?;
    expect(m.done.get() == 1, "own event completes")?;
    let s = m.state.get();
    expect(
        s.result() == -5 && s.out_param() == 0x1234,
        "result recorded",
    )?;
    let w = Model::new(31);
    let mut t = 0;
    for _ in 0..(0x10000 / MAX_CMDS) {
        t = arm(&w, &w);
    }
    expect(t == 31, "tokens wrap at 16 bits back to the slot's first")?;
    Ok(())
}

/// An event for a token the slot no longer has is dropped and named.
pub fn check_stale_event_is_refused() -> Check {
    let m = Model::new(3);
    let old = arm(&m, &m);
    // The waiter timed out; the next one takes the slot.
    let new = arm(&m, &m);
    expect(
        event(&m, &m, old, 0, 0) == Err(new),
        "stale token refused, current one named",
    )?;
    expect(m.done.get() == 0, "stale event completes nothing")?;
    expect(event(&m, &m, new, 0, 0) == Ok(()), "own event accepted")?;
    expect(m.done.get() == 1, "own event completes")?;
    Ok(())
}

/// A late event that comes after its waiter timed out but before the
/// slot's next waiter: the re-arm forgets it.
pub fn check_late_event_before_rearm_is_forgotten() -> Check {
    let m = Model::new(0);
    let old = arm(&m, &m);
    expect(
        event(&m, &m, old, 0, 0) == Ok(()),
        "late event, token still current",
    )?;
    let new = arm(&m, &m);
    expect(new != old && m.done.get() == 0, "re-armed: not done")?;
    Ok(())
}

/// The late event checks its (still current) token, then the next waiter
/// re-arms the slot, then the late event completes: the new waiter must
/// not be completed by it. With the check and the completion under the
/// lock, the waiter's re-arm comes after the completion and undoes it;
/// with the completion outside the lock the new waiter would see its
/// mailbox done before the engine answered it.
pub fn check_late_event_racing_rearm_completes_no_new_waiter() -> Check {
    let m = Model::new(7);
    let old = arm(&m, &m);
    m.arm_in_complete.set(true);
    let r = event(&m, &m, old, 0, 0);
    let new = m.new_token.get();
    expect(
        r == Ok(()),
        "the late event passed the check for its waiter",
    )?;
    expect(new.is_some(), "the next waiter re-armed the slot meanwhile")?;
    expect(
        new == Some(m.token()),
        "the slot has the new waiter's token",
    )?;
    expect(
        m.done.get() == 0,
        "the new waiter is not completed by the late event",
    )?;
    // The new waiter's own event.
    let new = new.unwrap_or(0);
    expect(event(&m, &m, new, 0, 0) == Ok(()), "own event accepted")?;
    expect(m.done.get() == 1, "own event completes")?;
    Ok(())
}
