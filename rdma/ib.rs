// SPDX-License-Identifier: GPL-2.0

//! The ib_device: its registration and the verbs the RDMA core calls.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).
//!
//! A driver implements the per-object traits of `ops.rs` ([`DeviceOps`],
//! [`CqOps`], [`QpOps`], ..., together [`Driver`]) and registers its state
//! with [`IbRegistration::register`]; each kind's ops are set only as far
//! as the driver implements them (the traits' `HAS_*` constants). The
//! core allocates the shim's containers of its objects (`ib_device`,
//! `ib_cq`, `ib_qp`, `ib_srq`, ...; `ib_mr` is allocated here, see
//! `mr.rs`). The data path (posts, polls), the
//! drains and the device, CQ, SRQ, MR, QP and AH verbs are `ib_device_ops`
//! built here for each driver type ([`IbAdapter`]) that the core calls
//! without the shim, finding the driver's objects through the shim's
//! containers; the other verbs, and those whose prototype has an enum
//! (kCFI), go through the shim's functions and a table of entry points,
//! `rdma_shim_ib_ops`, built here too. Each entry point turns the raw
//! pointers back into the driver's types: the device state (the `Arc` the
//! registration holds), and the objects the create verbs handed over with
//! `ForeignOwnable::into_foreign`, taken back exactly once by the
//! matching destroy verb.
//!
//! What the types guarantee: a verb of the driver gets `&self` for the
//! registered device and references to live objects of its own types; it
//! cannot see an object after its destroy verb, nor the device after
//! unregistration (which waits for every user). The requests and answers
//! of the verbs above (`DevAttr`, `SrqArgs`, `MrReq`, `QpInit`, `QpAttr`,
//! `AhIn`, ...) are Rust structs, read from and written to the core's own
//! structs in `ib/`.

use super::{raw, restrack};
use core::{
    fmt,
    marker::PhantomData,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering},
};
use kernel::{device::Device, error::to_result, ffi::c_void, prelude::*, sync::Arc};

// The entry points the shim calls.
pub(super) mod verbs;
use verbs::*;
// The numbers in the shim's containers, inline queries of the core.
mod containers;
use containers::{cap_eth_ah, pd_pdn, random_u32_inclusive, xrcd_xrcdn};
// The CQ verbs, called by the RDMA core directly.
mod cq;
// The device and port verbs, called by the RDMA core directly.
mod dev;
pub(crate) use dev::{DevAttr, PortAttr};
// The drain ops and the steps a driver's drain is made of.
mod drain;
// The MR verbs, called by the RDMA core directly (`alloc_mr` through the
// shim's trampoline).
pub(super) mod mr;
pub(crate) use mr::MrReq;
// The port's netdev: its reads, the LAG master it follows, the notifier.
mod netdev;
// The SRQ verbs, called by the RDMA core directly (`modify_srq` through
// the shim's trampoline).
mod srq;
pub(crate) use drain::Drain;
// The QP and AH verbs, ops of their own the core calls without the shim.
mod ah;
pub(super) use ah::ah_av;
pub(crate) use ah::{AddrVec, AhIn};
mod qp;
pub(super) use qp::modify_to_err;
// The PD and XRCD verbs, ops of their own the core calls without the shim.
mod pd;
// The GID verbs, likewise.
mod gid;
// The user context verbs, likewise.
mod uctx;
// The traits a driver implements, one per object kind.
mod ops;
// KUnit suite of the traits' tables.
#[cfg(kunit_build)]
mod kunit;
pub(crate) use ops::{
    AhOps, CounterOps, CqOps, DeviceOps, Driver, MrOps, NoObject, PdOps, PostResult, QpOps,
    RestrackOps, SrqOps, UcontextOps, XrcdOps,
};
pub(crate) use qp::{QpAttr, QpInit, QpQuery};
pub(crate) use srq::{SrqArgs, SrqAttr};

/// A new user context: the driver's state of it, its answer to the user
/// library, and what the layer keeps for it.
pub(crate) struct UctxNew<U, R> {
    /// The driver's state of the context.
    pub(crate) uctx: Arc<U>,
    /// The answer written to the udata.
    pub(crate) resp: R,
    /// The configuration agreed with the user library, kept with the
    /// context and handed to the verbs of its objects
    /// ([`QpInit::uctx_config`], [`QpAttr::uctx_config`]).
    pub(crate) config: u32,
    /// The context's doorbell page, mapped at mmap offset 0: its UAR index
    /// and bus address; `None`: no mapping.
    pub(crate) db_page: Option<(u32, u64)>,
}

/// GID types as the GMV table encodes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SgidType {
    /// RoCE v1.
    V1 = 0,
    /// RoCE v2 over IPv4.
    V2Ipv4 = 1,
    /// RoCE v2 over IPv6.
    V2Ipv6 = 2,
}

impl SgidType {
    /// The type of a GID of the RDMA core: RoCE v1, or for a RoCE v2
    /// (`IB_GID_TYPE_ROCE_UDP_ENCAP`) GID, IPv4 when it is an IPv4-mapped
    /// IPv6 address (`::ffff:a.b.c.d`, `ipv6_addr_v4mapped`), else IPv6.
    pub(crate) fn of(gid: &[u8; 16], roce_v2: bool) -> Self {
        if !roce_v2 {
            Self::V1
        } else if gid[..10].iter().all(|&b| b == 0) && gid[10..12] == [0xff, 0xff] {
            Self::V2Ipv4
        } else {
            Self::V2Ipv6
        }
    }
}

/// One GID table entry being added.
pub(crate) struct GidEntry<'a> {
    /// The GID.
    pub(crate) gid: &'a [u8; 16],
    /// Its type.
    pub(crate) ty: SgidType,
    /// VLAN id, 0xffff without VLAN.
    pub(crate) vlan_id: u16,
    /// Source MAC.
    pub(crate) mac: &'a [u8; 6],
}

