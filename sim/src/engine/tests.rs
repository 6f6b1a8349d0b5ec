// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The engine's unit tests: hand-built WQEs, contexts, MPTs and page
//! lists in plain memory, expected bytes written out by hand.

use super::*;
use crate::hw_v2_fields::{cqc, qpc};
use crate::mem::VecMem;
use std::cell::Cell;

/// Contexts at fixed addresses of a [`VecMem`]; CEQEs recorded.
#[derive(Default)]
struct FakeHost {
    ctx: BTreeMap<(u32, u32), u64>,
    ceqes: Vec<(u32, u32)>,
    aeqes: Vec<(u8, u8, u32)>,
    events: Vec<CtxEvent>,
    /// The GID of every index (default [`GID_0`]).
    gid: Option<[u8; 16]>,
    /// An address whose word each posted event records (in `at_event`):
    /// what the guest could see when the event arrived.
    probe: Option<u64>,
    at_event: Vec<u32>,
}

/// The GID of the test worlds' device 0.
const GID_0: [u8; 16] = [
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x19, 0xe5, 0xff, 0xfe, 0, 3, 0,
];
/// The GID of device 1 in the two-device test.
const GID_1: [u8; 16] = [
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x19, 0xe5, 0xff, 0xfe, 0, 4, 0,
];

impl Host for FakeHost {
    fn ctx_addr<M: Dma>(&self, _mem: &M, t: Table, idx: u32) -> Result<u64, String> {
        self.ctx
            .get(&(t as u32, idx))
            .copied()
            .ok_or_else(|| format!("no entry {idx}"))
    }
    fn post_ceqe<M: Dma>(&mut self, _mem: &M, ceqn: u32, cqn: u32) {
        self.ceqes.push((ceqn, cqn));
    }
    fn take_ctx_events(&mut self) -> Vec<CtxEvent> {
        std::mem::take(&mut self.events)
    }
    fn post_event<M: Dma>(&mut self, mem: &M, event: u8, sub: u8, queue: u32) {
        self.aeqes.push((event, sub, queue));
        if let Some(a) = self.probe {
            self.at_event.push(mem.read_u32(a).unwrap_or(u32::MAX));
        }
    }
    fn gid(&self, _idx: u32) -> Option<[u8; 16]> {
        Some(self.gid.unwrap_or(GID_0))
    }
    fn owns_gid(&self, gid: &[u8; 16]) -> bool {
        self.gid(0).as_ref() == Some(gid)
    }
}

/// The 0x230 word, and the other doorbell words by offset.
struct FakeRegs(Cell<u64>, std::cell::RefCell<BTreeMap<u64, u64>>);

impl FakeRegs {
    fn new() -> Self {
        FakeRegs(Cell::new(0), Default::default())
    }
}

impl Regs for FakeRegs {
    fn take64(&self, off: u64) -> u64 {
        if off == DB_CFG0 {
            self.0.replace(0)
        } else {
            self.1.borrow_mut().remove(&off).unwrap_or(0)
        }
    }
    fn peek64(&self, off: u64) -> u64 {
        if off == DB_CFG0 {
            self.0.get()
        } else {
            self.1.borrow().get(&off).copied().unwrap_or(0)
        }
    }
}

fn put64(m: &VecMem, a: u64, v: u64) {
    m.write(a, &v.to_le_bytes()).unwrap();
}
fn put32(m: &VecMem, a: u64, v: u32) {
    m.write(a, &v.to_le_bytes()).unwrap();
}
fn get32(m: &VecMem, a: u64) -> u32 {
    m.read_u32(a).unwrap()
}
fn bytes<const N: usize>(w: &[u32; N]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

// Memory map of the test world (all 4 KiB pages).
const QPC_A: u64 = 0x1000; // QP 8
const QPC_B: u64 = 0x1200; // QP 9
const CQC_1: u64 = 0x1400;
const CQC_2: u64 = 0x1440;
const MPT_1: u64 = 0x1480; // key 0x100, PD 3, LW+RW
const MPT_2: u64 = 0x14c0; // key 0x200, PD 4 (another PD), LW
const RQ_DB_B: u64 = 0x1800;
const RQ_DB_A: u64 = 0x1808;
const CQ_DB_1: u64 = 0x1810;
const CQ_DB_2: u64 = 0x1818;
const ROOT_A: u64 = 0x2000; // [SQ page, RQ page]
const ROOT_B: u64 = 0x3000;
const SQ_A: u64 = 0x4000;
const RQ_A: u64 = 0x5000;
const SQ_B: u64 = 0x6000;
const RQ_B: u64 = 0x7000;
const CQ1_ROOT: u64 = 0x8000;
const CQ1_BUF: u64 = 0x9000;
const CQ2_ROOT: u64 = 0xa000;
const CQ2_BUF: u64 = 0xb000;
const PBL_1: u64 = 0xc000;
// MR 1: VA 0x7000_0000 .. +0x2000 on pages 0x20000 and 0x30000.
const MR_VA: u64 = 0x7000_0000;
const MR_P0: u64 = 0x20000;
const MR_P1: u64 = 0x30000;

/// QPC of an RC QP in RTS: PD 3, 64 SQ WQEs (hop 1, one page), no
/// extended SGE, 64 RQ WQEs of one SGE (hop 1, one page), all WQEs
/// signaled, remote write enabled, RNR retry 7.
fn qpc_image(dqpn: u32, root: u64, rq_db: u64, rx: u32, tx: u32) -> Vec<u8> {
    qpc_with(dqpn, root, rq_db, rx, tx, |_| {})
}

/// [`qpc_image`] with `f` applied last.
fn qpc_with(
    dqpn: u32,
    root: u64,
    rq_db: u64,
    rx: u32,
    tx: u32,
    f: impl FnOnce(&mut Ctx<Qpc, 64>),
) -> Vec<u8> {
    let mut c: Ctx<Qpc, 64> = Ctx::zeroed();
    c.write(qpc::TST, 0);
    c.write(qpc::PD, 3);
    c.write(qpc::SQ_SHIFT, 6);
    c.write(qpc::RQ_SHIFT, 6);
    c.write(qpc::RQWS, 0);
    c.write(qpc::SQ_HOP_NUM, 1);
    c.write(qpc::RQ_HOP_NUM, 1);
    c.write(qpc::WQE_SGE_BA_L, (root >> 3) as u32);
    c.write(qpc::WQE_SGE_BA_H, (root >> 35) as u32);
    c.enable(qpc::RQ_RECORD_EN);
    c.write(qpc::RQ_DB_RECORD_ADDR_L, (rq_db as u32) >> 1);
    c.write(qpc::RQ_DB_RECORD_ADDR_H, (rq_db >> 32) as u32);
    c.write(qpc::DQPN, dqpn);
    c.write(qpc::RX_CQN, rx);
    c.write(qpc::TX_CQN, tx);
    c.enable(qpc::RWE);
    c.write(qpc::QP_ST, qps::RTS);
    // rnr_retry 7 (infinite), as the rdma-core examples set it.
    c.write(qpc::RNR_NUM_INIT, 7);
    c.write(qpc::RNR_CNT, 7);
    f(&mut c);
    bytes(c.as_le_words())
}

fn cqc_image(cqn: u32, root: u64, db: u64) -> Vec<u8> {
    let mut c: Ctx<Cqc, 16> = Ctx::zeroed();
    c.write(cqc::CQ_ST, 1);
    c.write(cqc::SHIFT, 6);
    c.write(cqc::CQN, cqn);
    c.write(cqc::CQE_SIZE, 1);
    c.write(cqc::CQE_HOP_NUM, 1);
    c.write(cqc::CEQN, 0);
    c.write(cqc::CQE_BA_L, (root >> 3) as u32);
    c.write(cqc::CQE_BA_H, (root >> 35) as u32);
    c.enable(cqc::DB_RECORD_EN);
    c.write(cqc::CQE_DB_RECORD_ADDR_L, (db as u32) >> 1);
    c.write(cqc::CQE_DB_RECORD_ADDR_H, (db >> 32) as u32);
    bytes(c.as_le_words())
}

/// MPT words as hns_roce_v2_write_mtpt writes them (hw_v2.h layout).
fn mpt_image(key: u32, pd: u32, acc: u32, va: u64, len: u32, pbl: u64) -> Vec<u8> {
    let mut w = [0u32; 16];
    w[0] = 1 | 1 << 2 | pd << 8; // ST valid, PBL hop 1, PD
    w[1] = acc; // RW_EN bit 6, LW_EN bit 7
    w[4] = len;
    w[6] = key;
    w[7] = va as u32;
    w[8] = (va >> 32) as u32;
    // PBL_SIZE: the 4 KiB pages [va, va + len) touches. PA0/PA1 and
    // INNER_PA_VLD are left out, so the page list is always walked.
    w[9] = ((va & 0xfff) + u64::from(len)).div_ceil(0x1000) as u32;
    w[10] = (pbl >> 3) as u32;
    bytes(&w)
}

struct World {
    mem: VecMem,
    host: FakeHost,
    regs: FakeRegs,
    eng: Engine,
    t0: Instant,
}

fn world() -> World {
    let mem = VecMem::new(0x40000);
    let mut host = FakeHost::default();
    mem.write(QPC_A, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1))
        .unwrap();
    mem.write(QPC_B, &qpc_image(8, ROOT_B, RQ_DB_B, 2, 2))
        .unwrap();
    mem.write(CQC_1, &cqc_image(1, CQ1_ROOT, CQ_DB_1)).unwrap();
    mem.write(CQC_2, &cqc_image(2, CQ2_ROOT, CQ_DB_2)).unwrap();
    mem.write(MPT_1, &mpt_image(0x100, 3, 0xc0, MR_VA, 0x2000, PBL_1))
        .unwrap();
    mem.write(MPT_2, &mpt_image(0x200, 4, 0x80, MR_VA, 0x2000, PBL_1))
        .unwrap();
    for (root, sq, rq) in [(ROOT_A, SQ_A, RQ_A), (ROOT_B, SQ_B, RQ_B)] {
        put64(&mem, root, sq);
        put64(&mem, root + 8, rq);
    }
    put64(&mem, CQ1_ROOT, CQ1_BUF);
    put64(&mem, CQ2_ROOT, CQ2_BUF);
    put64(&mem, PBL_1, MR_P0);
    put64(&mem, PBL_1 + 8, MR_P1);
    let t = Table::Qpc as u32;
    host.ctx.insert((t, 8), QPC_A);
    host.ctx.insert((t, 9), QPC_B);
    host.ctx.insert((Table::Cqc as u32, 1), CQC_1);
    host.ctx.insert((Table::Cqc as u32, 2), CQC_2);
    host.ctx.insert((Table::Mpt as u32, 1), MPT_1);
    host.ctx.insert((Table::Mpt as u32, 2), MPT_2);
    host.events = vec![
        CtxEvent::Cq(1),
        CtxEvent::Cq(2),
        CtxEvent::Mpt(1),
        CtxEvent::Mpt(2),
        CtxEvent::Qp(8),
        CtxEvent::Qp(9),
    ];
    World {
        mem,
        host,
        regs: FakeRegs::new(),
        eng: Engine {
            quiet: true,
            // The error CQE in the same pass as the responder's event; the
            // lead itself has a test of its own.
            resp_event_lead: Duration::ZERO,
            ..Engine::new()
        },
        t0: Instant::now(),
    }
}

impl World {
    fn poll(&mut self, ms: u64) -> bool {
        let now = self.t0 + Duration::from_millis(ms);
        self.eng
            .poll(&mut self.host, &self.mem, &self.regs, &mut NoWire, now)
    }

    /// Writes SQ WQE `idx` of QP A (owner bit of the first pass) and
    /// rings the SQ doorbell with PI `idx + 1`.
    fn post_a(&self, idx: u32, dw0: u32, words: &[(usize, u32)], ring: bool) {
        let at = SQ_A + 64 * u64::from(idx);
        self.mem.write(at, &[0u8; 64]).unwrap();
        for &(i, v) in words {
            put32(&self.mem, at + 4 * i as u64, v);
        }
        put32(&self.mem, at, dw0 | 0x80);
        if ring {
            self.regs.0.set(u64::from(idx + 1) << 32 | 8);
        }
    }

    /// Posts SQ WQE `idx` of QP 8: a WRITE of 16 bytes with rkey 0x200 (an
    /// MR of PD 4 without remote write), which the responder rejects.
    fn post_bad_rkey_write(&self, idx: u32) {
        self.post_a(
            idx,
            0x03,
            &[
                (1, 16),
                (3, 1 << 24),
                (5, 0x200),
                (6, MR_VA as u32),
                (7, (MR_VA >> 32) as u32),
                (8, 16),
                (9, 0x100),
                (10, (MR_VA + 0x1800) as u32),
                (11, (MR_VA >> 32) as u32),
            ],
            true,
        );
    }

    /// Posts RQ WQE `idx` of QP B: one SGE, and moves its record DB.
    fn recv_b(&self, idx: u32, len: u32, lkey: u32, va: u64) {
        let at = RQ_B + 16 * u64::from(idx);
        put32(&self.mem, at, len);
        put32(&self.mem, at + 4, lkey);
        put64(&self.mem, at + 8, va);
        put32(&self.mem, RQ_DB_B, idx + 1);
    }
}

