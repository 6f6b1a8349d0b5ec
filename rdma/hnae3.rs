// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The hnae3 RoCE client: how the HNS3 NIC driver hands a function's RoCE
//! engine to this driver.
//!
//! C header: [`hnae3.h`](srctree/drivers/net/ethernet/hisilicon/hns3/hnae3.h).
//!
//! A driver implements [`RoceClient`] and holds a [`ClientRegistration`];
//! the hnae3 core then calls it for every function through the shim's
//! client, whose callbacks this module routes to the driver with the
//! per-function state ([`RoceClient::Instance`]) kept in the handle's
//! `priv`. The function's resources the driver may keep beyond a callback
//! ([`RegWindow`], [`SqDoorbells`], [`ResetRequest`], [`BoundDevice`]) are
//! valid until its `uninit_instance` returns, and the driver drops them
//! there.
//!
//! The HNS engine's trace events (`trace`, C tracepoints of the shim) are
//! here too: with the client, they are the HNS-specific C the rdma layer
//! proper does not name.

use super::{
    ib::{lag_port_netdev, IbParams, IbRegistration},
    raw, try_borrow, Driver, NetDev,
};

// RoCE bonding: the kernel objects a bond group works with.
mod bond;
pub(crate) use bond::{
    link as bond_link, master_upper, slave as bond_slave, slaves as bond_slaves, BondEvent,
    BondHandler, BondHooks, BondSlave, HandleRef, HeldUpper, LAG_HASH_L2, LAG_HASH_L23,
    LAG_HASH_L34, LAG_HASH_NONE, LAG_TX_ACTIVEBACKUP, LAG_TX_HASH,
};

// The `hns_roce` trace events.
pub(crate) mod trace;
// The driver's user ABI types checked against the bindings (the HNS
// driver's crate only: a software provider has no such ABI).
#[cfg(not(rdma_soft))]
mod uabi;
use crate::dbwin;
use core::marker::PhantomData;
use kernel::{
    device::{Bound, Device},
    error::to_result,
    ffi::{c_char, c_int, c_ulong, c_void},
    io::{Io, Mmio, MmioRaw, Region},
    new_mutex,
    prelude::*,
    sync::{
        aref::ARef,
        lock::{mutex::MutexBackend, Guard},
        Arc, ArcBorrow, Mutex,
    },
    types::{ForeignOwnable, Opaque}, //
};

/// PCI identity of the function behind an hnae3 handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PciIdent {
    /// PCI vendor ID.
    pub(crate) vendor: u16,
    /// PCI device ID.
    pub(crate) device: u16,
    /// PCI revision ID (0x21 on HIP08, 0x30 on HIP09).
    pub(crate) revision: u8,
}

/// A borrowed `struct hnae3_handle`, the RoCE client's view of one function.
///
/// # Invariants
///
/// The wrapped handle is valid, and its `pdev` is bound to the hnae3 ae_dev
/// driver, for as long as a reference to this type exists: references are
/// only created inside the hnae3 client callbacks, which the hnae3 core calls
/// between registering and unregistering the ae_dev.
#[repr(transparent)]
pub(crate) struct Hnae3Handle(Opaque<raw::hnae3_handle>);

impl Hnae3Handle {
    /// Wraps a raw handle.
    ///
    /// # Safety
    ///
    /// `ptr` must be a valid handle whose `pdev` stays bound for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut raw::hnae3_handle) -> &'a Self {
        // SAFETY: `Hnae3Handle` is a transparent wrapper of the C struct and
        // the caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw handle, for the shim's calls.
    pub(super) fn as_raw(&self) -> *mut raw::hnae3_handle {
        self.0.get()
    }

    /// The function's net device, as an identity.
    pub(crate) fn netdev_ref(&self) -> Option<NetDev> {
        NetDev::from_raw(self.netdev().cast())
    }

    /// The handle's identity, kept by a driver's bond group.
    pub(crate) fn handle_ref(&self) -> HandleRef {
        HandleRef(self.as_raw())
    }

    /// The hnae3 core has a client on the handle (`handle->client`; the
    /// NIC driver clears it once it tore the client's instance down).
    pub(crate) fn has_client(&self) -> bool {
        // SAFETY: the handle is valid (type invariant); `client` is written
        // by the NIC driver under the hnae3 lock, read here as C does.
        !unsafe { core::ptr::read_volatile(&raw const (*self.as_raw()).client) }.is_null()
    }

    /// The PCI bus (the die) and function number of the function.
    pub(crate) fn bus_func(&self) -> (u8, u8) {
        // SAFETY: `pdev` and its bus are valid while the handle is.
        let (bus, devfn) = unsafe {
            let pdev = self.pdev();
            ((*(*pdev).bus).number, (*pdev).devfn)
        };
        // CAST: PCI_FUNC is the low 3 bits.
        (bus, (devfn & 7) as u8)
    }

    /// The function's `struct pci_dev`.
    pub(super) fn pdev(&self) -> *mut kernel::bindings::pci_dev {
        // SAFETY: the handle is valid by the type invariant.
        unsafe { (*self.0.get()).pdev }
    }

    /// The function's netdev (`rinfo.netdev`), null if the NIC driver has
    /// none for it.
    pub(super) fn netdev(&self) -> *mut kernel::bindings::net_device {
        // SAFETY: the handle is valid (type invariant); for a RoCE client
        // handle the union holds `rinfo`.
        unsafe { (*self.0.get()).__bindgen_anon_1.rinfo.as_ref().netdev }
    }

    /// The PCI vendor, device and revision IDs of the function.
    pub(crate) fn pci_ident(&self) -> PciIdent {
        let pdev = self.pdev();
        // SAFETY: `pdev` is valid while the handle is (type invariant).
        let (vendor, device, revision) =
            unsafe { ((*pdev).vendor, (*pdev).device, (*pdev).revision) };
        PciIdent {
            vendor,
            device,
            revision,
        }
    }

    /// The PCI function's `struct device`, for logging.
    pub(crate) fn device(&self) -> &Device {
        // SAFETY: `pdev` is valid and bound while `self` lives (type
        // invariant), so its embedded `struct device` has a non-zero reference
        // count for the lifetime of the returned reference.
        unsafe { Device::from_raw(&raw mut (*self.pdev()).dev) }
    }
}

pub(crate) use crate::dbwin::REG_WINDOW;

/// The function's register window (`rinfo.roce_io_base`).
pub(crate) type Regs<'a> = Mmio<'a, Region<REG_WINDOW>>;

