// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! What an RDMA driver implements: one `#[vtable]` trait per object kind.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//! (`struct ib_device_ops`).
//!
//! Each trait is implemented by the driver's device type (the state an
//! [`IbRegistration`](super::IbRegistration) holds), and each object kind
//! names its object type as an associated type ([`CqOps::Cq`],
//! [`QpOps::Qp`], [`MrOps::Mr`], [`SrqOps::Srq`],
//! [`UcontextOps::Ucontext`]). [`Driver`] ties them together: a type that
//! implements every one of them is a driver the layer can register.
//!
//! `#[vtable]` gives every method a `HAS_*` constant. The layer builds each
//! kind's `ib_device_ops` entries from them: an op the driver does not
//! implement is left NULL, and an optional kind none of whose ops is
//! implemented is not offered (its registration flag is off whatever the
//! driver's capabilities say). A driver without SRQs, XRC domains, AHs,
//! counters, restrack details or MRs writes an empty `#[vtable] impl` of
//! that kind (with [`NoObject`] as the object type where there is one).
//! The methods every driver must write have no default; the others have
//! defaults that are never called through the tables.
//!
//! All calls are monomorphized: the entry points are generic over the
//! driver type and call these methods directly.
//!
//! A driver's user ABI is its own: each kind whose verbs carry driver data
//! names the request and answer types as associated types
//! ([`UcontextOps::UctxReq`], [`CqOps::CqResp`], ...): plain-byte types
//! (`FromBytes`/`AsBytes`) the layer reads with the core's
//! `ib_copy_validate_udata_in` rules ([`UdataIn`]) and writes with its
//! `ib_respond_udata` rules ([`UdataOut`]).
//! [`Empty`](crate::rdma::uabi::Empty) is the type of a verb without
//! driver data: its request must be all zeros, its answer buffer is zeroed.

use super::{
    AddrVec, AhIn, CqOut, DevAttr, Drain, FailedVerb, GidEntry, IbLog, MrReq, NetdevEvent,
    PortAttr, PortEvents, QpAttr, QpInit, QpQuery, SrqArgs, SrqAttr, UctxNew, UdataReq,
};
use crate::rdma::uabi::{UdataIn, UdataOut};
use crate::rdma::{
    IbCq, IbQp, IbSrq, NetDev, RecvChain, ResAttrs, ResRaw, SendChain, UmemDev, UserCtx, WcArray,
};
use kernel::{
    prelude::*,
    sync::Arc,
    transmute::{AsBytes, FromBytes},
};

/// The object type of a kind a driver does not implement: no value of it
/// exists, so no verb of that kind can reach the driver.
#[allow(
    dead_code,
    reason = "for drivers without SRQs or MRs; this one has both"
)]
pub(crate) enum NoObject {}

/// The result of a post: on failure the index of the first WR not posted
/// and why.
pub(crate) type PostResult = core::result::Result<(), (usize, Error)>;

