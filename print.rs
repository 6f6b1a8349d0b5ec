// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The driver's message macros: C's `dev_*`, `ibdev_*` and their
//! rate-limited forms, each printing through one out-of-line function of
//! the rdma layer instead of an inlined `printk` per call site.
//!
//! Declared first in the crate root with `#[macro_use]`, so that every
//! module declared after it can use the macros.

/// Whether the message macros of this file print. `false` only in the measuring
/// builds of `make size-floor` (`--cfg hns_no_msg`), which compile every
/// message site to nothing to show what the module's size would be without
/// them (docs/benchmarks.md); such a module is never loaded.
pub(crate) const MESSAGES: bool = !cfg!(hns_no_msg);

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

/// `dev_err()`: what the kernel crate's `hdev_err!` prints, through one
/// out-of-line function ([`crate::rdma::dev_log`]) instead of an inlined
/// `printk` at each of the ≈ 80 sites (the prelude's name cannot be
/// shadowed, hence the `h`). `hdev_err!(dev, "<what>", ret = <errno>)`
/// prints C's `"<what>, ret = <errno>.\n"` with the formatting done once,
/// in [`crate::rdma::dev_log_ret`]; the `ibdev_*!` macros have the same form.
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
        if $crate::print::MESSAGES {
            $crate::rdma::dev_log_ret($crate::rdma::LogLevel::$level, $dev.as_ref(), $what, $ret)
        }
    };
    ($level:ident, $dev:expr, $($f:tt)*) => {
        if $crate::print::MESSAGES {
            $crate::rdma::dev_log($crate::rdma::LogLevel::$level, $dev.as_ref(), kernel::prelude::fmt!($($f)*))
        }
    };
}

/// `ibdev_err()`: prints against the ib_device of the function whose
/// [`crate::cmdq::DevState`] is given, directly or through anything that
/// holds one (`AsRef`, such as the whole [`crate::cmdq::Cmd`]); before
/// registration and after, against the PCI device.
macro_rules! ibdev_err {
    ($($t:tt)*) => { ibdev_log!(Err, $($t)*) };
}

/// `ibdev_warn()`, as [`ibdev_err!`].
macro_rules! ibdev_warn {
    ($($t:tt)*) => { ibdev_log!(Warn, $($t)*) };
}

/// `ibdev_info()`, as [`ibdev_err!`].
macro_rules! ibdev_info {
    ($($t:tt)*) => { ibdev_log!(Info, $($t)*) };
}

/// The `ibdev_*!` macros at the [`crate::rdma::LogLevel`] named first.
macro_rules! ibdev_log {
    ($level:ident, $st:expr, $what:literal, ret = $ret:expr) => {{
        let c: &$crate::cmdq::DevState = ::core::convert::AsRef::as_ref($st);
        if $crate::print::MESSAGES {
            c.ib_print_ret($crate::rdma::LogLevel::$level, $what, $ret);
        }
    }};
    ($level:ident, $st:expr, $($f:tt)*) => {{
        let c: &$crate::cmdq::DevState = ::core::convert::AsRef::as_ref($st);
        if $crate::print::MESSAGES {
            c.ib_print($crate::rdma::LogLevel::$level, format_args!($($f)*));
        }
    }};
}

/// `ibdev_err_ratelimited()`.
macro_rules! ibdev_err_ratelimited {
    ($cmd:expr, $($f:tt)*) => {{
        static RS: $crate::rdma::RateLimit = $crate::rdma::RateLimit::new();
        if RS.allow() {
            ibdev_err!($cmd, $($f)*);
        }
    }};
}

/// `ibdev_warn_ratelimited()`.
macro_rules! ibdev_warn_ratelimited {
    ($cmd:expr, $($f:tt)*) => {{
        static RS: $crate::rdma::RateLimit = $crate::rdma::RateLimit::new();
        if RS.allow() {
            ibdev_warn!($cmd, $($f)*);
        }
    }};
}
