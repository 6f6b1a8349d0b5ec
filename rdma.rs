// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The rdma layer: safe wrappers over the generated bindings and the C shim.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`hnae3.h`](srctree/drivers/net/ethernet/hisilicon/hns3/hnae3.h).
//!
//! This is the only module that touches `bindings::` items or shim functions;
//! the rest of the driver sees safe types. The raw module is private here, so
//! the rule is enforced by visibility.

use core::mem::{offset_of, size_of};
use kernel::{
    device::{Bound, Device},
    error::to_result,
    ffi::{c_int, c_void},
    io::{Mmio, MmioRaw, Region},
    prelude::*,
    str::CString,
    sync::{aref::ARef, Arc},
    types::{ForeignOwnable, Opaque}, //
};

#[path = "bindings/mod.rs"]
mod raw;

// User memory (umem), the handles of user verbs; its bindings calls stay in
// the rdma layer.
mod umem;
pub(crate) use umem::{cond_resched, Umem, UmemDev, UserCtx};
// What `rdma res show` prints of the driver's objects.
mod restrack;
pub(crate) use restrack::{ResAttrs, ResRaw};
mod wr;
pub(crate) use wr::{
    IbCq, IbQp, QpEvent, SendChain, SendWr, WcArray, WrOpcode, SEND_FENCE, SEND_INLINE,
    SEND_SIGNALED, SEND_SOLICITED,
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
    unsafe fn from_raw<'a>(ptr: *mut raw::hnae3_handle) -> &'a Self {
        // SAFETY: `Hnae3Handle` is a transparent wrapper of the C struct and
        // the caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn pdev(&self) -> *mut kernel::bindings::pci_dev {
        // SAFETY: the handle is valid by the type invariant.
        unsafe { (*self.0.get()).pdev }
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

/// Bytes of the register window the driver touches (up to the per-EQ
/// interrupt enable registers at 0x1300c + 4 * n).
pub(crate) const REG_WINDOW: usize = 0x14000;

/// The function's register window (`rinfo.roce_io_base`).
pub(crate) type Regs<'a> = Mmio<'a, Region<REG_WINDOW>>;

impl Hnae3Handle {
    /// The PCI function's `struct device`, bound to the hnae3 ae_dev
    /// driver: what DMA allocations are made against.
    pub(crate) fn bound_device(&self) -> &Device<Bound> {
        // SAFETY: by the type invariant the function stays bound for as
        // long as `self` is borrowed.
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
        if base.is_null() {
            return Err(ENODEV);
        }
        // INVARIANT: the window of a bound RoCE function.
        Ok(RegWindow(MmioRaw::new_region(base as usize, REG_WINDOW)?))
    }

    /// The Linux irq number of the function's `i`-th RoCE vector.
    pub(crate) fn irq_vector(&self, i: u32) -> Result<u32> {
        // SAFETY: the handle is valid (type invariant).
        match unsafe { raw::hns_shim_irq_vector(self.0.get(), i) } {
            0 => Err(EINVAL),
            irq => Ok(irq),
        }
    }

    /// Where BAR `bar` of the function starts on the bus.
    pub(crate) fn bar_start(&self, bar: i32) -> u64 {
        // SAFETY: the handle is valid (type invariant).
        unsafe { raw::hns_shim_bar_start(self.0.get(), bar) }
    }

    /// The PCI name of the function (`0000:00:03.0`).
    pub(crate) fn pci_name(&self) -> &CStr {
        self.device().name()
    }
}

impl Hnae3Handle {
    /// The kernel SQ doorbells of a HIP09 function: one 64-bit word per
    /// QPN in the `roce_mem_base` window, `num_qps` of them.
    pub(crate) fn sq_doorbells(&self, num_qps: u32) -> Option<SqDoorbells> {
        // SAFETY: the handle is valid (type invariant); for a RoCE client
        // handle the union holds `rinfo`.
        let base = unsafe {
            (*self.0.get())
                .__bindgen_anon_1
                .rinfo
                .as_ref()
                .roce_mem_base
        };
        if base.is_null() {
            return None;
        }
        let stride = crate::hns_roce_hw_v2::consts::sge::DWQE_SIZE as usize;
        // INVARIANT: the window the hnae3 driver mapped for this function,
        // one stride per QP (the C driver writes there for every QPN).
        Some(SqDoorbells {
            base: base as usize,
            len: (num_qps as usize).checked_mul(stride)?,
        })
    }
}

impl Hnae3Handle {
    /// What the abnormal interrupt needs to ask the ae_dev for a reset.
    pub(crate) fn reset_request(&self) -> ResetRequest {
        let vf = self.pci_ident().device == crate::debugfs::DEV_ID_RDMA_DCB_PFC_VF;
        // INVARIANT: the handle of the function whose interrupts hold it.
        ResetRequest {
            h: self.0.get(),
            vf,
        }
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
        unsafe { raw::hns_shim_request_reset(self.h, self.vf) }
    }
}

/// An ordered workqueue of the driver's own (C's `irq_workq`): the work
/// items it runs are drained when it is destroyed, so none runs after the
/// device is gone.
///
/// # Invariants
///
/// `wq` is null or a workqueue from `hns_shim_alloc_wq` not yet destroyed.
/// [`OwnedQueue::destroy`] is called only when nothing queues work any
/// more (interrupts freed, ib_device unregistered).
pub(crate) struct OwnedQueue {
    wq: core::sync::atomic::AtomicPtr<kernel::bindings::workqueue_struct>,
}

impl OwnedQueue {
    /// Allocates an ordered workqueue named `name`.
    pub(crate) fn new(name: &'static CStr) -> Result<Self> {
        // SAFETY: `name` is a NUL-terminated string for the queue's life.
        let wq = unsafe { raw::hns_shim_alloc_wq(name.as_char_ptr()) };
        if wq.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: freshly allocated.
        Ok(Self {
            wq: core::sync::atomic::AtomicPtr::new(wq),
        })
    }

    /// Runs `f` on the queue (allocation may not sleep).
    pub(crate) fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) -> Result {
        let wq = self.wq.load(core::sync::atomic::Ordering::Acquire);
        if wq.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: a live workqueue (type invariant: not destroyed while
        // anyone queues work).
        let q = unsafe { kernel::workqueue::Queue::from_raw(wq) };
        q.try_spawn(GFP_ATOMIC, f).map_err(|_| ENOMEM)
    }

    /// Drains and destroys the queue (`destroy_workqueue`); later
    /// [`OwnedQueue::spawn`]s fail.
    pub(crate) fn destroy(&self) {
        let wq = self
            .wq
            .swap(core::ptr::null_mut(), core::sync::atomic::Ordering::AcqRel);
        if !wq.is_null() {
            // SAFETY: allocated by `hns_shim_alloc_wq`, destroyed once
            // (the swap above).
            unsafe { raw::hns_shim_destroy_wq(wq) };
        }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// The `roce_mem_base` window of SQ doorbells (`hns_roce_dev.mem_base`).
///
/// # Invariants
///
/// `base..base + len` is mapped I/O memory of the function while its hnae3
/// handle is attached to this client; every holder is dropped in
/// `uninit_instance`.
pub(crate) struct SqDoorbells {
    base: usize,
    len: usize,
}

impl SqDoorbells {
    /// Rings QP `qpn`'s SQ doorbell with `v` (one `writeq`).
    pub(crate) fn write64(&self, v: u64, qpn: u32) {
        let stride = crate::hns_roce_hw_v2::consts::sge::DWQE_SIZE as usize;
        let Some(off) = (qpn as usize).checked_mul(stride) else {
            return;
        };
        if off + 8 > self.len {
            return;
        }
        // SAFETY: `off + 8 <= len`, inside the mapped window (type
        // invariant); 8-aligned because the window and the stride are.
        unsafe { kernel::bindings::writeq(v, (self.base + off) as *mut c_void) };
    }
}

/// The function's register window, kept by the per-function state so that
/// interrupt handlers and verbs can reach the registers.
///
/// # Invariants
///
/// Maps `REG_WINDOW` bytes of the function's BAR. It stays mapped while the
/// hnae3 handle it came from is attached to this client: the driver drops
/// every holder of a window in `uninit_instance`.
#[derive(Clone, Copy)]
pub(crate) struct RegWindow(MmioRaw<Region<REG_WINDOW>>);

impl RegWindow {
    /// The registers.
    pub(crate) fn io(&self) -> Regs<'_> {
        // SAFETY: mapped while `self` exists (type invariant).
        unsafe { Mmio::from_raw(self.0) }
    }

    /// One 64-bit write (`writeq`), as doorbells need: the engine must see
    /// both halves at once. Offsets outside the window or not 8-aligned are
    /// ignored.
    pub(crate) fn write64(&self, v: u64, off: usize) {
        if off % 8 != 0 || off + 8 > REG_WINDOW {
            return;
        }
        // SAFETY: `off + 8 <= REG_WINDOW` and the window is mapped (type
        // invariant); the address is 8-aligned because the BAR mapping is
        // page-aligned and `off` is.
        unsafe { kernel::bindings::writeq(v, (self.0.addr() + off) as *mut c_void) };
    }
}

/// A one-shot event a thread waits on and an interrupt handler signals
/// (`struct completion`).
#[pin_data]
pub(crate) struct Event {
    #[pin]
    inner: Opaque<kernel::bindings::completion>,
}

// SAFETY: a completion is made to be signalled and waited on from any context.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    /// A new, unsignalled event.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Opaque::ffi_init(|slot: *mut kernel::bindings::completion| {
                // SAFETY: `slot` is valid for writing a completion.
                unsafe { kernel::bindings::init_completion(slot) };
            }),
        })
    }

    /// Re-arms the event. Only for the owner of the event, while nobody
    /// waits on it.
    pub(crate) fn reinit(&self) {
        // SAFETY: a valid completion with no waiter (the only waiter is the
        // caller).
        unsafe { kernel::bindings::init_completion(self.inner.get()) };
    }

    /// Signals one waiter.
    pub(crate) fn complete(&self) {
        // SAFETY: a valid completion; `complete` may run in any context.
        unsafe { kernel::bindings::complete(self.inner.get()) };
    }

    /// Waits up to `ms` milliseconds; whether the event came.
    pub(crate) fn wait_ms(&self, ms: u32) -> bool {
        let j = kernel::time::msecs_to_jiffies(ms);
        // SAFETY: a valid completion; we are in process context.
        unsafe { kernel::bindings::wait_for_completion_timeout(self.inner.get(), j) != 0 }
    }
}

