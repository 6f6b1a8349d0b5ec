// SPDX-License-Identifier: GPL-2.0+

//! RoCE bonding: the kernel objects a bond group works with.
//!
//! C headers: [`include/net/bonding.h`](srctree/include/net/bonding.h),
//! [`include/net/lag.h`](srctree/include/net/lag.h),
//! [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h).
//!
//! A group follows a LAG upper device through a netdevice notifier and
//! acts from a delayed work item ([`BondHooks`], a `notifier_block` and a
//! `delayed_work` this layer owns and initialises). It
//! reads the upper's lower devices and what is known of this driver's
//! devices on them ([`slaves`], [`BondSlave`]), a slave's link
//! ([`link`]), and moves a registered port to the bond's active slave
//! ([`IbRegistration::bond_set_netdev`](super::super::IbRegistration)). Net
//! devices and hnae3 handles reach the driver as identities ([`NetDev`],
//! [`HandleRef`]): compared, and passed back to the shim while the device
//! is known to live, as the C driver keeps its pointers; never
//! dereferenced in Rust.

use super::super::{raw, NetDev};
use core::{
    ptr::null_mut,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    bindings,
    ffi::{c_int, c_ulong, c_void},
    prelude::*,
    sync::{rcu, Arc},
    types::Opaque,
};

/// An hnae3 handle, by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HandleRef(pub(in crate::rdma) *mut raw::hnae3_handle);

// SAFETY: an identity only; the rdma layer dereferences it only while the
// function is registered with the hnae3 core (see `Clients`).
unsafe impl Send for HandleRef {}
// SAFETY: as above.
unsafe impl Sync for HandleRef {}

/// A net device and this driver's device on it, if any.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BondSlave {
    /// The net device.
    pub(crate) dev: NetDev,
    /// This driver's function on it: handle, PCI function, PCI bus, bond
    /// capability, VF (or PF with VFs enabled).
    pub(crate) hns: Option<(HandleRef, u8, u8, bool, bool)>,
}

impl BondSlave {
    /// The slave the shim reported.
    fn from_raw(s: &raw::hnae3_shim_bond_slave) -> Option<Self> {
        let dev = NetDev::from_raw(s.dev.cast())?;
        let hns =
            (!s.handle.is_null()).then_some((HandleRef(s.handle), s.func, s.bus, s.bond_cap, s.vf));
        Some(Self { dev, hns })
    }
}

/// At most this many lower devices are read of an upper: one more than a
/// bond can have, so that a larger one is seen as too large.
pub(crate) const MAX_SLAVES: usize = 5;

/// The lower devices of `upper` (at most [`MAX_SLAVES`]) and how many it
/// has.
pub(crate) fn slaves(upper: NetDev, out: &mut KVec<BondSlave>) -> Result<usize> {
    let mut raw_out: [raw::hnae3_shim_bond_slave; MAX_SLAVES] =
        core::array::from_fn(|_| Default::default());
    // SAFETY: `upper` is a live net device (the upper of the event being
    // handled, under RTNL, or one a [`HeldUpper`] holds); the array has
    // `MAX_SLAVES` entries.
    let n = unsafe {
        raw::hnae3_shim_bond_slaves(
            upper.as_raw().cast(),
            raw_out.as_mut_ptr(),
            MAX_SLAVES as i32,
        )
    };
    // CAST: a count of net devices, never negative.
    let n = n.max(0) as usize;
    out.clear();
    for s in raw_out.iter().take(n) {
        if let Some(s) = BondSlave::from_raw(s) {
            out.push(s, GFP_KERNEL)?;
        }
    }
    Ok(n)
}

/// A reference on a bond group's upper device, taken while the upper is
/// still the master of one of the group's members; the upper is then
/// readable (lower devices, active slave) until this is dropped.
pub(crate) struct HeldUpper(NetDev);

impl HeldUpper {
    /// `upper` with a reference, if it is the master of one of `members`
    /// (the group's members' net devices, which live while they are
    /// members; the first [`MAX_SLAVES`] are looked at); `None` when none
    /// has it as its master any more (the bond was deleted or the members
    /// left it).
    pub(crate) fn of(upper: NetDev, members: impl IntoIterator<Item = NetDev>) -> Option<Self> {
        let _rcu = rcu::read_lock();
        for m in members.into_iter().take(MAX_SLAVES) {
            // SAFETY: `m` is a member's live net device (see above), read
            // under RCU.
            let master = unsafe { raw::netdev_master_upper_dev_get_rcu(m.as_raw().cast()) };
            if master.cast() == upper.as_raw() {
                // SAFETY: `upper` is the master of a live device, read under
                // RCU: it lives at least until the read side ends.
                unsafe { raw::rdma_shim_dev_hold(upper.as_raw().cast()) };
                // INVARIANT: the reference just taken, owned by this value.
                return Some(Self(upper));
            }
        }
        None
    }

