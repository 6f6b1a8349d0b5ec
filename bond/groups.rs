// SPDX-License-Identifier: GPL-2.0

//! The kernel part of RoCE bonding (`hns_roce_bond.c`): every die's bond
//! groups, what their notifications and work do, and the hooks of a
//! function's life cycle.
//!
//! A die (PCI bus) gets its two groups when its first function with the
//! bond capability registers; they live until the module goes. A group's
//! bookkeeping ([`Group`]) is under its own lock, as C's `bond_mutex`;
//! its notifier and delayed work are [`BondHooks`].
//!
//! Locks, in the only order they are taken: the hnae3 client lock
//! ([`Clients`], held by the work and by every client callback), RTNL
//! (registration, notifiers), the registry ([`Registry`]'s list of dies),
//! one group's lock. The suspend lock (the registry's `pm`) is taken
//! outside the client lock and
//! holds RTNL inside (unregistering a notifier). No lock is held across a
//! call that takes one before it: the work drops a group's lock before it
//! brings a function up or down, and the registry is never held while a
//! notifier is (un)registered.
//!
//! Where C reads a pointer it may not have (the main device in the work's
//! log line, in `hns_roce_clear_bond`), this skips the step instead.

use super::{
    Cmd, Die, Group, HashType, HnsDev, LinkState, Slave, State, TxType, UpperEvent, UpperInfo,
    WorkStep, FUNC_MAX, NUM_MAX,
};
use crate::client::{Driver, HnsClient, HnsRoceDev};
use crate::cmdq::{desc::Desc, Cmd as CmdQ};
use crate::rdma::ClientRef;
use crate::rdma::{
    self, BondEvent, BondHandler, BondHooks, Clients, HandleRef, Hnae3Handle, NetDev,
};
use kernel::{new_mutex, prelude::*, sync::Arc, sync::Mutex};

/// A group's bookkeeping with net devices and handles as identities.
type G = Group<NetDev, HandleRef>;

/// One bond group.
#[pin_data]
pub(crate) struct BondGroup {
    bus: u8,
    id: u8,
    #[pin]
    state: Mutex<G>,
    /// The module's state: its client lock for the work, its registry for
    /// the lookups of the notifier and the work. A reference back to the
    /// registry that holds the group, let go of when the registry drops
    /// its groups ([`Registry::teardown`]).
    client: Arc<HnsClient>,
}

/// A die's ids, suspend count and groups.
struct DieEntry {
    bus: u8,
    die: Die,
    groups: DieGroups,
}

/// The registry of the module's bond groups, part of the module's state
/// ([`Driver`]): made at module load, before the hnae3 client registers;
/// once the client is gone, [`Registry::teardown`] drops every die's groups
/// (`hns_roce_dealloc_bond_grp`): their notifiers are unregistered and
/// their work waited for.
///
/// The registry holds the only lasting strong reference to each group's
/// [`BondHooks`]: the notifier and the work look groups up
/// ([`Registry::groups_of`]) without their hooks, and cancel their work
/// through the registry ([`Registry::cancel_work`]). Suspend and resume
/// borrow the hooks with the suspend lock held
/// ([`Registry::with_die_hooks`]), which the teardown takes too. So the
/// hooks are always dropped there, in module-unload process context, where
/// unregistering the notifier may take RTNL and waiting for the work
/// cannot wait for itself.
#[pin_data]
pub(crate) struct Registry {
    /// Every die's ids, suspend count and groups.
    #[pin]
    dies: Mutex<KVec<DieEntry>>,
    /// The suspend lock: suspend, resume and the teardown.
    #[pin]
    pm: Mutex<()>,
    /// Test build only: the state of the unload-race hooks.
    race: RaceFlags,
}

/// The unload-race hooks' state (test build); nothing otherwise.
#[cfg(kunit_build)]
type RaceFlags = unload_race::Flags;
/// The unload-race hooks' state (test build); nothing otherwise.
#[cfg(not(kunit_build))]
type RaceFlags = ();

