// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

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
//! The last section is the BT layout of a kernel buffer of up to three
//! regions (`hns_roce_mtr_create` → `mtr_init_buf_cfg`, `cal_best_bt_pg_sz`,
//! `hns_roce_hem_list_request`): [`MtrLayout::new`] says how many root
//! entries and L1 BT pages there are and, through [`HemList::locate`] and
//! [`HemList::l1_root`], which entry holds which page (`hem/mtr.rs` allocates
//! and fills them).

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

use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::{cap_flag, mbox};

/// The hop number meaning "chunks addressed directly, no BT level"
/// (`HNS_ROCE_HOP_NUM_0`).
pub const HOP_NUM_0: u32 = 0xff;
/// Bytes per base address in a BT page.
pub const BA_BYTE_LEN: u64 = 8;
/// The hardware page size (`HNS_HW_PAGE_SIZE`) GMV BT indexes count in.
pub const HW_PAGE_SIZE: u32 = 4096;

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

// ---------------------------------------------------------------------------
// Multi-region MTRs: the BT layout of a kernel buffer made of up to three
// regions (a QP's SQ, extended SGE and RQ), as `hns_roce_mtr_create` builds
// it through `mtr_init_buf_cfg`, `cal_best_bt_pg_sz` (hns_roce_mr.c) and
// `hns_roce_hem_list_request` (hns_roce_hem.c), and where
// `hns_roce_hem_list_find_mtt` finds a page's entry.
//
// A region of hop 1 keeps its page addresses in the root BT itself (C's
// "fake root bt" shares the root page); a region of hop 2 has one root entry
// per L1 BT page, each L1 page listing `unit` buffer pages. The root entries
// go region after region. L1 pages are numbered here across the whole MTR,
// region after region, in the order of their root entries.

/// Most regions of one MTR (`HNS_ROCE_MAX_BT_REGION`).
pub const MAX_BT_REGION: usize = 3;

/// The smallest buffer page the hardware addresses (`HNS_HW_PAGE_SHIFT`).
const HW_PAGE_SHIFT: u32 = HW_PAGE_SIZE.trailing_zeros();

/// Why an MTR layout cannot be built, named by the C driver's errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtrError {
    /// `-EINVAL`: bad attributes (region count, page shift, a hop number
    /// the C driver rejects or this port does not support yet).
    Inval,
    /// `-ENOBUFS`: the root BT needs more than one BT page of entries
    /// (`alloc_root_hem`), or the kernel buffer has fewer pages than the
    /// regions (`mtr_map_bufs`).
    NoBufs,
    /// `-ERANGE`: no BT page size of `page_size_cap` fits the root
    /// (`mtr_alloc_mtt` after `cal_best_bt_pg_sz` returned 0).
    Range,
    /// `-ENOMEM`: the root BT would have no entry (`alloc_root_hem`).
    NoMem,
}

/// One region as the caller asks for it (`hns_roce_buf_attr.region[]`):
/// bytes and the hop number from the caps (1, 2, 3, 0 or 0xff).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionAttr {
    /// Size in bytes.
    pub size: u64,
    /// Hop number as in the caps.
    pub hop: u32,
}

/// One region in buffer pages (`struct hns_roce_buf_region`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufRegion {
    /// First buffer page of the region.
    pub offset: u32,
    /// Buffer pages of the region.
    pub count: u32,
    /// Hop number after `to_hr_hem_hopnum` (0 for an empty region or hop
    /// 0xff).
    pub hopnum: u32,
}

/// The regions of one MTR, at most [`MAX_BT_REGION`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufRegions {
    items: [BufRegion; MAX_BT_REGION],
    len: usize,
}

impl BufRegions {
    /// The regions in order.
    pub fn as_slice(&self) -> &[BufRegion] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    /// Buffer pages of all regions (`cal_mtr_pg_cnt`).
    pub fn page_count(&self) -> u64 {
        self.as_slice().iter().map(|r| u64::from(r.count)).sum()
    }
}