#[test]
fn qpc_decode_builds_the_three_region_buffer() {
    let q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
    assert_eq!((q.tst, q.state, q.pd, q.dqpn), (tst::RC, qps::RTS, 3, 9));
    assert_eq!(q.buf.root, ROOT_A);
    // 64 x 64 B SQ = 4 KiB, no ext SGE, 64 x 16 B RQ aligned to 4 KiB.
    assert_eq!(
        q.buf.regions[0],
        Region {
            size: 4096,
            hop: 1,
            base: 0
        }
    );
    assert_eq!(q.buf.regions[1].size, 0);
    assert_eq!(
        q.buf.regions[2],
        Region {
            size: 4096,
            hop: 1,
            base: 0
        }
    );
    assert_eq!((q.sge_off, q.rq_off), (4096, 4096));
    assert_eq!(q.rq_db, Some(RQ_DB_A));
    assert_eq!(q.sq_wqe_off(65), 64);
    assert_eq!(q.rq_wqe_off(3), 4096 + 48);
    let c = CqCtx::from_bytes(1, &cqc_image(1, CQ1_ROOT, CQ_DB_1)).unwrap();
    assert_eq!((c.depth, c.cqe_size, c.db), (64, 64, Some(CQ_DB_1)));
    assert_eq!(CqCtx::from_bytes(1, &[0u8; 64]), None);
}

#[test]
fn send_crosses_pages_and_completes_both_sides() {
    let mut w = world();
    // Source: 100 bytes at MR offset 0xfc0 (0x40 in page 0, 0x24 in
    // page 1). Destination buffer: MR offset 0x1800 (page 1).
    let src: Vec<u8> = (0..100u8).collect();
    w.mem.write(MR_P0 + 0xfc0, &src[..0x40]).unwrap();
    w.mem.write(MR_P1, &src[0x40..]).unwrap();
    w.recv_b(0, 0x200, 0x100, MR_VA + 0x1800);
    // SEND, signaled, 1 SGE: len 100, lkey 0x100, va MR_VA + 0xfc0.
    let va = MR_VA + 0xfc0;
    w.post_a(
        0,
        0x100,
        &[
            (1, 100),
            (3, 1 << 24),
            (8, 100),
            (9, 0x100),
            (10, va as u32),
            (11, (va >> 32) as u32),
        ],
        true,
    );
    assert!(w.poll(0));
    let mut got = [0u8; 100];
    w.mem.read(MR_P1 + 0x800, &mut got).unwrap();
    assert_eq!(got.to_vec(), src);
    // Receive CQE, CQ 2 slot 0: opcode SEND (1) | S_R | owner, WQE 0.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9); // LCL_QPN
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 100); // BYTE_CNT
    assert_eq!(get32(&w.mem, CQ2_BUF + 28) & 0xff_ffff, 8); // RMT_QPN
                                                            // Send CQE, CQ 1 slot 0: opcode SEND (0), owner, WQE 0, QPN 8.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    assert_eq!(get32(&w.mem, CQ1_BUF + 12), 8);
    assert_eq!(w.eng.sq_ci(8), Some(1));
    // No arm doorbell was seen, yet both CQs got their event (CEQ 0).
    assert_eq!(w.host.ceqes, vec![(0, 1), (0, 2)]);
}

#[test]
fn receiver_not_ready_waits_and_every_cq_gets_events() {
    let mut w = world();
    // Arm CQ 2 (CQ_NOTIFY doorbell, CI 0): no CQE, no event.
    w.regs.0.set(0x0400_0002);
    w.poll(0);
    assert!(w.host.ceqes.is_empty());
    // SEND_WITH_IMM of 8 inline bytes, no receive posted yet.
    w.post_a(
        0,
        0x02 | 0x1000,
        &[(1, 8), (2, 0x1234_5678), (8, 0x6463_6261), (9, 0x6867_6665)],
        true,
    );
    assert!(!w.poll(1));
    assert_eq!(w.eng.sq_ci(8), Some(0));
    assert_eq!(get32(&w.mem, CQ2_BUF), 0);
    // A receive arrives (only the record doorbell moves).
    w.recv_b(0, 64, 0x100, MR_VA);
    assert!(w.poll(2));
    let mut got = [0u8; 8];
    w.mem.read(MR_P0, &mut got).unwrap();
    assert_eq!(&got, b"abcdefgh");
    // SEND_WITH_IMM (2) | S_R | owner; the immediate as posted.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c2);
    assert_eq!(get32(&w.mem, CQ2_BUF + 4), 0x1234_5678);
    // One event per CQ on CEQ 0 (CQ 1, whose arm the model never
    // saw, included).
    assert_eq!(w.host.ceqes, vec![(0, 1), (0, 2)]);
    // Armed for ever: a second completion raises again.
    w.recv_b(1, 64, 0x100, MR_VA);
    w.post_a(1, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
    assert!(w.poll(3));
    assert_eq!(w.host.ceqes, vec![(0, 1), (0, 2), (0, 1), (0, 2)]);
    // Second CQE at slot 1, WQE index 1.
    assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0x0001_00c1);
}

const MPT_FR: u64 = 0x1700; // FRMR, index 3

/// A world with a free FRMR at MPT index 3 (PD 3) as
/// `hns_roce_v2_frmr_write_mtpt` leaves it: ST free (2), PBL_HOP_NUM 1,
/// R_INV_EN (bit 33), FRE (bit 64), PBL_BA = PBL_1.
fn frmr_world() -> World {
    let mut w = world();
    let mut m = [0u32; 16];
    m[0] = 2 | 1 << 2 | 3 << 8;
    m[1] = 1 << 1;
    m[2] = 1;
    m[9] = 2;
    m[10] = (PBL_1 >> 3) as u32;
    w.mem.write(MPT_FR, &bytes(&m)).unwrap();
    w.host.ctx.insert((Table::Mpt as u32, 3), MPT_FR);
    w.host.events.push(CtxEvent::Mpt(3));
    w
}

/// FAST_REG_PMR words of QP A: key `key`, PBL_1 (2 pages of 4 KiB),
/// length 0x2000 at IOVA 0x5000_0000, LW + RW.
fn fast_reg_words(key: u32) -> Vec<(usize, u32)> {
    vec![
        (1, PBL_1 as u32),
        (2, 0),
        (3, 0x2000),
        (4, 0),
        (5, key),
        (6, 0x5000_0000),
        (7, 0),
        (8, 2),
        (9, 1 << 13 | 1 << 14),
    ]
}

#[test]
fn fast_reg_then_write_through_it_then_send_with_invalidate() {
    let mut w = frmr_world();
    // Register key 0x305 (index 3).
    w.post_a(0, 0x0a, &fast_reg_words(0x305), true);
    assert!(w.poll(0));
    // Send CQE: opcode FAST_REG_PMR (0xa) | owner, success.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_008a);
    // The MPT: ST valid, RW_EN | LW_EN | R_INV_EN, LEN, LKEY, VA.
    assert_eq!(get32(&w.mem, MPT_FR), 1 | 1 << 2 | 3 << 8);
    assert_eq!(get32(&w.mem, MPT_FR + 4), 1 << 1 | 1 << 6 | 1 << 7);
    assert_eq!(get32(&w.mem, MPT_FR + 16), 0x2000);
    assert_eq!(get32(&w.mem, MPT_FR + 24), 0x305);
    assert_eq!(get32(&w.mem, MPT_FR + 28), 0x5000_0000);
    assert_eq!(get32(&w.mem, MPT_FR + 36), 2);
    assert_eq!(get32(&w.mem, MPT_FR + 40), (PBL_1 >> 3) as u32);
    // RDMA_WRITE of 8 inline bytes to IOVA 0x5000_1004 (page 1).
    w.post_a(
        1,
        0x03 | 0x1000,
        &[
            (1, 8),
            (5, 0x305),
            (6, 0x5000_1004),
            (8, 0x6463_6261),
            (9, 0x6867_6665),
        ],
        true,
    );
    assert!(w.poll(1));
    let mut got = [0u8; 8];
    w.mem.read(MR_P1 + 4, &mut got).unwrap();
    assert_eq!(&got, b"abcdefgh");
    // SEND_WITH_INV of rkey 0x305 (inv_key, dw2) into QP B's receive.
    w.recv_b(0, 64, 0x100, MR_VA);
    w.post_a(
        2,
        0x01 | 0x1000,
        &[(1, 4), (2, 0x305), (8, 0x3433_3231)],
        true,
    );
    assert!(w.poll(2));
    // Receive CQE: opcode SEND_WITH_INV (3) | S_R | owner; dw1 (rkey)
    // = the invalidated key.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c3);
    assert_eq!(get32(&w.mem, CQ2_BUF + 4), 0x305);
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 4);
    assert_eq!(get32(&w.mem, MPT_FR) & 3, 2); // ST free
                                              // The key is gone: a WRITE through it is a remote access error.
    w.post_a(
        3,
        0x03 | 0x1000,
        &[(1, 4), (5, 0x305), (6, 0x5000_0000), (8, 1)],
        true,
    );
    assert!(w.poll(3));
    assert_eq!(get32(&w.mem, CQ1_BUF + 3 * 64), 0x0003_1383);
    // The counters of hns-sim.log's data line: one REG_MR, one
    // SEND_WITH_INV and its remote invalidation (one engine plays both
    // ends here), no LOCAL_INV.
    let e = w.eng.stats;
    assert_eq!(
        (e.reg_mr, e.local_inv, e.send_inv, e.remote_inv),
        (1, 0, 1, 1)
    );
}

#[test]
fn local_invalidate_frees_the_key_and_fast_reg_needs_a_free_frmr() {
    let mut w = frmr_world();
    // Key 0x3_07: index 3 with the low byte bumped by the ULP.
    w.post_a(0, 0x0a, &fast_reg_words(0x307), true);
    assert!(w.poll(0));
    assert_eq!(get32(&w.mem, MPT_FR + 24), 0x307);
    // Registering a valid MR again: local protection error, QP stops.
    let mut v = frmr_world();
    v.post_a(0, 0x0a, &fast_reg_words(0x307), true);
    v.poll(0);
    v.post_a(1, 0x0a, &fast_reg_words(0x308), true);
    assert!(v.poll(1));
    assert_eq!(get32(&v.mem, CQ1_BUF + 64), 0x0001_048a);
    // LOCAL_INV (0xb) of 0x307, then a SEND gathering from it.
    w.post_a(1, 0x0b, &[(2, 0x307)], true);
    assert!(w.poll(1));
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_008b);
    assert_eq!(get32(&w.mem, MPT_FR) & 3, 2);
    w.recv_b(0, 64, 0x100, MR_VA);
    w.post_a(
        2,
        0x00,
        &[(1, 8), (3, 1 << 24), (8, 8), (9, 0x307), (10, 0x5000_0000)],
        true,
    );
    assert!(w.poll(2));
    // LOC_PROT_ERR (0x04), SEND (0), WQE 2.
    assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0480);
    // Only what succeeded is counted: v's second REG_MR failed.
    let e = w.eng.stats;
    assert_eq!((e.reg_mr, e.local_inv, e.send_inv), (1, 1, 0));
    assert_eq!((v.eng.stats.reg_mr, v.eng.stats.local_inv), (1, 0));
}

#[test]
fn rnr_retries_run_out_after_the_responders_timer() {
    let mut w = world();
    // QP A: rnr_retry 1; QP B: min_rnr_timer 16 (2.56 ms).
    let a = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
        c.write(qpc::RNR_NUM_INIT, 1);
        c.write(qpc::RNR_CNT, 1);
    });
    let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| c.write(qpc::MIN_RNR_TIME, 16));
    w.mem.write(QPC_A, &a).unwrap();
    w.mem.write(QPC_B, &b).unwrap();
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
    // First try: RNR NAK, one retry left, due at 2.56 ms.
    assert!(!w.poll(0));
    assert!(!w.poll(1));
    assert!(!w.poll(2));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0);
    // The retry at 3 ms finds no receive either: RNR_RETRY_EXC_ERR.
    assert!(w.poll(3));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1680);
    assert_eq!(get32(&w.mem, CQ2_BUF), 0);

    // A receive posted during the timer is taken by the retry.
    let mut w = world();
    w.mem.write(QPC_A, &a).unwrap();
    w.mem.write(QPC_B, &b).unwrap();
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
    assert!(!w.poll(0));
    w.recv_b(0, 64, 0x100, MR_VA);
    assert!(!w.poll(1));
    assert!(w.poll(3));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);

    // rnr_retry 0: the first RNR NAK ends it.
    let mut w = world();
    let a0 = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
        c.write(qpc::RNR_NUM_INIT, 0);
        c.write(qpc::RNR_CNT, 0);
    });
    w.mem.write(QPC_A, &a0).unwrap();
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x3433_3231)], true);
    assert!(w.poll(0));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1680);
}

#[test]
fn rnr_delay_follows_the_ib_timer_table() {
    assert_eq!(rnr_delay(0), Duration::from_micros(655_360));
    assert_eq!(rnr_delay(1), Duration::from_micros(10));
    assert_eq!(rnr_delay(12), Duration::from_micros(640));
    assert_eq!(rnr_delay(31), Duration::from_micros(491_520));
}

