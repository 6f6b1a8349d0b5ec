// SPDX-License-Identifier: GPL-2.0

//! RoCE bonding (link aggregation of two to four functions of one die):
//! the bookkeeping and the firmware command, `core` only.
//!
//! The C driver (`hns_roce_bond.c`) keeps, per PCI bus ("die"), two bond
//! groups. Each group follows one LAG upper device (a `bonding` master)
//! through netdev notifier events, and a delayed work item then brings
//! the member functions' RoCE instances in line: all members are torn
//! down and the first one comes back as the bonded device, which tells
//! the firmware the slave and active-slave masks (SET_BOND_INFO); later
//! changes of the slaves' link state or of the member set are sent as
//! CHANGE_ACTIVE_PORT; when the bond goes away the members come back one
//! by one and CLEAR_BOND_INFO is sent.
//!
//! This file holds what can be decided without the kernel: the group's
//! state machine (what each notifier event does to it, what the work does
//! in each state), the masks, the die's bond ids and suspend count, and
//! the command payload. Net devices and hnae3 handles are opaque
//! identities (`N`, `H`) here; the kernel part (notifier, work item, the
//! instances' init and uninit) supplies what it reads from them as plain
//! values ([`Slave`], [`LinkState`], [`UpperEvent`]).
//!
//! Deliberate differences from C, all at inputs C does not check: a
//! function number above 3 is never used as a member index (C indexes its
//! four-entry array with it), an unknown hash type is sent as layer 2
//! without a warning splat (C WARNs), and a resume without a suspend
//! leaves the count at zero (C's `u8` wraps).

use crate::cmdq::desc::Payload;
use crate::hns_roce_hw_v2::cmq_fields::bond_info;
use crate::hns_roce_hw_v2::consts::cmq_op;

#[cfg(CONFIG_RUST)]
#[path = "bond/groups.rs"]
pub(crate) mod groups;

/// Functions a bond can have (`ROCE_BOND_FUNC_MAX`): member indexes are
/// PCI function numbers, so only functions 0..=3 of a die can bond.
pub const FUNC_MAX: usize = 4;
/// Bond groups per die (`ROCE_BOND_NUM_MAX`); a group's bond id is its
/// index.
pub const NUM_MAX: usize = 2;

/// The upper device's transmit policy, as the bonding driver reports it
/// in its `netdev_lag_upper_info` (`enum netdev_lag_tx_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxType {
    /// Active-backup (bonding mode 1).
    ActiveBackup,
    /// Hashed over the active slaves (modes 2 and 4).
    Hash,
    /// Anything else (round robin, broadcast, TLB/ALB, unknown): no RoCE
    /// bond.
    Other,
}

/// The hash a [`TxType::Hash`] bond spreads flows with (`enum
/// netdev_lag_hash`), as far as RoCE bonding distinguishes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashType {
    /// `NETDEV_LAG_HASH_NONE` (what a non-hash bond reports).
    None,
    /// Layer 2.
    L2,
    /// Layer 3 + 4.
    L34,
    /// Layer 2 + 3.
    L23,
    /// Anything after layer 2 + 3 (encapsulated, VLAN + source MAC,
    /// unknown): no RoCE bond in hash mode.
    Other,
}

impl HashType {
    /// The firmware's hash policy word (`enum hns_roce_bond_hashtype`).
    /// C warns about a type it does not know and sends layer 2; so does
    /// this, without the warning (the notifier refuses such a bond before
    /// a command is sent).
    pub fn policy(self) -> u32 {
        match self {
            HashType::L34 => 1,
            HashType::L23 => 2,
            HashType::None | HashType::L2 | HashType::Other => 0,
        }
    }
}

/// The upper device's bonding settings, carried by a linking
/// CHANGEUPPER event (`struct netdev_lag_upper_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpperInfo {
    /// Transmit policy.
    pub tx: TxType,
    /// Hash of a hashing bond.
    pub hash: HashType,
}

impl UpperInfo {
    /// Whether the firmware can bond with these settings
    /// (`is_bond_setting_supported`): active-backup, or a hash over
    /// layer 2, 2 + 3 or 3 + 4.
    pub fn supported(&self) -> bool {
        match self.tx {
            TxType::ActiveBackup => true,
            TxType::Hash => !matches!(self.hash, HashType::Other),
            TxType::Other => false,
        }
    }
}

/// A group's state (`enum hns_roce_bond_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Follows no upper device.
    NotAttached,
    /// Follows an upper device; the members are plain devices.
    NotBonded,
    /// The members are one bonded device.
    IsBonded,
    /// Bonded; slaves joined or left since the last command.
    SlaveChangeNum,
    /// Bonded; a slave's link state changed since the last command.
    SlaveChangeState,
}

