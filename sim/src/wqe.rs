// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Work queue entry and completion entry formats of the data path
//! (`struct hns_roce_v2_rc_send_wqe`, `hns_roce_v2_ud_send_wqe`,
//! `hns_roce_v2_wqe_data_seg` and `hns_roce_v2_cqe` in the C driver's
//! `hns_roce_hw_v2.h`; libhns uses the same layouts): decoding of the SQ
//! WQE header and data segments, encoding of CQEs and the doorbell word.

/// Bytes of an SQ WQE header (RC and UD).
pub const SQ_WQE_HDR: usize = 32;
/// Bytes of one SQ WQE slot (`max_sq_desc_sz`, `HNS_ROCE_SQWQE_SHIFT`).
pub const SQ_WQE_SIZE: usize = 64;
/// Bytes of a data segment (`HNS_ROCE_SGE_SIZE`).
pub const SGE_SIZE: usize = 16;
/// Offset of the atomic operands in an RC WQE (`struct
/// hns_roce_v2_wqe_atomic_seg`: `fetchadd_swap_data`, `cmp_data`), after
/// the one data segment for the result.
pub const ATOMIC_SEG: usize = SQ_WQE_HDR + SGE_SIZE;
/// Data segments that fit into an RC WQE (`HNS_ROCE_SGE_IN_WQE`).
pub const SGE_IN_WQE: usize = 2;
/// Most inline bytes inside an RC WQE (`HNS_ROCE_MAX_RC_INL_INN_SZ`).
pub const RC_INLINE_IN_WQE: usize = 32;
/// The length libhns/HIP08 put in a reserved RQ SGE that ends the list
/// (`INVALID_SGE_LENGTH`).
pub const INVALID_SGE_LENGTH: u32 = 0x8000_0000;

/// SQ WQE opcodes (`HNS_ROCE_V2_WQE_OP_*`).
pub mod op {
    /// Send.
    pub const SEND: u8 = 0x0;
    /// Send with invalidate.
    pub const SEND_WITH_INV: u8 = 0x1;
    /// Send with immediate.
    pub const SEND_WITH_IMM: u8 = 0x2;
    /// RDMA write.
    pub const RDMA_WRITE: u8 = 0x3;
    /// RDMA write with immediate.
    pub const RDMA_WRITE_WITH_IMM: u8 = 0x4;
    /// RDMA read.
    pub const RDMA_READ: u8 = 0x5;
    /// Atomic compare and swap.
    pub const ATOM_CMP_AND_SWAP: u8 = 0x6;
    /// Atomic fetch and add.
    pub const ATOM_FETCH_AND_ADD: u8 = 0x7;
    /// Fast register (HIP09).
    pub const FAST_REG_PMR: u8 = 0xa;
    /// Local invalidate (libhns `HNS_ROCE_WQE_OP_LOCAL_INV`; the kernel
    /// driver does not post it).
    pub const LOCAL_INV: u8 = 0xb;
    /// Bind memory window.
    pub const BIND_MW: u8 = 0xc;
}

/// Receive CQE opcodes (`HNS_ROCE_V2_OPCODE_*` of the responder).
pub mod rop {
    /// RDMA write with immediate.
    pub const RDMA_WRITE_IMM: u8 = 0x0;
    /// Send.
    pub const SEND: u8 = 0x1;
    /// Send with immediate.
    pub const SEND_WITH_IMM: u8 = 0x2;
    /// Send with invalidate.
    pub const SEND_WITH_INV: u8 = 0x3;
}

/// CQE status codes (`HNS_ROCE_CQE_V2_*`, hw_v2.h).
pub mod status {
    /// Success.
    pub const SUCCESS: u8 = 0x00;
    /// Local length error.
    pub const LOC_LEN_ERR: u8 = 0x01;
    /// Local QP operation error.
    pub const LOC_QP_OP_ERR: u8 = 0x02;
    /// Local protection error.
    pub const LOC_PROT_ERR: u8 = 0x04;
    /// Flushed.
    pub const WR_FLUSH_ERR: u8 = 0x05;
    /// Local access error.
    pub const LOC_ACCESS_ERR: u8 = 0x11;
    /// Remote invalid request.
    pub const REM_INV_REQ_ERR: u8 = 0x12;
    /// Remote access error.
    pub const REM_ACCESS_ERR: u8 = 0x13;
    /// Remote operational error.
    pub const REM_OP_ERR: u8 = 0x14;
    /// Transport retry counter exceeded.
    pub const RETRY_EXC_ERR: u8 = 0x15;
    /// RNR retry counter exceeded.
    pub const RNR_RETRY_EXC_ERR: u8 = 0x16;
    /// General error (the driver does not move the QP to error).
    pub const GENERAL_ERR: u8 = 0x23;
}