#[test]
fn rdma_write_with_imm_and_bad_rkey() {
    let mut w = world();
    w.mem.write(MR_P0, b"0123456789abcdef").unwrap();
    w.recv_b(0, 0, 0, 0);
    // WRITE_WITH_IMM 16 bytes from MR_VA to MR_VA + 0x1010 (rkey 0x100).
    let dst = MR_VA + 0x1010;
    w.post_a(
        0,
        0x04,
        &[
            (1, 16),
            (2, 0xabcd),
            (3, 1 << 24),
            (5, 0x100),
            (6, dst as u32),
            (7, (dst >> 32) as u32),
            (8, 16),
            (9, 0x100),
            (10, MR_VA as u32),
            (11, (MR_VA >> 32) as u32),
        ],
        true,
    );
    assert!(w.poll(0));
    let mut got = [0u8; 16];
    w.mem.read(MR_P1 + 0x10, &mut got).unwrap();
    assert_eq!(&got, b"0123456789abcdef");
    // Receive CQE: RDMA_WRITE_IMM (0) | S_R | owner, imm, byte count.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c0);
    assert_eq!(get32(&w.mem, CQ2_BUF + 4), 0xabcd);
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 16);
    // A plain WRITE with rkey 0x200 (an MR of PD 4, no remote write):
    // requester CQE REM_ACCESS_ERR (0x13), memory untouched, QP stops.
    w.post_bad_rkey_write(1);
    w.host.probe = Some(CQ1_BUF + 64);
    assert!(w.poll(1));
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_1383);
    let mut same = [0u8; 16];
    w.mem.read(MR_P0, &mut same).unwrap();
    assert_eq!(&same, b"0123456789abcdef");
    // The responder QP 9 gets LOCAL_WQ_ACCESS_ERROR (0x07), posted while
    // the requester's error CQE was not written yet (hardware order).
    assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
    assert_eq!(w.host.at_event, vec![0]);
    // Stopped: a further WQE is not executed.
    w.post_a(2, 0x03, &[(1, 0)], true);
    assert!(!w.poll(2));
    assert_eq!(w.eng.sq_ci(8), Some(2));
}

#[test]
fn requester_error_trails_the_responders_event() {
    let mut w = world();
    w.eng.resp_event_lead = Duration::from_millis(50);
    w.mem.write(MR_P0, b"0123456789abcdef").unwrap();
    w.post_bad_rkey_write(0);
    w.poll(1);
    // The responder's LOCAL_WQ_ACCESS_ERROR is out, the requester's
    // REM_ACCESS_ERR CQE not yet, nor 30 ms later.
    assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0);
    w.poll(31);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0);
    // Due 50 ms after the event.
    assert!(w.poll(51));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1383);
}

#[test]
fn rdma_read_into_local_sges() {
    let mut w = world();
    w.mem.write(MR_P1 + 0x100, b"remote!!").unwrap();
    // READ 8 bytes from MR_VA + 0x1100 (rkey 0x100) into MR_VA + 0x10:
    // QP B has no remote read enabled yet -> REM_ACCESS_ERR.
    let src = MR_VA + 0x1100;
    let words = [
        (1, 8),
        (3, 1 << 24),
        (5, 0x100),
        (6, src as u32),
        (7, (src >> 32) as u32),
        (8, 8),
        (9, 0x100),
        (10, (MR_VA + 0x10) as u32),
        (11, (MR_VA >> 32) as u32),
    ];
    w.post_a(0, 0x05, &words, true);
    assert!(w.poll(0));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1385);
    assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
    // With RRE on QP B and RR_EN on the MR it completes, and the send
    // CQE reports the length read.
    let mut b = w
        .mem
        .0
        .borrow()
        .get(QPC_B as usize..QPC_B as usize + 256)
        .unwrap()
        .to_vec();
    b[75] |= 1 << 1; // RRE is bit 601 = byte 75 bit 1
    w.mem.write(QPC_B, &b).unwrap();
    let mut m = [0u8; 4];
    w.mem.read(MPT_1 + 4, &mut m).unwrap();
    put32(&w.mem, MPT_1 + 4, u32::from_le_bytes(m) | 1 << 5); // RR_EN
    let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
    q.state = qps::RESET;
    w.eng.update_qp(q);
    w.host.events = vec![CtxEvent::Qp(8), CtxEvent::Qp(9)];
    w.post_a(0, 0x05, &words, true);
    // The doorbell word is the same as before the reset: still a new
    // ring (the model takes the word, it does not compare values).
    assert!(w.poll(1));
    assert_eq!(w.eng.stats.scan_found, 0);
    let mut got = [0u8; 8];
    w.mem.read(MR_P0 + 0x10, &mut got).unwrap();
    assert_eq!(&got, b"remote!!");
    // CQ 1 slot 1 (its PI survived the QP reset): READ (5), owner, 8 bytes.
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0000_0085);
    assert_eq!(get32(&w.mem, CQ1_BUF + 64 + 16), 8);
}

#[test]
fn lkey_of_another_pd_is_a_local_protection_error() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    // SEND gathering through lkey 0x200 (PD 4) on a QP of PD 3.
    w.post_a(
        0,
        0x00,
        &[
            (1, 8),
            (3, 1 << 24),
            (8, 8),
            (9, 0x200),
            (10, MR_VA as u32),
            (11, (MR_VA >> 32) as u32),
        ],
        true,
    );
    assert!(w.poll(0));
    // LOC_PROT_ERR (0x04) on the requester; the receive is untouched.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0480);
    assert_eq!(get32(&w.mem, CQ2_BUF), 0);
}

#[test]
fn receive_too_small_is_a_length_error_on_both_sides() {
    let mut w = world();
    w.recv_b(0, 4, 0x100, MR_VA);
    w.post_a(0, 0x1000, &[(1, 8), (8, 1), (9, 2)], true);
    assert!(w.poll(0));
    // Responder: LOC_LEN_ERR (0x01); requester: REM_INV_REQ_ERR (0x12).
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_01c1);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1280);
    // The responder's CQE reports it: no asynchronous event.
    assert!(w.host.aeqes.is_empty());
}

#[test]
fn lost_doorbell_found_by_the_scan_after_the_stability_delay() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    // Posted, but the doorbell word was overwritten (no SQ doorbell).
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], false);
    assert!(!w.poll(0));
    assert!(!w.poll(5));
    assert!(!w.poll(99));
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // Valid and unchanged STABLE later: executed.
    assert!(w.poll(100));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(w.eng.stats.scan_found, 1);
    let mut got = [0u8; 4];
    w.mem.read(MR_P0, &mut got).unwrap();
    assert_eq!(&got, b"ABCD");
}

/// libhns' `ibv_wr_*` path: the owner bit goes valid when the WQE is
/// started, length and inline data come later, then the doorbell. A
/// producer preempted in between must not have its WQE taken half
/// written (ib_write_lat hung on that: its 2-byte inline write went out
/// with the fresh slot's zero length).
#[test]
fn a_wqe_still_being_written_waits_for_its_doorbell() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    let at = SQ_A;
    // Started: opcode SEND, owner bit, inline; no length, no data yet.
    put32(&w.mem, at, 0x1000 | 0x80);
    assert!(!w.poll(0));
    // Preempted for a few scheduler ticks: nothing taken.
    assert!(!w.poll(20));
    // Finished 30 ms later (the bytes changed: the clock restarts)...
    put32(&w.mem, at + 4, 4);
    put32(&w.mem, at + 32, 0x4443_4241);
    assert!(!w.poll(30));
    assert!(!w.poll(110));
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // ...and rung: executed with its final contents, no scan involved.
    w.regs.0.set(1u64 << 32 | 8);
    assert!(w.poll(111));
    assert_eq!(w.eng.stats.scan_found, 0);
    let mut got = [0u8; 4];
    w.mem.read(MR_P0, &mut got).unwrap();
    assert_eq!(&got, b"ABCD");
    // Had the doorbell been lost, the scan would have taken it STABLE
    // after the last change, not before.
    assert_eq!(w.eng.sq_ci(8), Some(1));
}

#[test]
fn a_function_reset_drops_the_kernel_doorbells_left_behind() {
    let mut w = world();
    w.poll(0);
    // QP 8's last kernel ring (PI 5) was never taken: the QP left RTS
    // first.
    let at = DWQE_BASE + 8 * DWQE_SIZE;
    let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
    q.state = qps::ERR;
    w.eng.update_qp(q);
    w.regs.1.borrow_mut().insert(at, 5u64 << 32 | 8);
    w.poll(1);
    assert_eq!(w.regs.1.borrow().get(&at), Some(&(5u64 << 32 | 8)));
    // FUNC_CLEAR: the next pass takes every kernel doorbell word, so a
    // new QP 8 does not start with PI 5 "rung".
    w.host.events = vec![CtxEvent::Reset];
    w.poll(2);
    assert!(w.regs.1.borrow().is_empty());
    assert_eq!(w.eng.stats.doorbells, 0);
}

#[test]
fn the_same_doorbell_value_twice_is_two_rings() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    w.recv_b(1, 64, 0x100, MR_VA);
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
    assert!(w.poll(0));
    assert_eq!(w.eng.stats.doorbells, 1);
    // Nothing rung: the word the model took stays taken.
    assert!(!w.poll(1));
    assert_eq!(w.eng.stats.doorbells, 1);
    // The QP is reset and reused: its first doorbell is the same word.
    let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
    q.state = qps::RESET;
    w.eng.update_qp(q);
    w.host.events = vec![CtxEvent::Qp(8)];
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4847_4645)], true);
    assert!(w.poll(2));
    assert_eq!(w.eng.stats.doorbells, 2);
    assert_eq!(w.eng.stats.scan_found, 0);
}

#[test]
fn a_qp_back_in_reset_starts_from_zero() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    w.post_a(0, 0x1000, &[(1, 1), (8, 1)], true);
    assert!(w.poll(0));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
    q.state = qps::RESET;
    w.eng.update_qp(q.clone());
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // A CQ destroyed (CQ_ST 0) is forgotten.
    assert!(w.eng.has_cq(1));
    w.eng.update_cq(1, None);
    assert!(!w.eng.has_cq(1));
}

/// pyverbs' `restate_qps` (test_mr): RESET, INIT, RTR, RTS on a used QP
/// (the C driver and libhns leave the SQ as it was), all before the
/// engine's next pass. The model restarts at 0, and the previous life's
/// WQEs in the slots past the new doorbells, owner bits valid for the
/// first pass, are not new work for the scan: it used to execute them
/// (a stale SEND took the peer's next receive, `Data validation
/// failure`; one on an RNR-waiting peer was re-taken 6199 times).
#[test]
fn the_scan_leaves_the_wqes_of_a_qps_previous_life_alone() {
    let mut w = world();
    for i in 0..3 {
        w.recv_b(i, 64, 0x100, MR_VA + 64 * u64::from(i));
        w.post_a(i, 0x1000, &[(1, 1), (8, u32::from(b'a') + i)], true);
        assert!(w.poll(u64::from(i)));
    }
    assert_eq!(w.eng.sq_ci(8), Some(3));
    // RESET .. RTS in one go: the firmware queued a restart, the QPC
    // read at the pass says RTS.
    w.host.events.push(CtxEvent::QpRestart(8));
    w.host.events.push(CtxEvent::Qp(8));
    assert!(!w.poll(10));
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // One new WQE with its doorbell; B has a fresh receive (its RQ
    // restarted as well: record DB 4 of a 4th slot).
    w.recv_b(3, 64, 0x100, MR_VA + 0x400);
    w.post_a(0, 0x1000, &[(1, 1), (8, u32::from(b'x'))], true);
    assert!(w.poll(20));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    // Slots 1 and 2 stay untouched however long they look valid.
    assert!(!w.poll(200));
    assert!(!w.poll(400));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(w.eng.stats.scan_found, 0);
    // A new WQE there whose doorbell is lost is still found.
    w.recv_b(4, 64, 0x100, MR_VA + 0x440);
    w.post_a(1, 0x1000, &[(1, 1), (8, u32::from(b'y'))], false);
    assert!(!w.poll(500));
    assert!(w.poll(600));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    assert_eq!(w.eng.stats.scan_found, 1);
}

/// QP A (8) moved to `state` by a MODIFY_QPC as the C driver builds it,
/// with the events the firmware queues: a restart for RESET and for INIT
/// from another state, then the QPC change. The INIT context names no
/// WQE buffer yet (`modify_qp_reset_to_init` clears it; the buffer comes
/// with RTR, `config_qp_rq_buf`); RESET keeps the merged old one.
fn modify_a(w: &mut World, was: u32, state: u32) {
    let img = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
        c.write(qpc::QP_ST, state);
        if state == qps::INIT {
            c.write(qpc::WQE_SGE_BA_L, 0);
            c.write(qpc::WQE_SGE_BA_H, 0);
        }
    });
    w.mem.write(QPC_A, &img).unwrap();
    if state == qps::RESET || (state == qps::INIT && was != qps::INIT) {
        w.host.events.push(CtxEvent::QpRestart(8));
    }
    w.host.events.push(CtxEvent::Qp(8));
}

