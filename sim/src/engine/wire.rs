// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! What one device's engine hands another (the wire between simulated
//! functions): requests, responses, failures, and the `Wire` that routes them.

use super::*;

/// A local or remote failure while executing a WQE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fail {
    /// Status of the requester's CQE.
    pub req: u8,
    /// Status of the responder's receive CQE, if one is consumed.
    pub resp: Option<u8>,
    /// What went wrong (for the log).
    pub why: String,
}

/// A message on the wire: what the requester's device hands the
/// responder's device (RoCEv2 addressing: the responder is the device
/// owning the destination GID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Requester QPN.
    pub sqpn: u32,
    /// Destination QPN.
    pub dqpn: u32,
    /// The operation.
    pub op: Op,
}

/// The operation a [`Request`] carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// RC/XRC.
    Rc(RcOp),
    /// UD SEND/SEND_WITH_IMM.
    Ud(UdMsg),
}

/// RC/XRC operations as they reach the responder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RcOp {
    /// SEND / SEND_WITH_IMM (`imm`) / SEND_WITH_INV (`inv`); `xrc_srqn`
    /// for an XRC target.
    Send {
        /// Immediate data.
        imm: Option<u32>,
        /// The rkey the responder invalidates (SEND_WITH_INV).
        inv: Option<u32>,
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Payload.
        data: Vec<u8>,
    },
    /// RDMA_WRITE / RDMA_WRITE_WITH_IMM (`imm`, consumes a receive WQE).
    Write {
        /// Immediate data.
        imm: Option<u32>,
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Payload.
        data: Vec<u8>,
    },
    /// RDMA_READ of `len` bytes.
    Read {
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Remote key.
        rkey: u32,
        /// Remote address.
        va: u64,
        /// Length.
        len: u32,
    },
    /// ATOMIC_CMP_AND_SWAP (`cmp_swap`) / ATOMIC_FETCH_AND_ADD.
    Atomic {
        /// Compare and swap (else fetch and add).
        cmp_swap: bool,
        /// The XRC SRQ the initiator names.
        xrc_srqn: u32,
        /// Remote key.
        rkey: u32,
        /// Remote address (8-byte aligned).
        va: u64,
        /// Swap or add operand.
        swap_add: u64,
        /// Compare operand.
        compare: u64,
    },
}

/// A UD datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UdMsg {
    /// Immediate data (SEND_WITH_IMM).
    pub imm: Option<u32>,
    /// The Q_Key the sender used.
    pub qkey: u32,
    /// `PORT_TYPE` of the receive CQE (GRH kind).
    pub port_type: u8,
    /// Service level.
    pub sl: u8,
    /// 40-byte GRH followed by the payload.
    pub data: Vec<u8>,
}

/// The responder's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// Done; READ data or the atomic's original value (8 bytes LE).
    Done(Vec<u8>),
    /// Receiver not ready (CQ full): try again later.
    Wait,
    /// RNR NAK (no receive WQE) with the responder's `MIN_RNR_TIME`.
    Rnr(u32),
    /// No such QP, or not in RTR..SQD.
    NotReady,
    /// A remote error (the requester's CQE status is in it).
    Fail(Fail),
}

/// The other devices of the same hns-sim process, as seen from one
/// device's engine.
pub trait Wire<M: Dma> {
    /// The device (an index of this wire's own) owning `gid`, if any.
    fn route(&self, gid: &[u8; 16]) -> Option<usize>;
    /// Device `dev` responds to `req`.
    fn respond(&mut self, dev: usize, mem: &M, req: &Request) -> Response;
    /// Whether a message of QP `qpn` can go from this device to device
    /// `dev` (ports up, bonds: `bond::path`); `Err` says which port is
    /// down. By default every port is up.
    fn path(&self, _qpn: u32, _dev: usize) -> Result<(), String> {
        Ok(())
    }
    /// Whether the wire has devices besides the sending one. A message for
    /// a GID no device owns is then lost on the wire (an RC requester
    /// waits, a datagram is dropped) instead of delivered locally: with a
    /// bond, the GIDs of the bond's upper device are removed from the
    /// failed port and come back on the new one a moment later. By default
    /// (and for one device) there is no other device.
    fn others(&self) -> bool {
        false
    }
}

/// No other device.
pub struct NoWire;

impl<M: Dma> Wire<M> for NoWire {
    fn route(&self, _gid: &[u8; 16]) -> Option<usize> {
        None
    }
    fn respond(&mut self, _dev: usize, _mem: &M, _req: &Request) -> Response {
        Response::NotReady
    }
}
