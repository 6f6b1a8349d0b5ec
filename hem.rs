// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Hardware entry memory (HEM) arithmetic (`core` only): hop numbers and
//! the page sizes of the context tables, as the C driver computes them in
//! `calc_pg_sz` and `to_hr_hem_hopnum`, and the pure part of the C
//! context-table manager (`hns_roce_hem.c`) with its hardware hooks
//! (`hns_roce_v2_set_hem` / `hns_roce_v2_clear_hem` in `hns_roce_hw_v2.c`).
//!
//! Nothing here allocates or touches DMA memory. A table manager builds a
//! [`TableGeom`] from a [`TableCfg`] (usually [`TableCfg::from_caps`]),
//! asks [`TableGeom::index`] where object `obj` lives, and
//! [`TableGeom::get_plan`] / [`TableGeom::put_plan`] which BT pages and
//! chunk to allocate or free, which BT slots to fill and which mailbox or
//! CMQ writes to issue, in the C driver's order. What already exists is
//! answered by the caller through a closure over [`HemAddr`].
//!
//! The BT layout of a buffer of up to three regions (`hns_roce_mtr_create`
//! → `mtr_init_buf_cfg`, `cal_best_bt_pg_sz`, `hns_roce_hem_list_request`)
//! is in `hem/mtr_layout.rs`, re-exported here: [`MtrLayout::new`] says how
//! many root entries and L1 BT pages there are and, through
//! [`HemList::locate`] and [`HemList::l1_root`], which entry holds which
//! page (`hem/mtr.rs` allocates and fills them).

// The kernel halves of HEM: context tables (chunks, BT pages, references)
// and kernel buffers with their BTs, which carry out the plans of this file.
// Only in a kernel build: the host tests compile this file alone.
// (Explicit paths: tests/host includes this file by path, which would
// make rustfmt look for the children next to it.)
#[cfg(CONFIG_RUST)]
#[path = "hem/mtr.rs"]
pub(crate) mod mtr;
#[cfg(CONFIG_RUST)]
#[path = "hem/table.rs"]
pub(crate) mod table;

// The MTR layout arithmetic, `core` only like this file (kernel and host).
#[path = "hem/mtr_layout.rs"]
mod mtr_layout;
pub use mtr_layout::{
    best_bt_pg_sz, best_hop_num, calc_ba_range, calc_root_ba, init_buf_cfg, init_user_buf_cfg,
    num_dma_blocks, BtSlot, BufRegion, BufRegions, HemList, MtrError, MtrLayout, RegionAttr,
    RegionBt, UmemShape, UserMtrLayout, MAX_BT_REGION, MAX_HOP_NUM,
};

use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{cap_flag, hw_page, mbox};

/// The hop number meaning "chunks addressed directly, no BT level"
/// (`HNS_ROCE_HOP_NUM_0`).
pub const HOP_NUM_0: u32 = 0xff;
/// Bytes per base address in a BT page.
pub const BA_BYTE_LEN: u64 = 8;
/// The hardware page size (`HNS_HW_PAGE_SIZE`) GMV BT indexes count in.
pub const HW_PAGE_SIZE: u32 = 1 << hw_page::PAGE_SHIFT;

/// HEM table types (`enum hns_roce_hem_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum HemType {
    Qpc = 0,
    Mtpt = 1,
    Cqc = 2,
    Srqc = 3,
    Sccc = 4,
    QpcTimer = 5,
    CqcTimer = 6,
    Gmv = 7,
    Mtt = 8,
    Cqe = 9,
    SrqWqe = 10,
    Idx = 11,
    Irrl = 12,
    Trrl = 13,
}

impl HemType {
    /// The context ("mapped") types, whose BTs are programmed by mailbox or
    /// CMQ, in `enum hns_roce_hem_type` order.
    pub const CONTEXTS: [HemType; 8] = [
        HemType::Qpc,
        HemType::Mtpt,
        HemType::Cqc,
        HemType::Srqc,
        HemType::Sccc,
        HemType::QpcTimer,
        HemType::CqcTimer,
        HemType::Gmv,
    ];

    /// The tables in the order the driver's teardown releases what they
    /// still hold (`hns_roce_cleanup_hem`): SRQC, CQC, the timers, SCCC,
    /// TRRL, GMV, IRRL, QPC, MTPT.
    pub const CLEANUP_ORDER: [HemType; 10] = [
        HemType::Srqc,
        HemType::Cqc,
        HemType::QpcTimer,
        HemType::CqcTimer,
        HemType::Sccc,
        HemType::Trrl,
        HemType::Gmv,
        HemType::Irrl,
        HemType::Qpc,
        HemType::Mtpt,
    ];

