// SPDX-License-Identifier: GPL-2.0

//! Memory regions (`hns_roce_mr.c`): the DMA MR of kernel users
//! (`hns_roce_get_dma_mr`), user MRs (`hns_roce_reg_user_mr`), their
//! re-registration (`hns_roce_rereg_user_mr`), fast-register MRs of kernel
//! ULPs (`hns_roce_alloc_mr`, `hns_roce_map_mr_sg`; the REG_MR WQE is
//! built in `qp/post.rs`) and deregistration.
//!
//! A fast-register MR is an MPT entry in the FREE state with a page list
//! of one hop for up to `max_num_sg` pages (C's `mtt_only` MTR: no buffer).
//! `ib_map_mr_sg` stores page addresses straight into that list; a REG_MR
//! work request then tells the engine the key, range and rights. Unlike C,
//! the mapping allocates nothing (C takes a `kvzalloc` page array each time,
//! which may sleep where `ib_map_mr_sg` runs in atomic context).
//!
//! An MR is an MPT entry: its index comes from the device's MR key space,
//! its key is the index rotated (`hw_index_to_key`), the MPT table chunk is
//! taken from the HEM tables and the entry written with CREATE_MPT. A user
//! MR also has a page list (PBL): the pinned memory and its BTs, a
//! [`UserMtr`] with the best page size and hop number for it.
//!
//! One deliberate difference from C: re-registering with a new translation
//! writes the new page list's hop number and BT page size into the MPT
//! entry; C keeps the old ones (`docs/c-driver-findings.md`, finding 1).

use crate::cmdq::{query_context, Cmd, DevState, MailboxBuf};
use crate::field::Ctx;
use crate::hem::mtr::{trace_buf_attr, FrmrPbl, PblRange, Region, UserMtr};
use crate::hem::table::{HemTable, HemTables};
use crate::hem::HemType;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{frmr, hw_page, mbox};
use crate::hns_roce_hw_v2::ctx::{self as hw_ctx, index_to_key, key_to_index, MptPbl};
use crate::hns_roce_hw_v2::fields::Mpt;
use crate::hns_roce_hw_v2::wqe::FastReg;
use crate::pd::IdSpace;
use crate::rdma::{self, trace, MrReq, ResAttrs, ResRaw, UmemDev};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    device::{Bound, Device},
    new_mutex,
    prelude::*,
    sync::Mutex,
    types::ScopeGuard, //
};

/// What registering and deregistering an MR needs from the device.
pub(crate) struct MrEnv<'a> {
    /// Commands.
    pub(crate) cmd: &'a Cmd,
    /// DMA device.
    pub(crate) dev: &'a Device<Bound>,
    /// Context tables (the MPT table).
    pub(crate) hem: &'a HemTables,
    /// Capabilities.
    pub(crate) caps: &'a Caps,
    /// MPT indexes (MR keys).
    pub(crate) ids: &'a IdSpace,
}

/// The MPT access bits of `IB_ACCESS_*` flags `access`.
fn mpt_access(access: u32) -> hw_ctx::MrAccess {
    hw_ctx::MrAccess {
        remote_atomic: access & rdma::ACCESS_REMOTE_ATOMIC != 0,
        remote_read: access & rdma::ACCESS_REMOTE_READ != 0,
        remote_write: access & rdma::ACCESS_REMOTE_WRITE != 0,
        local_write: access & rdma::ACCESS_LOCAL_WRITE != 0,
    }
}

/// What an MR's MPT entry is made of and whether the engine has it.
struct MrState {
    pdn: u32,
    access: u32,
    iova: u64,
    size: u64,
    /// The page list of a user MR; `None` for a DMA MR, or after a failed
    /// re-registration dropped the old one.
    pbl: Option<UserMtr>,
    /// The engine holds the MPT entry (C's `mr->enabled`): cleared while a
    /// re-registration rebuilds it, and left cleared if that fails.
    enabled: bool,
}

/// The page list of a fast-register MR and its current mapping.
struct Frmr {
    pbl: FrmrPbl,
    /// Pages the current `ib_map_mr_sg` stored (C's `mr->npages`).
    npages: AtomicU32,
    /// Their size exponent (C's `buf_pg_shift`).
    page_shift: AtomicU32,
}

