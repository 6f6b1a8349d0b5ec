// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! SQ execution, requester side: the SQ loop with work detection (doorbell,
//! scan, stale WQEs of a QP's previous life), RC/XRC WQEs, their results.

use super::*;

impl Engine {
    /// Executes the posted WQEs of `qpn`'s SQ; returns whether any ran.
    pub fn run_sq<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        qpn: u32,
        now: Instant,
    ) -> bool {
        let mut did = false;
        if let Some(q) = self.qps.get_mut(&qpn) {
            q.kick = false;
        }
        for _ in 0..BATCH {
            let Some(q) = self.qps.get(&qpn) else {
                break;
            };
            if q.stopped || q.ctx.state != qps::RTS {
                break;
            }
            let ctx = q.ctx.clone();
            let idx = q.sq_ci;
            let mut raw = [0u8; SQ_WQE_SIZE];
            if let Err(e) = ctx.buf.read(mem, ctx.sq_wqe_off(idx), &mut raw) {
                self.log(&format!("QP {qpn:#x}: SQ WQE {idx} unreadable: {e}"));
                if let Some(q) = self.qps.get_mut(&qpn) {
                    q.stopped = true;
                }
                break;
            }
            let w = RcWqe::from_bytes(&raw);
            if w.owner != wqe::owner_for(idx, ctx.sq_shift) {
                break;
            }
            // Covered by a doorbell, or stable long enough?
            let covered = q.sq_db.is_some_and(|pi| {
                let ahead = pi.wrapping_sub(idx) & 0xffff;
                ahead != 0 && ahead <= 1 << ctx.sq_shift
            });
            if !covered {
                let fp = fingerprint(&raw);
                let slot = (idx & ((1 << ctx.sq_shift) - 1)) as usize;
                if q.stale.get(slot) == Some(&fp) {
                    // The previous life's WQE, not a new one.
                    break;
                }
                match q.pending {
                    Some((i, t, f)) if i == idx && f == fp && now.duration_since(t) >= STABLE => {
                        if q.scan_took != Some(idx) {
                            self.stats.scan_found += 1;
                            let line = format!(
                                "QP {qpn:#x}: SQ WQE {idx} taken by the scan, unchanged for {} ms without a doorbell (last SQ doorbell {:?})",
                                now.duration_since(t).as_millis(),
                                q.sq_db,
                            );
                            self.log(&line);
                            if let Some(q) = self.qps.get_mut(&qpn) {
                                q.scan_took = Some(idx);
                            }
                        }
                    }
                    Some((i, _, f)) if i == idx && f == fp => break,
                    _ => {
                        // New, or still being written: (re)start the clock.
                        if let Some(q) = self.qps.get_mut(&qpn) {
                            q.pending = Some((idx, now, fp));
                        }
                        break;
                    }
                }
            }
            self.ran_for_push(qpn, idx, &raw);
            if self.dump.is_some() {
                // The extended SGEs of the WQE too (UD keeps all its SGEs
                // there, RC from the third on).
                let mut line = raw.to_vec();
                let ud = ctx.tst == tst::UD;
                let (start, n) = if ud {
                    let u = UdWqe::from_bytes(&raw);
                    (u.start_sge, if u.inline { 0 } else { u.sge_num })
                } else {
                    let r = RcWqe::from_bytes(&raw);
                    (r.start_sge, r.sge_num.saturating_sub(2))
                };
                for i in 0..n.min(16) {
                    let mut b = [0u8; SGE_SIZE];
                    if ctx.buf.read(mem, ctx.sge_at(start + i), &mut b).is_ok() {
                        line.extend_from_slice(&b);
                    }
                }
                self.dump_words(if ud { "udwqe" } else { "rcwqe" }, qpn, idx, &line);
            }
            let step = match ctx.tst {
                tst::RC | tst::XRC => self.exec_rc(host, mem, wire, &ctx, idx, &raw, now),
                tst::UD => self.exec_ud(host, mem, wire, &ctx, idx, &raw),
                t => {
                    self.log(&format!("QP {qpn:#x}: transport type {t} not modelled yet"));
                    if let Some(q) = self.qps.get_mut(&qpn) {
                        q.stopped = true;
                    }
                    break;
                }
            };
            let Some(q) = self.qps.get_mut(&qpn) else {
                break;
            };
            match step {
                Step::Done | Step::Failed => {
                    let slot = (q.sq_ci & ((1 << ctx.sq_shift) - 1)) as usize;
                    if let Some(f) = q.stale.get_mut(slot) {
                        *f = 0;
                    }
                    q.sq_ci = q.sq_ci.wrapping_add(1);
                    q.pending = None;
                    q.scan_took = None;
                    q.blocked = None;
                    q.rnr = None;
                    q.done += 1;
                    q.first.get_or_insert(now);
                    q.last = Some(now);
                    self.stats.wqes += 1;
                    did = true;
                    if matches!(step, Step::Failed) {
                        q.stopped = true;
                        break;
                    }
                }
                Step::Wait => {
                    if q.blocked.is_none() {
                        q.blocked = Some(now);
                    }
                    break;
                }
            }
        }
        did
    }

    /// Sends `req` to the device owning `dgid`: another device on the wire
    /// when one owns it and this one does not, else this device (loopback;
    /// also for a GID nobody owns, as before the wire existed).
    pub(super) fn deliver<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        dgid: &[u8; 16],
        req: &Request,
    ) -> Response {
        if !host.owns_gid(dgid) {
            if let Some(dev) = wire.route(dgid) {
                if let Err(why) = wire.path(req.sqpn, dev) {
                    self.link_down(req, &why);
                    return Response::NotReady;
                }
                self.link_blocked.remove(&req.sqpn);
                let r = wire.respond(dev, mem, req);
                if !matches!(r, Response::Wait | Response::NotReady) {
                    self.stats.wire += 1;
                }
                return r;
            }
            if wire.others() {
                self.unowned(req, dgid);
                return Response::NotReady;
            }
        }
        self.respond(host, mem, req)
    }

    /// A message for a GID no device of the wire owns (several devices):
    /// nobody answers. RC waits as for a destination not ready (counted
    /// once per stall of a QP; it ends when a device owns the GID again,
    /// or in RETRY_EXC_ERR after `DEST_WAIT`), UD is dropped.
    fn unowned(&mut self, req: &Request, dgid: &[u8; 16]) {
        let gid: Vec<String> = dgid
            .chunks(2)
            .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
            .collect();
        let why = format!("no device owns DGID {}", gid.join(":"));
        if matches!(req.op, Op::Ud(_)) {
            self.stats.unowned_drops += 1;
            self.log(&format!("UD QP {:#x}: {why}: datagram dropped", req.sqpn));
        } else if self.link_blocked.insert(req.sqpn) {
            self.stats.unowned_stalls += 1;
            self.log(&format!("QP {:#x}: {why}: waiting", req.sqpn));
        }
    }

    /// A message that cannot leave because a port on its path is down:
    /// RC waits as for a destination not ready (counted once per stall
    /// of a QP), UD is dropped (counted per datagram).
    fn link_down(&mut self, req: &Request, why: &str) {
        if matches!(req.op, Op::Ud(_)) {
            self.stats.link_drops += 1;
            self.log(&format!("UD QP {:#x}: {why}: datagram dropped", req.sqpn));
        } else if self.link_blocked.insert(req.sqpn) {
            self.stats.link_stalls += 1;
            self.log(&format!("QP {:#x}: {why}: waiting", req.sqpn));
        }
    }

    /// Executes one RC WQE of `s` at SQ index `idx`: the requester's part
    /// (gather, local checks), the responder's part on the destination
    /// device ([`Engine::respond`]), then the requester's completion.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_rc<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        s: &QpCtx,
        idx: u32,
        raw: &[u8],
        now: Instant,
    ) -> Step {
        let w = RcWqe::from_bytes(raw);
        let send_cqe = |status: u8| Cqe {
            opcode: w.opcode,
            status,
            wqe_idx: idx as u16,
            lcl_qpn: s.qpn,
            rmt_qpn: s.dqpn,
            ..Cqe::default()
        };
        // Room for the requester's CQE (always reserved: errors complete
        // even unsignaled WQEs; only a signaled WQE reports an overflow).
        if !self.send_cq_room(mem, s, w.signaled) {
            return Step::Wait;
        }
        let local = |f: Fail| Err::<RcOp, Fail>(f);
        let prepared = match w.opcode {
            op::FAST_REG_PMR | op::LOCAL_INV => {
                let done = if w.opcode == op::FAST_REG_PMR {
                    self.fast_reg(host, mem, s, raw)
                } else {
                    self.invalidate(host, mem, s.pd, w.imm, false)
                };
                if let Err(why) = done {
                    self.log(&format!(
                        "QP {:#x} WQE {idx} opcode {:#x}: {why}",
                        s.qpn, w.opcode
                    ));
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_PROT_ERR));
                    return Step::Failed;
                }
                if w.opcode == op::FAST_REG_PMR {
                    self.stats.reg_mr += 1;
                } else {
                    self.stats.local_inv += 1;
                }
                if s.sig_all || w.signaled {
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::SUCCESS));
                }
                return Step::Done;
            }
            op::SEND | op::SEND_WITH_IMM | op::SEND_WITH_INV => {
                self.gather(host, mem, s, &w, raw).map(|data| RcOp::Send {
                    imm: (w.opcode == op::SEND_WITH_IMM).then_some(w.imm),
                    inv: (w.opcode == op::SEND_WITH_INV).then_some(w.imm),
                    xrc_srqn: w.xrc_srqn,
                    data,
                })
            }
            op::RDMA_WRITE | op::RDMA_WRITE_WITH_IMM => {
                self.gather(host, mem, s, &w, raw).map(|data| RcOp::Write {
                    imm: (w.opcode == op::RDMA_WRITE_WITH_IMM).then_some(w.imm),
                    xrc_srqn: w.xrc_srqn,
                    rkey: w.rkey,
                    va: w.va,
                    data,
                })
            }
            op::RDMA_READ => Ok(RcOp::Read {
                xrc_srqn: w.xrc_srqn,
                rkey: w.rkey,
                va: w.va,
                len: w.msg_len,
            }),
            op::ATOM_CMP_AND_SWAP | op::ATOM_FETCH_AND_ADD => {
                // The local buffer first: nothing changes remotely if it
                // is bad.
                match self.atomic_local(host, mem, s, raw) {
                    Ok(_) => {
                        let opnd = |o: usize| {
                            let mut b = [0u8; 8];
                            if let Some(x) = raw.get(o..o + 8) {
                                b.copy_from_slice(x);
                            }
                            u64::from_le_bytes(b)
                        };
                        Ok(RcOp::Atomic {
                            cmp_swap: w.opcode == op::ATOM_CMP_AND_SWAP,
                            xrc_srqn: w.xrc_srqn,
                            rkey: w.rkey,
                            va: w.va,
                            swap_add: opnd(wqe::ATOMIC_SEG),
                            compare: opnd(wqe::ATOMIC_SEG + 8),
                        })
                    }
                    Err(f) => local(f),
                }
            }
            o => local(Fail {
                req: status::LOC_QP_OP_ERR,
                resp: None,
                why: format!("opcode {o:#x} not modelled yet"),
            }),
        };
        let rc_op = match prepared {
            Ok(o) => o,
            Err(f) => {
                self.log(&format!(
                    "QP {:#x} WQE {idx} opcode {:#x}: {} (status {:#x})",
                    s.qpn, w.opcode, f.why, f.req
                ));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(f.req));
                return Step::Failed;
            }
        };
        // An RNR NAK was taken: no new try before the RNR timer expires.
        let rnr = self.qps.get(&s.qpn).and_then(|q| q.rnr);
        if rnr.is_some_and(|(_, due)| now < due) {
            return Step::Wait;
        }
        let req = Request {
            sqpn: s.qpn,
            dqpn: s.dqpn,
            op: Op::Rc(rc_op),
        };
        let result = match self.deliver(host, mem, wire, &s.dgid, &req) {
            Response::Wait => return Step::Wait,
            Response::Rnr(_) if s.rnr_retry == 7 => return Step::Wait,
            Response::Rnr(t) => {
                let left = rnr.map_or(s.rnr_retry, |(n, _)| n);
                if left == 0 {
                    self.log(&format!(
                        "QP {:#x} WQE {idx}: RNR retries ({}) exceeded",
                        s.qpn, s.rnr_retry
                    ));
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::RNR_RETRY_EXC_ERR));
                    return Step::Failed;
                }
                if let Some(q) = self.qps.get_mut(&s.qpn) {
                    q.rnr = Some((left - 1, now + rnr_delay(t)));
                }
                return Step::Wait;
            }
            Response::NotReady => return self.dest_not_ready(mem, s, idx, &w, now),
            Response::Fail(f) => Err(f),
            Response::Done(data) => match &req.op {
                Op::Rc(RcOp::Read { len, .. }) => self
                    .read_result(host, mem, s, &w, raw, &data)
                    .map(|()| *len),
                Op::Rc(RcOp::Atomic { .. }) => {
                    self.atomic_local(host, mem, s, raw).and_then(|pieces| {
                        let mut done = 0usize;
                        for (a, l) in pieces {
                            let l = l as usize;
                            let part = data.get(done..done + l).unwrap_or(&[]);
                            self.put(
                                mem,
                                DataSeg::from_bytes(raw.get(wqe::SQ_WQE_HDR..).unwrap_or(&[])).lkey,
                                a,
                                part,
                            )
                            .map_err(|e| Fail {
                                req: status::LOC_PROT_ERR,
                                resp: None,
                                why: e.to_string(),
                            })?;
                            done += l;
                        }
                        Ok(8)
                    })
                }
                _ => Ok(0),
            },
        };
        match result {
            Ok(len) => {
                if w.opcode == op::SEND_WITH_INV {
                    self.stats.send_inv += 1;
                }
                if s.sig_all || w.signaled {
                    let mut c = send_cqe(status::SUCCESS);
                    c.byte_cnt = len;
                    self.push_cqe(mem, s.tx_cqn, &c);
                }
                Step::Done
            }
            Err(f) => {
                self.log(&format!(
                    "QP {:#x} WQE {idx} opcode {:#x}: {} (status {:#x})",
                    s.qpn, w.opcode, f.why, f.req
                ));
                // The responder's event (if it raised one) comes first, and
                // the error completion only after `RESP_EVENT_LEAD`.
                let raised = !self.aeqes.is_empty();
                self.post_aeqes(host, mem);
                if raised && !self.resp_event_lead.is_zero() {
                    let due = now + self.resp_event_lead;
                    self.deferred.push((due, s.tx_cqn, send_cqe(f.req)));
                } else {
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(f.req));
                }
                Step::Failed
            }
        }
    }

    /// The destination QP does not exist or is not ready: wait, then
    /// complete with a retry error as a real link would after its retries.
    pub(super) fn dest_not_ready<M: Dma>(
        &mut self,
        mem: &M,
        s: &QpCtx,
        idx: u32,
        w: &RcWqe,
        now: Instant,
    ) -> Step {
        let since = self.qps.get(&s.qpn).and_then(|q| q.blocked).unwrap_or(now);
        if now.duration_since(since) < DEST_WAIT {
            return Step::Wait;
        }
        self.log(&format!(
            "QP {:#x}: destination QP {:#x} not ready, retries exceeded",
            s.qpn, s.dqpn
        ));
        // A stall by a down port ends here too (a new stall of this QPN,
        // e.g. after it is re-created, counts again).
        self.link_blocked.remove(&s.qpn);
        self.push_cqe(
            mem,
            s.tx_cqn,
            &Cqe {
                opcode: w.opcode,
                status: status::RETRY_EXC_ERR,
                wqe_idx: idx as u16,
                lcl_qpn: s.qpn,
                ..Cqe::default()
            },
        );
        Step::Failed
    }

    /// The local side of an atomic WQE: the DMA pieces of its result
    /// buffer (data segment at +32, 8 bytes, `LW_EN`).
    pub(super) fn atomic_local<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        s: &QpCtx,
        raw: &[u8],
    ) -> Result<Vec<(u64, u64)>, Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        let g = DataSeg::from_bytes(raw.get(wqe::SQ_WQE_HDR..).unwrap_or(&[]));
        let span = Span {
            key: g.lkey,
            va: g.addr,
            len: 8,
        };
        let local = self
            .key_pieces(host, mem, s.pd, span, Access::LocalWrite)
            .map_err(|e| fail(status::LOC_PROT_ERR, format!("lkey {:#x}: {e}", g.lkey)))?;
        if g.len < 8 {
            return Err(fail(
                status::LOC_LEN_ERR,
                format!("atomic result SGE of {} bytes", g.len),
            ));
        }
        Ok(local)
    }

    /// RDMA READ, requester side: the response `data` into the local SGEs
    /// of the WQE.
    pub(super) fn read_result<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        s: &QpCtx,
        w: &RcWqe,
        raw: &[u8],
        data: &[u8],
    ) -> Result<(), Fail> {
        let fail = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        let len = data.len();
        let sges = self
            .sq_sges(mem, s, w, raw)
            .map_err(|e| fail(status::LOC_QP_OP_ERR, format!("SGE list: {e}")))?;
        let mut done = 0usize;
        for g in sges {
            if done >= len {
                break;
            }
            let n = (g.len as usize).min(len - done);
            let span = Span {
                key: g.lkey,
                va: g.addr,
                len: n as u64,
            };
            let pieces = self
                .key_pieces(host, mem, s.pd, span, Access::LocalWrite)
                .map_err(|e| fail(status::LOC_PROT_ERR, format!("lkey {:#x}: {e}", g.lkey)))?;
            for (a, l) in pieces {
                let l = l as usize;
                self.put(mem, g.lkey, a, &data[done..done + l])
                    .map_err(|e| fail(status::LOC_PROT_ERR, e.to_string()))?;
                done += l;
            }
        }
        if done < len {
            return Err(fail(
                status::LOC_LEN_ERR,
                format!("SGEs hold {done} of {len} bytes"),
            ));
        }
        Ok(())
    }
}
