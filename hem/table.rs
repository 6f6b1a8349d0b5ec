// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The HEM context tables in kernel memory (`hns_roce_table_get/put`):
//! refcounted chunks, the L0/L1 base-address pages that point to them, and
//! the mailbox or CMQ writes that tell the engine where they are.
//!
//! What to allocate and which writes to issue comes from the `core`
//! arithmetic in `hem.rs` ([`TableGeom::get_plan`]/[`TableGeom::put_plan`]);
//! this file only owns the DMA memory and carries the plans out.

use crate::cmdq::desc::Desc;
use crate::cmdq::{Cmd, MailboxBuf};
use crate::hem::{is_last_step, HemAddr, HemType, HwWrite, TableCfg, TableGeom};
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::cmq_fields::cmq_req;
use crate::hns_roce_hw_v2::consts::cmq_op;
use kernel::{
    device::{Bound, Device},
    dma::Coherent,
    io::io_write,
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex}, //
};

/// One chunk and its references.
struct Chunk {
    mem: Coherent<[u8]>,
    refs: u32,
}

/// The allocations of one table.
struct Mem {
    chunks: KVec<Option<Chunk>>,
    l0: KVec<Option<Coherent<[u64]>>>,
    l1: KVec<Option<Coherent<[u64]>>>,
}

impl Mem {
    fn exists(&self, a: HemAddr) -> bool {
        // CAST: u32 indexes into vectors sized from u32 counts.
        match a {
            HemAddr::Chunk(i) => matches!(self.chunks.get(i as usize), Some(Some(_))),
            HemAddr::L0(i) => matches!(self.l0.get(i as usize), Some(Some(_))),
            HemAddr::L1(i) => matches!(self.l1.get(i as usize), Some(Some(_))),
        }
    }

    #[inline(never)]
    fn dma(&self, a: HemAddr) -> Option<u64> {
        // CAST: as above.
        match a {
            HemAddr::Chunk(i) => self
                .chunks
                .get(i as usize)?
                .as_ref()
                .map(|c| c.mem.dma_address()),
            HemAddr::L0(i) => self.l0.get(i as usize)?.as_ref().map(|p| p.dma_address()),
            HemAddr::L1(i) => self.l1.get(i as usize)?.as_ref().map(|p| p.dma_address()),
        }
    }

    fn bt_page(&self, a: HemAddr) -> Option<&Coherent<[u64]>> {
        // CAST: as above.
        match a {
            HemAddr::L0(i) => self.l0.get(i as usize)?.as_ref(),
            HemAddr::L1(i) => self.l1.get(i as usize)?.as_ref(),
            HemAddr::Chunk(_) => None,
        }
    }

    #[inline(never)]
    fn free(&mut self, a: HemAddr) {
        // CAST: as above.
        let slot = match a {
            HemAddr::Chunk(i) => {
                if let Some(c) = self.chunks.get_mut(i as usize) {
                    *c = None;
                }
                return;
            }
            HemAddr::L0(i) => self.l0.get_mut(i as usize),
            HemAddr::L1(i) => self.l1.get_mut(i as usize),
        };
        if let Some(p) = slot {
            *p = None;
        }
    }
}

/// A `len`-long vector of `None`.
fn nones<T>(len: u32) -> Result<KVec<Option<T>>> {
    // CAST: table sizes are u32 counts.
    let mut v = KVec::with_capacity(len as usize, GFP_KERNEL)?;
    for _ in 0..len {
        // Within the capacity reserved for the loop: no growth path.
        v.push_within_capacity(None)?;
    }
    Ok(v)
}

