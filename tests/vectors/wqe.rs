// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Send WQE encoding against WQEs the C stack wrote on hns-sim: `udwqe` and
//! `rcwqe` lines of hns-sim's `--dump-data` file of
//! `tests/guest/dump-plan.sh` on `--driver c` (see there).

use super::{expect, Check};
use crate::hns_roce_hw_v2::ctx::MrAccess;
use crate::hns_roce_hw_v2::wqe::*;

/// The SQ doorbell and the owner bit.
pub fn check_doorbell_and_owner() -> Check {
    // QPN 1, PI 3, SL 0: tag, command SQ (0), PI in bits 47..32.
    expect(
        sq_doorbell(1, 3, 0) == 0x0000_0003_0000_0001,
        "GSI doorbell",
    )?;
    expect(
        sq_doorbell(0x12, 0x1_0005, 5) == 0x0005_0005_0000_0012,
        "PI wraps at 16 bits, SL in bits 50..48",
    )?;
    expect(owner_bit(0, 8) && owner_bit(7, 8), "lap 0 owner 1")?;
    expect(
        !owner_bit(8, 8) && owner_bit(16, 8),
        "lap 1 owner 0, lap 2 owner 1",
    )
}

/// Word 0 of GSI WQEs the C driver pushed as direct WQEs (`dwqe` lines of
/// hns-sim's `--dump-data` of `tests/guest/kpath-plan.sh` on `--driver c`
/// with cap flags 0x48177f): the SQ producer index after the
/// post and the word pushed. Before the push the word was the UD builder's
/// 0x00000180 (owner, CQE; `GSI_WQE0`), SL 0.
const C_DWQE_WORD0: [(u32, u32); 3] = [(1, 0x8000_8180), (2, 0x8001_0180), (0x19, 0x800c_8180)];

/// Direct WQE word 0: flag, index and SL over the builder's word.
pub fn check_dwqe_word0() -> Check {
    for (head, pushed) in C_DWQE_WORD0 {
        expect(
            dwqe_word0(GSI_WQE0[0], 0, head) == pushed,
            "GSI direct WQE word 0 as C pushed it",
        )?;
    }
    // The SL fields' positions come from the header (the generated
    // fields' host test); the C runs had SL 0 only.
    Ok(())
}

/// QP 1's first two UD WQEs as the C driver wrote them (CM MADs of rping:
/// 24 + 232 bytes in two SGEs with lkey 0x100, to QP 1 of the own GID
/// `::ffff:192.168.77.1`, GID index 3, UDP source port 0xc8e1, flow label
/// 0x348ec, hop limit 64), read back by hns-sim from a fresh buffer.
const GSI_WQE0: [u32; 16] = [
    0x00000180, 0x00000100, 0x00000000, 0x02000000, 0x00000000, 0xc8e10000, 0x80010000, 0x00000001,
    0x00400000, 0x000348ec, 0x00e51902, 0x00030003, 0x00000000, 0x00000000, 0xffff0000, 0x014da8c0,
];
/// Its extended SGEs.
const GSI_SGE0: [[u32; 4]; 2] = [
    [0x00000018, 0x00000100, 0x03be4400, 0],
    [0x000000e8, 0x00000100, 0x03be4418, 0],
];

/// RC WQEs libhns wrote for `wqe_ops.py` (the same hardware format; the
/// kernel encoder must give the same words for the same request over a
/// fresh slot): SEND of two SGEs, SEND_WITH_IMM solicited, RDMA_WRITE of
/// three SGEs (one in the extended SGE area), RDMA_WRITE_WITH_IMM, RDMA_READ.
const RC_SEND: [u32; 16] = [
    0x00000180, 0x30, 0, 0x02000000, 0, 0, 0, 0, 0x10, 0x200, 0x24a6a000, 0, 0x20, 0x200,
    0x24a6a040, 0,
];
const RC_SEND_IMM: [u32; 16] = [
    0x00000982, 0x08, 0x78563412, 0x01000000, 0, 0, 0, 0, 0x08, 0x200, 0x24a6a000, 0, 0, 0, 0, 0,
];
const RC_WRITE3: [u32; 16] = [
    0x00000183, 0x18, 0, 0x03000000, 0, 0x200, 0x24a6e000, 0, 0x08, 0x200, 0x24a6a000, 0, 0x08,
    0x200, 0x24a6a008, 0,
];
const RC_WRITE_IMM: [u32; 16] = [
    0x00000184, 0x08, 0xa5a50000, 0x01000000, 0x01, 0x200, 0x24a6e100, 0, 0x08, 0x200, 0x24a6a000,
    0, 0, 0, 0, 0,
];
const RC_READ: [u32; 16] = [
    0x00000185, 0x40, 0, 0x01000000, 0x01, 0x200, 0x24a6e000, 0, 0x40, 0x200, 0x24a6c000, 0, 0, 0,
    0, 0,
];

