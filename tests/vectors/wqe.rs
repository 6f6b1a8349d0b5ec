// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Send WQE encoding against WQEs the C stack wrote on hns-sim: `udwqe` and
//! `rcwqe` lines of hns-sim's `--dump-data` file of
//! `tests/guest/dump-plan.sh` on `--driver c` (see there).

use super::{expect, Check};
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
