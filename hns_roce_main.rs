// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! HiSilicon HNS RoCE driver for HIP08/HIP09 (Kunpeng), in Rust.
//!
//! Crate root of `hns_roce_rs.ko`. Like the C driver `hns-roce-hw-v2`, the
//! module is an hnae3 RoCE client: the HNS3 NIC driver owns the PCI function
//! and hands each RoCE-capable function to `init_instance`.
//!
//! This file keeps the module, its registrations and the list of the
//! driver's files. The hnae3 client (bring-up of the engine, then
//! registration of the ib_device `hns_N`, teardown, link and reset events)
//! is `client.rs`; the ib_device ([`IbDev`]) is `device.rs`, its verbs
//! `device/verbs.rs`; the message macros on the ib_device are `print.rs`.

use kernel::prelude::*;

// First: its message macros serve the modules after it.
#[macro_use]
mod rdma;
#[macro_use]
mod print;

mod ah;
pub mod bitmap;
pub mod bond;
mod client;
pub mod cmdq;
mod cq;
mod db;
pub mod dbwin;
mod debugfs;
mod device;
pub mod dip;
mod eq;
mod mr;
mod objtable;
mod pd;
mod qp;
mod srq;
// The user ABI with libhns.
mod uabi;

pub mod dfx;
pub mod field;
pub mod hem;
pub mod hns_roce_hw_v2;
pub mod hw_rev;

#[cfg(kunit_build)]
#[path = "tests/vectors/mod.rs"]
pub mod vectors;

#[cfg(kunit_build)]
#[path = "tests/kunit/mod.rs"]
mod kunit;

module! {
    type: HnsRoce,
    name: "hns_roce_rs",
    authors: ["hns-roce-rs developers"],
    description: "HiSilicon HNS RoCE driver (HIP08/HIP09), Rust implementation",
    license: "GPL",
}

/// The module: holds the hnae3 client registration, which holds the
/// module's state ([`client::Driver`]: the bond groups, the debugfs
/// directory) and hands it to every callback. No driver state lives in a
/// `static` (scripts/no-static.py).
struct HnsRoce {
    _client: rdma::ClientRegistration<client::Driver>,
}

impl kernel::Module for HnsRoce {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Harness self-test only (scripts/check.sh): a WARN must fail the run.
        #[cfg(hns_selftest_warn)]
        kernel::warn_on!(true);
        let client = rdma::ClientRegistration::register(client::Driver::new())
            .inspect_err(|e| pr_err!("hnae3 client registration failed: {:?}\n", e))?;
        // The C driver says nothing on load and unload: dynamic debug only.
        pr_debug!("registered hnae3 RoCE client\n");
        Ok(HnsRoce { _client: client })
    }
}

impl Drop for HnsRoce {
    fn drop(&mut self) {
        pr_debug!("unregistering hnae3 RoCE client\n");
    }
}