    /// Types from MTT on are buffers addressed through per-object BT trees
    /// rather than context tables programmed by mailbox.
    pub fn is_buffer(self) -> bool {
        self >= HemType::Mtt
    }

    /// The `WRITE_*_BT0` mailbox of the type (`get_op_for_set_hem`); `None`
    /// for GMV (programmed by CMQ) and the buffer types.
    pub fn write_bt0(self) -> Option<u8> {
        match self {
            HemType::Qpc => Some(mbox::WRITE_QPC_BT0),
            HemType::Mtpt => Some(mbox::WRITE_MPT_BT0),
            HemType::Cqc => Some(mbox::WRITE_CQC_BT0),
            HemType::Srqc => Some(mbox::WRITE_SRQC_BT0),
            HemType::Sccc => Some(mbox::WRITE_SCCC_BT0),
            HemType::QpcTimer => Some(mbox::WRITE_QPC_TIMER_BT0),
            HemType::CqcTimer => Some(mbox::WRITE_CQC_TIMER_BT0),
            _ => None,
        }
    }

    /// The `DESTROY_*_BT0` mailbox `hns_roce_v2_clear_hem` sends for the
    /// type; `None` where it sends nothing (SCCC, timers, GMV, buffers).
    pub fn destroy_bt0(self) -> Option<u8> {
        match self {
            HemType::Qpc => Some(mbox::DESTROY_QPC_BT0),
            HemType::Mtpt => Some(mbox::DESTROY_MPT_BT0),
            HemType::Cqc => Some(mbox::DESTROY_CQC_BT0),
            HemType::Srqc => Some(mbox::DESTROY_SRQC_BT0),
            _ => None,
        }
    }
}

/// The hop number as the hardware's 2-bit field wants it
/// (`to_hr_hem_hopnum`): 0xff becomes 0, and an empty table is 0.
#[inline(never)]
pub fn hw_hopnum(hop: u32, count: u32) -> u32 {
    if count == 0 || hop == HOP_NUM_0 {
        0
    } else {
        hop
    }
}

/// Page-size exponents (over `PAGE_SIZE`) of one table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgSz {
    /// Buffer (chunk) page size exponent.
    pub buf: u32,
    /// BT page size exponent.
    pub ba: u32,
}

/// The smallest page sizes that fit `obj_num` objects of `obj_size` bytes
/// into `bt_num` BTs of `hop` levels (`calc_pg_sz`): context tables grow the
/// buffer pages, buffer types grow the BT pages. `None` for a hop number
/// the driver does not support (the C driver logs and leaves both 0).
///
/// An empty table (`obj_num == 0`) gets 0; the C code would take `ilog2(0)`.
pub fn calc_pg_sz(
    obj_num: u32,
    obj_size: u32,
    hop: u32,
    bt_num: u32,
    page_size: u64,
    ty: HemType,
) -> Option<PgSz> {
    if obj_size == 0 {
        return None;
    }
    let per_ba = page_size / BA_BYTE_LEN;
    let per_chunk_default = page_size / u64::from(obj_size);
    let bt = u64::from(bt_num);
    let obj_per_chunk = match hop {
        3 => bt * per_ba * per_ba * per_ba * per_chunk_default,
        2 => bt * per_ba * per_ba * per_chunk_default,
        1 => bt * per_ba * per_chunk_default,
        HOP_NUM_0 => bt * per_chunk_default,
        _ => return None,
    };
    if obj_per_chunk == 0 {
        return None;
    }
    let chunks = u64::from(obj_num).div_ceil(obj_per_chunk);
    let exp = chunks.checked_ilog2().unwrap_or(0);
    Some(if ty.is_buffer() {
        PgSz { buf: 0, ba: exp }
    } else {
        PgSz { buf: exp, ba: 0 }
    })
}

/// Whether a table of type `ty` with hop number `hop` goes through the
/// multi-hop manager (`hns_roce_check_whether_mhop`): context types with a
/// non-zero hop number, so 0xff counts as multi-hop; buffer types never.
pub fn is_mhop(ty: HemType, hop: u32) -> bool {
    !ty.is_buffer() && hop != 0
}