/// pyverbs' `restate_qps` as the guest does it: RESET, INIT, RTR, RTS
/// one mailbox at a time, the engine polling between them (it reads each
/// QPC as it comes). The previous life's WQEs must stay stale through
/// all four, however long they then sit in the SQ with valid owner bits
/// — even after their MR moved to another PD (test_mr_rereg_pd: the
/// scan executed the old SEND 100 ms after RTS and it failed with
/// LOC_PROT_ERR) — and a ring of the old life left in the kernel
/// doorbell word must not count for the new one. A new WQE is still found
/// by its doorbell, and one whose doorbell is lost by the scan.
#[test]
fn a_restart_one_mailbox_at_a_time_keeps_the_old_wqes_stale() {
    let mut w = world();
    for i in 0..3 {
        w.recv_b(i, 64, 0x100, MR_VA + 64 * u64::from(i));
        w.post_a(i, 0x1000, &[(1, 1), (8, u32::from(b'a') + i)], true);
        assert!(w.poll(u64::from(i)));
    }
    assert_eq!(w.eng.sq_ci(8), Some(3));
    // The old life's last ring on the kernel doorbell word, never taken
    // (rung while the QP was outside INIT..SQD, e.g. ib_drain_sq's WR in
    // ERR): read at INIT it would cover the old WQEs 0..2 as if rung.
    w.regs
        .1
        .borrow_mut()
        .insert(DWQE_BASE + 8 * DWQE_SIZE, 3 << 32 | 8);
    let mut was = qps::RTS;
    for (t, st) in [
        (10, qps::RESET),
        (11, qps::INIT),
        (12, qps::RTR),
        (13, qps::RTS),
    ] {
        modify_a(&mut w, was, st);
        assert!(!w.poll(t));
        was = st;
    }
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // The receives of B were consumed by the old sends; give B new ones:
    // nothing may take them.
    w.recv_b(3, 64, 0x100, MR_VA + 0x400);
    for t in [20, 150, 300, 600] {
        assert!(!w.poll(t), "a stale WQE was executed at {t} ms");
    }
    assert_eq!(w.eng.sq_ci(8), Some(0));
    assert_eq!(w.eng.stats.scan_found, 0);
    // A new WQE 0, rung: executed.
    w.post_a(0, 0x1000, &[(1, 1), (8, u32::from(b'x'))], true);
    assert!(w.poll(700));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    // A new WQE 1 whose doorbell is lost: the scan, 100 ms later.
    w.recv_b(4, 64, 0x100, MR_VA + 0x440);
    w.post_a(1, 0x1000, &[(1, 1), (8, u32::from(b'y'))], false);
    assert!(!w.poll(710));
    assert!(w.poll(820));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    assert_eq!(w.eng.stats.scan_found, 1);
    // Slot 2 still holds the old 'c' send: left alone.
    assert!(!w.poll(1000));
    assert_eq!(w.eng.sq_ci(8), Some(2));
}

/// The bad-DMA check: MR 1's page list is rewritten behind the
/// firmware's back (no CREATE_MPT: what a stale translation looks
/// like), so a receive into it would land on a page MR 1 never mapped.
/// The write is refused and counted, the page untouched, the receive
/// completes in error; a destroyed CQ gets no CQE either.
#[test]
fn writes_outside_the_live_objects_are_refused_and_counted() {
    let mut w = world();
    assert!(!w.poll(0)); // the creation events
    const ELSEWHERE: u64 = 0x38000;
    put64(&w.mem, PBL_1, ELSEWHERE);
    w.recv_b(0, 64, 0x100, MR_VA);
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
    assert!(w.poll(1));
    assert_eq!(w.eng.stats.bad_dma, 1);
    assert_eq!(get32(&w.mem, ELSEWHERE), 0);
    // B's receive CQE: LOC_PROT_ERR (0x04), A's: REM_OP_ERR (0x14).
    assert_eq!(get32(&w.mem, CQ2_BUF) >> 8 & 0xff, 0x04);
    assert_eq!(get32(&w.mem, CQ1_BUF) >> 8 & 0xff, 0x14);
    // CQ 1 destroyed by its CQC, then a CQE for it: not written.
    w.mem.write(CQC_1, &[0u8; 64]).unwrap();
    w.host.events.push(CtxEvent::Cq(1));
    assert!(!w.poll(2));
    w.eng.live.borrow_mut().set_pages(Owner::Cq(1), 12, []);
    w.eng
        .update_cq(1, CqCtx::from_bytes(1, &cqc_image(1, CQ1_ROOT, CQ_DB_1)));
    w.eng.push_cqe(&w.mem, 1, &Cqe::default());
    assert_eq!(w.eng.stats.bad_dma, 1);
    assert_eq!(w.eng.live.borrow().bad, 2);
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0);
}

/// Moves QP 8 (QPC_A) to ERR with the driver's heads `sq`/`rq`, as
/// v2_set_flushed_fields writes them, through a mailbox event.
fn qp_a_to_err(w: &mut World, sq: u32, rq: u32) {
    let img = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
        c.write(qpc::QP_ST, qps::ERR);
        c.write(qpc::SQ_PRODUCER_IDX, sq);
        c.write(qpc::RQ_PRODUCER_IDX, rq);
    });
    w.mem.write(QPC_A, &img).unwrap();
    w.host.events.push(CtxEvent::Qp(8));
}

#[test]
fn move_to_err_flushes_outstanding_sq_and_rq_wqes() {
    let mut w = world();
    // QP A: two receives posted (RQ WQEs 0 and 1, head 2).
    for i in 0..2u64 {
        put32(&w.mem, RQ_A + 16 * i, 64);
        put32(&w.mem, RQ_A + 16 * i + 4, 0x100);
    }
    put32(&w.mem, RQ_DB_A, 2);
    // WQE 0: a SEND that completes. B has one receive only, so the
    // SENDs 1 and 2 wait (receiver not ready).
    w.recv_b(0, 64, 0x100, MR_VA);
    w.post_a(0, 0x1000, &[(1, 1), (8, 0x41)], true);
    assert!(w.poll(0));
    w.post_a(1, 0x1000, &[(1, 1), (8, 0x42)], false);
    w.post_a(2, 0x1000, &[(1, 1), (8, 0x43)], true);
    assert!(!w.poll(1));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0);
    // The driver moves A to ERR with sq.head 3 and rq.head 2.
    qp_a_to_err(&mut w, 3, 2);
    assert!(w.poll(2));
    // CQ 1 (A's send and receive CQ): slot 0 the SEND's success, then
    // SQ WQEs 1 and 2 flushed (status 5, opcode SEND, WQE index), then
    // RQ WQEs 0 and 1 flushed (S_R set, RQ WQE index), QPN 8 in each.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0580);
    assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0580);
    assert_eq!(get32(&w.mem, CQ1_BUF + 192), 0x0000_05c1);
    assert_eq!(get32(&w.mem, CQ1_BUF + 256), 0x0001_05c1);
    for slot in 1..5u64 {
        assert_eq!(get32(&w.mem, CQ1_BUF + 64 * slot + 12), 8);
    }
    assert_eq!(get32(&w.mem, CQ1_BUF + 320), 0);
    assert_eq!(w.eng.sq_ci(8), Some(3));
    // Nothing more: a second pass writes nothing.
    assert!(!w.poll(3));
    // A WQE posted in ERR: the driver moves to ERR again with head 4;
    // only WQE 3 is flushed (slot 5).
    w.post_a(3, 0x03, &[(1, 0)], true);
    qp_a_to_err(&mut w, 4, 2);
    assert!(w.poll(4));
    assert_eq!(get32(&w.mem, CQ1_BUF + 320), 0x0003_0583);
    assert_eq!(get32(&w.mem, CQ1_BUF + 384), 0);
    // Back to RESET: the indexes start from 0 again, nothing flushed.
    let mut q = QpCtx::from_bytes(8, &qpc_image(9, ROOT_A, RQ_DB_A, 1, 1));
    q.state = qps::RESET;
    w.eng.update_qp(q);
    assert_eq!(w.eng.sq_ci(8), Some(0));
}

#[test]
fn flush_waits_for_cq_space() {
    let mut w = world();
    // CQ 1 holds 64 CQEs, its consumer index (record doorbell) at 0.
    // 30 SQ and 40 RQ WQEs outstanding at the move to ERR.
    qp_a_to_err(&mut w, 30, 40);
    assert!(w.poll(0));
    // 64 flush CQEs fill the CQ: SQ WQEs 0..29, RQ WQEs 0..33.
    assert_eq!(get32(&w.mem, CQ1_BUF + 6 * 64), 0x0006_0580);
    assert_eq!(get32(&w.mem, CQ1_BUF + 29 * 64), 0x001d_0580);
    assert_eq!(get32(&w.mem, CQ1_BUF + 30 * 64), 0x0000_05c1);
    assert_eq!(get32(&w.mem, CQ1_BUF + 63 * 64), 0x0021_05c1);
    // The 65th found CQ 1 full: one CQ_OVERFLOW AEQE for CQ 1.
    assert_eq!(w.host.aeqes, vec![(aev::CQ_OVERFLOW, 0, 1)]);
    assert!(!w.poll(1));
    // Still full: no second event.
    assert_eq!(w.host.aeqes.len(), 1);
    // The consumer frees 10 slots: the last 6 RQ flushes (WQEs 34..39)
    // go to slots 0..5 with owner bit 0 (second pass); slot 6 keeps
    // its first-pass CQE.
    put32(&w.mem, CQ_DB_1, 10);
    assert!(w.poll(2));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0022_0541);
    assert_eq!(get32(&w.mem, CQ1_BUF + 5 * 64), 0x0027_0541);
    assert_eq!(get32(&w.mem, CQ1_BUF + 6 * 64), 0x0006_0580);
    assert!(!w.poll(3));
    assert_eq!(w.host.aeqes.len(), 1);
}

const SRQC_5: u64 = 0x1500;
const SRQ_DB: u64 = 0x1820;
const SRQ_WQE_ROOT: u64 = 0xd000;
const SRQ_IDX_ROOT: u64 = 0xd800;
const SRQ_WQE: u64 = 0xe000;
const SRQ_IDX: u64 = 0xf000;

/// SRQC of SRQ 5 as hns_roce_v2_write_srqc builds it: 16 WQEs of one
/// SGE, PD 3, WQE buffer and index queue hop 1, record doorbell,
/// limit `limit`.
fn srqc_image(limit: u32) -> Vec<u8> {
    let mut c: Ctx<Srqc, 16> = Ctx::zeroed();
    c.write(srqc::SRQ_ST, 1);
    c.write(srqc::SRQN, 5);
    c.write(srqc::SHIFT, 4);
    c.write(srqc::RQWS, 0);
    c.write(srqc::PD, 3);
    c.write(srqc::WQE_HOP_NUM, 1);
    c.write(srqc::WQE_BT_BA_L, (SRQ_WQE_ROOT >> 3) as u32);
    c.write(srqc::IDX_HOP_NUM, 1);
    c.write(srqc::IDX_BT_BA_L, (SRQ_IDX_ROOT >> 3) as u32);
    c.enable(srqc::DB_RECORD_EN);
    c.write(srqc::DB_RECORD_ADDR_L, (SRQ_DB as u32) >> 1);
    c.write(srqc::LIMIT_WL, limit);
    bytes(c.as_le_words())
}

/// QP B (9) on SRQ 5, SRQ 5 with limit 2, both announced.
fn srq_world() -> World {
    let mut w = world();
    w.mem.write(SRQC_5, &srqc_image(2)).unwrap();
    put64(&w.mem, SRQ_WQE_ROOT, SRQ_WQE);
    put64(&w.mem, SRQ_IDX_ROOT, SRQ_IDX);
    let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| {
        c.enable(qpc::SRQ_EN);
        c.write(qpc::SRQN, 5);
    });
    w.mem.write(QPC_B, &b).unwrap();
    w.host.ctx.insert((Table::Srqc as u32, 5), SRQC_5);
    w.host.events.push(CtxEvent::Srq(5));
    w
}

impl World {
    /// Posts SRQ WQE `wqe` (one SGE: 64 bytes at `va`, lkey 0x100) as
    /// the `h`-th index queue entry, record doorbell `h + 1`.
    fn srq_recv(&self, h: u32, wqe: u32, va: u64) {
        let at = SRQ_WQE + 16 * u64::from(wqe);
        put32(&self.mem, at, 64);
        put32(&self.mem, at + 4, 0x100);
        put64(&self.mem, at + 8, va);
        put32(&self.mem, SRQ_IDX + 4 * u64::from(h), wqe);
        put32(&self.mem, SRQ_DB, h + 1);
    }
}

#[test]
fn srqc_decode() {
    let c = SrqCtx::from_bytes(5, &srqc_image(2)).unwrap();
    assert_eq!((c.srqn, c.shift, c.rqws, c.pd, c.limit), (5, 4, 0, 3, 2));
    assert_eq!(
        (c.buf.root, c.idx.root, c.db),
        (SRQ_WQE_ROOT, SRQ_IDX_ROOT, Some(SRQ_DB))
    );
    // 16 x 16 B WQEs and 16 x 4 B index entries, each one 4 KiB page.
    assert_eq!(
        c.buf.regions,
        vec![Region {
            size: 4096,
            hop: 1,
            base: 0
        }]
    );
    assert_eq!(
        c.idx.regions,
        vec![Region {
            size: 4096,
            hop: 1,
            base: 0
        }]
    );
    assert!(!c.xrc);
    assert_eq!(SrqCtx::from_bytes(5, &[0u8; 64]), None);
}

