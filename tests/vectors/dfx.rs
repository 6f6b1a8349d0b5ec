// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors for `dfx.rs`: the text of debugfs `sw_stat/sw_stat`
//! against the C driver's.

use super::{expect, Check};
use crate::dfx::{DfxCnt, SwStat, DFX_CNT_TOTAL};
use core::fmt;

/// `sw_stat/sw_stat` as the C driver printed it on hns-sim after
/// tests/guest/user-objects.py (its boot's output).
pub const C_TEXT: &str = "\
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

/// The counts of that run, by counter.
const C_COUNTS: [(DfxCnt, u64); 8] = [
    (DfxCnt::Aeqe, 53),
    (DfxCnt::Cmds, 136),
    (DfxCnt::MbxPosted, 55),
    (DfxCnt::MbxPolled, 2),
    (DfxCnt::MbxEvent, 53),
    (DfxCnt::CqCreateErr, 3),
    (DfxCnt::MrRegErr, 1),
    (DfxCnt::MmapErr, 1),
];

/// A fixed buffer the text is written into (no allocation in `core`).
struct Buf {
    b: [u8; 1024],
    n: usize,
}

impl fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.n + s.len();
        self.b
            .get_mut(self.n..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.n = end;
        Ok(())
    }
}

/// Counters set to the C run's counts print the C driver's text.
pub fn check_text() -> Check {
    let s = SwStat::new();
    for (c, n) in C_COUNTS {
        for _ in 0..n {
            s.inc(c);
        }
    }
    let mut b = Buf { b: [0; 1024], n: 0 };
    expect(s.show(&mut b).is_ok(), "text fits the buffer")?;
    let text = b.b.get(..b.n).ok_or("length")?;
    expect(
        text == C_TEXT.as_bytes(),
        "text differs from the C driver's",
    )
}

/// The counters sit at C's positions, `from_index` inverts them, and only
/// `inc_if(_, true)` counts.
pub fn check_positions() -> Check {
    expect(DfxCnt::ALL.len() == DFX_CNT_TOTAL, "19 counters")?;
    for (i, c) in DfxCnt::ALL.into_iter().enumerate() {
        // CAST: fewer than 20 counters.
        expect(c as usize == i, "position")?;
        expect(DfxCnt::from_index(i as u32) == Some(c), "from_index")?;
        expect(c.name().len() < 20, "name fits C's 20 columns")?;
    }
    // CAST: as above.
    expect(
        DfxCnt::from_index(DFX_CNT_TOTAL as u32).is_none(),
        "past the end",
    )?;
    let s = SwStat::new();
    s.inc_if(DfxCnt::CmdsErr, false);
    s.inc_if(DfxCnt::CmdsErr, true);
    expect(s.get(DfxCnt::CmdsErr) == 1, "inc_if")
}
