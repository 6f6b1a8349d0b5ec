// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host tests of the RoCE bonding bookkeeping (`bond.rs`): the group's
//! state through the notifier events and the work steps of
//! `hns_roce_bond.c`, the die's ids and suspend count, and the command
//! payload, decoded by hns-sim's own reader of `struct hns_roce_bond_info`.

use hns_host_tests::bond::*;
use hns_host_tests::cmdq::desc::Payload;
use hns_host_tests::vectors::bond as v;
use hns_sim::bond::{BondInfo, MODE_1, MODE_2_4};

/// Net devices are numbers here, handles too.
type G = Group<u32, u32>;

/// The bond master's net device.
const BOND0: u32 = 100;

/// An hns function with the bond capability on bus 0: net device
/// `10 + func`, handle `20 + func`.
fn hns(func: u8) -> Slave<u32, u32> {
    Slave {
        netdev: 10 + u32::from(func),
        hns: Some(HnsDev {
            handle: 20 + u32::from(func),
            func,
            bus: 0,
            bond_cap: true,
            vf: false,
        }),
    }
}

/// A linking CHANGEUPPER of `slave` to [`BOND0`], which now has `slaves`.
fn link<'a>(
    slave: &Slave<u32, u32>,
    info: UpperInfo,
    slaves: &'a [Slave<u32, u32>],
) -> UpperEvent<'a, u32, u32> {
    UpperEvent {
        netdev: slave.netdev,
        hns: slave.hns,
        upper: BOND0,
        lag_master: true,
        linking: true,
        info: Some(info),
        unregistering: false,
        other_group: false,
        slaves,
    }
}

/// The unlinking CHANGEUPPER of `slave` from [`BOND0`], which keeps
/// `slaves`.
fn unlink<'a>(slave: &Slave<u32, u32>, slaves: &'a [Slave<u32, u32>]) -> UpperEvent<'a, u32, u32> {
    UpperEvent {
        linking: false,
        info: None,
        ..link(slave, AB, slaves)
    }
}

const AB: UpperInfo = UpperInfo {
    tx: TxType::ActiveBackup,
    hash: HashType::None,
};

const XOR_L34: UpperInfo = UpperInfo {
    tx: TxType::Hash,
    hash: HashType::L34,
};

/// The six payload words of `cmd` for `g`, and the active-backup warning.
fn words(g: &G, cmd: Cmd) -> ([u32; 6], bool) {
    let mut p = Payload::zeroed();
    let odd = g.write_cmd(cmd, &mut p);
    let w = p.as_le_words();
    ([w[0], w[1], w[2], w[3], w[4], w[5]], odd)
}

/// `set_bond`'s bookkeeping once the members are down and the first one
/// is back: bonded, main = the lowest member, active slaves from `link`.
fn set_bond(g: &mut G, link: impl FnMut(usize) -> LinkState) {
    g.state = State::IsBonded;
    let first = g.slaves().next();
    g.main = first.map(|i| i as u8);
    g.update_active(link);
}

/// Link states: `up` has carrier, `tx` the one active-backup sends on.
fn ls(tx: bool, up: bool) -> LinkState {
    LinkState {
        txable: tx,
        port_active: up,
    }
}