impl State {
    /// The number C's log line prints for the state.
    pub fn as_c(self) -> u32 {
        match self {
            State::NotAttached => 0,
            State::NotBonded => 1,
            State::IsBonded => 2,
            State::SlaveChangeNum => 3,
            State::SlaveChangeState => 4,
        }
    }
}

/// The three bond commands (`enum hns_roce_bond_cmd_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// SET_BOND_INFO: a new bond, or a bond restored after a reset.
    Set,
    /// CHANGE_ACTIVE_PORT: new masks for an existing bond.
    Change,
    /// CLEAR_BOND_INFO: the bond is gone.
    Clear,
}

impl Cmd {
    /// The command's opcode.
    pub fn opcode(self) -> u16 {
        match self {
            Cmd::Set => cmq_op::SET_BOND_INFO,
            Cmd::Change => cmq_op::CHANGE_ACTIVE_PORT,
            Cmd::Clear => cmq_op::CLEAR_BOND_INFO,
        }
    }

    /// The number C's error message prints for the command.
    pub fn as_c(self) -> u32 {
        match self {
            Cmd::Set => 0,
            Cmd::Change => 1,
            Cmd::Clear => 2,
        }
    }
}

/// The firmware's bond mode word for active-backup (`BOND_MODE_1`).
const BOND_MODE_1: u32 = 0;
/// The firmware's bond mode word for hashing bonds (`BOND_MODE_2_4`).
const BOND_MODE_2_4: u32 = 1;

/// What the kernel part knows of an hns RoCE device (the ib_device found
/// for a net device with `ib_device_get_by_netdev`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HnsDev<H> {
    /// The function's hnae3 handle.
    pub handle: H,
    /// PCI function number (`PCI_FUNC(devfn)`): the member index.
    pub func: u8,
    /// PCI bus number: the die.
    pub bus: u8,
    /// The engine has the bond capability.
    pub bond_cap: bool,
    /// A VF, or a PF with VFs enabled: never bonds.
    pub vf: bool,
}

/// One lower device of an upper, as the kernel part reads it under RCU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slave<N, H> {
    /// The lower net device.
    pub netdev: N,
    /// The hns device on it, if there is one.
    pub hns: Option<HnsDev<H>>,
}

/// A slave's link as the active-slave computation reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkState {
    /// The bonding driver may transmit on it (`net_lag_port_dev_txable`):
    /// what counts in active-backup.
    pub txable: bool,
    /// Running with carrier (`ib_get_curr_port_state` is ACTIVE): what
    /// counts in a hashing bond.
    pub port_active: bool,
}

/// Whether a group can bond its upper device (`enum bond_support_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// No: the event is not the group's business.
    No,
    /// The group follows the upper, which can no longer be bonded.
    NoLonger,
    /// Yes.
    Yes,
}

/// A CHANGEUPPER notification, with what the kernel part read for it.
#[derive(Clone, Copy, Debug)]
pub struct UpperEvent<'a, N, H> {
    /// The device whose upper changed.
    pub netdev: N,
    /// The hns device on `netdev`, if there is one.
    pub hns: Option<HnsDev<H>>,
    /// The upper device.
    pub upper: N,
    /// The upper is a LAG master (`netif_is_lag_master`).
    pub lag_master: bool,
    /// `netdev` is being linked to the upper (not unlinked).
    pub linking: bool,
    /// The bonding settings of a linking event.
    pub info: Option<UpperInfo>,
    /// `netdev` is being unregistered.
    pub unregistering: bool,
    /// Another group of the die claims `netdev` already.
    pub other_group: bool,
    /// The upper's lower devices now.
    pub slaves: &'a [Slave<N, H>],
}

/// What the delayed work has to do, decided under the group's lock
/// ([`Group::work_begin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkStep {
    /// The upper can no longer be bonded: members back as plain devices,
    /// CLEAR_BOND_INFO, detach (`hns_roce_clear_bond`).
    Clear,
    /// Bond the members (`hns_roce_set_bond`).
    Set,
    /// Send the new active slaves (`hns_roce_slave_changestate`), then
    /// point the port at the active slave.
    ChangeState,
    /// Take joining members down and bring leaving ones back
    /// (`hns_roce_slave_change_num`), then point the port at the active
    /// slave.
    ChangeNum,
    /// Nothing.
    Nothing,
}

