// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Test vectors shared by the host tests and the KUnit suites (`core` only).

pub mod bitmap;
pub mod bond;
pub mod caps;
pub mod cmq;
pub mod cqe;
pub mod ctx;
pub mod dbwin;
pub mod dfx;
pub mod dip;
pub mod field;
pub mod hem;
pub mod mbox_slot;
pub mod qpc;
pub mod scc;
pub mod srqwqe;
pub mod udata;
pub mod wqe;

/// Result of one check: `Err` names the first expectation that failed.
pub type Check = Result<(), &'static str>;

/// `Ok` if `ok`, else `Err(what)`.
pub fn expect(ok: bool, what: &'static str) -> Check {
    if ok {
        Ok(())
    } else {
        Err(what)
    }
}