/// What an interrupt does.
pub(crate) trait IrqHandler: Send + Sync {
    /// Handles one interrupt; whether it was ours.
    fn handle(&self) -> bool;
}

/// What the shim hands back to [`hns_rs_irq`]: the handler's type-erased
/// entry point and data.
struct IrqCookie {
    call: unsafe fn(*const c_void) -> bool,
    data: *const c_void,
}

/// Calls `T::handle` on `data`.
///
/// # Safety
///
/// `data` must point to a live `T`.
unsafe fn irq_trampoline<T: IrqHandler>(data: *const c_void) -> bool {
    // SAFETY: per the function's contract.
    unsafe { &*data.cast::<T>() }.handle()
}

/// Called by the shim's interrupt handler.
///
/// # Safety
///
/// `cookie` is the cookie an [`IrqRegistration`] passed to
/// `hns_shim_request_irq`; the registration outlives the irq.
#[no_mangle]
unsafe extern "C" fn hns_rs_irq(cookie: *mut c_void) -> bool {
    // SAFETY: per the function's contract the cookie is a live `IrqCookie`.
    let c = unsafe { &*cookie.cast::<IrqCookie>() };
    // SAFETY: the registration keeps `data` alive (an `Arc<T>`).
    unsafe { (c.call)(c.data) }
}

/// A requested interrupt line; dropping it frees the line.
///
/// # Invariants
///
/// `irq` is requested with `cookie` as dev_id, and `cookie.data` is the
/// pointer of `handler`.
pub(crate) struct IrqRegistration<T: IrqHandler> {
    irq: u32,
    cookie: KBox<IrqCookie>,
    _handler: Arc<T>,
    _name: CString,
}

impl<T: IrqHandler> IrqRegistration<T> {
    /// Requests `irq` (named `name` in /proc/interrupts) for `handler`.
    pub(crate) fn new(irq: u32, name: CString, handler: Arc<T>) -> Result<Self> {
        let cookie = KBox::new(
            IrqCookie {
                call: irq_trampoline::<T>,
                data: Arc::as_ptr(&handler).cast(),
            },
            GFP_KERNEL,
        )?;
        let dev_id: *const IrqCookie = &*cookie;
        // SAFETY: `name` and `cookie` live in the registration, which frees
        // the irq before dropping them.
        to_result(unsafe {
            raw::hns_shim_request_irq(irq, name.as_char_ptr(), dev_id.cast_mut().cast())
        })?;
        // INVARIANT: requested with this cookie, which points to `handler`.
        Ok(Self {
            irq,
            cookie,
            _handler: handler,
            _name: name,
        })
    }
}

impl<T: IrqHandler> Drop for IrqRegistration<T> {
    fn drop(&mut self) {
        let dev_id: *const IrqCookie = &*self.cookie;
        // SAFETY: requested with this cookie (type invariant); `free_irq`
        // waits for a running handler to finish.
        unsafe { raw::hns_shim_free_irq(self.irq, dev_id.cast_mut().cast()) };
    }
}

// SAFETY: the cookie only points to the `Arc<T>`'s data, which is `Sync`.
unsafe impl<T: IrqHandler> Send for IrqRegistration<T> {}
// SAFETY: as above.
unsafe impl<T: IrqHandler> Sync for IrqRegistration<T> {}

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
pub(crate) trait RoceClient {
    /// Per-function state.
    type Instance: Send + Sync;
    /// A function appeared: `Ok(None)` declines it (not a RoCE function
    /// this driver handles), `Ok(Some(_))` attaches.
    fn init_instance(handle: &Hnae3Handle) -> Result<Option<KBox<Self::Instance>>>;
    /// The function goes away (`reset` is set when it is being reset).
    fn uninit_instance(handle: &Hnae3Handle, inst: KBox<Self::Instance>, reset: bool);
    /// The port link went up or down.
    fn link_status_change(handle: &Hnae3Handle, inst: Option<&Self::Instance>, up: bool);
    /// The function is about to be reset: stop touching the hardware. The
    /// layer then tears the instance down with `uninit_instance` and builds
    /// a new one with `init_instance` (`hns_roce_hw_v2_reset_notify`).
    fn reset_down(handle: &Hnae3Handle, inst: &Self::Instance);
}

/// How long the hardware gets before the instance is torn down for a
/// reset, in milliseconds (`HNS_ROCE_V2_HW_RST_UNINT_DELAY`).
const RST_UNINIT_DELAY_MS: i64 = 100;

/// The state of the function behind `h`, if we attached to it.
///
/// # Safety
///
/// `h` must be a valid handle of this client. `priv` of such a handle is
/// only written by `hns_rs_init_instance`/`hns_rs_uninit_instance` and then
/// holds null or an [`InstanceBox`] the former handed over with
/// `into_foreign`.
unsafe fn instance<'a>(h: *mut raw::hnae3_handle) -> Option<&'a <Client as RoceClient>::Instance> {
    // SAFETY: per the function's contract.
    let p = unsafe { (*h).priv_ };
    // SAFETY: null or a live box from `into_foreign` (contract); the hnae3
    // core serialises the client callbacks, so uninit cannot take it back
    // with `from_foreign` while borrowed.
    unsafe { try_borrow::<InstanceBox>(p) }
}

/// The state of a function as its handle's `priv` owns it.
type InstanceBox = KBox<<Client as RoceClient>::Instance>;

/// Borrows the object behind a `void *` the shim keeps for us, or `None`
/// for null: [`ForeignOwnable::borrow`] with the null check the upstream
/// trait leaves to callers.
///
/// # Safety
///
/// `p` is null or came from `P::into_foreign`, and `P::from_foreign` is not
/// called on it while the borrow lives (`'a`).
unsafe fn try_borrow<'a, P: ForeignOwnable + 'a>(p: *mut c_void) -> Option<P::Borrowed<'a>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: not null, so from `P::into_foreign` and not taken back
        // during `'a` (the function's contract).
        Some(unsafe { P::borrow(p) })
    }
}