impl Registry {
    /// An empty registry.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Registry {
            dies <- new_mutex!(KVec::new()),
            pm <- new_mutex!(()),
            race: RaceFlags::default(),
        })
    }

    /// Drops every die's groups, once the client is unregistered: the
    /// groups' references back to the module's state go with them.
    pub(crate) fn teardown(&self) {
        #[cfg(kunit_build)]
        unload_race::registry_drop_begins(self);
        // No suspend or resume holds hooks while this one is held.
        let pm = self.pm.lock();
        let all = core::mem::take(&mut *self.dies.lock());
        drop(all);
        #[cfg(kunit_build)]
        unload_race::registry_dropped(&self.race);
        drop(pm);
    }

    /// The groups of die `bus`, in id order, without their hooks: what the
    /// notifier and the work may hold.
    fn groups_of(&self, bus: u8) -> KVec<Arc<BondGroup>> {
        let out = self.die_groups(bus);
        #[cfg(kunit_build)]
        unload_race::after_lookup(&self.race);
        out
    }

    /// The lookup of [`Registry::groups_of`] without the test build's hook.
    fn die_groups(&self, bus: u8) -> KVec<Arc<BondGroup>> {
        let mut out = KVec::new();
        if let Some(d) = self.dies.lock().iter().find(|d| d.bus == bus) {
            for (g, _) in d.groups.iter() {
                // Two entries at most: a failed push leaves a group out, as
                // a group the lookup does not find.
                let _ = out.push(g.clone(), GFP_KERNEL);
            }
        }
        out
    }

    /// Runs `step` on die `bus`'s ids and suspend count (one hold of the
    /// registry) and, when it returns true, `f` on each of the die's groups
    /// and its hooks, in id order, with the suspend lock held and the
    /// registry released (`f` may take RTNL). The hooks borrowed here are
    /// released before the suspend lock.
    fn with_die_hooks(
        &self,
        bus: u8,
        step: impl FnOnce(&mut Die) -> bool,
        mut f: impl FnMut(&BondGroup, &BondHooks<BondGroup>),
    ) {
        let pm = self.pm.lock();
        let mut held: DieGroups = KVec::new();
        if let Some(d) = self.dies.lock().iter_mut().find(|d| d.bus == bus) {
            if step(&mut d.die) {
                for (g, h) in d.groups.iter() {
                    // As in `groups_of`.
                    let _ = held.push((g.clone(), h.clone()), GFP_KERNEL);
                }
            }
        }
        for (g, h) in held.iter() {
            f(g, h);
        }
        drop(held);
        drop(pm);
    }

    /// Cancels pending work of group `id` of die `bus` without waiting
    /// (`cancel_delayed_work`), under the registry: no reference to the
    /// hooks leaves it, so the caller (the work itself, possibly) never
    /// drops them.
    fn cancel_work(&self, bus: u8, id: u8) {
        let dies = self.dies.lock();
        let hooks = dies
            .iter()
            .find(|d| d.bus == bus)
            .and_then(|d| d.groups.iter().find(|(g, _)| g.id == id));
        if let Some((_, h)) = hooks {
            h.cancel();
        }
    }

    /// The group of die `bus` that claims `dev` (`hns_roce_get_bond_grp`).
    fn find(&self, bus: u8, dev: NetDev) -> Option<Arc<BondGroup>> {
        let upper = rdma::master_upper(dev);
        self.groups_of(bus)
            .into_iter()
            .find(|g| g.state.lock().claims(dev, upper))
    }

    /// The group that claims the function's net device, if any.
    fn group_of(&self, h: &Hnae3Handle) -> Option<Arc<BondGroup>> {
        let (bus, _) = h.bus_func();
        self.find(bus, own_netdev(h)?)
    }
}

/// A die's groups with their hooks, as the registry holds them.
type DieGroups = KVec<(Arc<BondGroup>, Arc<BondHooks<BondGroup>>)>;

/// The function's own net device.
fn own_netdev(h: &Hnae3Handle) -> Option<NetDev> {
    h.netdev_ref()
}