#[test]
fn send_to_an_srq_qp_takes_wqes_in_index_queue_order() {
    let mut w = srq_world();
    // Index queue: WQE 7 (MR_VA), then WQE 3 (MR_VA + 0x100).
    w.srq_recv(0, 7, MR_VA);
    w.srq_recv(1, 3, MR_VA + 0x100);
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
    assert!(w.poll(0));
    let mut got = [0u8; 4];
    w.mem.read(MR_P0, &mut got).unwrap();
    assert_eq!(&got, b"ABCD");
    // Receive CQE on B's CQ 2: SEND | S_R | owner, WQE_IDX = SRQ WQE 7.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0007_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9);
    // One WQE left < limit 2: SRQ_LIMIT_REACH (0x08) for SRQ 5, and
    // the limit in the SRQC is disarmed (LIMIT_WL, dw1 15:0).
    assert_eq!(w.host.aeqes, vec![(0x08, 0, 5)]);
    assert_eq!(get32(&w.mem, SRQC_5 + 4) & 0xffff, 0);
    w.post_a(1, 0x1000, &[(1, 4), (8, 0x4847_4645)], true);
    assert!(w.poll(1));
    w.mem.read(MR_P0 + 0x100, &mut got).unwrap();
    assert_eq!(&got, b"EFGH");
    assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0x0003_00c1);
    assert_eq!(w.eng.srq_ci(5), Some(2));
    // Disarmed: no second event.
    assert_eq!(w.host.aeqes.len(), 1);
    // SRQ empty: the next SEND waits (receiver not ready).
    w.post_a(2, 0x1000, &[(1, 4), (8, 0x4c4b_4a49)], true);
    assert!(!w.poll(2));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    // A new receive (WQE 0) lets it through.
    w.srq_recv(2, 0, MR_VA + 0x200);
    assert!(w.poll(3));
    assert_eq!(get32(&w.mem, CQ2_BUF + 128), 0x0000_00c1);
    // B to ERR with RQ head 5: no RQ flush (it has no RQ), but the
    // last-WQE-reached event (0x09) for QP 9.
    let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| {
        c.enable(qpc::SRQ_EN);
        c.write(qpc::SRQN, 5);
        c.write(qpc::QP_ST, qps::ERR);
        c.write(qpc::RQ_PRODUCER_IDX, 5);
    });
    w.mem.write(QPC_B, &b).unwrap();
    w.host.events.push(CtxEvent::Qp(9));
    w.poll(4);
    assert_eq!(w.host.aeqes, vec![(0x08, 0, 5), (0x09, 0, 9)]);
    assert_eq!(get32(&w.mem, CQ2_BUF + 192), 0);
    // A MODIFY_SRQC re-arms the limit, keeps the consumer index.
    w.mem.write(SRQC_5, &srqc_image(4)).unwrap();
    w.host.events.push(CtxEvent::Srq(5));
    w.poll(5);
    assert_eq!(w.eng.srq_ci(5), Some(3));
}

#[test]
fn dump_data_writes_each_srq_index_entry_and_wqe_taken() {
    let mut w = srq_world();
    let buf = SharedBuf::default();
    w.eng.dump = Some(Box::new(buf.clone()));
    w.srq_recv(0, 7, MR_VA);
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
    assert!(w.poll(0));
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The index entry (WQE 7), the 16-byte WQE it names (one SGE: 64
    // bytes, lkey 0x100, MR_VA), then the WQE and both CQEs as before.
    assert!(lines.contains(&"srqidx 000005 0000 00000007"), "{text}");
    let wqe = format!(
        "srqwqe 000005 0007 00000040 00000100 {:08x} {:08x}",
        MR_VA as u32,
        (MR_VA >> 32) as u32
    );
    assert!(lines.contains(&wqe.as_str()), "{text}");
    assert_eq!(lines.len(), 5, "{text}");
}

#[test]
fn srq_doorbell_without_record_is_dumped_and_publishes_the_producer_index() {
    let mut w = srq_world();
    // SRQ 5 without record doorbell: the producer index comes from the
    // SRQ doorbell word (SRQN 5, command 2, PI 1).
    let mut img = srqc_image(0);
    {
        let mut words = [0u32; 16];
        for (i, x) in words.iter_mut().enumerate() {
            *x = u32::from_ne_bytes(img[4 * i..4 * i + 4].try_into().unwrap());
        }
        let mut c: Ctx<Srqc, 16> = Ctx::from_le_words(words);
        c.clear(srqc::DB_RECORD_EN);
        c.write(srqc::DB_RECORD_ADDR_L, 0);
        img = bytes(c.as_le_words());
    }
    w.mem.write(SRQC_5, &img).unwrap();
    let buf = SharedBuf::default();
    w.eng.dump = Some(Box::new(buf.clone()));
    w.srq_recv(0, 7, MR_VA);
    // The record is ignored: nothing is posted yet.
    w.post_a(0, 0x1000, &[(1, 4), (8, 0x4443_4241)], true);
    assert!(!w.poll(0));
    w.regs.0.set(0x0000_0001_0200_0005);
    assert!(w.poll(1));
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0007_00c1);
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.lines()
            .any(|l| l == "srqdb 000005 0001 02000005 00000001"),
        "{text}"
    );
}

#[test]
fn xrc_initiator_sends_into_the_named_srq_of_the_target_domain() {
    let mut w = world();
    // SRQ 5: an XRC SRQ of XRC domain 7 completing on CQ 2.
    let mut img = srqc_image(0);
    {
        let mut words = [0u32; 16];
        for (i, x) in words.iter_mut().enumerate() {
            *x = u32::from_ne_bytes(img[4 * i..4 * i + 4].try_into().unwrap());
        }
        let mut c: Ctx<Srqc, 16> = Ctx::from_le_words(words);
        c.enable(srqc::SRQ_TYPE);
        c.write(srqc::XRCD, 7);
        c.write(srqc::XRC_CQN, 2);
        img = bytes(c.as_le_words());
    }
    w.mem.write(SRQC_5, &img).unwrap();
    put64(&w.mem, SRQ_WQE_ROOT, SRQ_WQE);
    put64(&w.mem, SRQ_IDX_ROOT, SRQ_IDX);
    w.host.ctx.insert((Table::Srqc as u32, 5), SRQC_5);
    // A (8): XRC initiator. B (9): XRC target of domain 7 whose own
    // RX_CQN (1) must not be used.
    let a = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| c.write(qpc::TST, tst::XRC));
    let b = qpc_with(8, ROOT_B, RQ_DB_B, 1, 1, |c| {
        c.write(qpc::TST, tst::XRC);
        c.enable(qpc::XRC_QP_TYPE);
        c.write(qpc::QKEY_XRCD, 7);
        c.write(qpc::QP_ST, qps::RTR);
    });
    w.mem.write(QPC_A, &a).unwrap();
    w.mem.write(QPC_B, &b).unwrap();
    w.host.events.push(CtxEvent::Srq(5));
    w.srq_recv(0, 2, MR_VA + 0x40);
    // SEND 4 inline bytes naming XRC SRQ 5 (dw3 23:0).
    w.post_a(0, 0x1000, &[(1, 4), (3, 5), (8, 0x6463_6261)], true);
    assert!(w.poll(0));
    let mut got = [0u8; 4];
    w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
    assert_eq!(&got, b"abcd");
    // Receive CQE on the SRQ's CQ 2: SEND | S_R | owner, SRQ WQE 2,
    // XRC_SRQN 5, LCL_QPN 9 (the target).
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0002_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 8), 5);
    assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9);
    // CQ 1 has only A's send completion.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    assert_eq!(get32(&w.mem, CQ1_BUF + 12), 8);
    // Naming SRQ 6 (none): REM_INV_REQ_ERR for A, XRCD_VIOLATION
    // (0x16) for the target QP.
    w.srq_recv(1, 3, MR_VA + 0x80);
    w.post_a(1, 0x1000, &[(1, 4), (3, 6), (8, 0x6463_6261)], true);
    assert!(w.poll(1));
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_1280);
    assert_eq!(w.host.aeqes, vec![(0x16, 0, 9)]);
    assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0);
}

/// pyverbs `test_xrc_atomic_*`: an XRC target has no PD of its own (the
/// C driver writes QPC PD 0, `get_pdn(NULL)`); the rkey of an atomic
/// (or READ/WRITE) is checked against the PD of the XRC SRQ the
/// initiator names. Before, the target's PD 0 was compared with the
/// MR's and every XRC atomic failed with REM_ACCESS_ERR.
#[test]
fn xrc_target_checks_remote_keys_against_its_srqs_pd() {
    let mut w = world();
    // SRQ 5: XRC SRQ of XRC domain 7, PD 3 (MR 1's PD).
    let mut c: Ctx<Srqc, 16> = Ctx::from_bytes(&srqc_image(0));
    c.enable(srqc::SRQ_TYPE);
    c.write(srqc::XRCD, 7);
    c.write(srqc::XRC_CQN, 2);
    w.mem.write(SRQC_5, &bytes(c.as_le_words())).unwrap();
    w.host.ctx.insert((Table::Srqc as u32, 5), SRQC_5);
    let a = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| c.write(qpc::TST, tst::XRC));
    let b = qpc_with(8, ROOT_B, RQ_DB_B, 1, 1, |c| {
        c.write(qpc::TST, tst::XRC);
        c.enable(qpc::XRC_QP_TYPE);
        c.write(qpc::QKEY_XRCD, 7);
        c.write(qpc::PD, 0);
        c.enable(qpc::ATE);
        c.write(qpc::QP_ST, qps::RTR);
    });
    w.mem.write(QPC_A, &a).unwrap();
    w.mem.write(QPC_B, &b).unwrap();
    w.host.events.push(CtxEvent::Srq(5));
    let acc = get32(&w.mem, MPT_1 + 4);
    put32(&w.mem, MPT_1 + 4, acc | 1 << 4); // ATOMIC_EN
    put64(&w.mem, MR_P1 + 8, 5);
    // FETCH_AND_ADD 2 naming XRC SRQ 5 (dw3 23:0).
    let mut words = atomic_words(MR_VA + 0x1008, 2, 0);
    words[1] = (3, 1 << 24 | 5);
    w.post_a(0, 0x07, &words, true);
    assert!(w.poll(0));
    assert_eq!(get64(&w.mem, MR_P1 + 8), 7);
    assert_eq!(get64(&w.mem, MR_P0 + 0x20), 5);
    // Success CQE: ATOM_FETCH_AND_ADD (7) | owner, BYTE_CNT 8.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0087);
    assert!(w.host.aeqes.is_empty());
    // Naming an SRQ outside the domain: REM_INV_REQ_ERR, XRCD_VIOLATION.
    let mut words = atomic_words(MR_VA + 0x1008, 2, 0);
    words[1] = (3, 1 << 24 | 6);
    w.post_a(1, 0x07, &words, true);
    assert!(w.poll(1));
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_1287);
    assert_eq!(get64(&w.mem, MR_P1 + 8), 7);
    assert_eq!(w.host.aeqes, vec![(0x16, 0, 9)]);
}

/// World with QP B's ATE set to `ate` and ATOMIC_EN on MR 1.
fn atomic_world(ate: bool) -> World {
    let mut w = world();
    let b = qpc_with(8, ROOT_B, RQ_DB_B, 2, 2, |c| {
        c.write(qpc::ATE, u32::from(ate))
    });
    w.mem.write(QPC_B, &b).unwrap();
    w.host.events.push(CtxEvent::Qp(9));
    let acc = get32(&w.mem, MPT_1 + 4);
    put32(&w.mem, MPT_1 + 4, acc | 1 << 4); // ATOMIC_EN
    w
}

/// Atomic WQE words: remote `va` (rkey 0x100), result to MR_VA + 0x20
/// (lkey 0x100), operands `a` (swap/add) and `c` (compare).
fn atomic_words(va: u64, a: u64, c: u64) -> Vec<(usize, u32)> {
    let res = MR_VA + 0x20;
    vec![
        (1, 8),
        (3, 1 << 24),
        (5, 0x100),
        (6, va as u32),
        (7, (va >> 32) as u32),
        (8, 8),
        (9, 0x100),
        (10, res as u32),
        (11, (res >> 32) as u32),
        (12, a as u32),
        (13, (a >> 32) as u32),
        (14, c as u32),
        (15, (c >> 32) as u32),
    ]
}

fn get64(m: &VecMem, a: u64) -> u64 {
    let mut b = [0u8; 8];
    m.read(a, &mut b).unwrap();
    u64::from_le_bytes(b)
}

#[test]
fn atomics_fetch_add_and_compare_swap() {
    let mut w = atomic_world(true);
    let target = MR_VA + 0x1008; // MR page 1 + 8
    put64(&w.mem, MR_P1 + 8, 5);
    // FETCH_AND_ADD 0x1_0000_0000: remote 5 -> 0x1_0000_0005, the
    // original 5 lands in the local result buffer.
    w.post_a(0, 0x07, &atomic_words(target, 1 << 32, 0), true);
    assert!(w.poll(0));
    assert_eq!(get64(&w.mem, MR_P1 + 8), 0x1_0000_0005);
    assert_eq!(get64(&w.mem, MR_P0 + 0x20), 5);
    // Send CQE: ATOM_FETCH_AND_ADD (7) | owner, BYTE_CNT 8.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0087);
    assert_eq!(get32(&w.mem, CQ1_BUF + 16), 8);
    // No receive consumed, nothing on B's CQ.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0);
    // CMP_AND_SWAP that matches: swapped.
    w.post_a(1, 0x06, &atomic_words(target, 99, 0x1_0000_0005), true);
    assert!(w.poll(1));
    assert_eq!(get64(&w.mem, MR_P1 + 8), 99);
    assert_eq!(get64(&w.mem, MR_P0 + 0x20), 0x1_0000_0005);
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0086);
    // One that does not match: memory unchanged, original returned.
    w.post_a(2, 0x06, &atomic_words(target, 7, 1), true);
    assert!(w.poll(2));
    assert_eq!(get64(&w.mem, MR_P1 + 8), 99);
    assert_eq!(get64(&w.mem, MR_P0 + 0x20), 99);
    assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0086);
    // Not 8-byte aligned: REM_INV_REQ_ERR (0x12), nothing written.
    w.post_a(3, 0x07, &atomic_words(target + 4, 1, 0), true);
    assert!(w.poll(3));
    assert_eq!(get32(&w.mem, CQ1_BUF + 192), 0x0003_1287);
    assert_eq!(get64(&w.mem, MR_P1 + 8), 99);
    // INV_REQ_LOCAL_WQ_ERROR (0x06) on the responder QP 9.
    assert_eq!(w.host.aeqes, vec![(0x06, 0, 9)]);
}