/// A memory region.
#[pin_data]
pub(crate) struct Mr {
    /// The MR key, lkey and rkey alike.
    pub(crate) key: u32,
    #[pin]
    state: Mutex<MrState>,
    /// `Some` for a fast-register MR. Its mapping is not locked: the ULP
    /// owns the MR between `ib_map_mr_sg` and the REG_MR WR it posts.
    frmr: Option<Frmr>,
}

/// An MPT index taken from the key space with its table entry; both go
/// back when it drops, unless [`MptSlot::keep`] handed them to an [`Mr`].
struct MptSlot<'a> {
    env: &'a MrEnv<'a>,
    table: &'a HemTable,
    idx: u32,
}

impl<'a> MptSlot<'a> {
    /// `alloc_mr_key`: an index, then its MPT table entry.
    #[inline(never)]
    fn take(env: &'a MrEnv<'a>) -> Result<Self> {
        // The index goes back if its table entry cannot be had.
        let idx = ScopeGuard::new_with_data(env.ids.alloc()?, |i| env.ids.free(i));
        let table = env.hem.table(HemType::Mtpt)?;
        table
            .get(env.dev, *idx)
            .inspect_err(|e| ibdev_err!(env.cmd, "failed to alloc mtpt", ret = e.to_errno()))?;
        Ok(Self {
            env,
            table,
            idx: idx.dismiss(),
        })
    }

    /// The index now belongs to an MR, which gives it back in
    /// [`dereg_mr`].
    fn keep(self) -> u32 {
        let idx = self.idx;
        core::mem::forget(self);
        idx
    }
}

impl Drop for MptSlot<'_> {
    fn drop(&mut self) {
        self.table.put(self.env.dev, self.idx);
        self.env.ids.free(self.idx);
    }
}

/// Hop number of a fast-register MR's page list (one BT level, as
/// [`FrmrPbl`] builds it).
const FRMR_PBL_HOP: u32 = 1;

/// The page-list part of a user MR's MPT entry (`set_mtpt_pbl`).
#[inline(never)]
fn mpt_pbl(env: &MrEnv<'_>, pbl: &UserMtr) -> Result<MptPbl> {
    let mut pages = [0u64; 2];
    let n = usize::try_from(pbl.page_count())?.min(pages.len());
    pbl.find(0, pages.get_mut(..n).ok_or(EINVAL)?)
        .inspect_err(|e| ibdev_err!(env.cmd, "failed to find PBL mtr", ret = e.to_errno()))?;
    Ok(MptPbl {
        npages: pbl.page_count(),
        pbl_ba: pbl.root_ba(),
        pages,
        buf_pg_shift: pbl.page_shift(),
    })
}

/// The inputs of a user MR's MPT image from its state.
fn user_params(env: &MrEnv<'_>, key: u32, st: &MrState) -> Result<hw_ctx::UserMptParams> {
    let pbl = st.pbl.as_ref().ok_or(EINVAL)?;
    Ok(hw_ctx::UserMptParams {
        pdn: st.pdn,
        access: mpt_access(st.access),
        key,
        iova: st.iova,
        size: st.size,
        hop: pbl.hop(0),
        ba_pg_shift: pbl.ba_pg_shift(),
        pbl: mpt_pbl(env, pbl)?,
    })
}

/// Sends CREATE_MPT with `words` for MPT entry `idx`.
/// A failed mailbox is logged as C's `hns_roce_mr_enable` logs it (one
/// rate-limited site for every MR type).
fn create_mpt(env: &MrEnv<'_>, words: &[u32], idx: u32) -> Result {
    let mb = MailboxBuf::new(env.dev)?;
    mb.write_le_words(words)?;
    env.cmd
        .mbox(
            mb.dma(),
            0,
            mbox::CREATE_MPT,
            idx & (env.caps.num_mtpts - 1),
        )
        .inspect_err(|e| {
            dev_err_ratelimited!(
                env.cmd.state().device(),
                "failed to create mpt",
                ret = e.to_errno()
            )
        })
}