/// Number of address levels of a multi-hop table, chunks included
/// (`hns_roce_get_bt_num`): context types 3/2/1 for hop 2/1/0xff, buffer
/// types 2/1/1; 0 for any other hop number (unsupported).
pub fn bt_num(ty: HemType, hop: u32) -> u32 {
    match (ty.is_buffer(), hop) {
        (false, 2) => 3,
        (false, 1) | (true, 2) => 2,
        (_, HOP_NUM_0) | (true, 1) => 1,
        _ => 0,
    }
}

/// Whether `step` writes the chunk itself rather than a BT page
/// (`check_whether_last_step`): step 0 of hop 0xff, 1 of hop 1, 2 of hop 2.
pub fn is_last_step(hop: u32, step: u32) -> bool {
    matches!((step, hop), (0, HOP_NUM_0) | (1, 1) | (2, 2))
}

/// The step that programs the chunk of a table with hop number `hop`
/// (`set_mhop_hem`): 0 for hop 0xff, else the hop number.
pub fn last_step(hop: u32) -> u32 {
    if hop == HOP_NUM_0 {
        0
    } else {
        hop
    }
}

/// `1 << shift` as the C driver's `1 << (pg_sz + PAGE_SHIFT)`, refusing
/// shifts that do not fit in 32 bits.
fn pow2(shift: u32) -> Option<u32> {
    1u32.checked_shl(shift)
}

/// The inputs of one table: what `hns_roce_init_hem_table` gets as
/// arguments plus the caps `get_hem_table_config` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableCfg {
    /// Table type.
    pub ty: HemType,
    /// Bytes per object (`obj_size`).
    pub obj_size: u32,
    /// Number of objects (`nobj`).
    pub num_obj: u32,
    /// `caps.X_hop_num` (1, 2, 0xff; 0 selects the flat path).
    pub hop_num: u32,
    /// `caps.X_buf_pg_sz` / `caps.X_ba_pg_sz`, over `PAGE_SIZE`.
    pub pg: PgSz,
    /// `caps.X_bt_num`: number of L0 BTs (`ba_l0_num`).
    pub ba_l0_num: u32,
    /// `caps.chunk_sz`: bytes per chunk of a flat (non-multi-hop) table.
    pub chunk_sz: u32,
    /// The kernel's `PAGE_SHIFT`.
    pub page_shift: u32,
}

impl TableCfg {
    /// The configuration `hns_roce_init_hem` gives table `ty`, or `None`
    /// if it does not create that table (SRQC without the SRQ cap, SCCC
    /// without QP flow control, timers/GMV/TRRL with entry size 0, and the
    /// buffer types MTT/CQE/SRQWQE/IDX, which use per-object BT trees).
    /// Also `None` if the IRRL/TRRL object size overflows 32 bits.
    pub fn from_caps(caps: &Caps, ty: HemType, page_shift: u32) -> Option<TableCfg> {
        let cfg = |obj_size: u32, num_obj: u32, hop_num: u32, pg: PgSz, ba_l0_num: u32| {
            Some(TableCfg {
                ty,
                obj_size,
                num_obj,
                hop_num,
                pg,
                ba_l0_num,
                chunk_sz: caps.chunk_sz,
                page_shift,
            })
        };
        // Timers and GMV keep the page sizes `set_hem_page_size` zeroes.
        let zero = PgSz::default();
        match ty {
            HemType::Qpc => cfg(
                caps.qpc_sz,
                caps.num_qps,
                caps.qpc_hop_num,
                caps.qpc_pg,
                caps.qpc_bt_num,
            ),
            HemType::Mtpt => cfg(
                caps.mtpt_entry_sz,
                caps.num_mtpts,
                caps.mpt_hop_num,
                caps.mpt_pg,
                caps.mpt_bt_num,
            ),
            HemType::Cqc => cfg(
                caps.cqc_entry_sz,
                caps.num_cqs,
                caps.cqc_hop_num,
                caps.cqc_pg,
                caps.cqc_bt_num,
            ),
            HemType::Srqc if caps.flags & cap_flag::SRQ != 0 => cfg(
                caps.srqc_entry_sz,
                caps.num_srqs,
                caps.srqc_hop_num,
                caps.srqc_pg,
                caps.srqc_bt_num,
            ),
            HemType::Sccc if caps.flags & cap_flag::QP_FLOW_CTRL != 0 => cfg(
                caps.sccc_sz,
                caps.num_qps,
                caps.sccc_hop_num,
                caps.sccc_pg,
                caps.sccc_bt_num,
            ),
            HemType::QpcTimer if caps.qpc_timer_entry_sz != 0 => cfg(
                caps.qpc_timer_entry_sz,
                caps.qpc_timer_bt_num,
                caps.qpc_timer_hop_num,
                zero,
                caps.qpc_timer_bt_num,
            ),
            HemType::CqcTimer if caps.cqc_timer_entry_sz != 0 => cfg(
                caps.cqc_timer_entry_sz,
                caps.cqc_timer_bt_num,
                caps.cqc_timer_hop_num,
                zero,
                caps.cqc_timer_bt_num,
            ),
            HemType::Gmv if caps.gmv_entry_sz != 0 => cfg(
                caps.gmv_entry_sz,
                caps.gmv_entry_num,
                caps.gmv_hop_num,
                zero,
                caps.gmv_bt_num,
            ),
            // IRRL and TRRL are never multi-hop: hop, page sizes and BT
            // count are unused.
            HemType::Irrl => cfg(
                caps.irrl_entry_sz.checked_mul(caps.max_qp_init_rdma)?,
                caps.num_qps,
                0,
                zero,
                0,
            ),
            HemType::Trrl if caps.trrl_entry_sz != 0 => cfg(
                caps.trrl_entry_sz.checked_mul(caps.max_qp_dest_rdma)?,
                caps.num_qps,
                0,
                zero,
                0,
            ),
            _ => None,
        }
    }
}