/// The client implementation the shim's callbacks are routed to.
type Client = crate::HnsRoce;

/// Called by the shim's `init_instance`.
///
/// # Safety
///
/// Called by the hnae3 core with a valid handle whose `pdev` is bound.
#[no_mangle]
unsafe extern "C" fn hns_rs_init_instance(handle: *mut raw::hnae3_handle) -> c_int {
    // SAFETY: guaranteed by the hnae3 core (see above).
    let h = unsafe { Hnae3Handle::from_raw(handle) };
    let inst = match Client::init_instance(h) {
        Ok(i) => i,
        Err(e) => return e.to_errno(),
    };
    let p = inst.map_or(core::ptr::null_mut(), InstanceBox::into_foreign);
    // SAFETY: the handle is valid; `priv` belongs to the RoCE client.
    unsafe { (*handle).priv_ = p };
    0
}

/// Called by the shim's `uninit_instance`.
///
/// # Safety
///
/// As for [`hns_rs_init_instance`].
#[no_mangle]
unsafe extern "C" fn hns_rs_uninit_instance(handle: *mut raw::hnae3_handle, reset: bool) {
    // SAFETY: guaranteed by the hnae3 core.
    let h = unsafe { Hnae3Handle::from_raw(handle) };
    // SAFETY: the handle is valid and `priv` is ours (see `instance`).
    let p = unsafe { core::mem::replace(&mut (*handle).priv_, core::ptr::null_mut()) };
    if p.is_null() {
        return;
    }
    // SAFETY: `p` came from `into_foreign` in `hns_rs_init_instance` and
    // was just detached from the handle, so this is its only owner.
    let inst = unsafe { InstanceBox::from_foreign(p) };
    Client::uninit_instance(h, inst, reset);
}

/// Called by the shim's `link_status_change`.
///
/// # Safety
///
/// As for [`hns_rs_init_instance`].
#[no_mangle]
unsafe extern "C" fn hns_rs_link_status_change(handle: *mut raw::hnae3_handle, up: bool) {
    // SAFETY: guaranteed by the hnae3 core.
    let h = unsafe { Hnae3Handle::from_raw(handle) };
    // SAFETY: a valid handle of this client.
    let inst = unsafe { instance(handle) };
    Client::link_status_change(h, inst, up);
}

/// Called by the shim's `reset_notify`, with the enum passed as an integer:
/// the reset sequence of `hns_roce_hw_v2_reset_notify`. A function the
/// driver was not attached to when the reset began is marked (the
/// "direct return" bit of `rinfo.state`) and its later steps do nothing.
///
/// # Safety
///
/// As for [`hns_rs_init_instance`].
#[no_mangle]
unsafe extern "C" fn hns_rs_reset_notify(handle: *mut raw::hnae3_handle, what: c_int) -> c_int {
    // SAFETY: guaranteed by the hnae3 core.
    let h = unsafe { Hnae3Handle::from_raw(handle) };
    match ResetNotify::from_raw(what) {
        ResetNotify::Down => {
            // SAFETY: a valid handle of this client.
            match unsafe { instance(handle) } {
                None => {
                    // SAFETY: a valid handle; `rinfo.state` is the client's.
                    unsafe { raw::hns_shim_rst_direct_set(handle, true) };
                }
                Some(i) => {
                    // SAFETY: as above.
                    unsafe { raw::hns_shim_rst_direct_set(handle, false) };
                    Client::reset_down(h, i);
                }
            }
            0
        }
        ResetNotify::Uninit => {
            // SAFETY: a valid handle; `rinfo.state` is the client's.
            if unsafe { raw::hns_shim_rst_direct_test(handle) } {
                return 0;
            }
            dev_info!(h.device(), "In reset process RoCE client uninit.\n");
            kernel::time::delay::fsleep(kernel::time::Delta::from_millis(RST_UNINIT_DELAY_MS));
            // SAFETY: as for `hns_rs_uninit_instance`.
            unsafe { hns_rs_uninit_instance(handle, false) };
            0
        }
        ResetNotify::Init => {
            // SAFETY: a valid handle; `rinfo.state` is the client's.
            if unsafe { raw::hns_shim_rst_direct_test_and_clear(handle) } {
                return 0;
            }
            dev_info!(h.device(), "In reset process RoCE client reinit.\n");
            // SAFETY: as for `hns_rs_init_instance`; `priv` is null since
            // the UNINIT step.
            let ret = unsafe { hns_rs_init_instance(handle) };
            if ret != 0 {
                dev_err!(h.device(), "In reset process RoCE reinit failed {}.\n", ret);
            } else {
                dev_info!(h.device(), "reset done, RoCE client reinit finished.\n");
            }
            ret
        }
        ResetNotify::Up | ResetNotify::Other(_) => 0,
    }
}

/// Whether a rate-limited message may be printed now (one shared budget,
/// the kernel's default interval and burst).
pub(crate) fn ratelimit() -> bool {
    // SAFETY: no arguments; the shim's state is static.
    unsafe { raw::hns_shim_ratelimit() }
}

/// The registered hnae3 RoCE client; dropping it unregisters.
///
/// # Invariants
///
/// The shim's client is registered with the hnae3 core while this exists.
pub(crate) struct ClientRegistration(());

impl ClientRegistration {
    /// Registers the RoCE client. The hnae3 core calls `init_instance` for
    /// every function that already exists before this returns.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: the shim's client is a static object, registered once here
        // and unregistered in `drop`.
        to_result(unsafe { raw::hns_shim_register_client() })?;
        // INVARIANT: registration succeeded.
        Ok(ClientRegistration(()))
    }
}

impl Drop for ClientRegistration {
    fn drop(&mut self) {
        // SAFETY: registered by `register` (type invariant); the hnae3 core
        // calls `uninit_instance` for every instance before returning.
        unsafe { raw::hns_shim_unregister_client() };
    }
}

/// One size or offset seen by C and by Rust.
struct LayoutItem {
    name: &'static str,
    c: u32,
    rust: usize,
}

/// Compares the shim's (C compiler's) view of the structures this driver
/// dereferences with the generated bindings' view.
///
/// # Errors
///
/// `EINVAL` on any difference, after logging each one: the bindings were
/// generated for another configuration or by a mismatched libclang.
pub(crate) fn check_layout() -> Result {
    let mut l = raw::hns_shim_layout::default();
    // SAFETY: `l` is a valid, writable `hns_shim_layout`.
    unsafe { raw::hns_shim_get_layout(&mut l) };
    use raw::{
        hnae3_client, hnae3_handle, hnae3_roce_private_info as roce_info, ib_cq, ib_device, ib_pd,
        ib_qp, ib_udata,
    };
    let items = [
        LayoutItem {
            name: "sizeof(hnae3_handle)",
            c: l.hnae3_handle_size,
            rust: size_of::<hnae3_handle>(),
        },
        LayoutItem {
            name: "hnae3_handle.pdev",
            c: l.hnae3_handle_pdev,
            rust: offset_of!(hnae3_handle, pdev),
        },
        LayoutItem {
            name: "hnae3_handle.rinfo",
            c: l.hnae3_handle_rinfo,
            rust: offset_of!(hnae3_handle, __bindgen_anon_1.rinfo),
        },
        LayoutItem {
            name: "hnae3_handle.client",
            c: l.hnae3_handle_client,
            rust: offset_of!(hnae3_handle, client),
        },
        LayoutItem {
            name: "sizeof(hnae3_roce_private_info)",
            c: l.hnae3_roce_info_size,
            rust: size_of::<roce_info>(),
        },
        LayoutItem {
            name: "rinfo.netdev",
            c: l.hnae3_roce_info_netdev,
            rust: offset_of!(roce_info, netdev),
        },
        LayoutItem {
            name: "rinfo.roce_io_base",
            c: l.hnae3_roce_info_roce_io_base,
            rust: offset_of!(roce_info, roce_io_base),
        },
        LayoutItem {
            name: "rinfo.roce_mem_base",
            c: l.hnae3_roce_info_roce_mem_base,
            rust: offset_of!(roce_info, roce_mem_base),
        },
        LayoutItem {
            name: "rinfo.base_vector",
            c: l.hnae3_roce_info_base_vector,
            rust: offset_of!(roce_info, base_vector),
        },
        LayoutItem {
            name: "rinfo.num_vectors",
            c: l.hnae3_roce_info_num_vectors,
            rust: offset_of!(roce_info, num_vectors),
        },
        LayoutItem {
            name: "sizeof(hnae3_client)",
            c: l.hnae3_client_size,
            rust: size_of::<hnae3_client>(),
        },
        LayoutItem {
            name: "sizeof(ib_device)",
            c: l.ib_device_size,
            rust: size_of::<ib_device>(),
        },
        LayoutItem {
            name: "ib_device.dev",
            c: l.ib_device_dev,
            rust: offset_of!(ib_device, __bindgen_anon_1.dev),
        },
        LayoutItem {
            name: "ib_device.ops",
            c: l.ib_device_ops,
            rust: offset_of!(ib_device, ops),
        },
        LayoutItem {
            name: "sizeof(ib_udata)",
            c: l.ib_udata_size,
            rust: size_of::<ib_udata>(),
        },
        LayoutItem {
            name: "sizeof(ib_pd)",
            c: l.ib_pd_size,
            rust: size_of::<ib_pd>(),
        },
        LayoutItem {
            name: "sizeof(ib_cq)",
            c: l.ib_cq_size,
            rust: size_of::<ib_cq>(),
        },
        LayoutItem {
            name: "sizeof(ib_qp)",
            c: l.ib_qp_size,
            rust: size_of::<ib_qp>(),
        },
    ];
    let mut bad = 0;
    for it in &items {
        // CAST: sizes and offsets of these structs fit in 32 bits.
        if it.c as usize != it.rust {
            pr_err!(
                "layout mismatch: {} is {} in C, {} in Rust\n",
                it.name,
                it.c,
                it.rust
            );
            bad += 1;
        }
    }
    if bad != 0 {
        pr_err!(
            "{} layout mismatches: bindings do not match this kernel; refusing to load\n",
            bad
        );
        return Err(EINVAL);
    }
    Ok(())
}

