// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The state of one function that the command queue, the mailbox, the
//! doorbells and the messages all consult: its register window and PCI
//! device, the ib_device's log, the doorbell and lifecycle flags, the NIC's
//! reset state and the software counters.
//!
//! Nothing here sends a command, so code that only rings doorbells, prints
//! against the ib_device, counts or asks whether the function is going
//! down takes a [`DevState`] rather than the whole command interface
//! ([`crate::cmdq::Cmd`]).

use crate::dfx::SwStat;
use crate::rdma::{DbOffset, IbLog, LogLevel, RegWindow, Regs, ResetInfo};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{device::Device, sync::aref::ARef};

/// The doorbell, lifecycle and reset state of one function, with its
/// registers, log and counters.
pub(crate) struct DevState {
    regs: RegWindow,
    dev: ARef<Device>,
    /// The ib_device's log, for the messages the C driver prints with
    /// `ibdev_*` (see `ibdev_err!`).
    log: IbLog,
    /// Doorbells are not rung (C's `dis_db`).
    dis_db: AtomicBool,
    /// The function is going through a reset (C's state `RST_DOWN`).
    reset_down: AtomicBool,
    /// The instance is being torn down (C's state `UNINIT`): the engine
    /// holds no more completions, CQs are polled in software.
    uninit: AtomicBool,
    /// The function's software counters (debugfs `sw_stat`).
    stat: SwStat,
    /// The device is registered and takes user contexts (C's `active`).
    active: AtomicBool,
    /// The NIC's reset state.
    rst: ResetInfo,
    /// The NIC's count of finished hardware resets when this instance
    /// started (C's `reset_cnt`): a different count means a reset wiped
    /// the hardware since.
    reset_cnt: kernel::ffi::c_ulong,
}

impl DevState {
    /// The state of a function coming up: doorbells on, not active, no
    /// counts. `rst` is the function's reset state, whose count of
    /// hardware resets is taken now.
    pub(crate) fn new(regs: RegWindow, dev: ARef<Device>, rst: ResetInfo) -> Self {
        let reset_cnt = rst.reset_cnt();
        Self {
            regs,
            dev,
            log: IbLog::new(),
            dis_db: AtomicBool::new(false),
            reset_down: AtomicBool::new(false),
            uninit: AtomicBool::new(false),
            stat: SwStat::new(),
            active: AtomicBool::new(false),
            rst,
            reset_cnt,
        }
    }

    /// The function's registers.
    pub(crate) fn regs(&self) -> Regs<'_> {
        self.regs.io()
    }

    /// The NIC's reset state.
    pub(crate) fn reset_info(&self) -> &ResetInfo {
        &self.rst
    }

    /// The NIC's count of finished hardware resets when this instance
    /// started.
    pub(crate) fn reset_cnt_at_init(&self) -> kernel::ffi::c_ulong {
        self.reset_cnt
    }

    /// Whether a doorbell may be rung now: not once doorbells are
    /// disabled, nor while the NIC reports a hardware reset (the engine
    /// would take the write for a new one's state).
    fn may_ring(&self) -> bool {
        !self.dis_db.load(Ordering::Acquire) && !self.rst.hw_resetting()
    }

    /// Rings a doorbell with one 64-bit write (`hns_roce_write64`), unless
    /// doorbells are disabled or a hardware reset is under way.
    pub(crate) fn ring_db(&self, v: u64, off: DbOffset) {
        if self.may_ring() {
            self.regs.write64(v, off);
        }
    }

    /// Rings a doorbell outside the register window (the HIP09 kernel SQ
    /// doorbells of `mem_base`, or a direct WQE) through `ring`, under the
    /// same conditions as [`DevState::ring_db`].
    pub(crate) fn ring_with(&self, ring: impl FnOnce()) {
        if self.may_ring() {
            ring();
        }
    }

    /// Whether the NIC reports a hardware reset under way.
    pub(crate) fn hw_resetting(&self) -> bool {
        self.rst.hw_resetting()
    }

    /// Whether the NIC has finished a hardware reset since this instance
    /// started.
    pub(crate) fn reset_since_init(&self) -> bool {
        self.rst.reset_cnt() != self.reset_cnt
    }

    /// Whether the NIC's reset task is running.
    pub(crate) fn sw_resetting(&self) -> bool {
        self.rst.sw_resetting()
    }

    /// Whether `init_instance` (not a reset's re-init) is running.
    pub(crate) fn instance_initializing(&self) -> bool {
        self.rst.instance_initializing()
    }

    /// Stops doorbells: a reset is under way or done.
    pub(crate) fn disable_doorbells(&self) {
        self.dis_db.store(true, Ordering::Release);
    }

    /// Doorbells are not rung (a reset is under way).
    pub(crate) fn doorbells_off(&self) -> bool {
        self.dis_db.load(Ordering::Acquire)
    }

    /// The function goes down for a reset (`hns_roce_hw_v2_reset_notify_down`):
    /// doorbells stop and new work requests are refused.
    pub(crate) fn set_reset_down(&self) {
        self.active.store(false, Ordering::Release);
        self.dis_db.store(true, Ordering::Release);
        self.reset_down.store(true, Ordering::Release);
    }

    /// Whether the function is going through a reset.
    pub(crate) fn is_reset_down(&self) -> bool {
        self.reset_down.load(Ordering::Acquire)
    }

    /// The instance is being torn down (`__hns_roce_hw_v2_uninit_instance`
    /// sets `HNS_ROCE_DEVICE_STATE_UNINIT`): from now on `poll_cq` answers
    /// from the WR-id rings.
    pub(crate) fn set_uninit(&self) {
        self.active.store(false, Ordering::Release);
        self.uninit.store(true, Ordering::Release);
    }

    /// The device is registered, its MAC written and its netdev watched
    /// (the end of `hns_roce_register_device`): user contexts may open.
    pub(crate) fn set_active(&self) {
        self.active.store(true, Ordering::Release);
    }

    /// Whether user contexts may open: not before the registration ends,
    /// not from a reset's DOWN step or a teardown on.
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Whether the instance is being torn down.
    pub(crate) fn is_uninit(&self) -> bool {
        self.uninit.load(Ordering::Acquire)
    }

    /// The function's software counters.
    pub(crate) fn sw_stat(&self) -> &SwStat {
        &self.stat
    }

    /// Whether the function is down, for a reset or a teardown (C's
    /// `state >= HNS_ROCE_DEVICE_STATE_RST_DOWN`).
    pub(crate) fn is_down(&self) -> bool {
        self.is_reset_down() || self.is_uninit()
    }

    /// The PCI function, for logging.
    pub(crate) fn device(&self) -> &Device {
        &self.dev
    }

    /// The ib_device's log.
    pub(crate) fn ib_log(&self) -> &IbLog {
        &self.log
    }

    /// [`IbLog::print`] of this function's log: what every `ibdev_*!`
    /// site calls. Out of line, so that a site does not load the log and
    /// the device itself.
    #[inline(never)]
    pub(crate) fn ib_print(&self, level: LogLevel, args: core::fmt::Arguments<'_>) {
        self.log.print(level, &self.dev, args)
    }

    /// [`IbLog::print_ret`] of this function's log (the `ret =` form of the
    /// `ibdev_*!` macros), out of line as [`DevState::ib_print`].
    #[inline(never)]
    pub(crate) fn ib_print_ret(&self, level: LogLevel, what: &str, ret: i32) {
        self.log.print_ret(level, &self.dev, what, ret)
    }
}

impl AsRef<DevState> for DevState {
    fn as_ref(&self) -> &DevState {
        self
    }
}