/// Creates the two groups of the handle's die unless it has them
/// (`hns_roce_alloc_bond_grp`).
pub(crate) fn alloc_groups(client: ClientRef<'_, Driver>, h: &Hnae3Handle, cmd: &CmdQ) -> Result {
    let reg = &client.bonds;
    let (bus, _) = h.bus_func();
    if reg.dies.lock().iter().any(|d| d.bus == bus) {
        return Ok(());
    }
    let mut die = Die::default();
    let mut groups = KVec::with_capacity(NUM_MAX, GFP_KERNEL)?;
    for _ in 0..NUM_MAX {
        let id = die.alloc_id().ok_or(ENOSPC).inspect_err(|e| {
            hdev_err!(h.device(), "failed to alloc bond ID", ret = e.to_errno());
        })?;
        let group = Group::new(id, bus);
        let g = Arc::pin_init(
            pin_init!(BondGroup {
                bus,
                id,
                state <- new_mutex!(group),
                client: client.into(),
            }),
            GFP_KERNEL,
        )?;
        let hooks = Arc::new(BondHooks::new(g.clone())?, GFP_KERNEL)?;
        hooks.register().inspect_err(|e| {
            ibdev_err!(cmd, "failed to register bond nb", ret = e.to_errno());
        })?;
        groups.push((g, hooks), GFP_KERNEL)?;
    }
    reg.dies
        .lock()
        .push(DieEntry { bus, die, groups }, GFP_KERNEL)?;
    Ok(())
}

/// What the function registers as: `Some((upper, active-backup, active
/// slave))` when its group is bonded (`hns_roce_bond_is_active`, then the
/// port's netdev of `hns_roce_bond_init`). A function coming back from a
/// reset (`recover`: its command queue) first becomes the main device again
/// and sends SET_BOND_INFO (`hns_roce_recover_bond`).
///
/// # Errors
///
/// The errno of the SET_BOND_INFO of a recovery.
pub(crate) fn reg_params(
    reg: &Registry,
    h: &Hnae3Handle,
    recover: Option<&CmdQ>,
) -> Result<Option<(NetDev, bool, Option<NetDev>)>> {
    let Some(g) = reg.group_of(h) else {
        return Ok(None);
    };
    if !g.state.lock().is_active() {
        return Ok(None);
    }
    if let Some(q) = recover {
        {
            let (_, func) = h.bus_func();
            let mut s = g.state.lock();
            s.main = Some(func);
            s.main_handle = Some(h.handle_ref());
        }
        g.update_active();
        g.send_via(q, Cmd::Set)?;
    }
    let s = g.state.lock();
    Ok(s.upper
        .map(|u| (u, s.tx == TxType::ActiveBackup, hash_active(&s))))
}

/// The first member whose port is up, the port's netdev of a hashing bond.
fn hash_active(s: &G) -> Option<NetDev> {
    s.member_netdevs()
        .map(|(_, n)| n)
        .find(|n| rdma::bond_link(*n).1)
}

/// Whether the group of die `bus` that claims the port's netdev `ndev`
/// follows `upper` (identities only: the group's record of its upper is
/// never dereferenced here).
pub(crate) fn follows(reg: &Registry, bus: u8, ndev: NetDev, upper: NetDev) -> bool {
    reg.find(bus, ndev)
        .is_some_and(|g| g.state.lock().upper == Some(upper))
}

/// Whether a group claims the function (a bonded function's link changes
/// are the upper's business).
pub(crate) fn claims(reg: &Registry, h: &Hnae3Handle) -> bool {
    reg.group_of(h).is_some()
}

/// Takes the die's notifiers down and waits for their work, the first of
/// nested calls (`hns_roce_bond_suspend`).
pub(crate) fn suspend(reg: &Registry, h: &Hnae3Handle) {
    let (bus, _) = h.bus_func();
    reg.with_die_hooks(bus, Die::suspend, |_, hooks| hooks.suspend());
}

/// Puts the die's notifiers back, the last of nested calls
/// (`hns_roce_bond_resume`).
pub(crate) fn resume(reg: &Registry, h: &Hnae3Handle) {
    let (bus, _) = h.bus_func();
    reg.with_die_hooks(bus, Die::resume, |g, hooks| {
        if let Err(e) = hooks.register() {
            hdev_err!(
                h.device(),
                "failed to resume bond notifier(bus_num = {}, id = {}), ret = {}.\n",
                bus,
                g.id,
                e.to_errno()
            );
        }
    });
}