#[test]
fn atomics_need_the_responders_ate() {
    let mut w = atomic_world(false);
    put64(&w.mem, MR_P1 + 8, 5);
    w.post_a(0, 0x07, &atomic_words(MR_VA + 0x1008, 1, 0), true);
    assert!(w.poll(0));
    // REM_ACCESS_ERR (0x13), remote and local untouched.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1387);
    assert_eq!(get64(&w.mem, MR_P1 + 8), 5);
    assert_eq!(w.host.aeqes, vec![(0x07, 0, 9)]);
    assert_eq!(get64(&w.mem, MR_P0 + 0x20), 0);
}

/// The wire of the two-device test: device 1 alone.
struct TestWire<'x> {
    eng: &'x mut Engine,
    host: &'x mut FakeHost,
}

impl Wire<VecMem> for TestWire<'_> {
    fn route(&self, gid: &[u8; 16]) -> Option<usize> {
        self.host.owns_gid(gid).then_some(0)
    }
    fn respond(&mut self, dev: usize, mem: &VecMem, req: &Request) -> Response {
        assert_eq!(dev, 0);
        self.eng.respond(self.host, mem, req)
    }
}

/// The world split in two devices on one guest memory: device 0 has QP 8
/// (CQ 1), device 1 (GID_1) has QP 9 (CQ 2); QP 8's QPC names GID_1 as its
/// DGID (bytes 28..44). Their hosts and (quiet) engines.
fn split_world(w: &World) -> (FakeHost, FakeHost, Engine, Engine) {
    let mut a = FakeHost::default();
    let mut b = FakeHost {
        gid: Some(GID_1),
        ..FakeHost::default()
    };
    for (k, v) in &w.host.ctx {
        let qp_or_cq_of_b = *k == (Table::Qpc as u32, 9) || *k == (Table::Cqc as u32, 2);
        let qp_or_cq_of_a = *k == (Table::Qpc as u32, 8) || *k == (Table::Cqc as u32, 1);
        if !qp_or_cq_of_b {
            a.ctx.insert(*k, *v);
        }
        if !qp_or_cq_of_a {
            b.ctx.insert(*k, *v);
        }
    }
    a.events = vec![
        CtxEvent::Cq(1),
        CtxEvent::Mpt(1),
        CtxEvent::Mpt(2),
        CtxEvent::Qp(8),
    ];
    b.events = vec![
        CtxEvent::Cq(2),
        CtxEvent::Mpt(1),
        CtxEvent::Mpt(2),
        CtxEvent::Qp(9),
    ];
    w.mem.write(QPC_A + 28, &GID_1).unwrap();
    let quiet = || Engine {
        quiet: true,
        ..Engine::new()
    };
    (a, b, quiet(), quiet())
}

#[test]
fn two_devices_deliver_by_destination_gid() {
    let w = world();
    let (mut a, mut b, mut e0, mut e1) = split_world(&w);
    let idle = FakeRegs::new();
    let t0 = w.t0;
    e1.poll(&mut b, &w.mem, &idle, &mut NoWire, t0);
    // SEND of 8 inline bytes; no receive posted on device 1 yet: the
    // responder is not ready, the WQE stays at the head.
    w.post_a(
        0,
        0x1000,
        &[(1, 8), (8, 0x6463_6261), (9, 0x6867_6665)],
        true,
    );
    let mut wire = TestWire {
        eng: &mut e1,
        host: &mut b,
    };
    assert!(!e0.poll(&mut a, &w.mem, &w.regs, &mut wire, t0));
    assert_eq!(e0.sq_ci(8), Some(0));
    assert_eq!(e0.stats.wire, 1);
    // Device 0 alone does not know QP 9: without the wire the SEND
    // waits for ever (no loopback by mistake).
    assert!(!e0.poll(
        &mut a,
        &w.mem,
        &w.regs,
        &mut NoWire,
        t0 + Duration::from_millis(1)
    ));
    assert_eq!(e0.sq_ci(8), Some(0));
    // A receive on device 1: delivered over the wire.
    w.recv_b(0, 64, 0x100, MR_VA + 0x40);
    let mut wire = TestWire {
        eng: &mut e1,
        host: &mut b,
    };
    assert!(e0.poll(
        &mut a,
        &w.mem,
        &w.regs,
        &mut wire,
        t0 + Duration::from_millis(2)
    ));
    assert_eq!(e0.sq_ci(8), Some(1));
    let mut got = [0u8; 8];
    w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
    assert_eq!(&got, b"abcdefgh");
    // Receive CQE on device 1's CQ 2: SEND (1) | S_R | owner, LCL_QPN
    // 9, 8 bytes, RMT_QPN 8; send CQE on device 0's CQ 1.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 12), 9);
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 8);
    assert_eq!(get32(&w.mem, CQ2_BUF + 28) & 0xff_ffff, 8);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    assert_eq!(get32(&w.mem, CQ1_BUF + 12), 8);
    // Each device raises its own CQ's event: device 0 at once, device
    // 1 at its next poll.
    assert_eq!(a.ceqes, vec![(0, 1)]);
    assert!(b.ceqes.is_empty());
    e1.poll(&mut b, &w.mem, &idle, &mut NoWire, t0);
    assert_eq!(b.ceqes, vec![(0, 2)]);
    assert_eq!(e1.stats.cqes, 1);
    assert_eq!(e0.stats.cqes, 1);
}

/// [`TestWire`] with other devices on it, as `device::Others` of a
/// process serving several functions.
struct CrowdedWire<'x>(TestWire<'x>);

impl Wire<VecMem> for CrowdedWire<'_> {
    fn route(&self, gid: &[u8; 16]) -> Option<usize> {
        self.0.route(gid)
    }
    fn respond(&mut self, dev: usize, mem: &VecMem, req: &Request) -> Response {
        self.0.respond(dev, mem, req)
    }
    fn others(&self) -> bool {
        true
    }
}

/// QP 8's 8-byte SEND of `post_a` went over the wire once and landed in
/// device 1's receive buffer, with a successful send CQE on device 0.
fn assert_sent_over_the_wire(w: &World, e0: &Engine) {
    assert_eq!(e0.sq_ci(8), Some(1));
    let mut got = [0u8; 8];
    w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
    assert_eq!(&got, b"abcdefgh");
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080, "send CQE, success");
    assert_eq!(e0.stats.wire, 1);
}

#[test]
fn unowned_dgid_waits_on_a_wire_of_several_devices() {
    // Device 1's GID entry is gone for a moment (an active-backup bond's
    // failover: the RDMA core removes the bond's GIDs from the failed
    // port before the driver moves the port): QP 8's SEND to GID_1 is
    // not delivered locally (device 0 does not own GID_1), it waits, and
    // goes over the wire once device 1 owns GID_1 again.
    let w = world();
    let (mut a, mut b, mut e0, mut e1) = split_world(&w);
    b.gid = None;
    let idle = FakeRegs::new();
    let t0 = w.t0;
    e1.poll(&mut b, &w.mem, &idle, &mut NoWire, t0);
    w.recv_b(0, 64, 0x100, MR_VA + 0x40);
    w.post_a(
        0,
        0x1000,
        &[(1, 8), (8, 0x6463_6261), (9, 0x6867_6665)],
        true,
    );
    for ms in 0..2 {
        let mut wire = CrowdedWire(TestWire {
            eng: &mut e1,
            host: &mut b,
        });
        e0.poll(
            &mut a,
            &w.mem,
            &w.regs,
            &mut wire,
            t0 + Duration::from_millis(ms),
        );
        assert_eq!(e0.sq_ci(8), Some(0), "waiting");
    }
    assert_eq!(e0.stats.unowned_stalls, 1, "one stall, however many tries");
    assert_eq!(e0.stats.wire, 0);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0, "no completion yet");
    b.gid = Some(GID_1);
    let mut wire = CrowdedWire(TestWire {
        eng: &mut e1,
        host: &mut b,
    });
    assert!(e0.poll(
        &mut a,
        &w.mem,
        &w.regs,
        &mut wire,
        t0 + Duration::from_millis(2)
    ));
    assert_sent_over_the_wire(&w, &e0);
    assert!(e0.link_blocked.is_empty(), "the stall ended");
}

#[test]
fn gsi_qp_takes_datagrams_of_any_qkey_with_the_grh() {
    // The responder half of a MAD (QP1 to QP1, as ib_mad sends with
    // Q_Key 0x80010000): UD QP 1 in RTS with Q_Key 0x1111, one receive
    // of 0x100 bytes at MR offset 0x40.
    let w = world();
    let mut host = FakeHost::default();
    host.ctx = w.host.ctx.clone();
    let mut e = Engine {
        quiet: true,
        ..Engine::new()
    };
    e.update_cq(2, CqCtx::from_bytes(2, &cqc_image(2, CQ2_ROOT, CQ_DB_2)));
    e.track_cq(&w.mem, 2);
    e.track_mpt(&host, &w.mem, 1);
    let ud = |qpn: u32| {
        QpCtx::from_bytes(
            qpn,
            &qpc_with(0, ROOT_B, RQ_DB_B, 2, 2, |c| {
                c.write(qpc::TST, tst::UD);
                c.write(qpc::QKEY_XRCD, 0x1111);
            }),
        )
    };
    e.update_qp(ud(1));
    w.recv_b(0, 0x100, 0x100, MR_VA + 0x40);
    let mut data = vec![0x60u8; 40];
    data.extend_from_slice(b"MAD!");
    let req = |dqpn: u32| Request {
        sqpn: 1,
        dqpn,
        op: Op::Ud(UdMsg {
            imm: None,
            qkey: 0x8001_0000,
            port_type: 2,
            sl: 0,
            data: data.clone(),
        }),
    };
    assert_eq!(
        e.respond(&mut host, &w.mem, &req(1)),
        Response::Done(vec![])
    );
    let mut got = [0u8; 44];
    w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
    assert_eq!(&got[..], &data[..]);
    // Receive CQE: SEND (1) | S_R | owner; LCL_QPN 1; 44 bytes (GRH
    // included); PORT_TYPE 2 (dw6 17:16); RMT_QPN 1, bit 27 and GRH
    // (bit 30) in dw7.
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 12), 1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 44);
    assert_eq!(get32(&w.mem, CQ2_BUF + 24), 2 << 16);
    assert_eq!(get32(&w.mem, CQ2_BUF + 28), 1 | 1 << 27 | 1 << 30);
    // Any other UD QP checks the Q_Key: the datagram is dropped (the
    // sender completes anyway), the receive stays posted.
    e.update_qp(ud(9));
    w.recv_b(1, 0x100, 0x100, MR_VA + 0x40);
    assert_eq!(
        e.respond(&mut host, &w.mem, &req(9)),
        Response::Done(vec![])
    );
    assert_eq!(e.stats.cqes, 1);
}

