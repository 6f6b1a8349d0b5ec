// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Memory keys: MPT lookup, FAST_REG_MR / LOCAL_INV, key checks with
//! their DMA pieces, and the live-DMA bookkeeping every write goes through.

use super::*;

impl Engine {
    /// Records the pages MPT `idx` maps now (none unless valid; a DMA MR
    /// maps everything). Pages past [`MAX_TRACKED_PAGES`] are not tracked
    /// (writes there count as bad).
    pub(super) fn track_mpt<M: Dma, H: Host>(&self, host: &H, mem: &M, idx: u32) {
        let o = Owner::Mr(idx);
        let m = match self.mpt(host, mem, idx << 8) {
            Err(_) => {
                // Not readable, or ST/LKEY do not match: read it raw.
                let raw = host.ctx_addr(mem, Table::Mpt, idx).ok().and_then(|a| {
                    let mut b = [0u8; 64];
                    mem.read(a, &mut b).ok().map(|()| MptEntry::from_bytes(&b))
                });
                match raw {
                    Some(m) => m,
                    None => return self.live.borrow_mut().forget(o),
                }
            }
            Ok(m) => m,
        };
        let mut live = self.live.borrow_mut();
        if m.state != xlate::MPT_ST_VALID {
            live.forget(o);
        } else if m.pa {
            live.set(o, Extent::Any);
        } else if !(m.lw || m.rw || m.atomic) {
            // Nothing is written through an MR without write access (the
            // key checks refuse it first): no pages to record. Saves
            // walking a read-only MR of millions of pages inside its
            // CREATE_MPT, longer than the driver waits for the next
            // command.
            live.set_pages(o, m.buf_shift, []);
        } else {
            live.set_pages(o, m.buf_shift, m.all_pages(mem, MAX_TRACKED_PAGES));
        }
    }

    /// Records the pages of CQ `cqn`'s CQE buffer (none once destroyed).
    pub(super) fn track_cq<M: Dma>(&self, mem: &M, cqn: u32) {
        let mut live = self.live.borrow_mut();
        let Some(c) = self.cqs.get(&cqn) else {
            return live.forget(Owner::Cq(cqn));
        };
        let b = &c.ctx.buf;
        let size: u64 = b.regions.iter().map(|r| r.size).sum();
        let pages =
            (0..size.div_ceil(1 << b.buf_shift)).filter_map(|p| b.addr(mem, p << b.buf_shift).ok());
        live.set_pages(Owner::Cq(cqn), b.buf_shift, pages);
    }

    /// Writes `data` at `a` for the MR of `key`, if that MR maps it; else
    /// counts and logs a bad DMA and writes nothing.
    pub(super) fn put<M: Dma>(&self, mem: &M, key: u32, a: u64, data: &[u8]) -> Result<(), String> {
        self.checked(Owner::Mr(MptEntry::index(key)), a, data.len())?;
        mem.write(a, data).map_err(|e| e.to_string())
    }

    /// Whether the live object `o` maps `len` bytes at `a`; a refusal is
    /// counted and logged (outside the log budget: it fails the run).
    pub(super) fn checked(&self, o: Owner, a: u64, len: usize) -> Result<(), String> {
        let mut live = self.live.borrow_mut();
        live.check(o, a, len as u64).map_err(|why| {
            live.bad += 1;
            if !self.quiet && live.bad <= 50 {
                eprintln!("hns-sim engine: bad DMA refused: {why}");
            }
            format!("bad DMA: {why}")
        })
    }

    /// The MPT entry of `key`.
    pub(super) fn mpt<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        key: u32,
    ) -> Result<MptEntry, KeyError> {
        let (_, b) = self.mpt_raw(host, mem, key)?;
        Ok(MptEntry::from_bytes(&b))
    }

    /// The address and bytes of the MPT `key` names.
    pub(super) fn mpt_raw<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        key: u32,
    ) -> Result<(u64, [u8; 64]), KeyError> {
        let a = host
            .ctx_addr(mem, Table::Mpt, MptEntry::index(key))
            .map_err(|_| KeyError::BadKey)?;
        let mut b = [0u8; 64];
        mem.read(a, &mut b).map_err(|_| KeyError::BadKey)?;
        Ok((a, b))
    }

    /// FAST_REG_PMR: writes the MPT of a free fast-register MR of the QP's
    /// PD from the WQE.
    pub(super) fn fast_reg<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        s: &QpCtx,
        raw: &[u8],
    ) -> Result<(), String> {
        let f = FrmrWqe::from_bytes(raw);
        let (a, mut b) = self
            .mpt_raw(host, mem, f.key)
            .map_err(|e| format!("fast register key {:#x}: {e}", f.key))?;
        let m = MptEntry::from_bytes(&b);
        if !m.fre || m.state != MPT_ST_FREE || m.pd != s.pd {
            return Err(format!(
                "fast register key {:#x}: MPT not a free FRMR of PD {:#x} (state {}, FRE {}, PD {:#x})",
                f.key, s.pd, m.state, m.fre, m.pd
            ));
        }
        xlate::mpt_fast_reg(&mut b, &f);
        mem.write(a, &b).map_err(|e| e.to_string())?;
        self.track_mpt(host, mem, MptEntry::index(f.key));
        Ok(())
    }

    /// LOCAL_INV (`remote` false) / the responder's part of SEND_WITH_INV
    /// (`remote`, needs `R_INV_EN`): a valid fast-register MR of PD `pd`
    /// with key `key` goes back to free.
    pub(super) fn invalidate<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        pd: u32,
        key: u32,
        remote: bool,
    ) -> Result<(), String> {
        let (a, mut b) = self
            .mpt_raw(host, mem, key)
            .map_err(|e| format!("invalidate key {key:#x}: {e}"))?;
        let m = MptEntry::from_bytes(&b);
        let ok = m.key == key
            && m.pd == pd
            && m.state == MPT_ST_VALID
            && if remote { m.r_inv } else { m.fre };
        if !ok {
            return Err(format!(
                "invalidate key {key:#x}: MPT key {:#x} state {} PD {:#x} FRE {} R_INV_EN {}",
                m.key, m.state, m.pd, m.fre, m.r_inv
            ));
        }
        xlate::mpt_invalidate(&mut b);
        mem.write(a, &b).map_err(|e| e.to_string())?;
        self.track_mpt(host, mem, MptEntry::index(key));
        Ok(())
    }

    /// The DMA pieces of `len` bytes at `va` under `key`, checked.
    pub(super) fn key_pieces<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        pd: u32,
        span: Span,
        access: Access,
    ) -> Result<Vec<(u64, u64)>, KeyError> {
        let m = self.mpt(host, mem, span.key)?;
        m.check(span.key, pd, span.va, span.len, access)?;
        m.pieces(mem, span.va, span.len).inspect_err(|e| {
            if let KeyError::Xlate(XlateError::BadPage { .. }) = e {
                // Hardware would DMA wherever that walk led.
                let mut live = self.live.borrow_mut();
                live.bad += 1;
                if !self.quiet && live.bad <= 50 {
                    eprintln!("hns-sim engine: bad DMA refused: key {:#x}: {e}", span.key);
                }
            }
        })
    }
}