/// The function left the hnae3 core: no group may keep its handle.
pub(crate) fn forget(reg: &Registry, h: &Hnae3Handle) {
    let (bus, _) = h.bus_func();
    for g in reg.groups_of(bus) {
        g.state.lock().forget_handle(h.handle_ref());
    }
}

/// The unregistration of a bonded device by the hnae3 core
/// (`hns_roce_unregister_bond_cleanup`): the other members come back as
/// plain devices, then CLEAR_BOND_INFO, through `inst` if it is the main.
pub(crate) fn unregister_cleanup(cl: &mut Clients<'_, Driver>, h: &Hnae3Handle, inst: &HnsRoceDev) {
    let Some(g) = cl.driver().bonds.group_of(h) else {
        return;
    };
    let own = own_netdev(h);
    let others: [Option<HandleRef>; FUNC_MAX] = {
        let mut s = g.state.lock();
        s.state = State::NotBonded;
        let mut v = [None; FUNC_MAX];
        for (i, n) in s.member_netdevs() {
            if Some(n) != own {
                if let Some(slot) = v.get_mut(i) {
                    *slot = s.handles[i];
                }
            }
        }
        v
    };
    for hr in others.into_iter().flatten() {
        cl.attach(hr);
    }
    let via = (g.state.lock().main_handle == Some(h.handle_ref())).then(|| &*inst.hw.cmd);
    g.cleanup(cl, via);
}

impl BondGroup {
    /// The main device's command queue.
    #[inline(never)]
    fn main_cmd<'a>(&self, cl: &'a Clients<'_, Driver>) -> Option<&'a CmdQ> {
        let h = self.state.lock().main_handle?;
        cl.instance(h).map(|i| &*i.hw.cmd)
    }

    /// Sends `cmd` through the main device, or through `via`
    /// (`hns_roce_cmd_bond`).
    fn send(&self, cl: &Clients<'_, Driver>, via: Option<&CmdQ>, cmd: Cmd) -> Result {
        let q = via.or_else(|| self.main_cmd(cl)).ok_or(EIO)?;
        self.send_via(q, cmd)
    }

    /// Sends `cmd` through `q`.
    fn send_via(&self, q: &CmdQ, cmd: Cmd) -> Result {
        let mut d = [Desc::new(cmd.opcode(), false)];
        let (odd, active) = {
            let s = self.state.lock();
            (s.write_cmd(cmd, &mut d[0].data), s.active_num)
        };
        if odd {
            ibdev_warn!(q, "active slave cnt({}) in Mode 1 is invalid.\n", active);
        }
        q.send(&mut d).inspect_err(|e| {
            ibdev_err!(
                q,
                "cmq bond type({}) failed, ret = {}.\n",
                cmd.as_c(),
                e.to_errno()
            );
        })
    }

    /// Recomputes the active slaves from the members' links.
    fn update_active(&self) {
        let mut s = self.state.lock();
        let links: [Option<NetDev>; FUNC_MAX] = s.netdevs;
        s.update_active(|i| {
            let (txable, port_active) = links[i].map_or((false, false), rdma::bond_link);
            LinkState {
                txable,
                port_active,
            }
        });
    }

    /// CLEAR_BOND_INFO if there is a main device, then detach
    /// (`hns_roce_cleanup_bond`).
    fn cleanup(&self, cl: &Clients<'_, Driver>, via: Option<&CmdQ>) {
        let q = via.or_else(|| self.main_cmd(cl));
        match self.send(cl, q, Cmd::Clear) {
            Err(e) => pr_err!(
                "HNS RoCE Bonding: failed to clear RoCE bond, ret = {}.\n",
                e.to_errno()
            ),
            Ok(()) => {
                if let Some(q) = q {
                    ibdev_info!(q, "RoCE clear bond finished!\n");
                }
            }
        }
        self.client.bonds.cancel_work(self.bus, self.id);
        self.state.lock().detach();
    }

    /// Takes member `i` down if it is up (`hns_roce_slave_uninit`).
    fn slave_uninit(&self, cl: &mut Clients<'_, Driver>, i: usize) {
        let h = self.state.lock().handles.get(i).copied().flatten();
        if let Some(h) = h {
            cl.detach(h);
        }
    }

