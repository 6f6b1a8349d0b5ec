// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The token protocol of an event-mode mailbox slot (`core` only, so the
//! host tests and KUnit run it).
//!
//! A waiter takes a slot, gives it a new token, re-arms the slot's
//! completion, posts the mailbox with the token and waits. The engine's
//! completion event carries the token back; the event completes the slot
//! only if the token is the slot's current one, so an event that comes
//! after its waiter gave up (a timeout) is dropped once the slot has a new
//! token.
//!
//! That check is only sound if nothing can change the token between the
//! event's check and its completion: otherwise a late event that passed
//! the check for the old token completes the slot after the next waiter
//! re-armed it, and that waiter returns before the engine has answered its
//! own mailbox (and frees a buffer the engine may still write). So both
//! steps of each side run under the slot's lock: [`arm`] (new token,
//! re-arm) and [`event`] (check, record, complete).

/// Event-mode mailbox slots (`CMD_MAX_NUM`): the slot of a token is the
/// token modulo this, and a slot's tokens step by it.
pub const MAX_CMDS: usize = 32;

/// What a slot's completion does, as the protocol sees it (a `struct
/// completion` in the kernel).
pub trait Done {
    /// Makes it not done (`reinit_completion`).
    fn rearm(&self);
    /// Makes it done and wakes its waiter (`complete`).
    fn complete(&self);
}

/// Mutual exclusion over a slot's [`TokenState`]: in the kernel an
/// interrupt-safe spinlock, since events come from the AEQ interrupt.
pub trait SlotLock {
    /// Runs `f` on the slot's state with the lock held.
    fn with<R>(&self, f: impl FnOnce(&mut TokenState) -> R) -> R;
}

/// What a slot's lock guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenState {
    token: u16,
    result: i32,
    out_param: u64,
}

impl TokenState {
    /// The state of slot `slot` before its first mailbox (its token is
    /// its index, as C's `hns_roce_cmd_use_events` starts them).
    pub const fn new(slot: u16) -> Self {
        Self {
            token: slot,
            result: 0,
            out_param: 0,
        }
    }

    /// The slot's current token.
    pub fn token(&self) -> u16 {
        self.token
    }

    /// The result the last accepted event recorded (0 or a negative
    /// errno).
    pub fn result(&self) -> i32 {
        self.result
    }

    /// The out parameter the last accepted event carried.
    pub fn out_param(&self) -> u64 {
        self.out_param
    }
}

/// A waiter takes the slot: gives it its next token and re-arms `done`,
/// both under the slot's lock; the token to post.
pub fn arm(lock: &impl SlotLock, done: &impl Done) -> u16 {
    lock.with(|s| {
        // CAST: MAX_CMDS is 32; tokens are 16 bits on the wire.
        s.token = s.token.wrapping_add(MAX_CMDS as u16);
        done.rearm();
        s.token
    })
}

/// A completion event for `token`: if it is the slot's current token,
/// records `result` and `out_param` and completes `done`, all under the
/// slot's lock. Otherwise nothing changes and the slot's token is the
/// error.
pub fn event(
    lock: &impl SlotLock,
    done: &impl Done,
    token: u16,
    result: i32,
    out_param: u64,
) -> Result<(), u16> {
    lock.with(|s| {
        if token != s.token {
            return Err(s.token);
        }
        s.result = result;
        s.out_param = out_param;
        done.complete();
        Ok(())
    })
}

/// The slot a token names.
pub fn slot_of(token: u16) -> usize {
    usize::from(token) % MAX_CMDS
}
