// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Hardware entry memory (HEM) as the device sees it: the base address
//! tables (BTs) the driver programs through `WRITE_*_BT*` mailboxes, and the
//! walk from an object index to its context entry in driver memory.
//!
//! The device never keeps a context in a side table: every context lives in
//! the chunk the driver allocated, found through the BTs the driver wrote,
//! so a wrong BT or chunk address in the driver shows up as a failed walk.

use crate::mem::{BadDma, Dma};
use std::collections::HashMap;
use std::fmt;

/// Page-size and hop attributes of one table (`CFG_BT_ATTR`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BtAttr {
    /// BT page size: 4 KiB << `ba_pgsz`.
    pub ba_pgsz: u32,
    /// Buffer chunk size: 4 KiB << `buf_pgsz`.
    pub buf_pgsz: u32,
    /// 0 = chunks addressed directly by BT0 (the driver's 0xff), 1 or 2.
    pub hopnum: u32,
}

/// Why an entry could not be located.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HemError {
    /// No table geometry or object size yet.
    NotConfigured,
    /// The BT page or chunk covering the object was never written.
    NotMapped {
        /// The object index.
        obj: u32,
        /// The hop level that is missing (0 = L0 / direct chunk).
        level: u32,
    },
    /// A BT slot in memory holds 0.
    EmptySlot {
        /// The object index.
        obj: u32,
    },
    /// A BT or chunk address outside guest memory.
    Dma(BadDma),
}

impl fmt::Display for HemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HemError::NotConfigured => write!(f, "table geometry not configured"),
            HemError::NotMapped { obj, level } => {
                write!(f, "object {obj}: BT level {level} never written")
            }
            HemError::EmptySlot { obj } => write!(f, "object {obj}: BT slot in memory is 0"),
            HemError::Dma(e) => write!(f, "{e}"),
        }
    }
}

impl From<BadDma> for HemError {
    fn from(e: BadDma) -> Self {
        HemError::Dma(e)
    }
}

/// One context table: geometry, and the BT addresses the driver wrote.
#[derive(Clone, Debug, Default)]
pub struct HemTable {
    /// Page sizes and hops.
    pub attr: BtAttr,
    /// Bytes per object.
    pub obj_size: u32,
    /// Number of L0 BTs (the `*_BT_NUM` the firmware reported).
    pub bt_num: u32,
    /// L0 BT page addresses by L0 index (hop 1, 2), or chunk addresses by
    /// chunk index (hop 0).
    pub l0: HashMap<u32, u64>,
    /// Mismatches between a BT1/BT2 mailbox value and the memory the driver
    /// should have written first.
    pub inconsistencies: u32,
}

/// Position of an object in the BT tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// Chunk index (`obj / per_chunk`).
    pub chunk: u32,
    /// L0 BT index.
    pub l0: u32,
    /// Index in the L0 page (hop 1: chunk slot; hop 2: L1 page slot).
    pub l1: u32,
    /// Index in the L1 page (hop 2).
    pub l2: u32,
    /// Byte offset of the object inside its chunk.
    pub offset: u64,
}

impl HemTable {
    /// Bytes per buffer chunk.
    pub fn chunk_size(&self) -> u64 {
        4096 << self.attr.buf_pgsz
    }

    /// 64-bit addresses per BT page.
    pub fn ba_per_bt(&self) -> u32 {
        ((4096u64 << self.attr.ba_pgsz) / 8) as u32
    }

