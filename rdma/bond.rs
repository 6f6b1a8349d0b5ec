// SPDX-License-Identifier: GPL-2.0+

//! RoCE bonding: the kernel objects a bond group works with.
//!
//! C headers: [`include/net/bonding.h`](srctree/include/net/bonding.h),
//! [`include/net/lag.h`](srctree/include/net/lag.h),
//! [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h).
//!
//! A group follows a LAG upper device through a netdevice notifier and
//! acts from a delayed work item ([`BondHooks`], both in the shim). It
//! reads the upper's lower devices and what is known of this driver's
//! devices on them ([`slaves`], [`BondSlave`]), a slave's link
//! ([`link`]), and moves a registered port to the bond's active slave
//! ([`IbRegistration::bond_set_netdev`](super::IbRegistration)). Net
//! devices and hnae3 handles reach the driver as identities ([`NetDev`],
//! [`HandleRef`]): compared, and passed back to the shim while the device
//! is known to live, as the C driver keeps its pointers; never
//! dereferenced in Rust.

use super::raw;
use core::{
    marker::PhantomData,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{ffi::c_void, prelude::*, sync::Arc, types::ForeignOwnable};

/// A net device, by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NetDev(*mut kernel::bindings::net_device);

// SAFETY: an identity only; the pointer is never dereferenced in Rust.
unsafe impl Send for NetDev {}
// SAFETY: as above.
unsafe impl Sync for NetDev {}

impl NetDev {
    /// The raw pointer, for the shim.
    pub(in crate::rdma) fn as_raw(self) -> *mut kernel::bindings::net_device {
        self.0
    }

    /// `p`, or `None` for null.
    pub(in crate::rdma) fn from_raw(p: *mut kernel::bindings::net_device) -> Option<Self> {
        (!p.is_null()).then_some(Self(p))
    }
}

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
    fn from_raw(s: &raw::hns_shim_bond_slave) -> Option<Self> {
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
    let mut raw_out: [raw::hns_shim_bond_slave; MAX_SLAVES] =
        core::array::from_fn(|_| Default::default());
    // SAFETY: `upper` is a live net device (the upper of the event being
    // handled, under RTNL, or one a [`HeldUpper`] holds); the array has
    // `MAX_SLAVES` entries.
    let n = unsafe {
        raw::hns_shim_bond_slaves(
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
        let mut via = [core::ptr::null_mut(); MAX_SLAVES];
        let mut n: usize = 0;
        for (v, m) in via.iter_mut().zip(members) {
            *v = m.as_raw().cast();
            n += 1;
        }
        // SAFETY: the `n` first entries of `via` are live net devices (see
        // above); `upper` is only compared with their masters under RCU
        // before the shim takes its reference.
        let p = unsafe {
            // CAST: at most `MAX_SLAVES` entries.
            raw::hns_shim_hold_master_of(upper.as_raw().cast(), via.as_ptr(), n as i32)
        };
        // INVARIANT: a non-null answer carries a reference this value owns.
        NetDev::from_raw(p.cast()).map(Self)
    }

    /// The upper device.
    pub(crate) fn dev(&self) -> NetDev {
        self.0
    }
}

impl Drop for HeldUpper {
    fn drop(&mut self) {
        // SAFETY: the reference `of` took (type invariant).
        unsafe { raw::hns_shim_dev_put(self.0.as_raw().cast()) };
    }
}

/// What is known of this driver's device on `dev`.
pub(crate) fn slave(dev: NetDev) -> BondSlave {
    let mut s = raw::hns_shim_bond_slave::default();
    // SAFETY: `dev` is live (the device of the event being handled, or a
    // port's netdev).
    unsafe { raw::hns_shim_bond_dev(dev.as_raw().cast(), &mut s) };
    BondSlave::from_raw(&s).unwrap_or(BondSlave { dev, hns: None })
}

/// The master upper device of `dev`.
pub(crate) fn master_upper(dev: NetDev) -> Option<NetDev> {
    // SAFETY: `dev` is live (see `slave`).
    NetDev::from_raw(unsafe { raw::hns_shim_master_upper(dev.as_raw().cast()) }.cast())
}

/// `(txable, port active)` of a slave: whether the bonding driver sends on
/// it, and whether it is running with carrier.
pub(crate) fn link(dev: NetDev) -> (bool, bool) {
    let (mut tx, mut up) = (false, false);
    // SAFETY: `dev` is a member's live net device.
    unsafe { raw::hns_shim_bond_link(dev.as_raw().cast(), &mut tx, &mut up) };
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
/// `g` is a live shim group whose context is `ctx`, an `Arc<T>` from
/// `into_foreign` owned by this value; `registered` says whether its
/// notifier is registered. Callers serialise [`Self::register`] and
/// [`Self::suspend`] (the driver's suspend lock).
pub(crate) struct BondHooks<T: BondHandler> {
    g: *mut raw::hns_shim_bond_grp,
    ctx: *mut c_void,
    registered: AtomicBool,
    _t: PhantomData<Arc<T>>,
}

// SAFETY: the shim object is only used through its thread-safe kernel
// primitives (notifier chain, workqueue); `T` is `Send + Sync`.
unsafe impl<T: BondHandler> Send for BondHooks<T> {}
// SAFETY: as above.
unsafe impl<T: BondHandler> Sync for BondHooks<T> {}

impl<T: BondHandler> BondHooks<T> {
    /// Hooks calling `h`, the notifier not yet registered.
    pub(crate) fn new(h: Arc<T>) -> Result<Self> {
        let ctx = h.into_foreign();
        // SAFETY: the callbacks are this type's trampolines, `ctx` an
        // `Arc<T>` they borrow.
        let g =
            unsafe { raw::hns_shim_bond_grp_alloc(ctx, Some(Self::on_event), Some(Self::on_work)) };
        if g.is_null() {
            // SAFETY: `ctx` came from `into_foreign` above and was not
            // handed to anyone.
            drop(unsafe { Arc::<T>::from_foreign(ctx) });
            return Err(ENOMEM);
        }
        // INVARIANT: a live group owning `ctx`, not registered.
        Ok(Self {
            g,
            ctx,
            registered: AtomicBool::new(false),
            _t: PhantomData,
        })
    }

    /// Registers the notifier (`register_netdevice_notifier`, which takes
    /// RTNL). Does nothing if it is registered.
    pub(crate) fn register(&self) -> Result {
        if self.registered.load(Ordering::Acquire) {
            return Ok(());
        }
        // SAFETY: a live group (type invariant).
        kernel::error::to_result(unsafe { raw::hns_shim_bond_grp_register(self.g) })?;
        self.registered.store(true, Ordering::Release);
        Ok(())
    }

    /// Unregisters the notifier (takes RTNL) and waits for a running
    /// work item. Does nothing to an unregistered notifier but the wait.
    pub(crate) fn suspend(&self) {
        if self.registered.swap(false, Ordering::AcqRel) {
            // SAFETY: a live, registered group (type invariant).
            unsafe { raw::hns_shim_bond_grp_unregister(self.g) };
        }
        // SAFETY: a live group (type invariant).
        unsafe { raw::hns_shim_bond_grp_cancel(self.g, true) };
    }

    /// Cancels pending work without waiting (`cancel_delayed_work`).
    pub(crate) fn cancel(&self) {
        // SAFETY: a live group (type invariant).
        unsafe { raw::hns_shim_bond_grp_cancel(self.g, false) };
    }

    /// Queues the work to run now; the test build's unload race uses it
    /// to have a work item running while the module unloads.
    #[cfg(hns_kunit)]
    pub(crate) fn queue(&self) {
        // SAFETY: a live group (type invariant).
        unsafe { raw::hns_shim_bond_grp_queue(self.g) };
    }

    /// The notifier callback.
    ///
    /// # Safety
    ///
    /// `ctx` is the group's context (an `Arc<T>` owned by live hooks) and
    /// `ev` a valid event for the call.
    unsafe extern "C" fn on_event(ctx: *mut c_void, ev: *const raw::hns_shim_bond_ev) -> bool {
        // SAFETY: per the function's contract; the hooks unregister the
        // notifier before they release `ctx`.
        let (h, ev) = unsafe { (Arc::<T>::borrow(ctx), &*ev) };
        let Some(dev) = NetDev::from_raw(ev.dev.cast()) else {
            return false;
        };
        let e = if ev.lower_state {
            BondEvent::LowerState {
                dev,
                lag_port: ev.lag_port,
            }
        } else {
            let Some(upper) = NetDev::from_raw(ev.upper.cast()) else {
                return false;
            };
            BondEvent::Upper {
                dev,
                upper,
                linking: ev.linking,
                lag_master: ev.lag_master,
                unregistering: ev.unregistering,
                info: ev.has_info.then_some((ev.tx_type, ev.hash_type)),
            }
        };
        h.event(&e)
    }

    /// The work callback.
    ///
    /// # Safety
    ///
    /// `ctx` is the group's context (see [`Self::on_event`]).
    unsafe extern "C" fn on_work(ctx: *mut c_void) {
        // SAFETY: per the function's contract; the hooks wait for the work
        // before they release `ctx`.
        unsafe { Arc::<T>::borrow(ctx) }.work();
    }
}

impl<T: BondHandler> Drop for BondHooks<T> {
    fn drop(&mut self) {
        self.suspend();
        // SAFETY: a live group (type invariant), unregistered with no work
        // pending or running (`suspend`): nothing uses it any more.
        unsafe { raw::hns_shim_bond_grp_free(self.g) };
        // SAFETY: `ctx` came from `into_foreign` in `new` (type invariant);
        // the group that lent it out is gone.
        drop(unsafe { Arc::<T>::from_foreign(self.ctx) });
    }
}
