// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Interrupts, completions and the driver's own workqueue.
//!
//! C header: [`include/linux/interrupt.h`](srctree/include/linux/interrupt.h),
//! [`include/linux/completion.h`](srctree/include/linux/completion.h).
//!
//! An [`IrqRegistration`] requests a line for any [`IrqHandler`]; the shim's
//! handler calls back into [`rdma_rs_irq`] with a cookie that names the
//! handler's type-erased entry point. [`Event`] wraps a `struct completion`
//! (what a mailbox waiter and a QP drain sleep on), [`OwnedQueue`] an
//! ordered workqueue that is drained before it goes.

use super::raw;
use kernel::{
    error::to_result,
    ffi::c_void,
    prelude::*,
    str::CString,
    sync::Arc,
    types::Opaque, //
};

/// A one-shot event a thread waits on and an interrupt handler signals
/// (`struct completion`).
///
/// The kernel crate's `sync::Completion` is the same C object but offers
/// only `complete_all` (done for every later wait too, until re-armed),
/// an untimed `wait_for_completion` and no re-arming: a mailbox slot is
/// signalled once per command (`complete`), waited on with the command's
/// timeout (`wait_for_completion_timeout`) and re-armed for the next
/// command (`reinit_completion`), so the slot keeps this type.
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

    /// Re-arms the event: not signalled, whatever signalled it before
    /// (`reinit_completion`, taken under the completion's own lock so that
    /// it never races a `complete` in the middle of its update). Which
    /// signal the next wait sees is the caller's to order: a signal meant
    /// for the previous wait must not come after this.
    pub(crate) fn reinit(&self) {
        // SAFETY: a valid, initialised completion; the shim only clears its
        // count under its wait-queue lock.
        unsafe { raw::rdma_shim_reinit_completion(self.inner.get()) };
    }

    /// Signals one waiter.
    pub(crate) fn complete(&self) {
        // SAFETY: a valid completion; `complete` may run in any context.
        unsafe { kernel::bindings::complete(self.inner.get()) };
    }

    /// Waits until the event came (`wait_for_completion`, not
    /// interruptible).
    pub(crate) fn wait(&self) {
        // SAFETY: a valid completion; we are in process context.
        unsafe { kernel::bindings::wait_for_completion(self.inner.get()) }
    }

    /// Waits up to `ms` milliseconds; whether the event came.
    pub(crate) fn wait_ms(&self, ms: u32) -> bool {
        let j = kernel::time::msecs_to_jiffies(ms);
        // SAFETY: a valid completion; we are in process context.
        unsafe { kernel::bindings::wait_for_completion_timeout(self.inner.get(), j) != 0 }
    }
}

/// Whether this CPU runs with interrupts disabled (`irqs_disabled()`), for
/// the KUnit case of the driver's `SpinLockIrq` locks.
#[cfg(kunit_build)]
pub(crate) fn irqs_disabled() -> bool {
    // SAFETY: reads this CPU's interrupt flag; no precondition.
    unsafe { raw::rdma_shim_irqs_disabled() }
}

/// What an interrupt does.
pub(crate) trait IrqHandler: Send + Sync {
    /// Handles one interrupt; whether it was ours.
    fn handle(&self) -> bool;
}

/// What the shim hands back to [`rdma_rs_irq`]: the handler's type-erased
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

/// Called by the shim's interrupt handler or its BH work.
///
/// # Safety
///
/// `cookie` is the cookie an [`IrqRegistration`] passed to
/// `rdma_shim_request_irq` or `rdma_shim_request_bh_irq`; the registration
/// outlives the irq and the work.
#[no_mangle]
unsafe extern "C" fn rdma_rs_irq(cookie: *mut c_void) -> bool {
    // SAFETY: per the function's contract the cookie is a live `IrqCookie`.
    let c = unsafe { &*cookie.cast::<IrqCookie>() };
    // SAFETY: the registration keeps `data` alive (an `Arc<T>`).
    unsafe { (c.call)(c.data) }
}

/// A requested interrupt line; dropping it frees the line.
///
/// # Invariants
///
/// `cookie.data` is the pointer of `handler`. If `bh` is null, `irq` is
/// requested with `cookie` as dev_id (the handler runs in the hard
/// interrupt); otherwise `bh` is what `rdma_shim_request_bh_irq` gave for
/// `irq` and `cookie` (the handler runs as BH work).
pub(crate) struct IrqRegistration<T: IrqHandler> {
    irq: u32,
    cookie: KBox<IrqCookie>,
    bh: *mut c_void,
    _handler: Arc<T>,
    _name: CString,
}

