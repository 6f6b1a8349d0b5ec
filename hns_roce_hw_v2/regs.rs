// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Typed registers of the RoCE engine's window, for the kernel crate's
//! `register!`/[`Io`](kernel::io::Io) accessors: the CMQ ring registers and
//! the interrupt enable and status registers.
//!
//! C header: [`hns_roce_common.h`](srctree/drivers/infiniband/hw/hns/hns_roce_common.h),
//! [`hns_roce_hw_v2.h`](srctree/drivers/infiniband/hw/hns/hns_roce_hw_v2.h).
//!
//! `register!` takes its offsets and bit positions as literals, so they are
//! written here again; the build checks each one against the generated
//! [`reg`] and [`abn_bit`] constants (which `tests/host` checks against the C
//! headers), so the C headers stay the one source of truth. Doorbells are
//! not here: they are single 64-bit writes (`RegWindow::write64`).

use super::consts::{abn_bit, reg};
use crate::rdma::REG_WINDOW;
use kernel::io::register;
use kernel::io::register::Register;

register! {
    /// `ROCEE_TX_CMQ_BASEADDR_L_REG`: low half of the CMQ ring's bus
    /// address.
    pub(crate) TX_CMQ_BASEADDR_L(u32) @ 0x07000 {
        /// Address bits 31:0.
        31:0 addr;
    }

    /// `ROCEE_TX_CMQ_BASEADDR_H_REG`: high half of the CMQ ring's bus
    /// address.
    pub(crate) TX_CMQ_BASEADDR_H(u32) @ 0x07004 {
        /// Address bits 63:32.
        31:0 addr;
    }

    /// `ROCEE_TX_CMQ_DEPTH_REG`: ring depth, in units of 8 descriptors.
    pub(crate) TX_CMQ_DEPTH(u32) @ 0x07008 {
        /// Descriptors / 8.
        31:0 depth;
    }

    /// `ROCEE_TX_CMQ_PI_REG`: the driver's producer index.
    pub(crate) TX_CMQ_PI(u32) @ 0x07010 {
        /// Next descriptor the driver writes.
        31:0 index;
    }

    /// `ROCEE_TX_CMQ_CI_REG`: the firmware's consumer index.
    pub(crate) TX_CMQ_CI(u32) @ 0x07014 {
        /// Next descriptor the firmware reads.
        31:0 index;
    }

    /// `ROCEE_VF_ABN_INT_CFG_REG`: abnormal interrupt configuration.
    pub(crate) VF_ABN_INT_CFG(u32) @ 0x13000 {
        /// The configuration word (the driver writes 1 or 0).
        31:0 value;
    }

    /// `ROCEE_VF_ABN_INT_ST_REG`: abnormal interrupt status, write 1 to
    /// clear.
    pub(crate) VF_ABN_INT_ST(u32) @ 0x13004 {
        /// `HNS_ROCE_V2_VF_INT_ST_AEQ_OVERFLOW_S`: the AEQ overflowed.
        0:0 aeq_overflow => bool;
    }

    /// `ROCEE_VF_ABN_INT_EN_REG`: abnormal interrupt enable.
    pub(crate) VF_ABN_INT_EN(u32) @ 0x13008 {
        /// `HNS_ROCE_V2_VF_ABN_INT_EN_S`: the abnormal interrupt is enabled.
        0:0 enable => bool;
    }

    /// `ROCEE_VF_EVENT_INT_EN_REG` + 4 * n: the interrupt enable of EQ `n`,
    /// as many as fit in the register window.
    pub(crate) VF_EVENT_INT_EN(u32)[EVENT_INT_EN_NUM, stride = 4] @ 0x1300c {
        /// The enable word (the driver writes 1 or 0).
        31:0 value;
    }
}

/// Per-EQ interrupt enable registers inside the window.
const EVENT_INT_EN_NUM: usize = (REG_WINDOW - reg::VF_EVENT_INT_EN) / 4;

// The literals above are the generated constants.
const _: () = {
    assert!(TX_CMQ_BASEADDR_L::OFFSET == reg::TX_CMQ_BASEADDR_L);
    assert!(TX_CMQ_BASEADDR_H::OFFSET == reg::TX_CMQ_BASEADDR_H);
    assert!(TX_CMQ_DEPTH::OFFSET == reg::TX_CMQ_DEPTH);
    assert!(TX_CMQ_PI::OFFSET == reg::TX_CMQ_PI);
    assert!(TX_CMQ_CI::OFFSET == reg::TX_CMQ_CI);
    assert!(VF_ABN_INT_CFG::OFFSET == reg::VF_ABN_INT_CFG);
    assert!(VF_ABN_INT_ST::OFFSET == reg::VF_ABN_INT_ST);
    assert!(VF_ABN_INT_EN::OFFSET == reg::VF_ABN_INT_EN);
    assert!(VF_EVENT_INT_EN::OFFSET == reg::VF_EVENT_INT_EN);
    assert!(abn_bit::INT_ST_AEQ_OVERFLOW_S == 0);
    assert!(abn_bit::ABN_INT_EN_S == 0);
};