/// The device and its port: attributes, GIDs, netdev events, and what the
/// layer asks of the device as a whole.
#[vtable]
pub(crate) trait DeviceOps: Send + Sync + Sized + 'static {
    /// Where the driver prints its messages about the device; the
    /// registration attaches the ib_device to it.
    fn ib_log(&self) -> &IbLog;

    /// Fills the device attributes.
    fn query_device(&self, a: &mut DevAttr);

    /// Fills the static port attributes of `port` (1-based).
    fn query_port(&self, port: u32, a: &mut PortAttr);

    /// The firmware version word (`get_dev_fw_str`, left unset without it).
    fn fw_ver(&self) -> u64 {
        0
    }

    /// Writes GID `index` (`None`: clears it). Without it the device has
    /// no `add_gid`/`del_gid`.
    fn set_gid(&self, _index: u32, _entry: Option<GidEntry<'_>>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// A netdev event (see [`IbRegistration::watch_netdev`](super::IbRegistration)):
    /// whether it is the port's and what it changes (the MAC the port
    /// uses, the state a LAG port reports through `port`).
    fn netdev_event(&self, _ev: &NetdevEvent<'_>, _port: &PortEvents<'_>) {}

    /// Whether the device refuses to map its doorbell and direct-WQE pages
    /// now (a device being reset): `mmap` of them answers `EPERM`.
    fn mmap_refused(&self) -> bool {
        false
    }

    /// One of the verbs the layer reports failures of failed, whatever
    /// part of it (the shim's copies and checks included).
    fn verb_failed(&self, _v: FailedVerb) {}

    /// Whether the device takes user contexts: `alloc_ucontext` answers
    /// `EAGAIN` before the request is read otherwise.
    fn active(&self) -> bool {
        true
    }

    /// Whether the port whose netdev is `ndev` follows `upper` (`ndev`'s
    /// master, a LAG device the layer holds a reference on while asking):
    /// the port then takes its state and netdev events from it. Compares
    /// identities only. Asked only of a device registered with
    /// [`IbParams::bond_cap`](super::IbParams).
    fn port_follows_upper(&self, _ndev: NetDev, _upper: NetDev) -> bool {
        false
    }
}

/// User contexts.
#[vtable]
pub(crate) trait UcontextOps: DeviceOps {
    /// The driver's state of a user context, shared (`Arc`) by the context
    /// and whatever the driver lets hold on to it.
    type Ucontext: Send + Sync + 'static;

    /// What the user library asks of a new context.
    type UctxReq: UdataIn + FromBytes + AsBytes;

    /// What a new context answers the user library.
    type UctxResp: UdataOut + AsBytes;

    /// A user context for the request `req` (read before this is called: a
    /// refused request never reaches the driver): its state, answer,
    /// configuration and doorbell page.
    fn alloc_ucontext(
        &self,
        req: &Self::UctxReq,
    ) -> Result<UctxNew<Self::Ucontext, Self::UctxResp>>;

    /// Frees what `alloc_ucontext` took.
    fn dealloc_ucontext(&self, uctx: Arc<Self::Ucontext>);
}

/// Protection domains (numbers kept in the core's `ib_pd` container).
#[vtable]
pub(crate) trait PdOps: DeviceOps {
    /// What a user PD answers.
    type PdResp: UdataOut + AsBytes;

    /// A protection domain number and the answer of a user PD.
    fn alloc_pd(&self) -> Result<(u32, Self::PdResp)>;

    /// Frees a PD number.
    fn dealloc_pd(&self, pdn: u32);
}

/// XRC domains; without `alloc_xrcd` the device has none.
#[vtable]
pub(crate) trait XrcdOps: DeviceOps {
    /// An XRC domain number.
    fn alloc_xrcd(&self) -> Result<u32> {
        Err(EOPNOTSUPP)
    }

    /// Frees an XRCD number.
    fn dealloc_xrcd(&self, _xrcdn: u32) {}
}

/// Address handles; without `create_ah` the device has none.
#[vtable]
pub(crate) trait AhOps: DeviceOps {
    /// What a user AH answers.
    type AhResp: UdataOut + AsBytes;

    /// Fills the address vector of a new AH; the answer of a user AH.
    fn create_ah(&self, _req: &AhIn, _av: &mut AddrVec) -> Result<Self::AhResp> {
        Err(EOPNOTSUPP)
    }
}

/// Completion queues.
#[vtable]
pub(crate) trait CqOps: UcontextOps {
    /// A completion queue.
    type Cq: Send + Sync;

    /// What the user library asks of a user CQ.
    type CqReq: UdataIn + FromBytes + AsBytes;

    /// What a user CQ answers.
    type CqResp: UdataOut + AsBytes;