/// The pinned, DMA-mapped page list of a user MR (`alloc_mr_pbl`).
fn alloc_pbl(env: &MrEnv<'_>, pin: UmemDev<'_>, mr: &PblRange) -> Result<UserMtr> {
    // CAST: PAGE_SHIFT is 12..16.
    let page_shift = kernel::page::PAGE_SHIFT as u32;
    // CAST: the event's size is C's `unsigned int`, as `size_t` truncated.
    let size = mr.length as usize;
    let region = Region {
        size,
        hop: env.caps.pbl_hop_num,
    };
    trace_buf_attr(&[region], env.caps.pbl_pg.buf + page_shift, false);
    UserMtr::new_pbl(
        env.dev,
        pin,
        mr,
        env.caps.pbl_pg.ba + page_shift,
        u64::from(env.caps.page_size_cap),
    )
    .inspect_err(|e| ibdev_err!(env.cmd, "failed to alloc pbl mtr", ret = e.to_errno()))
}

/// A DMA MR on PD `pdn` with `access` (`IB_ACCESS_*`): MR key, MPT table
/// entry, CREATE_MPT (`hns_roce_get_dma_mr`).
///
/// # Errors
///
/// `ENOMEM` when no key is free, or the errno of the table get or of the
/// mailbox; what was taken is given back.
pub(crate) fn get_dma_mr(env: &MrEnv<'_>, pdn: u32, access: u32) -> Result<Pin<KBox<Mr>>> {
    let slot = MptSlot::take(env)?;
    let key = index_to_key(slot.idx);
    let c = hw_ctx::dma_mr_mpt(pdn, mpt_access(access), key);
    trace::mr(&trace::MrTrace {
        key,
        pd: pdn,
        type_: trace::MR_TYPE_DMA,
        ..Default::default()
    });
    create_mpt(env, c.as_le_words(), slot.idx)?;
    let mr = KBox::pin_init(
        pin_init!(Mr {
            key,
            state <- new_mutex!(MrState {
                pdn,
                access,
                iova: 0,
                size: 0,
                pbl: None,
                enabled: true,
            }),
            frmr: None,
        }),
        GFP_KERNEL,
    );
    if mr.is_err() {
        // The engine has the entry: take it back before the key goes.
        let _ = env
            .cmd
            .mbox(0, 0, mbox::DESTROY_MPT, slot.idx & (env.caps.num_mtpts - 1));
    }
    let mr = mr?;
    slot.keep();
    Ok(mr)
}

/// A user MR (`hns_roce_reg_user_mr`): `req.length` bytes of the calling
/// process at `req.start`, I/O address `req.iova`, on PD `req.pdn` with
/// `req.access` (`IB_ACCESS_*`). Key and MPT table entry, the pinned page list with its
/// best page size and hop number, then the MPT entry (`set_mtpt_pbl`)
/// through CREATE_MPT.
///
/// # Errors
///
/// As [`get_dma_mr`]; `ENOMEM` if the memory cannot be pinned, `EINVAL`
/// if no page size fits or the MR needs more than hop 3 (beyond 32 TiB
/// of 4 KiB pages with 16 KiB BT pages). Everything taken is given back.
pub(crate) fn reg_user_mr(env: &MrEnv<'_>, pin: UmemDev<'_>, req: &MrReq) -> Result<Pin<KBox<Mr>>> {
    let MrReq {
        pdn,
        start,
        length,
        iova,
        access,
        ..
    } = *req;
    let slot = MptSlot::take(env)?;
    let key = index_to_key(slot.idx);
    let st = MrState {
        pdn,
        access,
        iova,
        size: length,
        pbl: Some(alloc_pbl(
            env,
            pin,
            &PblRange {
                start,
                length,
                iova,
                access,
            },
        )?),
        enabled: true,
    };
    if let Some(pbl) = &st.pbl {
        trace::mr(&trace::MrTrace {
            iova,
            size: length,
            key,
            pd: pdn,
            pbl_hop_num: pbl.hop(0),
            npages: pbl.page_count(),
            type_: trace::MR_TYPE_MR,
            enabled: 0,
        });
    }
    let c = hw_ctx::user_mr_mpt(
        &user_params(env, key, &st)
            .inspect_err(|e| ibdev_err!(env.cmd, "failed to write mtpt", ret = e.to_errno()))?,
    );
    let mr = KBox::pin_init(
        pin_init!(Mr {
            key,
            state <- new_mutex!(st),
            frmr: None,
        }),
        GFP_KERNEL,
    )?;
    create_mpt(env, c.as_le_words(), slot.idx)?;
    slot.keep();
    Ok(mr)
}