fn le32(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(off..off + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

fn le64(b: &[u8], off: usize) -> u64 {
    u64::from(le32(b, off)) | u64::from(le32(b, off + 4)) << 32
}

/// A data segment: `le32 len, le32 lkey, le64 addr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataSeg {
    /// Bytes.
    pub len: u32,
    /// Local key.
    pub lkey: u32,
    /// Virtual address (or DMA address for kernel DMA MRs).
    pub addr: u64,
}

impl DataSeg {
    /// Decodes the 16 bytes at the start of `b`.
    pub fn from_bytes(b: &[u8]) -> Self {
        DataSeg {
            len: le32(b, 0),
            lkey: le32(b, 4),
            addr: le64(b, 8),
        }
    }

    /// Encodes it (tests and the driver side of host tests).
    pub fn to_bytes(self) -> [u8; SGE_SIZE] {
        let mut b = [0u8; SGE_SIZE];
        b[0..4].copy_from_slice(&self.len.to_le_bytes());
        b[4..8].copy_from_slice(&self.lkey.to_le_bytes());
        b[8..16].copy_from_slice(&self.addr.to_le_bytes());
        b
    }
}

/// The header of an RC (or XRC) send WQE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcWqe {
    /// `OPCODE` (dw0 4:0).
    pub opcode: u8,
    /// `OWNER` (dw0 bit 7).
    pub owner: bool,
    /// `CQE`: signaled (dw0 bit 8).
    pub signaled: bool,
    /// `SE`: solicited event (dw0 bit 11).
    pub solicited: bool,
    /// `INLINE` (dw0 bit 12).
    pub inline: bool,
    /// `msg_len` (dw1): total bytes.
    pub msg_len: u32,
    /// `immtdata` / `inv_key` (dw2), kept as the raw little-endian word.
    pub imm: u32,
    /// `SGE_NUM` (dw3 31:24): valid data segments, or 16-byte units of
    /// extended inline data.
    pub sge_num: u32,
    /// `XRC_SRQN` (dw3 23:0): the SRQ at the XRC target (XRC_INI QPs).
    pub xrc_srqn: u32,
    /// `MSG_START_SGE_IDX` (dw4 23:0).
    pub start_sge: u32,
    /// `INL_TYPE` (dw4 bit 31): inline data in the extended SGE area.
    pub inline_ext: bool,
    /// `rkey` (dw5).
    pub rkey: u32,
    /// Remote virtual address (dw6-7).
    pub va: u64,
}

impl RcWqe {
    /// Decodes the first 32 bytes of an SQ WQE.
    pub fn from_bytes(b: &[u8]) -> Self {
        let dw0 = le32(b, 0);
        let dw4 = le32(b, 16);
        RcWqe {
            opcode: (dw0 & 0x1f) as u8,
            owner: dw0 & (1 << 7) != 0,
            signaled: dw0 & (1 << 8) != 0,
            solicited: dw0 & (1 << 11) != 0,
            inline: dw0 & (1 << 12) != 0,
            msg_len: le32(b, 4),
            imm: le32(b, 8),
            sge_num: le32(b, 12) >> 24,
            xrc_srqn: le32(b, 12) & 0xff_ffff,
            start_sge: dw4 & 0xff_ffff,
            inline_ext: dw4 & (1 << 31) != 0,
            rkey: le32(b, 20),
            va: le64(b, 24),
        }
    }
}