    /// A CQ of at least `cqe` entries on `vector` for the `ib_cq` `ibcq`:
    /// a kernel CQ, or with `user` a CQ whose buffer and record live in the
    /// calling process (the request as the layer read it). Returns the CQ
    /// and what the core and the user library are told.
    #[allow(
        clippy::type_complexity,
        reason = "the user request, the CQ and its answer"
    )]
    fn create_cq(
        &self,
        cqe: u32,
        vector: u32,
        ibcq: IbCq,
        user: Option<(UserCtx<'_, Self::Ucontext>, &UdataReq<Self::CqReq>)>,
    ) -> Result<(KBox<Self::Cq>, CqOut<Self::CqResp>)>;

    /// Makes a new CQ reachable by the event handlers, once its `ib_cq`
    /// leads to it: until then an event for its number reaches no one.
    fn publish_cq(&self, _cq: &Self::Cq) {}

    /// Destroys a CQ.
    fn destroy_cq(&self, cq: KBox<Self::Cq>);

    /// Polls completions into `wc`; how many.
    fn poll_cq(&self, cq: &Self::Cq, wc: &mut WcArray<'_>) -> usize;

    /// Arms the CQ for the next (or next solicited) completion; `true`
    /// if completions may have been missed and `report_missed` asked.
    fn req_notify_cq(&self, cq: &Self::Cq, solicited: bool, report_missed: bool) -> bool;

    /// Changes a CQ's moderation: an event after `count` completions or
    /// `period` microseconds. Without it the device has no `modify_cq`.
    fn modify_cq(&self, _cq: &Self::Cq, _count: u16, _period: u16) -> Result {
        Err(EOPNOTSUPP)
    }
}

/// Memory regions. `get_dma_mr`, `reg_user_mr` and `dereg_mr` are set
/// when implemented; `rereg_user_mr` with it (and the registration's
/// capability); fast-register MRs (`alloc_mr`, `map_mr_sg`) with
/// `alloc_mr` and the `map_mr_sg_*` steps.
#[vtable]
pub(crate) trait MrOps: DeviceOps {
    /// A memory region.
    type Mr: Send + Sync;

    /// A DMA MR on PD `pdn` with `access` (`IB_ACCESS_*`); and its key.
    fn get_dma_mr(&self, _pdn: u32, _access: u32) -> Result<(Pin<KBox<Self::Mr>>, u32)> {
        Err(EOPNOTSUPP)
    }

    /// A user MR as `req` says (`flags` unused); and its key.
    fn reg_user_mr(&self, _dev: UmemDev<'_>, _req: &MrReq) -> Result<(Pin<KBox<Self::Mr>>, u32)> {
        Err(EOPNOTSUPP)
    }

    /// Re-registers a user MR in place as `req` says.
    fn rereg_user_mr(&self, _mr: &Self::Mr, _dev: UmemDev<'_>, _req: &MrReq) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Deregisters an MR.
    fn dereg_mr(&self, _mr: Pin<KBox<Self::Mr>>) {}

    /// A fast-register MR of `mr_type` (`IB_MR_TYPE_*`) for up to
    /// `max_num_sg` pages on PD `pdn`; and its key.
    fn alloc_mr(
        &self,
        _pdn: u32,
        _mr_type: u32,
        _max_num_sg: u32,
    ) -> Result<(Pin<KBox<Self::Mr>>, u32)> {
        Err(EOPNOTSUPP)
    }

    /// The length in bytes of an MR (`ib_mr.length` of a new one made by
    /// `alloc_mr`).
    fn mr_size(_mr: &Self::Mr) -> u64 {
        0
    }

    /// Starts a mapping of a fast-register MR in pages of `page_size`
    /// bytes, the first at `sg_offset` into the list; an error makes
    /// `ib_map_mr_sg` map nothing.
    fn map_mr_sg_begin(&self, _mr: &Self::Mr, _page_size: u32, _sg_offset: u32) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Adds the page at bus address `addr` to the mapping. Called from
    /// `ib_sg_to_pages`, possibly in atomic context: no sleeping.
    fn map_mr_sg_page(_mr: &Self::Mr, _addr: u64) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Ends the mapping that `ib_sg_to_pages` answered `n` for (the count
    /// of SG entries mapped, or an errno); what `ib_map_mr_sg` returns.
    fn map_mr_sg_end(&self, _mr: &Self::Mr, _n: i32, _page_size: u32) -> i32 {
        EOPNOTSUPP.to_errno()
    }
}

/// Queue pairs and their data path.
#[vtable]
pub(crate) trait QpOps: CqOps + MrOps {
    /// A queue pair.
    type Qp: Send + Sync;

    /// What the user library asks of a user QP.
    type QpReq: UdataIn + FromBytes + AsBytes;

    /// What a user QP answers.
    type QpResp: UdataOut + AsBytes;

    /// A QP on the given CQs: a kernel QP, or with `user` (and
    /// `init.user`) one whose queues live in the calling process (the
    /// request as the layer read it); its number and the answer of a user
    /// QP. `init`'s capacities are updated to what the QP got.
    #[allow(clippy::type_complexity, reason = "the QP, its number, its answer")]
    fn create_qp(
        &self,
        init: &mut QpInit,
        send_cq: Option<&Self::Cq>,
        recv_cq: Option<&Self::Cq>,
        ibqp: IbQp,
        user: Option<(UserCtx<'_, Self::Ucontext>, &UdataReq<Self::QpReq>)>,
    ) -> Result<(Pin<KBox<Self::Qp>>, u32, Self::QpResp)>;

    /// Makes a new QP reachable by the event handlers, as
    /// [`CqOps::publish_cq`].
    fn publish_qp(&self, _qp: &Self::Qp) {}

    /// What a user modify answers.
    type QpModifyResp: UdataOut + AsBytes;

    /// Applies a modify; what a user modify answers (`None`: nothing, the
    /// buffer left as it is).
    fn modify_qp(&self, qp: &Self::Qp, attr: &QpAttr) -> Result<Option<Self::QpModifyResp>>;

    /// Stops the QP's deferred work that uses the QP through its `ib_qp`
    /// and waits for it, before the QP is taken back for
    /// [`QpOps::destroy_qp`].
    fn quiesce_qp(&self, _qp: &Self::Qp) {}

    /// Destroys a QP, after [`QpOps::quiesce_qp`].
    fn destroy_qp(&self, qp: Pin<KBox<Self::Qp>>);

    /// Fills what `query_qp` answers.
    fn query_qp(&self, qp: &Self::Qp, q: &mut QpQuery) -> Result;

    /// Posts receive WRs. The chain is a concrete type, not a
    /// `dyn Iterator`: reading a WR is inlined into the driver's loop.
    fn post_recv(&self, qp: &Self::Qp, wrs: RecvChain<'_>) -> PostResult;

    /// Whether the QP is a UD or GSI one, whose send WRs are `ib_ud_wr`s
    /// (no other type's are: the chain reads an AH only when this is true).
    fn qp_is_ud(&self, qp: &Self::Qp) -> bool;

    /// Posts send WRs, as `post_recv`.
    fn post_send(&self, qp: &Self::Qp, wrs: SendChain<'_, Self::Mr>) -> PostResult;

    /// Drains one queue of a QP (`drain_sq`, `drain_rq`): `d` has the
    /// steps (move to ERR, post or push the drain WR, poll or run the CQ,
    /// wait), which the driver calls in its order. A drain WR the driver
    /// posted and did not wait for is waited for after this returns.
    /// Without it the RDMA core drains the QP itself.
    fn drain(&self, _qp: &Self::Qp, _d: &Drain<'_, Self>) {}
}

/// Shared receive queues; without `create_srq` the device has none.
#[vtable]
pub(crate) trait SrqOps: UcontextOps {
    /// A shared receive queue ([`NoObject`] without SRQs).
    type Srq: Send + Sync;

    /// What the user library asks of a user SRQ.
    type SrqReq: UdataIn + FromBytes + AsBytes;

    /// What a user SRQ answers.
    type SrqResp: UdataOut + AsBytes;

    /// An SRQ for the `ib_srq` `ibsrq` as `args` asks (type, PD, depth,
    /// SGEs): a kernel SRQ, or with `user` one whose queues and record
    /// live in the calling process (the request as the layer read it).
    /// `args` gets what the SRQ has: depth and SGEs, number. Returns the
    /// SRQ and the answer of a user SRQ.
    #[allow(clippy::type_complexity, reason = "the SRQ and its answer")]
    fn create_srq(
        &self,
        _args: &mut SrqArgs,
        _ibsrq: IbSrq,
        _user: Option<(UserCtx<'_, Self::Ucontext>, &UdataReq<Self::SrqReq>)>,
    ) -> Result<(KBox<Self::Srq>, Self::SrqResp)> {
        Err(EOPNOTSUPP)
    }

    /// Makes a new SRQ reachable by the event handlers, as
    /// [`CqOps::publish_cq`].
    fn publish_srq(&self, _srq: &Self::Srq) {}

    /// Destroys an SRQ.
    fn destroy_srq(&self, _srq: KBox<Self::Srq>) {}

    /// Modifies an SRQ: `resize` (`IB_SRQ_MAX_WR`) asks for a new depth,
    /// `limit` (`IB_SRQ_LIMIT`) for the limit `srq_limit`.
    fn modify_srq(&self, _srq: &Self::Srq, _resize: bool, _limit: bool, _lim: u32) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Fills what `query_srq` answers.
    fn query_srq(&self, _srq: &Self::Srq, _a: &mut SrqAttr) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Posts receive WRs to a kernel SRQ, as [`QpOps::post_recv`].
    fn post_srq_recv(&self, _srq: &Self::Srq, _wrs: RecvChain<'_>) -> PostResult {
        Err((0, EOPNOTSUPP))
    }
}

/// Hardware counters (`rdma statistic`); without `query_counters` the
/// device exposes none.
#[vtable]
pub(crate) trait CounterOps: DeviceOps {
    /// Reads the port counters into `values`; how many were read.
    fn query_counters(&self, _values: &mut [u64]) -> Result<usize> {
        Err(EOPNOTSUPP)
    }
}

/// The driver's details of its objects for `rdma res show ... -dd` and
/// `-r`; each entry the driver does not implement is left to the core.
#[vtable]
pub(crate) trait RestrackOps: QpOps + SrqOps {
    /// The driver details of a CQ.
    fn res_cq(&self, _cq: &Self::Cq, _r: &mut ResAttrs) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The raw image of a CQ (its context read back).
    fn res_cq_raw(&self, _cq: &Self::Cq, _r: &mut ResRaw<'_>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The driver details of a QP.
    fn res_qp(&self, _qp: &Self::Qp, _r: &mut ResAttrs) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The raw image of a QP.
    fn res_qp_raw(&self, _qp: &Self::Qp, _r: &mut ResRaw<'_>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The driver details of an SRQ.
    fn res_srq(&self, _srq: &Self::Srq, _r: &mut ResAttrs) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The raw image of an SRQ (its context read back).
    fn res_srq_raw(&self, _srq: &Self::Srq, _r: &mut ResRaw<'_>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The driver details of an MR.
    fn res_mr(&self, _mr: &Self::Mr, _r: &mut ResAttrs) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The raw image of an MR.
    fn res_mr_raw(&self, _mr: &Self::Mr, _r: &mut ResRaw<'_>) -> Result {
        Err(EOPNOTSUPP)
    }
}

/// A driver the layer can register: every object kind's trait.
pub(crate) trait Driver:
    DeviceOps
    + UcontextOps
    + PdOps
    + XrcdOps
    + AhOps
    + CqOps
    + MrOps
    + QpOps
    + SrqOps
    + CounterOps
    + RestrackOps
{
}

impl<T> Driver for T where
    T: DeviceOps
        + UcontextOps
        + PdOps
        + XrcdOps
        + AhOps
        + CqOps
        + MrOps
        + QpOps
        + SrqOps
        + CounterOps
        + RestrackOps
{
}