/// Severity of a message printed through an [`IbLog`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogLevel {
    /// `ibdev_err`.
    Err,
    /// `ibdev_warn`.
    Warn,
    /// `ibdev_info`.
    Info,
}

/// Prints `args` at `level` against `dev` (`dev_err()`, `dev_warn()`,
/// `dev_info()`). Never inlined: the crate's `dev_*!` macros call this one
/// copy instead of the kernel crate's generic `Device::pr_*`, which was
/// inlined at every site.
#[inline(never)]
pub(crate) fn dev_log(level: LogLevel, dev: &Device, args: fmt::Arguments<'_>) {
    match level {
        LogLevel::Err => dev.pr_err(args),
        LogLevel::Warn => dev.pr_warn(args),
        LogLevel::Info => dev.pr_info(args),
    }
}

/// [`dev_log`] of C's most common message form, `"<what>, ret = <ret>.\n"`
/// (the `ret =` form of the crate's `hdev_*!` macros): one copy of its
/// formatting instead of the format arguments built at each of the ≈ 20
/// sites.
#[inline(never)]
pub(crate) fn dev_log_ret(level: LogLevel, dev: &Device, what: &str, ret: i32) {
    dev_log(
        level,
        dev,
        kernel::prelude::fmt!("{}, ret = {}.\n", what, ret),
    );
}

/// Where a driver's messages about its ib_device go: `ibdev_err()` and
/// friends (`<driver> <PCI name> hns_N: ...`) while the device is
/// registered; before, what the C driver's `ibdev_*` print for an
/// ib_device not yet named nor attached to its parent (`(null): ...`);
/// after, the function's PCI device.
///
/// The registration attaches the `ib_device` before registering it (the
/// core's own callbacks during registration already print against it) and
/// detaches it before freeing it; a message printed meanwhile is finished
/// first (`users`).
pub(crate) struct IbLog {
    dev: AtomicPtr<raw::ib_device>,
    users: AtomicUsize,
    attached_once: AtomicBool,
}

impl IbLog {
    /// A log with no ib_device yet.
    pub(crate) const fn new() -> Self {
        Self {
            dev: AtomicPtr::new(core::ptr::null_mut()),
            users: AtomicUsize::new(0),
            attached_once: AtomicBool::new(false),
        }
    }

    /// [`Self::print`] of C's `"<what>, ret = <ret>.\n"` (the `ret =` form
    /// of the `ibdev_*!` macros), formatted here instead of at each of the
    /// ≈ 50 sites.
    #[inline(never)]
    pub(crate) fn print_ret(&self, level: LogLevel, dev: &Device, what: &str, ret: i32) {
        self.print(level, dev, format_args!("{}, ret = {}.\n", what, ret));
    }

    /// Prints `args` at `level` against the ib_device, or against `dev`
    /// while there is none. Never inlined: every `ibdev_err!` site calls
    /// this one copy (inlined, it cost ≈ 200 bytes of `.text` per site).
    #[inline(never)]
    pub(crate) fn print(&self, level: LogLevel, dev: &Device, args: fmt::Arguments<'_>) {
        self.users.fetch_add(1, Ordering::SeqCst);
        let p = self.dev.load(Ordering::SeqCst);
        if p.is_null() && !self.attached_once.load(Ordering::SeqCst) {
            let fmt = match level {
                LogLevel::Err => c"\x013(null): %pA",
                LogLevel::Warn => c"\x014(null): %pA",
                LogLevel::Info => c"\x016(null): %pA",
            };
            // SAFETY: a format with a level prefix and one "%pA", which
            // takes a pointer to `fmt::Arguments`.
            unsafe {
                kernel::bindings::_printk(
                    fmt.as_char_ptr(),
                    core::ptr::from_ref(&args).cast::<c_void>(),
                )
            };
        } else if p.is_null() {
            dev_log(level, dev, args);
        } else {
            let f = match level {
                LogLevel::Err => raw::ibdev_err,
                LogLevel::Warn => raw::ibdev_warn,
                LogLevel::Info => raw::ibdev_info,
            };
            // SAFETY: `p` is the attached ib_device, not freed before
            // `detach` has seen `users` drop to zero (the increment above
            // comes before the load, both sequentially consistent). "%pA"
            // takes a pointer to `fmt::Arguments`.
            unsafe {
                f(
                    p,
                    c"%pA".as_char_ptr(),
                    core::ptr::from_ref(&args).cast::<c_void>(),
                )
            };
        }
        self.users.fetch_sub(1, Ordering::SeqCst);
    }

    fn attach(&self, p: *mut raw::ib_device) {
        self.attached_once.store(true, Ordering::SeqCst);
        self.dev.store(p, Ordering::SeqCst);
    }

    /// Stops printing against the ib_device and waits for messages under
    /// way, so the caller may free it.
    fn detach(&self) {
        self.dev.store(core::ptr::null_mut(), Ordering::SeqCst);
        while self.users.load(Ordering::SeqCst) != 0 {
            core::hint::spin_loop();
        }
    }
}

/// The verbs whose failures the layer reports ([`DeviceOps::verb_failed`]),
/// for drivers that count them (C's software counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailedVerb {
    /// `create_qp`.
    CreateQp,
    /// `modify_qp`.
    ModifyQp,
    /// `create_cq`.
    CreateCq,
    /// `modify_cq`.
    ModifyCq,
    /// `create_srq`.
    CreateSrq,
    /// `modify_srq`.
    ModifySrq,
    /// `alloc_xrcd`.
    AllocXrcd,
    /// `reg_user_mr`.
    RegUserMr,
    /// `rereg_user_mr`.
    ReregUserMr,
    /// `create_ah`.
    CreateAh,
    /// `mmap`.
    Mmap,
    /// `alloc_ucontext`.
    AllocUcontext,
}