/// One bond group (`struct hns_roce_bond_group`): `N` identifies a net
/// device, `H` an hnae3 handle.
#[derive(Clone, Debug)]
pub struct Group<N, H> {
    /// The bond id (the group's index in its die).
    pub bond_id: u8,
    /// The die (PCI bus).
    pub bus: u8,
    /// The upper device followed.
    pub upper: Option<N>,
    /// The function of the main device (the one the commands go through,
    /// and the one registered as the bonded device).
    pub main: Option<u8>,
    /// The main device's handle.
    pub main_handle: Option<H>,
    /// State.
    pub state: State,
    /// The upper could be bonded at the last event or work.
    pub ready: bool,
    /// Member functions that are slaves of the upper, one bit each.
    pub slave_map: u32,
    /// Slaves that carry traffic, one bit each.
    pub active_map: u32,
    /// Bits of `active_map`.
    pub active_num: u32,
    /// Transmit policy of the upper.
    pub tx: TxType,
    /// Hash of the upper.
    pub hash: HashType,
    /// The members' net devices, by function number (`bond_func_info[]`'s
    /// `net_dev`): a function is a member while it has one here.
    pub netdevs: [Option<N>; FUNC_MAX],
    /// The members' hnae3 handles, by function number. A function leaving
    /// the bond loses its net device here first and keeps its handle until
    /// it is a plain device again.
    pub handles: [Option<H>; FUNC_MAX],
}

impl<N: Copy + PartialEq, H: Copy + PartialEq> Group<N, H> {
    /// A detached group with id `bond_id` on die `bus`.
    pub fn new(bond_id: u8, bus: u8) -> Self {
        Group {
            bond_id,
            bus,
            upper: None,
            main: None,
            main_handle: None,
            state: State::NotAttached,
            ready: false,
            slave_map: 0,
            active_map: 0,
            active_num: 0,
            tx: TxType::Other,
            hash: HashType::None,
            netdevs: [None; FUNC_MAX],
            handles: [None; FUNC_MAX],
        }
    }

    /// The member index of `netdev` (`get_netdev_bond_slave_id`).
    #[inline(never)]
    pub fn member_index(&self, netdev: N) -> Option<usize> {
        self.netdevs.iter().position(|n| *n == Some(netdev))
    }

    /// Whether this group is the one of `netdev`, whose master upper is
    /// `upper_of` (`hns_roce_get_bond_grp`'s test of one group): it is a
    /// member, or the group follows its upper.
    pub fn claims(&self, netdev: N, upper_of: Option<N>) -> bool {
        if self.member_index(netdev).is_some() {
            return true;
        }
        matches!((self.upper, upper_of), (Some(a), Some(b)) if a == b)
    }

    /// The members are one bonded device (`hns_roce_bond_is_active`).
    pub fn is_active(&self) -> bool {
        !matches!(self.state, State::NotBonded | State::NotAttached)
    }

    /// Whether `slave` can be part of this group's bond
    /// (`is_dev_bond_supported`): an hns device of this die with the bond
    /// capability and no VFs, or, with no hns device on it any more, a
    /// member already.
    pub fn slave_supported(&self, slave: &Slave<N, H>) -> bool {
        match slave.hns {
            None => self.member_index(slave.netdev).is_some(),
            Some(h) => h.bond_cap && !h.vf && h.bus == self.bus,
        }
    }

    /// Whether every lower device of the upper can bond and there are two
    /// to four of them (`check_slave_support`).
    #[inline(never)]
    pub fn slaves_supported(&self, slaves: &[Slave<N, H>]) -> bool {
        slaves.iter().all(|s| self.slave_supported(s)) && (2..=FUNC_MAX).contains(&slaves.len())
    }

    /// Rebuilds the slave mask from the upper's lower devices
    /// (`hns_roce_bond_info_update_nolock`): members keep their index, an
    /// hns device not yet a member becomes one at its function number if
    /// that slot is free, anything else is left out.
    pub fn update_slaves(&mut self, slaves: &[Slave<N, H>]) {
        self.slave_map = 0;
        for s in slaves {
            let idx = match self.member_index(s.netdev) {
                Some(i) => i,
                None => {
                    let Some(h) = s.hns else { continue };
                    let i = usize::from(h.func);
                    let Some(slot) = self.netdevs.get_mut(i) else {
                        continue;
                    };
                    if slot.is_none() {
                        *slot = Some(s.netdev);
                        self.handles[i] = Some(h.handle);
                    }
                    i
                }
            };
            self.slave_map |= 1 << idx;
        }
    }

