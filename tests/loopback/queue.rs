// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The loopback device's queues in plain Rust (`core` only, so the host
//! tests build it too): a fixed-capacity FIFO for receive WRs and
//! completions, a WR's scatter list, and the scatter of a SEND's bytes
//! over the receive WR it lands in.
//!
//! The segment type is generic: the kernel module keeps the layer's
//! `VirtSeg` (a buffer of a kernel work request), the host tests plain
//! lengths.

use core::ops::DerefMut;

/// The most SGEs a work request of the loopback device has.
pub const MAX_SGE: usize = 4;

/// A FIFO over the slots of `B` (a heap buffer of `Option<T>`, all
/// `None`: the kernel's `KVec`, the host's `Vec`), one entry per slot.
pub struct Ring<T: Copy, B: DerefMut<Target = [Option<T>]>> {
    buf: B,
    head: usize,
    len: usize,
}

impl<T: Copy, B: DerefMut<Target = [Option<T>]>> Ring<T, B> {
    /// An empty ring over `buf`, whose entries are dropped.
    pub fn new(mut buf: B) -> Self {
        buf.iter_mut().for_each(|v| *v = None);
        Self {
            buf,
            head: 0,
            len: 0,
        }
    }

    /// Slots.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `v`; gives it back when the ring is full.
    pub fn push(&mut self, v: T) -> Result<(), T> {
        let cap = self.buf.len();
        if self.len == cap {
            return Err(v);
        }
        let i = (self.head + self.len) % cap;
        self.buf[i] = Some(v);
        self.len += 1;
        Ok(())
    }

    /// Takes the oldest entry.
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head].take();
        self.head = (self.head + 1) % self.buf.len();
        self.len -= 1;
        v
    }

    /// Keeps only the entries `keep` accepts, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let n = self.len;
        for _ in 0..n {
            if let Some(v) = self.pop() {
                if keep(&v) {
                    // Cannot fail: one was taken out just before.
                    let _ = self.push(v);
                }
            }
        }
    }
}

/// The scatter list of a work request: at most [`MAX_SGE`] segments.
#[derive(Clone, Copy)]
pub struct Segs<S: Copy> {
    segs: [Option<S>; MAX_SGE],
    n: usize,
}

impl<S: Copy> Segs<S> {
    /// The segments `it` yields; `None` if there are more than
    /// [`MAX_SGE`].
    pub fn new(it: impl IntoIterator<Item = S>) -> Option<Self> {
        let mut s = Self {
            segs: [None; MAX_SGE],
            n: 0,
        };
        for v in it {
            *s.segs.get_mut(s.n)? = Some(v);
            s.n += 1;
        }
        Some(s)
    }

    /// Segment `i`.
    pub fn get(&self, i: usize) -> Option<&S> {
        self.segs.get(i)?.as_ref()
    }

    /// The segments, in order.
    pub fn iter(&self) -> impl Iterator<Item = &S> {
        self.segs[..self.n].iter().flatten()
    }
}

/// One step of a scatter: `len` bytes of source segment `src` from offset
/// `src_off` to destination segment `dst` at offset `dst_off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Source segment.
    pub src: usize,
    /// Offset into it.
    pub src_off: usize,
    /// Destination segment.
    pub dst: usize,
    /// Offset into it.
    pub dst_off: usize,
    /// Bytes.
    pub len: usize,
}

/// Scatters a message made of segments of lengths `src` over segments of
/// lengths `dst` (a receive WR's), filling each destination segment before
/// the next: calls `step` for each piece, in order, and returns the
/// message's length. A message longer than the destination calls nothing
/// and is `None` (the receiver's `IB_WC_LOC_LEN_ERR`). Empty segments take
/// no step.
pub fn scatter(src: &[usize], dst: &[usize], mut step: impl FnMut(Step)) -> Option<usize> {
    let total = src.iter().try_fold(0usize, |a, &l| a.checked_add(l))?;
    let room = dst.iter().try_fold(0usize, |a, &l| a.checked_add(l));
    if room.is_some_and(|r| r < total) {
        return None;
    }
    let (mut d, mut d_off) = (0usize, 0usize);
    for (s, &slen) in src.iter().enumerate() {
        let mut s_off = 0;
        while s_off < slen {
            // Skips full (or empty) destination segments; there is room
            // for the rest (checked above).
            let dlen = *dst.get(d)?;
            if d_off == dlen {
                d += 1;
                d_off = 0;
                continue;
            }
            let len = (slen - s_off).min(dlen - d_off);
            step(Step {
                src: s,
                src_off: s_off,
                dst: d,
                dst_off: d_off,
                len,
            });
            s_off += len;
            d_off += len;
        }
    }
    Some(total)
}
