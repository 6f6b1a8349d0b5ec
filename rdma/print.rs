// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The layer's message macros on a device: C's `dev_err()`,
//! `dev_warn()`, `dev_info()` and `dev_err_ratelimited()`, each printing
//! through one out-of-line function ([`super::dev_log`],
//! [`super::dev_log_ret`]) instead of an inlined `printk` per call site.
//!
//! Declared first in `rdma.rs` with `#[macro_use]`, and the layer first in
//! a crate root with `#[macro_use]`, so that the layer's modules and every
//! driver module declared after it can use the macros. A driver's own
//! macros on its ib_device test [`MESSAGES`] as these do.

/// Whether the message macros print. `false` only in the measuring builds
/// of `make size-floor` (`--cfg rdma_no_msg`), which compile every message
/// site to nothing to show what a module's size would be without them
/// (docs/benchmarks.md); such a module is never loaded.
pub(crate) const MESSAGES: bool = !cfg!(rdma_no_msg);

/// `hdev_err!`, at most at the kernel's default rate (a limit per call
/// site, as C's `dev_err_ratelimited`): for errors userspace can trigger.
macro_rules! dev_err_ratelimited {
    ($dev:expr, $($f:tt)*) => {{
        static RS: $crate::rdma::RateLimit = $crate::rdma::RateLimit::new();
        if RS.allow() {
            hdev_err!($dev, $($f)*);
        }
    }};
}

/// `dev_err()` on anything that is `AsRef<Device>` (the prelude's
/// `dev_err!` cannot be shadowed, hence the `h`).
/// `hdev_err!(dev, "<what>", ret = <errno>)` prints C's
/// `"<what>, ret = <errno>.\n"` with the formatting done once, in
/// [`crate::rdma::dev_log_ret`].
macro_rules! hdev_err {
    ($($t:tt)*) => { hdev_log!(Err, $($t)*) };
}

/// `dev_warn()`, as [`hdev_err!`].
macro_rules! hdev_warn {
    ($($t:tt)*) => { hdev_log!(Warn, $($t)*) };
}

/// `dev_info()`, as [`hdev_err!`].
macro_rules! hdev_info {
    ($($t:tt)*) => { hdev_log!(Info, $($t)*) };
}

/// The `hdev_*!` macros at the [`crate::rdma::LogLevel`] named first.
macro_rules! hdev_log {
    ($level:ident, $dev:expr, $what:literal, ret = $ret:expr) => {
        if $crate::rdma::print::MESSAGES {
            $crate::rdma::dev_log_ret($crate::rdma::LogLevel::$level, $dev.as_ref(), $what, $ret)
        }
    };
    ($level:ident, $dev:expr, $($f:tt)*) => {
        if $crate::rdma::print::MESSAGES {
            $crate::rdma::dev_log($crate::rdma::LogLevel::$level, $dev.as_ref(), kernel::prelude::fmt!($($f)*))
        }
    };
}