/// The regions of a kernel buffer in pages of `1 << page_shift` bytes
/// (`mtr_init_buf_cfg` without umem): region `i` starts at the page after
/// region `i - 1`, has `DIV_ROUND_UP(hr_hw_page_align(size), page)` pages
/// and hop number `to_hr_hem_hopnum(hop, count)` ([`hw_hopnum`]).
///
/// # Errors
///
/// [`MtrError::Inval`] for no region or more than [`MAX_BT_REGION`], a page
/// shift below 12 (`is_buf_attr_valid`) or above 31, or a page count that
/// does not fit in 32 bits.
pub fn init_buf_cfg(attrs: &[RegionAttr], page_shift: u32) -> Result<BufRegions, MtrError> {
    if attrs.is_empty()
        || attrs.len() > MAX_BT_REGION
        || !(HW_PAGE_SHIFT..=31).contains(&page_shift)
    {
        return Err(MtrError::Inval);
    }
    let page = 1u64 << page_shift;
    let hw_page = u64::from(HW_PAGE_SIZE);
    let mut out = BufRegions {
        len: attrs.len(),
        ..BufRegions::default()
    };
    let mut page_cnt = 0u32;
    for (r, a) in out.items.iter_mut().zip(attrs) {
        let aligned = a
            .size
            .checked_next_multiple_of(hw_page)
            .ok_or(MtrError::Inval)?;
        // DIV_ROUND_UP(aligned, page); `page` is a power of two.
        let up = (aligned >> page_shift) + u64::from(aligned & (page - 1) != 0);
        let count = u32::try_from(up).map_err(|_| MtrError::Inval)?;
        *r = BufRegion {
            offset: page_cnt,
            count,
            hopnum: hw_hopnum(a.hop, count),
        };
        page_cnt = page_cnt.checked_add(count).ok_or(MtrError::Inval)?;
    }
    Ok(out)
}

/// Base addresses a BT of level `bt_level` covers for a region of hop
/// `hopnum` (`hem_list_calc_ba_range`): `unit ^ (hopnum - bt_level)`, 0 if
/// `hopnum <= bt_level`. Saturates where C's `u64` would wrap.
pub fn calc_ba_range(hopnum: u32, bt_level: u32, unit: u64) -> u64 {
    if hopnum <= bt_level {
        return 0;
    }
    (bt_level..hopnum).fold(1u64, |step, _| step.saturating_mul(unit))
}

/// Root BT entries that cover `regions` with `unit` base addresses per BT
/// page (`hns_roce_hem_list_calc_root_ba`): nothing for hop 0, `count` for
/// hop 1 (the pages themselves), `DIV_ROUND_UP(count, unit ^ (hop - 1))`
/// otherwise.
pub fn calc_root_ba(regions: &[BufRegion], unit: u64) -> u64 {
    regions
        .iter()
        .map(|r| match r.hopnum {
            0 => 0,
            1 => u64::from(r.count),
            hop => {
                let step = calc_ba_range(hop, 1, unit);
                if step > 0 {
                    u64::from(r.count).div_ceil(step)
                } else {
                    0
                }
            }
        })
        .sum()
}

/// The BT page shift `mtr_alloc_mtt` uses (`cal_best_bt_pg_sz`): the first
/// set bit of `page_size_cap` from `pg_shift` on whose BT page
/// (`(1 << bit) / 8` entries) holds the root of `regions`, where a region
/// of hop `h` needs `DIV_ROUND_UP(count, entries ^ (h - 1))` root entries.
/// `None` (C: 0, then `-ERANGE`) if no bit fits.
///
/// Bits 32 and up are never tried: C computes the entries per BT page in an
/// `unsigned int`, which is 0 from bit 35 on (a division by zero for hop 2),
/// and the HIP08/HIP09 caps set bits 12..=27 only.
pub fn best_bt_pg_sz(regions: &[BufRegion], pg_shift: u32, page_size_cap: u64) -> Option<u32> {
    (pg_shift..32)
        .filter(|&bit| page_size_cap & (1u64 << bit) != 0)
        .find(|&bit| {
            let ba_per_bt = (1u64 << bit) / BA_BYTE_LEN;
            let ba_num: u64 = regions
                .iter()
                .filter(|r| r.hopnum != 0)
                .map(|r| {
                    // cal_pages_per_l1ba: ba_per_bt ^ (hopnum - 1).
                    let per_l1 = (1..r.hopnum).fold(1u64, |p, _| p.saturating_mul(ba_per_bt));
                    u64::from(r.count).div_ceil(per_l1.max(1))
                })
                .sum();
            ba_num <= ba_per_bt
        })
}