impl Hnae3Handle {
    /// The PCI function's `struct device`, bound to the hnae3 ae_dev
    /// driver: what DMA allocations are made against.
    ///
    /// The kernel crate gives a `&Device<Bound>` to a bus driver only for
    /// the scope of a callback in which the bus keeps the device bound
    /// (`probe`, or a `Devres` access). The function is bound to the hnae3
    /// ae_dev driver, not to this one; the scope that proves it bound here
    /// is the hnae3 client callback, which a `&Hnae3Handle` stands for:
    /// the reference returned lives no longer than that borrow.
    pub(crate) fn bound_device(&self) -> &Device<Bound> {
        // SAFETY: the function stays bound for as long as `self` is
        // borrowed (type invariant: references are made only inside the
        // hnae3 client callbacks, which the hnae3 core calls while the
        // ae_dev, and so its PCI function, is registered and bound), and
        // the result borrows `self`.
        unsafe { self.device().as_bound() }
    }

    /// MSI-X vectors the ae_dev driver set aside for RoCE.
    pub(crate) fn num_vectors(&self) -> u32 {
        // SAFETY: as in `registers`.
        let n = unsafe { (*self.0.get()).__bindgen_anon_1.rinfo.as_ref().num_vectors };
        // CAST: a small non-negative count.
        n.max(0) as u32
    }

    /// The register window, to be kept by the instance (see [`RegWindow`]).
    pub(crate) fn reg_window(&self) -> Result<RegWindow> {
        // SAFETY: the handle is valid (type invariant); for a RoCE client
        // handle the union holds `rinfo`.
        let base = unsafe { (*self.0.get()).__bindgen_anon_1.rinfo.as_ref().roce_io_base };
        if base.is_null() || base as usize % dbwin::DB_BYTES != 0 {
            return Err(ENODEV);
        }
        // INVARIANT: the window of a bound RoCE function, 8-aligned (an
        // `ioremap` is page-aligned).
        Ok(RegWindow(MmioRaw::new_region(base as usize, REG_WINDOW)?))
    }

    /// The Linux irq number of the function's `i`-th RoCE vector.
    pub(crate) fn irq_vector(&self, i: u32) -> Result<u32> {
        let h = self.0.get();
        // SAFETY: the handle is valid (type invariant); for a RoCE client
        // handle the union holds `rinfo`.
        let rinfo = unsafe { (*h).__bindgen_anon_1.rinfo.as_ref() };
        // The vectors the NIC gave RoCE: `num_vectors` from `base_vector`.
        let n = u32::try_from(rinfo.num_vectors).unwrap_or(0);
        let base = u32::try_from(rinfo.base_vector).map_err(|_| EINVAL)?;
        if i >= n {
            return Err(EINVAL);
        }
        let nr = base.checked_add(i).ok_or(EINVAL)?;
        // SAFETY: the function's live PCI device (type invariant).
        let irq = unsafe { kernel::bindings::pci_irq_vector((*h).pdev, nr) };
        match u32::try_from(irq) {
            Ok(0) | Err(_) => Err(EINVAL),
            Ok(irq) => Ok(irq),
        }
    }

    /// Where BAR `bar` of the function starts on the bus.
    pub(crate) fn bar_start(&self, bar: i32) -> u64 {
        // SAFETY: the handle is valid (type invariant), its PCI device live.
        unsafe { kernel::bindings::pci_resource_start((*self.0.get()).pdev, bar) }
    }

    /// The PCI name of the function (`0000:00:03.0`).
    pub(crate) fn pci_name(&self) -> &CStr {
        self.device().name()
    }
}

impl Hnae3Handle {
    /// The kernel SQ doorbells of a HIP09 function: `num_qps` 64-bit words,
    /// one every `stride` bytes (a multiple of 8), in the `roce_mem_base`
    /// window.
    pub(crate) fn sq_doorbells(&self, num_qps: u32, stride: usize) -> Option<SqDoorbells> {
        // SAFETY: the handle is valid (type invariant); for a RoCE client
        // handle the union holds `rinfo`.
        let base = unsafe {
            (*self.0.get())
                .__bindgen_anon_1
                .rinfo
                .as_ref()
                .roce_mem_base
        };
        if base.is_null()
            || base as usize % dbwin::DB_BYTES != 0
            || stride % dbwin::DB_BYTES != 0
            || stride < DWQE_BYTES
        {
            return None;
        }
        let len = (num_qps as usize).checked_mul(stride)?;
        // INVARIANT: the window the hnae3 driver mapped for this function,
        // one stride per QP (the C driver writes there for every QPN);
        // base and stride checked above.
        Some(SqDoorbells {
            window: MmioRaw::new_region(base as usize, len).ok()?,
            stride,
        })
    }

    /// What the abnormal interrupt needs to ask the ae_dev for a reset: a
    /// function reset, or with `vf` a VF reset.
    pub(crate) fn reset_request(&self, vf: bool) -> ResetRequest {
        // INVARIANT: the handle of the function whose interrupts hold it.
        ResetRequest {
            h: self.0.get(),
            vf,
        }
    }

    /// The NIC's DSCP-to-priority map of the function, to be kept by the
    /// instance (see [`DscpMap`]).
    pub(crate) fn dscp_map(&self) -> DscpMap {
        // INVARIANT: the handle of the function whose instance holds it.
        DscpMap { h: self.0.get() }
    }

    /// The MAC address of the function's netdev (`rinfo.netdev->dev_addr`).
    pub(crate) fn netdev_mac(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: the handle is valid (type invariant) and a RoCE client's
        // handle has its netdev; `mac` is valid for 6 bytes.
        unsafe { raw::hnae3_shim_netdev_mac(self.0.get(), mac.as_mut_ptr()) };
        mac
    }

    /// The client's per-function pointer (`priv`).
    fn priv_ptr(&self) -> *mut c_void {
        // SAFETY: the handle is valid (type invariant); `priv` belongs to
        // the RoCE client and the hnae3 core serialises its callbacks.
        unsafe { (*self.0.get()).priv_ }
    }

    /// Replaces the client's per-function pointer, returning the old one.
    fn replace_priv(&self, p: *mut c_void) -> *mut c_void {
        // SAFETY: as in `priv_ptr`.
        unsafe { core::mem::replace(&mut (*self.0.get()).priv_, p) }
    }
}

/// A function reset request to the hnae3 ae_dev (`abnormal_interrupt_basic`).
///
/// # Invariants
///
/// `h` is a RoCE client handle that stays valid while the holder exists:
/// only the abnormal interrupt's handler holds one, and interrupts are
/// freed in `uninit_instance`, before the handle goes.
pub(crate) struct ResetRequest {
    h: *mut raw::hnae3_handle,
    vf: bool,
}