/// A fast-register MR for up to `max_num_sg` pages on PD `pdn`
/// (`hns_roce_alloc_mr`): key and MPT table entry, a one-hop page list of
/// CPU pages, then CREATE_MPT of a FREE entry. Its length is
/// `max_num_sg` pages.
///
/// # Errors
///
/// `EINVAL` for another `mr_type` than `IB_MR_TYPE_MEM_REG` or more than
/// `HNS_ROCE_FRMR_MAX_PA` pages; `ENOMEM` when no key is free; the errno
/// of the table get, the page list or the mailbox. Everything taken is
/// given back.
pub(crate) fn alloc_mr(
    env: &MrEnv<'_>,
    pdn: u32,
    mr_type: u32,
    max_num_sg: u32,
) -> Result<Pin<KBox<Mr>>> {
    if mr_type != rdma::MR_TYPE_MEM_REG {
        return Err(EINVAL);
    }
    if max_num_sg > frmr::MAX_PA {
        hdev_err!(
            env.cmd.state().device(),
            "max_num_sg larger than {}\n",
            frmr::MAX_PA
        );
        return Err(EINVAL);
    }
    // CAST: PAGE_SHIFT is 12..16.
    let page_shift = kernel::page::PAGE_SHIFT as u32;
    let size = u64::from(max_num_sg) << page_shift;
    let slot = MptSlot::take(env)?;
    let key = index_to_key(slot.idx);
    // CAST: as C's `size_t` region size.
    let region = Region {
        size: size as usize,
        hop: FRMR_PBL_HOP,
    };
    trace_buf_attr(&[region], page_shift, true);
    let pbl = FrmrPbl::new(
        env.dev,
        max_num_sg,
        page_shift,
        env.caps.pbl_pg.ba + page_shift,
    )
    .inspect_err(|e| ibdev_err!(env.cmd, "failed to alloc pbl mtr", ret = e.to_errno()))?;
    trace::mr(&trace::MrTrace {
        size,
        key,
        pd: pdn,
        pbl_hop_num: FRMR_PBL_HOP,
        npages: pbl.capacity(),
        type_: trace::MR_TYPE_FRMR,
        ..Default::default()
    });
    let c = hw_ctx::frmr_mpt(&hw_ctx::FrmrMptParams {
        pdn,
        pbl_ba: pbl.root_ba(),
        npages: pbl.capacity(),
        ba_pg_shift: pbl.ba_pg_shift(),
        buf_pg_shift: page_shift,
    });
    let mr = KBox::pin_init(
        pin_init!(Mr {
            key,
            state <- new_mutex!(MrState {
                pdn,
                access: 0,
                iova: 0,
                size,
                pbl: None,
                enabled: true,
            }),
            frmr: Some(Frmr {
                pbl,
                npages: AtomicU32::new(max_num_sg),
                page_shift: AtomicU32::new(page_shift),
            }),
        }),
        GFP_KERNEL,
    )?;
    create_mpt(env, c.as_le_words(), slot.idx)?;
    slot.keep();
    Ok(mr)
}

