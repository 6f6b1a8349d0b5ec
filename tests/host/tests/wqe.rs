// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the send WQE encoder (`hns_roce_hw_v2::wqe`).

use hns_host_tests::vectors::wqe as v;

#[test]
fn doorbell_and_owner() {
    assert_eq!(v::check_doorbell_and_owner(), Ok(()));
}

#[test]
fn dwqe_word0() {
    assert_eq!(v::check_dwqe_word0(), Ok(()));
}

#[test]
fn c_ud_wqes() {
    assert_eq!(v::check_c_ud_wqes(), Ok(()));
}

#[test]
fn rc_wqes() {
    assert_eq!(v::check_rc_wqes(), Ok(()));
}

#[test]
fn rc_atomic_inline() {
    assert_eq!(v::check_rc_atomic_inline(), Ok(()));
}

#[test]
fn rc_frmr() {
    assert_eq!(v::check_rc_frmr(), Ok(()));
}

/// A signaled RC WQE of `op` over `sges`, owner bit 1, no extended SGEs.
fn signaled<'a>(
    op: hns_host_tests::hns_roce_hw_v2::wqe::RcOp,
    sges: &'a [hns_host_tests::hns_roce_hw_v2::wqe::Sge],
    inline: bool,
) -> hns_host_tests::hns_roce_hw_v2::wqe::RcSend<'a> {
    hns_host_tests::hns_roce_hw_v2::wqe::RcSend {
        op,
        sges,
        fence: false,
        solicited: false,
        signaled: true,
        inline,
        sge_idx: 0,
        sge_cnt: 0,
        owner: true,
    }
}

/// The RC encoder edits the slot in place as `set_rc_wqe` does: on a slot
/// full of an old WQE's bits, the words C never writes for a one-segment
/// SEND (the RDMA words 5..8, the second segment 12..16) and the bits C
/// leaves alone in the words it edits field by field (word 3 below
/// SGE_NUM, word 4's INL_TYPE) keep the old bits; every other word is the
/// one the encoder writes over a zeroed slot (C's own words, checked
/// against the traces by `rc_wqes`).
#[test]
fn rc_in_place_keeps_what_c_keeps() {
    use hns_host_tests::hns_roce_hw_v2::wqe::*;
    let sge = [Sge {
        addr: 0x1234_5000,
        len: 64,
        lkey: 0x300,
    }];
    let p = signaled(RcOp::Send, &sge, false);
    let old = [0xdead_beef_u32; 16];
    let clean = rc_wqe(&[0; 16], &p, &[], 32, 1024).expect("SEND encodes");
    let mut slot = old;
    let head = rc_wqe_in(&mut slot, &p, &[], 32, 1024).expect("SEND encodes");
    assert_eq!(head.word0, clean.words[0], "word 0 from zero, stored last");
    assert_eq!(slot[0], old[0], "word 0 is left to the caller");
    for i in [5, 6, 7, 12, 13, 14, 15] {
        assert_eq!(slot[i], old[i], "word {i} is not C's to write");
    }
    for i in [1, 2, 8, 9, 10, 11] {
        assert_eq!(slot[i], clean.words[i], "word {i} written whole");
    }
    assert_eq!(slot[3] & 0x00ff_ffff, old[3] & 0x00ff_ffff, "XRC_SRQN kept");
    assert_eq!(slot[3] >> 24, clean.words[3] >> 24, "SGE_NUM written");
    assert_eq!(slot[4] >> 31, old[4] >> 31, "INL_TYPE kept");
    assert_eq!(slot[4] & 0x00ff_ffff, clean.words[4] & 0x00ff_ffff);
}

/// An RDMA READ with inline data is refused after C has already written
/// the message length, the key and the remote address into the slot (its
/// checks come after `set_rc_opcode`); the next WQE in that slot keeps
/// those words where it does not write its own.
#[test]
fn rc_refused_read_leaves_c_partial_words() {
    use hns_host_tests::hns_roce_hw_v2::wqe::*;
    let sge = [Sge {
        addr: 0x1234_5000,
        len: 8,
        lkey: 0x300,
    }];
    let p = signaled(
        RcOp::RdmaRead {
            rkey: 0x77,
            va: 0x1_0000_2000,
        },
        &sge,
        true,
    );
    let mut slot = [0u32; 16];
    assert_eq!(
        rc_wqe_in(&mut slot, &p, &[0; 8], 32, 1024),
        Err(WqeError::InlineRead)
    );
    assert_eq!(&slot[1..3], &[8, 0]);
    assert_eq!(&slot[5..8], &[0x77, 0x2000, 1]);
}

/// Inline data longer than the WQE holds (40 bytes in segments of 7 and
/// 33, extended SGE index 253 of 256): `INL_TYPE` set, `SGE_NUM` the
/// length in 16-byte SGEs rounded up (3, as libhns counts them, where C's
/// kernel driver counts 2), the start index masked, the next WQE's SGEs
/// after the data (unmasked), and nothing copied into the WQE.
#[test]
fn rc_inline_in_extended_sges() {
    use hns_host_tests::hns_roce_hw_v2::wqe::*;
    let sges = [
        Sge {
            addr: 0x1000,
            len: 7,
            lkey: 0,
        },
        Sge {
            addr: 0x2000,
            len: 33,
            lkey: 0,
        },
    ];
    let mut p = signaled(RcOp::Send, &sges, true);
    p.sge_idx = 509;
    p.sge_cnt = 256;
    let mut slot = [0u32; 16];
    let head = rc_wqe_in(&mut slot, &p, &[0xab; 32], 256, 1024).expect("inline SEND encodes");
    assert_eq!(head.inline_ext, 3);
    assert_eq!(head.next_sge, 512);
    assert_eq!(slot[1], 40, "msg_len");
    assert_eq!(slot[3] >> 24, 3, "SGE_NUM");
    assert_eq!(slot[4], 1 << 31 | 253, "INL_TYPE, MSG_START_SGE_IDX");
    assert_eq!(&slot[8..16], &[0; 8], "no data in the WQE");
    assert_ne!(head.word0 & 1 << 12, 0, "INLINE");
}