// --- ib_device ---------------------------------------------------------------

/// What `query_device` reports (plain data, filled by the driver).
pub(crate) type DevAttr = raw::hns_shim_dev_attr;
/// The static part of `query_port` (plain data, filled by the driver).
pub(crate) type PortAttr = raw::hns_shim_port_attr;
/// The answer of `alloc_ucontext` (plain data, filled by the driver).
pub(crate) type UctxResp = raw::hns_shim_uctx_resp;

/// What `create_ah` was asked for (plain data, read by the shim).
pub(crate) type AhIn = raw::hns_shim_ah_in;
/// The software address vector of an AH (plain data, filled by the driver).
pub(crate) type AddrVec = raw::hns_shim_av;

/// GID types as the GMV table encodes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SgidType {
    /// RoCE v1.
    V1 = 0,
    /// RoCE v2 over IPv4.
    V2Ipv4 = 1,
    /// RoCE v2 over IPv6.
    V2Ipv6 = 2,
}

/// One GID table entry being added.
pub(crate) struct GidEntry<'a> {
    /// The GID.
    pub(crate) gid: &'a [u8; 16],
    /// Its type.
    pub(crate) ty: SgidType,
    /// VLAN id, 0xffff without VLAN.
    pub(crate) vlan_id: u16,
    /// Source MAC.
    pub(crate) mac: &'a [u8; 6],
}

