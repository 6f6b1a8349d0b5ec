// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! HiSilicon HNS RoCE driver for HIP08/HIP09 (Kunpeng), in Rust.
//!
//! Crate root of `hns_roce_rs.ko`. Like the C driver `hns-roce-hw-v2`, the
//! module is an hnae3 RoCE client: the HNS3 NIC driver owns the PCI function
//! and hands each RoCE-capable function to `init_instance`.
//!
//! Status: bring-up in progress. For each HNS RoCE function the client sets
//! up the command queue and runs the firmware profile, keeps that state until
//! the function goes away and then clears the function. It registers no
//! ib_device yet.

use kernel::prelude::*;

pub mod bitmap;
mod cmdq;
mod eq;
mod mtr;
pub mod cmq_desc;
pub mod field;
pub mod hem;
mod hns_roce_hw_v2;
pub mod hw_v2_caps;
pub mod hw_v2_fields;
mod rdma;

#[cfg(hns_kunit)]
#[path = "tests/vectors/mod.rs"]
pub mod vectors;

#[cfg(hns_kunit)]
#[path = "tests/kunit/mod.rs"]
mod kunit;

use rdma::{Hnae3Handle, ResetNotify, RoceClient};

module! {
    type: HnsRoce,
    name: "hns_roce_rs",
    authors: ["hns-roce-rs developers"],
    description: "HiSilicon HNS RoCE driver (HIP08/HIP09), Rust implementation",
    license: "Dual BSD/GPL",
    alias: [
        "pci:v000019E5d0000A222sv*sd*bc*sc*i*",
        "pci:v000019E5d0000A223sv*sd*bc*sc*i*",
        "pci:v000019E5d0000A224sv*sd*bc*sc*i*",
        "pci:v000019E5d0000A225sv*sd*bc*sc*i*",
        "pci:v000019E5d0000A226sv*sd*bc*sc*i*",
        "pci:v000019E5d0000A228sv*sd*bc*sc*i*",
        "pci:v000019E5d0000A22Fsv*sd*bc*sc*i*",
    ],
}

/// PCI vendor ID of HiSilicon.
const PCI_VENDOR_ID_HUAWEI: u16 = 0x19e5;

/// RoCE-capable HNS3 functions, as in the C driver's PCI table. The flag
/// marks the DCB/PFC VF, which has RoCE only from HIP09 on.
const HNS_ROCE_PCI_IDS: &[(u16, bool)] = &[
    (0xa222, false),
    (0xa223, false),
    (0xa224, false),
    (0xa225, false),
    (0xa226, false),
    (0xa228, false),
    (0xa22f, true),
];

use hns_roce_hw_v2::PCI_REVISION_ID_HIP08;

/// The module: holds the hnae3 client registration.
struct HnsRoce {
    _client: rdma::ClientRegistration,
}

impl kernel::Module for HnsRoce {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Harness self-test only (scripts/check.sh): a WARN must fail the run.
        #[cfg(hns_selftest_warn)]
        kernel::warn_on!(true);
        rdma::check_layout()?;
        let client = rdma::ClientRegistration::register()
            .inspect_err(|e| pr_err!("hnae3 client registration failed: {:?}\n", e))?;
        pr_info!("registered hnae3 RoCE client\n");
        Ok(HnsRoce { _client: client })
    }
}

impl Drop for HnsRoce {
    fn drop(&mut self) {
        pr_info!("unregistering hnae3 RoCE client\n");
    }
}

/// Whether this driver handles the function: a RoCE ID, and not a HIP09-only
/// ID on a HIP08 revision.
fn is_roce_function(id: rdma::PciIdent) -> bool {
    id.vendor == PCI_VENDOR_ID_HUAWEI
        && HNS_ROCE_PCI_IDS.iter().any(|&(dev, hip09_only)| {
            dev == id.device && !(hip09_only && id.revision == PCI_REVISION_ID_HIP08)
        })
}

/// The driver's state for one RoCE function.
pub(crate) struct HnsRoceDev {
    hw: hns_roce_hw_v2::HwV2,
}

impl RoceClient for HnsRoce {
    type Instance = HnsRoceDev;

    fn init_instance(handle: &Hnae3Handle) -> Result<Option<KBox<HnsRoceDev>>> {
        let id = handle.pci_ident();
        if !is_roce_function(id) {
            return Ok(None);
        }
        let hw = hns_roce_hw_v2::HwV2::init(handle, id.revision)?;
        dev_info!(
            handle.device(),
            "RoCE function {:04x}:{:04x} rev {:#x}: ib_device registration not implemented yet\n",
            id.vendor,
            id.device,
            id.revision
        );
        Ok(Some(KBox::new(HnsRoceDev { hw }, GFP_KERNEL)?))
    }

    fn uninit_instance(_handle: &Hnae3Handle, mut inst: KBox<HnsRoceDev>, _reset: bool) {
        inst.hw.exit();
    }

    fn link_status_change(_handle: &Hnae3Handle, _inst: Option<&HnsRoceDev>, _up: bool) {}

    fn reset_notify(
        _handle: &Hnae3Handle,
        _inst: Option<&HnsRoceDev>,
        _what: ResetNotify,
    ) -> Result {
        Ok(())
    }
}