/// The geometry `hns_roce_init_hem_table` computes for a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableGeom {
    /// Table type.
    pub ty: HemType,
    /// Bytes per object.
    pub obj_size: u32,
    /// Hop number as configured.
    pub hop_num: u32,
    /// Multi-hop table (`hns_roce_check_whether_mhop`); `false` is the
    /// flat path with `caps.chunk_sz` chunks and no hardware writes.
    pub mhop: bool,
    /// Address levels (`hns_roce_get_bt_num`): 3, 2 or 1; 0 if flat.
    pub bt_num: u32,
    /// Bytes per chunk: `buf_chunk_size` (multi-hop) or
    /// `table_chunk_size = caps.chunk_sz` (flat).
    pub chunk_size: u32,
    /// Objects per chunk.
    pub obj_per_chunk: u32,
    /// Number of chunks (`num_hem`, length of `hem[]`).
    pub num_hem: u32,
    /// Bytes per BT page (`bt_chunk_size`); 0 if flat.
    pub bt_chunk_size: u32,
    /// Base addresses per BT page (`bt_chunk_size / 8`); 0 if flat.
    pub bt_chunk_num: u32,
    /// L0 BTs of the hardware (`ba_l0_num`); L0 indexes wrap at it.
    pub ba_l0_num: u32,
    /// Length of `bt_l0[]`: `ba_l0_num` if `bt_num >= 2`, else 0.
    pub num_bt_l0: u32,
    /// Length of `bt_l1[]`: `DIV_ROUND_UP(num_hem, bt_chunk_num)` if
    /// `bt_num == 3`, else 0.
    pub num_bt_l1: u32,
}

/// An object's position in a multi-hop table (`hns_roce_calc_hem_mhop`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mhop {
    /// Chunk number before any wrap: `obj / obj_per_chunk`.
    pub table_idx: u32,
    /// L0 index, wrapped at `ba_l0_num`.
    pub l0: u32,
    /// Slot in the L0 BT page (hop 1: the chunk; hop 2: the L1 page).
    pub l1: u32,
    /// Slot in the L1 BT page (hop 2).
    pub l2: u32,
}

/// Where object `obj` lives in the table's arrays (`calc_hem_config`'s
/// `struct hns_roce_hem_index`, or the flat chunk index).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HemIndex {
    /// The object.
    pub obj: u32,
    /// Chunk index into `hem[]`.
    pub buf: u32,
    /// Index into `bt_l0[]` (`bt_num >= 2`).
    pub l0: Option<u32>,
    /// Index into `bt_l1[]` (`bt_num == 3`): `l0 * bt_chunk_num + l1`.
    pub l1: Option<u32>,
    /// The multi-hop position; `None` for flat tables.
    pub mhop: Option<Mhop>,
}