#[test]
fn ud_inline_in_the_wqe_and_in_the_extended_sge_ring() {
    // QPs 8 (A) and 9 (B) as UD, Q_Key 0x1111; A with a 4-entry
    // extended SGE ring (SGE_SHIFT 2, SGE_HOP_NUM 1: buffer page 1,
    // i.e. RQ_A).
    let mut w = world();
    let ud = |dqpn, root, db, rx, tx, shift| {
        qpc_with(dqpn, root, db, rx, tx, |c| {
            c.write(qpc::TST, tst::UD);
            c.write(qpc::QKEY_XRCD, 0x1111);
            c.write(qpc::SGE_SHIFT, shift);
            c.write(qpc::SGE_HOP_NUM, 1);
        })
    };
    w.mem
        .write(QPC_A, &ud(9, ROOT_A, RQ_DB_A, 1, 1, 2))
        .unwrap();
    w.mem
        .write(QPC_B, &ud(8, ROOT_B, RQ_DB_B, 2, 2, 0))
        .unwrap();
    w.recv_b(0, 0x100, 0x100, MR_VA + 0x40);
    w.recv_b(1, 0x100, 0x100, MR_VA + 0x140);
    // What libhns' set_ud_inl_seg writes for "abcdefg" (7 bytes):
    // INLINE (dw0 12) | CQE (8), SEND (0); msg_len 7 with "ab" in
    // 31:16; "c" in dw3 31:24; "def" in dw4 23:0; "g" in dw5 15:0.
    let gid = |i: usize| u32::from_le_bytes([GID_0[i], GID_0[i + 1], GID_0[i + 2], GID_0[i + 3]]);
    let dgid = [(12, gid(0)), (13, gid(4)), (14, gid(8)), (15, gid(12))];
    let mut words = vec![
        (1, 7 | 0x6261 << 16),
        (3, 0x63 << 24),
        (4, 0x66_6564),
        (5, 0x67),
        (6, 0x1111),
        (7, 9),
    ];
    words.extend(dgid);
    w.post_a(0, 1 << 12 | 1 << 8, &words, true);
    assert!(w.poll(0));
    // B's buffer: the 40-byte GRH, then the 7 bytes; byte count 47.
    let mut got = [0u8; 8];
    w.mem.read(MR_P0 + 0x40 + 40, &mut got).unwrap();
    assert_eq!(&got, b"abcdefg\0");
    assert_eq!(get32(&w.mem, CQ2_BUF), 0x0000_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 47);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    // 20 bytes: INLINE_TYPE 1 (dw4 31), MSG_START_SGE_IDX 3, SGE_NUM 2,
    // msg_len 20; the bytes contiguous from SGE 3, wrapping to SGE 0.
    let text = b"0123456789ABCDEFGHIJ";
    w.mem.write(RQ_A + 48, &text[..16]).unwrap();
    w.mem.write(RQ_A, &text[16..]).unwrap();
    let mut words = vec![(1, 20), (3, 2 << 24), (4, 1 << 31 | 3), (6, 0x1111), (7, 9)];
    words.extend(dgid);
    w.post_a(1, 1 << 12 | 1 << 8, &words, true);
    assert!(w.poll(1));
    let mut got = [0u8; 20];
    w.mem.read(MR_P0 + 0x140 + 40, &mut got).unwrap();
    assert_eq!(&got, text);
    assert_eq!(get32(&w.mem, CQ2_BUF + 64), 0x0001_00c1);
    assert_eq!(get32(&w.mem, CQ2_BUF + 64 + 16), 60);
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0080);
    // 9 bytes claimed in the WQE itself (more than it holds):
    // LOC_LEN_ERR (0x01), nothing delivered.
    let mut words = vec![(1, 9), (6, 0x1111), (7, 9)];
    words.extend(dgid);
    w.post_a(2, 1 << 12 | 1 << 8, &words, true);
    assert!(w.poll(2));
    assert_eq!(get32(&w.mem, CQ1_BUF + 128), 0x0002_0180);
    assert_eq!(get32(&w.mem, CQ2_BUF + 128), 0);
}

#[test]
fn rc_inline_in_the_extended_sge_ring_lies_in_its_sge_num_sges() {
    // QP 8 (A) with a 4-entry extended SGE ring (SGE_SHIFT 2,
    // SGE_HOP_NUM 1: buffer page 1, i.e. RQ_A).
    let mut w = world();
    let qpc = qpc_with(9, ROOT_A, RQ_DB_A, 1, 1, |c| {
        c.write(qpc::SGE_SHIFT, 2);
        c.write(qpc::SGE_HOP_NUM, 1);
    });
    w.mem.write(QPC_A, &qpc).unwrap();
    w.recv_b(0, 0x100, 0x100, MR_VA + 0x40);
    w.recv_b(1, 0x100, 0x100, MR_VA + 0x140);
    // SEND of 40 inline bytes: INLINE (dw0 12) | CQE (8); msg_len 40;
    // SGE_NUM 3 (dw3 31:24); INL_TYPE (dw4 31), MSG_START_SGE_IDX 3:
    // the bytes contiguous from SGE 3, wrapping to SGEs 0 and 1.
    let text: Vec<u8> = (0..40u8).map(|i| b'0' + i).collect();
    w.mem.write(RQ_A + 48, &text[..16]).unwrap();
    w.mem.write(RQ_A, &text[16..]).unwrap();
    w.post_a(
        0,
        1 << 12 | 1 << 8,
        &[(1, 40), (3, 3 << 24), (4, 1 << 31 | 3)],
        true,
    );
    assert!(w.poll(0));
    let mut got = [0u8; 40];
    w.mem.read(MR_P0 + 0x40, &mut got).unwrap();
    assert_eq!(&got[..], &text[..]);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080);
    assert_eq!(get32(&w.mem, CQ2_BUF + 16), 40);
    // The same 40 bytes counted as 2 SGEs (the length divided by 16,
    // rounded down): the data does not lie in the SGEs the WQE names,
    // LOC_LEN_ERR (0x01), nothing delivered.
    w.post_a(
        1,
        1 << 12 | 1 << 8,
        &[(1, 40), (3, 2 << 24), (4, 1 << 31 | 2)],
        true,
    );
    assert!(w.poll(1));
    assert_eq!(get32(&w.mem, CQ1_BUF + 64), 0x0001_0180);
    let mut got = [0u8; 40];
    w.mem.read(MR_P0 + 0x140, &mut got).unwrap();
    assert_eq!(got, [0u8; 40]);
}

/// A `Write` into a shared buffer (the `--dump-data` tests).
#[derive(Clone, Default)]
struct SharedBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn dump_data_writes_each_wqe_taken_and_each_cqe_written() {
    let mut w = world();
    let buf = SharedBuf::default();
    w.eng.dump = Some(Box::new(buf.clone()));
    w.recv_b(0, 0x200, 0x100, MR_VA + 0x1800);
    w.post_a(
        0,
        0x100,
        &[
            (1, 100),
            (3, 1 << 24),
            (8, 100),
            (9, 0x100),
            (10, MR_VA as u32),
            (11, (MR_VA >> 32) as u32),
        ],
        true,
    );
    assert!(w.poll(0));
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The WQE as the engine read it (owner bit 0x80 | SE... of dw0), then
    // the receive CQE on CQ 2 and the send CQE on CQ 1, 16 words each.
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("rcwqe 000008 0000 00000180 00000064 00000000 01000000"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[0].split(' ').count(), 3 + 16);
    assert!(
        lines[1].starts_with("cqe 000002 0000 000000c1 "),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("cqe 000001 0000 00000080 "),
        "{}",
        lines[2]
    );
    assert_eq!(lines[1].split(' ').count(), 3 + 16);
    // Without the flag nothing is written (and nothing breaks).
    let mut w2 = world();
    w2.recv_b(0, 0x200, 0x100, MR_VA + 0x1800);
    w2.post_a(
        0,
        0x100,
        &[(1, 100), (3, 1 << 24), (8, 100), (9, 0x100)],
        true,
    );
    assert!(w2.poll(0));
}

/// QP A's page in the `mem_base` window.
const PAGE_A: u64 = DWQE_BASE + 8 * DWQE_SIZE;

impl World {
    /// Posts SQ WQE `idx` of QP A as a one-WQE post with direct WQE, as
    /// `write_dwqe` does: FLAG, SL `sl` and WQE_INDEX `idx + 1` set in the
    /// buffer's dw0, then the first `qwords` of its 64 bytes pushed into
    /// QP A's page (the rest of the push comes with [`World::push_rest`]).
    /// Returns the 64 bytes.
    fn push_a(
        &self,
        idx: u32,
        dw0: u32,
        words: &[(usize, u32)],
        sl: u32,
        qwords: usize,
    ) -> Vec<u8> {
        self.post_a(idx, dw0, words, false);
        let at = SQ_A + 64 * u64::from(idx);
        let w0 =
            get32(&self.mem, at) | 1 << 31 | (idx + 1) << 15 | (sl & 3) << 5 | (sl >> 2 & 3) << 13;
        put32(&self.mem, at, w0);
        let mut b = vec![0u8; 64];
        self.mem.read(at, &mut b).unwrap();
        self.push_rest(&b, 0, qwords);
        b
    }

    /// Stores qwords `from..to` of the 64 bytes `b` into QP A's page.
    fn push_rest(&self, b: &[u8], from: usize, to: usize) {
        for i in from..to {
            let mut q = [0u8; 8];
            q.copy_from_slice(&b[8 * i..8 * i + 8]);
            self.regs
                .1
                .borrow_mut()
                .insert(PAGE_A + 8 * i as u64, u64::from_le_bytes(q));
        }
    }

    /// The direct WQE counters: taken, checked, superseded, mismatched.
    fn dwqe(&self) -> (u64, u64, u64, u64) {
        let s = &self.eng.stats;
        (
            s.direct_wqes,
            s.dwqe_checked,
            s.dwqe_superseded,
            s.dwqe_mismatched,
        )
    }
}

/// An inline SEND of "ABCD" (dw0 opcode SEND, inline; msg_len 4; data at
/// byte 32).
const SEND_ABCD: (u32, [(usize, u32); 2]) = (0x1000, [(1, 4), (8, 0x4443_4241)]);

#[test]
fn a_direct_wqe_rings_the_sq_of_its_page_and_is_checked() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    w.push_a(0, SEND_ABCD.0, &SEND_ABCD.1, 0b1101, 8);
    // Executed in the first pass: the page was the doorbell, not the scan.
    assert!(w.poll(0));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(w.eng.stats.scan_found, 0);
    assert_eq!(w.eng.stats.doorbells, 0);
    assert_eq!(w.dwqe(), (1, 1, 0, 0));
    let mut got = [0u8; 4];
    w.mem.read(MR_P0, &mut got).unwrap();
    assert_eq!(&got, b"ABCD");
    // The first qword was taken, the rest of the page left as it was.
    assert!(!w.regs.1.borrow().contains_key(&PAGE_A));
    assert!(w.regs.1.borrow().contains_key(&(PAGE_A + 8)));
    // A plain doorbell word in the same page is still a doorbell (tag in
    // the word, no FLAG): WQE 1 runs by it, nothing counted as direct.
    w.recv_b(1, 64, 0x100, MR_VA + 64);
    w.post_a(1, SEND_ABCD.0, &SEND_ABCD.1, false);
    w.regs.1.borrow_mut().insert(PAGE_A, 2u64 << 32 | 8);
    assert!(w.poll(1));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    assert_eq!(w.eng.stats.doorbells, 1);
    assert_eq!(w.dwqe(), (1, 1, 0, 0));
    assert_eq!(w.eng.stats.scan_found, 0);
}

#[test]
fn a_direct_wqe_for_another_index_only_rings() {
    // A push whose index is past its WQE (the producer rang 2 with the
    // WQE of slot 1 pushed, slot 0 posted before without a doorbell):
    // both run at once, and the push is compared with WQE 1.
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    w.recv_b(1, 64, 0x100, MR_VA + 64);
    w.post_a(0, SEND_ABCD.0, &SEND_ABCD.1, false);
    w.push_a(1, SEND_ABCD.0, &SEND_ABCD.1, 0, 8);
    assert!(w.poll(0));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    assert_eq!(w.dwqe(), (1, 1, 0, 0));
}

#[test]
fn a_torn_push_runs_at_once_and_is_checked_when_the_rest_lands() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    w.recv_b(1, 64, 0x100, MR_VA + 64);
    // A first push, complete: the page keeps its qwords 1..7.
    w.push_a(0, SEND_ABCD.0, &SEND_ABCD.1, 0, 8);
    assert!(w.poll(0));
    assert_eq!(w.dwqe(), (1, 1, 0, 0));
    // The second: only its first qword has landed, 1..7 are the first
    // push's (another message: "EFGH").
    let b = w.push_a(1, 0x1000, &[(1, 4), (8, 0x4847_4645)], 0, 1);
    assert!(w.poll(1));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    let mut got = [0u8; 4];
    w.mem.read(MR_P0 + 64, &mut got).unwrap();
    assert_eq!(&got, b"EFGH");
    // Not decided while the rest may still come.
    assert!(!w.poll(50));
    assert_eq!(w.dwqe(), (2, 1, 0, 0));
    // It comes: checked.
    w.push_rest(&b, 1, 8);
    assert!(!w.poll(60));
    assert_eq!(w.dwqe(), (2, 2, 0, 0));
}

#[test]
fn a_push_whose_rest_never_matches_is_a_mismatch() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    let mut b = w.push_a(0, SEND_ABCD.0, &SEND_ABCD.1, 0, 8);
    // The page's inline data differs from the buffer's.
    b[32] ^= 0xff;
    w.push_rest(&b, 4, 5);
    assert!(w.poll(0));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(w.dwqe(), (1, 0, 0, 0));
    assert!(!w.poll(99));
    assert_eq!(w.dwqe(), (1, 0, 0, 0));
    // STABLE after the push: counted.
    assert!(!w.poll(100));
    assert_eq!(w.dwqe(), (1, 0, 0, 1));
    // A first qword other than the buffer's is one at once.
    w.recv_b(1, 64, 0x100, MR_VA + 64);
    w.push_a(1, SEND_ABCD.0, &SEND_ABCD.1, 0, 8);
    let w0 = get32(&w.mem, SQ_A + 64);
    put32(&w.mem, SQ_A + 64, w0 ^ 1 << 9);
    assert!(w.poll(101));
    assert_eq!(w.dwqe(), (2, 0, 0, 2));
}

