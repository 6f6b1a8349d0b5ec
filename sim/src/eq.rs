// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Event queues: geometry from the EQ context the driver creates, and the
//! writer that appends EQEs with the right owner bit.

use crate::field::Ctx;
use crate::hw_v2_fields::{eqc, Eqc};
use crate::mem::{BadDma, Dma};

/// One created event queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Eq {
    /// EQ number (CEQs first, then AEQs).
    pub eqn: u32,
    /// Whether this is an asynchronous EQ.
    pub is_aeq: bool,
    /// Number of entries (power of two).
    pub depth: u32,
    /// Bytes per entry.
    pub eqe_size: u32,
    /// Hop number of the EQE buffer (0 = contiguous).
    pub hop: u32,
    /// BT page size shift over 4 KiB.
    pub ba_pgsz: u32,
    /// Buffer page size shift over 4 KiB.
    pub buf_pgsz: u32,
    /// Root BT (or buffer, hop 0) address.
    pub root: u64,
    /// Producer index, counting forever.
    pub pi: u32,
    /// The context as last written by the driver (for QUERY/MODIFY).
    pub raw: Vec<u8>,
}

impl Eq {
    /// Parses an EQ context as the driver builds it in `config_eqc`.
    pub fn from_context(eqn: u32, is_aeq: bool, c: &Ctx<Eqc, 16>) -> Self {
        let root = ((c.read(eqc::EQE_BA_H) as u64) << 35) | ((c.read(eqc::EQE_BA_L) as u64) << 3);
        let eqe_size = match (c.read(eqc::EQE_SIZE), is_aeq) {
            (1, _) => 64,
            (_, true) => 16,
            (_, false) => 4,
        };
        Eq {
            eqn,
            is_aeq,
            depth: 1 << c.read(eqc::SHIFT).min(24),
            eqe_size,
            hop: c.read(eqc::EQE_HOP_NUM),
            ba_pgsz: c.read(eqc::EQE_BA_PG_SZ),
            buf_pgsz: c.read(eqc::EQE_BUF_PG_SZ),
            root,
            pi: c.read(eqc::EQ_PROD_INDX),
            raw: c
                .as_le_words()
                .iter()
                .flat_map(|w| w.to_ne_bytes())
                .collect(),
        }
    }

    /// DMA address of ring slot `idx`.
    pub fn slot_addr(&self, mem: &impl Dma, idx: u32) -> Result<u64, BadDma> {
        let off = (idx % self.depth) as u64 * self.eqe_size as u64;
        let page = 4096u64 << self.buf_pgsz;
        let ba_per = (4096u64 << self.ba_pgsz) / 8;
        let (pidx, in_page) = (off / page, off % page);
        Ok(match self.hop {
            0 => self.root + off,
            1 => mem.read_u64(self.root + 8 * pidx)? + in_page,
            _ => {
                let l1 = mem.read_u64(self.root + 8 * (pidx / ba_per))?;
                mem.read_u64(l1 + 8 * (pidx % ba_per))? + in_page
            }
        })
    }

    /// The owner bit for producer index `pi`: 1 on the first pass.
    pub fn owner(&self, pi: u32) -> bool {
        pi & self.depth == 0
    }

    /// Appends one entry; `entry` is the EQE without the owner bit, which
    /// is set here (bit 31 of the first word).
    pub fn push(&mut self, mem: &impl Dma, entry: &[u8]) -> Result<(), BadDma> {
        let mut e = vec![0u8; self.eqe_size as usize];
        let n = entry.len().min(e.len());
        e[..n].copy_from_slice(&entry[..n]);
        if self.owner(self.pi) {
            e[3] |= 0x80;
        } else {
            e[3] &= 0x7f;
        }
        let addr = self.slot_addr(mem, self.pi)?;
        // Write the body first and the word with the owner bit last, so the
        // driver never sees a valid owner bit on a half-written entry.
        mem.write(addr + 4, &e[4..])?;
        mem.write(addr, &e[..4])?;
        self.pi = self.pi.wrapping_add(1);
        Ok(())
    }
}

/// A mailbox-completion AEQE body (type 0x13).
pub fn mb_aeqe(token: u16, status: u8, out_param: u64) -> [u8; 16] {
    let mut e = [0u8; 16];
    e[0] = 0x13;
    e[4..12].copy_from_slice(&out_param.to_le_bytes());
    e[12..14].copy_from_slice(&token.to_le_bytes());
    e[14] = status;
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::VecMem;

    fn ctx(shift: u32, hop: u32, root: u64) -> Ctx<Eqc, 16> {
        let mut c: Ctx<Eqc, 16> = Ctx::zeroed();
        c.write(eqc::SHIFT, shift);
        c.write(eqc::EQE_HOP_NUM, hop);
        c.write(eqc::EQE_SIZE, 1);
        c.write(eqc::EQE_BA_L, (root >> 3) as u32);
        c.write(eqc::EQE_BA_H, (root >> 35) as u32);
        c
    }

    #[test]
    fn owner_bit_flips_each_pass() {
        let mem = VecMem::new(1 << 16);
        let mut eq = Eq::from_context(1, true, &ctx(2, 0, 0x1000));
        assert_eq!((eq.depth, eq.eqe_size, eq.root), (4, 64, 0x1000));
        for i in 0..8u32 {
            eq.push(&mem, &mb_aeqe(i as u16, 1, 0)).unwrap();
            let w = mem.read_u32(0x1000 + 64 * (i % 4) as u64).unwrap();
            let owner = w >> 31;
            // First pass 1, second pass 0; the driver's test is
            // owner ^ ((ci & depth) != 0).
            assert_eq!(owner, if i < 4 { 1 } else { 0 }, "entry {i}");
            assert_eq!(w & 0xff, 0x13);
            let tok = mem.read_u32(0x1000 + 64 * (i % 4) as u64 + 12).unwrap() & 0xffff;
            assert_eq!(tok, i);
        }
    }

    #[test]
    fn one_hop_buffer_pages() {
        let mem = VecMem::new(1 << 20);
        // 1024 entries of 64 B = 16 pages; root holds page addresses.
        let root = 0x1000u64;
        for p in 0..16u64 {
            mem.write(root + 8 * p, &(0x10_000 + p * 0x2000).to_le_bytes())
                .unwrap();
        }
        let eq = Eq::from_context(0, false, &ctx(10, 1, root));
        assert_eq!(eq.slot_addr(&mem, 0).unwrap(), 0x10_000);
        // Entry 65 is on page 1 (64 entries per page), slot 1.
        assert_eq!(eq.slot_addr(&mem, 65).unwrap(), 0x12_000 + 64);
        // The ring wraps at depth.
        assert_eq!(eq.slot_addr(&mem, 1024 + 65).unwrap(), 0x12_000 + 64);
    }
}
