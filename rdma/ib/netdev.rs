// SPDX-License-Identifier: GPL-2.0

//! The port's netdev: what the verbs read of it, the LAG master it
//! follows, and the netdevice notifier that reports its events.
//!
//! C: `hns_roce_query_port`, `hns_roce_netdev_event`, `handle_en_event`
//! in `drivers/infiniband/hw/hns/hns_roce_main.c`,
//! `get_upper_dev_from_ndev` in `hns_roce_bond.c`.
//!
//! The notifier (C's `iboe.nb`) is a `notifier_block` this layer owns at a
//! fixed address ([`Watch`]); each event is read into a [`NetdevEvent`]
//! (whether the device is the port's, whether the port follows a LAG
//! master and the device is that master, the device's state and address)
//! and handed to [`DeviceOps::netdev_event`](super::DeviceOps::netdev_event)
//! with the port's [`PortEvents`]. Which master a port follows is the
//! driver's answer
//! ([`DeviceOps::port_follows_upper`](super::DeviceOps::port_follows_upper)),
//! asked with a reference held on the master.

use super::{dev::sdev, verbs::dev_drv, Driver, NetDev, NetdevEvent, PortEvents};
use crate::rdma::raw;
use core::{
    marker::PhantomData,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    bindings,
    ffi::{c_int, c_ulong, c_void},
    prelude::*,
    sync::rcu,
    types::Opaque,
};

/// A reference on a net device, put when dropped.
///
/// # Invariants
///
/// The value owns a reference on the device.
struct Held(NetDev);

impl Held {
    /// Takes `dev`'s reference over, `None` for null.
    ///
    /// # Safety
    ///
    /// `dev` is null or a net device on which the caller holds a reference
    /// it hands over.
    unsafe fn new(dev: *mut bindings::net_device) -> Option<Self> {
        // INVARIANT: the caller's reference, handed over.
        NetDev::from_raw(dev).map(Self)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: the reference this value owns (type invariant).
        unsafe { raw::rdma_shim_dev_put(self.0.as_raw().cast()) };
    }
}

/// What a port reads of a net device: the active MTU it allows
/// (`iboe_get_mtu` of its MTU, an `enum ib_mtu` or 0), its state as a
/// port's (`ib_get_curr_port_state`) and its MAC address.
#[derive(Default)]
pub(super) struct NetdevPort {
    /// The MTU as an `enum ib_mtu` (0: below the smallest).
    pub(super) mtu: u32,
    /// `enum ib_port_state`.
    pub(super) state: u32,
    /// The MAC address.
    pub(super) mac: [u8; 6],
}

/// Reads `dev`.
///
/// # Safety
///
/// `dev` is a live net device.
unsafe fn read_port(dev: NetDev) -> NetdevPort {
    let mut p = NetdevPort::default();
    // SAFETY: `dev` is live (the function's contract); the MAC buffer has
    // `ETH_ALEN` bytes.
    unsafe {
        raw::rdma_shim_netdev_port(
            dev.as_raw().cast(),
            &mut p.mtu,
            &mut p.state,
            p.mac.as_mut_ptr(),
        )
    };
    p
}

/// The LAG master the port whose netdev is `ndev` follows, with a
/// reference: `ndev`'s master (read under RCU), if the device can bond and
/// the driver says the port follows it.
///
/// # Safety
///
/// `ibdev` is this driver's registered device and `ndev` a live net
/// device.
unsafe fn followed_upper<D: Driver>(ibdev: *mut raw::ib_device, ndev: NetDev) -> Option<Held> {
    // SAFETY: a registered device of this driver (the function's contract).
    if !unsafe { sdev(ibdev) }.bond_cap {
        return None;
    }
    let upper = {
        let _rcu = rcu::read_lock();
        // SAFETY: `ndev` is live (the function's contract), read under RCU.
        let upper = unsafe { raw::netdev_master_upper_dev_get_rcu(ndev.as_raw().cast()) };
        if !upper.is_null() {
            // SAFETY: the master of a live device, read under RCU: it lives
            // at least until the read side ends.
            unsafe { raw::rdma_shim_dev_hold(upper) };
        }
        // SAFETY: null, or the reference just taken, handed over.
        unsafe { Held::new(upper.cast()) }
    }?;
    // SAFETY: a registered device of this driver (the function's contract).
    let d = unsafe { dev_drv::<D>(ibdev) };
    d.port_follows_upper(ndev, upper.0).then_some(upper)
}

/// What the verbs read of port `port`'s netdev: its MTU and MAC, and with
/// `state` its state or that of the LAG master the port follows
/// (`query_port`; otherwise the state is the netdev's own).
///
/// # Safety
///
/// `ibdev` is this driver's registered device.
///
/// # Errors
///
/// `ENODEV` when the port has no netdev.
pub(super) unsafe fn port_netdev<D: Driver>(
    ibdev: *mut raw::ib_device,
    port: u32,
    state: bool,
) -> Result<NetdevPort> {
    // SAFETY: a registered device (the function's contract); the netdev
    // comes with a reference, handed over.
    let ndev = unsafe { Held::new(raw::ib_device_get_netdev(ibdev, port).cast()) }.ok_or(ENODEV)?;
    // SAFETY: `ndev` is held.
    let mut p = unsafe { read_port(ndev.0) };
    if state {
        // SAFETY: registered; `ndev` is held.
        if let Some(upper) = unsafe { followed_upper::<D>(ibdev, ndev.0) } {
            // SAFETY: `upper` is held.
            p.state = unsafe { read_port(upper.0) }.state;
        }
    }
    Ok(p)
}