/// A piece of DMA memory of a table, named by its array and index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HemAddr {
    /// BT page `bt_l0[i]` (`bt_chunk_size` bytes).
    L0(u32),
    /// BT page `bt_l1[i]` (`bt_chunk_size` bytes).
    L1(u32),
    /// Chunk `hem[i]` (`chunk_size` bytes).
    Chunk(u32),
}

/// "Store the DMA address of `target` in entry `slot` of BT page `page`."
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The BT page written (`L0` or `L1`).
    pub page: HemAddr,
    /// The 8-byte entry in that page.
    pub slot: u32,
    /// The page or chunk whose DMA address is stored.
    pub target: HemAddr,
}

/// One hardware write of the table manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HwWrite {
    /// A mailbox: `cmd` (`*_BT0 + step`), `in_param` = DMA address of
    /// `base` (`None`: 0), `out_param` a scratch mailbox, `tag`.
    Mailbox {
        /// Mailbox command.
        cmd: u8,
        /// Mailbox tag: the object, or its L0 index for SCCC.
        tag: u32,
        /// The step (0 = BT L0, 1 = BT L1 / hop-1 chunk, 2 = hop-2 chunk).
        step: u32,
        /// What `in_param` points at.
        base: Option<HemAddr>,
    },
    /// CMQ `CFG_GMV_BT` (0x8510): `BA = dma(base) >> 12`, `IDX = idx`.
    GmvBt {
        /// GMV BT index: `obj / (4096 / gmv_entry_sz)`.
        idx: u32,
        /// The step.
        step: u32,
        /// What the BA points at (`None`: 0).
        base: Option<HemAddr>,
    },
}

/// A list of at most `N` items that needs no allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortList<T: Copy, const N: usize> {
    items: [Option<T>; N],
}

impl<T: Copy, const N: usize> Default for ShortList<T, N> {
    fn default() -> Self {
        ShortList { items: [None; N] }
    }
}

impl<T: Copy, const N: usize> ShortList<T, N> {
    /// Appends `v`; `None` if the list is full.
    fn push(&mut self, v: T) -> Option<()> {
        let slot = self.items.iter_mut().find(|s| s.is_none())?;
        *slot = Some(v);
        Some(())
    }

    /// The items in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.items.iter().flatten()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.iter().nth(i)
    }

    /// Whether the list holds exactly `other`, in order.
    pub fn eq_slice(&self, other: &[T]) -> bool
    where
        T: PartialEq,
    {
        self.iter().eq(other.iter())
    }
}

/// What `hns_roce_table_get` does for an object. If the chunk already
/// exists every `alloc_*` is `None` and the lists are empty: take a
/// reference. Otherwise allocate in order L0, L1, chunk (all absent ones
/// zeroed), store `links` in order, issue `writes` in order and set the
/// chunk's refcount to 1; if a write fails, free what was allocated here
/// (chunk, L1, L0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetPlan {
    /// Where the object lives.
    pub index: HemIndex,
    /// Allocate BT page `bt_l0[i]`.
    pub alloc_l0: Option<u32>,
    /// Allocate BT page `bt_l1[i]`.
    pub alloc_l1: Option<u32>,
    /// Allocate chunk `hem[i]`.
    pub alloc_chunk: Option<u32>,
    /// BT entries to fill after the allocations.
    pub links: ShortList<Link, 2>,
    /// Hardware writes (`set_mhop_hem`: step 0 if L0 new, 1 if L1 new,
    /// then the last step), SCCC's skipped steps left out.
    pub writes: ShortList<HwWrite, 3>,
}

impl GetPlan {
    /// Whether the chunk existed and only its refcount grows.
    pub fn ref_only(&self) -> bool {
        self.alloc_chunk.is_none()
    }
}

/// What `hns_roce_table_put` does when the chunk's last reference goes
/// (`clear_mhop_hem` + `free_mhop_hem`): issue `writes` in order, then free
/// the chunk, the L1 page and the L0 page named here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PutPlan {
    /// Where the object lives.
    pub index: HemIndex,
    /// Free chunk `hem[i]`.
    pub free_chunk: Option<u32>,
    /// Free BT page `bt_l1[i]` (no other chunk under it).
    pub free_l1: Option<u32>,
    /// Free BT page `bt_l0[i]` (nothing else under it).
    pub free_l0: Option<u32>,
    /// Hardware writes: the last step, then step 1 if L1 goes, then step
    /// 0 if L0 goes (QPC/MTPT/CQC/SRQC only).
    pub writes: ShortList<HwWrite, 3>,
}

