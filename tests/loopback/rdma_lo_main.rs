// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! `rdma_lo.ko`: a software loopback RDMA device, the second provider on
//! the rdma layer (`rdma.rs`, `rdma/`, the C shim), which exists to show
//! the layer serves a driver that is not `hns_roce_rs`.
//!
//! The crate compiles the layer's own files (by path, as `hns_roce_rs`
//! does) beside its provider (`lo.rs`) and the provider's queue logic
//! (`queue.rs`, `core` only, host-tested). The provider uses the layer's
//! public items only: no `bindings::`, no `unsafe`. The layer is compiled
//! with `--cfg rdma_soft`, which adds its software-device registration
//! ([`rdma::IbRegistration::register_soft`]) and access to kernel WRs'
//! buffers ([`rdma::VirtDma`]); the layer's hnae3 binding (`--cfg
//! rdma_hnae3`, HNS's bus, with its half of the C shim) is left out, so
//! the module does not depend on `hnae3.ko` (docs/rdma-layer.md, "A
//! second provider").
//!
//! User space: the device reports rdma-core's siw driver id
//! (`RDMA_DRIVER_SIW`), whose provider opens a context, queries the device
//! and ports and allocates PDs with the plain `ibv_cmd_*` commands and no
//! driver data (the kernel answers none) — all that pyverbs' `test_device`
//! and `test_pd` use. siw's data path (queues mapped from the kernel) is
//! not offered: user CQs and QPs are refused. rxe's provider would do as
//! well for these tests, but the rxe kernel driver, which the test kernel
//! has, looks its devices up by netdev and driver id and would take this
//! one for its own on `lo`; the test kernel has no siw driver.
//!
//! The pingpong is a kernel one (`tests/ktest/lo_pingpong.c`): SENDs
//! between two RC QPs of the device, data compared.

use kernel::prelude::*;

// `rdma.rs`, `rdma/` and `bindings/` here are links to the layer's own
// files, so that the layer's modules resolve as in `hns_roce_rs`.
#[allow(dead_code, unused_imports, unused_macros)]
#[macro_use]
pub mod rdma;

mod lo;
pub mod queue;

/// The layer's work completions (`core` only), which the device's CQs
/// hold until polled.
pub use rdma::wc::{RecvAttrs, Wc, WcFlags, WcOpcode, WcStatus};

module! {
    type: RdmaLo,
    name: "rdma_lo",
    authors: ["hns-roce-rs developers"],
    description: "Software loopback RDMA device on the hns-roce-rs rdma layer (test)",
    license: "GPL",
}

/// The module: the registered device.
struct RdmaLo {
    _reg: rdma::IbRegistration<lo::LoDev>,
}

impl kernel::Module for RdmaLo {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let dev = lo::LoDev::new()?;
        let params = rdma::IbParams {
            name: c"rlo_%d",
            node_type: rdma::NODE_IB_CA,
            // The EUI-64 of a locally administered MAC: the device has no
            // address of its own (its port is `lo`).
            node_guid: rdma::eui48_guid(&[0x02, 0, 0, 0, 0, 0x01]),
            num_comp_vectors: 1,
            local_dma_lkey: lo::DMA_LKEY,
            // RoCE v1 and v2 addressing without MADs: no QP0/QP1, no CM.
            core_cap_flags: rdma::CORE_CAP_PROT_ROCE
                | rdma::CORE_CAP_PROT_ROCE_UDP_ENCAP
                | rdma::CORE_CAP_ETH_AH,
            max_mad_size: 0,
            pkey: 0xffff,
            xrc: false,
            srq: false,
            hw_stats: None,
            frmr: false,
            rereg: false,
            bond_cap: false,
            vf: false,
            bond: None,
        };
        let (reg, dma) =
            rdma::IbRegistration::register_soft(dev.clone(), &params, rdma::DRIVER_SIW)?;
        dev.set_dma(dma);
        Ok(Self { _reg: reg })
    }
}