/// A user verb's request as read from its udata (with the driver's request
/// type `T`), with the result of reading it and the udata's lengths. It
/// dereferences to the request.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UdataReq<T> {
    /// What reading the request returned (0 or a negative errno): the
    /// driver reports it where C does. The request is all zero when the
    /// copy failed, and kept as read when only its `comp_mask` was refused.
    pub(crate) copy_ret: i32,
    /// The request's length (saturated to `u32`).
    pub(crate) inlen: u32,
    /// The response buffer's length (saturated to `u32`).
    pub(crate) outlen: u32,
    /// The request.
    pub(crate) req: T,
}

impl<T> core::ops::Deref for UdataReq<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.req
    }
}

/// What a new CQ tells the core, and the driver's answer `R` to the user
/// library (written for a user CQ only).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CqOut<R> {
    /// Entries (a power of two); the core's `cqe` is one less.
    pub(crate) depth: u32,
    /// The CQ number.
    pub(crate) cqn: u32,
    /// The answer.
    pub(crate) resp: R,
}
/// `IB_SRQT_XRC`: an SRQ of an XRC domain, completing to its own CQ.
pub(crate) const SRQT_XRC: u32 = raw::ib_srq_type_IB_SRQT_XRC;

/// `IB_MR_REREG_TRANS`.
pub(crate) const MR_REREG_TRANS: u32 = raw::ib_mr_rereg_flags_IB_MR_REREG_TRANS;
/// `IB_MR_REREG_PD`.
pub(crate) const MR_REREG_PD: u32 = raw::ib_mr_rereg_flags_IB_MR_REREG_PD;
/// `IB_MR_REREG_ACCESS`.
pub(crate) const MR_REREG_ACCESS: u32 = raw::ib_mr_rereg_flags_IB_MR_REREG_ACCESS;
/// `IB_MR_TYPE_MEM_REG`: the only type of `ib_alloc_mr` this driver has.
pub(crate) const MR_TYPE_MEM_REG: u32 = raw::ib_mr_type_IB_MR_TYPE_MEM_REG;

/// Builds the shim's table of ib_device entry points for driver `D`.
pub(super) struct IbAdapter<D>(PhantomData<fn() -> D>);

impl<D: Driver> IbAdapter<D> {
    /// The ops the RDMA core calls directly, with no shim function between
    /// it and the driver: the data path (the calls made per WR and per
    /// poll) and the drains (which post on that path and need no C: the
    /// drain WR's `done` is Rust's too).
    const DATAPATH: raw::ib_device_ops = raw::ib_device_ops {
        post_send: Some(post_send::<D>),
        post_recv: Some(post_recv::<D>),
        poll_cq: Some(poll_cq::<D>),
        drain_sq: if D::HAS_DRAIN {
            Some(drain::drain_sq::<D>)
        } else {
            None
        },
        drain_rq: if D::HAS_DRAIN {
            Some(drain::drain_rq::<D>)
        } else {
            None
        },
        // SAFETY: every other field of `ib_device_ops` is an optional
        // function pointer, a number or a pointer, for which zero means
        // "not set".
        ..unsafe { core::mem::zeroed() }
    };

