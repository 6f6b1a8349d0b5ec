// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! KUnit suites of hns_roce_rs, built into test builds with `--cfg hns_kunit`
//! and run by the KUnit core when the module loads.
//!
//! The suites run the same vectors as `tests/host`.

use kernel::prelude::*;

/// The context field helper and the generated field maps.
#[kunit_tests(hns_roce_rs_field)]
mod field {
    use crate::vectors::field as v;

    #[test]
    fn write_read() {
        assert_eq!(v::check_write_read(), Ok(()));
    }

    #[test]
    fn truncation_and_neighbours() {
        assert_eq!(v::check_truncation_and_neighbours(), Ok(()));
    }

    #[test]
    fn full_word_and_masks() {
        assert_eq!(v::check_full_word_and_masks(), Ok(()));
    }

    #[test]
    fn little_endian_storage() {
        assert_eq!(v::check_little_endian_storage(), Ok(()));
    }

    #[test]
    fn real_positions() {
        assert_eq!(v::check_real_positions(), Ok(()));
    }

    #[test]
    fn cqc_image() {
        assert_eq!(v::check_cqc_image(), Ok(()));
    }
}

/// The command queue descriptor codec.
#[kunit_tests(hns_roce_rs_cmq)]
mod cmq {
    use crate::vectors::cmq as v;

    #[test]
    fn wire_format() {
        assert_eq!(v::check_wire_format(), Ok(()));
    }

    #[test]
    fn retval_errno() {
        assert_eq!(v::check_retval_errno(), Ok(()));
    }
}

/// HEM page-size arithmetic.
#[kunit_tests(hns_roce_rs_hem)]
mod hem {
    use crate::vectors::hem as v;

    #[test]
    fn small_tables() {
        assert_eq!(v::check_small_tables(), Ok(()));
    }

    #[test]
    fn growth() {
        assert_eq!(v::check_growth(), Ok(()));
    }

    #[test]
    fn hops() {
        assert_eq!(v::check_hops(), Ok(()));
    }
}

/// Decoding the capability queries and the commands built from them.
#[kunit_tests(hns_roce_rs_caps)]
mod caps {
    use crate::vectors::caps as v;

    #[test]
    fn decode() {
        assert_eq!(v::check_decode(), Ok(()));
    }

    #[test]
    fn derived_and_commands() {
        assert_eq!(v::check_derived_and_commands(), Ok(()));
    }
}

/// Harness self-test only (scripts/check.sh): a failing KUnit case must fail
/// the run. Never part of a normal build.
#[cfg(hns_selftest_kunit_fail)]
#[kunit_tests(hns_roce_rs_selftest)]
mod selftest {
    use crate::vectors::field as v;

    #[test]
    fn deliberately_failing() {
        assert_eq!(v::check_write_read(), Err("deliberate failure"));
    }
}