/// A FAST_REG_PMR WQE as `set_frmr_seg` (hw_v2.c) builds it: the RC
/// header fields reused (`msg_len`/`inv_key` = PBL base address, dw3/dw4 =
/// length, `rkey` = the new key, `va` = IOVA), then `struct
/// hns_roce_wqe_frmr_seg` at byte 32 (`FRMR_PBL_SIZE` 31:0,
/// `FRMR_PBL_BUF_PG_SZ` 39:36, `FRMR_ATOMIC` 43, `FRMR_RR` 44, `FRMR_RW`
/// 45, `FRMR_LW` 46).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrmrWqe {
    /// The key to register (`rkey`, dw5).
    pub key: u32,
    /// PBL root address (dw1 low, dw2 high).
    pub pbl_ba: u64,
    /// MR length in bytes (dw3 low, dw4 high).
    pub len: u64,
    /// IOVA (dw6-7).
    pub va: u64,
    /// Pages in the PBL (`FRMR_PBL_SIZE`).
    pub pbl_size: u32,
    /// Buffer page size, `log2 - 12` (`FRMR_PBL_BUF_PG_SZ`).
    pub buf_pg_sz: u32,
    /// `FRMR_ATOMIC`.
    pub atomic: bool,
    /// `FRMR_RR`.
    pub rr: bool,
    /// `FRMR_RW`.
    pub rw: bool,
    /// `FRMR_LW`.
    pub lw: bool,
}

impl FrmrWqe {
    /// Decodes the first 48 bytes of an SQ WQE.
    pub fn from_bytes(b: &[u8]) -> Self {
        let f1 = le32(b, SQ_WQE_HDR + 4);
        FrmrWqe {
            key: le32(b, 20),
            pbl_ba: u64::from(le32(b, 4)) | u64::from(le32(b, 8)) << 32,
            len: u64::from(le32(b, 12)) | u64::from(le32(b, 16)) << 32,
            va: le64(b, 24),
            pbl_size: le32(b, SQ_WQE_HDR),
            buf_pg_sz: (f1 >> 4) & 0xf,
            atomic: f1 & (1 << 11) != 0,
            rr: f1 & (1 << 12) != 0,
            rw: f1 & (1 << 13) != 0,
            lw: f1 & (1 << 14) != 0,
        }
    }
}

/// The header of a UD send WQE (`struct hns_roce_v2_ud_send_wqe`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdWqe {
    /// `OPCODE`.
    pub opcode: u8,
    /// `OWNER`.
    pub owner: bool,
    /// `CQE`: signaled.
    pub signaled: bool,
    /// `SE`.
    pub solicited: bool,
    /// `INLINE`.
    pub inline: bool,
    /// `msg_len` (dw1; with inline data in the WQE only bits 15:0 are the
    /// length, see [`UdWqe::data_len`]).
    pub msg_len: u32,
    /// `immtdata`.
    pub imm: u32,
    /// `SGE_NUM` (dw3 31:24).
    pub sge_num: u32,
    /// `MSG_START_SGE_IDX` (dw4 23:0).
    pub start_sge: u32,
    /// `INLINE_TYPE` (dw4 31): inline data in the extended SGE ring (1,
    /// more than [`UD_INL_INN_SZ`] bytes) or in the WQE itself (0).
    pub inline_ext: bool,
    /// Inline data in the WQE (`INLINE_TYPE` 0), as libhns'
    /// `set_ud_inl_seg` spreads it: bytes 0-1 in `INLINE_DATA_15_0` (dw1
    /// 31:16), byte 2 in `INLINE_DATA_23_16` (dw3 31:24), bytes 3-5 in
    /// `INLINE_DATA_47_24` (dw4 23:0), bytes 6-7 in `INLINE_DATA_63_48`
    /// (dw5 15:0).
    pub inner: [u8; UD_INL_INN_SZ],
    /// Remote QKEY (dw6).
    pub qkey: u32,
    /// Destination QPN (dw7 23:0).
    pub dqpn: u32,
    /// `HOPLIMIT` (dw8 23:16).
    pub hop_limit: u8,
    /// `TCLASS` (dw8 31:24).
    pub tclass: u8,
    /// `FLOW_LABEL` (dw9 19:0).
    pub flow_label: u32,
    /// `SL` (dw9 23:20).
    pub sl: u8,
    /// Destination MAC (bytes 40-45).
    pub dmac: [u8; 6],
    /// `SGID_INDEX` (byte 46).
    pub sgid_index: u8,
    /// Destination GID (bytes 48-63).
    pub dgid: [u8; 16],
}