    /// Recomputes the active slaves (`hns_roce_bond_get_active_slave`):
    /// the members in the slave mask whose link `link(index)` counts as
    /// active for the group's policy.
    pub fn update_active(&mut self, mut link: impl FnMut(usize) -> LinkState) {
        let mut map = 0u32;
        for i in 0..FUNC_MAX {
            if self.netdevs[i].is_none() || self.slave_map & (1 << i) == 0 {
                continue;
            }
            let l = link(i);
            let active = if self.tx == TxType::ActiveBackup {
                l.txable
            } else {
                l.port_active
            };
            if active {
                map |= 1 << i;
            }
        }
        self.active_map = map;
        self.active_num = map.count_ones();
    }

    /// Whether the group can (still) bond after a CHANGEUPPER event
    /// (`check_bond_support`).
    pub fn support(&self, ev: &UpperEvent<'_, N, H>) -> Support {
        let follows = self.upper == Some(ev.upper);
        if !ev.linking && !follows {
            return Support::No;
        }
        let ok = if ev.linking {
            ev.info.is_some_and(|i| i.supported()) && self.slaves_supported(ev.slaves)
        } else {
            ev.slaves
                .iter()
                .filter(|s| self.member_index(s.netdev).is_some())
                .count()
                > 1
        };
        match (ok, follows) {
            (true, _) => Support::Yes,
            (false, true) => Support::NoLonger,
            (false, false) => Support::No,
        }
    }

    /// Whether a CHANGEUPPER event concerns this group
    /// (`upper_event_filter`): once attached, events of its own upper; a
    /// detached group takes a linking event of an hns device of its die
    /// that no other group claims.
    pub fn upper_event_for_us(&self, ev: &UpperEvent<'_, N, H>) -> bool {
        if !ev.linking || self.state != State::NotAttached {
            return self.upper == Some(ev.upper);
        }
        match ev.hns {
            None => false,
            Some(h) => h.bus == self.bus && !ev.other_group,
        }
    }

    /// Handles a CHANGEUPPER event (`hns_roce_bond_upper_event`, the part
    /// under the group's lock and the settings after it); true if the
    /// work must run.
    pub fn upper_event(&mut self, ev: &UpperEvent<'_, N, H>) -> bool {
        if !ev.lag_master || !self.upper_event_for_us(ev) {
            return false;
        }
        let support = self.support(ev);
        if support == Support::No {
            return false;
        }
        if self.state == State::NotAttached {
            let Some(h) = ev.hns else { return false };
            self.upper = Some(ev.upper);
            self.main = Some(h.func);
            self.main_handle = Some(h.handle);
            self.state = State::NotBonded;
            self.ready = false;
        }
        // A member going away with its net device is not brought back.
        if ev.unregistering {
            if let Some(i) = self.member_index(ev.netdev) {
                self.forget(i);
            }
        }
        if support == Support::Yes {
            self.ready = true;
            if self.state != State::NotBonded {
                self.state = State::SlaveChangeNum;
            }
            if ev.linking {
                if let Some(info) = ev.info {
                    self.tx = info.tx;
                    self.hash = info.hash;
                }
            }
        }
        true
    }

    /// Handles a CHANGELOWERSTATE event of a LAG port this group claims
    /// (`hns_roce_bond_lowerstate_event`; the caller checked the port and
    /// the claim); true if the work must run.
    pub fn lowerstate_event(&mut self) -> bool {
        if self.ready && self.state == State::IsBonded {
            self.state = State::SlaveChangeState;
        }
        true
    }

    /// The first part of the work, under the group's lock: re-checks the
    /// upper's slaves, rebuilds the slave mask and says what to do.
    pub fn work_begin(&mut self, slaves: &[Slave<N, H>]) -> WorkStep {
        let ready = self.slaves_supported(slaves);
        self.update_slaves(slaves);
        self.ready = ready;
        if !ready {
            return WorkStep::Clear;
        }
        match self.state {
            State::NotBonded => WorkStep::Set,
            State::SlaveChangeState => WorkStep::ChangeState,
            State::SlaveChangeNum => WorkStep::ChangeNum,
            State::NotAttached | State::IsBonded => WorkStep::Nothing,
        }
    }

    /// Members in the slave mask, by function number (`set_bond`'s
    /// teardown walks them downwards, its bring-up upwards).
    pub fn slaves(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        (0..FUNC_MAX).filter(move |i| self.slave_map & (1 << i) != 0)
    }

    /// A command that ended a state change successfully moves the group
    /// back to bonded if no other event came meanwhile.
    pub fn settle(&mut self, from: State) {
        if self.state == from {
            self.state = State::IsBonded;
        }
    }