    /// Where object `obj` sits in the tree.
    pub fn pos(&self, obj: u32) -> Result<Pos, HemError> {
        if self.obj_size == 0 || self.bt_num == 0 {
            return Err(HemError::NotConfigured);
        }
        let per_chunk = (self.chunk_size() / self.obj_size as u64) as u32;
        if per_chunk == 0 {
            return Err(HemError::NotConfigured);
        }
        let t = obj / per_chunk;
        let ba = self.ba_per_bt();
        let offset = (obj % per_chunk) as u64 * self.obj_size as u64;
        Ok(match self.attr.hopnum {
            1 => Pos {
                chunk: t,
                l0: (t / ba) % self.bt_num,
                l1: t % ba,
                l2: 0,
                offset,
            },
            2 => Pos {
                chunk: t,
                l0: (t / ba / ba) % self.bt_num,
                l1: (t / ba) % ba,
                l2: t % ba,
                offset,
            },
            _ => Pos {
                chunk: t,
                l0: t,
                l1: 0,
                l2: 0,
                offset,
            },
        })
    }

    /// Records a `WRITE_*_BT<step>` mailbox for object `obj` with value
    /// `addr`. For the deeper steps the driver must already have stored
    /// `addr` into the parent BT page; a mismatch is counted.
    pub fn write_bt(
        &mut self,
        mem: &impl Dma,
        step: u32,
        obj: u32,
        addr: u64,
    ) -> Result<(), HemError> {
        let p = self.pos(obj)?;
        if step == 0 {
            let key = if self.attr.hopnum == 0 { p.chunk } else { p.l0 };
            self.l0.insert(key, addr);
            return Ok(());
        }
        let parent = match (self.attr.hopnum, step) {
            (1, 1) => self.slot_addr(p.l0, p.l1)?,
            (2, 1) => self.slot_addr(p.l0, p.l1)?,
            (2, 2) => {
                let l1 = mem.read_u64(self.slot_addr(p.l0, p.l1)?)?;
                l1 + 8 * p.l2 as u64
            }
            _ => return Ok(()),
        };
        if mem.read_u64(parent)? != addr {
            self.inconsistencies += 1;
        }
        Ok(())
    }

    /// The BT0 address a `READ_*_BT0` for `obj` returns: the L0 page (or
    /// direct chunk) `WRITE_*_BT0` recorded for it; with `by_tag`, the
    /// entry of the tag itself (timer and SCCC tables).
    pub fn read_bt0(&self, obj: u32, by_tag: bool) -> Result<u64, HemError> {
        let key = if by_tag {
            obj
        } else {
            let p = self.pos(obj)?;
            if self.attr.hopnum == 0 {
                p.chunk
            } else {
                p.l0
            }
        };
        self.l0
            .get(&key)
            .copied()
            .ok_or(HemError::NotMapped { obj, level: 0 })
    }

    /// Records a `DESTROY_*_BT<step>`: forgets the L0 page or direct chunk.
    pub fn destroy_bt(&mut self, step: u32, obj: u32) -> Result<(), HemError> {
        let p = self.pos(obj)?;
        if step == 0 {
            let key = if self.attr.hopnum == 0 { p.chunk } else { p.l0 };
            self.l0.remove(&key);
        }
        Ok(())
    }

    fn slot_addr(&self, l0: u32, slot: u32) -> Result<u64, HemError> {
        let base = *self
            .l0
            .get(&l0)
            .ok_or(HemError::NotMapped { obj: 0, level: 0 })?;
        Ok(base + 8 * slot as u64)
    }