    /// Brings member `i` up (`hns_roce_slave_init`); with `switch`, member
    /// `i` being the main first hands the main role to another member.
    /// True if it is up.
    fn slave_init(&self, cl: &mut Clients<'_, Driver>, i: usize, switch: bool) -> bool {
        if switch {
            let main = self.state.lock().main.map(usize::from);
            if main == Some(i) && self.switch_main(cl, i).is_err() {
                return false;
            }
        }
        let h = self.state.lock().handles.get(i).copied().flatten();
        let Some(h) = h else { return false };
        if cl.instance(h).is_some() {
            return true;
        }
        if switch {
            // Not to come up as a member of the bond.
            self.state.lock().netdevs[i] = None;
        }
        let up = cl.attach(h);
        if !up {
            pr_err!("HNS RoCE Bonding: failed to init slave {}.\n", i);
        }
        up
    }

    /// Makes another member the main device (`switch_main_dev`).
    fn switch_main(&self, cl: &mut Clients<'_, Driver>, main: usize) -> Result {
        self.state.lock().set_main(None);
        self.slave_uninit(cl, main);
        for i in 0..FUNC_MAX {
            let member = {
                let s = self.state.lock();
                s.slave_map & (1 << i) != 0 && s.netdevs[i].is_some()
            };
            if !member {
                continue;
            }
            self.slave_uninit(cl, i);
            if self.slave_init(cl, i, false) {
                self.state.lock().set_main(Some(i));
                return Ok(());
            }
        }
        Err(ENODEV)
    }

    /// Bonds the members (`hns_roce_set_bond`).
    fn set_bond(&self, cl: &mut Clients<'_, Driver>) {
        let members: [Option<usize>; FUNC_MAX] = {
            let s = self.state.lock();
            let mut v = [None; FUNC_MAX];
            for (slot, i) in v.iter_mut().zip(s.slaves()) {
                *slot = Some(i);
            }
            v
        };
        for &i in members.iter().rev().flatten() {
            self.slave_uninit(cl, i);
        }
        {
            let mut s = self.state.lock();
            s.state = State::IsBonded;
            s.set_main(None);
        }
        let main = members
            .iter()
            .flatten()
            .copied()
            .find(|&i| self.slave_init(cl, i, false));
        self.state.lock().set_main(main);
        let ret = match main {
            None => Err(ENODEV),
            Some(_) => {
                self.update_active();
                self.send(cl, None, Cmd::Set)
            }
        };
        match ret {
            Err(e) => {
                pr_err!(
                    "HNS RoCE Bonding: failed to set RoCE bond, ret = {}.\n",
                    e.to_errno()
                );
                self.cleanup(cl, None);
            }
            Ok(()) => {
                if let Some(q) = self.main_cmd(cl) {
                    ibdev_info!(q, "RoCE set bond finished!\n");
                }
            }
        }
    }

    /// Brings the members back as plain devices and clears the bond
    /// (`hns_roce_clear_bond`).
    fn clear_bond(&self, cl: &mut Clients<'_, Driver>) {
        let (state, main) = {
            let s = self.state.lock();
            (s.state, s.main.map(usize::from))
        };
        if state != State::NotBonded {
            {
                let mut s = self.state.lock();
                s.state = State::NotBonded;
                s.set_main(None);
            }
            if let Some(m) = main {
                self.slave_uninit(cl, m);
            }
            for i in 0..FUNC_MAX {
                if self.slave_init(cl, i, false) {
                    self.state.lock().set_main(Some(i));
                }
            }
        }
        self.cleanup(cl, None);
    }

    /// Sends the new active slaves (`hns_roce_slave_changestate`).
    fn change_state(&self, cl: &mut Clients<'_, Driver>) {
        self.update_active();
        let ret = self.send(cl, None, Cmd::Change);
        self.state.lock().settle(State::SlaveChangeState);
        let Some(q) = self.main_cmd(cl) else { return };
        match ret {
            Err(e) => ibdev_err!(
                q,
                "failed to change RoCE bond slave state",
                ret = e.to_errno()
            ),
            Ok(()) => ibdev_info!(q, "RoCE slave changestate finished!\n"),
        }
    }

