// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The command queue (CMQ): the ring of descriptors through which the driver
//! talks to the RoCE engine's firmware.
//!
//! Same protocol and timeouts as the C driver: descriptors are copied into a
//! 1024-entry DMA ring, the producer index register is written, and the
//! driver busy-waits up to 30 ms for the firmware to move the consumer index
//! to it; answers are read back from the ring slots.

use crate::cmq_desc::{retval_errno, Desc, CSQ_DESC_NUM};
use crate::rdma::Regs;
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::Io,
    prelude::*,
    time::{delay::udelay, Delta}, //
};

/// CSQ base address, low 32 bits.
const TX_CMQ_BASEADDR_L: usize = 0x07000;
/// CSQ base address, high 32 bits.
const TX_CMQ_BASEADDR_H: usize = 0x07004;
/// CSQ depth in units of 8 descriptors.
const TX_CMQ_DEPTH: usize = 0x07008;
/// Producer index (driver → firmware).
const TX_CMQ_PI: usize = 0x07010;
/// Consumer index (firmware → driver).
const TX_CMQ_CI: usize = 0x07014;
/// How many 1 us waits for an answer (`HNS_ROCE_CMQ_TX_TIMEOUT`).
const TX_TIMEOUT_US: u32 = 30000;
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
    head: u32,
    fatal: bool,
}

impl Cmq {
    /// Allocates the ring and programs it into the engine (`init_csq`).
    pub(crate) fn new(dev: &Device<Bound>, regs: Regs<'_>) -> Result<Self> {
        // CAST: 1024 * 8 words.
        let ring =
            Coherent::<u32>::zeroed_slice(dev, CSQ_DESC_NUM as usize * DESC_WORDS, GFP_KERNEL)?;
        let dma = ring.dma_address();
        // CAST: the two halves of the 64-bit DMA address.
        regs.write32(dma as u32, TX_CMQ_BASEADDR_L);
        regs.write32((dma >> 32) as u32, TX_CMQ_BASEADDR_H);
        regs.write32(CSQ_DESC_NUM >> 3, TX_CMQ_DEPTH);
        regs.write32(0, TX_CMQ_CI);
        regs.write32(0, TX_CMQ_PI);
        // INVARIANT: head 0, ring of the full size.
        Ok(Cmq {
            ring,
            head: 0,
            fatal: false,
        })
    }

    /// Marks the queue dead: every later command fails with `EIO` (the C
    /// driver's `CMD_FATAL_ERR` after a timeout during initialisation).
    pub(crate) fn set_fatal(&mut self) {
        self.fatal = true;
    }

    fn slot(&self, idx: u32) -> *mut u32 {
        // CAST: `idx < CSQ_DESC_NUM`, so the offset is inside the ring.
        let off = idx as usize * DESC_WORDS;
        // SAFETY: by the invariant the ring holds `CSQ_DESC_NUM` slots of
        // `DESC_WORDS` words and `idx < CSQ_DESC_NUM`.
        unsafe { self.ring.as_mut_ptr().cast::<u32>().add(off) }
    }

    /// Sends one command made of `descs` (chained with NEXT by the caller)
    /// and waits for the answer, which replaces `descs`.
    ///
    /// # Errors
    ///
    /// `EAGAIN` if the firmware did not answer within 30 ms, `EIO` once
    /// the queue is marked fatal, else the errno of a non-zero return code.
    pub(crate) fn send(&mut self, regs: Regs<'_>, descs: &mut [Desc]) -> Result<(), CmqError> {
        let opcode = descs.first().map_or(0, |d| d.opcode);
        let fail = |err| CmqError {
            opcode,
            err,
            moved: None,
        };
        // CAST: a command is a handful of descriptors.
        if self.fatal || descs.is_empty() || descs.len() as u32 >= CSQ_DESC_NUM {
            return Err(fail(EIO));
        }
        let start = self.head;
        for d in descs.iter() {
            let p = self.slot(self.head);
            for (i, w) in d.to_le_words().iter().enumerate() {
                // SAFETY: `p` is a slot of `DESC_WORDS` words (see `slot`).
                unsafe { p.add(i).write_volatile(*w) };
            }
            // INVARIANT: wraps below `CSQ_DESC_NUM`.
            self.head = (self.head + 1) % CSQ_DESC_NUM;
        }
        // The MMIO write orders the ring stores before it.
        regs.write32(self.head, TX_CMQ_PI);
        let mut answered = false;
        for _ in 0..TX_TIMEOUT_US {
            if regs.read32(TX_CMQ_CI) == self.head {
                answered = true;
                break;
            }
            udelay(Delta::from_micros(1));
        }
        if !answered {
            let from = self.head;
            // INVARIANT: the firmware's CI is below the depth it was given.
            self.head = regs.read32(TX_CMQ_CI) % CSQ_DESC_NUM;
            return Err(CmqError {
                opcode,
                err: EAGAIN,
                moved: Some((from, self.head)),
            });
        }
        let mut ret = Ok(());
        let mut idx = start;
        for d in descs.iter_mut() {
            let p = self.slot(idx);
            let mut w = [0u32; DESC_WORDS];
            for (i, x) in w.iter_mut().enumerate() {
                // SAFETY: as above.
                *x = unsafe { p.add(i).read_volatile() };
            }
            *d = Desc::from_le_words(&w);
            if d.retval != 0 {
                ret = Err(fail(Error::from_errno(-retval_errno(d.retval))));
            }
            idx = (idx + 1) % CSQ_DESC_NUM;
        }
        ret
    }
}