impl UdWqe {
    /// Decodes a 64-byte UD WQE.
    pub fn from_bytes(b: &[u8]) -> Self {
        let dw0 = le32(b, 0);
        let dw8 = le32(b, 32);
        let dw9 = le32(b, 36);
        let mut dmac = [0u8; 6];
        if let Some(s) = b.get(40..46) {
            dmac.copy_from_slice(s);
        }
        let mut dgid = [0u8; 16];
        if let Some(s) = b.get(48..64) {
            dgid.copy_from_slice(s);
        }
        let (dw1, dw3, dw4, dw5) = (le32(b, 4), le32(b, 12), le32(b, 16), le32(b, 20));
        let inner = [
            (dw1 >> 16) as u8,
            (dw1 >> 24) as u8,
            (dw3 >> 24) as u8,
            dw4 as u8,
            (dw4 >> 8) as u8,
            (dw4 >> 16) as u8,
            dw5 as u8,
            (dw5 >> 8) as u8,
        ];
        UdWqe {
            opcode: (dw0 & 0x1f) as u8,
            owner: dw0 & (1 << 7) != 0,
            signaled: dw0 & (1 << 8) != 0,
            solicited: dw0 & (1 << 11) != 0,
            inline: dw0 & (1 << 12) != 0,
            msg_len: le32(b, 4),
            imm: le32(b, 8),
            sge_num: le32(b, 12) >> 24,
            start_sge: le32(b, 16) & 0xff_ffff,
            qkey: le32(b, 24),
            dqpn: le32(b, 28) & 0xff_ffff,
            hop_limit: (dw8 >> 16) as u8,
            tclass: (dw8 >> 24) as u8,
            flow_label: dw9 & 0xf_ffff,
            sl: ((dw9 >> 20) & 0xf) as u8,
            dmac,
            sgid_index: b.get(46).copied().unwrap_or(0),
            dgid,
            inline_ext: dw4 & (1 << 31) != 0,
            inner,
        }
    }

    /// The message length: `msg_len`, but only its bits 15:0 when the
    /// data is inline in the WQE (bits 31:16 hold inline bytes 0-1).
    pub fn data_len(&self) -> u32 {
        if self.inline && !self.inline_ext {
            self.msg_len & 0xffff
        } else {
            self.msg_len
        }
    }
}

/// Most inline bytes a UD WQE carries in itself (libhns'
/// `HNS_ROCE_MAX_UD_INL_INN_SZ`); more go to the extended SGE ring.
pub const UD_INL_INN_SZ: usize = 8;

/// The owner bit a producer writes at index `idx` of a ring of
/// `1 << shift` entries: 1 on the first pass (`~((idx >> shift) & 1)`).
pub fn owner_for(idx: u32, shift: u32) -> bool {
    shift >= 32 || (idx >> shift) & 1 == 0
}

/// One completion, before it gets its owner bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cqe {
    /// `OPCODE`: the WQE opcode (send side) or a [`rop`] value.
    pub opcode: u8,
    /// `S_R`: 1 for a receive completion.
    pub is_recv: bool,
    /// `STATUS`.
    pub status: u8,
    /// `WQE_IDX`.
    pub wqe_idx: u16,
    /// `immtdata` / `rkey` (raw word from the sender's WQE).
    pub imm: u32,
    /// `LCL_QPN`.
    pub lcl_qpn: u32,
    /// `SUB_STATUS`.
    pub sub_status: u8,
    /// `BYTE_CNT`.
    pub byte_cnt: u32,
    /// Source MAC (UD).
    pub smac: [u8; 6],
    /// `PORT_TYPE` (UD: 0 RoCEv1, 1 RoCEv2/IPv4, 2 RoCEv2/IPv6).
    pub port_type: u8,
    /// `RMT_QPN`.
    pub rmt_qpn: u32,
    /// `SL`.
    pub sl: u8,
    /// `GRH` (UD: a GRH is in the receive buffer).
    pub grh: bool,
    /// `XRC_SRQN` (dw2 23:0): the XRC SRQ that took the message.
    pub xrc_srqn: u32,
}