    /// Takes joining members down, brings leaving ones back and sends the
    /// new masks (`hns_roce_slave_change_num`).
    fn change_num(&self, cl: &mut Clients<'_, Driver>) {
        let mut ret = Ok(());
        for i in 0..FUNC_MAX {
            let (slave, main) = {
                let s = self.state.lock();
                (s.slave_map & (1 << i) != 0, s.main.map(usize::from))
            };
            if slave {
                if main != Some(i) {
                    self.slave_uninit(cl, i);
                }
                continue;
            }
            self.slave_init(cl, i, true);
            let mut s = self.state.lock();
            if s.main.is_none() {
                ret = Err(ENODEV);
                break;
            }
            s.forget(i);
        }
        if ret.is_ok() {
            self.update_active();
            ret = self.send(cl, None, Cmd::Change);
        }
        match ret {
            Err(e) => {
                pr_err!(
                    "HNS RoCE Bonding: failed to change RoCE bond slave num, ret = {}.\n",
                    e.to_errno()
                );
                self.cleanup(cl, None);
            }
            Ok(()) => {
                self.state.lock().settle(State::SlaveChangeNum);
                if let Some(q) = self.main_cmd(cl) {
                    ibdev_info!(q, "RoCE slave change num finished!\n");
                }
            }
        }
    }

    /// Points the main device's port at the active slave
    /// (`hns_roce_set_bond_netdev`).
    fn set_netdev(&self, cl: &Clients<'_, Driver>) {
        let (main, upper, ab, active) = {
            let s = self.state.lock();
            (
                s.main_handle,
                s.upper,
                s.tx == TxType::ActiveBackup,
                hash_active(&s),
            )
        };
        let (Some(main), Some(upper)) = (main, upper) else {
            return;
        };
        if let Some(inst) = cl.instance(main) {
            // The shim reports a failure ("failed to set netdev for bond.").
            let _ = inst.ib.bond_set_netdev(upper, ab, active);
        }
    }

    /// The upper's lower devices as the bookkeeping reads them.
    fn read_slaves(upper: NetDev) -> KVec<Slave<NetDev, HandleRef>> {
        let mut raw = KVec::new();
        let n = rdma::bond_slaves(upper, &mut raw).unwrap_or(0);
        let mut out = KVec::new();
        for s in raw.iter() {
            let _ = out.push(
                Slave {
                    netdev: s.dev,
                    hns: hns_dev(s),
                },
                GFP_KERNEL,
            );
        }
        // An upper with more lower devices than were read has too many to
        // bond: one more entry that cannot bond says so.
        if n > raw.len() {
            let _ = out.push(
                Slave {
                    netdev: upper,
                    hns: None,
                },
                GFP_KERNEL,
            );
        }
        out
    }

    /// The group's work (`hns_roce_bond_work`), with the client lock held.
    fn run(&self, cl: &mut Clients<'_, Driver>) {
        let (upper, main, members) = {
            let s = self.state.lock();
            (s.upper, s.main_handle, s.netdevs)
        };
        let Some(upper) = upper else {
            return;
        };
        // The upper is read only through a reference taken while it is
        // still the master of the members the group knows or of the main
        // device (which the event that attached the group recorded before
        // any work filled the members in), held for the whole work: a bond
        // deleted before this work ran has no lower devices left to read
        // (the work then clears the bond, as with a bond left by its
        // slaves).
        let main_netdev = main.and_then(|h| cl.netdev(h));
        let held = rdma::HeldUpper::of(
            upper,
            Iterator::chain(members.into_iter().flatten(), main_netdev),
        );
        let slaves = held
            .as_ref()
            .map_or_else(KVec::new, |h| Self::read_slaves(h.dev()));
        let (step, ready, state) = {
            let mut s = self.state.lock();
            let state = s.state;
            let step = s.work_begin(&slaves);
            (step, s.ready, state)
        };
        if let Some(q) = self.main_cmd(cl) {
            ibdev_info!(
                q,
                "bond work: bond_ready - {}, bond_state - {}.\n",
                u32::from(ready),
                state.as_c()
            );
        }
        match step {
            WorkStep::Clear => self.clear_bond(cl),
            WorkStep::Set => self.set_bond(cl),
            WorkStep::ChangeState => {
                self.change_state(cl);
                self.set_netdev(cl);
            }
            WorkStep::ChangeNum => {
                self.change_num(cl);
                self.set_netdev(cl);
            }
            WorkStep::Nothing => {}
        }
    }
}

