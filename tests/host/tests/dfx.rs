// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the software counters and the text of debugfs `sw_stat`.

use hns_host_tests::vectors::dfx as v;

#[test]
fn text_is_the_c_drivers() {
    assert_eq!(v::check_text(), Ok(()));
}

#[test]
fn positions() {
    assert_eq!(v::check_positions(), Ok(()));
}