impl Cqe {
    /// The entry of `size` bytes (32 or 64) with owner bit `owner`.
    pub fn encode(&self, size: usize, owner: bool) -> Vec<u8> {
        let mut b = vec![0u8; size.max(32)];
        let dw0 = u32::from(self.opcode & 0x1f)
            | u32::from(self.is_recv) << 6
            | u32::from(owner) << 7
            | u32::from(self.status) << 8
            | u32::from(self.wqe_idx) << 16;
        let dw3 = (self.lcl_qpn & 0xff_ffff) | u32::from(self.sub_status) << 24;
        let smac_l = u32::from_le_bytes([self.smac[0], self.smac[1], self.smac[2], self.smac[3]]);
        let dw6 = u32::from(self.smac[4])
            | u32::from(self.smac[5]) << 8
            | u32::from(self.port_type & 3) << 16;
        let dw7 = (self.rmt_qpn & 0xff_ffff)
            | u32::from(self.sl & 7) << 24
            | 1 << 27
            | u32::from(self.grh) << 30;
        let dw2 = self.xrc_srqn & 0xff_ffff;
        for (i, w) in [dw0, self.imm, dw2, dw3, self.byte_cnt, smac_l, dw6, dw7]
            .iter()
            .enumerate()
        {
            b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// Doorbell commands (`HNS_ROCE_V2_*_DB`, DB_CMD bits 27:24).
pub mod db {
    /// SQ doorbell.
    pub const SQ: u32 = 0;
    /// RQ doorbell.
    pub const RQ: u32 = 1;
    /// SRQ doorbell.
    pub const SRQ: u32 = 2;
    /// CQ consumer index update.
    pub const CQ_PTR: u32 = 3;
    /// CQ arm (notify request).
    pub const CQ_NOTIFY: u32 = 4;
}

/// A decoded 64-bit doorbell word (`struct hns_roce_v2_db`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Doorbell {
    /// `DB_TAG`: QPN, SRQN or CQN.
    pub tag: u32,
    /// `DB_CMD`.
    pub cmd: u32,
    /// `DB_PI` (SQ/RQ/SRQ, 16 bits) or `DB_CQ_CI` (24 bits).
    pub index: u32,
}

impl Doorbell {
    /// Decodes the word as the device reads it (little-endian u64).
    pub fn decode(v: u64) -> Self {
        let lo = v as u32;
        let hi = (v >> 32) as u32;
        let cmd = (lo >> 24) & 0xf;
        let index = if cmd == db::CQ_PTR || cmd == db::CQ_NOTIFY {
            hi & 0xff_ffff
        } else {
            hi & 0xffff
        };
        Doorbell {
            tag: lo & 0xff_ffff,
            cmd,
            index,
        }
    }
}

/// The first qword of a direct WQE: a HIP09 QP's SQ WQE pushed (64
/// bytes) into the QP's own page of the `mem_base` window instead of a
/// doorbell (`write_dwqe` in the C driver and libhns). The driver sets
/// `FLAG` (dw0 bit 31), which a doorbell word never has (its bit 31 is
/// `DB_FLAG`, left 0), `WQE_INDEX` (dw0 30:15) to the producer index after
/// the post, and the QP's SL in `DB_SL_L` (dw0 6:5) and `DB_SL_H` (dw0
/// 14:13); the rest of the WQE is as in the SQ buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectWqe {
    /// `WQE_INDEX`: the SQ producer index (16 bits), what a doorbell's PI is.
    pub pi: u32,
    /// The service level, `DB_SL_H` << 2 | `DB_SL_L` (4 bits).
    pub sl: u8,
}

impl DirectWqe {
    /// `RC_SEND_WQE_FLAG`: dw0 bit 31.
    pub const FLAG: u64 = 1 << 31;