/// Where a mailbox write's out-parameter buffer comes from: a fresh one
/// per command while the device is at hand (C's mailbox pool), or one kept
/// for the teardown, which runs where no bound device is.
#[derive(Clone, Copy)]
enum Out<'a> {
    Fresh(&'a Device<Bound>),
    Kept(&'a MailboxBuf),
}

/// One context table.
#[pin_data]
pub(crate) struct HemTable {
    geom: TableGeom,
    cmd: Arc<Cmd>,
    #[pin]
    mem: Mutex<Mem>,
}

impl HemTable {
    /// The empty table (`hns_roce_init_hem_table`: no memory, no writes).
    fn new(cmd: Arc<Cmd>, geom: TableGeom) -> Result<impl PinInit<Self, Error>> {
        let mem = Mem {
            chunks: nones(geom.num_hem)?,
            l0: nones(geom.num_bt_l0)?,
            l1: nones(geom.num_bt_l1)?,
        };
        Ok(try_pin_init!(Self {
            geom,
            cmd,
            mem <- new_mutex!(mem),
        }? Error))
    }

    /// Carries out one hardware write of a plan.
    fn write(&self, out: Out<'_>, mem: &Mem, w: &HwWrite) -> Result {
        match *w {
            HwWrite::Mailbox { cmd, tag, base, .. } => {
                let ba = base.and_then(|b| mem.dma(b)).unwrap_or(0);
                match out {
                    Out::Fresh(dev) => {
                        let scratch = MailboxBuf::new(dev)?;
                        self.cmd.mbox(ba, scratch.dma(), cmd, tag)
                    }
                    Out::Kept(buf) => self.cmd.mbox(ba, buf.dma(), cmd, tag),
                }
            }
            HwWrite::GmvBt { idx, base, .. } => {
                let ba = base.and_then(|b| mem.dma(b)).unwrap_or(0) >> 12;
                let mut d = [Desc::new(cmq_op::CFG_GMV_BT, false)];
                // CAST: the two halves of the page address.
                d[0].data.write(cmq_req::CFG_GMV_BT_BA_L, ba as u32);
                d[0].data.write(cmq_req::CFG_GMV_BT_BA_H, (ba >> 32) as u32);
                d[0].data.write(cmq_req::CFG_GMV_BT_IDX, idx);
                self.cmd.send(&mut d)
            }
        }
    }

    /// Takes a reference on the chunk holding `obj`, allocating it (and its
    /// BT pages) and telling the engine on first use.
    pub(crate) fn get(&self, dev: &Device<Bound>, obj: u32) -> Result {
        let mut mem = self.mem.lock();
        let plan = {
            let m = &*mem;
            self.geom.get_plan(obj, |a| m.exists(a)).ok_or(EINVAL)?
        };
        let buf = plan.index.buf as usize;
        if plan.ref_only() {
            if let Some(Some(c)) = mem.chunks.get_mut(buf) {
                c.refs += 1;
            }
            return Ok(());
        }
        let g = &self.geom;
        // CAST: BT and chunk sizes are u32 byte counts.
        // What this call allocated, in order (L0, L1, chunk), for the undo.
        let mut new: [Option<HemAddr>; 3] = [None; 3];
        let r = (|| -> Result {
            if let Some(i) = plan.alloc_l0 {
                let p = Coherent::<u64>::zeroed_slice(dev, g.bt_chunk_num as usize, GFP_KERNEL)?;
                *mem.l0.get_mut(i as usize).ok_or(EINVAL)? = Some(p);
                new[0] = Some(HemAddr::L0(i));
            }
            if let Some(i) = plan.alloc_l1 {
                let p = Coherent::<u64>::zeroed_slice(dev, g.bt_chunk_num as usize, GFP_KERNEL)?;
                *mem.l1.get_mut(i as usize).ok_or(EINVAL)? = Some(p);
                new[1] = Some(HemAddr::L1(i));
            }
            if let Some(i) = plan.alloc_chunk {
                let c = Coherent::<u8>::zeroed_slice(dev, g.chunk_size as usize, GFP_KERNEL)?;
                *mem.chunks.get_mut(i as usize).ok_or(EINVAL)? = Some(Chunk { mem: c, refs: 1 });
                new[2] = Some(HemAddr::Chunk(i));
            }
            for l in plan.links.iter() {
                let target = mem.dma(l.target).ok_or(EINVAL)?;
                let page = mem.bt_page(l.page).ok_or(EINVAL)?;
                if l.slot as usize >= page.len() {
                    return Err(EINVAL);
                }
                // The engine reads this page only after the write below
                // tells it about it.
                io_write!(page, [try: l.slot as usize], target.to_le());
            }
            for w in plan.writes.iter() {
                let step = match *w {
                    HwWrite::Mailbox { step, .. } | HwWrite::GmvBt { step, .. } => step,
                };
                if let Err(e) = self.write(Out::Fresh(dev), &mem, w) {
                    if is_last_step(g.hop_num, step) {
                        hdev_err!(self.cmd.state().device(), "set HEM step last failed!\n");
                    } else {
                        hdev_err!(self.cmd.state().device(), "set HEM step {} failed!\n", step);
                    }
                    hdev_err!(self.cmd.state().device(), "set HEM address to HW failed!\n");
                    return Err(e);
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            // Undo in reverse: chunk, then L1, then L0.
            for a in new.iter().rev().flatten() {
                mem.free(*a);
            }
            return Err(e);
        }
        Ok(())
    }

    /// Bus address of `obj`'s entry (`hns_roce_table_find`), for tables
    /// without hardware BTs (IRRL, TRRL); `None` if its chunk is not
    /// allocated or the table is multi-hop (not needed yet).
    pub(crate) fn find(&self, obj: u32) -> Option<u64> {
        let (buf, off) = self.geom.find(obj)?;
        let mem = self.mem.lock();
        // CAST: chunk indexes are u32 counts.
        let c = mem.chunks.get(buf as usize)?.as_ref()?;
        Some(c.mem.dma_address() + u64::from(off))
    }

    /// [`HemTable::get`] as a guard: the reference is put again when the
    /// guard drops, unless [`HemRef::keep`] hands it to the object.
    pub(crate) fn get_ref<'a>(&'a self, dev: &'a Device<Bound>, obj: u32) -> Result<HemRef<'a>> {
        self.get(dev, obj)?;
        Ok(HemRef {
            table: self,
            dev,
            obj,
        })
    }

    /// Drops a reference on the chunk holding `obj`; the last one clears the
    /// engine's pointers and frees the memory.
    pub(crate) fn put(&self, dev: &Device<Bound>, obj: u32) {
        let mut mem = self.mem.lock();
        let Some(idx) = self.geom.index(obj) else {
            return;
        };
        match mem.chunks.get_mut(idx.buf as usize) {
            Some(Some(c)) if c.refs > 1 => {
                c.refs -= 1;
                return;
            }
            Some(Some(_)) => {}
            _ => return,
        }
        self.release(&mut mem, Out::Fresh(dev), obj);
    }

    /// Releases every chunk still held, whatever its count, as the
    /// driver's teardown does (`hns_roce_cleanup_*hem_table`): each chunk
    /// through the put of its first object, so the engine is told to
    /// forget the chunks the driver never puts (QPC entries stay until the
    /// end). Once the function was cleared those mailboxes are answered
    /// without reaching the engine (`Cmd::mbox`); after a clear that did
    /// not complete they go out, as C's do.
    fn release_all(&self, out: &MailboxBuf) {
        let mut mem = self.mem.lock();
        for buf in 0..self.geom.num_hem {
            // CAST: chunk indexes are u32 counts.
            if !matches!(mem.chunks.get(buf as usize), Some(Some(_))) {
                continue;
            }
            if let Some(obj) = self.geom.chunk_first_obj(buf) {
                self.release(&mut mem, Out::Kept(out), obj);
            }
        }
    }

    /// The last put of `obj`'s chunk: the engine's pointers cleared, the
    /// chunk and the BT pages it alone used freed.
    fn release(&self, mem: &mut Mem, out: Out<'_>, obj: u32) {
        let plan = {
            let m = &*mem;
            self.geom.put_plan(obj, |a| m.exists(a))
        };
        let Some(plan) = plan else { return };
        for w in plan.writes.iter() {
            if self.write(out, mem, w).is_err() {
                hdev_warn!(
                    self.cmd.state().device(),
                    "failed to clear HEM of {:?}\n",
                    self.geom.ty
                );
            }
        }
        if let Some(i) = plan.free_chunk {
            mem.free(HemAddr::Chunk(i));
        }
        if let Some(i) = plan.free_l1 {
            mem.free(HemAddr::L1(i));
        }
        if let Some(i) = plan.free_l0 {
            mem.free(HemAddr::L0(i));
        }
    }
}

/// A reference on a table entry taken by [`HemTable::get_ref`], put back
/// on drop: the error paths of an object's creation give back what they
/// took in reverse order without code of their own.
pub(crate) struct HemRef<'a> {
    table: &'a HemTable,
    dev: &'a Device<Bound>,
    obj: u32,
}

impl HemRef<'_> {
    /// The object now holds the reference and puts it when it goes.
    pub(crate) fn keep(self) {
        core::mem::forget(self);
    }
}

impl Drop for HemRef<'_> {
    fn drop(&mut self) {
        self.table.put(self.dev, self.obj);
    }
}

/// The context tables of a function (`hns_roce_init_hem`); dropping them
/// releases what they still hold ([`HemType::CLEANUP_ORDER`]).
pub(crate) struct HemTables {
    tables: KVec<(HemType, Pin<KBox<HemTable>>)>,
    /// The out-parameter buffer of the teardown's clears.
    teardown_out: MailboxBuf,
}

impl HemTables {
    /// Every table the caps ask for, empty.
    pub(crate) fn new(dev: &Device<Bound>, cmd: &Arc<Cmd>, caps: &Caps) -> Result<Self> {
        // CAST: PAGE_SHIFT is 12..16.
        let shift = kernel::page::PAGE_SHIFT as u32;
        let extra = [HemType::Irrl, HemType::Trrl];
        let mut tables = KVec::with_capacity(HemType::CONTEXTS.len() + extra.len(), GFP_KERNEL)?;
        for &ty in Iterator::chain(HemType::CONTEXTS.iter(), extra.iter()) {
            let Some(cfg) = TableCfg::from_caps(caps, ty, shift) else {
                continue;
            };
            // A table of no objects (a VF's timers: C makes it empty and
            // never takes a chunk of it) is not made.
            if cfg.num_obj == 0 {
                continue;
            }
            let geom = TableGeom::new(&cfg).ok_or_else(|| {
                pr_err!("invalid HEM table config for {:?}\n", ty);
                EINVAL
            })?;
            let t = KBox::pin_init(HemTable::new(cmd.clone(), geom)?, GFP_KERNEL)?;
            // Within the capacity reserved above: no growth path.
            tables.push_within_capacity((ty, t))?;
        }
        Ok(Self {
            tables,
            teardown_out: MailboxBuf::new(dev)?,
        })
    }

    /// The table of type `ty`.
    #[inline(never)]
    pub(crate) fn table(&self, ty: HemType) -> Result<&HemTable> {
        self.tables
            .iter()
            .find(|(t, _)| *t == ty)
            .map(|(_, t)| &**t)
            .ok_or(EINVAL)
    }
}

impl Drop for HemTables {
    fn drop(&mut self) {
        for ty in HemType::CLEANUP_ORDER {
            if let Ok(t) = self.table(ty) {
                t.release_all(&self.teardown_out);
            }
        }
    }
}