impl TableGeom {
    /// The geometry of `cfg` (`hns_roce_init_hem_table`), or `None` for a
    /// configuration the C driver cannot use: object size 0 or larger than
    /// a chunk, shifts past 31 bits, a flat chunk that is not a power of two
    /// of at least a page (every get would fail in `hns_roce_alloc_hem`),
    /// a multi-hop table with an unsupported hop number (C initialises it
    /// and then fails every get with -EINVAL), no L0 BT (C divides by 0),
    /// or GMV entries larger than 4 KiB (C divides by 0 in
    /// `config_gmv_ba_to_hw`).
    pub fn new(cfg: &TableCfg) -> Option<TableGeom> {
        if cfg.obj_size == 0 {
            return None;
        }
        let page = pow2(cfg.page_shift)?;
        if !is_mhop(cfg.ty, cfg.hop_num) {
            let chunk = cfg.chunk_sz;
            if !chunk.is_power_of_two() || chunk < page {
                return None;
            }
            let obj_per_chunk = chunk / cfg.obj_size;
            if obj_per_chunk == 0 {
                return None;
            }
            return Some(TableGeom {
                ty: cfg.ty,
                obj_size: cfg.obj_size,
                hop_num: cfg.hop_num,
                mhop: false,
                bt_num: 0,
                chunk_size: chunk,
                obj_per_chunk,
                num_hem: cfg.num_obj.div_ceil(obj_per_chunk),
                bt_chunk_size: 0,
                bt_chunk_num: 0,
                ba_l0_num: 0,
                num_bt_l0: 0,
                num_bt_l1: 0,
            });
        }
        let levels = bt_num(cfg.ty, cfg.hop_num);
        if levels == 0 || cfg.ba_l0_num == 0 {
            return None;
        }
        if cfg.ty == HemType::Gmv && cfg.obj_size > HW_PAGE_SIZE {
            return None;
        }
        let chunk = pow2(cfg.pg.buf.checked_add(cfg.page_shift)?)?;
        let bt_chunk = pow2(cfg.pg.ba.checked_add(cfg.page_shift)?)?;
        let n = bt_chunk / 8;
        let obj_per_chunk = chunk / cfg.obj_size;
        if n == 0 || obj_per_chunk == 0 {
            return None;
        }
        let num_hem = cfg.num_obj.div_ceil(obj_per_chunk);
        Some(TableGeom {
            ty: cfg.ty,
            obj_size: cfg.obj_size,
            hop_num: cfg.hop_num,
            mhop: true,
            bt_num: levels,
            chunk_size: chunk,
            obj_per_chunk,
            num_hem,
            bt_chunk_size: bt_chunk,
            bt_chunk_num: n,
            ba_l0_num: cfg.ba_l0_num,
            num_bt_l0: if levels >= 2 { cfg.ba_l0_num } else { 0 },
            num_bt_l1: if levels == 3 { num_hem.div_ceil(n) } else { 0 },
        })
    }

    /// The multi-hop position of `obj` (`hns_roce_calc_hem_mhop`), with the
    /// C driver's wrap `l0 %= ba_l0_num`; `None` for flat tables.
    pub fn mhop(&self, obj: u32) -> Option<Mhop> {
        if !self.mhop {
            return None;
        }
        let n = self.bt_chunk_num;
        let mask = n.checked_sub(1)?;
        let t = obj.checked_div(self.obj_per_chunk)?;
        let (l0, l1, l2) = match self.bt_num {
            3 => {
                let q = t.checked_div(n)?;
                (q.checked_div(n)?, q & mask, t & mask)
            }
            2 => (t.checked_div(n)?, t & mask, 0),
            1 => (t, 0, 0),
            _ => return None,
        };
        let l0 = if l0 >= self.ba_l0_num {
            l0.checked_rem(self.ba_l0_num)?
        } else {
            l0
        };
        Some(Mhop {
            table_idx: t,
            l0,
            l1,
            l2,
        })
    }

