// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! KUnit suites of hns_roce_rs, built into test builds with `--cfg kunit_build`
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

    #[test]
    fn head() {
        assert_eq!(v::check_head(), Ok(()));
    }
}

/// The mailbox slots' token protocol: a late event never completes the
/// slot's next waiter.
#[kunit_tests(hns_roce_rs_mbox_slot)]
mod mbox_slot {
    use crate::vectors::mbox_slot as v;

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
}

/// The software counters and the text of debugfs `sw_stat`.
#[kunit_tests(hns_roce_rs_dfx)]
mod dfx {
    use crate::vectors::dfx as v;

    #[test]
    fn text_is_the_c_drivers() {
        assert_eq!(v::check_text(), Ok(()));
    }

    #[test]
    fn positions() {
        assert_eq!(v::check_positions(), Ok(()));
    }
}

/// The command queue descriptor codec and command payloads.
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

    #[test]
    fn chain() {
        assert_eq!(v::check_chain(), Ok(()));
    }

    #[test]
    fn sgid_tb() {
        assert_eq!(v::check_sgid_tb(), Ok(()));
    }

    #[test]
    fn smac_tb() {
        assert_eq!(v::check_smac_tb(), Ok(()));
    }

    #[test]
    fn gmv_tb() {
        assert_eq!(v::check_gmv_tb(), Ok(()));
    }

    #[test]
    fn bond_payloads() {
        assert_eq!(crate::vectors::bond::check_payloads(), Ok(()));
    }
}

