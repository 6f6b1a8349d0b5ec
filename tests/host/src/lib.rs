// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Host build of the module's `core`-only sources.
//!
//! The files are the module's own, included by path under the same module
//! paths as in the kernel crate (`crate::hns_roce_hw_v2::fields`, ...), so
//! the host tests and the kernel build compile the very same code. Of a
//! subsystem whose entry file is kernel code (`cmdq.rs`,
//! `hns_roce_hw_v2.rs`) only the `core` parts are here.

#[path = "../../../field.rs"]
pub mod field;

#[path = "../../../hw_rev.rs"]
pub mod hw_rev;

#[path = "../../../hem.rs"]
pub mod hem;

#[path = "../../../bitmap.rs"]
pub mod bitmap;

#[path = "../../../bond.rs"]
pub mod bond;

#[path = "../../../dfx.rs"]
pub mod dfx;

#[path = "../../../dip.rs"]
pub mod dip;

#[path = "../../../dbwin.rs"]
pub mod dbwin;

/// The loopback provider's queues (`tests/loopback/queue.rs`).
#[path = "../../loopback/queue.rs"]
pub mod loopback_queue;

/// The driver's user ABI with libhns.
#[path = "../../../uabi.rs"]
pub mod uabi;

/// The `core` parts of the rdma layer: work completions, access flags and
/// the udata length rules.
#[path = "../../.."]
pub mod rdma {
    #[path = "rdma/access.rs"]
    pub mod access;

    #[path = "rdma/wc.rs"]
    pub mod wc;

    #[path = "rdma/uabi.rs"]
    pub mod uabi;
}

/// The `core` parts of the command queue: the descriptor codec and the
/// mailbox slots' token protocol.
#[path = "../../.."]
pub mod cmdq {
    #[path = "cmdq/desc.rs"]
    pub mod desc;

    #[path = "cmdq/slot.rs"]
    pub mod slot;
}

/// The `core` parts of the HIP08/HIP09 engine: constants, field maps, caps,
/// context images, QPC, congestion control blocks.
#[path = "../../.."]
pub mod hns_roce_hw_v2 {
    #[path = "hns_roce_hw_v2/consts.rs"]
    pub mod consts;

    #[path = "hw_v2_fields.rs"]
    pub mod fields;

    #[path = "hns_roce_hw_v2/caps.rs"]
    pub mod caps;

    #[path = "hns_roce_hw_v2/cmq_fields.rs"]
    pub mod cmq_fields;

    #[path = "hns_roce_hw_v2/gid.rs"]
    pub mod gid;

    #[path = "hns_roce_hw_v2/ctx.rs"]
    pub mod ctx;

    #[path = "hns_roce_hw_v2/scc.rs"]
    pub mod scc;

    #[path = "hns_roce_hw_v2/qpc.rs"]
    pub mod qpc;

    #[path = "hns_roce_hw_v2/cqe.rs"]
    pub mod cqe;

    #[path = "hns_roce_hw_v2/wqe.rs"]
    pub mod wqe;

    #[path = "hns_roce_hw_v2/srqwqe.rs"]
    pub mod srqwqe;
}

/// Vectors shared with the KUnit suites.
#[path = "../../vectors/mod.rs"]
pub mod vectors;
