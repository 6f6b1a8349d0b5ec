// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! RC/XRC responder: SEND, WRITE, READ and atomics against the responder's
//! QP, receive queue and keys; affiliated error events.

use super::*;

impl Engine {
    /// The responder's part of a message arriving for QP `req.dqpn` of
    /// this device (from this device or another one on the wire).
    pub fn respond<M: Dma, H: Host>(&mut self, host: &mut H, mem: &M, req: &Request) -> Response {
        let d = self.qps.get(&req.dqpn).map(|q| q.ctx.clone());
        match &req.op {
            Op::Ud(u) => self.respond_ud(host, mem, d, req.sqpn, u),
            Op::Rc(o) => {
                let Some(d) = d else {
                    return Response::NotReady;
                };
                if !(qps::RTR..=qps::SQD).contains(&d.state) {
                    return Response::NotReady;
                }
                let raised = self.aeqes.len();
                let r = self.respond_rc(host, mem, &d, req.sqpn, o);
                self.affiliated_error(&d, &r, raised);
                r
            }
        }
    }

    /// The affiliated asynchronous event of a request the responder QP
    /// `d` rejected without a CQE of its own: LOCAL_WQ_ACCESS_ERROR when
    /// the requester gets REM_ACCESS_ERR, INV_REQ_LOCAL_WQ_ERROR when it
    /// gets REM_INV_REQ_ERR. Not when the rejection already raised an event
    /// (an AEQE queued since `raised`, e.g. XRCD_VIOLATION) or completed a
    /// receive WQE in error (the CQE reports it).
    pub(super) fn affiliated_error(&mut self, d: &QpCtx, r: &Response, raised: usize) {
        let Response::Fail(f) = r else {
            return;
        };
        if f.resp.is_some() || self.aeqes.len() > raised {
            return;
        }
        let ev = match f.req {
            status::REM_ACCESS_ERR => aev::LOCAL_WQ_ACCESS_ERROR,
            status::REM_INV_REQ_ERR => aev::INV_REQ_LOCAL_WQ_ERROR,
            _ => return,
        };
        self.log(&format!(
            "QP {:#x}: responder error event {ev:#x} ({})",
            d.qpn, f.why
        ));
        self.aeqes.push((ev, d.qpn));
    }

    /// RC/XRC responder: checks, then the remote memory access and/or the
    /// receive WQE and its CQE.
    pub(super) fn respond_rc<M: Dma, H: Host>(
        &mut self,
        host: &mut H,
        mem: &M,
        d: &QpCtx,
        sqpn: u32,
        o: &RcOp,
    ) -> Response {
        let rerr = |why: String| {
            Response::Fail(Fail {
                req: status::REM_ACCESS_ERR,
                resp: None,
                why,
            })
        };
        // Memory keys are checked against the QP's PD; an XRC target has
        // none (the C driver writes PD 0): every request names an XRC SRQ
        // of the target's domain, and that SRQ's PD is the one (IBA 11.2.5,
        // XRC: the XRC SRQ provides the protection domain).
        let (RcOp::Read { xrc_srqn, .. }
        | RcOp::Atomic { xrc_srqn, .. }
        | RcOp::Send { xrc_srqn, .. }
        | RcOp::Write { xrc_srqn, .. }) = o;
        let xrc_srqn = *xrc_srqn;
        let pd = if d.xrc_tgt {
            let srq = self
                .srqs
                .get(&xrc_srqn)
                .filter(|x| x.ctx.xrc && x.ctx.xrcd == d.qkey);
            let Some(x) = srq else {
                self.aeqes.push((aev::XRCD_VIOLATION, d.qpn));
                return Response::Fail(Fail {
                    req: status::REM_INV_REQ_ERR,
                    resp: None,
                    why: format!(
                        "XRC SRQ {xrc_srqn:#x} not in XRC domain {:#x} of QP {:#x}",
                        d.qkey, d.qpn
                    ),
                });
            };
            x.ctx.pd
        } else {
            d.pd
        };
        let mut inv_key = None;
        let (imm, data, write) = match o {
            RcOp::Read { rkey, va, len, .. } => {
                return match self.rdma_read(host, mem, d, pd, *rkey, *va, *len) {
                    Ok(data) => Response::Done(data),
                    Err(f) => Response::Fail(f),
                };
            }
            RcOp::Atomic {
                cmp_swap,
                rkey,
                va,
                swap_add,
                compare,
                ..
            } => {
                return match self
                    .atomic(host, mem, d, pd, *cmp_swap, *rkey, *va, *swap_add, *compare)
                {
                    Ok(old) => Response::Done(old.to_le_bytes().to_vec()),
                    Err(f) => Response::Fail(f),
                };
            }
            RcOp::Send { imm, inv, data, .. } => {
                inv_key = *inv;
                (*imm, data, None)
            }
            RcOp::Write {
                imm,
                rkey,
                va,
                data,
                ..
            } => (*imm, data, Some((*rkey, *va))),
        };
        let needs_recv = write.is_none() || imm.is_some();
        let recv = if needs_recv {
            // An XRC target receives into the SRQ the initiator named
            // (checked above).
            let srq = if d.xrc_tgt {
                Some(xrc_srqn)
            } else {
                d.srq.then_some(d.srqn)
            };
            // Receiver not ready: an RNR NAK with this QP's timer.
            let Some(r) = self.next_recv(mem, d, srq) else {
                return Response::Rnr(d.min_rnr);
            };
            let rcqn = self.recv_cqn(d, r);
            if !self.cq_room(mem, rcqn, 1) {
                return Response::Wait;
            }
            Some(r)
        } else {
            None
        };
        if let Some((rkey, va)) = write {
            if !d.rwe {
                return rerr("remote write not enabled on the QP".into());
            }
            let span = Span {
                key: rkey,
                va,
                len: data.len() as u64,
            };
            let pieces = match self.key_pieces(host, mem, pd, span, Access::RemoteWrite) {
                Ok(p) => p,
                Err(e) => return rerr(format!("rkey {rkey:#x}: {e}")),
            };
            let mut done = 0usize;
            for (a, l) in pieces {
                let l = l as usize;
                if let Err(e) = self.put(mem, rkey, a, &data[done..done + l]) {
                    return rerr(e.to_string());
                }
                done += l;
            }
        }
        let Some(r) = recv else {
            return Response::Done(Vec::new());
        };
        let cqn = self.recv_cqn(d, r);
        if let Some(k) = inv_key {
            // SEND_WITH_INV: the rkey must name a valid MR of this QP's PD
            // that allows remote invalidation.
            if let Err(why) = self.invalidate(host, mem, pd, k, true) {
                return Response::Fail(Fail {
                    req: status::REM_INV_REQ_ERR,
                    resp: None,
                    why,
                });
            }
            self.stats.remote_inv += 1;
        }
        let scattered = if write.is_none() {
            self.scatter(host, mem, d, r, data)
        } else {
            Ok(())
        };
        let mut cqe = Cqe {
            opcode: match (write.is_some(), imm.is_some(), inv_key.is_some()) {
                (true, _, _) => rop::RDMA_WRITE_IMM,
                (false, true, _) => rop::SEND_WITH_IMM,
                (false, false, true) => rop::SEND_WITH_INV,
                (false, false, false) => rop::SEND,
            },
            is_recv: true,
            status: status::SUCCESS,
            wqe_idx: r.wqe_idx(),
            xrc_srqn: self.xrc_srqn(r),
            // `rkey` shares the word with `immtdata` (`fill_recv_wc`
            // reports it as `invalidate_rkey`).
            imm: imm.or(inv_key).unwrap_or(0),
            lcl_qpn: d.qpn,
            byte_cnt: data.len() as u32,
            rmt_qpn: sqpn,
            ..Cqe::default()
        };
        match scattered {
            Ok(()) => {
                self.consume(mem, r);
                self.push_cqe(mem, cqn, &cqe);
                Response::Done(Vec::new())
            }
            Err(f) => {
                if let Some(rs) = f.resp {
                    cqe.opcode = rop::SEND;
                    cqe.status = rs;
                    cqe.imm = 0;
                    cqe.byte_cnt = 0;
                    self.consume(mem, r);
                    self.push_cqe(mem, cqn, &cqe);
                    if let Some(q) = self.qps.get_mut(&d.qpn) {
                        q.stopped = true;
                    }
                }
                Response::Fail(f)
            }
        }
    }