/// This driver's device on a lower device, as the bookkeeping reads it.
fn hns_dev(s: &rdma::BondSlave) -> Option<HnsDev<HandleRef>> {
    s.hns.map(|(handle, func, bus, bond_cap, vf)| HnsDev {
        handle,
        func,
        bus,
        bond_cap,
        vf,
    })
}

/// A LAG transmit type as the bookkeeping names it.
fn tx_type(raw: u32) -> TxType {
    match raw {
        rdma::LAG_TX_ACTIVEBACKUP => TxType::ActiveBackup,
        rdma::LAG_TX_HASH => TxType::Hash,
        _ => TxType::Other,
    }
}

/// A LAG hash as the bookkeeping names it.
fn hash_type(raw: u32) -> HashType {
    match raw {
        rdma::LAG_HASH_NONE => HashType::None,
        rdma::LAG_HASH_L2 => HashType::L2,
        rdma::LAG_HASH_L34 => HashType::L34,
        rdma::LAG_HASH_L23 => HashType::L23,
        _ => HashType::Other,
    }
}

impl BondHandler for BondGroup {
    fn event(&self, ev: &BondEvent) -> bool {
        match *ev {
            BondEvent::Upper {
                dev,
                upper,
                linking,
                lag_master,
                unregistering,
                info,
            } => {
                if !lag_master {
                    return false;
                }
                let hns = hns_dev(&rdma::bond_slave(dev));
                let other_group = hns.is_some_and(|h| {
                    self.client
                        .bonds
                        .find(h.bus, dev)
                        .is_some_and(|g| g.id != self.id)
                });
                let slaves = Self::read_slaves(upper);
                let info = info.map(|(t, h)| UpperInfo {
                    tx: tx_type(t),
                    hash: hash_type(h),
                });
                self.state.lock().upper_event(&UpperEvent {
                    netdev: dev,
                    hns,
                    upper,
                    lag_master,
                    linking,
                    info,
                    unregistering,
                    other_group,
                    slaves: &slaves,
                })
            }
            BondEvent::LowerState { dev, lag_port } => {
                if !lag_port {
                    return false;
                }
                if self
                    .client
                    .bonds
                    .find(self.bus, dev)
                    .is_none_or(|g| g.id != self.id)
                {
                    return false;
                }
                self.state.lock().lowerstate_event()
            }
        }
    }

    fn work(&self) {
        #[cfg(kunit_build)]
        unload_race::work_lookup(self);
        Clients::with(self.client.as_arc_borrow(), |cl| self.run(cl));
    }
}

/// Test build only: makes module unload meet a notifier call and then a
/// work item, each inside a group lookup: the orders in which a lookup that
/// kept a strong reference to the group's hooks would drop their last one
/// in the notifier (with RTNL held: unregistering it needs RTNL) or in the
/// work (whose drop of the hooks then waits for the work itself).
///
/// Armed only where the module has bond groups (a function with the bond
/// capability registered; only the bonding plan has one). The registry's
/// drop then announces itself in the kernel log and waits, up to 10 s,
/// for a lookup; the first lookup made from then on waits, up to 3 s,
/// until the registry has dropped its groups. Next the teardown queues every
/// group's work (the functions' uninit cancelled it) and waits, up to
/// 10 s, for the first of them to look its own group up; that work holds
/// the result, up to 3 s, until the registry has dropped its groups, and
/// logs its release. The registry, once it has dropped its groups, waits
/// up to 5 s for that release. With the hooks owned by the registry alone,
/// the teardown waits for the notifier (RTNL) and for the work
/// (`cancel_delayed_work_sync`): both lookups time out and the work's is
/// released before the groups are gone; nothing else changes.
///
/// With `--cfg hns_plant_work_hooks` (a planted fault for the harness to
/// catch) the work's lookup returns its group's hooks, as the lookup did
/// before the registry owned them: the work then drops their last
/// reference and waits for itself, and its release is never logged.
#[cfg(kunit_build)]
mod unload_race {
    use super::{BondGroup, Registry};
    use core::sync::atomic::{AtomicBool, Ordering};
    use kernel::time::{delay::fsleep, Delta};
    use kernel::{prelude::*, sync::Arc};

