// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The rdma layer: safe wrappers over the generated bindings and the C shim.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`hnae3.h`](srctree/drivers/net/ethernet/hisilicon/hns3/hnae3.h).
//!
//! This is the only module that touches `bindings::` items or shim functions;
//! the rest of the driver sees safe types. The raw module is private here, so
//! the rule is enforced by visibility. Nothing in it names the driver's
//! types: the hnae3 client and the ib_device are generic over the traits the
//! driver implements ([`RoceClient`]; [`DeviceOps`], [`CqOps`], [`QpOps`]
//! and the other per-object traits, together [`Driver`]), so the layer could serve
//! another RDMA driver (`docs/rdma-layer.md` is the guide). Its parts, by
//! concern:
//!
//! - `hnae3`: the hnae3 RoCE client, the function's handle and the
//!   resources it lends (register window, SQ doorbells, reset requests),
//!   the registration of its ib_device and RoCE bonding (`hnae3/bond.rs`);
//!   HNS's bus, compiled with `--cfg rdma_hnae3` only (its C half is
//!   `bindings/hnae3_shim.c`);
//! - `irq`: interrupt lines, completions, the driver's workqueue;
//! - `ib`: the ib_device registration and the verbs (`ib/verbs.rs`: the
//!   entry points the shim calls; `ib/drain.rs`: the drain ops and their
//!   steps; `ib/netdev.rs`: the port's netdev and its notifier);
//! - `umem`: user memory and the user context of a verb;
//! - `wr`: work requests, the `ib_wc` array, the `ib_cq`/`ib_qp` handles;
//! - `wc`: work completions in plain Rust (`core` only), what a driver
//!   decodes its completion entries into;
//! - `access`: the MR and QP access flags in plain Rust (`core` only);
//! - `restrack`: what `rdma res show` prints;
//! - `layout`: the build-time check of the bindings against the C compiler;
//! - `print`: the message macros on a device (`hdev_err!` and friends);
//! - `trace` (in `hnae3/`): the HNS engine's trace events (C tracepoints of
//!   the shim).

use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use kernel::{ffi::c_void, types::ForeignOwnable};

#[macro_use]
pub(crate) mod print;

#[path = "bindings/mod.rs"]
mod raw;

#[cfg(rdma_hnae3)]
mod hnae3;
#[cfg(rdma_hnae3)]
pub(crate) use hnae3::{
    bond_link, bond_slave, bond_slaves, master_upper, BondEvent, BondHandler, BondHooks, BondSlave,
    HandleRef, HeldUpper, LAG_HASH_L2, LAG_HASH_L23, LAG_HASH_L34, LAG_HASH_NONE,
    LAG_TX_ACTIVEBACKUP, LAG_TX_HASH,
};
#[cfg(rdma_hnae3)]
pub(crate) use hnae3::{
    BoundDevice, Client, ClientRef, ClientRegistration, Clients, DbOffset, DscpMap, Hnae3Handle,
    PciIdent, RegWindow, Regs, ResetInfo, ResetRequest, RoceClient, SqDoorbells, Uninit,
    REG_WINDOW,
};
mod irq;
#[cfg(kunit_build)]
pub(crate) use irq::irqs_disabled;
pub(crate) use irq::{Event, IrqHandler, IrqRegistration, OwnedQueue};
mod ib;
pub(crate) use ib::{
    dev_log, dev_log_ret, eui48_guid, AddrVec, AhIn, AhOps, CounterOps, CqOps, CqOut, DevAttr,
    DeviceOps, Drain, Driver, FailedVerb, GidEntry, IbLog, IbParams, IbRegistration, LogLevel,
    MrOps, MrReq, NetDev, NetdevEvent, PdOps, PortAttr, PortEvents, PostResult, QpAttr, QpInit,
    QpOps, QpQuery, RestrackOps, SrqArgs, SrqAttr, SrqOps, StatDescs, UcontextOps, UctxNew,
    UdataReq, XrcdOps, CORE_PORT_IBA_ROCE, CORE_PORT_IBA_ROCE_UDP_ENCAP, DEVICE_MEM_MGT_EXTENSIONS,
    DEVICE_PORT_ACTIVE_EVENT, DEVICE_RC_RNR_NAK_GEN, DEVICE_XRC, EVENT_PORT_ACTIVE, EVENT_PORT_ERR,
    MGMT_MAD_SIZE, MR_REREG_ACCESS, MR_REREG_PD, MR_REREG_TRANS, MR_TYPE_MEM_REG, MTU_256,
    NETDEV_CHANGE, NETDEV_CHANGEADDR, NETDEV_DOWN, NETDEV_REGISTER, NETDEV_UP, NODE_IB_CA,
    PORT_ACTIVE, PORT_BOOT_MGMT_SUP, PORT_CM_SUP, PORT_DOWN, PORT_PHYS_STATE_DISABLED,
    PORT_PHYS_STATE_LINK_UP, PORT_REINIT_SUP, PORT_VENDOR_CLASS_SUP, SRQT_XRC,
};
#[cfg(rdma_soft)]
pub(crate) use ib::{
    VirtDma, VirtSeg, CORE_CAP_ETH_AH, CORE_CAP_PROT_ROCE, CORE_CAP_PROT_ROCE_UDP_ENCAP,
    DRIVER_SIW, MTU_4096, QPS_ERR, QPS_RESET, QPS_RTR, QPS_RTS, QPT_RC, SIGNAL_ALL_WR,
};
// The object type of a kind a driver does not implement; this driver
// implements every kind.
#[allow(unused_imports, reason = "for drivers without SRQs or MRs")]
pub(crate) use ib::NoObject;
mod layout;
// The data path's and the object tables' locks are the kernel crate's
// `SpinLockIrq` (see `docs/driver.md`, "Lock classes").
pub(crate) use kernel::sync::{new_spinlock_irq, SpinLockIrq};
mod umem;
pub(crate) use umem::{cond_resched, MmapCtx, MmapEntry, Umem, UmemDev, UserCtx};
mod restrack;
pub(crate) use restrack::{ResAttrs, ResRaw};
pub(crate) mod access;
pub(crate) mod uabi;
mod udata;
#[cfg(rdma_hnae3)]
pub(crate) use hnae3::trace;
pub(crate) use udata::UData;
pub(crate) mod wc;
mod wr;