    /// ATOMIC_CMP_AND_SWAP (`cmp_swap`) / ATOMIC_FETCH_AND_ADD on the 8
    /// bytes at `va`/`rkey` of the responder `d` (little-endian, as the
    /// responder's CPU sees them); returns the original value.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        d: &QpCtx,
        pd: u32,
        cmp_swap: bool,
        rkey: u32,
        va: u64,
        swap_add: u64,
        compare: u64,
    ) -> Result<u64, Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        if !d.ate {
            return Err(fail(
                status::REM_ACCESS_ERR,
                "remote atomics not enabled on the QP".into(),
            ));
        }
        if !va.is_multiple_of(8) {
            return Err(fail(
                status::REM_INV_REQ_ERR,
                format!("atomic address {va:#x} not 8-byte aligned"),
            ));
        }
        let span = Span {
            key: rkey,
            va,
            len: 8,
        };
        let remote = self
            .key_pieces(host, mem, pd, span, Access::RemoteAtomic)
            .map_err(|e| fail(status::REM_ACCESS_ERR, format!("rkey {rkey:#x}: {e}")))?;
        let &[(ra, 8)] = remote.as_slice() else {
            return Err(fail(
                status::REM_ACCESS_ERR,
                "atomic target not in one page".into(),
            ));
        };
        let mut b = [0u8; 8];
        mem.read(ra, &mut b)
            .map_err(|e| fail(status::REM_ACCESS_ERR, e.to_string()))?;
        let old = u64::from_le_bytes(b);
        let new = if cmp_swap {
            (old == compare).then_some(swap_add)
        } else {
            Some(old.wrapping_add(swap_add))
        };
        if let Some(v) = new {
            self.put(mem, rkey, ra, &v.to_le_bytes())
                .map_err(|e| fail(status::REM_ACCESS_ERR, e.to_string()))?;
        }
        Ok(old)
    }

    /// RDMA READ, responder side: `len` bytes at `va`/`rkey` of `d`, the
    /// key checked against `pd` (the QP's, or an XRC target's SRQ's).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rdma_read<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        d: &QpCtx,
        pd: u32,
        rkey: u32,
        va: u64,
        len: u32,
    ) -> Result<Vec<u8>, Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        if !d.rre {
            return Err(fail(
                status::REM_ACCESS_ERR,
                "remote read not enabled on the QP".into(),
            ));
        }
        let span = Span {
            key: rkey,
            va,
            len: u64::from(len),
        };
        let remote = self
            .key_pieces(host, mem, pd, span, Access::RemoteRead)
            .map_err(|e| fail(status::REM_ACCESS_ERR, format!("rkey {rkey:#x}: {e}")))?;
        let mut data = vec![0u8; len as usize];
        let mut done = 0usize;
        for (a, l) in remote {
            let l = l as usize;
            mem.read(a, &mut data[done..done + l])
                .map_err(|e| fail(status::REM_ACCESS_ERR, e.to_string()))?;
            done += l;
        }
        Ok(data)
    }
}