/// Re-registers a user MR in place (`hns_roce_rereg_user_mr`): checks the
/// request against the pinned memory, reads the MPT entry back
/// (QUERY_MPT), destroys it, takes the new PD, access and, for a new
/// translation, a new page list, and creates the entry again from the one
/// read, changed as [`hw_ctx::rereg_mpt`] says. The key stays.
///
/// # Errors
///
/// `EINVAL` if the MR has no MPT entry (an earlier re-registration
/// failed); the errno of `ib_umem_check_rereg`, of the mailboxes, or of the
/// new page list. After a failure past QUERY_MPT the MR has no MPT entry
/// any more, as in C.
pub(crate) fn rereg_user_mr(env: &MrEnv<'_>, mr: &Mr, pin: UmemDev<'_>, req: &MrReq) -> Result {
    let mut st = mr.state.lock();
    if !st.enabled {
        return Err(EINVAL);
    }
    if let Some(p) = &st.pbl {
        p.umem().check_rereg(req.flags, req.access)?;
    }
    let idx = key_to_index(mr.key) & (env.caps.num_mtpts - 1);
    let mb = MailboxBuf::new(env.dev)?;
    env.cmd.mbox(0, mb.dma(), mbox::QUERY_MPT, idx)?;
    let mut words = [0u32; 16];
    mb.read_le_words(&mut words)?;
    let old = Ctx::<Mpt, 16>::from_le_words(words);
    if let Err(e) = env.cmd.mbox(0, 0, mbox::DESTROY_MPT, idx) {
        ibdev_warn_ratelimited!(env.cmd, "failed to destroy MPT", ret = e.to_errno());
    }
    st.enabled = false;
    st.iova = req.iova;
    st.size = req.length;
    if req.flags & rdma::MR_REREG_PD != 0 {
        st.pdn = req.pdn;
    }
    if req.flags & rdma::MR_REREG_ACCESS != 0 {
        st.access = req.access;
    }
    let what = hw_ctx::Rereg {
        trans: req.flags & rdma::MR_REREG_TRANS != 0,
        access: req.flags & rdma::MR_REREG_ACCESS != 0,
    };
    if what.trans {
        // The old list goes first, as in C.
        st.pbl = None;
        st.pbl = Some(
            alloc_pbl(
                env,
                pin,
                &PblRange {
                    start: req.start,
                    length: req.length,
                    iova: req.iova,
                    access: st.access,
                },
            )
            .inspect_err(|e| ibdev_err!(env.cmd, "failed to alloc mr PBL", ret = e.to_errno()))?,
        );
    }
    let params = if what.trans {
        user_params(env, mr.key, &st)
    } else {
        // Only the PD or the access bits change: no page list needed.
        Ok(hw_ctx::UserMptParams {
            pdn: st.pdn,
            access: mpt_access(st.access),
            key: mr.key,
            iova: st.iova,
            size: st.size,
            ..Default::default()
        })
    }
    .inspect_err(|e| ibdev_err!(env.cmd, "failed to write mtpt", ret = e.to_errno()))?;
    let c = hw_ctx::rereg_mpt(&old, what, &params);
    mb.write_le_words(c.as_le_words())?;
    if let Err(e) = env.cmd.mbox(mb.dma(), 0, mbox::CREATE_MPT, idx) {
        ibdev_err_ratelimited!(env.cmd, "failed to create MPT", ret = e.to_errno());
        return Err(e);
    }
    st.enabled = true;
    Ok(())
}

/// Deregisters an MR (`hns_roce_dereg_mr`): DESTROY_MPT if the engine has
/// the entry (a failure is only logged), then the page list (unpinning
/// the memory), the MPT table entry and the key go back.
pub(crate) fn dereg_mr(env: &MrEnv<'_>, mr: Pin<KBox<Mr>>) {
    let idx = key_to_index(mr.key);
    let pbl = {
        let mut st = mr.state.lock();
        if st.enabled {
            if let Err(e) = env
                .cmd
                .mbox(0, 0, mbox::DESTROY_MPT, idx & (env.caps.num_mtpts - 1))
            {
                ibdev_warn_ratelimited!(env.cmd, "failed to destroy mpt", ret = e.to_errno());
            }
        }
        st.pbl.take()
    };
    drop(pbl);
    if let Ok(t) = env.hem.table(HemType::Mtpt) {
        t.put(env.dev, idx);
    }
    env.ids.free(idx);
}

impl Mr {
    /// Bytes the MR covers (a fast-register MR: its largest mapping).
    pub(crate) fn size(&self) -> u64 {
        self.state.lock().size
    }