    /// Where `obj` lives (`calc_hem_config`, or `obj / obj_per_chunk` for
    /// flat tables); `None` if the chunk index is not below `num_hem`.
    ///
    /// As in C, an object past the end of a multi-hop table whose L0 index
    /// wraps may land on a valid chunk (aliasing an earlier object).
    pub fn index(&self, obj: u32) -> Option<HemIndex> {
        let Some(m) = self.mhop(obj) else {
            // Flat: C indexes `hem[]` without a range check.
            if self.mhop {
                return None;
            }
            let buf = obj.checked_div(self.obj_per_chunk)?;
            return (buf < self.num_hem).then_some(HemIndex {
                obj,
                buf,
                l0: None,
                l1: None,
                mhop: None,
            });
        };
        let n = u64::from(self.bt_chunk_num);
        let (l0, l1, l2) = (u64::from(m.l0), u64::from(m.l1), u64::from(m.l2));
        let (buf, bt_l0, bt_l1) = match self.bt_num {
            3 => {
                let l1_index = l0.checked_mul(n)?.checked_add(l1)?;
                let buf = l1_index.checked_mul(n)?.checked_add(l2)?;
                (buf, Some(m.l0), Some(l1_index))
            }
            2 => (l0.checked_mul(n)?.checked_add(l1)?, Some(m.l0), None),
            1 => (l0, None, None),
            _ => return None,
        };
        if buf >= u64::from(self.num_hem) {
            return None;
        }
        Some(HemIndex {
            obj,
            buf: u32::try_from(buf).ok()?,
            l0: bt_l0,
            l1: match bt_l1 {
                Some(v) => Some(u32::try_from(v).ok()?),
                None => None,
            },
            mhop: Some(m),
        })
    }

    /// The write `hns_roce_v2_set_hem` issues for step `step` of `idx`
    /// (`None` if it issues none: flat tables, SCCC steps other than 0).
    pub fn set_hem(&self, idx: &HemIndex, step: u32) -> Option<HwWrite> {
        let m = idx.mhop?;
        let base = if is_last_step(self.hop_num, step) {
            Some(HemAddr::Chunk(idx.buf))
        } else if step == 0 {
            Some(HemAddr::L0(m.l0))
        } else if step == 1 && self.hop_num == 2 {
            Some(HemAddr::L1(idx.l1?))
        } else {
            None
        };
        match self.ty {
            HemType::Gmv => Some(HwWrite::GmvBt {
                idx: idx
                    .obj
                    .checked_div(HW_PAGE_SIZE.checked_div(self.obj_size)?)?,
                step,
                base,
            }),
            HemType::Sccc if step != 0 => None,
            ty => Some(HwWrite::Mailbox {
                cmd: ty.write_bt0()?.checked_add(u8::try_from(step).ok()?)?,
                tag: if ty == HemType::Sccc { m.l0 } else { idx.obj },
                step,
                base,
            }),
        }
    }

    /// The write `hns_roce_v2_clear_hem` issues for step `step` of `idx`
    /// (`None` if it issues none: flat tables, SCCC, timers, GMV).
    pub fn clear_hem(&self, idx: &HemIndex, step: u32) -> Option<HwWrite> {
        if !self.mhop {
            return None;
        }
        Some(HwWrite::Mailbox {
            cmd: self
                .ty
                .destroy_bt0()?
                .checked_add(u8::try_from(step).ok()?)?,
            tag: idx.obj,
            step,
            base: None,
        })
    }

    /// What a `hns_roce_table_get` of `obj` does (`hns_roce_table_mhop_get`
    /// / the flat path), given `exists`, which answers whether a BT page or
    /// chunk is allocated now. `None` if `obj` has no valid index.
    pub fn get_plan(&self, obj: u32, mut exists: impl FnMut(HemAddr) -> bool) -> Option<GetPlan> {
        let index = self.index(obj)?;
        let mut plan = GetPlan {
            index,
            ..GetPlan::default()
        };
        if exists(HemAddr::Chunk(index.buf)) {
            return Some(plan);
        }
        plan.alloc_chunk = Some(index.buf);
        // Flat: `set_hem(HEM_HOP_STEP_DIRECT)` is a no-op in v2.
        let Some(m) = index.mhop else {
            return Some(plan);
        };
        if let Some(l0) = index.l0 {
            if !exists(HemAddr::L0(l0)) {
                plan.alloc_l0 = Some(l0);
            }
        }
        if let (Some(l0), Some(l1)) = (index.l0, index.l1) {
            if !exists(HemAddr::L1(l1)) {
                plan.alloc_l1 = Some(l1);
                plan.links.push(Link {
                    page: HemAddr::L0(l0),
                    slot: m.l1,
                    target: HemAddr::L1(l1),
                })?;
            }
        }
        let chunk = HemAddr::Chunk(index.buf);
        match (self.hop_num, index.l0, index.l1) {
            (2, _, Some(l1)) => plan.links.push(Link {
                page: HemAddr::L1(l1),
                slot: m.l2,
                target: chunk,
            })?,
            (1, Some(l0), _) => plan.links.push(Link {
                page: HemAddr::L0(l0),
                slot: m.l1,
                target: chunk,
            })?,
            _ => {}
        }
        if plan.alloc_l0.is_some() {
            if let Some(w) = self.set_hem(&index, 0) {
                plan.writes.push(w)?;
            }
        }
        if plan.alloc_l1.is_some() {
            if let Some(w) = self.set_hem(&index, 1) {
                plan.writes.push(w)?;
            }
        }
        if let Some(w) = self.set_hem(&index, last_step(self.hop_num)) {
            plan.writes.push(w)?;
        }
        Some(plan)
    }