/// Where one region's addresses sit in the BTs of a [`HemList`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionBt {
    /// The region.
    pub region: BufRegion,
    /// Its first root entry (`setup_root_hem`'s `total` when it gets
    /// there).
    pub root: u32,
    /// Its root entries: `count` for hop 1, the L1 pages for hop 2, none for
    /// an empty region.
    pub root_len: u32,
    /// Its first L1 page in the MTR's numbering.
    pub l1: u32,
    /// Its L1 pages (`DIV_ROUND_UP(count, unit)` for hop 2, else 0).
    pub l1_len: u32,
}

/// The BT entry that holds a buffer page's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtSlot {
    /// Entry `i` of the root BT (a hop-1 region).
    Root(u32),
    /// Entry `slot` of L1 page `page` (a hop-2 region).
    L1 {
        /// The L1 page in the MTR's numbering.
        page: u32,
        /// The entry in it.
        slot: u32,
    },
}

/// The BT pages of an MTR (`struct hns_roce_hem_list` as
/// `hns_roce_hem_list_request` builds it): one root BT of `root_len`
/// entries (C allocates exactly that many) and `l1_len` L1 BT pages of
/// `unit` entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HemList {
    /// BT page shift.
    pub ba_pg_shift: u32,
    /// Base addresses per BT page: `(1 << ba_pg_shift) / 8`.
    pub unit: u32,
    /// Entries of the root BT (`hns_roce_hem_list_calc_root_ba`).
    pub root_len: u32,
    /// L1 BT pages of all regions.
    pub l1_len: u32,
    /// Buffer pages of all regions.
    pub page_count: u32,
    items: [RegionBt; MAX_BT_REGION],
    len: usize,
}

impl HemList {
    /// The BT layout of `regions` with BT pages of `1 << ba_pg_shift`
    /// bytes (`hns_roce_hem_list_request`: `hem_list_alloc_mid_bt` per
    /// `unit` pages of each hop-2 region, then `alloc_root_hem` and
    /// `setup_root_hem` with `alloc_fake_root_bt` / `setup_middle_bt`).
    ///
    /// # Errors
    ///
    /// [`MtrError::Inval`] for more than [`MAX_BT_REGION`] regions, a BT
    /// page shift outside 3..=31, or a region with pages and hop 0 or 3 and
    /// up (C gives a hop-0 region a BT of its own outside the root and
    /// supports hop 3; no caller needs either yet); [`MtrError::NoMem`] if
    /// the root has no entry and [`MtrError::NoBufs`] if it needs more than
    /// `unit` (`alloc_root_hem`).
    pub fn request(regions: &[BufRegion], ba_pg_shift: u32) -> Result<HemList, MtrError> {
        if regions.len() > MAX_BT_REGION || !(3..=31).contains(&ba_pg_shift) {
            return Err(MtrError::Inval);
        }
        let unit = (1u32 << ba_pg_shift) / 8;
        if regions
            .iter()
            .any(|r| r.count > 0 && !(1..=2).contains(&r.hopnum))
        {
            return Err(MtrError::Inval);
        }
        let root_len = calc_root_ba(regions, u64::from(unit));
        if root_len < 1 {
            return Err(MtrError::NoMem);
        }
        if root_len > u64::from(unit) {
            return Err(MtrError::NoBufs);
        }
        let mut out = HemList {
            ba_pg_shift,
            unit,
            len: regions.len(),
            ..HemList::default()
        };
        let (mut root, mut l1) = (0u32, 0u32);
        for (bt, r) in out.items.iter_mut().zip(regions) {
            let (root_n, l1_n) = match (r.count, r.hopnum) {
                (0, _) => (0, 0),
                (n, 1) => (n, 0),
                (n, _) => {
                    let l1_n = n.checked_div(unit).ok_or(MtrError::Inval)?
                        + u32::from(n.checked_rem(unit).ok_or(MtrError::Inval)? != 0);
                    (l1_n, l1_n)
                }
            };
            *bt = RegionBt {
                region: *r,
                root,
                root_len: root_n,
                l1,
                l1_len: l1_n,
            };
            root = root.checked_add(root_n).ok_or(MtrError::Inval)?;
            l1 = l1.checked_add(l1_n).ok_or(MtrError::Inval)?;
            let end = r.offset.checked_add(r.count).ok_or(MtrError::Inval)?;
            out.page_count = out.page_count.max(end);
        }
        out.root_len = root;
        out.l1_len = l1;
        Ok(out)
    }