pub(crate) use wr::{
    IbCq, IbQp, IbSrq, QpEvent, RecvChain, RecvWr, SendChain, SendWr, Sge, SrqEvent, WcArray,
    WcBuf, WrOpcode, ZeroWrite, SEND_FENCE, SEND_INLINE, SEND_SIGNALED, SEND_SOLICITED,
};

/// Borrows the object behind a `void *` the shim keeps for us, or `None`
/// for null: [`ForeignOwnable::borrow`] with the null check the upstream
/// trait leaves to callers.
///
/// # Safety
///
/// `p` is null or came from `P::into_foreign`, and `P::from_foreign` is not
/// called on it while the borrow lives (`'a`).
unsafe fn try_borrow<'a, P: ForeignOwnable + 'a>(p: *mut c_void) -> Option<P::Borrowed<'a>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: not null, so from `P::into_foreign` and not taken back
        // during `'a` (the function's contract).
        Some(unsafe { P::borrow(p) })
    }
}

/// The printk rate limit of one call site, as C's `DEFINE_RATELIMIT_STATE`
/// with the kernel's defaults (`__ratelimit`): at most ten messages in
/// each five-second window. Each rate-limited macro expansion has its own
/// (a `static`), as each C call site has.
pub(crate) struct RateLimit {
    begin: AtomicUsize,
    printed: AtomicU32,
}

impl RateLimit {
    /// Messages per window (`DEFAULT_RATELIMIT_BURST`).
    const BURST: u32 = 10;
    /// The window, ms (`DEFAULT_RATELIMIT_INTERVAL`).
    const INTERVAL_MS: u32 = 5000;

    /// A limit that has printed nothing yet.
    pub(crate) const fn new() -> Self {
        Self {
            begin: AtomicUsize::new(0),
            printed: AtomicU32::new(0),
        }
    }

    /// Whether a message may be printed now (and counts it). Concurrent
    /// callers may let one message too many through at a window's turn,
    /// which a rate limit can afford.
    #[inline(never)]
    pub(crate) fn allow(&self) -> bool {
        // The kernel crate has no reader of the tick counter (only the
        // `Jiffies` type and `msecs_to_jiffies`), and `Instant<Monotonic>`
        // would be another clock than the `jiffies` C's `__ratelimit`
        // windows are counted in, so the word is read here.
        // SAFETY: `jiffies` is the kernel's tick counter, one aligned word
        // that is only ever read here.
        let now = unsafe { core::ptr::read_volatile(&raw const kernel::bindings::jiffies) };
        let window = kernel::time::msecs_to_jiffies(Self::INTERVAL_MS);
        let begin = self.begin.load(Ordering::Relaxed);
        if begin == 0 || now.wrapping_sub(begin) >= window {
            self.begin.store(now.max(1), Ordering::Relaxed);
            self.printed.store(0, Ordering::Relaxed);
        }
        self.printed.fetch_add(1, Ordering::Relaxed) < Self::BURST
    }
}

/// Whether the RDMA core's QP state rules allow `cur` → `next` with the
/// attribute `mask` on a QP of `qp_type` (`ib_modify_qp_is_ok`).
pub(crate) fn modify_qp_is_ok(cur: u32, next: u32, qp_type: u32, mask: u32) -> bool {
    // SAFETY: a pure function of its arguments; out-of-range values are
    // rejected by it (it checks them against its tables).
    unsafe { raw::ib_modify_qp_is_ok(cur, next, qp_type, mask) }
}

/// VLAN ids from here on are no VLAN (`VLAN_N_VID`).
// CAST: 4096 fits u16.
pub(crate) const VLAN_N_VID: u16 = raw::RDMA_SHIM_VLAN_N_VID as u16;