/// HEM page-size arithmetic, the context-table manager's plans and the BT
/// layout of multi-region MTRs.
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

    #[test]
    fn worked_pg_sz() {
        assert_eq!(v::check_worked_pg_sz(), Ok(()));
    }

    #[test]
    fn worked_geometry() {
        assert_eq!(v::check_worked_geometry(), Ok(()));
    }

    #[test]
    fn worked_indexes() {
        assert_eq!(v::check_worked_indexes(), Ok(()));
    }

    #[test]
    fn worked_plans() {
        assert_eq!(v::check_worked_plans(), Ok(()));
    }

    #[test]
    fn worked_flat() {
        assert_eq!(v::check_worked_flat(), Ok(()));
    }

    #[test]
    fn sim_default_tables() {
        assert_eq!(v::check_sim_default_tables(&v::sim_default_caps()), Ok(()));
    }

    #[test]
    fn sim_default_indexes() {
        assert_eq!(v::check_sim_default_indexes(&v::sim_default_caps()), Ok(()));
    }

    #[test]
    fn sim_default_trace() {
        assert_eq!(v::check_sim_default_trace(&v::sim_default_caps()), Ok(()));
    }

    #[test]
    fn levels_and_steps() {
        assert_eq!(v::check_levels_and_steps(), Ok(()));
    }

    #[test]
    fn hop2_plans() {
        assert_eq!(v::check_hop2_plans(), Ok(()));
    }

    #[test]
    fn invalid_and_edges() {
        assert_eq!(v::check_invalid_and_edges(), Ok(()));
    }

    #[test]
    fn mtr_gsi_qp() {
        assert_eq!(v::check_mtr_gsi_qp(), Ok(()));
    }

    #[test]
    fn mtr_hop3_hop0() {
        assert_eq!(v::check_mtr_hop3_hop0(), Ok(()));
    }

    #[test]
    fn mtr_hop3_mr() {
        assert_eq!(v::check_mtr_hop3_mr(), Ok(()));
    }

    #[test]
    fn mtr_multi_l1() {
        assert_eq!(v::check_mtr_multi_l1(), Ok(()));
    }

    #[test]
    fn mtr_root_limits() {
        assert_eq!(v::check_mtr_root_limits(), Ok(()));
    }

    #[test]
    fn mtr_regions_and_hops() {
        assert_eq!(v::check_mtr_regions_and_hops(), Ok(()));
    }

    #[test]
    fn user_mtr() {
        assert_eq!(v::check_user_mtr(), Ok(()));
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

/// Context images and doorbell words against the C driver's.
#[kunit_tests(hns_roce_rs_ctx)]
mod ctx {
    use crate::vectors::ctx as v;

    #[test]
    fn eq_contexts() {
        assert_eq!(v::check_eq_contexts(), Ok(()));
    }

    #[test]
    fn cq_context() {
        assert_eq!(v::check_cq_context(), Ok(()));
    }

    #[test]
    fn dma_mr_mpt() {
        assert_eq!(v::check_dma_mr_mpt(), Ok(()));
    }

    #[test]
    fn user_mr_mpt() {
        assert_eq!(v::check_user_mr_mpt(), Ok(()));
    }

    #[test]
    fn frmr_mpt() {
        assert_eq!(v::check_frmr_mpt(), Ok(()));
    }

    #[test]
    fn rereg_mpt_writes_the_new_hop() {
        assert_eq!(v::check_rereg_mpt_writes_the_new_hop(), Ok(()));
    }

    #[test]
    fn doorbells() {
        assert_eq!(v::check_doorbells(), Ok(()));
    }

    #[test]
    fn cq_moderation() {
        assert_eq!(v::check_cq_moderation(), Ok(()));
    }

    #[test]
    fn srq_context() {
        assert_eq!(v::check_srq_context(), Ok(()));
    }

    #[test]
    fn srq_limit() {
        assert_eq!(v::check_srq_limit(), Ok(()));
    }
}

/// QP context images, queue sizing and RQ WQEs.
#[kunit_tests(hns_roce_rs_qpc)]
mod qpc {
    use crate::vectors::qpc as v;

    #[test]
    fn gsi_modifies() {
        assert_eq!(v::check_gsi_modifies(), Ok(()));
    }

    #[test]
    fn masks() {
        assert_eq!(v::check_masks(), Ok(()));
    }

    #[test]
    fn opt_fields() {
        assert_eq!(v::check_opt_fields(), Ok(()));
    }

    #[test]
    fn queue_sizes() {
        assert_eq!(v::check_queue_sizes(), Ok(()));
    }

    #[test]
    fn rq_wqe() {
        assert_eq!(v::check_rq_wqe(), Ok(()));
    }

    #[test]
    fn qp_type_support() {
        assert_eq!(v::check_qp_type_support(), Ok(()));
    }

    #[test]
    fn state_table() {
        assert_eq!(v::check_state_table(), Ok(()));
    }

    #[test]
    fn rc_user_modifies() {
        assert_eq!(v::check_rc_user_modifies(), Ok(()));
    }

    #[test]
    fn free_mr_modifies() {
        assert_eq!(v::check_free_mr_modifies(), Ok(()));
    }

    #[test]
    fn ud_user_modifies() {
        assert_eq!(v::check_ud_user_modifies(), Ok(()));
    }

    #[test]
    fn xrc_init_modifies() {
        assert_eq!(v::check_xrc_init_modifies(), Ok(()));
    }
}

/// The DIP congestion context table.
#[kunit_tests(hns_roce_rs_dip)]
mod dip {
    use crate::vectors::dip as v;

    #[test]
    fn sharing() {
        assert_eq!(v::check_dip_sharing(), Ok(()));
    }

    #[test]
    fn full() {
        assert_eq!(v::check_dip_full(), Ok(()));
    }
}

/// The id and bank allocators.
#[kunit_tests(hns_roce_rs_bitmap)]
mod bitmap {
    use crate::vectors::bitmap as v;

    #[test]
    fn ida_ranges() {
        assert_eq!(v::check_ida_ranges(), Ok(()));
    }

    #[test]
    fn ida_full_and_errors() {
        assert_eq!(v::check_ida_full_and_errors(), Ok(()));
    }

    #[test]
    fn ida_word_boundaries() {
        assert_eq!(v::check_ida_word_boundaries(), Ok(()));
    }

    #[test]
    fn qp_sim_defaults() {
        assert_eq!(v::check_qp_sim_defaults(), Ok(()));
    }

    #[test]
    fn qp_wrap_and_reserved() {
        assert_eq!(v::check_qp_wrap_and_reserved(), Ok(()));
    }

    #[test]
    fn qp_limit_bank() {
        assert_eq!(v::check_qp_limit_bank(), Ok(()));
    }

    #[test]
    fn cq_hip09() {
        assert_eq!(v::check_cq_hip09(), Ok(()));
    }

    #[test]
    fn cq_hip08() {
        assert_eq!(v::check_cq_hip08(), Ok(()));
    }
}

/// The congestion control parameter tables, block and number parser.
#[kunit_tests(hns_roce_rs_scc)]
mod scc {
    use crate::vectors::scc as v;

    #[test]
    fn tables() {
        assert_eq!(v::check_tables(), Ok(()));
    }

    #[test]
    fn algos() {
        assert_eq!(v::check_algos(), Ok(()));
    }

    #[test]
    fn params() {
        assert_eq!(v::check_params(), Ok(()));
    }

    #[test]
    fn kstrtou32() {
        assert_eq!(v::check_kstrtou32(), Ok(()));
    }
}

/// CQE decoding: status and opcode tables, ownership, SQ tail, the C
/// driver's CQEs.
#[kunit_tests(hns_roce_rs_cqe)]
mod cqe {
    use crate::vectors::cqe as v;

    #[test]
    fn status_table() {
        assert_eq!(v::check_status_table(), Ok(()));
    }

    #[test]
    fn opcode_maps() {
        assert_eq!(v::check_opcode_maps(), Ok(()));
    }

    #[test]
    fn owner_and_tail() {
        assert_eq!(v::check_owner_and_tail(), Ok(()));
    }

    #[test]
    fn c_cqes() {
        assert_eq!(v::check_c_cqes(), Ok(()));
    }
}

/// Send WQE encoding: the C stack's UD and RC WQEs, doorbell, owner bit.
#[kunit_tests(hns_roce_rs_wqe)]
mod wqe {
    use crate::vectors::wqe as v;

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
}

/// SRQ encoding: the C driver's SRQ WQEs and index entries, the doorbell.
#[kunit_tests(hns_roce_rs_srqwqe)]
mod srqwqe {
    use crate::vectors::srqwqe as v;

    #[test]
    fn c_srq_wqes() {
        assert_eq!(v::check_c_srq_wqes(), Ok(()));
    }

    #[test]
    fn srq_wqe_fill() {
        assert_eq!(v::check_srq_wqe_fill(), Ok(()));
    }

    #[test]
    fn c_srq_doorbells() {
        assert_eq!(v::check_c_srq_doorbells(), Ok(()));
    }

    #[test]
    fn idx_and_doorbell() {
        assert_eq!(v::check_idx_and_doorbell(), Ok(()));
    }
}

/// The driver's interrupt-safe spinlock, the kernel crate's `SpinLockIrq`:
/// interrupts off while any such lock is held and on again only when the
/// last is released, in whatever order the guards go (an irqsave lock would
/// restore the outer lock's saved state, interrupts on, while the inner is
/// still held), and `try_lock`.
#[kunit_tests(hns_roce_rs_lock)]
mod lock {
    use crate::rdma::{irqs_disabled, new_spinlock_irq};
    use kernel::prelude::*;

    #[test]
    fn irq_nesting_and_try_lock() -> Result {
        let outer = KBox::pin_init(new_spinlock_irq!(0u32, "kunit outer"), GFP_KERNEL)?;
        let inner = KBox::pin_init(new_spinlock_irq!(0u32, "kunit inner"), GFP_KERNEL)?;
        assert!(!irqs_disabled());
        {
            let mut o = outer.lock();
            assert!(irqs_disabled());
            *o += 1;
            {
                let mut i = inner.lock();
                *i += 1;
                assert!(inner.try_lock().is_none());
            }
            // Released inside the outer lock: still off.
            assert!(irqs_disabled());
            let took = inner.try_lock().map(|mut i| *i += 1);
            assert!(took.is_some());
            assert!(irqs_disabled());
        }
        assert!(!irqs_disabled());
        // Outer released first: the inner lock still holds interrupts off.
        let o = outer.lock();
        let i = inner.lock();
        drop(o);
        assert!(irqs_disabled());
        drop(i);
        assert!(!irqs_disabled());
        assert_eq!((*outer.lock(), *inner.lock()), (1, 2));
        assert!(!irqs_disabled());
        Ok(())
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

/// The udata length rules and the user ABI's lengths.
#[kunit_tests(hns_roce_rs_udata)]
mod udata {
    use crate::vectors::udata as v;

    #[test]
    fn abi_lengths() {
        assert_eq!(v::check_abi_lengths(), Ok(()));
    }

    #[test]
    fn in_rules() {
        assert_eq!(v::check_in_rules(), Ok(()));
    }

    #[test]
    fn out_rules() {
        assert_eq!(v::check_out_rules(), Ok(()));
    }
}