    /// Where the registry's teardown, the lookups and the work stand;
    /// part of the registry, so that each module load starts afresh.
    #[derive(Default)]
    pub(super) struct Flags {
        /// The registry's teardown has begun in a module with bond groups.
        unloading: AtomicBool,
        /// A lookup is held (or was: only the first is).
        held: AtomicBool,
        /// The registry's teardown has queued the groups' work.
        work_queued: AtomicBool,
        /// A work item's lookup is held (or was: only the first is).
        work_held: AtomicBool,
        /// That work item has released its lookup.
        work_released: AtomicBool,
        /// The registry has dropped its groups.
        dropped: AtomicBool,
    }

    /// Polls `done` every 50 ms, at most `ms` milliseconds; whether it
    /// came.
    fn wait(done: &AtomicBool, ms: u32) -> bool {
        for _ in 0..ms / 50 {
            if done.load(Ordering::Acquire) {
                return true;
            }
            fsleep(Delta::from_millis(50));
        }
        done.load(Ordering::Acquire)
    }

    /// The registry's teardown begins (no lock held).
    pub(super) fn registry_drop_begins(reg: &Registry) {
        if reg.dies.lock().is_empty() {
            return;
        }
        let f = &reg.race;
        f.unloading.store(true, Ordering::Release);
        pr_info!("bond registry: unloading, waiting for a lookup (test build)\n");
        wait(&f.held, 10_000);
        f.work_queued.store(true, Ordering::Release);
        for d in reg.dies.lock().iter() {
            for (_, h) in d.groups.iter() {
                h.queue();
            }
        }
        wait(&f.work_held, 10_000);
    }

    /// A group lookup is done; its result is still held.
    pub(super) fn after_lookup(f: &Flags) {
        if !f.unloading.load(Ordering::Acquire) || f.held.swap(true, Ordering::AcqRel) {
            return;
        }
        pr_info!("bond registry: lookup during unload, held (test build)\n");
        wait(&f.dropped, 3_000);
    }

    /// The work's lookup of its own group: the group alone.
    #[cfg(not(hns_plant_work_hooks))]
    fn own_group(g: &BondGroup) -> Option<Arc<BondGroup>> {
        g.client
            .bonds
            .die_groups(g.bus)
            .into_iter()
            .find(|x| x.id == g.id)
    }

    /// Planted fault: the work's lookup of its own group's hooks, a strong
    /// reference the work drops.
    #[cfg(hns_plant_work_hooks)]
    fn own_group(g: &BondGroup) -> Option<Arc<super::BondHooks<BondGroup>>> {
        g.client
            .bonds
            .dies
            .lock()
            .iter()
            .find(|d| d.bus == g.bus)
            .and_then(|d| d.groups.iter().find(|(x, _)| x.id == g.id))
            .map(|(_, h)| h.clone())
    }

    /// The work of group `g` begins (no lock held): the first once the
    /// registry's teardown has queued it looks its group up and holds it.
    pub(super) fn work_lookup(g: &BondGroup) {
        let f = &g.client.bonds.race;
        if !f.work_queued.load(Ordering::Acquire) || f.work_held.swap(true, Ordering::AcqRel) {
            return;
        }
        let held = own_group(g);
        pr_info!(
            "bond registry: work lookup during unload, held (test build, group {})\n",
            g.id
        );
        wait(&f.dropped, 3_000);
        drop(held);
        pr_info!("bond registry: work lookup released (test build)\n");
        f.work_released.store(true, Ordering::Release);
    }

    /// The registry has dropped its groups.
    pub(super) fn registry_dropped(f: &Flags) {
        f.dropped.store(true, Ordering::Release);
        if f.work_held.load(Ordering::Acquire) && !wait(&f.work_released, 5_000) {
            pr_info!("bond registry: work lookup not released (test build)\n");
        }
    }
}