#[test]
fn active_backup_bond_of_two_functions() {
    let (f0, f1) = (hns(0), hns(1));
    let mut g = G::new(0, 0);

    // eth0 joins alone: one slave is no bond, the group stays detached.
    assert!(!g.upper_event(&link(&f0, AB, &[f0])));
    assert_eq!(g.state, State::NotAttached);

    // eth1 joins: the group attaches with eth1's function as main.
    let both = [f0, f1];
    assert!(g.upper_event(&link(&f1, AB, &both)));
    assert_eq!(
        (g.state, g.ready, g.upper, g.main),
        (State::NotBonded, true, Some(BOND0), Some(1))
    );
    assert_eq!(g.tx, TxType::ActiveBackup);

    // The work: both become members at their function numbers; bond them.
    assert_eq!(g.work_begin(&both), WorkStep::Set);
    assert_eq!(g.slave_map, 0x3);
    assert_eq!(g.handles, [Some(20), Some(21), None, None]);
    assert_eq!(g.slaves().rev().collect::<Vec<_>>(), [1, 0]);
    set_bond(&mut g, |i| ls(i == 0, true));
    assert_eq!(g.main, Some(0));
    assert!(g.is_active());

    let (w, odd) = words(&g, Cmd::Set);
    assert!(!odd);
    let info = BondInfo::from_words(&w);
    assert_eq!(
        info,
        BondInfo {
            bond_id: 0,
            mode: MODE_1,
            active_cnt: 1,
            active_mask: 0x1,
            slave_mask: 0x3,
            hash: 0,
        }
    );
    assert_eq!(info.describe(), "mode 1 slaves 0x3 active 0x1 (1) hash -");
    assert_eq!(Cmd::Set.opcode(), 0x8601);

    // eth0 loses its link: the bonding driver makes eth1 the active slave.
    assert!(g.lowerstate_event());
    assert_eq!(g.state, State::SlaveChangeState);
    assert_eq!(g.work_begin(&both), WorkStep::ChangeState);
    g.update_active(|i| ls(i == 1, i == 1));
    g.settle(State::SlaveChangeState);
    assert_eq!(g.state, State::IsBonded);
    let (w, _) = words(&g, Cmd::Change);
    assert_eq!(
        BondInfo::from_words(&w).describe(),
        "mode 1 slaves 0x3 active 0x2 (1) hash -"
    );
    assert_eq!(Cmd::Change.opcode(), 0x8603);

    // The bond is deleted: both slaves leave; once one is left the
    // group can no longer bond, and the work clears it.
    assert!(g.upper_event(&unlink(&f1, &[f0])));
    // C leaves the state and the ready flag alone here; the work finds
    // one slave and clears.
    assert_eq!((g.state, g.ready), (State::IsBonded, true));
    assert_eq!(g.work_begin(&[f0]), WorkStep::Clear);
    let (w, _) = words(&g, Cmd::Clear);
    assert_eq!(w, [0, 0, 0, 0, 0, 0]);
    assert_eq!(Cmd::Clear.opcode(), 0x8602);
    g.detach();
    assert_eq!(
        (g.state, g.upper, g.main, g.slave_map),
        (State::NotAttached, None, None, 0)
    );
    assert_eq!(g.netdevs, [None; FUNC_MAX]);
}

#[test]
fn hash_bond_counts_carrier_and_sends_the_policy() {
    let (f0, f1, f2) = (hns(0), hns(1), hns(2));
    let mut g = G::new(1, 0);
    let two = [f0, f1];
    assert!(g.upper_event(&link(&f1, XOR_L34, &two)));
    assert_eq!(g.work_begin(&two), WorkStep::Set);
    // In a hashing bond the carrier counts, not the active-backup flag.
    set_bond(&mut g, |_| ls(false, true));
    let (w, odd) = words(&g, Cmd::Set);
    assert!(!odd);
    assert_eq!(
        BondInfo::from_words(&w),
        BondInfo {
            bond_id: 1,
            mode: MODE_2_4,
            active_cnt: 2,
            active_mask: 0x3,
            slave_mask: 0x3,
            hash: 1,
        }
    );

    // A third function joins a bonded group: the member count changed.
    let three = [f0, f1, f2];
    assert!(g.upper_event(&link(&f2, XOR_L34, &three)));
    assert_eq!(g.state, State::SlaveChangeNum);
    assert_eq!(g.work_begin(&three), WorkStep::ChangeNum);
    assert_eq!(g.slave_map, 0x7);
    g.update_active(|i| ls(false, i != 0));
    g.settle(State::SlaveChangeNum);
    let (w, _) = words(&g, Cmd::Change);
    assert_eq!(
        BondInfo::from_words(&w).describe(),
        "mode 2/4 slaves 0x7 active 0x6 (2) hash L34"
    );

    // It leaves again: still two, still a bond.
    assert!(g.upper_event(&unlink(&f2, &two)));
    assert_eq!((g.state, g.ready), (State::SlaveChangeNum, true));
    assert_eq!(g.work_begin(&two), WorkStep::ChangeNum);
    assert_eq!(g.slave_map, 0x3);
    // The member that left keeps its slot until it is a plain device
    // again (`hns_roce_slave_change_num` forgets it then).
    assert_eq!(g.netdevs[2], Some(12));
    g.forget(2);
    assert_eq!((g.netdevs[2], g.handles[2]), (None, None));

    for (h, p) in [
        (HashType::L2, 0),
        (HashType::L34, 1),
        (HashType::L23, 2),
        (HashType::Other, 0),
    ] {
        assert_eq!(h.policy(), p);
    }
}