#[test]
fn a_push_replaced_by_a_newer_one_is_superseded() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    w.recv_b(1, 64, 0x100, MR_VA + 64);
    w.recv_b(2, 64, 0x100, MR_VA + 128);
    // Push 1, torn (qword 0 only), runs.
    w.push_a(0, SEND_ABCD.0, &SEND_ABCD.1, 0, 1);
    assert!(w.poll(0));
    assert_eq!(w.dwqe(), (1, 0, 0, 0));
    // Push 2 starts before push 1's rest is seen: its first qword is in
    // the page again, push 1 cannot be compared any more.
    let b = w.push_a(1, 0x1000, &[(1, 4), (8, 0x4847_4645)], 0, 1);
    // Its inline data differs from push 1's, so the page (1..7 zero or
    // push 2's) can never match push 1.
    w.push_rest(&b, 1, 3);
    assert!(w.poll(1));
    assert_eq!(w.eng.sq_ci(8), Some(2));
    assert_eq!(w.dwqe(), (2, 0, 1, 0));
    // A push whose first qword is rewritten before the model compares
    // it (the next push or doorbell is already there): superseded too.
    w.push_rest(&b, 3, 8);
    assert!(!w.poll(2));
    assert_eq!(w.dwqe(), (2, 1, 1, 0));
    w.push_a(2, 0x1000, &[(1, 4), (8, 0x4c4b_4a49)], 0, 1);
    w.recv_b(3, 64, 0x100, MR_VA + 192);
    // Taken and run in this pass; by the comparison the producer has
    // rung again (a doorbell word for PI 3, not taken yet).
    assert!(w.poll(3));
    w.regs.1.borrow_mut().insert(PAGE_A, 3u64 << 32 | 8);
    let (n, ..) = w.dwqe();
    assert_eq!(n, 3);
    assert!(!w.poll(4));
    assert_eq!(w.dwqe(), (3, 1, 2, 0));
}

#[test]
fn a_push_into_a_qp_in_err_is_dropped_at_its_restart() {
    let mut w = world();
    w.recv_b(0, 64, 0x100, MR_VA);
    assert!(!w.poll(0));
    // QP A in ERR: libhns (or the kernel) pushes anyway; the page of a QP
    // outside INIT..SQD is not read.
    qp_a_to_err(&mut w, 0, 0);
    assert!(!w.poll(1));
    w.push_a(0, SEND_ABCD.0, &SEND_ABCD.1, 0, 8);
    assert!(!w.poll(2));
    assert_eq!(w.dwqe(), (0, 0, 0, 0));
    assert!(w.regs.1.borrow().contains_key(&PAGE_A));
    // RESET, INIT, RTR, RTS: the old push is taken unread at the
    // restart, and does not ring the new life.
    let mut was = qps::ERR;
    for (t, st) in [
        (10, qps::RESET),
        (11, qps::INIT),
        (12, qps::RTR),
        (13, qps::RTS),
    ] {
        modify_a(&mut w, was, st);
        assert!(!w.poll(t));
        was = st;
    }
    assert!(!w.regs.1.borrow().contains_key(&PAGE_A));
    assert_eq!(w.dwqe(), (0, 0, 0, 0));
    assert_eq!(w.eng.stats.doorbells, 0);
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // The old WQE 0 is stale: not run by the scan either.
    assert!(!w.poll(500));
    assert_eq!(w.eng.sq_ci(8), Some(0));
    // A new push of the new life runs and is checked.
    w.push_a(0, 0x1000, &[(1, 4), (8, 0x4847_4645)], 0, 8);
    assert!(w.poll(501));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(w.dwqe(), (1, 1, 0, 0));
}

#[test]
fn dump_data_writes_each_direct_wqe_as_compared() {
    let mut w = world();
    let buf = SharedBuf::default();
    w.eng.dump = Some(Box::new(buf.clone()));
    w.recv_b(0, 64, 0x100, MR_VA);
    w.push_a(0, SEND_ABCD.0, &SEND_ABCD.1, 3, 8);
    assert!(w.poll(0));
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let line = text.lines().find(|l| l.starts_with("dwqe ")).unwrap_or("");
    // dw0: SEND, inline, owner, SL 3 (bits 6:5), WQE_INDEX 1, FLAG.
    assert_eq!(
        line,
        "dwqe 000008 0001 800090e0 00000004 00000000 00000000 00000000 00000000 \
         00000000 00000000 44434241 00000000 00000000 00000000 00000000 00000000 \
         00000000 00000000"
    );
}

/// A wire to one other device owning [`GID_1`], whose ports and bonds
/// decide with `path` (the routing rule of `bond::path` over firmware
/// states): answered by `peer` when there is one.
struct LinkWire<'x> {
    peer: Option<(&'x mut Engine, &'x mut FakeHost)>,
    path: &'x dyn Fn(u32) -> Result<(), String>,
}

impl Wire<VecMem> for LinkWire<'_> {
    fn route(&self, gid: &[u8; 16]) -> Option<usize> {
        (gid == &GID_1).then_some(0)
    }
    fn respond(&mut self, _dev: usize, mem: &VecMem, req: &Request) -> Response {
        match self.peer.as_mut() {
            Some((e, h)) => e.respond(&mut **h, mem, req),
            None => panic!("a message went past a down port: {req:?}"),
        }
    }
    fn path(&self, qpn: u32, _dev: usize) -> Result<(), String> {
        (self.path)(qpn)
    }
}

/// Firmware for the routing only (ports, PCI location, the shared bond
/// table): function `func` of bus 0 slot 3, with the BOND cap.
fn link_fw(func: u8) -> crate::fw::Firmware {
    let mut c = crate::caps::Caps::default();
    c.cap_flags |= crate::caps::flag::BOND;
    let mut f = crate::fw::Firmware::new(c, vec![], crate::trace::Trace::discard());
    f.loc = crate::bond::PciLoc {
        bus: 0,
        devfn: 3 << 3 | func,
    };
    f
}

fn port_of(f: &crate::fw::Firmware) -> crate::bond::Port {
    crate::bond::Port {
        loc: f.loc,
        up: f.port_up,
    }
}

/// Sends a bond command (`hns_roce_cmd_bond`'s descriptor) from `f`.
fn bond_cmd(f: &mut crate::fw::Firmware, mem: &VecMem, opcode: u16, words: [u32; 6]) {
    let mut d = crate::cmq::Desc {
        opcode,
        flag: crate::cmq::flag::IN,
        ..Default::default()
    };
    d.data = words;
    f.execute(mem, std::slice::from_mut(&mut d));
    assert_eq!(d.retval, crate::cmq::ret::SUCCESS);
}

#[test]
fn down_port_stalls_rc_until_change_active_port() {
    // Device 0 (QP 8) is the main function 0 of an active-backup bond of
    // functions 0 and 1; device 1 (QP 9, GID_1) a plain peer, function 2.
    let w = world();
    let (mut a, mut b, mut e0, mut e1) = split_world(&w);
    let idle = FakeRegs::new();
    let t0 = w.t0;
    e1.poll(&mut b, &w.mem, &idle, &mut NoWire, t0);
    let mut f0 = link_fw(0);
    let mut f1 = link_fw(1);
    let mut f2 = link_fw(2);
    f1.chip = f0.chip.clone();
    f2.chip = f0.chip.clone();
    bond_cmd(
        &mut f0,
        &w.mem,
        crate::cmq::op::SET_BOND_INFO,
        [0, 0, 1, 0x1, 0x3, 0],
    );
    // The active slave's port (function 0's) goes down.
    f0.control("link:down").unwrap();
    w.recv_b(0, 64, 0x100, MR_VA + 0x40);
    w.post_a(
        0,
        0x1000,
        &[(1, 8), (8, 0x6463_6261), (9, 0x6867_6665)],
        true,
    );
    for ms in [0, 1, 2] {
        let p = |q| crate::device::fw_path(port_of(&f0), &f2, [&f1, &f2].into_iter(), q);
        let mut wire = LinkWire {
            peer: Some((&mut e1, &mut b)),
            path: &p,
        };
        e0.poll(
            &mut a,
            &w.mem,
            &w.regs,
            &mut wire,
            t0 + Duration::from_millis(ms),
        );
        assert_eq!(e0.sq_ci(8), Some(0), "waits at {ms} ms");
    }
    assert_eq!(e0.stats.link_stalls, 1, "one stall, however many tries");
    assert_eq!(e0.stats.wire, 0);
    assert_eq!(get32(&w.mem, CQ1_BUF), 0, "no completion yet");
    // The driver's CHANGE_ACTIVE_PORT: function 1 active. The main's own
    // port stays down; its traffic leaves through function 1's.
    bond_cmd(
        &mut f0,
        &w.mem,
        crate::cmq::op::CHANGE_ACTIVE_PORT,
        [0, 0, 1, 0x2, 0x3, 0],
    );
    let p = |q| crate::device::fw_path(port_of(&f0), &f2, [&f1, &f2].into_iter(), q);
    let mut wire = LinkWire {
        peer: Some((&mut e1, &mut b)),
        path: &p,
    };
    assert!(e0.poll(
        &mut a,
        &w.mem,
        &w.regs,
        &mut wire,
        t0 + Duration::from_millis(3)
    ));
    assert_sent_over_the_wire(&w, &e0);
    // Back the other way: the peer reaches the bond through any up
    // slave port; with function 1's down too, not at all.
    let to_bond = crate::device::fw_path(port_of(&f2), &f0, [&f0, &f1].into_iter(), 9);
    assert_eq!(to_bond, Ok(()));
    f1.control("link:down").unwrap();
    let to_bond = crate::device::fw_path(port_of(&f2), &f0, [&f0, &f1].into_iter(), 9);
    assert!(to_bond.unwrap_err().contains("every port of bond 0"));
    // A CLEAR makes function 0 a plain function again: its own port.
    bond_cmd(&mut f0, &w.mem, crate::cmq::op::CLEAR_BOND_INFO, [0; 6]);
    let out = crate::device::fw_path(port_of(&f0), &f2, [&f1, &f2].into_iter(), 8);
    assert!(out.unwrap_err().contains("port of 00:03.0 down"));
}

#[test]
fn down_port_stall_ends_in_retry_exceeded() {
    // QP 8 sends to GID_1 and its own port is down for good: the WQE
    // waits, then completes RETRY_EXC_ERR after DEST_WAIT, as for a
    // destination QP that never becomes ready.
    let mut w = world();
    w.mem.write(QPC_A + 28, &GID_1).unwrap();
    let mut f = link_fw(0);
    f.control("link:down").unwrap();
    let peer = link_fw(1);
    let p = |q| crate::device::fw_path(port_of(&f), &peer, std::iter::once(&peer), q);
    w.post_a(
        0,
        0x1000,
        &[(1, 8), (8, 0x6463_6261), (9, 0x6867_6665)],
        true,
    );
    let t0 = w.t0;
    let mut wire = LinkWire {
        peer: None,
        path: &p,
    };
    w.eng.poll(&mut w.host, &w.mem, &w.regs, &mut wire, t0);
    assert_eq!(w.eng.sq_ci(8), Some(0));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0);
    let mut wire = LinkWire {
        peer: None,
        path: &p,
    };
    assert!(w.eng.poll(
        &mut w.host,
        &w.mem,
        &w.regs,
        &mut wire,
        t0 + DEST_WAIT + Duration::from_millis(1)
    ));
    // SEND (0) | owner, status RETRY_EXC_ERR in bits 15..8.
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_1580);
    assert_eq!(w.eng.stats.link_stalls, 1);
    assert_eq!(w.eng.stats.errors, 1);
    assert!(
        w.eng.link_blocked.is_empty(),
        "the stall ended with the WQE"
    );
}

#[test]
fn down_port_drops_ud_datagrams() {
    // QPs 8 and 9 as UD; the datagram for GID_1 meets a down peer port:
    // dropped, the sender completes as on a wire, nothing received.
    let mut w = world();
    let ud = |dqpn, root, db, rx, tx| {
        qpc_with(dqpn, root, db, rx, tx, |c| {
            c.write(qpc::TST, tst::UD);
            c.write(qpc::QKEY_XRCD, 0x1111);
        })
    };
    w.mem.write(QPC_A, &ud(9, ROOT_A, RQ_DB_A, 1, 1)).unwrap();
    w.mem.write(QPC_B, &ud(8, ROOT_B, RQ_DB_B, 2, 2)).unwrap();
    w.recv_b(0, 0x100, 0x100, MR_VA + 0x40);
    let f = link_fw(0);
    let mut peer = link_fw(1);
    peer.control("link:down").unwrap();
    let p = |q| crate::device::fw_path(port_of(&f), &peer, std::iter::once(&peer), q);
    let gid = |i: usize| u32::from_le_bytes([GID_1[i], GID_1[i + 1], GID_1[i + 2], GID_1[i + 3]]);
    let words = [
        (1, 7 | 0x6261 << 16),
        (3, 0x63 << 24),
        (4, 0x66_6564),
        (5, 0x67),
        (6, 0x1111),
        (7, 9),
        (12, gid(0)),
        (13, gid(4)),
        (14, gid(8)),
        (15, gid(12)),
    ];
    w.post_a(0, 1 << 12 | 1 << 8, &words, true);
    let t0 = w.t0;
    let mut wire = LinkWire {
        peer: None,
        path: &p,
    };
    assert!(w.eng.poll(&mut w.host, &w.mem, &w.regs, &mut wire, t0));
    assert_eq!(w.eng.sq_ci(8), Some(1));
    assert_eq!(get32(&w.mem, CQ1_BUF), 0x0000_0080, "sender: success");
    assert_eq!(get32(&w.mem, CQ2_BUF), 0, "nothing received");
    assert_eq!(w.eng.stats.link_drops, 1);
    assert_eq!(w.eng.stats.link_stalls, 0);
}