    /// The regions with their BT positions, in order.
    pub fn regions(&self) -> &[RegionBt] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    /// The entry that holds buffer page `page` (`hns_roce_hem_list_find_mtt`:
    /// the bottom BT covering it, at `page - start`); `None` if no region
    /// has the page.
    pub fn locate(&self, page: u32) -> Option<BtSlot> {
        let bt = self
            .regions()
            .iter()
            .find(|b| page >= b.region.offset && page - b.region.offset < b.region.count)?;
        let d = page - bt.region.offset;
        if bt.region.hopnum == 1 {
            return Some(BtSlot::Root(bt.root.checked_add(d)?));
        }
        Some(BtSlot::L1 {
            page: bt.l1.checked_add(d.checked_div(self.unit)?)?,
            slot: d.checked_rem(self.unit)?,
        })
    }

    /// The root entry that points at L1 page `l1` (`setup_middle_bt`:
    /// `(start - r->offset) / unit` after the region's first entry).
    pub fn l1_root(&self, l1: u32) -> Option<u32> {
        let bt = self
            .regions()
            .iter()
            .find(|b| l1 >= b.l1 && l1 - b.l1 < b.l1_len)?;
        bt.root.checked_add(l1 - bt.l1)
    }
}

/// The layout of a kernel MTR (`hns_roce_mtr_create` without udata).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MtrLayout {
    /// Buffer page shift.
    pub page_shift: u32,
    /// The BT pages.
    pub hem: HemList,
}

impl MtrLayout {
    /// The layout of a kernel buffer of `attrs` in pages of
    /// `1 << page_shift` bytes whose BT pages start at `1 << ba_pg_shift`
    /// bytes and may grow to any size of `page_size_cap`:
    /// [`init_buf_cfg`], [`best_bt_pg_sz`], [`HemList::request`], then
    /// `mtr_map_bufs`'s check that the buffer `hns_roce_buf_alloc` made for
    /// the sum of the region sizes has a page for every region page.
    ///
    /// # Errors
    ///
    /// As [`init_buf_cfg`] and [`HemList::request`]; [`MtrError::Inval`]
    /// also for a buffer without pages or without a region of hop 1 or 2
    /// (C's direct mode, not needed yet); [`MtrError::Range`] if no BT page
    /// size fits; [`MtrError::NoBufs`] if the buffer is short of pages (the
    /// regions are not multiples of the page size).
    pub fn new(
        attrs: &[RegionAttr],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
    ) -> Result<MtrLayout, MtrError> {
        let regions = init_buf_cfg(attrs, page_shift)?;
        let r = regions.as_slice();
        if regions.page_count() == 0 || r.iter().all(|r| r.hopnum == 0) {
            return Err(MtrError::Inval);
        }
        let ba = best_bt_pg_sz(r, ba_pg_shift, page_size_cap).ok_or(MtrError::Range)?;
        let hem = HemList::request(r, ba)?;
        let total = attrs
            .iter()
            .try_fold(0u64, |s, a| s.checked_add(a.size))
            .ok_or(MtrError::Inval)?;
        let page = 1u64.checked_shl(page_shift).ok_or(MtrError::Inval)?;
        if regions.page_count() > total.div_ceil(page) {
            return Err(MtrError::NoBufs);
        }
        Ok(MtrLayout { page_shift, hem })
    }

    /// The buffer page holding byte `offset` (`hns_roce_mtr_find`'s
    /// `offset >> buf_pg_shift`); `None` past the last page.
    pub fn page_of(&self, offset: u64) -> Option<u32> {
        let page = u32::try_from(offset.checked_shr(self.page_shift)?).ok()?;
        (page < self.hem.page_count).then_some(page)
    }
}