// SAFETY: the handle pointer may be used from any context; the ae_dev ops
// called with it are meant for interrupt context.
unsafe impl Send for ResetRequest {}
// SAFETY: as above.
unsafe impl Sync for ResetRequest {}

impl ResetRequest {
    /// Sets the default reset level (a function reset, or a VF one) and
    /// raises a reset event.
    pub(crate) fn request(&self) {
        // SAFETY: valid handle (type invariant).
        unsafe { raw::hnae3_shim_request_reset(self.h, self.vf) }
    }
}

/// Where the RoCE client is in bringing a function up or down, as it keeps
/// it in the handle (`rinfo.instance_state`, C's `hns_roce_instance_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InstanceState {
    /// Not attached.
    NonInit,
    /// `init_instance` is running (or declined the function).
    Init,
    /// Attached.
    Inited,
    /// `uninit_instance` is running.
    Uninit,
    /// The bond code is taking the function down.
    BondUninit,
}

impl InstanceState {
    /// The value in `rinfo.instance_state`.
    const fn raw(self) -> c_ulong {
        match self {
            Self::NonInit => 0,
            Self::Init => 1,
            Self::Inited => 2,
            Self::Uninit => 3,
            Self::BondUninit => 4,
        }
    }
}

/// Which step of a reset the RoCE client last went through, as it keeps it
/// in the handle (`rinfo.reset_state`, C's `hns_roce_reset_state`; 0 until
/// the first reset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResetStage {
    /// The DOWN step.
    Down,
    /// The UNINIT step.
    Uninit,
    /// The INIT step is running.
    Init,
    /// The INIT step ended (or had nothing to do).
    Inited,
}

impl ResetStage {
    /// The value in `rinfo.reset_state` (1, "before down", is not used
    /// by the hns RoCE drivers).
    const fn raw(self) -> c_ulong {
        match self {
            Self::Down => 2,
            Self::Uninit => 3,
            Self::Init => 4,
            Self::Inited => 5,
        }
    }
}

impl Hnae3Handle {
    /// What the handle says about resets, to be kept by the instance (see
    /// [`ResetInfo`]).
    pub(crate) fn reset_info(&self) -> ResetInfo {
        // INVARIANT: the handle of the function whose instance holds it.
        ResetInfo { h: self.0.get() }
    }

    /// Records where the client is with this function
    /// (`rinfo.instance_state`).
    fn set_instance_state(&self, st: InstanceState) {
        // SAFETY: the handle is valid (type invariant); for a RoCE client
        // handle the union holds `rinfo`, whose state words are the
        // client's. The callbacks that write them are serialised by the
        // hnae3 core; readers on other threads read the word whole.
        unsafe {
            core::ptr::write_volatile(
                &raw mut (*self.0.get())
                    .__bindgen_anon_1
                    .rinfo
                    .as_mut()
                    .instance_state,
                st.raw(),
            )
        }
    }

    /// Records the reset step the client is in (`rinfo.reset_state`).
    fn set_reset_stage(&self, st: ResetStage) {
        // SAFETY: as in `set_instance_state`.
        unsafe {
            core::ptr::write_volatile(
                &raw mut (*self.0.get()).__bindgen_anon_1.rinfo.as_mut().reset_state,
                st.raw(),
            )
        }
    }

    /// Whether the client is attached (`rinfo.instance_state` INITED).
    fn is_inited(&self) -> bool {
        self.reset_info().instance_state() == InstanceState::Inited.raw()
    }
}

/// The ae_dev's answers about resets (`ae_dev_reset_cnt`,
/// `get_hw_reset_stat`, `get_cmdq_stat`, `ae_dev_resetting`) and the
/// client's own reset bookkeeping in the handle, for the checks the driver
/// makes before it talks to the hardware.
///
/// # Invariants
///
/// `h` is a RoCE client handle that stays valid while the holder exists:
/// the instance holds it (its device state, `cmdq::DevState`), and it is dropped in
/// `uninit_instance`.
pub(crate) struct ResetInfo {
    h: *mut raw::hnae3_handle,
}

// SAFETY: the handle pointer may be used from any context; the ae_dev's
// reset queries only read its state and are called from interrupt context
// by the C driver too (doorbells of the EQ handlers).
unsafe impl Send for ResetInfo {}
// SAFETY: as above.
unsafe impl Sync for ResetInfo {}

/// The ae_dev's operations behind a handle (`handle->ae_algo->ops`).
///
/// # Safety
///
/// `h` is a valid handle of a function the hnae3 core bound, whose
/// ae_algo and its ops outlive `'a`.
unsafe fn ae_ops<'a>(h: *mut raw::hnae3_handle) -> &'a raw::hnae3_ae_ops {
    // SAFETY: per the function's contract.
    unsafe { &*(*(*h).ae_algo).ops }
}

/// Asks the ae_dev a yes-or-no question about `h` through `op`; no when
/// the NIC does not implement it.
///
/// # Safety
///
/// As [`ae_ops`]; `op` reads a query of the ae_dev's ops that may run in
/// the caller's context.
unsafe fn ae_ask(
    h: *mut raw::hnae3_handle,
    op: fn(&raw::hnae3_ae_ops) -> Option<unsafe extern "C" fn(*mut raw::hnae3_handle) -> bool>,
) -> bool {
    // SAFETY: per the function's contract.
    op(unsafe { ae_ops(h) }).is_some_and(|f| unsafe { f(h) })
}

impl ResetInfo {
    /// How many hardware resets the NIC has finished.
    #[inline(never)]
    pub(crate) fn reset_cnt(&self) -> c_ulong {
        // SAFETY: valid, bound handle (type invariant).
        let op = unsafe { ae_ops(self.h) }.ae_dev_reset_cnt;
        // SAFETY: the ae_dev's query on its own handle, which may run in
        // any context (C calls it from its doorbell paths).
        op.map_or(0, |f| unsafe { f(self.h) })
    }

    /// A hardware reset is under way.
    pub(crate) fn hw_resetting(&self) -> bool {
        // SAFETY: valid, bound handle (type invariant); see `reset_cnt`.
        unsafe { ae_ask(self.h, |o| o.get_hw_reset_stat) }
    }

    /// The NIC's command queue is stopped by a reset.
    pub(crate) fn cmdq_stopped(&self) -> bool {
        // SAFETY: as in `hw_resetting`.
        unsafe { ae_ask(self.h, |o| o.get_cmdq_stat) }
    }