    /// What a `hns_roce_table_put` of `obj` does once the chunk's last
    /// reference is gone (or a forced put at cleanup), given `exists` as
    /// for [`TableGeom::get_plan`], asked before anything is freed.
    ///
    /// The L0 page goes when no other chunk of the same BT page exists
    /// (`hns_roce_check_hem_null`, within `num_hem`) and, for hop 2, when no
    /// other L1 page under the same L0 exists (`hns_roce_check_bt_null`).
    /// The latter reproduces a C quirk: it skips entry `i == l1_index`
    /// counting `i` from the L0's first L1, so for `l1_index >=
    /// bt_chunk_num` the object's own L1 is not skipped and the L0 page is
    /// never freed (nor its DESTROY step issued). C also reads past
    /// `bt_l1[]`; here entries at or past `num_bt_l1` count as absent.
    pub fn put_plan(&self, obj: u32, mut exists: impl FnMut(HemAddr) -> bool) -> Option<PutPlan> {
        let index = self.index(obj)?;
        let mut plan = PutPlan {
            index,
            free_chunk: Some(index.buf),
            ..PutPlan::default()
        };
        if !self.mhop {
            return Some(plan);
        }
        let n = self.bt_chunk_num;
        let start = index.buf.checked_sub(index.buf.checked_rem(n)?)?;
        let end = start.saturating_add(n).min(self.num_hem);
        let alone = (start..end).all(|i| i == index.buf || !exists(HemAddr::Chunk(i)));
        match self.bt_num {
            2 if alone => plan.free_l0 = index.l0,
            3 if alone => {
                plan.free_l1 = index.l1;
                let l1 = index.l1?;
                let start = l1.checked_sub(l1.checked_rem(n)?)?;
                let l1_alone = (0..n).all(|i| {
                    let at = start.saturating_add(i);
                    i == l1 || at >= self.num_bt_l1 || !exists(HemAddr::L1(at))
                });
                if l1_alone {
                    plan.free_l0 = index.l0;
                }
            }
            _ => {}
        }
        if let Some(w) = self.clear_hem(&index, last_step(self.hop_num)) {
            plan.writes.push(w)?;
        }
        if plan.free_l1.is_some() {
            if let Some(w) = self.clear_hem(&index, 1) {
                plan.writes.push(w)?;
            }
        }
        if plan.free_l0.is_some() {
            if let Some(w) = self.clear_hem(&index, 0) {
                plan.writes.push(w)?;
            }
        }
        Some(plan)
    }

    /// The object a cleanup put uses for chunk `buf`
    /// (`hns_roce_cleanup_*hem_table`: `buf * chunk_size / obj_size`).
    pub fn chunk_first_obj(&self, buf: u32) -> Option<u32> {
        let obj = u64::from(buf).checked_mul(u64::from(self.chunk_size))?
            / u64::from(self.obj_size.max(1));
        u32::try_from(obj).ok()
    }

    /// Chunk and byte offset of `obj` in a flat table (the non-multi-hop
    /// branch of `hns_roce_table_find`); `None` for multi-hop tables or an
    /// object past the table.
    pub fn find(&self, obj: u32) -> Option<(u32, u32)> {
        if self.mhop {
            return None;
        }
        let idx = self.index(obj)?;
        let offset = obj
            .checked_rem(self.obj_per_chunk)?
            .checked_mul(self.obj_size)?;
        Some((idx.buf, offset))
    }
}