/// The netdevice notifier of a registered device, calling the driver of
/// type `D`; [`Watch::unregister`] (or dropping it) removes it.
///
/// # Invariants
///
/// `nb` is initialised with [`Watch::on_netdev_event`] as its callback and lives
/// at a fixed address; `registered` says whether it is on the netdevice
/// chain; `ibdev` is a device of driver `D` registered while the notifier
/// is (its owner unregisters the notifier first).
#[pin_data(PinnedDrop)]
pub(super) struct Watch<D: Driver> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    ibdev: *mut raw::ib_device,
    registered: AtomicBool,
    _d: PhantomData<fn() -> D>,
}

// SAFETY: the notifier block is used only through the netdevice chain's
// own locking (RTNL); `ibdev` is the RDMA core's thread-safe device.
unsafe impl<D: Driver> Send for Watch<D> {}
// SAFETY: as above.
unsafe impl<D: Driver> Sync for Watch<D> {}

impl<D: Driver> Watch<D> {
    /// A notifier for `ibdev`, not yet registered.
    ///
    /// # Safety
    ///
    /// `ibdev` is a device of driver `D` that stays registered while the
    /// notifier is.
    pub(super) unsafe fn new(ibdev: *mut raw::ib_device) -> impl PinInit<Self> {
        // INVARIANT: the callback is `on_netdev_event`, unregistered; `ibdev` per
        // the function's contract.
        pin_init!(Self {
            nb <- Opaque::ffi_init(|slot: *mut bindings::notifier_block| {
                let nb = bindings::notifier_block {
                    notifier_call: Some(Self::on_netdev_event),
                    next: core::ptr::null_mut(),
                    priority: 0,
                };
                // SAFETY: `slot` is valid for writing a notifier block.
                unsafe { slot.write(nb) };
            }),
            ibdev,
            registered: AtomicBool::new(false),
            _d: PhantomData,
        })
    }

    /// Registers the notifier (`register_netdevice_notifier`, which takes
    /// RTNL); does nothing if it is registered. Callers serialise this
    /// with [`Self::unregister`].
    pub(super) fn register(&self) -> Result {
        if self.registered.load(Ordering::Acquire) {
            return Ok(());
        }
        // SAFETY: an initialised notifier block at a fixed address that
        // stays until it is unregistered (type invariant, `PinnedDrop`).
        kernel::error::to_result(unsafe { raw::register_netdevice_notifier(self.nb.get()) })?;
        self.registered.store(true, Ordering::Release);
        Ok(())
    }

    /// Unregisters the notifier if it is registered (takes RTNL); no
    /// event reaches the driver once this returns.
    pub(super) fn unregister(&self) {
        if self.registered.swap(false, Ordering::AcqRel) {
            // SAFETY: the registered notifier (type invariant).
            unsafe { raw::unregister_netdevice_notifier(self.nb.get()) };
        }
    }

    /// The notifier callback: reads the event for the driver.
    ///
    /// # Safety
    ///
    /// `nb` is the notifier of a live, registered [`Watch`] and `ptr` the
    /// event's `netdev_notifier_info`, as the netdevice chain calls it.
    unsafe extern "C" fn on_netdev_event(
        nb: *mut bindings::notifier_block,
        event: c_ulong,
        ptr: *mut c_void,
    ) -> c_int {
        // SAFETY: per the function's contract (`nb` is the watch's `nb`;
        // `Opaque` is `repr(transparent)`).
        let w = unsafe { &*kernel::container_of!(nb.cast::<Opaque<_>>(), Self, nb) };
        // SAFETY: `ptr` is the event's info (function contract).
        let dev = unsafe { (*ptr.cast::<raw::netdev_notifier_info>()).dev };
        let Some(dev) = NetDev::from_raw(dev.cast()) else {
            return bindings::NOTIFY_DONE as c_int;
        };
        // SAFETY: registered while the notifier is (type invariant).
        let s = unsafe { sdev(w.ibdev) };
        let own = NetDev::from_raw(s.netdev.cast());
        let (mut lag_master, mut lag_port, mut unregistering) = (false, false, false);
        // SAFETY: the event's live device, under RTNL.
        let p = unsafe {
            raw::rdma_shim_netdev_lag(
                dev.as_raw().cast(),
                &mut lag_master,
                &mut lag_port,
                &mut unregistering,
            );
            read_port(dev)
        };
        let ours = own == Some(dev);
        let upper = match own {
            // SAFETY: registered; the port's netdev lives while the device
            // is registered on it.
            Some(own) if ours || lag_master => unsafe { followed_upper::<D>(w.ibdev, own) },
            _ => None,
        };
        let ev = NetdevEvent {
            // CAST: `NETDEV_*` are small numbers.
            cmd: event as u32,
            ours,
            bonded: upper.is_some(),
            upper: upper.as_ref().is_some_and(|u| u.0 == dev),
            lag_master,
            state: p.state,
            addr: p.mac,
            _call: PhantomData,
        };
        drop(upper);
        // SAFETY: registered while the notifier is (type invariant).
        let (d, port) = unsafe { (dev_drv::<D>(w.ibdev), PortEvents::new(w.ibdev)) };
        d.netdev_event(&ev, &port);
        bindings::NOTIFY_DONE as c_int
    }
}

#[pinned_drop]
impl<D: Driver> PinnedDrop for Watch<D> {
    fn drop(self: Pin<&mut Self>) {
        self.unregister();
    }
}