    /// The upper device.
    pub(crate) fn dev(&self) -> NetDev {
        self.0
    }
}

impl Drop for HeldUpper {
    fn drop(&mut self) {
        // SAFETY: the reference `of` took (type invariant).
        unsafe { raw::rdma_shim_dev_put(self.0.as_raw().cast()) };
    }
}

/// What is known of this driver's device on `dev`.
pub(crate) fn slave(dev: NetDev) -> BondSlave {
    let mut s = raw::hnae3_shim_bond_slave::default();
    // SAFETY: `dev` is live (the device of the event being handled, or a
    // port's netdev).
    unsafe { raw::hnae3_shim_bond_dev(dev.as_raw().cast(), &mut s) };
    BondSlave::from_raw(&s).unwrap_or(BondSlave { dev, hns: None })
}

/// The master upper device of `dev` (no reference is kept: an identity).
pub(crate) fn master_upper(dev: NetDev) -> Option<NetDev> {
    let _rcu = rcu::read_lock();
    // SAFETY: `dev` is live (see `slave`), read under RCU.
    NetDev::from_raw(unsafe { raw::netdev_master_upper_dev_get_rcu(dev.as_raw().cast()) }.cast())
}

/// `(txable, port active)` of a slave: whether the bonding driver sends on
/// it, and whether it is running with carrier.
pub(crate) fn link(dev: NetDev) -> (bool, bool) {
    let (mut tx, mut up) = (false, false);
    // SAFETY: `dev` is a member's live net device.
    unsafe { raw::rdma_shim_bond_link(dev.as_raw().cast(), &mut tx, &mut up) };
    (tx, up)
}

/// `NETDEV_LAG_TX_TYPE_ACTIVEBACKUP`.
pub(crate) const LAG_TX_ACTIVEBACKUP: u32 = raw::netdev_lag_tx_type_NETDEV_LAG_TX_TYPE_ACTIVEBACKUP;
/// `NETDEV_LAG_TX_TYPE_HASH`.
pub(crate) const LAG_TX_HASH: u32 = raw::netdev_lag_tx_type_NETDEV_LAG_TX_TYPE_HASH;
/// `NETDEV_LAG_HASH_NONE`.
pub(crate) const LAG_HASH_NONE: u32 = raw::netdev_lag_hash_NETDEV_LAG_HASH_NONE;
/// `NETDEV_LAG_HASH_L2`.
pub(crate) const LAG_HASH_L2: u32 = raw::netdev_lag_hash_NETDEV_LAG_HASH_L2;
/// `NETDEV_LAG_HASH_L34`.
pub(crate) const LAG_HASH_L34: u32 = raw::netdev_lag_hash_NETDEV_LAG_HASH_L34;
/// `NETDEV_LAG_HASH_L23`.
pub(crate) const LAG_HASH_L23: u32 = raw::netdev_lag_hash_NETDEV_LAG_HASH_L23;

/// A notification a bond group follows.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BondEvent {
    /// `NETDEV_CHANGEUPPER` of `dev`.
    Upper {
        /// The device whose upper changed.
        dev: NetDev,
        /// The upper.
        upper: NetDev,
        /// Linked (else unlinked).
        linking: bool,
        /// The upper is a LAG master.
        lag_master: bool,
        /// `dev` is being unregistered.
        unregistering: bool,
        /// `(tx_type, hash_type)` of a linking event with LAG settings.
        info: Option<(u32, u32)>,
    },
    /// `NETDEV_CHANGELOWERSTATE` of `dev`.
    LowerState {
        /// The device.
        dev: NetDev,
        /// It is a LAG port.
        lag_port: bool,
    },
}

/// What a bond group does with its notifications and its work.
pub(crate) trait BondHandler: Send + Sync + 'static {
    /// A notification, under RTNL; true if the work must run (in a
    /// second).
    fn event(&self, ev: &BondEvent) -> bool;
    /// The delayed work.
    fn work(&self);
}

/// A bond group's notifier and delayed work, calling `T`; dropping it
/// unregisters the notifier, waits for the work and frees both.
///
/// So it must be dropped in process context, with RTNL not held, and
/// neither from its notifier nor from its work: its owner keeps the strong
/// references out of `T`'s reach (the callbacks get a borrow of `T`, never
/// of the hooks).
///
/// # Invariants
///
/// `g`'s notifier and work item are initialised and live as long as `g`;
/// `registered` says whether the notifier is registered. Callers serialise
/// [`Self::register`] and [`Self::suspend`] (the driver's suspend lock).
pub(crate) struct BondHooks<T: BondHandler> {
    g: Pin<KBox<Group<T>>>,
    registered: AtomicBool,
}