    /// DMA address of object `obj`'s entry, walking the BTs in memory.
    pub fn entry_addr(&self, mem: &impl Dma, obj: u32) -> Result<u64, HemError> {
        let p = self.pos(obj)?;
        let nm = |level| HemError::NotMapped { obj, level };
        let chunk = match self.attr.hopnum {
            1 => {
                let l0 = *self.l0.get(&p.l0).ok_or(nm(0))?;
                mem.read_u64(l0 + 8 * p.l1 as u64)?
            }
            2 => {
                let l0 = *self.l0.get(&p.l0).ok_or(nm(0))?;
                let l1 = mem.read_u64(l0 + 8 * p.l1 as u64)?;
                if l1 == 0 {
                    return Err(HemError::EmptySlot { obj });
                }
                mem.read_u64(l1 + 8 * p.l2 as u64)?
            }
            _ => *self.l0.get(&p.chunk).ok_or(nm(0))?,
        };
        if chunk == 0 {
            return Err(HemError::EmptySlot { obj });
        }
        Ok(chunk + p.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::VecMem;

    fn table(hop: u32, obj: u32) -> HemTable {
        HemTable {
            attr: BtAttr {
                ba_pgsz: 0,
                buf_pgsz: 0,
                hopnum: hop,
            },
            obj_size: obj,
            bt_num: 8,
            ..Default::default()
        }
    }

    #[test]
    fn zero_hop_direct_chunks() {
        let mem = VecMem::new(1 << 16);
        let mut t = table(0, 512);
        // 8 QPCs per 4 KiB chunk: QPN 9 is chunk 1, offset 512.
        t.write_bt(&mem, 0, 9, 0x4000).unwrap();
        assert_eq!(t.entry_addr(&mem, 9).unwrap(), 0x4000 + 512);
        assert_eq!(t.entry_addr(&mem, 8).unwrap(), 0x4000);
        assert_eq!(
            t.entry_addr(&mem, 0),
            Err(HemError::NotMapped { obj: 0, level: 0 })
        );
        t.destroy_bt(0, 15).unwrap();
        assert!(t.entry_addr(&mem, 9).is_err());
    }

    #[test]
    fn one_hop_walk_reads_the_l0_page() {
        let mem = VecMem::new(1 << 20);
        let mut t = table(1, 64);
        // 64 CQCs per chunk, 512 slots per BT: CQN 200 is chunk 3 = L0 0, slot 3.
        let l0 = 0x1000;
        let chunk = 0x8000u64;
        mem.write(l0 + 8 * 3, &chunk.to_le_bytes()).unwrap();
        t.write_bt(&mem, 0, 200, l0).unwrap();
        t.write_bt(&mem, 1, 200, chunk).unwrap();
        assert_eq!(t.inconsistencies, 0);
        assert_eq!(t.entry_addr(&mem, 200).unwrap(), chunk + (200 % 64) * 64);
        // A BT1 value that is not what the driver stored in the L0 page.
        t.write_bt(&mem, 1, 200, 0x9000).unwrap();
        assert_eq!(t.inconsistencies, 1);
        // Slot 4 (CQN 256..319) was never filled in memory.
        assert_eq!(
            t.entry_addr(&mem, 256),
            Err(HemError::EmptySlot { obj: 256 })
        );
    }

    #[test]
    fn two_hop_walk() {
        let mem = VecMem::new(1 << 22);
        let mut t = table(2, 512);
        // 8 objects per chunk, 512 slots per BT page. Object 8*512*2+8*5+3:
        // chunk t = 1029 -> l0 = 0, l1 = 2, l2 = 5.
        let obj = 8 * 512 * 2 + 8 * 5 + 3;
        let p = t.pos(obj).unwrap();
        assert_eq!(
            (p.chunk, p.l0, p.l1, p.l2, p.offset),
            (1029, 0, 2, 5, 3 * 512)
        );
        let (l0, l1, chunk) = (0x1000u64, 0x3000u64, 0x10_0000u64);
        mem.write(l0 + 16, &l1.to_le_bytes()).unwrap();
        mem.write(l1 + 40, &chunk.to_le_bytes()).unwrap();
        t.write_bt(&mem, 0, obj, l0).unwrap();
        t.write_bt(&mem, 1, obj, l1).unwrap();
        t.write_bt(&mem, 2, obj, chunk).unwrap();
        assert_eq!(t.inconsistencies, 0);
        assert_eq!(t.entry_addr(&mem, obj).unwrap(), chunk + 3 * 512);
    }

    #[test]
    fn l0_index_wraps_at_bt_num() {
        let t = table(1, 64);
        // 64 per chunk, 512 per BT: chunk 512*9 is L0 9 % 8 = 1.
        assert_eq!(t.pos(64 * 512 * 9).unwrap().l0, 1);
    }
}
