// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Send WQE encoding (`core` only): the UD and RC send WQEs of the C
//! driver's `hns_roce_v2_post_send` (`set_ud_wqe`, `set_rc_wqe` and their
//! helpers).
//!
//! C edits the WQE slot in place: it zeroes the first word, then writes
//! field by field, so bits of fields a given opcode does not write keep
//! what the slot's previous WQE left there. The encoders here do the same
//! on a copy of the slot's old words (`prev`), which makes their output the
//! very words C leaves in memory. The owner bit is part of word 0; the
//! caller writes the other words first and word 0 last.

use crate::field::{Ctx, Field, Layout};
use crate::hns_roce_hw_v2::consts::hw_page::PAGE_SHIFT as HW_PAGE_SHIFT;
use crate::hns_roce_hw_v2::consts::{sge, wqe_inl, wqe_op};
use crate::hns_roce_hw_v2::ctx::MrAccess;
use crate::hns_roce_hw_v2::fields::{
    frmr_seg, rc_send_wqe as rc, ud_send_wqe as ud, FrmrSeg, UdSendWqe,
};

/// One data segment (`struct ib_sge`, as `struct hns_roce_v2_wqe_data_seg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u32,
    /// Local key.
    pub lkey: u32,
}

impl Sge {
    /// The four little-endian words of the segment as the engine reads them
    /// (host order here).
    pub fn words(&self) -> [u32; 4] {
        // CAST: the two halves of the address.
        [
            self.len,
            self.lkey,
            self.addr as u32,
            (self.addr >> 32) as u32,
        ]
    }
}

/// The segments a WQE is built from, read where they are: a slice of
/// [`Sge`], or a WR's own segment array seen as [`Sge`] values (the
/// kernel's post path: nothing is copied per WR).
pub trait SgeSource {
    /// The segments, in order.
    fn iter_sges(&self) -> impl Iterator<Item = Sge> + '_;
}

impl SgeSource for [Sge] {
    fn iter_sges(&self) -> impl Iterator<Item = Sge> + '_ {
        self.iter().copied()
    }
}

/// `calc_wr_sge_num`: the segments with a non-zero length and their total
/// length.
pub fn valid_sges<S: SgeSource + ?Sized>(sges: &S) -> (u32, u32) {
    sges.iter_sges()
        .filter(|s| s.len != 0)
        .fold((0, 0), |(n, l), s| (n + 1, l.wrapping_add(s.len)))
}

/// The address vector of a UD send (`struct hns_roce_av` of the AH).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdAv {
    /// UDP source port.
    pub udp_sport: u16,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub tclass: u8,
    /// Flow label.
    pub flowlabel: u32,
    /// Service level.
    pub sl: u8,
    /// Source GID index.
    pub gid_index: u8,
    /// Destination MAC.
    pub mac: [u8; 6],
    /// Destination GID.
    pub dgid: [u8; 16],
    /// VLAN present (written on HIP08 only).
    pub vlan_en: bool,
    /// VLAN id (written on HIP08 only).
    pub vlan_id: u16,
}

/// What a UD send WQE holds (`set_ud_wqe`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdSend {
    /// Hardware opcode (SEND or SEND_WITH_IMM: `set_ud_opcode` refuses the
    /// rest).
    pub opcode: u32,
    /// Immediate data in host order (`be32_to_cpu` of the WR's).
    pub imm: u32,
    /// Total length of the valid segments.
    pub msg_len: u32,
    /// `IB_SEND_SIGNALED`.
    pub signaled: bool,
    /// `IB_SEND_SOLICITED`.
    pub solicited: bool,
    /// Protection domain.
    pub pdn: u32,
    /// Valid segments (all in the extended SGE area).
    pub sge_num: u32,
    /// First extended SGE (already masked by the SGE count).
    pub start_sge: u32,
    /// Q_Key (the QP's own when the WR's has the high bit set).
    pub qkey: u32,
    /// Destination QP.
    pub dqpn: u32,
    /// Address vector.
    pub av: UdAv,
    /// HIP08 (VLAN fields are written only there).
    pub hip08: bool,
    /// Owner bit for this lap of the SQ.
    pub owner: bool,
}