    /// The NIC's reset task is running.
    pub(crate) fn sw_resetting(&self) -> bool {
        // SAFETY: as in `hw_resetting`.
        unsafe { ae_ask(self.h, |o| o.ae_dev_resetting) }
    }

    /// The raw `rinfo.instance_state`.
    fn instance_state(&self) -> c_ulong {
        // SAFETY: valid handle (type invariant) whose union holds `rinfo`;
        // see `Hnae3Handle::set_instance_state`.
        unsafe {
            core::ptr::read_volatile(
                &raw const (*self.h).__bindgen_anon_1.rinfo.as_ref().instance_state,
            )
        }
    }

    /// The raw `rinfo.reset_state`.
    fn reset_stage(&self) -> c_ulong {
        // SAFETY: as in `instance_state`.
        unsafe {
            core::ptr::read_volatile(
                &raw const (*self.h).__bindgen_anon_1.rinfo.as_ref().reset_state,
            )
        }
    }

    /// The client is bringing the function up: its `init_instance` or the
    /// INIT step of a reset is running. A reset seen then makes commands
    /// fail rather than pass unsent.
    pub(crate) fn initializing(&self) -> bool {
        self.instance_state() == InstanceState::Init.raw()
            || self.reset_stage() == ResetStage::Init.raw()
    }

    /// `init_instance` (not a reset's re-init) is running.
    pub(crate) fn instance_initializing(&self) -> bool {
        self.instance_state() == InstanceState::Init.raw()
    }
}

/// The NIC's DSCP-to-priority map of a function (the ae_dev's
/// `get_dscp_prio`), which RoCE v2 address vectors consult.
///
/// # Invariants
///
/// `h` is a RoCE client handle that stays valid while the holder exists:
/// the instance holds it, and it is dropped in `uninit_instance`.
pub(crate) struct DscpMap {
    h: *mut raw::hnae3_handle,
}

// SAFETY: the handle pointer may be used from any thread; the ae_dev op
// called with it only reads the NIC's DCB tables.
unsafe impl Send for DscpMap {}
// SAFETY: as above.
unsafe impl Sync for DscpMap {}

impl DscpMap {
    /// The traffic-class mode and the priority of `dscp`, as
    /// `(tc_mode, priority)`.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` if the NIC has no such map, or the NIC's error.
    #[inline(never)]
    pub(crate) fn prio(&self, dscp: u8) -> Result<(u8, u8)> {
        let (mut mode, mut prio) = (0u8, 0u8);
        // SAFETY: valid, bound handle (type invariant).
        let op = unsafe { ae_ops(self.h) }.get_dscp_prio.ok_or(EOPNOTSUPP)?;
        // SAFETY: the ae_dev's op on its own handle; the out pointers are
        // live locals.
        to_result(unsafe { op(self.h, dscp, &mut mode, &mut prio) })?;
        Ok((mode, prio))
    }
}

/// The `roce_mem_base` window of SQ doorbells (`hns_roce_dev.mem_base`).
///
/// # Invariants
///
/// `window` is mapped I/O memory of the function while its hnae3 handle is
/// attached to this client; every holder is dropped in `uninit_instance`.
/// Its base is 8-aligned, and `stride` is a non-zero multiple of 8 not
/// smaller than a direct WQE.
pub(crate) struct SqDoorbells {
    window: MmioRaw<Region>,
    stride: usize,
}

/// Bytes of a direct WQE: the first 64 bytes of a send WQE.
const DWQE_BYTES: usize = 64;

impl SqDoorbells {
    /// QP `qpn`'s page of the window, if the whole of it that the driver
    /// writes (a direct WQE) lies inside the window.
    pub(crate) fn slot(&self, qpn: u32) -> Option<SqDb<'_>> {
        let off = dbwin::page_at(qpn, self.stride, DWQE_BYTES, self.window.size())?;
        // INVARIANT: `page_at` checked the bounds; the base and the stride
        // are 8-aligned (type invariant of `SqDoorbells`).
        Some(SqDb { w: self, off })
    }
}

/// One QP's page of the SQ doorbell window.
///
/// # Invariants
///
/// `off` is 8-aligned, and `off + 64` is at most the size of `w`'s window.
#[derive(Clone, Copy)]
pub(crate) struct SqDb<'a> {
    w: &'a SqDoorbells,
    off: usize,
}

impl SqDb<'_> {
    /// The 64-bit word at byte `off + 8 * i` of the page, `i` below 8.
    fn word(&self, i: usize) -> Mmio<'_, u64> {
        let addr = self.w.window.addr() + self.off + dbwin::DB_BYTES * (i % 8);
        // SAFETY: the window is mapped while `self.w` exists (invariant of
        // `SqDoorbells`); the word is 8-aligned and inside it (invariant
        // of `SqDb`, and `i % 8` keeps it in the page's first 64 bytes).
        unsafe { Mmio::from_raw(MmioRaw::new(addr)) }
    }

    /// Rings the QP's SQ doorbell with `v` (one 64-bit write).
    pub(crate) fn write64(&self, v: u64) {
        self.word(0).write_val(v);
    }

    /// Pushes a whole send WQE (its first 64 bytes, `words` as the CPU
    /// sees them) into the QP's page: eight relaxed 64-bit writes in
    /// ascending order, as a direct WQE is written.
    pub(crate) fn write512(&self, words: &[u32; 16]) {
        for (i, pair) in words.chunks_exact(2).enumerate() {
            if let [lo, hi] = *pair {
                // The memory image: the word at the lower address is the
                // low half of the little-endian qword.
                let v = u64::from(lo) | (u64::from(hi) << 32);
                self.word(i).relaxed().write_val(v);
            }
        }
    }
}

/// A doorbell register of the register window.
///
/// # Invariants
///
/// The offset is 8-aligned and its 64-bit word lies inside `REG_WINDOW`:
/// checked when the build evaluates [`DbOffset::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DbOffset(usize);

impl DbOffset {
    /// The doorbell at byte `OFF` of the window; an offset outside it or
    /// not 8-aligned fails the build.
    pub(crate) const fn new<const OFF: usize>() -> Self {
        kernel::const_assert!(dbwin::db_fits(OFF, REG_WINDOW));
        // INVARIANT: checked above, at build time.
        Self(OFF)
    }

    /// The byte offset.
    pub(crate) const fn get(self) -> usize {
        self.0
    }
}