/// The verbs of an RDMA device, as the rdma layer calls them.
pub(crate) trait IbDriver: Send + Sync {
    /// The driver's state of a user context.
    type Ucontext: Send + Sync;
    /// A completion queue.
    type Cq: Send + Sync;
    /// A CQ of at least `cqe` entries on `vector` for the `ib_cq` `ibcq`:
    /// a kernel CQ, or with `user` a CQ whose buffer and record live in the
    /// calling process (the request as the shim copied it). Returns the CQ
    /// and what the core and libhns are told.
    fn create_cq(
        &self,
        cqe: u32,
        vector: u32,
        ibcq: IbCq,
        user: Option<(UserCtx<'_, Self::Ucontext>, &CqUreq)>,
    ) -> Result<(KBox<Self::Cq>, CqOut)>;
    /// Destroys a CQ.
    fn destroy_cq(&self, cq: KBox<Self::Cq>);
    /// Polls completions into `wc`; how many.
    fn poll_cq(&self, cq: &Self::Cq, wc: &mut WcArray<'_>) -> usize;
    /// Arms the CQ for the next (or next solicited) completion; `true`
    /// if completions may have been missed and `report_missed` asked.
    fn req_notify_cq(&self, cq: &Self::Cq, solicited: bool, report_missed: bool) -> bool;
    /// Fills the device attributes.
    fn query_device(&self, a: &mut DevAttr);
    /// Fills the static port attributes of `port` (1-based).
    fn query_port(&self, port: u32, a: &mut PortAttr);
    /// The firmware version word.
    fn fw_ver(&self) -> u64;
    /// Writes GID `index` (`None`: clears it).
    fn set_gid(&self, index: u32, entry: Option<GidEntry<'_>>) -> Result;
    /// A user context: the answer to libhns, and `(state, uar index,
    /// doorbell page bus address)`.
    fn alloc_ucontext(
        &self,
        config: u32,
        resp: &mut UctxResp,
    ) -> Result<(KBox<Self::Ucontext>, u32, u64)>;
    /// Frees what `alloc_ucontext` took.
    fn dealloc_ucontext(&self, uctx: KBox<Self::Ucontext>);
    /// A protection domain number.
    fn alloc_pd(&self) -> Result<u32>;
    /// Frees a PD number.
    fn dealloc_pd(&self, pdn: u32);
    /// An XRC domain number.
    fn alloc_xrcd(&self) -> Result<u32>;
    /// Frees an XRCD number.
    fn dealloc_xrcd(&self, xrcdn: u32);
    /// Reads the port counters into `values`; how many were read.
    fn query_counters(&self, values: &mut [u64]) -> Result<usize>;
    /// Fills the address vector of a new AH.
    fn create_ah(&self, req: &AhIn, av: &mut AddrVec) -> Result;
    /// A memory region.
    type Mr: Send + Sync;
    /// A DMA MR on PD `pdn` with `access` (`IB_ACCESS_*`); and its key.
    fn get_dma_mr(&self, pdn: u32, access: u32) -> Result<(Pin<KBox<Self::Mr>>, u32)>;
    /// A user MR as `req` says (`flags` unused); and its key.
    fn reg_user_mr(&self, dev: UmemDev<'_>, req: &MrReq) -> Result<(Pin<KBox<Self::Mr>>, u32)>;
    /// Re-registers a user MR in place as `req` says.
    fn rereg_user_mr(&self, mr: &Self::Mr, dev: UmemDev<'_>, req: &MrReq) -> Result;
    /// Deregisters an MR.
    fn dereg_mr(&self, mr: Pin<KBox<Self::Mr>>);
    /// A queue pair.
    type Qp: Send + Sync;
    /// A QP on the given CQs: a kernel QP, or with `user` (and
    /// `init.user`) one whose queues live in the calling process; its
    /// number. `init`'s capacities are updated to what the QP got, and
    /// for a user QP `init.cap_flags` to what libhns is told.
    fn create_qp(
        &self,
        init: &mut QpInit,
        send_cq: Option<&Self::Cq>,
        recv_cq: Option<&Self::Cq>,
        ibqp: IbQp,
        user: Option<UserCtx<'_, Self::Ucontext>>,
    ) -> Result<(Pin<KBox<Self::Qp>>, u32)>;
    /// Applies a modify; fills what a user modify answers.
    fn modify_qp(&self, qp: &Self::Qp, attr: &QpAttr, resp: &mut QpModifyResp) -> Result;
    /// Destroys a QP.
    fn destroy_qp(&self, qp: Pin<KBox<Self::Qp>>);
    /// Fills what `query_qp` answers.
    fn query_qp(&self, qp: &Self::Qp, q: &mut QpQuery) -> Result;
    /// Posts receive WRs; on failure the index of the first one not posted.
    fn post_recv(
        &self,
        qp: &Self::Qp,
        wrs: &mut dyn Iterator<Item = RecvWr<'_>>,
    ) -> core::result::Result<(), (usize, Error)>;
    /// Whether the QP is UD-like (its send WRs are `ib_ud_wr`s).
    fn qp_is_ud(&self, qp: &Self::Qp) -> bool;
    /// Posts send WRs; on failure the index of the first one not posted.
    fn post_send(
        &self,
        qp: &Self::Qp,
        wrs: &mut dyn Iterator<Item = SendWr<'_>>,
    ) -> core::result::Result<(), (usize, Error)>;
    /// The device is going through a reset (drains cannot post).
    fn reset_down(&self) -> bool;
    /// Changes a CQ's moderation: an event after `count` completions or
    /// `period` microseconds.
    fn modify_cq(&self, cq: &Self::Cq, count: u16, period: u16) -> Result;
    /// The driver details of a CQ for `rdma res show cq -dd`.
    fn res_cq(&self, cq: &Self::Cq, r: &mut ResAttrs) -> Result;
    /// The raw image of a CQ (its context read back) for `-r`.
    fn res_cq_raw(&self, cq: &Self::Cq, r: &mut ResRaw<'_>) -> Result;
    /// The driver details of a QP for `rdma res show qp -dd`.
    fn res_qp(&self, qp: &Self::Qp, r: &mut ResAttrs) -> Result;
    /// The raw image of a QP for `-r`.
    fn res_qp_raw(&self, qp: &Self::Qp, r: &mut ResRaw<'_>) -> Result;
    /// The driver details of an MR for `rdma res show mr -dd`.
    fn res_mr(&self, mr: &Self::Mr, r: &mut ResAttrs) -> Result;
    /// The raw image of an MR for `-r`.
    fn res_mr_raw(&self, mr: &Self::Mr, r: &mut ResRaw<'_>) -> Result;
}

/// A user CQ request (`struct hns_roce_ib_create_cq`) as the shim copied
/// it, with the result of the copy and the udata lengths.
pub(crate) type CqUreq = raw::hns_shim_cq_ureq;

/// What a new CQ tells the core and libhns.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CqOut {
    /// Entries (a power of two); the core's `cqe` is one less.
    pub(crate) depth: u32,
    /// The CQ number (`hns_roce_ib_create_cq_resp.cqn`).
    pub(crate) cqn: u32,
    /// `HNS_ROCE_CQ_FLAG_*` for the response.
    pub(crate) cap_flags: u64,
}

/// A user MR registration or re-registration, flattened by the shim:
/// `flags` (`IB_MR_REREG_*`, re-registration only), `pdn` (registration,
/// or re-registration with `IB_MR_REREG_PD`), user address `start`,
/// `length` bytes, I/O address `iova`, `access` (`IB_ACCESS_*`).
pub(crate) type MrReq = raw::hns_shim_mr_req;

/// `IB_MR_REREG_TRANS`.
pub(crate) const MR_REREG_TRANS: u32 = raw::ib_mr_rereg_flags_IB_MR_REREG_TRANS;
/// `IB_MR_REREG_PD`.
pub(crate) const MR_REREG_PD: u32 = raw::ib_mr_rereg_flags_IB_MR_REREG_PD;
/// `IB_MR_REREG_ACCESS`.
pub(crate) const MR_REREG_ACCESS: u32 = raw::ib_mr_rereg_flags_IB_MR_REREG_ACCESS;

/// A kernel QP request (`struct ib_qp_init_attr`, flattened by the shim).
pub(crate) type QpInit = raw::hns_shim_qp_init;
/// The attributes of a modify (`struct ib_qp_attr`, flattened by the shim).
pub(crate) type QpAttr = raw::hns_shim_qp_attr;
/// What a user modify answers (plain data, filled by the driver).
pub(crate) type QpModifyResp = raw::hns_shim_qp_modify_resp;
/// What `query_qp` answers (plain data, filled by the driver).
pub(crate) type QpQuery = raw::hns_shim_qp_query;

/// One scatter/gather element of a work request (`struct ib_sge`).
#[repr(transparent)]
pub(crate) struct Sge(raw::ib_sge);

impl Sge {
    /// Address.
    pub(crate) fn addr(&self) -> u64 {
        self.0.addr
    }
    /// Length in bytes.
    pub(crate) fn length(&self) -> u32 {
        self.0.length
    }
    /// Local key.
    pub(crate) fn lkey(&self) -> u32 {
        self.0.lkey
    }
}

/// One receive work request.
pub(crate) struct RecvWr<'a> {
    /// The caller's id (or its `ib_cqe` pointer), returned in the
    /// completion.
    pub(crate) wr_id: u64,
    /// Its scatter list.
    pub(crate) sges: &'a [Sge],
}

/// Walks a chain of `struct ib_recv_wr`.
///
/// # Invariants
///
/// `cur` is null or points to a valid `ib_recv_wr` whose `next` chain and
/// SGE arrays stay valid and unchanged for `'a`.
struct RecvChain<'a> {
    cur: *const raw::ib_recv_wr,
    _p: core::marker::PhantomData<&'a raw::ib_recv_wr>,
}

impl<'a> Iterator for RecvChain<'a> {
    type Item = RecvWr<'a>;

    fn next(&mut self) -> Option<RecvWr<'a>> {
        if self.cur.is_null() {
            return None;
        }
        // SAFETY: non-null, hence valid for `'a` (type invariant).
        let wr = unsafe { &*self.cur };
        // SAFETY: both union members are 8 bytes; C reads `wr_id` too.
        let wr_id = unsafe { *wr.__bindgen_anon_1.wr_id.as_ref() };
        // CAST: a negative count is treated as none.
        let n = wr.num_sge.max(0) as usize;
        let sges = if n == 0 || wr.sg_list.is_null() {
            &[][..]
        } else {
            // SAFETY: the caller's `sg_list` holds `num_sge` elements, valid
            // for `'a`; `Sge` is a transparent wrapper of `ib_sge`.
            unsafe { core::slice::from_raw_parts(wr.sg_list.cast::<Sge>(), n) }
        };
        // INVARIANT: `next` is null or the next valid WR of the chain.
        self.cur = wr.next;
        Some(RecvWr { wr_id, sges })
    }
}

/// Whether the RDMA core's QP state rules allow `cur` → `next` with the
/// attribute `mask` on a QP of `qp_type` (`ib_modify_qp_is_ok`).
pub(crate) fn modify_qp_is_ok(cur: u32, next: u32, qp_type: u32, mask: u32) -> bool {
    // SAFETY: a pure function of its arguments; out-of-range values are
    // rejected by it (it checks them against its tables).
    unsafe { raw::ib_modify_qp_is_ok(cur, next, qp_type, mask) }
}

/// The type the ib_device callbacks are routed to.
type Driver = crate::IbDev;

/// The driver state behind an ib_device's `rs` pointer.
///
/// # Safety
///
/// `rs` must be the pointer an [`IbRegistration`] stored, while the
/// registration (which holds the `Arc`) exists: the RDMA core calls the
/// device's ops only between registration and unregistration.
unsafe fn drv<'a>(rs: *mut c_void) -> &'a Driver {
    // SAFETY: per the function's contract.
    unsafe { &*rs.cast::<Driver>() }
}

/// Converts a result to the C convention.
fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The C convention for a result carrying a number: store it in `out` and
/// return 0, or return the errno.
///
/// # Safety
///
/// `out` must be valid for writing.
unsafe fn errno_out(r: Result<u32>, out: *mut u32) -> c_int {
    match r {
        Ok(v) => {
            // SAFETY: valid for writing (the caller's contract).
            unsafe { *out = v };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_query_device(rs: *mut c_void, a: *mut DevAttr) {
    // SAFETY: called by the shim's op with the device's `rs` and a valid,
    // exclusive attribute struct.
    unsafe { drv(rs).query_device(&mut *a) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_query_port(rs: *mut c_void, port: u32, a: *mut PortAttr) {
    // SAFETY: as above.
    unsafe { drv(rs).query_port(port, &mut *a) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_fw_ver(rs: *mut c_void, v: *mut u64) {
    // SAFETY: as above; `v` is valid for writing.
    unsafe { *v = drv(rs).fw_ver() }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_set_gid(
    rs: *mut c_void,
    index: u32,
    gid: *const u8,
    sgid_type: u32,
    vlan_id: u16,
    mac: *const u8,
) -> c_int {
    // SAFETY: as above.
    let d = unsafe { drv(rs) };
    let ty = match sgid_type {
        1 => SgidType::V2Ipv4,
        2 => SgidType::V2Ipv6,
        _ => SgidType::V1,
    };
    let entry = if gid.is_null() {
        None
    } else {
        // SAFETY: the shim passes a 16-byte GID and a 6-byte MAC that
        // live for the call.
        let (gid, mac) = unsafe { (&*gid.cast::<[u8; 16]>(), &*mac.cast::<[u8; 6]>()) };
        Some(GidEntry {
            gid,
            ty,
            vlan_id,
            mac,
        })
    };
    errno(d.set_gid(index, entry))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_alloc_ucontext(
    rs: *mut c_void,
    config: u32,
    uar: *mut u32,
    addr: *mut u64,
    resp: *mut UctxResp,
    uctx: *mut *mut c_void,
) -> c_int {
    // SAFETY: as above; the out pointers are valid for writing.
    let (d, resp) = unsafe { (drv(rs), &mut *resp) };
    match d.alloc_ucontext(config, resp) {
        Ok((b, u, a)) => {
            // SAFETY: valid for writing (see above); the box is taken back
            // with `from_foreign` in `hns_rs_dealloc_ucontext`.
            unsafe {
                *uctx = UctxBox::into_foreign(b);
                *uar = u;
                *addr = a;
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_dealloc_ucontext(rs: *mut c_void, uctx: *mut c_void) {
    // SAFETY: the pointer owns the box `hns_rs_alloc_ucontext` handed over
    // with `into_foreign`; the core calls this once, after every object of
    // the context is gone.
    let b = unsafe { UctxBox::from_foreign(uctx) };
    // SAFETY: as above.
    unsafe { drv(rs) }.dealloc_ucontext(b)
}

/// The driver's user-context state behind the shim's `rs_uctx`.
type DriverUctx = <Driver as IbDriver>::Ucontext;
/// How a user context is owned while the shim holds it.
type UctxBox = KBox<DriverUctx>;

/// The view of a user verb's caller: the device and the user context.
///
/// # Safety
///
/// `ibdev` is the registered device the verb runs on, `uctx` null or a
/// context from [`hns_rs_alloc_ucontext`] that outlives `'a`, and the
/// caller runs a uverbs command of the context's process.
unsafe fn user_ctx<'a>(
    ibdev: *mut raw::ib_device,
    uctx: *mut c_void,
) -> Option<UserCtx<'a, DriverUctx>> {
    // SAFETY: per the function's contract.
    let dev = unsafe { UmemDev::from_raw(ibdev) }?;
    // SAFETY: per the function's contract (null, or from `into_foreign` in
    // `hns_rs_alloc_ucontext` and not taken back during `'a`).
    let u = unsafe { try_borrow::<UctxBox>(uctx) }?;
    Some(UserCtx::new(dev, u))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_alloc_pd(rs: *mut c_void, pdn: *mut u32) -> c_int {
    // SAFETY: per the function's contract.
    unsafe { errno_out(drv(rs).alloc_pd(), pdn) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_dealloc_pd(rs: *mut c_void, pdn: u32) {
    // SAFETY: as above.
    unsafe { drv(rs).dealloc_pd(pdn) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_alloc_xrcd(rs: *mut c_void, x: *mut u32) -> c_int {
    // SAFETY: per the function's contract.
    unsafe { errno_out(drv(rs).alloc_xrcd(), x) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_dealloc_xrcd(rs: *mut c_void, x: u32) {
    // SAFETY: as above.
    unsafe { drv(rs).dealloc_xrcd(x) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); pointer arguments are valid
/// for the call as the RDMA core passes them.
#[no_mangle]
unsafe extern "C" fn hns_rs_query_counters(rs: *mut c_void, v: *mut u64, n: u32) -> c_int {
    // SAFETY: the shim passes the stats' value array of `n` entries.
    let vals = unsafe { core::slice::from_raw_parts_mut(v, n as usize) };
    // SAFETY: as above.
    match unsafe { drv(rs) }.query_counters(vals) {
        // CAST: at most `n` counters.
        Ok(k) => k as c_int,
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `req` and `av` are valid for
/// the call.
#[no_mangle]
unsafe extern "C" fn hns_rs_create_ah(
    rs: *mut c_void,
    req: *const AhIn,
    av: *mut AddrVec,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, req, av) = unsafe { (drv(rs), &*req, &mut *av) };
    errno(d.create_ah(req, av))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `mr` and `key` are valid
/// for writing.
#[no_mangle]
unsafe extern "C" fn hns_rs_get_dma_mr(
    rs: *mut c_void,
    pdn: u32,
    access: u32,
    mr: *mut *mut c_void,
    key: *mut u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let r = unsafe { drv(rs) }.get_dma_mr(pdn, access);
    // SAFETY: `mr` and `key` are valid for writing.
    unsafe { mr_out(r, mr, key) }
}

/// The MRs behind the shim's `rs_mr` pointers.
type DriverMr = <Driver as IbDriver>::Mr;
/// How an MR is owned while the shim holds it.
type MrBox = Pin<KBox<DriverMr>>;

/// Stores a new MR and its key for the shim, or returns the errno.
///
/// # Safety
///
/// `mr` and `key` are valid for writing.
unsafe fn mr_out(r: Result<(MrBox, u32)>, mr: *mut *mut c_void, key: *mut u32) -> c_int {
    match r {
        Ok((b, k)) => {
            // The pinned box is taken back with `from_foreign` in
            // `hns_rs_dereg_mr`.
            let raw = b.into_foreign();
            // SAFETY: valid for writing (the function's contract).
            unsafe {
                *mr = raw;
                *key = k;
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer, `ibdev` its registered device, called in
/// the uverbs command of the process whose memory is registered; `req` is
/// valid for the call; `mr` and `key` are valid for writing.
#[no_mangle]
unsafe extern "C" fn hns_rs_reg_user_mr(
    rs: *mut c_void,
    ibdev: *mut raw::ib_device,
    req: *const MrReq,
    mr: *mut *mut c_void,
    key: *mut u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let Some(dev) = (unsafe { UmemDev::from_raw(ibdev) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    let r = unsafe { drv(rs).reg_user_mr(dev, &*req) };
    // SAFETY: `mr` and `key` are valid for writing.
    unsafe { mr_out(r, mr, key) }
}

/// Called by the shim's op.
///
/// # Safety
///
/// As [`hns_rs_reg_user_mr`]; `mr` came from it and is live, and the core
/// holds the MR exclusively for the re-registration.
#[no_mangle]
unsafe extern "C" fn hns_rs_rereg_user_mr(
    rs: *mut c_void,
    ibdev: *mut raw::ib_device,
    mr: *mut c_void,
    req: *const MrReq,
) -> c_int {
    // SAFETY: per the function's contract.
    let Some(dev) = (unsafe { UmemDev::from_raw(ibdev) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    let (d, mr, req) = unsafe { (drv(rs), MrBox::borrow(mr).get_ref(), &*req) };
    errno(d.rereg_user_mr(mr, dev, req))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `mr` came from an MR
/// callback and is not used after this call.
#[no_mangle]
unsafe extern "C" fn hns_rs_dereg_mr(rs: *mut c_void, mr: *mut c_void) {
    // SAFETY: the pointer owns the pinned box an MR callback handed over
    // with `into_foreign` (`mr_out`).
    let b = unsafe { MrBox::from_foreign(mr) };
    // SAFETY: per the function's contract.
    unsafe { drv(rs) }.dereg_mr(b)
}

/// The Rust CQ of the driver.
type DriverCq = <Driver as IbDriver>::Cq;
/// How a CQ is owned while the shim holds it.
type CqBox = KBox<DriverCq>;

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer (see [`drv`]); `ibcq` is the `ib_cq` being
/// created on the registered device; `args` is valid for reading and
/// writing, `cq` for writing. For a user CQ, `ureq` is the copied request
/// and `uctx` the caller's context from [`hns_rs_alloc_ucontext`], in the
/// uverbs command of its process; for a kernel CQ `ureq` is null.
#[no_mangle]
unsafe extern "C" fn hns_rs_create_cq(
    rs: *mut c_void,
    ibcq: *mut raw::ib_cq,
    uctx: *mut c_void,
    ureq: *const CqUreq,
    args: *mut raw::hns_shim_cq_args,
    cq: *mut *mut c_void,
) -> c_int {
    // SAFETY: valid for reading and writing (the function's contract).
    let args = unsafe { &mut *args };
    // SAFETY: the `ib_cq` being created (the function's contract).
    let ibdev = unsafe { (*ibcq).device };
    // SAFETY: per the function's contract: a user CQ comes with its
    // context and request, a kernel CQ with neither.
    let user = unsafe { ureq.as_ref() }.and_then(|r| {
        // SAFETY: as above.
        unsafe { user_ctx(ibdev, uctx) }.map(|u| (u, r))
    });
    if !ureq.is_null() && user.is_none() {
        return EINVAL.to_errno();
    }
    // SAFETY: the `ib_cq` being created; the driver drops every use of it
    // before `hns_rs_destroy_cq` returns (the CQ table entry goes first).
    let Some(ibcq) = (unsafe { IbCq::new(ibcq) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: per the function's contract.
    match unsafe { drv(rs) }.create_cq(args.cqe, args.vector, ibcq, user) {
        Ok((b, o)) => {
            // SAFETY: valid for writing; the box is taken back with
            // `from_foreign` in `hns_rs_destroy_cq`.
            unsafe { *cq = CqBox::into_foreign(b) };
            args.depth = o.depth;
            args.cqn = o.cqn;
            args.cap_flags = o.cap_flags;
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `cq` came from [`hns_rs_create_cq`] and
/// is not used after this call.
#[no_mangle]
unsafe extern "C" fn hns_rs_destroy_cq(rs: *mut c_void, cq: *mut c_void) {
    // SAFETY: per the function's contract the pointer owns the box
    // `hns_rs_create_cq` handed over with `into_foreign`.
    let b = unsafe { CqBox::from_foreign(cq) };
    // SAFETY: per the function's contract.
    unsafe { drv(rs) }.destroy_cq(b)
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `cq` came from [`hns_rs_create_cq`] and
/// is live; `wc` points to `n` writable entries.
#[no_mangle]
unsafe extern "C" fn hns_rs_poll_cq(
    rs: *mut c_void,
    cq: *mut c_void,
    n: c_int,
    wc: *mut raw::ib_wc,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe { (drv(rs), CqBox::borrow(cq)) };
    if wc.is_null() {
        return 0;
    }
    // CAST: `n` is a small count; negative means none.
    // SAFETY: `n` writable entries at `wc` (the function's contract).
    let mut out = unsafe { WcArray::new(wc, n.max(0) as usize) };
    let got = d.poll_cq(cq, &mut out);
    // CAST: at most `n`.
    got as c_int
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `cq` came from [`hns_rs_create_cq`] and
/// is live.
#[no_mangle]
unsafe extern "C" fn hns_rs_modify_cq(
    rs: *mut c_void,
    cq: *mut c_void,
    count: u16,
    period: u16,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe { (drv(rs), CqBox::borrow(cq)) };
    errno(d.modify_cq(cq, count, period))
}

/// Called by the shim's op.
///
/// # Safety
///
/// As for [`hns_rs_poll_cq`].
#[no_mangle]
unsafe extern "C" fn hns_rs_req_notify_cq(
    rs: *mut c_void,
    cq: *mut c_void,
    solicited: bool,
    report_missed: bool,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, cq) = unsafe { (drv(rs), CqBox::borrow(cq)) };
    c_int::from(d.req_notify_cq(cq, solicited, report_missed))
}

/// The type of the QPs behind the shim's `rs_qp` pointers.
type DriverQp = <Driver as IbDriver>::Qp;
/// How a QP is owned while the shim holds it.
type QpBox = Pin<KBox<DriverQp>>;

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `init`, `qp` and `qpn` are valid for the
/// call; `send_cq`/`recv_cq` are null or CQs from [`hns_rs_create_cq`] that
/// outlive the QP (the RDMA core holds references on them); `ibqp` is the
/// `ib_qp` being created on the registered device. For a user QP
/// (`init.user`), `uctx` is the caller's context from
/// [`hns_rs_alloc_ucontext`], in the uverbs command of its process; for a
/// kernel QP `uctx` is null.
#[no_mangle]
unsafe extern "C" fn hns_rs_create_qp(
    rs: *mut c_void,
    ibqp: *mut raw::ib_qp,
    uctx: *mut c_void,
    init: *mut QpInit,
    send_cq: *mut c_void,
    recv_cq: *mut c_void,
    qp: *mut *mut c_void,
    qpn: *mut u32,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, init) = unsafe { (drv(rs), &mut *init) };
    let user = if init.user {
        // SAFETY: per the function's contract (`ibqp` is the QP being
        // created on the registered device).
        match unsafe { user_ctx((*ibqp).device, uctx) } {
            Some(u) => Some(u),
            None => return EINVAL.to_errno(),
        }
    } else {
        None
    };
    // SAFETY: null or live CQs from `into_foreign` in `hns_rs_create_cq`
    // (the function's contract).
    let (scq, rcq) = unsafe { (try_borrow::<CqBox>(send_cq), try_borrow::<CqBox>(recv_cq)) };
    // SAFETY: the `ib_qp` being created; the driver drops every use of it
    // before `hns_rs_destroy_qp` returns (table entry and flush work go
    // first).
    let Some(ibqp) = (unsafe { IbQp::new(ibqp) }) else {
        return EINVAL.to_errno();
    };
    match d.create_qp(init, scq, rcq, ibqp, user) {
        Ok((b, n)) => {
            // The pinned box is taken back with `from_foreign` in
            // `hns_rs_destroy_qp`.
            let raw = b.into_foreign();
            // SAFETY: valid for writing (the function's contract).
            unsafe {
                *qp = raw;
                *qpn = n;
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `qp` came from [`hns_rs_create_qp`] and is
/// live; `attr` and `resp` are valid for the call.
#[no_mangle]
unsafe extern "C" fn hns_rs_modify_qp(
    rs: *mut c_void,
    qp: *mut c_void,
    attr: *const QpAttr,
    resp: *mut QpModifyResp,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, qp, a, r) = unsafe { (drv(rs), QpBox::borrow(qp).get_ref(), &*attr, &mut *resp) };
    errno(d.modify_qp(qp, a, r))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `qp` came from [`hns_rs_create_qp`] and is
/// live; `q` is valid for the call.
#[no_mangle]
unsafe extern "C" fn hns_rs_query_qp(rs: *mut c_void, qp: *mut c_void, q: *mut QpQuery) -> c_int {
    // SAFETY: per the function's contract.
    let (d, qp, q) = unsafe { (drv(rs), QpBox::borrow(qp).get_ref(), &mut *q) };
    errno(d.query_qp(qp, q))
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `qp` came from [`hns_rs_create_qp`] and is
/// not used after this call.
#[no_mangle]
unsafe extern "C" fn hns_rs_destroy_qp(rs: *mut c_void, qp: *mut c_void) {
    // SAFETY: the pointer owns the pinned box `hns_rs_create_qp` handed over
    // with `into_foreign`.
    let b = unsafe { QpBox::from_foreign(qp) };
    // SAFETY: per the function's contract.
    unsafe { drv(rs) }.destroy_qp(b)
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `qp` is live; `wr` is a valid chain of
/// receive WRs for the call; `bad` is valid for writing.
#[no_mangle]
unsafe extern "C" fn hns_rs_post_recv(
    rs: *mut c_void,
    qp: *mut c_void,
    wr: *const raw::ib_recv_wr,
    bad: *mut *const raw::ib_recv_wr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, q) = unsafe { (drv(rs), QpBox::borrow(qp).get_ref()) };
    // INVARIANT: the caller's chain is valid for the call.
    let mut chain = RecvChain {
        cur: wr,
        _p: core::marker::PhantomData,
    };
    match d.post_recv(q, &mut chain) {
        Ok(()) => 0,
        Err((n, e)) => {
            // SAFETY: the caller's chain is valid; `bad` is writable (the
            // function's contract).
            unsafe { *bad = nth_wr(wr, n) };
            e.to_errno()
        }
    }
}

/// Called by the shim's op.
///
/// # Safety
///
/// `rs` is the device's pointer; `qp` is live; `wr` is a valid chain of
/// send WRs of the QP's type (`ib_ud_wr` for UD and GSI QPs) for the call;
/// `bad` is valid for writing.
#[no_mangle]
unsafe extern "C" fn hns_rs_post_send(
    rs: *mut c_void,
    qp: *mut c_void,
    wr: *const raw::ib_send_wr,
    bad: *mut *const raw::ib_send_wr,
) -> c_int {
    // SAFETY: per the function's contract.
    let (d, q) = unsafe { (drv(rs), QpBox::borrow(qp).get_ref()) };
    // SAFETY: the caller's chain is valid for the call and of the QP's type.
    let mut chain = unsafe { SendChain::new(wr, d.qp_is_ud(q)) };
    match d.post_send(q, &mut chain) {
        Ok(()) => 0,
        Err((n, e)) => {
            // SAFETY: the caller's chain is valid; `bad` is writable (the
            // function's contract).
            unsafe { *bad = nth_wr(wr, n) };
            e.to_errno()
        }
    }
}

/// A work request chain of the RDMA core (`ib_send_wr`, `ib_recv_wr`).
trait WrLink {
    /// The next WR, or null.
    fn next(&self) -> *const Self;
}

impl WrLink for raw::ib_send_wr {
    fn next(&self) -> *const Self {
        self.next
    }
}

impl WrLink for raw::ib_recv_wr {
    fn next(&self) -> *const Self {
        self.next
    }
}

/// The `n`th WR of the chain at `wr` (what a failed post reports as
/// `bad_wr`), or null past its end.
///
/// # Safety
///
/// `wr` is null or a valid chain for the call.
unsafe fn nth_wr<T: WrLink>(wr: *const T, n: usize) -> *const T {
    let mut at = wr;
    for _ in 0..n {
        if at.is_null() {
            break;
        }
        // SAFETY: a non-null element of the valid chain.
        at = unsafe { (*at).next() };
    }
    at
}

/// Called by the shim's drain: whether the device is going through a reset.
///
/// # Safety
///
/// `rs` is the device's pointer.
#[no_mangle]
unsafe extern "C" fn hns_rs_reset_down(rs: *mut c_void) -> bool {
    // SAFETY: per the function's contract.
    unsafe { drv(rs) }.reset_down()
}

/// `IB_ACCESS_LOCAL_WRITE`.
pub(crate) const ACCESS_LOCAL_WRITE: u32 = raw::ib_access_flags_IB_ACCESS_LOCAL_WRITE;
/// `IB_ACCESS_REMOTE_WRITE`.
pub(crate) const ACCESS_REMOTE_WRITE: u32 = raw::ib_access_flags_IB_ACCESS_REMOTE_WRITE;
/// `IB_ACCESS_REMOTE_READ`.
pub(crate) const ACCESS_REMOTE_READ: u32 = raw::ib_access_flags_IB_ACCESS_REMOTE_READ;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub(crate) const ACCESS_REMOTE_ATOMIC: u32 = raw::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC;

/// The PCI function's device, bound, kept by the per-function state for DMA
/// allocations made in verbs.
///
/// # Invariants
///
/// The function stays bound to the hnae3 ae_dev driver while this exists:
/// the driver drops every holder in `uninit_instance`, which the hnae3 core
/// calls before unbinding.
pub(crate) struct BoundDevice(ARef<Device>);

impl BoundDevice {
    /// The device of `h`.
    pub(crate) fn new(h: &Hnae3Handle) -> Self {
        // INVARIANT: bound while the handle is attached (see above).
        Self(h.device().into())
    }

    /// The bound device.
    pub(crate) fn get(&self) -> &Device<Bound> {
        // SAFETY: bound while `self` exists (type invariant).
        unsafe { self.0.as_bound() }
    }
}

/// Options of a registration.
pub(crate) struct IbParams {
    /// Completion vectors.
    pub(crate) num_comp_vectors: u32,
    /// The reserved lkey of local DMA.
    pub(crate) local_dma_lkey: u32,
    /// RoCE v2 (UDP encapsulation) supported.
    pub(crate) udp_encap: bool,
    /// XRC domains supported.
    pub(crate) xrc: bool,
    /// Hardware counters exposed.
    pub(crate) hw_stats: bool,
}

/// A registered ib_device; dropping it unregisters and frees it.
///
/// # Invariants
///
/// `ibdev` was allocated by `hns_shim_alloc_ibdev` with `rs` pointing to
/// `drv`'s data, and is registered.
pub(crate) struct IbRegistration {
    ibdev: *mut raw::ib_device,
    _drv: Arc<Driver>,
}

// SAFETY: the ib_device is only used through the RDMA core's thread-safe
// entry points; the driver state is `Sync`.
unsafe impl Send for IbRegistration {}
// SAFETY: as above.
unsafe impl Sync for IbRegistration {}

impl IbRegistration {
    /// Allocates and registers `hns_%d` for the function behind `h`.
    pub(crate) fn register(h: &Hnae3Handle, drv: Arc<Driver>, p: &IbParams) -> Result<Self> {
        // SAFETY: the handle is valid; for a RoCE client `rinfo` is set.
        let netdev = unsafe { (*h.0.get()).__bindgen_anon_1.rinfo.as_ref().netdev };
        if netdev.is_null() {
            return Err(ENODEV);
        }
        let rs: *const Driver = Arc::as_ptr(&drv);
        // SAFETY: `rs` stays valid while the registration (holding `drv`)
        // exists, and the device is unregistered before it is dropped.
        let ibdev = unsafe { raw::hns_shim_alloc_ibdev(rs.cast_mut().cast()) };
        if ibdev.is_null() {
            return Err(ENOMEM);
        }
        let reg = raw::hns_shim_reg {
            handle: h.0.get(),
            // SAFETY: `pdev` is valid while the handle is (type invariant).
            parent: unsafe { &raw mut (*h.pdev()).dev }.cast(),
            netdev: netdev.cast(),
            num_comp_vectors: p.num_comp_vectors,
            local_dma_lkey: p.local_dma_lkey,
            udp_encap: p.udp_encap,
            xrc: p.xrc,
            hw_stats: p.hw_stats,
        };
        // SAFETY: `ibdev` is freshly allocated; `reg` points to live objects.
        let ret = unsafe { raw::hns_shim_register_ibdev(ibdev, &reg) };
        if ret != 0 {
            // SAFETY: allocated above, never registered.
            unsafe { raw::hns_shim_dealloc_ibdev(ibdev) };
            dev_err!(h.device(), "ib_register_device failed!\n");
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: allocated with `rs` = `drv` and registered.
        Ok(Self { ibdev, _drv: drv })
    }
}

impl IbRegistration {
    /// Reports the port's state to the RDMA core's event handlers
    /// (`ib_dispatch_port_state_event` on the function's netdev).
    pub(crate) fn port_state_event(&self, h: &Hnae3Handle) {
        // SAFETY: registered (type invariant); the handle is valid.
        unsafe { raw::hns_shim_port_state_event(self.ibdev, h.0.get()) }
    }

    /// Cuts every user mapping of the device's pages
    /// (`rdma_user_mmap_disassociate`).
    pub(crate) fn disassociate_mmaps(&self) {
        // SAFETY: registered (type invariant).
        unsafe { raw::hns_shim_disassociate_mmaps(self.ibdev) }
    }
}

impl Drop for IbRegistration {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); unregistering waits for every
        // user, after which nobody calls the ops with `rs` any more.
        unsafe {
            raw::hns_shim_unregister_ibdev(self.ibdev);
            raw::hns_shim_dealloc_ibdev(self.ibdev);
        }
    }
}

/// `IB_DEVICE_PORT_ACTIVE_EVENT`.
pub(crate) const DEVICE_PORT_ACTIVE_EVENT: u64 =
    raw::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as u64;
/// `IB_DEVICE_RC_RNR_NAK_GEN`.
pub(crate) const DEVICE_RC_RNR_NAK_GEN: u64 =
    raw::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as u64;
/// `IB_DEVICE_XRC`.
pub(crate) const DEVICE_XRC: u64 = raw::ib_device_cap_flags_IB_DEVICE_XRC as u64;
/// `IB_DEVICE_MEM_MGT_EXTENSIONS`.
pub(crate) const DEVICE_MEM_MGT_EXTENSIONS: u64 =
    raw::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as u64;