/// The UD send WQE: `prev` is the slot's old contents.
pub fn ud_wqe(prev: &[u32; 16], p: &UdSend) -> [u32; 16] {
    let mut c = Ctx::<UdSendWqe, 16>::from_le_words(prev.map(u32::to_le));
    let mut w = *c.as_le_words();
    w[0] = 0;
    c = Ctx::from_le_words(w);
    // Word 2: the immediate data, 0 for a plain SEND.
    let imm = if p.opcode == wqe_op::SEND_WITH_IMM {
        p.imm
    } else {
        0
    };
    c.write(ud::OPCODE, p.opcode);
    c.write(ud::CQE, u32::from(p.signaled));
    c.write(ud::SE, u32::from(p.solicited));
    c.write(ud::PD, p.pdn);
    c.write(ud::SGE_NUM, p.sge_num);
    c.write(ud::MSG_START_SGE_IDX, p.start_sge);
    c.write(ud::DQPN, p.dqpn);
    c.write(ud::UDPSPN, u32::from(p.av.udp_sport));
    c.write(ud::HOPLIMIT, u32::from(p.av.hop_limit));
    c.write(ud::TCLASS, u32::from(p.av.tclass));
    c.write(ud::FLOW_LABEL, p.av.flowlabel);
    c.write(ud::SL, u32::from(p.av.sl));
    if p.hip08 {
        c.write(ud::VLAN_EN, u32::from(p.av.vlan_en));
        c.write(ud::VLAN, u32::from(p.av.vlan_id));
    }
    c.write(ud::OWNER, u32::from(p.owner));
    let mut out = c.as_le_words().map(u32::from_le);
    out[1] = p.msg_len;
    out[2] = imm;
    out[6] = p.qkey;
    // Bytes 40..64: DMAC, SGID index, SMAC index (untouched), DGID.
    let mut b = [0u8; 24];
    for (i, x) in out[10..16].iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
    }
    b[..6].copy_from_slice(&p.av.mac);
    b[6] = p.av.gid_index;
    b[8..24].copy_from_slice(&p.av.dgid);
    for (i, x) in out[10..16].iter_mut().enumerate() {
        *x = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    out
}

/// The operation of an RC send WQE with its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcOp {
    /// SEND.
    Send,
    /// SEND_WITH_IMM, immediate data in host order.
    SendWithImm(u32),
    /// SEND_WITH_INV of an rkey.
    SendWithInv(u32),
    /// RDMA WRITE.
    RdmaWrite {
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
    },
    /// RDMA WRITE with immediate.
    RdmaWriteWithImm {
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Immediate data in host order.
        imm: u32,
    },
    /// RDMA READ.
    RdmaRead {
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
    },
    /// Atomic compare and swap.
    CmpSwap {
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Value to compare with.
        compare: u64,
        /// Value to store.
        swap: u64,
    },
    /// Atomic fetch and add.
    FetchAdd {
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Value to add.
        add: u64,
    },
    /// Fast registration of an MR (`IB_WR_REG_MR`).
    RegMr(FastReg),
}

/// What a REG_MR WQE tells the engine (`set_frmr_seg`): the MR's page
/// list and the range, key and rights it gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastReg {
    /// Bus address of the page list's BT.
    pub pbl_ba: u64,
    /// Pages in the page list.
    pub npages: u32,
    /// Size exponent of those pages (bytes).
    pub page_shift: u32,
    /// I/O virtual address of the MR's first byte.
    pub iova: u64,
    /// Bytes.
    pub length: u64,
    /// The key it is registered under.
    pub key: u32,
    /// Access rights.
    pub access: MrAccess,
}

impl RcOp {
    /// Hardware opcode (`to_hr_opcode`).
    pub fn hw_opcode(&self) -> u32 {
        match self {
            RcOp::Send => wqe_op::SEND,
            RcOp::SendWithImm(_) => wqe_op::SEND_WITH_IMM,
            RcOp::SendWithInv(_) => wqe_op::SEND_WITH_INV,
            RcOp::RdmaWrite { .. } => wqe_op::RDMA_WRITE,
            RcOp::RdmaWriteWithImm { .. } => wqe_op::RDMA_WRITE_WITH_IMM,
            RcOp::RdmaRead { .. } => wqe_op::RDMA_READ,
            RcOp::CmpSwap { .. } => wqe_op::ATOM_CMP_AND_SWAP,
            RcOp::FetchAdd { .. } => wqe_op::ATOM_FETCH_AND_ADD,
            RcOp::RegMr(_) => wqe_op::FAST_REG_PMR,
        }
    }

    fn is_atomic(&self) -> bool {
        matches!(self, RcOp::CmpSwap { .. } | RcOp::FetchAdd { .. })
    }
}

/// What went wrong building an RC WQE (C's -EINVAL cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeError {
    /// An atomic whose segments do not add up to 8 bytes.
    AtomicLength,
    /// Inline data with an RDMA READ.
    InlineRead,
    /// Inline data longer than the QP allows or the path MTU.
    InlineLength,
}