    /// Starts a mapping (`hns_roce_map_mr_sg` before `ib_sg_to_pages`):
    /// the list empties.
    ///
    /// # Errors
    ///
    /// `EINVAL` (C: nothing mapped, no message) for an MR that is not a
    /// fast-register one, an SG offset not a multiple of
    /// `HNS_ROCE_FRMR_ALIGN_SIZE`, or a page size outside 4 KiB..128 MiB.
    pub(crate) fn map_sg_begin(&self, page_size: u32, sg_offset: u32) -> Result {
        let f = self.frmr.as_ref().ok_or(EINVAL)?;
        let sizes = 1u64 << hw_page::PAGE_SHIFT..=1u64 << hw_page::MAX_PAGE_SHIFT;
        if sg_offset % frmr::ALIGN_SIZE != 0 || !sizes.contains(&u64::from(page_size)) {
            return Err(EINVAL);
        }
        f.npages.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// Lists the page at `addr` next (`hns_roce_set_page`).
    ///
    /// # Errors
    ///
    /// `ENOBUFS` when the list is full, `EINVAL` for an MR that is not a
    /// fast-register one.
    pub(crate) fn map_sg_page(&self, addr: u64) -> Result {
        let f = self.frmr.as_ref().ok_or(EINVAL)?;
        let n = f.npages.load(Ordering::Relaxed);
        if n >= f.pbl.capacity() {
            return Err(ENOBUFS);
        }
        f.pbl.set(n, addr)?;
        f.npages.store(n + 1, Ordering::Relaxed);
        Ok(())
    }

    /// Ends a mapping `ib_sg_to_pages` answered `n` for: C's message when
    /// nothing was mapped, else the page size is the mapping's. Returns `n`.
    #[inline(never)]
    pub(crate) fn map_sg_end(&self, st: &DevState, n: i32, page_size: u32) -> i32 {
        let Some(f) = self.frmr.as_ref() else {
            return 0;
        };
        if n < 1 {
            ibdev_err!(
                st,
                "failed to store sg pages {} {}, cnt = {}.\n",
                f.npages.load(Ordering::Relaxed),
                f.pbl.capacity(),
                n
            );
            return n;
        }
        // A power of two (`ib_map_mr_sg`'s contract).
        f.page_shift
            .store(page_size.trailing_zeros(), Ordering::Relaxed);
        n
    }

    /// What a REG_MR WQE for this MR under `key` with `access`
    /// (`IB_ACCESS_*`) over `length` bytes from `iova` holds
    /// (`set_frmr_seg`); `None` if it is not a fast-register MR.
    pub(crate) fn fast_reg(
        &self,
        key: u32,
        access: u32,
        iova: u64,
        length: u64,
    ) -> Option<FastReg> {
        let f = self.frmr.as_ref()?;
        Some(FastReg {
            pbl_ba: f.pbl.root_ba(),
            npages: f.npages.load(Ordering::Relaxed),
            page_shift: f.page_shift.load(Ordering::Relaxed),
            iova,
            length,
            key,
            access: mpt_access(access),
        })
    }

    /// What `rdma res show mr -dd` prints (`hns_roce_fill_res_mr_entry`):
    /// the page list's hop number, BT and buffer page shifts; all 0 for a
    /// DMA MR, which has no page list.
    pub(crate) fn res_attrs(&self, r: &mut ResAttrs) -> Result {
        let st = self.state.lock();
        let (hop, ba, buf) = match (&self.frmr, st.pbl.as_ref()) {
            (Some(f), _) => (1, f.pbl.ba_pg_shift(), f.page_shift.load(Ordering::Relaxed)),
            (None, Some(p)) => (p.hop(0), p.ba_pg_shift(), p.page_shift()),
            (None, None) => (0, 0, 0),
        };
        r.put_hex(c"pbl_hop_num", hop)?;
        r.put_hex(c"ba_pg_shift", ba)?;
        r.put_hex(c"buf_pg_shift", buf)
    }

    /// The MPT entry read back (QUERY_MPT) for `rdma res show mr -r`
    /// (`hns_roce_fill_res_mr_entry_raw`).
    pub(crate) fn res_raw(&self, env: &MrEnv<'_>, r: &mut ResRaw<'_>) -> Result {
        let mut words = [0u32; 16];
        let idx = key_to_index(self.key) & (env.caps.num_mtpts - 1);
        query_context(env.cmd, env.dev, mbox::QUERY_MPT, idx, &mut words).inspect_err(|e| {
            ibdev_err_ratelimited!(
                env.cmd,
                "failed to process cmd when querying MPT",
                ret = e.to_errno()
            )
        })?;
        r.push_words(&words)
    }
}