/// The function's register window, kept by the per-function state so that
/// interrupt handlers and verbs can reach the registers.
///
/// # Invariants
///
/// Maps `REG_WINDOW` bytes of the function's BAR, from an 8-aligned base.
/// It stays mapped while the hnae3 handle it came from is attached to this client: the driver drops
/// every holder of a window in `uninit_instance`. It is neither `Clone`
/// nor `Copy`: it has one owner (the function's `cmdq::DevState`), from which the
/// rest of the driver borrows the registers.
pub(crate) struct RegWindow(MmioRaw<Region<REG_WINDOW>>);

impl RegWindow {
    /// The registers.
    pub(crate) fn io(&self) -> Regs<'_> {
        // SAFETY: mapped while `self` exists (type invariant).
        unsafe { Mmio::from_raw(self.0) }
    }

    /// One 64-bit write, as doorbells need: the engine must see both
    /// halves at once. `Io::write64` checks at build time that the access
    /// is aligned to the region type's 4-byte minimum, which an 8-byte
    /// access is not; the doorbell's word is written as a `u64` view
    /// instead, which [`DbOffset`] proves inside the window.
    pub(crate) fn write64(&self, v: u64, off: DbOffset) {
        let addr = self.0.addr() + off.get();
        // SAFETY: the window is mapped while `self` exists and its base is
        // 8-aligned (type invariant); the word is 8-aligned and inside it
        // (invariant of `DbOffset`).
        let db: Mmio<'_, u64> = unsafe { Mmio::from_raw(MmioRaw::new(addr)) };
        db.write_val(v);
    }
}

/// What the hnae3 core asks a RoCE client to do, as sent to `reset_notify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResetNotify {
    /// Quiesce: stop using the hardware.
    Down,
    /// Resume after the reset.
    Up,
    /// Tear down the instance's resources.
    Uninit,
    /// Rebuild the instance after the reset.
    Init,
    /// A value this driver does not know.
    Other(i32),
}

impl ResetNotify {
    fn from_raw(v: c_int) -> Self {
        // CAST: enum constants are small non-negative integers.
        match v as u32 {
            raw::hnae3_reset_notify_type_HNAE3_DOWN_CLIENT => Self::Down,
            raw::hnae3_reset_notify_type_HNAE3_UP_CLIENT => Self::Up,
            raw::hnae3_reset_notify_type_HNAE3_UNINIT_CLIENT => Self::Uninit,
            raw::hnae3_reset_notify_type_HNAE3_INIT_CLIENT => Self::Init,
            _ => Self::Other(v),
        }
    }
}

/// The driver side of an hnae3 RoCE client.
///
/// The per-function state the driver returns from `init_instance` is kept
/// by this layer in the handle's `priv` and handed back on the other calls;
/// the driver never touches `priv` itself.
///
/// The implementing type is the driver's module-wide state: the
/// registration keeps it in a [`Client`] beside the client's locks, and
/// every callback gets it back, as `this` (the hnae3 core's callbacks carry
/// no context; the shim hands back the one given at registration).
///
/// Every callback runs under the client lock, which a driver may also take
/// ([`Clients::with`]) to bring other functions' instances up or down
/// itself (RoCE bonding does). [`RoceClient::suspend`] and
/// [`RoceClient::resume`] run outside it, around the teardowns the hnae3
/// core asks for, so that the driver can wait there for its own work that
/// takes the lock.
pub(crate) trait RoceClient: Sized + Send + Sync + 'static {
    /// Per-function state.
    type Instance: Send + Sync;
    /// A function appeared (`reset`: came back from a reset): `Ok(None)`
    /// declines it (not a RoCE function this driver handles), `Ok(Some(_))`
    /// attaches.
    fn init_instance(
        this: ClientRef<'_, Self>,
        handle: &Hnae3Handle,
        reset: bool,
    ) -> Result<Option<KBox<Self::Instance>>>;
    /// The function's instance goes away, for the reason `how`; `cl` may
    /// bring other functions up meanwhile.
    fn uninit_instance(
        &self,
        cl: &mut Clients<'_, Self>,
        handle: &Hnae3Handle,
        inst: KBox<Self::Instance>,
        how: Uninit,
    );
    /// The port link went up or down.
    fn link_status_change(&self, handle: &Hnae3Handle, inst: Option<&Self::Instance>, up: bool);
    /// The function is about to be reset: stop touching the hardware. The
    /// layer then tears the instance down with `uninit_instance` and builds
    /// a new one with `init_instance` (`hns_roce_hw_v2_reset_notify`).
    fn reset_down(&self, handle: &Hnae3Handle, inst: &Self::Instance);
    /// Before the hnae3 core's uninit of a function and before a reset,
    /// outside the client lock.
    fn suspend(&self, _handle: &Hnae3Handle) {}
    /// After the uninit, or once the reset brought the function back (or
    /// found nothing to bring back), outside the client lock.
    fn resume(&self, _handle: &Hnae3Handle) {}
    /// The hnae3 core removed the function (its instance, if any, is torn
    /// down): the handle is not to be used any more. Under the client lock.
    fn removed(&self, _handle: &Hnae3Handle) {}
    /// Module `name` is about to start while the client is registered:
    /// an error refuses it (a rival client of the same functions).
    fn module_coming(&self, _name: &CStr) -> Result {
        Ok(())
    }
    /// The client is unregistered (no callback runs any more): drop what
    /// refers back to the [`Client`], so that the registration's reference
    /// is its last.
    fn unregistered(&self) {}
}

/// Why an instance goes away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Uninit {
    /// The hnae3 core removes the function (`reset`: as part of a reset
    /// of the NIC).
    Remove {
        /// The NIC is being reset.
        reset: bool,
    },
    /// The function is reset (the UNINIT step of a reset).
    Reset,
    /// The driver takes the function down itself ([`Clients::detach`]).
    Driver,
}

/// The module-wide state of a registered client: the driver's `C` and the
/// client's two locks. The [`ClientRegistration`] holds it while the
/// client is registered; the driver's work that runs outside a callback
/// (RoCE bonding's notifier and work) holds it too, and lets go of it in
/// [`RoceClient::unregistered`].
#[pin_data]
pub(crate) struct Client<C: RoceClient> {
    /// Taken by every callback but the link one and by [`Clients::with`].
    #[pin]
    client_lock: Mutex<()>,
    /// Held while a handle's `priv` changes and while the link callback
    /// borrows it: that callback comes under RTNL (the NIC's `ndo_stop`),
    /// which the client lock's holders take inside it, so it cannot take
    /// the client lock. Nothing is taken inside this lock but what the link
    /// callback does.
    #[pin]
    priv_lock: Mutex<()>,
    /// The driver's state.
    #[pin]
    drv: C,
}