// ---------------------------------------------------------------------------
// User-memory MTRs (`hns_roce_mtr_create` with udata): the buffer is a umem
// the process pinned, so the page count comes from the umem's DMA blocks,
// the first region starts at the umem's offset into its first page, and a
// PBL (a user MR) picks its page size and hop number from the umem
// (`get_best_page_shift`, `get_best_hop_num`). What the kernel must answer
// (the umem's addresses, `ib_umem_find_best_pgsz`) comes in as plain
// numbers.

/// Deepest hop number `get_best_hop_num` tries (`HNS_ROCE_MAX_HOP_NUM`).
pub const MAX_HOP_NUM: u32 = 3;

/// Blocks of `pgsz` bytes that `length` bytes from I/O address `iova` span
/// (`ib_umem_num_dma_blocks`): from `iova` aligned down to the end aligned
/// up. 0 if `pgsz` is not a power of two or the end does not fit 64 bits.
pub fn num_dma_blocks(iova: u64, length: u64, pgsz: u64) -> u64 {
    if !pgsz.is_power_of_two() {
        return 0;
    }
    let mask = pgsz - 1;
    let Some(end) = iova
        .checked_add(length)
        .and_then(|e| e.checked_add(mask))
        .map(|e| e & !mask)
    else {
        return 0;
    };
    (end - (iova & !mask)) / pgsz
}

/// The smallest hop number whose BT levels of `1 << ba_pg_shift` bytes
/// (`ba_pg_shift / 8` addresses each) hold `ba_cnt` page addresses
/// (`get_best_hop_num`): 0 for one page, 1 for up to one BT page of them,
/// and so on up to [`MAX_HOP_NUM`]; `None` (C: `-EINVAL`) past that.
pub fn best_hop_num(ba_cnt: u64, ba_pg_shift: u32) -> Option<u32> {
    let per_bt = 1u64.checked_shl(ba_pg_shift)? / BA_BYTE_LEN;
    let mut unit = 1u64;
    for hop in 0..=MAX_HOP_NUM {
        if ba_cnt <= unit {
            return Some(hop);
        }
        unit = unit.saturating_mul(per_bt);
    }
    None
}

/// What the MTR needs to know of a umem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UmemShape {
    /// The user address of the first byte (`umem->address`).
    pub address: u64,
    /// Its I/O virtual address (`umem->iova`: the MR's address for a PBL
    /// after `ib_umem_find_best_pgsz`, else the user address).
    pub iova: u64,
    /// Bytes pinned (`umem->length`).
    pub length: u64,
    /// The kernel's `PAGE_SHIFT` (the first region starts at the umem's
    /// offset into a kernel page).
    pub kernel_page_shift: u32,
}

impl UmemShape {
    /// DMA blocks of `1 << page_shift` bytes (`ib_umem_num_dma_blocks`).
    pub fn blocks(&self, page_shift: u32) -> u64 {
        1u64.checked_shl(page_shift)
            .map_or(0, |p| num_dma_blocks(self.iova, self.length, p))
    }
}

/// The regions of a user buffer (`mtr_init_buf_cfg` with a umem): region
/// `i` starts after region `i - 1`; a PBL's one region has one page per DMA
/// block of the umem, any other region `DIV_ROUND_UP(hr_hw_page_align(size
/// + pgoff), page)` pages, `pgoff` being the umem's offset into its first
/// kernel page for the first region and 0 for the others; hop numbers as
/// [`hw_hopnum`].
///
/// # Errors
///
/// [`MtrError::Inval`] as [`init_buf_cfg`].
pub fn init_user_buf_cfg(
    attrs: &[RegionAttr],
    page_shift: u32,
    pbl: bool,
    umem: &UmemShape,
) -> Result<BufRegions, MtrError> {
    if attrs.is_empty()
        || attrs.len() > MAX_BT_REGION
        || !(HW_PAGE_SHIFT..=31).contains(&page_shift)
    {
        return Err(MtrError::Inval);
    }
    let page = 1u64 << page_shift;
    let hw_page = u64::from(HW_PAGE_SIZE);
    let kpage_mask = 1u64
        .checked_shl(umem.kernel_page_shift)
        .ok_or(MtrError::Inval)?
        - 1;
    let mut pgoff = umem.address & kpage_mask;
    let mut out = BufRegions {
        len: attrs.len(),
        ..BufRegions::default()
    };
    let mut page_cnt = 0u32;
    for (r, a) in out.items.iter_mut().zip(attrs) {
        let n = if pbl {
            umem.blocks(page_shift)
        } else {
            let aligned = a
                .size
                .checked_add(pgoff)
                .and_then(|s| s.checked_next_multiple_of(hw_page))
                .ok_or(MtrError::Inval)?;
            aligned.div_ceil(page)
        };
        pgoff = 0;
        let count = u32::try_from(n).map_err(|_| MtrError::Inval)?;
        *r = BufRegion {
            offset: page_cnt,
            count,
            hopnum: hw_hopnum(a.hop, count),
        };
        page_cnt = page_cnt.checked_add(count).ok_or(MtrError::Inval)?;
    }
    Ok(out)
}

