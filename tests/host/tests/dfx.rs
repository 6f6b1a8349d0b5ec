// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the software counters and the text of debugfs `sw_stat`.

use hns_host_tests::dfx::{DfxCnt, SwStat, DFX_CNT_TOTAL};

/// `sw_stat/sw_stat` as the C driver printed it on hns-sim after
/// tests/guest/user-objects.py (its boot's output).
const C_TEXT: &str = "\
aeqe                 --- 53
ceqe                 --- 0
cmds                 --- 136
cmds_err             --- 0
posted_mbx           --- 55
polled_mbx           --- 2
mbx_event            --- 53
qp_create_err        --- 0
qp_modify_err        --- 0
cq_create_err        --- 3
cq_modify_err        --- 0
srq_create_err       --- 0
srq_modify_err       --- 0
xrcd_alloc_err       --- 0
mr_reg_err           --- 1
mr_rereg_err         --- 0
ah_create_err        --- 0
mmap_err             --- 1
uctx_alloc_err       --- 0
";

fn add(s: &SwStat, c: DfxCnt, n: u64) {
    for _ in 0..n {
        s.inc(c);
    }
}

#[test]
fn text_is_the_c_drivers() {
    let s = SwStat::new();
    add(&s, DfxCnt::Aeqe, 53);
    add(&s, DfxCnt::Cmds, 136);
    add(&s, DfxCnt::MbxPosted, 55);
    add(&s, DfxCnt::MbxPolled, 2);
    add(&s, DfxCnt::MbxEvent, 53);
    add(&s, DfxCnt::CqCreateErr, 3);
    add(&s, DfxCnt::MrRegErr, 1);
    add(&s, DfxCnt::MmapErr, 1);
    let mut out = String::new();
    s.show(&mut out).unwrap();
    assert_eq!(out, C_TEXT);
}

#[test]
fn names_and_positions() {
    assert_eq!(DfxCnt::ALL.len(), DFX_CNT_TOTAL);
    for (i, c) in DfxCnt::ALL.into_iter().enumerate() {
        assert_eq!(c as usize, i);
        assert_eq!(DfxCnt::from_index(i as u32), Some(c));
        // Every name fits the 20 columns C pads it to.
        assert!(c.name().len() < 20);
    }
    assert_eq!(DfxCnt::from_index(DFX_CNT_TOTAL as u32), None);
}

#[test]
fn inc_if_counts_failures_only() {
    let s = SwStat::default();
    s.inc_if(DfxCnt::CmdsErr, false);
    s.inc_if(DfxCnt::CmdsErr, true);
    assert_eq!(s.get(DfxCnt::CmdsErr), 1);
    let mut out = String::new();
    s.show(&mut out).unwrap();
    assert!(out.lines().any(|l| l == "cmds_err             --- 1"));
}