impl<C: RoceClient> core::ops::Deref for Client<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.drv
    }
}

/// A borrowed [`Client`], as a callback gets it: it can be kept
/// (`.into()` makes an `Arc`).
pub(crate) type ClientRef<'a, C> = ArcBorrow<'a, Client<C>>;

/// The client lock, held: what may attach, detach and borrow the
/// instances of driver `C`'s functions.
pub(crate) struct Clients<'a, C: RoceClient> {
    _guard: Guard<'a, (), MutexBackend>,
    client: ClientRef<'a, C>,
}

impl<C: RoceClient> Clients<'_, C> {
    /// Runs `f` with the client lock of `client` held.
    pub(crate) fn with<R>(client: ClientRef<'_, C>, f: impl FnOnce(&mut Clients<'_, C>) -> R) -> R {
        let mut cl = Clients {
            _guard: client.client_lock.lock(),
            client,
        };
        f(&mut cl)
    }

    /// The handle behind `h`, if it is still one of the hnae3 core's (a
    /// function the client was ever attached to; the driver forgets its
    /// handles when their function is removed, see [`Uninit::Remove`]).
    fn handle(h: HandleRef) -> &'static Hnae3Handle {
        // SAFETY: the driver keeps a `HandleRef` only while its function is
        // registered with the hnae3 core: it drops it in `uninit_instance`
        // with `Uninit::Remove`.
        unsafe { Hnae3Handle::from_raw(h.0) }
    }

    /// The net device of the function behind `h`, as an identity.
    pub(crate) fn netdev(&self, h: HandleRef) -> Option<NetDev> {
        Self::handle(h).netdev_ref()
    }

    /// The state of the function behind `h`, if the driver is attached
    /// to it.
    pub(crate) fn instance(&self, h: HandleRef) -> Option<&C::Instance> {
        ClientAdapter::<C>::instance(Self::handle(h))
    }

    /// The driver's state.
    pub(crate) fn driver(&self) -> &C {
        &self.client.drv
    }

    /// Brings the function behind `h` up (`init_instance`), unless it is
    /// up or the hnae3 core took the client away from it; true if it is up
    /// afterwards. A failure is the driver's to report.
    pub(crate) fn attach(&mut self, h: HandleRef) -> bool {
        let handle = Self::handle(h);
        if ClientAdapter::<C>::instance(handle).is_some() {
            return true;
        }
        if !handle.has_client() {
            return false;
        }
        ClientAdapter::<C>::init_checked(self.client, handle) == 0
            && ClientAdapter::<C>::instance(handle).is_some()
    }

    /// Takes the function behind `h` down (`uninit_instance` with
    /// [`Uninit::Driver`]) if it is up.
    pub(crate) fn detach(&mut self, h: HandleRef) {
        ClientAdapter::<C>::detach_inited(self, Self::handle(h), Uninit::Driver);
    }
}

/// How long the hardware gets before the instance is torn down for a
/// reset, in milliseconds (`HNS_ROCE_V2_HW_RST_UNINT_DELAY`).
const RST_UNINIT_DELAY_MS: i64 = 100;

/// Routes the shim's client callbacks to `C` (the `hnae3_shim_client_ops` of
/// the driver).
struct ClientAdapter<C>(PhantomData<fn() -> C>);

impl<C: RoceClient> ClientAdapter<C> {
    /// The callback table handed to the shim.
    const OPS: raw::hnae3_shim_client_ops = raw::hnae3_shim_client_ops {
        init_instance: Some(Self::init_instance),
        uninit_instance: Some(Self::uninit_instance),
        link_status_change: Some(Self::link_status_change),
        reset_notify: Some(Self::reset_notify),
        module_coming: Some(Self::module_coming),
    };