/// The layout of a user MTR: its regions and either direct addressing (the
/// root address is the first page's, C's `is_direct`) or the BT pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserMtrLayout {
    /// Buffer page shift (`hem_cfg.buf_pg_shift`).
    pub page_shift: u32,
    /// BT page shift (`hem_cfg.ba_pg_shift`: the buffer page shift when
    /// direct).
    pub ba_pg_shift: u32,
    /// The regions (`hem_cfg.region`).
    pub regions: BufRegions,
    /// No BT: every region asked for hop 0 (`!mtr_has_mtt`).
    pub direct: bool,
    /// The BT pages (empty when direct).
    pub hem: HemList,
    /// Pages the umem has at `page_shift` (`hem_cfg.buf_pg_count`).
    pub buf_pg_count: u32,
}

impl UserMtrLayout {
    /// The layout of a user buffer of `attrs` in pages of `1 << page_shift`
    /// bytes over `umem`, with BT pages from `1 << ba_pg_shift` bytes
    /// growing within `page_size_cap` (`mtr_init_buf_cfg`, `mtr_alloc_mtt`,
    /// and `mtr_map_bufs`'s check that the umem has a block for every
    /// region page). For a PBL (`pbl`), `page_shift` and the region's hop
    /// should be what [`best_hop_num`] and the umem's best page size chose.
    ///
    /// # Errors
    ///
    /// As [`init_user_buf_cfg`] and [`HemList::request`] (hop 3 is not
    /// supported: `Inval`); [`MtrError::Inval`] for direct addressing of
    /// more than one region (C splits the buffer into 4 KiB pages then, no
    /// caller needs it yet) or of more than one page (C checks the pages
    /// are contiguous); [`MtrError::Range`] if no BT page size fits;
    /// [`MtrError::NoBufs`] if the umem has fewer blocks than the regions
    /// have pages.
    pub fn new(
        attrs: &[RegionAttr],
        page_shift: u32,
        ba_pg_shift: u32,
        page_size_cap: u64,
        pbl: bool,
        umem: &UmemShape,
    ) -> Result<UserMtrLayout, MtrError> {
        let regions = init_user_buf_cfg(attrs, page_shift, pbl, umem)?;
        let buf_pg_count = u32::try_from(umem.blocks(page_shift)).map_err(|_| MtrError::Inval)?;
        let direct = attrs.iter().all(|a| a.hop == 0 || a.hop == HOP_NUM_0);
        let page_count = regions.page_count();
        if page_count > u64::from(buf_pg_count) {
            return Err(MtrError::NoBufs);
        }
        if direct {
            if regions.as_slice().len() > 1 || page_count > 1 {
                return Err(MtrError::Inval);
            }
            return Ok(UserMtrLayout {
                page_shift,
                ba_pg_shift: page_shift,
                regions,
                direct,
                hem: HemList::default(),
                buf_pg_count,
            });
        }
        let r = regions.as_slice();
        let ba = best_bt_pg_sz(r, ba_pg_shift, page_size_cap).ok_or(MtrError::Range)?;
        let hem = HemList::request(r, ba)?;
        Ok(UserMtrLayout {
            page_shift,
            ba_pg_shift: ba,
            regions,
            direct,
            hem,
            buf_pg_count,
        })
    }

    /// Pages of all regions (`cal_mtr_pg_cnt`): how many umem blocks are
    /// mapped.
    pub fn page_count(&self) -> u32 {
        // Each region count fits u32 and their sum was checked against
        // `buf_pg_count`.
        u32::try_from(self.regions.page_count()).unwrap_or(u32::MAX)
    }
}
