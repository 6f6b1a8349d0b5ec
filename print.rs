// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! The driver's message macros on its ib_device: C's `ibdev_*` and their
//! rate-limited forms, each printing through one out-of-line function
//! ([`crate::cmdq::DevState::ib_print`]) instead of an inlined `printk` per
//! call site. The `dev_*` ones on the PCI function are the rdma layer's
//! (`rdma/print.rs`).
//!
//! Declared in the crate root with `#[macro_use]` after the layer and
//! before the modules that use them.

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
        if $crate::rdma::print::MESSAGES {
            c.ib_print_ret($crate::rdma::LogLevel::$level, $what, $ret);
        }
    }};
    ($level:ident, $st:expr, $($f:tt)*) => {{
        let c: &$crate::cmdq::DevState = ::core::convert::AsRef::as_ref($st);
        if $crate::rdma::print::MESSAGES {
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