    /// Forgets the upper and the members (`hns_roce_detach_bond_grp`).
    pub fn detach(&mut self) {
        self.upper = None;
        self.main = None;
        self.main_handle = None;
        self.ready = false;
        self.state = State::NotAttached;
        self.slave_map = 0;
        self.netdevs = [None; FUNC_MAX];
        self.handles = [None; FUNC_MAX];
    }

    /// Forgets every trace of handle `h` (its function left the hnae3
    /// core): its member slot and, if it was the main device, the main.
    pub fn forget_handle(&mut self, h: H) {
        for i in 0..FUNC_MAX {
            if self.handles[i] == Some(h) {
                self.forget(i);
            }
        }
        if self.main_handle == Some(h) {
            self.main = None;
            self.main_handle = None;
        }
    }

    /// Makes member `i` the main device (`None`: there is none).
    pub fn set_main(&mut self, i: Option<usize>) {
        // CAST: member indexes are below FUNC_MAX = 4.
        self.main = i.map(|i| i as u8);
        self.main_handle = i.and_then(|i| self.handles.get(i).copied().flatten());
    }

    /// The members' net devices in member order, with their index.
    pub fn member_netdevs(&self) -> impl Iterator<Item = (usize, N)> + '_ {
        self.netdevs
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.map(|n| (i, n)))
    }

    /// Forgets member `i` (its net device and handle), as a member that
    /// left is forgotten once it is a plain device again.
    pub fn forget(&mut self, i: usize) {
        if let (Some(n), Some(h)) = (self.netdevs.get_mut(i), self.handles.get_mut(i)) {
            *n = None;
            *h = None;
        }
    }

    /// Writes the payload of `cmd` for this group (`hns_roce_cmd_bond`);
    /// true if an active-backup bond has other than one active slave,
    /// which C reports with a warning and sends anyway.
    pub fn write_cmd(&self, cmd: Cmd, data: &mut Payload) -> bool {
        data.write(bond_info::BOND_ID, u32::from(self.bond_id));
        if cmd == Cmd::Clear {
            return false;
        }
        let mut odd = false;
        if self.tx == TxType::ActiveBackup {
            data.write(bond_info::BOND_MODE, BOND_MODE_1);
            odd = self.active_num != 1;
        } else {
            data.write(bond_info::BOND_MODE, BOND_MODE_2_4);
            data.write(bond_info::HASH_POLICY, self.hash.policy());
        }
        data.write(bond_info::ACTIVE_SLAVE_CNT, self.active_num);
        data.write(bond_info::ACTIVE_SLAVE_MASK, self.active_map);
        data.write(bond_info::SLAVE_MASK, self.slave_map);
        odd
    }
}

/// A die's bond ids and suspend count (`struct hns_roce_die_info`
/// without the groups).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Die {
    /// Ids in use, one bit each.
    pub id_mask: u8,
    /// Suspensions not yet resumed.
    pub suspended: u8,
}

impl Die {
    /// Takes the lowest free bond id (`alloc_bond_id`); `None` when all
    /// are taken (C's -ENOSPC).
    pub fn alloc_id(&mut self) -> Option<u8> {
        let id = (0..NUM_MAX).find(|i| self.id_mask & (1 << i) == 0)?;
        self.id_mask |= 1 << id;
        // CAST: `id` < NUM_MAX = 2.
        Some(id as u8)
    }

    /// Returns bond id `id` (`remove_bond_id`); true when the die has no
    /// id left and goes away. `None` for an id out of range (C's
    /// -EINVAL).
    pub fn remove_id(&mut self, id: u8) -> Option<bool> {
        if usize::from(id) >= NUM_MAX {
            return None;
        }
        self.id_mask &= !(1 << id);
        Some(self.id_mask == 0)
    }

    /// Counts a suspension (`hns_roce_bond_suspend`); true for the first,
    /// which takes the groups' notifiers down.
    pub fn suspend(&mut self) -> bool {
        let first = self.suspended == 0;
        self.suspended = self.suspended.saturating_add(1);
        first
    }

    /// Counts a resumption (`hns_roce_bond_resume`); true for the last,
    /// which puts the notifiers back. A resume without a suspend does
    /// nothing.
    pub fn resume(&mut self) -> bool {
        if self.suspended == 0 {
            return false;
        }
        self.suspended -= 1;
        self.suspended == 0
    }
}

/// The member index of PCI function `func`, if it can be one (C does not
/// check; functions 4..=7 would index past its four-entry array).
pub fn member_slot(func: u8) -> Option<usize> {
    let i = usize::from(func);
    (i < FUNC_MAX).then_some(i)
}