/// What an RC send WQE holds (`set_rc_wqe`).
pub struct RcSend<'a, S: SgeSource + ?Sized = [Sge]> {
    /// The operation.
    pub op: RcOp,
    /// The WR's segments, all of them (zero-length ones are skipped).
    pub sges: &'a S,
    /// `IB_SEND_FENCE` (C writes it into the SO bit).
    pub fence: bool,
    /// `IB_SEND_SOLICITED`.
    pub solicited: bool,
    /// `IB_SEND_SIGNALED`.
    pub signaled: bool,
    /// `IB_SEND_INLINE`.
    pub inline: bool,
    /// The QP's next extended SGE index, unmasked.
    pub sge_idx: u32,
    /// Extended SGEs of the QP (a power of two, or 0).
    pub sge_cnt: u32,
    /// Owner bit for this lap of the SQ.
    pub owner: bool,
}

/// Where a segment that does not fit the WQE goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtSge {
    /// Index in the extended SGE area (masked).
    pub idx: u32,
    /// The segment.
    pub sge: Sge,
}

/// `set_extend_sge`: the valid segments of `sges` after the first `skip`
/// valid ones, placed from extended SGE `first` on in an area of `cnt`
/// entries.
pub fn ext_sges<S: SgeSource + ?Sized>(
    sges: &S,
    skip: usize,
    first: u32,
    cnt: u32,
) -> impl Iterator<Item = ExtSge> + '_ {
    let mask = cnt.wrapping_sub(1);
    sges.iter_sges()
        .filter(|s| s.len != 0)
        .skip(skip)
        .zip(0u32..)
        .map(move |(s, i)| ExtSge {
            idx: first.wrapping_add(i) & mask,
            sge: s,
        })
}

/// A send WQE slot the RC encoder edits in place, word by word, as C edits
/// the ring: only the words C writes are stored, and only the words whose
/// other bits C keeps are read. Values are in CPU order; the slot keeps
/// them little-endian. A plain `[u32; 16]` is one (the host tests'); the
/// kernel's is the slot in the SQ buffer itself.
pub trait WqeSlot {
    /// Word `i` as it is now (0 past the end).
    fn get(&self, i: usize) -> u32;
    /// Stores `v` as word `i` (nothing past the end).
    fn set(&mut self, i: usize, v: u32);

    /// Replaces field `f` of its word with `v` (`hr_reg_write` on the
    /// slot): one read and one store.
    #[inline(always)]
    fn put<L: Layout>(&mut self, f: Field<L>, v: u32) {
        let i = f.word();
        let w = self.get(i);
        self.set(i, f.insert(w, v));
    }

    /// Stores segment `s` as the four words from word `at` on
    /// (`set_data_seg_v2`).
    #[inline(always)]
    fn set_seg(&mut self, at: usize, s: &Sge) {
        for (k, w) in s.words().into_iter().enumerate() {
            self.set(at + k, w);
        }
    }
}

impl<const N: usize> WqeSlot for [u32; N] {
    #[inline]
    fn get(&self, i: usize) -> u32 {
        self.as_slice().get(i).copied().unwrap_or(0)
    }

    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        if let Some(w) = self.as_mut_slice().get_mut(i) {
            *w = v;
        }
    }
}

/// What [`rc_wqe_in`] leaves to its caller: word 0 (opcode, flags, owner
/// bit), which hands the WQE to the engine and is stored last, and where
/// the segments beyond the two the WQE holds go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcHead {
    /// Word 0 of the WQE (host order), owner bit included.
    pub word0: u32,
    /// Valid segments going to the extended SGE area (from the third on).
    pub ext_n: u32,
    /// The QP's next extended SGE index after this WQE.
    pub next_sge: u32,
    /// Extended SGEs (16 bytes each) the caller fills with the inline
    /// data, from the WQE's start index on and wrapping round the area,
    /// when it is too long for the WQE (`INL_TYPE` set); else 0.
    pub inline_ext: u32,
}

/// An encoded RC WQE: its 16 words and where its segments beyond the two
/// it holds go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcWqe {
    /// The WQE's words (host order).
    pub words: [u32; 16],
    /// Valid segments going to the extended SGE area (from the third on).
    pub ext_n: u32,
    /// The QP's next extended SGE index after this WQE.
    pub next_sge: u32,
}

