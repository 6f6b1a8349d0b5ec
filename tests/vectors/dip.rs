// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The DIP context table (`dip.rs`) against the C driver's `dip_xa` rules:
//! contexts keyed by the QPN that added them, shared by the QPs of one
//! destination GID, the unused one with the lowest index claimed first,
//! unused again when the last QP goes.

use super::{expect, Check};
use crate::dip::{self, DipEntry, GID_LEN};

/// A table of at most 8 entries and its length, as the driver's vector.
struct Table {
    e: [DipEntry; 8],
    len: usize,
}

impl Table {
    fn new() -> Self {
        Self {
            e: [DipEntry::default(); 8],
            len: 0,
        }
    }

    /// What the driver does for QP `qpn` with an address vector to `g`:
    /// its own entry first (inserted in index order), then the share.
    fn get(&mut self, qpn: u32, g: u8) -> Option<u32> {
        if let Err(pos) = dip::slot(&self.e[..self.len], qpn) {
            if self.len == self.e.len() {
                return None;
            }
            self.e[self.len] = DipEntry::unused(qpn);
            self.len += 1;
            self.e[pos..self.len].rotate_right(1);
        }
        dip::get(&mut self.e[..self.len], &gid(g))
    }

    fn put(&mut self, idx: u32) {
        dip::put(&mut self.e[..self.len], idx);
    }
}

/// A GID whose last byte is `g`.
fn gid(g: u8) -> [u8; GID_LEN] {
    let mut x = [0u8; GID_LEN];
    x[GID_LEN - 1] = g;
    x
}

/// Sharing, claiming and releasing in the C driver's order.
pub fn check_dip_sharing() -> Check {
    let mut t = Table::new();
    // The first QP of a destination claims its own entry.
    expect(t.get(0x10, 1) == Some(0x10), "QP 0x10 to A claims 0x10")?;
    // Later QPs to the same destination share it (their own entries stay
    // unused).
    expect(t.get(0x11, 1) == Some(0x10), "QP 0x11 to A shares 0x10")?;
    expect(t.get(0x12, 1) == Some(0x10), "QP 0x12 to A shares 0x10")?;
    // A new destination takes the unused entry with the lowest index.
    expect(t.get(0x13, 2) == Some(0x11), "QP 0x13 to B claims 0x11")?;
    // A lower QPN's entry goes before the others.
    expect(t.get(0x08, 3) == Some(0x08), "QP 0x08 to C claims 0x08")?;
    expect(t.len == 5, "one entry per QPN")?;
    expect(
        t.e[..t.len].windows(2).all(|w| w[0].idx < w[1].idx),
        "entries in index order",
    )?;
    // The context stays while a QP of its destination is left.
    t.put(0x10);
    t.put(0x10);
    expect(
        t.get(0x14, 4) == Some(0x12),
        "0x10 still in use: 0x14 to D claims 0x12",
    )?;
    t.put(0x10);
    // Unused again, GID cleared: the next new destination takes it.
    expect(
        t.e[1].qp_cnt == 0 && t.e[1].dgid == [0; GID_LEN],
        "0x10 unused, GID cleared",
    )?;
    expect(
        t.get(0x15, 5) == Some(0x10),
        "QP 0x15 to E claims 0x10 again",
    )?;
    // A QP that had an entry already adds none.
    expect(t.get(0x13, 2) == Some(0x11), "QP 0x13 to B again: 0x11")?;
    expect(t.len == 7, "no entry added for a known QPN")?;
    // Releasing an index the table does not have, or an unused one, does
    // nothing.
    t.put(0x99);
    t.put(0x13);
    expect(
        t.e[..t.len].iter().all(|e| e.qp_cnt <= 2),
        "stray puts ignored",
    )?;
    Ok(())
}

/// A table whose every entry is in use refuses (the driver's `ENOSPC`,
/// which its own entry makes unreachable).
pub fn check_dip_full() -> Check {
    let mut e = [DipEntry::unused(1), DipEntry::unused(2)];
    expect(dip::get(&mut e, &gid(1)) == Some(1), "first")?;
    expect(dip::get(&mut e, &gid(2)) == Some(2), "second")?;
    expect(dip::get(&mut e, &gid(3)).is_none(), "full")?;
    expect(
        dip::get(&mut e, &gid(1)) == Some(1),
        "a known GID still shares",
    )?;
    expect(
        dip::slot(&e, 2) == Ok(1) && dip::slot(&e, 3) == Err(2),
        "slot",
    )?;
    Ok(())
}
