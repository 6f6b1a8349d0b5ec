// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The driver's interrupt-safe spinlock: `spin_lock_irqsave`, as the C
//! driver takes its SQ, RQ, SRQ and CQ locks, in the kernel crate's
//! [`Lock`]. The object tables (QP, CQ, SRQ) use it too.
//!
//! C header: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h).
//!
//! The kernel crate's `SpinLockIrq` differs from C's lock in two ways that
//! cost every post and poll (docs/benchmarks.md, "The lock"):
//!
//! - it disables interrupts through the counted `spin_lock_irq_disable`,
//!   13 instructions more per lock-unlock pair than `spin_lock_irqsave`;
//! - [`Guard::new`](kernel::sync::lock::Guard::new) asks lockdep whether
//!   the lock it was just handed is held, ≈ 130 instructions per lock on a
//!   lockdep kernel, which C does not pay.
//!
//! [`SpinLockIrqSave`] is the same [`Lock`] with a backend that takes
//! `spin_lock_irqsave` (through the shim, since the kernel inlines it or
//! not by configuration) and answers that question from what it knows: a
//! guard is only made by locking. Lockdep still sees every acquisition and
//! release, inside the kernel's lock functions.

use super::raw;
use kernel::{
    ffi::c_ulong,
    sync::lock::{spinlock::SpinLockBackend, Backend},
};

/// A `spinlock_t` taken with interrupts saved and disabled.
pub(crate) type SpinLockIrqSave<T> = kernel::sync::lock::Lock<T, IrqSaveBackend>;

/// Creates a [`SpinLockIrqSave`] initialiser with the given name and a new
/// lock class, as the kernel crate's `new_spinlock_irq!`.
macro_rules! new_spinlock_irqsave {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::rdma::SpinLockIrqSave::new(
            $inner,
            kernel::optional_name!($name),
            kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_irqsave;

/// The backend of [`SpinLockIrqSave`]: the guard keeps the saved flags.
pub(crate) struct IrqSaveBackend;

// SAFETY: the kernel's `spinlock_t` ensures mutual exclusion; `lock` and
// `try_lock` hand out the flags `unlock` restores, and `relock` (the
// default) takes the lock the same way again.
unsafe impl Backend for IrqSaveBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = c_ulong;

    #[inline]
    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: the same lock, as the kernel crate's spinlock initialises
        // it, under the same contract (`Backend::init`'s, passed on).
        unsafe { <SpinLockBackend as Backend>::init(ptr, name, key) }
    }

    #[inline]
    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: `ptr` is an initialised lock (`Backend::lock`'s contract).
        unsafe { raw::hns_shim_spin_lock_irqsave(ptr) }
    }

    #[inline]
    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        let mut flags: c_ulong = 0;
        // SAFETY: `ptr` is an initialised lock (`Backend::try_lock`'s
        // contract); `flags` is a local.
        unsafe { raw::hns_shim_spin_trylock_irqsave(ptr, &mut flags) }.then_some(flags)
    }

    #[inline]
    unsafe fn unlock(ptr: *mut Self::State, guard_state: &Self::GuardState) {
        // SAFETY: the caller owns the lock, and `guard_state` holds the
        // flags its `lock` saved (`Backend::unlock`'s contract).
        unsafe { raw::hns_shim_spin_unlock_irqrestore(ptr, *guard_state) }
    }

    #[inline]
    unsafe fn assert_is_held(_ptr: *mut Self::State) {
        // Only `Guard::new` asks (kernel 7.3), right after `lock` or
        // `try_lock` took the lock for the guard it makes, and nothing in
        // this driver makes a guard any other way: the lock is held by
        // construction. A new caller in the kernel crate would need a real
        // assertion here.
    }
}

/// Whether this CPU runs with interrupts disabled (`irqs_disabled()`), for
/// the KUnit case of [`SpinLockIrqSave`].
#[cfg(hns_kunit)]
pub(crate) fn irqs_disabled() -> bool {
    // SAFETY: reads this CPU's interrupt flag; no precondition.
    unsafe { raw::hns_shim_irqs_disabled() }
}
