// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the mailbox slots' token protocol.

use hns_host_tests::vectors::mbox_slot as v;

#[test]
fn event_completes_its_waiter() {
    assert_eq!(v::check_event_completes_its_waiter(), Ok(()));
}

#[test]
fn stale_event_is_refused() {
    assert_eq!(v::check_stale_event_is_refused(), Ok(()));
}

#[test]
fn late_event_before_rearm_is_forgotten() {
    assert_eq!(v::check_late_event_before_rearm_is_forgotten(), Ok(()));
}

#[test]
fn late_event_racing_rearm_completes_no_new_waiter() {
    assert_eq!(
        v::check_late_event_racing_rearm_completes_no_new_waiter(),
        Ok(())
    );
}