/// Builds an RC send WQE over `prev`, the slot's old words: [`rc_wqe_in`]
/// on a copy, with word 0 filled in.
pub fn rc_wqe<S: SgeSource + ?Sized>(
    prev: &[u32; 16],
    p: &RcSend<'_, S>,
    inline_data: &[u8],
    max_inline: u32,
    mtu: u32,
) -> Result<RcWqe, WqeError> {
    let mut words = *prev;
    let h = rc_wqe_in(&mut words, p, inline_data, max_inline, mtu)?;
    words[0] = h.word0;
    Ok(RcWqe {
        words,
        ext_n: h.ext_n,
        next_sge: h.next_sge,
    })
}

/// Writes an RC send WQE into `slot` in C's order (`set_rc_wqe`), all
/// words but word 0, which it returns. Inline data that fits the WQE
/// (`HNS_ROCE_V2_MAX_RC_INL_INN_SZ`) is given as `inline_data` (the bytes
/// the SGEs point at, in order) and copied into it; longer inline data
/// goes to the extended SGE area, which the caller fills
/// ([`RcHead::inline_ext`] SGEs: the length rounded up to whole SGEs, as
/// libhns counts them, so that the next WQE's SGEs start after the data);
/// `inline_data` is not read then. On an error the slot
/// holds what C would have written by then (word 0 aside), and the WQE is
/// not posted. `mtu` (the path MTU in bytes) bounds inline data and is not
/// read for other WRs.
pub fn rc_wqe_in<W: WqeSlot + ?Sized, S: SgeSource + ?Sized>(
    slot: &mut W,
    p: &RcSend<'_, S>,
    inline_data: &[u8],
    max_inline: u32,
    mtu: u32,
) -> Result<RcHead, WqeError> {
    let (valid, msg_len) = valid_sges(p.sges);
    slot.set(1, msg_len);
    slot.set(
        2,
        match p.op {
            RcOp::SendWithImm(imm) | RcOp::RdmaWriteWithImm { imm, .. } => imm,
            _ => 0,
        },
    );
    match p.op {
        RcOp::RdmaRead { rkey, va }
        | RcOp::RdmaWrite { rkey, va }
        | RcOp::RdmaWriteWithImm { rkey, va, .. }
        | RcOp::CmpSwap { rkey, va, .. }
        | RcOp::FetchAdd { rkey, va, .. } => {
            slot.set(5, rkey);
            // CAST: the two halves of the address.
            slot.set(6, va as u32);
            slot.set(7, (va >> 32) as u32);
        }
        RcOp::SendWithInv(rkey) => slot.set(2, rkey),
        RcOp::RegMr(f) => set_frmr(slot, &f),
        RcOp::Send | RcOp::SendWithImm(_) => {}
    }
    // Word 0 starts from zero (C clears it before filling the WQE).
    let mut w0 = rc::OPCODE.insert(0, p.op.hw_opcode());
    w0 = rc::SO.insert(w0, u32::from(p.fence));
    w0 = rc::SE.insert(w0, u32::from(p.solicited));
    w0 = rc::CQE.insert(w0, u32::from(p.signaled));
    let mask = p.sge_cnt.wrapping_sub(1);
    slot.put(rc::MSG_START_SGE_IDX, p.sge_idx & mask);
    let mut out = RcHead {
        word0: 0,
        ext_n: 0,
        next_sge: p.sge_idx,
        inline_ext: 0,
    };
    if p.op.is_atomic() {
        if msg_len != sge::ATOMIC_WR_LEN {
            return Err(WqeError::AtomicLength);
        }
        let first = p.sges.iter_sges().next().unwrap_or_default();
        slot.set_seg(8, &first);
        let (a, b) = match p.op {
            RcOp::CmpSwap { compare, swap, .. } => (swap, compare),
            RcOp::FetchAdd { add, .. } => (add, 0),
            _ => (0, 0),
        };
        // CAST: the two halves of each operand.
        slot.set(12, a as u32);
        slot.set(13, (a >> 32) as u32);
        slot.set(14, b as u32);
        slot.set(15, (b >> 32) as u32);
        slot.put(rc::SGE_NUM, valid);
    } else if !matches!(p.op, RcOp::RegMr(_)) {
        // A REG_MR WQE has no data segments: the segment after its header
        // is the page list's, written above.
        w0 = rc::INLINE.insert(w0, u32::from(p.inline));
        if p.inline {
            if matches!(p.op, RcOp::RdmaRead { .. }) {
                return Err(WqeError::InlineRead);
            }
            if msg_len > max_inline || msg_len > mtu {
                return Err(WqeError::InlineLength);
            }
            if msg_len > wqe_inl::MAX_RC_INL_INN_SZ {
                slot.put(rc::INL_TYPE, 1);
                out.inline_ext = msg_len.div_ceil(sge::SGE_SIZE);
                slot.put(rc::SGE_NUM, out.inline_ext);
                out.next_sge = p.sge_idx.wrapping_add(out.inline_ext);
            } else {
                slot.put(rc::INL_TYPE, 0);
                set_inline(slot, inline_data);
            }
        } else {
            let given = p.sges.iter_sges().filter(|s| s.len != 0);
            for (k, s) in given.take(sge::SGE_IN_WQE as usize).enumerate() {
                slot.set_seg(8 + 4 * k, &s);
            }
            if valid > sge::SGE_IN_WQE {
                out.ext_n = valid - sge::SGE_IN_WQE;
                out.next_sge = p.sge_idx.wrapping_add(out.ext_n);
            }
            slot.put(rc::SGE_NUM, valid);
        }
    }
    out.word0 = rc::OWNER.insert(w0, u32::from(p.owner));
    Ok(out)
}