    /// Decodes the first qword of a QP's page: `None` for a doorbell word
    /// (bit 31 of dw0 clear).
    pub fn decode(v: u64) -> Option<Self> {
        if v & Self::FLAG == 0 {
            return None;
        }
        Some(DirectWqe {
            pi: (v >> 15) as u32 & 0xffff,
            sl: ((v >> 5) & 3 | ((v >> 13) & 3) << 2) as u8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frmr_wqe_fields() {
        // FAST_REG_PMR as set_frmr_seg lays it out: msg_len/inv_key = PBL
        // base 0x1_2345_6000, byte_16/byte_20 = length 0x1_0000_2000,
        // rkey 0x305, va 0xdead_0000_1000; frmr seg: PBL_SIZE 3 (bits
        // 31:0), PBL_BUF_PG_SZ 4 (39:36), ATOMIC (43), RW (45), LW (46).
        let mut b = [0u8; 64];
        let put =
            |b: &mut [u8; 64], o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
        put(&mut b, 0, 0x0a | 0x80);
        put(&mut b, 4, 0x2345_6000);
        put(&mut b, 8, 0x1);
        put(&mut b, 12, 0x2000);
        put(&mut b, 16, 0x1);
        put(&mut b, 20, 0x305);
        put(&mut b, 24, 0x0000_1000);
        put(&mut b, 28, 0xdead);
        put(&mut b, 32, 3);
        put(&mut b, 36, 4 << 4 | 1 << 11 | 1 << 13 | 1 << 14);
        assert_eq!(RcWqe::from_bytes(&b).opcode, op::FAST_REG_PMR);
        assert_eq!(
            FrmrWqe::from_bytes(&b),
            FrmrWqe {
                key: 0x305,
                pbl_ba: 0x1_2345_6000,
                len: 0x1_0000_2000,
                va: 0xdead_0000_1000,
                pbl_size: 3,
                buf_pg_sz: 4,
                atomic: true,
                rr: false,
                rw: true,
                lw: true,
            }
        );
    }

    #[test]
    fn rc_wqe_fields() {
        // An RC SEND_WITH_IMM, owner 1, signaled, solicited, 2 SGEs, 300
        // bytes, imm 0x11223344, start SGE 5, rkey 0xabcd, va 0x1_0000_2000,
        // laid out by hand from hw_v2.h's RC_SEND_WQE_* positions.
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&(0x02u32 | 0x80 | 0x100 | 0x800).to_le_bytes());
        b[4..8].copy_from_slice(&300u32.to_le_bytes());
        b[8..12].copy_from_slice(&0x1122_3344u32.to_le_bytes());
        b[12..16].copy_from_slice(&(2u32 << 24).to_le_bytes());
        b[16..20].copy_from_slice(&5u32.to_le_bytes());
        b[20..24].copy_from_slice(&0xabcdu32.to_le_bytes());
        b[24..32].copy_from_slice(&0x1_0000_2000u64.to_le_bytes());
        let w = RcWqe::from_bytes(&b);
        assert_eq!(w.opcode, op::SEND_WITH_IMM);
        assert!(w.owner && w.signaled && w.solicited && !w.inline && !w.inline_ext);
        assert_eq!(
            (w.msg_len, w.imm, w.sge_num, w.start_sge, w.rkey, w.va),
            (300, 0x1122_3344, 2, 5, 0xabcd, 0x1_0000_2000)
        );
        // INLINE and INL_TYPE.
        b[1] |= 0x10;
        b[19] |= 0x80;
        let w = RcWqe::from_bytes(&b);
        assert!(w.inline && w.inline_ext);
    }

    #[test]
    fn data_seg_roundtrip_and_layout() {
        let b = [
            0x10, 0, 0, 0, // len 16
            0x00, 0x03, 0, 0, // lkey 0x300
            0x00, 0x10, 0, 0, 1, 0, 0, 0, // addr 0x1_0000_1000
        ];
        let s = DataSeg::from_bytes(&b);
        assert_eq!(
            s,
            DataSeg {
                len: 16,
                lkey: 0x300,
                addr: 0x1_0000_1000
            }
        );
        assert_eq!(s.to_bytes(), b);
    }

    #[test]
    fn ud_wqe_fields() {
        let mut b = [0u8; 64];
        b[0] = 0x80; // SEND, owner
        b[4..8].copy_from_slice(&64u32.to_le_bytes());
        b[12..16].copy_from_slice(&(1u32 << 24 | 7).to_le_bytes());
        b[16..20].copy_from_slice(&9u32.to_le_bytes());
        b[24..28].copy_from_slice(&0x1111_1111u32.to_le_bytes());
        b[28..32].copy_from_slice(&0x12u32.to_le_bytes());
        b[32..36].copy_from_slice(&(0x40u32 << 16 | 0x0a << 24).to_le_bytes());
        b[36..40].copy_from_slice(&(0x12345u32 | 3 << 20).to_le_bytes());
        b[40..46].copy_from_slice(&[2, 0x19, 0xe5, 0, 3, 0]);
        b[46] = 1;
        b[48] = 0xfe;
        let w = UdWqe::from_bytes(&b);
        assert_eq!((w.opcode, w.owner, w.msg_len, w.sge_num), (0, true, 64, 1));
        assert_eq!((w.start_sge, w.qkey, w.dqpn), (9, 0x1111_1111, 0x12));
        assert_eq!(
            (w.hop_limit, w.tclass, w.flow_label, w.sl),
            (0x40, 0x0a, 0x12345, 3)
        );
        assert_eq!(
            (w.dmac, w.sgid_index, w.dgid[0]),
            ([2, 0x19, 0xe5, 0, 3, 0], 1, 0xfe)
        );
    }

    #[test]
    fn owner_bit_per_pass() {
        // 64-entry ring: indexes 0..63 first pass (1), 64..127 second (0).
        assert!(owner_for(0, 6) && owner_for(63, 6));
        assert!(!owner_for(64, 6) && !owner_for(127, 6));
        assert!(owner_for(128, 6));
    }

    #[test]
    fn cqe_encoding_matches_the_field_positions() {
        let c = Cqe {
            opcode: rop::SEND_WITH_IMM,
            is_recv: true,
            status: status::SUCCESS,
            wqe_idx: 0x1234,
            imm: 0xdead_beef,
            lcl_qpn: 0x0000_0009,
            byte_cnt: 4096,
            rmt_qpn: 8,
            ..Cqe::default()
        };
        let b = c.encode(64, true);
        assert_eq!(b.len(), 64);
        // dw0: opcode 2, S_R bit 6, owner bit 7, status 0, WQE_IDX 31:16.
        assert_eq!(&b[0..4], &(0x1234_00c2u32).to_le_bytes());
        assert_eq!(&b[4..8], &0xdead_beefu32.to_le_bytes());
        assert_eq!(&b[12..16], &9u32.to_le_bytes());
        assert_eq!(&b[16..20], &4096u32.to_le_bytes());
        // dw7: RMT_QPN 8, PORTN 1 at bits 29:27.
        assert_eq!(&b[28..32], &(8u32 | 1 << 27).to_le_bytes());
        assert!(b[32..].iter().all(|&x| x == 0));
        // A send-side error CQE, 32 bytes, second pass (owner 0).
        let e = Cqe {
            opcode: op::RDMA_WRITE,
            status: status::REM_ACCESS_ERR,
            wqe_idx: 3,
            lcl_qpn: 0x10,
            ..Cqe::default()
        };
        let b = e.encode(32, false);
        assert_eq!(b.len(), 32);
        assert_eq!(&b[0..4], &(0x0003_1303u32).to_le_bytes());
    }

    #[test]
    fn doorbell_words() {
        // libhns SQ doorbell: tag qpn 0x0b, cmd 0, PI 0x0102, SL 0.
        let d = Doorbell::decode(0x0000_0102_0000_000b);
        assert_eq!((d.tag, d.cmd, d.index), (0x0b, db::SQ, 0x102));
        // CQ arm: cqn 3, cmd 4, CI 0x10_0005 (24 bits), notify/sn above.
        let d = Doorbell::decode(0x0310_0005_0400_0003);
        assert_eq!((d.tag, d.cmd, d.index), (3, db::CQ_NOTIFY, 0x10_0005));
    }

    #[test]
    fn direct_wqe_first_qword() {
        // write_dwqe on an RC SEND (opcode 0), owner 1, signaled: FLAG,
        // WQE_INDEX 0x1234 (bits 30:15), SL 0b1110 split as DB_SL_L = 0b10
        // (6:5) and DB_SL_H = 0b11 (14:13); msg_len 0x40 in dw1.
        let dw0: u32 = 1 << 31 | 0x1234 << 15 | 0b11 << 13 | 0x100 | 0x80 | 0b10 << 5;
        let v = u64::from(dw0) | 0x40 << 32;
        assert_eq!(
            DirectWqe::decode(v),
            Some(DirectWqe {
                pi: 0x1234,
                sl: 0b1110
            })
        );
        // The highest index and SL 15 use every bit of their fields.
        let all = u64::from(1u32 << 31 | 0xffff << 15 | 3 << 13 | 3 << 5);
        assert_eq!(
            DirectWqe::decode(all),
            Some(DirectWqe { pi: 0xffff, sl: 15 })
        );
        // A doorbell word (DB_FLAG clear) is not one, whatever its PI.
        assert_eq!(DirectWqe::decode(0xffff_ffff_7fff_ffff), None);
        assert_eq!(DirectWqe::decode(0x0000_0102_0000_000b), None);
    }
}