pub(crate) use access::{
    ACCESS_LOCAL_WRITE, ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE,
};
// The access flags are the RDMA core's, bit for bit.
const _: () = assert!(ACCESS_LOCAL_WRITE == raw::ib_access_flags_IB_ACCESS_LOCAL_WRITE);
const _: () = assert!(ACCESS_REMOTE_WRITE == raw::ib_access_flags_IB_ACCESS_REMOTE_WRITE);
const _: () = assert!(ACCESS_REMOTE_READ == raw::ib_access_flags_IB_ACCESS_REMOTE_READ);
const _: () = assert!(ACCESS_REMOTE_ATOMIC == raw::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC);

/// `IB_RATE_10_GBPS`.
// CAST: `enum ib_rate` ends at 25, it fits u8.
pub(crate) const RATE_10_GBPS: u8 = raw::ib_rate_IB_RATE_10_GBPS as u8;
/// `HNAE3_TC_MAP_MODE_DSCP`: the NIC maps DSCP to priority.
#[cfg(rdma_hnae3)]
// CAST: `enum hnae3_tc_map_mode` has two members, 0 and 1.
pub(crate) const TC_MAP_MODE_DSCP: u8 = raw::hnae3_tc_map_mode_HNAE3_TC_MAP_MODE_DSCP as u8;

/// `enum ib_qp_attr_mask`: the bits of a modify_qp's attribute mask the
/// driver reads.
pub(crate) mod qp_attr {
    use super::raw;

    /// New state.
    pub(crate) const STATE: u32 = raw::ib_qp_attr_mask_IB_QP_STATE;
    /// Current state asserted by the caller.
    pub(crate) const CUR_STATE: u32 = raw::ib_qp_attr_mask_IB_QP_CUR_STATE;
    /// Access flags.
    pub(crate) const ACCESS_FLAGS: u32 = raw::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS;
    /// P_Key index.
    pub(crate) const PKEY_INDEX: u32 = raw::ib_qp_attr_mask_IB_QP_PKEY_INDEX;
    /// Port.
    pub(crate) const PORT: u32 = raw::ib_qp_attr_mask_IB_QP_PORT;
    /// Q_Key.
    pub(crate) const QKEY: u32 = raw::ib_qp_attr_mask_IB_QP_QKEY;
    /// Address vector.
    pub(crate) const AV: u32 = raw::ib_qp_attr_mask_IB_QP_AV;
    /// Path MTU.
    pub(crate) const PATH_MTU: u32 = raw::ib_qp_attr_mask_IB_QP_PATH_MTU;
    /// ACK timeout.
    pub(crate) const TIMEOUT: u32 = raw::ib_qp_attr_mask_IB_QP_TIMEOUT;
    /// Retry count.
    pub(crate) const RETRY_CNT: u32 = raw::ib_qp_attr_mask_IB_QP_RETRY_CNT;
    /// RNR retry count.
    pub(crate) const RNR_RETRY: u32 = raw::ib_qp_attr_mask_IB_QP_RNR_RETRY;
    /// Receive PSN.
    pub(crate) const RQ_PSN: u32 = raw::ib_qp_attr_mask_IB_QP_RQ_PSN;
    /// Initiator depth.
    pub(crate) const MAX_QP_RD_ATOMIC: u32 = raw::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC;
    /// Alternate path (refused).
    pub(crate) const ALT_PATH: u32 = raw::ib_qp_attr_mask_IB_QP_ALT_PATH;
    /// Path migration state (refused at RTR→RTS).
    pub(crate) const PATH_MIG_STATE: u32 = raw::ib_qp_attr_mask_IB_QP_PATH_MIG_STATE;
    /// RNR timer.
    pub(crate) const MIN_RNR_TIMER: u32 = raw::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER;
    /// Send PSN.
    pub(crate) const SQ_PSN: u32 = raw::ib_qp_attr_mask_IB_QP_SQ_PSN;
    /// Responder resources.
    pub(crate) const MAX_DEST_RD_ATOMIC: u32 = raw::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC;
    /// Destination QPN.
    pub(crate) const DEST_QPN: u32 = raw::ib_qp_attr_mask_IB_QP_DEST_QPN;
    /// Every standard attribute (`IB_QP_ATTR_STANDARD_BITS`).
    pub(crate) const STANDARD: u32 = raw::ib_qp_attr_mask_IB_QP_ATTR_STANDARD_BITS;
}

/// A value whose drop is one out-of-line function for its type, not the
/// type's drop glue inlined at every place one goes out of scope: for the
/// control path's owners of DMA buffers and the like, dropped on every error
/// path of their users. Reads through `Deref`.
pub(crate) struct OutlineDrop<T>(core::mem::ManuallyDrop<T>);

impl<T> OutlineDrop<T> {
    /// Wraps `v`.
    pub(crate) fn new(v: T) -> Self {
        Self(core::mem::ManuallyDrop::new(v))
    }
}

impl<T> core::ops::Deref for OutlineDrop<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Drop for OutlineDrop<T> {
    #[inline(never)]
    fn drop(&mut self) {
        // SAFETY: the value was never dropped (only here) and is not used
        // again: this is the wrapper's own drop.
        unsafe { core::mem::ManuallyDrop::drop(&mut self.0) };
    }
}
