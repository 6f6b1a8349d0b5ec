// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The drain of a QP's send or receive queue (`hns_roce_v2_drain_sq`,
//! `hns_roce_v2_drain_rq`, `handle_drain_completion`): what this engine
//! does at each step of the rdma layer's [`Drain`].
//!
//! Outside a reset it is the RDMA core's drain: the QP to ERR, a drain WR
//! posted to the engine, its flushed completion waited for. During a
//! reset (the device at RST_DOWN or later) the engine is gone: a failed
//! move to ERR is no error, the drain WR goes into the QP's WR-id ring
//! only, and the CQ's handler is run here so that the reset's software
//! poll, which completes every WR of the ring as flushed, completes the
//! drain WR too. If the reset's teardown (or another drain) already ran
//! that handler, its run is stopped first so that two do not poll the CQ
//! at once. A CQ its owner polls directly is polled here instead, every
//! [`DIRECT_POLL_MS`], until the drain WR's completion came.

use super::Qp;
use crate::cmdq::DevState;
use crate::rdma::{Drain, Driver};

/// How long a drain waits for its WR's completion before it polls a
/// directly-polled CQ again (C's `TIMEOUT`, `HZ / 10`).
const DIRECT_POLL_MS: u32 = 100;

/// Drains the queue of `q` that `d` names; `cq_ran` marks the CQ's
/// handler as run for a reset's software completions and says whether it
/// already was (the CQ's `is_armed`).
pub(crate) fn drain<D: Driver>(
    st: &DevState,
    q: &Qp,
    d: &Drain<'_, D>,
    cq_ran: impl FnOnce(&D::Cq) -> bool,
) {
    let send = d.send();
    if let Err(e) = d.to_err() {
        if !st.is_reset_down() {
            if send {
                ibdev_err_ratelimited!(
                    st,
                    "failed to modify qp during drain sq",
                    ret = e.to_errno()
                );
            } else {
                ibdev_err_ratelimited!(
                    st,
                    "failed to modify qp during drain rq",
                    ret = e.to_errno()
                );
            }
            return;
        }
    }
    let posted = if st.is_reset_down() {
        d.push(|wr_id| q.core.push_drain_wr(send, wr_id))
    } else {
        d.post()
    };
    if let Err(e) = posted {
        if send {
            ibdev_err_ratelimited!(st, "failed to post send for drain sq", ret = e.to_errno());
        } else {
            ibdev_err_ratelimited!(st, "failed to post recv for drain rq", ret = e.to_errno());
        }
        return;
    }
    if d.polled_directly() {
        d.poll_until_done(DIRECT_POLL_MS);
        return;
    }
    if st.is_reset_down() {
        if cq_ran(d.cq()) {
            d.stop_handler();
        }
        d.run_handler();
    }
    d.wait();
}