impl<T: IrqHandler> IrqRegistration<T> {
    /// Requests `irq` (named `name` in /proc/interrupts) for `handler`,
    /// which runs in the hard interrupt.
    pub(crate) fn new(irq: u32, name: CString, handler: Arc<T>) -> Result<Self> {
        Self::request(irq, name, handler, false)
    }

    /// Requests `irq` for `handler`, which runs as a BH work item on
    /// `system_bh_wq`: the hard interrupt only queues it (the CEQs,
    /// `hns_roce_v2_ceq_int`). Dropping the registration frees the line,
    /// then cancels the work or waits for its run to end.
    pub(crate) fn new_bh(irq: u32, name: CString, handler: Arc<T>) -> Result<Self> {
        Self::request(irq, name, handler, true)
    }

    fn request(irq: u32, name: CString, handler: Arc<T>, in_bh: bool) -> Result<Self> {
        let cookie = KBox::new(
            IrqCookie {
                call: irq_trampoline::<T>,
                data: Arc::as_ptr(&handler).cast(),
            },
            GFP_KERNEL,
        )?;
        let dev_id: *const IrqCookie = &*cookie;
        let mut bh = core::ptr::null_mut();
        if in_bh {
            // SAFETY: `name` and `cookie` live in the registration, which
            // frees the irq and ends the work before dropping them; `bh` is
            // valid for writing.
            to_result(unsafe {
                raw::rdma_shim_request_bh_irq(
                    irq,
                    name.as_char_ptr(),
                    dev_id.cast_mut().cast(),
                    &mut bh,
                )
            })?;
        } else {
            // SAFETY: `name` and `cookie` live in the registration, which
            // frees the irq before dropping them.
            to_result(unsafe {
                raw::rdma_shim_request_irq(irq, name.as_char_ptr(), dev_id.cast_mut().cast())
            })?;
        }
        // INVARIANT: requested with this cookie, which points to `handler`,
        // and `bh` as the shim gave it (null for a hard-interrupt handler).
        Ok(Self {
            irq,
            cookie,
            bh,
            _handler: handler,
            _name: name,
        })
    }
}

impl<T: IrqHandler> Drop for IrqRegistration<T> {
    fn drop(&mut self) {
        if self.bh.is_null() {
            let dev_id: *const IrqCookie = &*self.cookie;
            // SAFETY: requested with this cookie (type invariant);
            // `free_irq` waits for a running handler to finish.
            unsafe { kernel::bindings::free_irq(self.irq, dev_id.cast_mut().cast()) };
        } else {
            // SAFETY: `bh` is the shim's registration of `irq` (type
            // invariant), freed once here; it returns after the line is
            // free and no run of the work is pending or running.
            unsafe { raw::rdma_shim_free_bh_irq(self.irq, self.bh) };
        }
    }
}

// SAFETY: the cookie only points to the `Arc<T>`'s data, which is `Sync`;
// `bh` is only handed back to the shim, from any thread.
unsafe impl<T: IrqHandler> Send for IrqRegistration<T> {}
// SAFETY: as above.
unsafe impl<T: IrqHandler> Sync for IrqRegistration<T> {}

/// An ordered workqueue of the driver's own (C's `irq_workq`): the work
/// items it runs are drained when it is destroyed, so none runs after the
/// device is gone.
///
/// The kernel crate's workqueue module has no owned queue: its `Queue` is
/// only ever borrowed (`Queue::from_raw`, the system queues), with no
/// allocation or `destroy_workqueue`. So the queue is allocated and
/// destroyed through the shim, and [`OwnedQueue::spawn`] borrows it as a
/// `Queue` for `try_spawn`. The pointer is atomic because teardown destroys
/// the queue through a shared reference at its point in the remove order,
/// before the owner is dropped.
///
/// # Invariants
///
/// `wq` is null or a workqueue from `rdma_shim_alloc_wq` not yet destroyed.
/// [`OwnedQueue::destroy`] is called only when nothing queues work any
/// more (interrupts freed, ib_device unregistered).
pub(crate) struct OwnedQueue {
    wq: core::sync::atomic::AtomicPtr<kernel::bindings::workqueue_struct>,
}

impl OwnedQueue {
    /// Allocates an ordered workqueue named `name`.
    pub(crate) fn new(name: &'static CStr) -> Result<Self> {
        // SAFETY: `name` is a NUL-terminated string for the queue's life.
        let wq = unsafe { raw::rdma_shim_alloc_wq(name.as_char_ptr()) };
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
            // SAFETY: allocated by `rdma_shim_alloc_wq`, destroyed once
            // (the swap above).
            unsafe { kernel::bindings::destroy_workqueue(wq) };
        }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        self.destroy();
    }
}