/// The atomics and the inline SEND of a second run (`wqe_ops.py` with
/// responder resources): CMP_AND_SWAP (compare 0, swap
/// 0x1122334455667788), FETCH_AND_ADD 5, and 16 bytes (zeros) inline with
/// FENCE. libhns also writes SGE_NUM = 1 into the inline WQE, which the
/// C kernel driver does not (it stays as the slot had it: 0 here).
const RC_CAS: [u32; 16] = [
    0x00000186, 0x08, 0, 0x01000000, 0x01, 0x200, 0x151af000, 0, 0x08, 0x200, 0x151ad000, 0,
    0x55667788, 0x11223344, 0, 0,
];
const RC_FAA: [u32; 16] = [
    0x00000187, 0x08, 0, 0x01000000, 0x01, 0x200, 0x151af008, 0, 0x08, 0x200, 0x151ad008, 0, 0x05,
    0, 0, 0,
];
const RC_INLINE_FENCE: [u32; 16] = [
    0x00001580, 0x10, 0, 0x01000000, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// Atomics and inline data.
pub fn check_rc_atomic_inline() -> Check {
    let rc = |op, sges| RcSend::<[Sge]> {
        op,
        sges,
        fence: false,
        solicited: false,
        signaled: true,
        inline: false,
        sge_idx: 1,
        sge_cnt: 4,
        owner: true,
    };
    let cas_sge = [Sge {
        addr: 0x151a_d000,
        len: 8,
        lkey: 0x200,
    }];
    let w = rc_wqe(
        &[0; 16],
        &rc(
            RcOp::CmpSwap {
                rkey: 0x200,
                va: 0x151a_f000,
                compare: 0,
                swap: 0x1122_3344_5566_7788,
            },
            &cas_sge,
        ),
        &[],
        32,
        1024,
    );
    expect(w.map(|w| w.words) == Ok(RC_CAS), "CMP_AND_SWAP")?;
    let faa_sge = [Sge {
        addr: 0x151a_d008,
        len: 8,
        lkey: 0x200,
    }];
    let w = rc_wqe(
        &[0; 16],
        &rc(
            RcOp::FetchAdd {
                rkey: 0x200,
                va: 0x151a_f008,
                add: 5,
            },
            &faa_sge,
        ),
        &[],
        32,
        1024,
    );
    expect(w.map(|w| w.words) == Ok(RC_FAA), "FETCH_AND_ADD")?;
    let inl_sge = [Sge {
        addr: 0x151a_a100,
        len: 16,
        lkey: 0x200,
    }];
    let mut p = rc(RcOp::Send, &inl_sge);
    p.inline = true;
    p.fence = true;
    let mut want = RC_INLINE_FENCE;
    want[3] = 0;
    let w = rc_wqe(&[0; 16], &p, &[0; 16], 32, 1024);
    expect(w.map(|w| w.words) == Ok(want), "inline SEND with FENCE")?;
    // The data lands after the header; too long for the MTU or the QP's
    // limit is refused.
    let w = rc_wqe(&[0; 16], &p, &[0xab; 16], 32, 1024).map(|w| w.words);
    expect(
        w.map(|w| w[8..12] == [0xabab_abab; 4] && w[12] == 0) == Ok(true),
        "inline bytes",
    )?;
    expect(
        rc_wqe(&[0; 16], &p, &[0; 16], 8, 1024) == Err(WqeError::InlineLength),
        "inline over max_inline_data",
    )
}

/// REG_MR and SEND_WITH_INV as the C driver wrote them for NVMe over RDMA
/// (`rcwqe` lines of hns-sim's `--dump-data` of `tests/guest/ulp-plan.sh`):
/// nvme-rdma's first two fast registrations on the host's QP 8
/// (one 4 KiB page each, remote read and write plus local write, keys
/// 0x301 and 0x302, page lists at 0x0884d000, unsignaled, fresh slots 0
/// and 8), and nvmet-rdma's SEND_WITH_INV of rkey 0x301 (16 bytes, slot 1
/// of the target's QP 8).
const RC_REG_MR: [[u32; 16]; 2] = [
    [
        0x8a,
        0x0884_d000,
        0,
        0x400,
        0,
        0x301,
        0x088e_8000,
        0,
        1,
        0x7000,
        0,
        0,
        0,
        0,
        0,
        0,
    ],
    [
        0x8a,
        0x0884_d000,
        0,
        0x1000,
        0,
        0x302,
        0x08f7_2000,
        0,
        1,
        0x7000,
        0,
        0,
        0,
        0,
        0,
        0,
    ],
];
const RC_SEND_INV: [u32; 16] = [
    0x181,
    0x10,
    0x301,
    0x0100_0000,
    0,
    0,
    0,
    0,
    0x10,
    0x200,
    0x08dc_7f60,
    0,
    0,
    0,
    0,
    0,
];

/// Fast registration and send with invalidate.
pub fn check_rc_frmr() -> Check {
    let rc = |op, sges, signaled| RcSend::<[Sge]> {
        op,
        sges,
        fence: false,
        solicited: false,
        signaled,
        inline: false,
        sge_idx: 0,
        sge_cnt: 0,
        owner: true,
    };
    let access = MrAccess {
        remote_read: true,
        remote_write: true,
        local_write: true,
        ..MrAccess::default()
    };
    for (i, (len, key, iova)) in [(0x400, 0x301, 0x088e_8000), (0x1000, 0x302, 0x08f7_2000)]
        .into_iter()
        .enumerate()
    {
        let f = FastReg {
            pbl_ba: 0x0884_d000,
            npages: 1,
            page_shift: 12,
            iova,
            length: len,
            key,
            access,
        };
        let w = rc_wqe(&[0; 16], &rc(RcOp::RegMr(f), &[], false), &[], 32, 1024);
        expect(w.map(|w| w.words) == Ok(RC_REG_MR[i]), "REG_MR")?;
    }
    let sge = [Sge {
        addr: 0x08dc_7f60,
        len: 0x10,
        lkey: 0x200,
    }];
    let w = rc_wqe(
        &[0; 16],
        &rc(RcOp::SendWithInv(0x301), &sge, true),
        &[],
        32,
        1024,
    );
    expect(w.map(|w| w.words) == Ok(RC_SEND_INV), "SEND_WITH_INV")
}

/// The C run's UD WQEs of QP 1.
pub fn check_c_ud_wqes() -> Check {
    let dgid = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 1];
    let mut p = UdSend {
        opcode: crate::hns_roce_hw_v2::consts::wqe_op::SEND,
        imm: 0,
        msg_len: 0x100,
        signaled: true,
        solicited: false,
        pdn: 0,
        sge_num: 2,
        start_sge: 0,
        qkey: 0x8001_0000,
        dqpn: 1,
        av: UdAv {
            udp_sport: 0xc8e1,
            hop_limit: 64,
            tclass: 0,
            flowlabel: 0x348ec,
            sl: 0,
            gid_index: 3,
            mac: [0x02, 0x19, 0xe5, 0x00, 0x03, 0x00],
            dgid,
            vlan_en: false,
            vlan_id: 0,
        },
        hip08: false,
        owner: true,
    };
    expect(ud_wqe(&[0; 16], &p) == GSI_WQE0, "GSI UD WQE 0")?;
    // The next WQE starts two SGEs later (the C run's WQE 1 differs in
    // word 4 only); over a slot holding WQE 0 it gives the same words.
    p.start_sge = 2;
    let mut want = GSI_WQE0;
    want[4] = 2;
    expect(ud_wqe(&GSI_WQE0, &p) == want, "GSI UD WQE 1")?;
    // Bits C does not write keep the slot's old value (VLAN fields on
    // HIP09, reserved bits), as C edits the slot in place.
    let over_ones = ud_wqe(&[0xffff_ffff; 16], &p);
    expect(
        over_ones[8] & 0xffff == 0xffff && over_ones[1] == 0x100,
        "untouched bits stay, written words are whole",
    )?;
    let sges = [
        Sge {
            addr: 0x3be_4400,
            len: 0x18,
            lkey: 0x100,
        },
        Sge {
            addr: 0x3be_4418,
            len: 0xe8,
            lkey: 0x100,
        },
    ];
    let mut n = 0;
    for (e, want) in ext_sges(&sges[..], 0, 0, 256).zip(GSI_SGE0) {
        expect(e.idx == n && e.sge.words() == want, "GSI extended SGEs")?;
        n += 1;
    }
    expect(
        n == 2 && valid_sges(&sges[..]) == (2, 0x100),
        "GSI SGE count and length",
    )
}