/// Copies inline data (at most the 32 bytes of the two segment places)
/// into the slot from word 8 on, as the bytes lie in memory; the bytes of
/// a last partial word past the data keep their old value.
fn set_inline<W: WqeSlot + ?Sized>(slot: &mut W, data: &[u8]) {
    let data = data.get(..32).unwrap_or(data);
    for (k, chunk) in data.chunks(4).enumerate() {
        let mut b = slot.get(8 + k).to_le_bytes();
        b[..chunk.len()].copy_from_slice(chunk);
        slot.set(8 + k, u32::from_le_bytes(b));
    }
}

/// `set_frmr_seg`: the REG_MR header words (the page list's address in the
/// message-length and key words, the length in the two words after them, key
/// and address where an RDMA WQE has them) and the fast-register segment
/// in words 8 and 9; bits of word 9 the segment does not define keep their
/// old value, as in C.
fn set_frmr<W: WqeSlot + ?Sized>(w: &mut W, f: &FastReg) {
    // CAST (all): the low and high halves of 64-bit values.
    w.set(1, f.pbl_ba as u32);
    w.set(2, (f.pbl_ba >> 32) as u32);
    w.set(3, f.length as u32);
    w.set(4, (f.length >> 32) as u32);
    w.set(5, f.key);
    w.set(6, f.iova as u32);
    w.set(7, (f.iova >> 32) as u32);
    let mut s = Ctx::<FrmrSeg, 2>::from_le_words([w.get(8).to_le(), w.get(9).to_le()]);
    s.write_bool(frmr_seg::BIND_EN, false);
    s.write_bool(frmr_seg::ATOMIC, f.access.remote_atomic);
    s.write_bool(frmr_seg::RR, f.access.remote_read);
    s.write_bool(frmr_seg::RW, f.access.remote_write);
    s.write_bool(frmr_seg::LW, f.access.local_write);
    s.write(frmr_seg::PBL_SIZE, f.npages);
    s.write(
        frmr_seg::PBL_BUF_PG_SZ,
        f.page_shift.saturating_sub(HW_PAGE_SHIFT),
    );
    s.clear(frmr_seg::BLK_MODE);
    s.clear(frmr_seg::BLOCK_SIZE);
    s.clear(frmr_seg::ZBVA);
    let seg = s.as_le_words();
    w.set(8, u32::from_le(seg[0]));
    w.set(9, u32::from_le(seg[1]));
}

/// The owner bit of SQ WQE `head` of a queue of `wqe_cnt` entries: the
/// inverse of the lap parity.
pub fn owner_bit(head: u32, wqe_cnt: u32) -> bool {
    head & wqe_cnt == 0
}

/// Word 0 of a send WQE pushed as a direct WQE (`write_dwqe`): `w0` with
/// the direct-WQE flag, the service level split over its two fields and
/// the SQ producer index after the post (the doorbell's PI). RC and UD
/// WQEs share these positions.
pub fn dwqe_word0(w0: u32, sl: u32, head: u32) -> u32 {
    let w = rc::FLAG.insert(w0, 1);
    let w = rc::DB_SL_L.insert(w, sl);
    let w = rc::DB_SL_H.insert(w, sl >> 2);
    rc::WQE_INDEX.insert(w, head)
}

/// The SQ doorbell (`update_sq_db`): QPN, SQ command, producer index, SL.
pub fn sq_doorbell(qpn: u32, head: u32, sl: u32) -> u64 {
    use crate::hns_roce_hw_v2::consts::db_cmd;
    u64::from(qpn & 0xff_ffff)
        | (db_cmd::SQ << 24)
        | (u64::from(head & 0xffff) << 32)
        | (u64::from(sl & 7) << 48)
}