#[test]
fn active_backup_with_no_or_two_active_slaves_is_reported() {
    let (f0, f1) = (hns(0), hns(1));
    let mut g = G::new(0, 0);
    let both = [f0, f1];
    g.upper_event(&link(&f1, AB, &both));
    g.work_begin(&both);
    set_bond(&mut g, |_| ls(false, true));
    assert_eq!(words(&g, Cmd::Set), ([0, 0, 0, 0, 3, 0], true));
    g.update_active(|_| ls(true, true));
    assert!(words(&g, Cmd::Set).1);
}

#[test]
fn refused_settings_and_slaves() {
    let (f0, f1) = (hns(0), hns(1));
    let both = [f0, f1];
    // Round robin, broadcast, TLB/ALB; hashes past layer 2 + 3.
    for info in [
        UpperInfo {
            tx: TxType::Other,
            hash: HashType::None,
        },
        UpperInfo {
            tx: TxType::Hash,
            hash: HashType::Other,
        },
    ] {
        let mut g = G::new(0, 0);
        assert!(!info.supported());
        assert!(!g.upper_event(&link(&f1, info, &both)));
        assert_eq!(g.state, State::NotAttached);
    }
    // A hashing bond with no hash given is C's `hash_type` 0: accepted.
    assert!(UpperInfo {
        tx: TxType::Hash,
        hash: HashType::None
    }
    .supported());

    // A slave without the capability, a VF, a slave of another die, a
    // foreign device, five slaves: no bond.
    let mut nocap = hns(1);
    nocap.hns.as_mut().map(|h| h.bond_cap = false);
    let mut vf = hns(1);
    vf.hns.as_mut().map(|h| h.vf = true);
    let mut other_die = hns(1);
    other_die.hns.as_mut().map(|h| h.bus = 1);
    let foreign = Slave {
        netdev: 50,
        hns: None,
    };
    let g = G::new(0, 0);
    for s in [nocap, vf, other_die, foreign] {
        assert!(!g.slaves_supported(&[f0, s]));
    }
    assert!(g.slaves_supported(&[f0, hns(1), hns(2), hns(3)]));
    assert!(!g.slaves_supported(&[f0, hns(1), hns(2), hns(3), hns(4)]));
    assert!(!g.slaves_supported(&[f0]));

    // A non-LAG upper (a bridge, say), or an event for another group.
    let mut g = G::new(0, 0);
    let mut ev = link(&f1, AB, &both);
    ev.lag_master = false;
    assert!(!g.upper_event(&ev));
    let mut ev = link(&f1, AB, &both);
    ev.other_group = true;
    assert!(!g.upper_event(&ev));
    let mut ev = link(&other_die, AB, &both);
    ev.hns = other_die.hns;
    assert!(!g.upper_event(&ev));
    assert_eq!(g.state, State::NotAttached);
}