/// The RC WQEs (opcodes, flags, segments, SGE index).
pub fn check_rc_wqes() -> Check {
    let seg = |addr: u64, len: u32| Sge {
        addr,
        len,
        lkey: 0x200,
    };
    let rc = |op, sges, solicited, sge_idx| RcSend::<[Sge]> {
        op,
        sges,
        fence: false,
        solicited,
        signaled: true,
        inline: false,
        sge_idx,
        sge_cnt: 4,
        owner: true,
    };
    let enc = |p: &RcSend<'_>| rc_wqe(&[0; 16], p, &[], 32, 1024).map(|w| w.words);
    let two = [seg(0x24a6_a000, 0x10), seg(0x24a6_a040, 0x20)];
    expect(enc(&rc(RcOp::Send, &two, false, 0)) == Ok(RC_SEND), "SEND")?;
    let one = [seg(0x24a6_a000, 8)];
    expect(
        enc(&rc(RcOp::SendWithImm(0x7856_3412), &one, true, 0)) == Ok(RC_SEND_IMM),
        "SEND_WITH_IMM, solicited",
    )?;
    let three = [
        seg(0x24a6_a000, 8),
        seg(0x24a6_a008, 8),
        seg(0x24a6_a010, 8),
    ];
    let w = rc_wqe(
        &[0; 16],
        &rc(
            RcOp::RdmaWrite {
                rkey: 0x200,
                va: 0x24a6_e000,
            },
            &three,
            false,
            0,
        ),
        &[],
        32,
        1024,
    );
    expect(
        w.map(|w| (w.words, w.ext_n, w.next_sge)) == Ok((RC_WRITE3, 1, 1)),
        "RDMA_WRITE of three SGEs",
    )?;
    let mut ext = ext_sges(&three[..], 2, 0, 4);
    expect(
        ext.next().map(|e| (e.idx, e.sge.words())) == Some((0, [8, 0x200, 0x24a6_a010, 0]))
            && ext.next().is_none(),
        "the third SGE in the extended area",
    )?;
    expect(
        enc(&rc(
            RcOp::RdmaWriteWithImm {
                rkey: 0x200,
                va: 0x24a6_e100,
                imm: 0xa5a5_0000,
            },
            &one,
            false,
            1,
        )) == Ok(RC_WRITE_IMM),
        "RDMA_WRITE_WITH_IMM after one extended SGE",
    )?;
    let read = [Sge {
        addr: 0x24a6_c000,
        len: 0x40,
        lkey: 0x200,
    }];
    expect(
        enc(&rc(
            RcOp::RdmaRead {
                rkey: 0x200,
                va: 0x24a6_e000,
            },
            &read,
            false,
            1,
        )) == Ok(RC_READ),
        "RDMA_READ",
    )?;
    // C's refusals: an atomic must move 8 bytes, inline data no READ.
    expect(
        rc_wqe(
            &[0; 16],
            &rc(
                RcOp::FetchAdd {
                    rkey: 1,
                    va: 0,
                    add: 1,
                },
                &two,
                false,
                0,
            ),
            &[],
            32,
            1024,
        ) == Err(WqeError::AtomicLength),
        "atomic of 48 bytes",
    )?;
    let mut p = rc(RcOp::RdmaRead { rkey: 0x200, va: 0 }, &one, false, 0);
    p.inline = true;
    expect(
        rc_wqe(&[0; 16], &p, &[0; 8], 32, 1024) == Err(WqeError::InlineRead),
        "inline READ",
    )
}