    /// The SRQ's data-path op, set only on devices with SRQs.
    const SRQ_DATAPATH: raw::ib_device_ops = raw::ib_device_ops {
        post_srq_recv: Some(post_srq_recv::<D>),
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// The CQ verbs (creation, destruction, moderation), called by the
    /// RDMA core directly.
    const CQ: raw::ib_device_ops = raw::ib_device_ops {
        create_cq: Some(cq::create_cq::<D>),
        destroy_cq: Some(cq::destroy_cq::<D>),
        modify_cq: if D::HAS_MODIFY_CQ {
            Some(cq::modify_cq::<D>)
        } else {
            None
        },
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// The SRQ verbs but `modify_srq` (which the shim's trampoline calls
    /// through [`Self::OPS`]), set only on devices with SRQs.
    const SRQ: raw::ib_device_ops = raw::ib_device_ops {
        create_srq: Some(srq::create_srq::<D>),
        destroy_srq: Some(srq::destroy_srq::<D>),
        query_srq: Some(srq::query_srq::<D>),
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// Refuses at build time a driver with kernel MRs (`get_dma_mr`) but
    /// no `reg_user_mr`: the RDMA core offers a device to kernel clients
    /// (`kverbs_provider`) only when every op of its mandatory list is
    /// set, and says nothing when one is missing, so such a device would
    /// register and then be skipped by every ULP. A provider without user
    /// MRs implements `reg_user_mr` as `Err(EOPNOTSUPP)`.
    const KVERBS_MR: () = assert!(
        !D::HAS_GET_DMA_MR || D::HAS_REG_USER_MR,
        "a driver with get_dma_mr must implement reg_user_mr (the core's mandatory list)"
    );

    /// The MR verbs every device has.
    const MR: raw::ib_device_ops = {
        let () = Self::KVERBS_MR;
        Self::MR_OPS
    };

    /// [`Self::MR`]'s table.
    const MR_OPS: raw::ib_device_ops = raw::ib_device_ops {
        get_dma_mr: if D::HAS_GET_DMA_MR {
            Some(mr::get_dma_mr::<D>)
        } else {
            None
        },
        reg_user_mr: if D::HAS_REG_USER_MR {
            Some(mr::reg_user_mr::<D>)
        } else {
            None
        },
        dereg_mr: if D::HAS_GET_DMA_MR || D::HAS_REG_USER_MR || D::HAS_ALLOC_MR {
            Some(mr::dereg_mr::<D>)
        } else {
            None
        },
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// User MR re-registration, set only on devices that offer it.
    const MR_REREG: raw::ib_device_ops = raw::ib_device_ops {
        rereg_user_mr: Some(mr::rereg_user_mr::<D>),
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// The mapping of fast-register MRs, set only on devices that have
    /// them (whose `alloc_mr` the shim's trampoline calls through
    /// [`Self::OPS`]).
    const MR_FRMR: raw::ib_device_ops = raw::ib_device_ops {
        map_mr_sg: Some(mr::map_mr_sg::<D>),
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// The device and port verbs.
    const DEV: raw::ib_device_ops = raw::ib_device_ops {
        query_device: Some(dev::query_device::<D>),
        query_port: Some(dev::query_port::<D>),
        get_port_immutable: Some(dev::port_immutable),
        query_pkey: Some(dev::query_pkey),
        modify_device: Some(dev::modify_device),
        get_dev_fw_str: if D::HAS_FW_VER {
            Some(dev::fw_str::<D>)
        } else {
            None
        },
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// The hardware counters' verbs (set when the device has counters).
    const HW_STATS: raw::ib_device_ops = raw::ib_device_ops {
        alloc_hw_port_stats: Some(dev::alloc_port_stats),
        get_hw_stats: Some(dev::get_hw_stats::<D>),
        // SAFETY: as for `DATAPATH`.
        ..unsafe { core::mem::zeroed() }
    };

    /// The entry points, each instantiated for `D`.
    const OPS: raw::rdma_shim_ib_ops = raw::rdma_shim_ib_ops {
        datapath: &Self::DATAPATH,
        srq_datapath: &Self::SRQ_DATAPATH,
        qp_ah: &qp::QpAhTable::<D>::OPS,
        dev: &Self::DEV,
        cq: &Self::CQ,
        srq: &Self::SRQ,
        mr: &Self::MR,
        mr_rereg: &Self::MR_REREG,
        mr_frmr: &Self::MR_FRMR,
        pd: &pd::PdTable::<D>::PD,
        xrcd: &pd::PdTable::<D>::XRCD,
        gid: &gid::GidTable::<D>::OPS,
        uctx: &uctx::UctxTable::<D>::OPS,
        res: &restrack::ResTable::<D>::OPS,
        res_srq: &restrack::ResTable::<D>::SRQ,
        req_notify_cq: Some(req_notify_cq::<D>),
        mmap_refused: Some(mmap_refused::<D>),
        mmap_done: Some(mmap_done::<D>),
        hw_stats: &Self::HW_STATS,
        alloc_mr: Some(mr::alloc_mr::<D>),
        modify_srq: Some(srq::modify_srq::<D>),
    };

    /// [`Self::OPS`] as a static reference.
    const fn ops() -> &'static raw::rdma_shim_ib_ops {
        &Self::OPS
    }
}

/// A net device, by identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NetDev(*mut kernel::bindings::net_device);

// SAFETY: an identity only; the pointer is never dereferenced in Rust.
unsafe impl Send for NetDev {}
// SAFETY: as above.
unsafe impl Sync for NetDev {}

impl NetDev {
    /// The raw pointer, for the shim.
    pub(in crate::rdma) fn as_raw(self) -> *mut kernel::bindings::net_device {
        self.0
    }

    /// `p`, or `None` for null.
    pub(in crate::rdma) fn from_raw(p: *mut kernel::bindings::net_device) -> Option<Self> {
        (!p.is_null()).then_some(Self(p))
    }
}

/// Options of a registration.
pub(crate) struct IbParams {
    /// The device's name, a format with one `%d` the core numbers
    /// (`ib_register_device`).
    pub(crate) name: &'static CStr,
    /// The node type (`enum rdma_node_type`, e.g. [`NODE_IB_CA`]).
    pub(crate) node_type: u32,
    /// The node GUID, in network order.
    pub(crate) node_guid: [u8; 8],
    /// Completion vectors.
    pub(crate) num_comp_vectors: u32,
    /// The reserved lkey of local DMA.
    pub(crate) local_dma_lkey: u32,
    /// The port's core capabilities (`RDMA_CORE_PORT_*`, what
    /// `get_port_immutable` answers).
    pub(crate) core_cap_flags: u32,
    /// The largest MAD the port takes.
    pub(crate) max_mad_size: u32,
    /// The port's one P_Key (`query_pkey` of index 0).
    pub(crate) pkey: u16,
    /// XRC domains supported.
    pub(crate) xrc: bool,
    /// SRQs supported.
    pub(crate) srq: bool,
    /// The hardware counters exposed (`rdma statistic`), if any.
    pub(crate) hw_stats: Option<StatTable>,
    /// Fast-register MRs supported.
    pub(crate) frmr: bool,
    /// User MRs can be re-registered (`rereg_user_mr` offered).
    pub(crate) rereg: bool,
    /// The engine can bond (what another function's bond group reads of
    /// this device).
    pub(crate) bond_cap: bool,
    /// A VF.
    pub(crate) vf: bool,
    /// Register as the bonded device `hns_bond_%d` of this upper: `(upper,
    /// active-backup, the active slave of a hashing bond)`.
    pub(crate) bond: Option<(NetDev, bool, Option<NetDev>)>,
}

/// A netdev event as the device's notifier read it (`netdev.rs`).
pub(crate) struct NetdevEvent<'a> {
    /// `NETDEV_*`.
    pub(super) cmd: u32,
    /// The device is the port's own netdev.
    pub(super) ours: bool,
    /// The port follows a LAG master (asked only for the port's netdev or
    /// a LAG master, as nothing else can be either).
    pub(super) bonded: bool,
    /// The device is that master.
    pub(super) upper: bool,
    /// The device is a LAG master (`netif_is_lag_master`).
    pub(super) lag_master: bool,
    /// The device's state as a port's (`enum ib_port_state`).
    pub(super) state: u32,
    /// The device's MAC address.
    pub(super) addr: [u8; 6],
    /// Valid for the notifier call only.
    pub(super) _call: PhantomData<&'a ()>,
}

impl NetdevEvent<'_> {
    /// What happened (`NETDEV_*`).
    pub(crate) fn cmd(&self) -> u32 {
        self.cmd
    }

    /// The device is the port's own netdev.
    pub(crate) fn ours(&self) -> bool {
        self.ours
    }

    /// The port follows a bond's upper device.
    pub(crate) fn bonded(&self) -> bool {
        self.bonded
    }

    /// The device is the bond upper the port follows.
    pub(crate) fn upper(&self) -> bool {
        self.upper
    }

    /// The device is a LAG master (`netif_is_lag_master`).
    pub(crate) fn lag_master(&self) -> bool {
        self.lag_master
    }

    /// The device's state as a port's (`enum ib_port_state`).
    pub(crate) fn state(&self) -> u32 {
        self.state
    }

    /// The device's MAC address.
    pub(crate) fn addr(&self) -> &[u8; 6] {
        &self.addr
    }
}

/// The port's LAG state record and its events, during a netdev event.
///
/// # Invariants
///
/// `ibdev` is a registered device, for `'a`.
pub(crate) struct PortEvents<'a> {
    ibdev: *mut raw::ib_device,
    _p: PhantomData<&'a raw::ib_device>,
}

impl PortEvents<'_> {
    /// The port events of `ibdev`.
    ///
    /// # Safety
    ///
    /// `ibdev` is registered for the lifetime chosen.
    pub(super) unsafe fn new(ibdev: *mut raw::ib_device) -> Self {
        // INVARIANT: per the function's contract.
        Self {
            ibdev,
            _p: PhantomData,
        }
    }

    /// Records `state` as the port's last LAG state: whether it changed.
    pub(crate) fn swap_last_state(&self, state: u32) -> bool {
        // SAFETY: registered (type invariant).
        unsafe { raw::rdma_shim_swap_last_port_state(self.ibdev, state) }
    }

    /// Dispatches port event `event` (`enum ib_event_type`) on port 1.
    pub(crate) fn dispatch(&self, event: u32) {
        let mut ev = raw::ib_event {
            device: self.ibdev,
            event,
            ..Default::default()
        };
        // SAFETY: `port_num` is the element of a port event.
        unsafe { *ev.element.port_num.as_mut() = 1 };
        // SAFETY: registered (type invariant); `ev` lives for the call.
        unsafe { raw::ib_dispatch_event(&ev) }
    }
}

/// The descriptions of `N` hardware counters (`struct rdma_stat_desc`),
/// built at compile time from their names: a `static` of them outlives
/// every device whose counters they describe, as the RDMA core needs.
pub(crate) struct StatDescs<const N: usize>([raw::rdma_stat_desc; N]);

// SAFETY: never written after construction; the names it points to are
// `'static` C strings and its `priv_` pointers are null.
unsafe impl<const N: usize> Sync for StatDescs<N> {}

impl<const N: usize> StatDescs<N> {
    /// The descriptions of the counters named `names` (`N` of them: the
    /// table's length is the caller's count), in that order, with no
    /// flags.
    pub(crate) const fn new(names: &[&'static CStr]) -> Self {
        let mut d = [raw::rdma_stat_desc {
            name: core::ptr::null(),
            flags: 0,
            priv_: core::ptr::null(),
        }; N];
        let mut i = 0;
        while i < N && i < names.len() {
            // `as_char_ptr` is no `const fn`; the cast gives the kernel's
            // (unsigned) `char` all the same.
            #[allow(clippy::disallowed_methods)]
            let name = names[i].as_ptr().cast();
            d[i].name = name;
            i += 1;
        }
        Self(d)
    }

    /// The table to register (see [`IbParams::hw_stats`]).
    pub(crate) const fn table(&'static self) -> StatTable {
        StatTable(&self.0)
    }
}

/// A static table of counter descriptions (see [`StatDescs`]).
#[derive(Clone, Copy)]
pub(crate) struct StatTable(pub(super) &'static [raw::rdma_stat_desc]);

/// A registered ib_device of driver `D`; dropping it unregisters and
/// frees it.
///
/// # Invariants
///
/// `ibdev` was allocated by `rdma_shim_alloc_ibdev` with `rs` pointing to
/// `drv`'s data and the ops of [`IbAdapter<D>`], and is registered.
pub(crate) struct IbRegistration<D: Driver> {
    ibdev: *mut raw::ib_device,
    _drv: Arc<D>,
    watch: Pin<KBox<netdev::Watch<D>>>,
}

// SAFETY: the ib_device is only used through the RDMA core's thread-safe
// entry points; the driver state is `Sync`.
unsafe impl<D: Driver> Send for IbRegistration<D> {}
// SAFETY: as above.
unsafe impl<D: Driver> Sync for IbRegistration<D> {}

impl<D: Driver> IbRegistration<D> {
    /// Allocates and registers a software device named after
    /// [`IbParams::name`], its port on the loopback netdev `lo` (whose
    /// addresses give its GIDs), with no parent and
    /// no DMA device: the RDMA core and kernel callers then put kernel
    /// virtual addresses in its SGEs, which [`VirtDma`] (returned with it)
    /// reads and writes. rdma-core matches its user-space provider by
    /// `driver_id` (`RDMA_DRIVER_*`). No user QP can be created on it (see
    /// [`VirtDma`]).
    #[cfg(rdma_soft)]
    pub(crate) fn register_soft(
        drv: Arc<D>,
        p: &IbParams,
        driver_id: u32,
    ) -> Result<(Self, VirtDma)> {
        let reg = raw::rdma_shim_reg {
            // The initial namespace's `lo`, never unregistered.
            // SAFETY: no precondition.
            netdev: unsafe { raw::rdma_shim_loopback_netdev() }.cast(),
            driver_id,
            virt_dma: true,
            ..Self::reg_of(p)
        };
        // INVARIANT: registered with no DMA device.
        Ok((Self::register_reg(drv, &reg)?, VirtDma(())))
    }

    /// What `p` and the driver's implemented ops say of a registration;
    /// the bus's part (parent, netdev, owner, bonding) left empty.
    pub(super) fn reg_of(p: &IbParams) -> raw::rdma_shim_reg {
        // Counters only if the driver reads them.
        let stats = p.hw_stats.filter(|_| D::HAS_QUERY_COUNTERS);
        raw::rdma_shim_reg {
            name: p.name.as_char_ptr(),
            node_type: p.node_type,
            node_guid: p.node_guid,
            parent: core::ptr::null_mut(),
            netdev: core::ptr::null_mut(),
            driver_id: 0,
            no_driver_id_binding: false,
            virt_dma: false,
            num_comp_vectors: p.num_comp_vectors,
            local_dma_lkey: p.local_dma_lkey,
            core_cap_flags: p.core_cap_flags,
            max_mad_size: p.max_mad_size,
            pkey: p.pkey,
            xrc: p.xrc && D::HAS_ALLOC_XRCD,
            srq: p.srq && D::HAS_CREATE_SRQ,
            stats: stats.map_or(core::ptr::null(), |t| t.0.as_ptr()),
            // CAST: a table of a few dozen counters.
            num_stats: stats.map_or(0, |t| t.0.len() as u32),
            frmr: p.frmr && D::HAS_ALLOC_MR && D::HAS_MAP_MR_SG_BEGIN,
            rereg: p.rereg && D::HAS_REREG_USER_MR,
            owner: core::ptr::null_mut(),
            bond_cap: false,
            vf: false,
            bond_ab: false,
            bond_active: core::ptr::null_mut(),
        }
    }

    /// Allocates the device of `drv` and registers it as `reg` says.
    pub(super) fn register_reg(drv: Arc<D>, reg: &raw::rdma_shim_reg) -> Result<Self> {
        let rs: *const D = Arc::as_ptr(&drv);
        // SAFETY: `rs` stays valid while the registration (holding `drv`)
        // exists, and the device is unregistered before it is dropped; the
        // ops table is static.
        let ibdev =
            unsafe { raw::rdma_shim_alloc_ibdev(rs.cast_mut().cast(), IbAdapter::<D>::ops()) };
        if ibdev.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: a device of driver `D`; the notifier is registered only
        // once the device is (`watch_netdev`) and unregistered before it
        // is (`drop`).
        let watch = match KBox::pin_init(unsafe { netdev::Watch::<D>::new(ibdev) }, GFP_KERNEL) {
            Ok(w) => w,
            Err(e) => {
                // SAFETY: allocated above, never registered.
                unsafe { raw::rdma_shim_dealloc_ibdev(ibdev) };
                return Err(e);
            }
        };
        drv.ib_log().attach(ibdev);
        // SAFETY: `ibdev` is freshly allocated; `reg` points to live objects.
        let ret = unsafe { raw::rdma_shim_register_ibdev(ibdev, reg) };
        if ret != 0 {
            drv.ib_log().detach();
            // SAFETY: allocated above, never registered.
            unsafe { raw::rdma_shim_dealloc_ibdev(ibdev) };
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: allocated with `rs` = `drv` and registered.
        Ok(Self {
            ibdev,
            _drv: drv,
            watch,
        })
    }
}

#[cfg(rdma_soft)]
/// Access to the memory a kernel work request's SGEs name, on a device
/// registered with no DMA device ([`IbRegistration::register_soft`]):
/// there the RDMA core's `ib_dma_*` mappings are the buffers' kernel
/// virtual addresses, and the SGE addresses of every post are such
/// addresses (that registration refuses user QPs, whose posts through
/// uverbs would carry user addresses).
///
/// # Invariants
///
/// Made only by [`IbRegistration::register_soft`].
#[derive(Clone, Copy)]
pub(crate) struct VirtDma(());

#[cfg(rdma_soft)]
/// A buffer an SGE of a kernel work request names on a [`VirtDma`]
/// device: its kernel virtual address and length, kept from the post to
/// the work request's completion.
///
/// # Invariants
///
/// `addr` and `len` are those of an SGE of a work request posted to a
/// device registered with no DMA device by a kernel caller.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VirtSeg {
    addr: usize,
    len: usize,
}

#[cfg(rdma_soft)]
impl VirtSeg {
    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(rdma_soft)]
impl VirtDma {
    /// The buffer `sge` names.
    pub(crate) fn seg(&self, sge: &super::Sge) -> VirtSeg {
        // INVARIANT: an SGE of a post to this device (`self` exists only
        // for one registered without a DMA device).
        // CAST: a kernel virtual address and a u32 length fit usize.
        VirtSeg {
            addr: sge.addr() as usize,
            len: sge.length() as usize,
        }
    }

    /// Copies `len` bytes from offset `src_off` of `src` to offset
    /// `dst_off` of `dst`; `EINVAL` if either range is outside its
    /// segment (nothing is copied then).
    ///
    /// The caller copies only between the segments of work requests that
    /// are still outstanding (posted, not yet completed): the kernel
    /// caller owns a buffer again once its work request completes.
    pub(crate) fn copy(
        &self,
        dst: &VirtSeg,
        dst_off: usize,
        src: &VirtSeg,
        src_off: usize,
        len: usize,
    ) -> Result {
        let in_seg = |s: &VirtSeg, off: usize| off.checked_add(len).is_some_and(|e| e <= s.len);
        if !in_seg(dst, dst_off) || !in_seg(src, src_off) {
            return Err(EINVAL);
        }
        if len == 0 {
            return Ok(());
        }
        // SAFETY: both segments are buffers of kernel work requests on a
        // device without a DMA device (type invariants of `VirtSeg`):
        // kernel virtual addresses of `len` bytes, mapped for the device
        // (`ib_dma_map_*`) until the work request completes, which the
        // caller has not reported yet; the ranges are inside them
        // (checked above). `copy` tolerates overlap (a QP may send from
        // the buffer it receives into).
        unsafe {
            core::ptr::copy(
                (src.addr + src_off) as *const u8,
                (dst.addr + dst_off) as *mut u8,
                len,
            )
        };
        Ok(())
    }
}

impl<D: Driver> IbRegistration<D> {
    /// The registered device, for the bus bindings' entry points.
    pub(super) fn ibdev(&self) -> *mut raw::ib_device {
        self.ibdev
    }

    /// Cuts every user mapping of the device's pages
    /// (`rdma_user_mmap_disassociate`).
    pub(crate) fn disassociate_mmaps(&self) {
        // SAFETY: registered (type invariant).
        unsafe { raw::rdma_shim_disassociate_mmaps(self.ibdev) }
    }

    /// Reports every netdev event to [`DeviceOps::netdev_event`] from
    /// now on, until the registration drops (a netdevice notifier, as C's
    /// `iboe.nb`). Calling it again does nothing.
    ///
    /// # Errors
    ///
    /// The errno of `register_netdevice_notifier`.
    pub(crate) fn watch_netdev(&self) -> Result {
        self.watch.register()
    }
}

impl<D: Driver> IbRegistration<D> {
    /// Points the port at the bond's active slave (`hns_roce_set_bond_netdev`;
    /// which one: [`lag_port_netdev`]), unless it is there already; in
    /// active-backup the old netdev's GIDs are then deleted and the port
    /// rescanned.
    ///
    /// # Errors
    ///
    /// The errno of `ib_device_set_netdev`.
    pub(crate) fn bond_set_netdev(
        &self,
        upper: NetDev,
        ab: bool,
        active: Option<NetDev>,
    ) -> Result {
        // SAFETY: registered (type invariant), so a device of this layer.
        let own = unsafe { dev::sdev(self.ibdev) }.netdev;
        // The function's netdev, known to the device since its
        // registration (a live one: the function is attached).
        let own = NetDev::from_raw(own.cast()).ok_or(ENODEV)?;
        let port = lag_port_netdev(own, upper, ab, active);
        // SAFETY: registered (type invariant); `port` is a live net
        // device (the group's upper's slave, or the function's own).
        to_result(unsafe { raw::rdma_shim_bond_set_netdev(self.ibdev, port.as_raw().cast(), ab) })
    }
}

/// The netdev a port following LAG `upper` is set to: in active-backup
/// (`ab`) the bonding driver's active slave of `upper` when it is a bond
/// (a team master is not read as one, unlike the C driver), else
/// `active`; `own` (the function's netdev) when there is none.
///
/// `upper` and `active` are live net devices (the group's upper, a
/// member's netdev).
pub(super) fn lag_port_netdev(
    own: NetDev,
    upper: NetDev,
    ab: bool,
    active: Option<NetDev>,
) -> NetDev {
    if !ab {
        return active.unwrap_or(own);
    }
    let mut bond_active = core::ptr::null_mut();
    // SAFETY: `upper` is live (see above); the slave is read under RCU by
    // the shim and kept as an identity only.
    let is_bond =
        unsafe { raw::rdma_shim_bond_active_slave(upper.as_raw().cast(), &mut bond_active) };
    let active = if is_bond {
        NetDev::from_raw(bond_active.cast())
    } else {
        active
    };
    active.unwrap_or(own)
}

impl<D: Driver> Drop for IbRegistration<D> {
    fn drop(&mut self) {
        // No netdev event reaches the driver once this returns (C
        // unregisters its notifier first too).
        self.watch.unregister();
        // SAFETY: registered (type invariant); unregistering waits for every
        // user, after which nobody calls the ops with `rs` any more.
        unsafe { raw::rdma_shim_unregister_ibdev(self.ibdev) };
        self._drv.ib_log().detach();
        // SAFETY: unregistered above; nothing prints against it any more.
        unsafe { raw::rdma_shim_dealloc_ibdev(self.ibdev) };
    }
}

#[cfg(rdma_soft)]
/// `RDMA_DRIVER_SIW`: the driver id of rdma-core's siw provider.
pub(crate) const DRIVER_SIW: u32 = raw::rdma_driver_id_RDMA_DRIVER_SIW;
#[cfg(rdma_soft)]
/// `RDMA_CORE_CAP_PROT_ROCE`: the port speaks RoCE.
pub(crate) const CORE_CAP_PROT_ROCE: u32 = raw::RDMA_CORE_CAP_PROT_ROCE;
#[cfg(rdma_soft)]
/// `RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP`: and RoCE v2.
pub(crate) const CORE_CAP_PROT_ROCE_UDP_ENCAP: u32 = raw::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP;
#[cfg(rdma_soft)]
/// `RDMA_CORE_CAP_ETH_AH`: its address handles are Ethernet ones.
pub(crate) const CORE_CAP_ETH_AH: u32 = raw::RDMA_CORE_CAP_ETH_AH;
#[cfg(rdma_soft)]
/// `IB_QPS_RESET`.
pub(crate) const QPS_RESET: u32 = raw::ib_qp_state_IB_QPS_RESET;
#[cfg(rdma_soft)]
/// `IB_QPS_RTR`.
pub(crate) const QPS_RTR: u32 = raw::ib_qp_state_IB_QPS_RTR;
#[cfg(rdma_soft)]
/// `IB_QPS_RTS`.
pub(crate) const QPS_RTS: u32 = raw::ib_qp_state_IB_QPS_RTS;
#[cfg(rdma_soft)]
/// `IB_QPS_ERR`.
pub(crate) const QPS_ERR: u32 = raw::ib_qp_state_IB_QPS_ERR;
#[cfg(rdma_soft)]
/// `IB_QPT_RC`.
pub(crate) const QPT_RC: u32 = raw::ib_qp_type_IB_QPT_RC;
#[cfg(rdma_soft)]
/// `IB_SIGNAL_ALL_WR`.
pub(crate) const SIGNAL_ALL_WR: u32 = raw::ib_sig_type_IB_SIGNAL_ALL_WR;

/// `RDMA_NODE_IB_CA`: a channel adapter.
pub(crate) const NODE_IB_CA: u32 = raw::RDMA_NODE_IB_CA;

/// The EUI-64 of a MAC address (`addrconf_addr_eui48`): what a RoCE
/// device whose port is a netdev gives as its node GUID.
pub(crate) fn eui48_guid(mac: &[u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 2,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

/// `IB_MTU_256`.
pub(crate) const MTU_256: u32 = raw::ib_mtu_IB_MTU_256;
#[cfg(rdma_soft)]
/// `IB_MTU_4096`.
pub(crate) const MTU_4096: u32 = raw::ib_mtu_IB_MTU_4096;
/// `IB_PORT_CM_SUP`.
pub(crate) const PORT_CM_SUP: u32 = raw::ib_port_capability_mask_bits_IB_PORT_CM_SUP;
/// `IB_PORT_REINIT_SUP`.
pub(crate) const PORT_REINIT_SUP: u32 = raw::ib_port_capability_mask_bits_IB_PORT_REINIT_SUP;
/// `IB_PORT_VENDOR_CLASS_SUP`.
pub(crate) const PORT_VENDOR_CLASS_SUP: u32 =
    raw::ib_port_capability_mask_bits_IB_PORT_VENDOR_CLASS_SUP;
/// `IB_PORT_BOOT_MGMT_SUP`.
pub(crate) const PORT_BOOT_MGMT_SUP: u32 = raw::ib_port_capability_mask_bits_IB_PORT_BOOT_MGMT_SUP;
/// `RDMA_CORE_PORT_IBA_ROCE`.
pub(crate) const CORE_PORT_IBA_ROCE: u32 = raw::RDMA_CORE_PORT_IBA_ROCE;
/// `RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP`.
pub(crate) const CORE_PORT_IBA_ROCE_UDP_ENCAP: u32 = raw::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
/// `IB_MGMT_MAD_SIZE`.
pub(crate) const MGMT_MAD_SIZE: u32 = raw::IB_MGMT_MAD_SIZE;
/// `IB_PORT_DOWN`.
pub(crate) const PORT_DOWN: u32 = raw::ib_port_state_IB_PORT_DOWN;
/// `IB_EVENT_PORT_ERR`.
pub(crate) const EVENT_PORT_ERR: u32 = raw::ib_event_type_IB_EVENT_PORT_ERR;
/// `IB_EVENT_PORT_ACTIVE`.
pub(crate) const EVENT_PORT_ACTIVE: u32 = raw::ib_event_type_IB_EVENT_PORT_ACTIVE;
/// `NETDEV_UP`.
pub(crate) const NETDEV_UP: u32 = raw::netdev_cmd_NETDEV_UP;
/// `NETDEV_DOWN`.
pub(crate) const NETDEV_DOWN: u32 = raw::netdev_cmd_NETDEV_DOWN;
/// `NETDEV_CHANGE`.
pub(crate) const NETDEV_CHANGE: u32 = raw::netdev_cmd_NETDEV_CHANGE;
/// `NETDEV_REGISTER`.
pub(crate) const NETDEV_REGISTER: u32 = raw::netdev_cmd_NETDEV_REGISTER;
/// `NETDEV_CHANGEADDR`.
pub(crate) const NETDEV_CHANGEADDR: u32 = raw::netdev_cmd_NETDEV_CHANGEADDR;
/// `IB_PORT_ACTIVE`.
pub(crate) const PORT_ACTIVE: u32 = raw::ib_port_state_IB_PORT_ACTIVE;
/// `IB_PORT_PHYS_STATE_LINK_UP`.
pub(crate) const PORT_PHYS_STATE_LINK_UP: u32 = raw::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP;
/// `IB_PORT_PHYS_STATE_DISABLED`.
pub(crate) const PORT_PHYS_STATE_DISABLED: u32 =
    raw::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED;
/// `IB_DEVICE_PORT_ACTIVE_EVENT`.
pub(crate) const DEVICE_PORT_ACTIVE_EVENT: u64 =
    raw::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as u64;
/// `IB_DEVICE_RC_RNR_NAK_GEN`.
pub(crate) const DEVICE_RC_RNR_NAK_GEN: u64 =
    raw::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as u64;
/// `IB_DEVICE_XRC`.
pub(crate) const DEVICE_XRC: u64 = raw::ib_device_cap_flags_IB_DEVICE_XRC as u64;
/// `IB_DEVICE_MEM_MGT_EXTENSIONS`.
pub(crate) const DEVICE_MEM_MGT_EXTENSIONS: u64 =
    raw::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as u64;