/// The kernel objects of a bond group, at a fixed address: the netdevice
/// notifier and the delayed work (`INIT_DELAYED_WORK`), which both call
/// `h`.
#[pin_data]
struct Group<T: BondHandler> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    #[pin]
    work: Opaque<bindings::delayed_work>,
    h: Arc<T>,
}

// SAFETY: the notifier and the work are only used through their
// thread-safe kernel primitives (notifier chain, workqueue); `T` is
// `Send + Sync`.
unsafe impl<T: BondHandler> Send for BondHooks<T> {}
// SAFETY: as above.
unsafe impl<T: BondHandler> Sync for BondHooks<T> {}

/// `netdev_cmd`'s `NETDEV_CHANGEUPPER`.
const CHANGEUPPER: c_ulong = raw::netdev_cmd_NETDEV_CHANGEUPPER as c_ulong;
/// `netdev_cmd`'s `NETDEV_CHANGELOWERSTATE`.
const CHANGELOWERSTATE: c_ulong = raw::netdev_cmd_NETDEV_CHANGELOWERSTATE as c_ulong;

impl<T: BondHandler> BondHooks<T> {
    /// Hooks calling `h`, the notifier not yet registered.
    pub(crate) fn new(h: Arc<T>) -> Result<Self> {
        let g = KBox::pin_init(
            pin_init!(Group {
                nb <- Opaque::ffi_init(|slot: *mut bindings::notifier_block| {
                    let nb = bindings::notifier_block {
                        notifier_call: Some(Self::on_event),
                        next: null_mut(),
                        priority: 0,
                    };
                    // SAFETY: `slot` is valid for writing a notifier block.
                    unsafe { slot.write(nb) };
                }),
                work <- Opaque::ffi_init(|slot: *mut bindings::delayed_work| {
                    // SAFETY: `slot` is valid for writing a delayed work
                    // item; its work runs `on_work`, which finds the group
                    // from it, and its timer is the workqueue's own
                    // (`delayed_work_timer_fn`, irqsafe), as
                    // `INIT_DELAYED_WORK` sets them.
                    unsafe {
                        bindings::init_work_with_key(
                            core::ptr::addr_of_mut!((*slot).work),
                            Some(Self::on_work),
                            false,
                            c"hns_bond_work".as_char_ptr(),
                            kernel::static_lock_class!().as_ptr(),
                        );
                        bindings::timer_init_key(
                            core::ptr::addr_of_mut!((*slot).timer),
                            Some(bindings::delayed_work_timer_fn),
                            bindings::TIMER_IRQSAFE,
                            c"hns_bond_timer".as_char_ptr(),
                            kernel::static_lock_class!().as_ptr(),
                        );
                    }
                }),
                h,
            }),
            GFP_KERNEL,
        )?;
        // INVARIANT: both initialised above; not registered.
        Ok(Self {
            g,
            registered: AtomicBool::new(false),
        })
    }

    /// Registers the notifier (`register_netdevice_notifier`, which takes
    /// RTNL). Does nothing if it is registered.
    pub(crate) fn register(&self) -> Result {
        if self.registered.load(Ordering::Acquire) {
            return Ok(());
        }
        // SAFETY: an initialised notifier block that lives until `Drop`,
        // which unregisters it first (type invariant).
        kernel::error::to_result(unsafe { raw::register_netdevice_notifier(self.g.nb.get()) })?;
        self.registered.store(true, Ordering::Release);
        Ok(())
    }

    /// Unregisters the notifier (takes RTNL) and waits for a running
    /// work item. Does nothing to an unregistered notifier but the wait.
    pub(crate) fn suspend(&self) {
        if self.registered.swap(false, Ordering::AcqRel) {
            // SAFETY: the registered notifier (type invariant).
            unsafe { raw::unregister_netdevice_notifier(self.g.nb.get()) };
        }
        // SAFETY: an initialised delayed work item (type invariant).
        unsafe { bindings::cancel_delayed_work_sync(self.g.work.get()) };
    }

    /// Cancels pending work without waiting (`cancel_delayed_work`).
    pub(crate) fn cancel(&self) {
        // SAFETY: an initialised delayed work item (type invariant).
        unsafe { bindings::cancel_delayed_work(self.g.work.get()) };
    }