#[test]
fn a_member_losing_its_hns_device_still_counts_but_a_stranger_does_not() {
    let (f0, f1) = (hns(0), hns(1));
    let mut g = G::new(0, 0);
    let both = [f0, f1];
    g.upper_event(&link(&f1, AB, &both));
    g.work_begin(&both);
    set_bond(&mut g, |i| ls(i == 0, true));
    // While bonded, f1's ib_device is gone (it is a member of the bonded
    // device): found by its net device alone, it is still supported.
    let f1_bare = Slave {
        netdev: f1.netdev,
        hns: None,
    };
    assert!(g.slave_supported(&f1_bare));
    assert_eq!(g.work_begin(&[f0, f1_bare]), WorkStep::Nothing);
    assert_eq!(g.slave_map, 0x3);
    assert!(!g.slave_supported(&Slave {
        netdev: 99,
        hns: None
    }));
}

#[test]
fn an_unregistering_slave_is_forgotten() {
    let (f0, f1, f2) = (hns(0), hns(1), hns(2));
    let mut g = G::new(0, 0);
    let three = [f0, f1, f2];
    g.upper_event(&link(&f2, AB, &three));
    g.work_begin(&three);
    set_bond(&mut g, |i| ls(i == 0, true));
    let two = [f0, f1];
    let mut ev = unlink(&f2, &two);
    ev.unregistering = true;
    assert!(g.upper_event(&ev));
    assert_eq!((g.netdevs[2], g.handles[2]), (None, None));
    assert_eq!(g.state, State::SlaveChangeNum);
}

#[test]
fn claims_members_and_the_upper_it_follows() {
    let (f0, f1) = (hns(0), hns(1));
    let mut g0 = G::new(0, 0);
    let both = [f0, f1];
    g0.upper_event(&link(&f1, AB, &both));
    // Before the work, the group knows its upper, not yet its members.
    assert!(g0.claims(f0.netdev, Some(BOND0)));
    assert!(!g0.claims(f0.netdev, None));
    assert!(!G::new(1, 0).claims(f0.netdev, Some(BOND0)));
    g0.work_begin(&both);
    assert!(g0.claims(f0.netdev, None));
    assert!(!g0.claims(77, Some(200)));
}

#[test]
fn lowerstate_events_only_mark_a_bonded_group() {
    let mut g = G::new(0, 0);
    assert!(g.lowerstate_event());
    assert_eq!(g.state, State::NotAttached);
    g.state = State::SlaveChangeNum;
    g.ready = true;
    assert!(g.lowerstate_event());
    assert_eq!(g.state, State::SlaveChangeNum);
    g.settle(State::SlaveChangeState);
    assert_eq!(g.state, State::SlaveChangeNum);
}

#[test]
fn die_ids_and_suspend_count() {
    let mut d = Die::default();
    assert_eq!(d.alloc_id(), Some(0));
    assert_eq!(d.alloc_id(), Some(1));
    assert_eq!(d.alloc_id(), None);
    assert_eq!(d.remove_id(0), Some(false));
    assert_eq!(d.alloc_id(), Some(0));
    assert_eq!(d.remove_id(2), None);
    assert_eq!(d.remove_id(1), Some(false));
    assert_eq!(d.remove_id(0), Some(true));

    assert!(d.suspend());
    assert!(!d.suspend());
    assert!(!d.resume());
    assert!(d.resume());
    assert!(!d.resume());
    assert_eq!(d.suspended, 0);

    assert_eq!(member_slot(3), Some(3));
    assert_eq!(member_slot(4), None);
    assert_eq!(
        [State::NotAttached, State::SlaveChangeState].map(State::as_c),
        [0, 4]
    );
    assert_eq!(
        [Cmd::Set, Cmd::Change, Cmd::Clear].map(Cmd::as_c),
        [0, 1, 2]
    );
}

#[test]
fn payloads_as_the_c_driver_sent_them() {
    assert_eq!(v::check_payloads(), Ok(()));
}