    /// [`Self::OPS`] as a static reference.
    const fn ops() -> &'static raw::hnae3_shim_client_ops {
        &Self::OPS
    }

    /// The state of the function behind `h`, if the driver attached to it.
    ///
    /// `priv` of a handle of this client is only written by
    /// [`Self::attach`] and [`Self::detach`], so it holds null or a
    /// `KBox<C::Instance>` handed over with `into_foreign`. Both run under
    /// the client lock and write `priv` under the priv lock; every caller
    /// of this holds one of the two: `detach` cannot take the box back
    /// while the borrow lives.
    fn instance(h: &Hnae3Handle) -> Option<&C::Instance> {
        // SAFETY: null or a live box from `into_foreign`, not taken back
        // while `h` is borrowed (see above).
        unsafe { try_borrow::<KBox<C::Instance>>(h.priv_ptr()) }
    }

    /// Builds the driver's state of a function and keeps it in `priv`.
    fn attach(client: ClientRef<'_, C>, h: &Hnae3Handle, reset: bool) -> c_int {
        match C::init_instance(client, h, reset) {
            Ok(inst) => {
                let p = inst.map_or(core::ptr::null_mut(), KBox::into_foreign);
                let _g = client.priv_lock.lock();
                h.replace_priv(p);
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// Brings a function up outside a reset, as `hns_roce_hw_v2_init_instance`
    /// does: refused with `EBUSY` while the NIC reports a reset (before
    /// starting, or when a failure may have come from one), with
    /// `rinfo.instance_state` INIT while it runs and INITED once attached.
    /// A declined function stays INIT, as in C.
    fn init_checked(client: ClientRef<'_, C>, h: &Hnae3Handle) -> c_int {
        let rst = h.reset_info();
        h.set_instance_state(InstanceState::Init);
        let busy = || {
            hdev_err!(
                h.device(),
                "Device is busy in resetting state.\nplease retry later.\n"
            );
            EBUSY.to_errno()
        };
        if rst.sw_resetting() || rst.hw_resetting() {
            h.set_instance_state(InstanceState::NonInit);
            return busy();
        }
        let ret = Self::attach(client, h, false);
        if ret != 0 {
            h.set_instance_state(InstanceState::NonInit);
            if rst.sw_resetting() || rst.hw_resetting() {
                return busy();
            }
            return ret;
        }
        if Self::instance(h).is_some() {
            h.set_instance_state(InstanceState::Inited);
        }
        0
    }

    /// Takes an attached function down (`how` is not [`Uninit::Reset`]),
    /// with `rinfo.instance_state` UNINIT (BOND_UNINIT when the driver
    /// does it) while it runs and NON_INIT after; a function not attached
    /// is left alone.
    fn detach_inited(cl: &mut Clients<'_, C>, h: &Hnae3Handle, how: Uninit) {
        if !h.is_inited() {
            return;
        }
        h.set_instance_state(if how == Uninit::Driver {
            InstanceState::BondUninit
        } else {
            InstanceState::Uninit
        });
        Self::detach(cl, h, how);
        h.set_instance_state(InstanceState::NonInit);
    }

    /// Takes the driver's state of a function out of `priv` and tears it
    /// down.
    #[inline(never)]
    fn detach(cl: &mut Clients<'_, C>, h: &Hnae3Handle, how: Uninit) {
        let p = {
            let _g = cl.client.priv_lock.lock();
            h.replace_priv(core::ptr::null_mut())
        };
        if p.is_null() {
            return;
        }
        // SAFETY: `p` came from `into_foreign` in `attach` (the only writer
        // of a non-null `priv`, see `instance`) and was just detached from
        // the handle, so this is its only owner.
        let inst = unsafe { KBox::<C::Instance>::from_foreign(p) };
        let client = cl.client;
        client.drv.uninit_instance(cl, h, inst, how);
    }

    /// The [`Client`] behind the shim's `ctx`.
    ///
    /// # Safety
    ///
    /// `ctx` is the one a [`ClientRegistration<C>`] registered, and the
    /// client is registered for the returned borrow's lifetime.
    unsafe fn client<'a>(ctx: *const c_void) -> ClientRef<'a, C> {
        // SAFETY: `ctx` is `Arc::as_ptr` of the registration's `Arc`, which
        // the registration holds until the client is unregistered (per the
        // function's contract); no `UniqueArc` of it exists.
        unsafe { ArcBorrow::from_raw(ctx.cast::<Client<C>>()) }
    }

    /// The shim's `init_instance`.
    ///
    /// # Safety
    ///
    /// Called by the hnae3 core with a valid handle whose `pdev` is bound,
    /// through the shim with the `ctx` of the registration, while the
    /// client is registered.
    unsafe extern "C" fn init_instance(
        ctx: *const c_void,
        handle: *mut raw::hnae3_handle,
    ) -> c_int {
        // SAFETY: guaranteed by the caller (see above).
        let (client, h) = unsafe { (Self::client(ctx), Hnae3Handle::from_raw(handle)) };
        Clients::with(client, |_| Self::init_checked(client, h))
    }

    /// The shim's `uninit_instance`.
    ///
    /// # Safety
    ///
    /// As for [`Self::init_instance`].
    unsafe extern "C" fn uninit_instance(
        ctx: *const c_void,
        handle: *mut raw::hnae3_handle,
        reset: bool,
    ) {
        // SAFETY: guaranteed by the caller.
        let (client, h) = unsafe { (Self::client(ctx), Hnae3Handle::from_raw(handle)) };
        client.drv.suspend(h);
        Clients::with(client, |cl| {
            Self::detach_inited(cl, h, Uninit::Remove { reset });
            client.drv.removed(h);
        });
        client.drv.resume(h);
    }

    /// The shim's `link_status_change`.
    ///
    /// # Safety
    ///
    /// As for [`Self::init_instance`].
    unsafe extern "C" fn link_status_change(
        ctx: *const c_void,
        handle: *mut raw::hnae3_handle,
        up: bool,
    ) {
        // SAFETY: guaranteed by the caller.
        let (client, h) = unsafe { (Self::client(ctx), Hnae3Handle::from_raw(handle)) };
        let _g = client.priv_lock.lock();
        client.drv.link_status_change(h, Self::instance(h), up);
    }

    /// The shim's `module_coming`: [`RoceClient::module_coming`].
    ///
    /// # Safety
    ///
    /// `name` is a NUL-terminated string valid for the call (the starting
    /// module's name, from the module notifier); `ctx` is as for
    /// [`Self::init_instance`].
    unsafe extern "C" fn module_coming(ctx: *const c_void, name: *const c_char) -> c_int {
        // SAFETY: per the function's contract.
        let (client, name) = unsafe { (Self::client(ctx), CStr::from_char_ptr(name)) };
        match client.drv.module_coming(name) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// The shim's `reset_notify`, with the enum passed as an integer: the
    /// reset sequence of `hns_roce_hw_v2_reset_notify`. A function the
    /// driver was not attached to when the reset began (`rinfo.instance_state`
    /// not INITED) is marked (the "direct return" bit of `rinfo.state`) and
    /// its later steps do nothing.
    ///
    /// # Safety
    ///
    /// As for [`Self::init_instance`].
    unsafe extern "C" fn reset_notify(
        ctx: *const c_void,
        handle: *mut raw::hnae3_handle,
        what: c_int,
    ) -> c_int {
        // SAFETY: guaranteed by the caller.
        let (client, h) = unsafe { (Self::client(ctx), Hnae3Handle::from_raw(handle)) };
        match ResetNotify::from_raw(what) {
            ResetNotify::Down => {
                client.drv.suspend(h);
                Clients::with(client, |_| {
                    // Whether the client is attached is what
                    // `rinfo.instance_state` says, not whether `priv` holds
                    // an instance: after a reset whose rebuild failed
                    // between the UNINIT and INIT steps the state is still
                    // INITED with no instance, and the next reset must
                    // re-init the function.
                    let direct = !h.is_inited();
                    // SAFETY: a valid handle; `rinfo.state` is the client's.
                    unsafe { raw::hnae3_shim_rst_direct_set(handle, direct) };
                    if direct {
                        return;
                    }
                    h.set_reset_stage(ResetStage::Down);
                    if let Some(i) = Self::instance(h) {
                        client.drv.reset_down(h, i);
                    }
                });
                0
            }
            ResetNotify::Uninit => {
                // SAFETY: a valid handle; `rinfo.state` is the client's.
                if unsafe { raw::hnae3_shim_rst_direct_test(handle) } {
                    return 0;
                }
                h.set_reset_stage(ResetStage::Uninit);
                hdev_info!(h.device(), "In reset process RoCE client uninit.\n");
                kernel::time::delay::fsleep(kernel::time::Delta::from_millis(RST_UNINIT_DELAY_MS));
                Clients::with(client, |cl| Self::detach(cl, h, Uninit::Reset));
                0
            }
            ResetNotify::Init => {
                // SAFETY: a valid handle; `rinfo.state` is the client's.
                if unsafe { raw::hnae3_shim_rst_direct_test_and_clear(handle) } {
                    h.set_reset_stage(ResetStage::Inited);
                    client.drv.resume(h);
                    return 0;
                }
                h.set_reset_stage(ResetStage::Init);
                hdev_info!(h.device(), "In reset process RoCE client reinit.\n");
                // `priv` is null since the UNINIT step.
                let ret = Clients::with(client, |_| Self::attach(client, h, true));
                if ret != 0 {
                    hdev_err!(h.device(), "In reset process RoCE reinit failed {}.\n", ret);
                } else {
                    h.set_reset_stage(ResetStage::Inited);
                    hdev_info!(h.device(), "reset done, RoCE client reinit finished.\n");
                }
                client.drv.resume(h);
                ret
            }
            ResetNotify::Up | ResetNotify::Other(_) => 0,
        }
    }
}

/// The registered hnae3 RoCE client of driver `C`, with the driver's
/// module-wide state; dropping it unregisters, then lets the driver drop
/// what refers back to its state ([`RoceClient::unregistered`]). The shim
/// has one client, so a module holds at most one registration.
///
/// # Invariants
///
/// The shim's client is registered with the hnae3 core, its callbacks
/// routed to `C` with `Arc::as_ptr` of `client` as their context, while
/// this exists.
pub(crate) struct ClientRegistration<C: RoceClient> {
    client: Arc<Client<C>>,
}

impl<C: RoceClient> ClientRegistration<C> {
    /// Builds the driver's state with `drv` and registers the RoCE client.
    /// The hnae3 core calls `init_instance` for every function that already
    /// exists before this returns.
    pub(crate) fn register(drv: impl PinInit<C, Error>) -> Result<Self> {
        let client = Arc::pin_init(
            try_pin_init!(Client {
                client_lock <- new_mutex!(()),
                priv_lock <- new_mutex!(()),
                drv <- drv,
            }? Error),
            GFP_KERNEL,
        )?;
        let ctx = Arc::as_ptr(&client).cast::<c_void>();
        let mut listed = false;
        // SAFETY: the callback table is static; `ctx` stays valid while the
        // client is registered, since `client` is held until `drop`
        // unregisters; the shim's client is registered once here and
        // unregistered in `drop` or below.
        let ret =
            unsafe { raw::hnae3_shim_register_client(ClientAdapter::<C>::ops(), ctx, &mut listed) };
        // hnae3 keeps one client per type and answers 0 without listing a
        // second one: only a listed client took the functions.
        let ret = match to_result(ret) {
            Ok(()) if !listed => Err(EBUSY),
            r => r,
        };
        if let Err(e) = ret {
            // SAFETY: registered above, but not listed: only the module
            // notifier and the callbacks are to be undone.
            unsafe { raw::hnae3_shim_unwatch_modules() };
            client.drv.unregistered();
            if e == EBUSY {
                pr_err!("another hnae3 RoCE client drives the functions; unload it first\n");
            }
            return Err(e);
        }
        // INVARIANT: registration succeeded with `client` as the context.
        Ok(Self { client })
    }
}

impl<C: RoceClient> Drop for ClientRegistration<C> {
    fn drop(&mut self) {
        // SAFETY: registered by `register` (type invariant); the hnae3 core
        // calls `uninit_instance` for every instance before returning.
        unsafe { raw::hnae3_shim_unregister_client() };
        // SAFETY: the client is gone from hnae3's list; the module notifier
        // registered with it goes now.
        unsafe { raw::hnae3_shim_unwatch_modules() };
        self.client.drv.unregistered();
    }
}

/// The PCI function's device, bound, kept by the per-function state for DMA
/// allocations made in verbs, where no hnae3 callback is under way to prove
/// it bound.
///
/// It is made only from a `&Device<Bound>` (in practice
/// [`Hnae3Handle::bound_device`], so inside a hnae3 client callback): it
/// cannot be made for a device that is not bound at that time. It is
/// neither `Clone` nor `Copy`, and [`BoundDevice::get`] lends the bound
/// device for no longer than the holder is borrowed.
///
/// # Invariants
///
/// The device was bound when this was made, and stays bound while this
/// exists: every holder is part of the per-function state, which the
/// driver drops in `uninit_instance`, and the hnae3 core calls that before
/// it unbinds the function.
pub(crate) struct BoundDevice(ARef<Device>);

impl BoundDevice {
    /// Keeps `dev`, which the caller proves bound now.
    pub(crate) fn new(dev: &Device<Bound>) -> Self {
        let d: &Device = dev;
        // INVARIANT: bound now (the argument's type); the holder is dropped
        // in `uninit_instance` (see above).
        Self(d.into())
    }

    /// The bound device, for as long as `self` is borrowed.
    pub(crate) fn get(&self) -> &Device<Bound> {
        // SAFETY: bound while `self` exists (type invariant), and the
        // result borrows `self`.
        unsafe { self.0.as_bound() }
    }
}

impl<D: Driver> IbRegistration<D> {
    /// Allocates and registers `hns_%d` (`hns_bond_%d` with
    /// [`IbParams::bond`]) for the function behind `h`.
    pub(crate) fn register(h: &Hnae3Handle, drv: Arc<D>, p: &IbParams) -> Result<Self> {
        let netdev = h.netdev();
        if netdev.is_null() {
            return Err(ENODEV);
        }
        let reg = raw::rdma_shim_reg {
            // SAFETY: `pdev` is valid while the handle is (its type
            // invariant).
            parent: unsafe { &raw mut (*h.pdev()).dev }.cast(),
            netdev: netdev.cast(),
            owner: h.as_raw().cast(),
            // The id is kept from rdma-core, which matches libhns by the
            // function's PCI modalias (as C's `hns_roce_dev_ops`).
            driver_id: raw::rdma_driver_id_RDMA_DRIVER_HNS,
            no_driver_id_binding: true,
            bond_cap: p.bond_cap,
            vf: p.vf,
            bond_ab: p.bond.is_some_and(|b| b.1),
            // The upper and the active slave are live (the bond group's).
            bond_active: p.bond.zip(NetDev::from_raw(netdev.cast())).map_or(
                core::ptr::null_mut(),
                |((upper, ab, active), own)| {
                    lag_port_netdev(own, upper, ab, active).as_raw().cast()
                },
            ),
            ..Self::reg_of(p)
        };
        Self::register_reg(drv, &reg).inspect_err(|_| {
            hdev_err!(h.device(), "ib_register_device failed!\n");
        })
    }

    /// Reports the port's state to the RDMA core's event handlers
    /// (`ib_dispatch_port_state_event` on the function's netdev).
    pub(crate) fn port_state_event(&self, h: &Hnae3Handle) {
        // SAFETY: registered (type invariant); the handle is valid, so is
        // its netdev while the function is attached.
        unsafe { raw::ib_dispatch_port_state_event(self.ibdev(), h.netdev().cast()) }
    }
}