    /// Queues the work on the system workqueue (`schedule_delayed_work`)
    /// to run in `delay` jiffies.
    ///
    /// # Safety
    ///
    /// `work` is the initialised delayed work of a live group.
    unsafe fn schedule(work: *mut bindings::delayed_work, delay: c_ulong) {
        // SAFETY: per the function's contract; the system workqueue lives
        // as long as the kernel.
        unsafe {
            bindings::queue_delayed_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                bindings::system_percpu_wq,
                work,
                delay,
            )
        };
    }

    /// Queues the work to run now; the test build's unload race uses it
    /// to have a work item running while the module unloads.
    #[cfg(kunit_build)]
    pub(crate) fn queue(&self) {
        // SAFETY: the group's initialised work item (type invariant).
        unsafe { Self::schedule(self.g.work.get(), 0) };
    }

    /// The notifier callback: decodes `NETDEV_CHANGEUPPER` and
    /// `NETDEV_CHANGELOWERSTATE` for the handler, and runs the work in a
    /// second when it asks.
    ///
    /// # Safety
    ///
    /// `nb` is the notifier of a live group and `ptr` the event's
    /// `netdev_notifier_info` (a `netdev_notifier_changeupper_info` for
    /// `NETDEV_CHANGEUPPER`), as the netdevice chain calls it.
    unsafe extern "C" fn on_event(
        nb: *mut bindings::notifier_block,
        event: c_ulong,
        ptr: *mut c_void,
    ) -> c_int {
        if event != CHANGEUPPER && event != CHANGELOWERSTATE {
            return bindings::NOTIFY_DONE as c_int;
        }
        // SAFETY: per the function's contract (`nb` is the group's `nb`;
        // `Opaque` is `repr(transparent)`); the hooks unregister the
        // notifier before the group goes.
        let g = unsafe { &*kernel::container_of!(nb.cast::<Opaque<_>>(), Group<T>, nb) };
        // SAFETY: `ptr` is the event's info (function contract).
        let dev = unsafe { (*ptr.cast::<raw::netdev_notifier_info>()).dev };
        let Some(dev_id) = NetDev::from_raw(dev.cast()) else {
            return bindings::NOTIFY_DONE as c_int;
        };
        let (mut lag_master, mut lag_port, mut unregistering) = (false, false, false);
        let e = if event == CHANGELOWERSTATE {
            // SAFETY: the event's live device.
            unsafe {
                raw::rdma_shim_netdev_lag(dev, &mut lag_master, &mut lag_port, &mut unregistering)
            };
            BondEvent::LowerState {
                dev: dev_id,
                lag_port,
            }
        } else {
            // SAFETY: a `NETDEV_CHANGEUPPER` event's info (function
            // contract).
            let info = unsafe { &*ptr.cast::<raw::netdev_notifier_changeupper_info>() };
            let Some(upper) = NetDev::from_raw(info.upper_dev.cast()) else {
                return bindings::NOTIFY_DONE as c_int;
            };
            let (mut upper_master, mut upper_port, mut upper_unreg) = (false, false, false);
            // SAFETY: the event's live device and its upper, under RTNL.
            unsafe {
                raw::rdma_shim_netdev_lag(dev, &mut lag_master, &mut lag_port, &mut unregistering);
                raw::rdma_shim_netdev_lag(
                    info.upper_dev,
                    &mut upper_master,
                    &mut upper_port,
                    &mut upper_unreg,
                );
            }
            let lag = info.upper_info.cast::<raw::netdev_lag_upper_info>();
            let settings = if info.linking && !lag.is_null() {
                // SAFETY: a linking event's `upper_info`, when set, is the
                // LAG's `netdev_lag_upper_info`.
                Some(unsafe { ((*lag).tx_type, (*lag).hash_type) })
            } else {
                None
            };
            BondEvent::Upper {
                dev: dev_id,
                upper,
                linking: info.linking,
                lag_master: upper_master,
                unregistering,
                info: settings,
            }
        };
        if g.h.event(&e) {
            let delay = kernel::time::msecs_to_jiffies(1000);
            // SAFETY: the group's initialised work item.
            unsafe { Self::schedule(g.work.get(), delay) };
        }
        bindings::NOTIFY_DONE as c_int
    }

    /// The work callback.
    ///
    /// # Safety
    ///
    /// `work` is the `work` of a live group's delayed work item.
    unsafe extern "C" fn on_work(work: *mut bindings::work_struct) {
        // SAFETY: per the function's contract: `work` is the first member
        // of the group's `delayed_work`, inside `Opaque`
        // (`repr(transparent)`); the hooks wait for the work before the
        // group goes.
        let g = unsafe {
            &*kernel::container_of!(
                work.cast::<bindings::delayed_work>()
                    .cast::<Opaque<bindings::delayed_work>>(),
                Group<T>,
                work
            )
        };
        g.h.work();
    }
}

impl<T: BondHandler> Drop for BondHooks<T> {
    fn drop(&mut self) {
        // Unregistered with no work pending or running: the group, freed
        // with `g` after this, is used by nobody.
        self.suspend();
    }
}
