// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Completions: CQ space, CQEs (checked against the live CQ's pages),
//! flush of a QP in ERR, and the events raised at the end of a pass.

use super::*;

impl Engine {
    /// A QP in ERR: completes its outstanding SQ WQEs, then its RQ WQEs,
    /// up to the producer indexes the driver wrote at the move to ERR,
    /// each with a WR_FLUSH_ERR CQE (signaled or not, as the IB spec wants
    /// for flushed work); waits while a CQ is full. Returns whether any
    /// CQE was written.
    pub(super) fn flush<M: Dma>(&mut self, mem: &M, qpn: u32) -> bool {
        let mut did = false;
        loop {
            let Some(q) = self.qps.get(&qpn) else {
                return did;
            };
            let ctx = q.ctx.clone();
            let (sq_left, rq_left) = (q.sq_to_flush(), q.rq_to_flush());
            let (sq_ci, rq_ci) = (q.sq_ci, q.rq_ci);
            let cqe = if sq_left != 0 {
                if !self.cq_room(mem, ctx.tx_cqn, 1) {
                    return did;
                }
                let mut raw = [0u8; SQ_WQE_HDR];
                // The opcode is informational (the driver does not decode
                // it for an error status).
                let opcode = match ctx.buf.read(mem, ctx.sq_wqe_off(sq_ci), &mut raw) {
                    Ok(()) => RcWqe::from_bytes(&raw).opcode,
                    Err(_) => op::SEND,
                };
                (
                    ctx.tx_cqn,
                    Cqe {
                        opcode,
                        status: status::WR_FLUSH_ERR,
                        wqe_idx: sq_ci as u16,
                        lcl_qpn: qpn,
                        ..Cqe::default()
                    },
                )
            } else if rq_left != 0 {
                if !self.cq_room(mem, ctx.rx_cqn, 1) {
                    return did;
                }
                (
                    ctx.rx_cqn,
                    Cqe {
                        opcode: rop::SEND,
                        is_recv: true,
                        status: status::WR_FLUSH_ERR,
                        wqe_idx: rq_ci as u16,
                        lcl_qpn: qpn,
                        ..Cqe::default()
                    },
                )
            } else {
                return did;
            };
            self.push_cqe(mem, cqe.0, &cqe.1);
            did = true;
            if let Some(q) = self.qps.get_mut(&qpn) {
                if sq_left != 0 {
                    q.sq_ci = q.sq_ci.wrapping_add(1);
                } else {
                    q.rq_ci = q.rq_ci.wrapping_add(1);
                }
            }
        }
    }

    /// Room for `n` more CQEs on `cqn`? The first time a CQ is found full
    /// it raises one CQ_OVERFLOW AEQE (queue = CQN; once per CQ, as
    /// hardware puts an overrun CQ in error): the driver reports
    /// IB_EVENT_CQ_ERR to the CQ's owner. The work that needed the CQE
    /// waits (hardware would overrun the CQ; the model loses nothing).
    pub(super) fn cq_room<M: Dma>(&mut self, mem: &M, cqn: u32, n: u32) -> bool {
        let room = self.cq_space(mem, cqn, n);
        let Some(c) = self.cqs.get_mut(&cqn) else {
            return room;
        };
        if !room && !c.overflow {
            c.overflow = true;
            self.aeqes.push((aev::CQ_OVERFLOW, cqn));
            let pi = c.pi;
            self.log(&format!(
                "CQ {cqn:#x} full (producer index {pi:#x}): CQ_OVERFLOW event"
            ));
        }
        room
    }

    /// Room for the send CQE of a WQE of `s`: an overflow counts only
    /// when the WQE completes for sure (signaled); an unsignaled one only
    /// keeps room for a possible error CQE.
    pub(super) fn send_cq_room<M: Dma>(&mut self, mem: &M, s: &QpCtx, signaled: bool) -> bool {
        if s.sig_all || signaled {
            self.cq_room(mem, s.tx_cqn, 1)
        } else {
            self.cq_space(mem, s.tx_cqn, 1)
        }
    }

    /// Room for `n` more CQEs on `cqn` (no side effects).
    pub(super) fn cq_space<M: Dma>(&self, mem: &M, cqn: u32, n: u32) -> bool {
        let Some(c) = self.cqs.get(&cqn) else {
            return false;
        };
        let ci = match c.ctx.db {
            Some(a) => mem.read_u32(a).map(|v| v & 0xff_ffff).unwrap_or(c.ci_db),
            None => c.ci_db,
        };
        let used = c.pi.wrapping_sub(ci) & 0xff_ffff;
        used + n <= c.ctx.depth
    }

    /// Appends a CQE to `cqn`.
    pub(super) fn push_cqe<M: Dma>(&mut self, mem: &M, cqn: u32, cqe: &Cqe) {
        let Some(c) = self.cqs.get(&cqn) else {
            self.log(&format!("CQE for unknown CQ {cqn:#x} dropped"));
            return;
        };
        let slot = c.pi & (c.ctx.depth - 1);
        let owner = c.pi & c.ctx.depth == 0;
        let bytes = cqe.encode(c.ctx.cqe_size as usize, owner);
        let r = c
            .ctx
            .buf
            .addr(mem, u64::from(slot) * u64::from(c.ctx.cqe_size))
            .map_err(|e| e.to_string())
            .and_then(|a| {
                self.checked(Owner::Cq(cqn), a, bytes.len())?;
                // Body first, the word with the owner bit last.
                mem.write(a + 4, &bytes[4..])
                    .and_then(|()| mem.write(a, &bytes[..4]))
                    .map_err(|e| e.to_string())
            });
        match r {
            Ok(()) => {
                let pi = c.pi;
                self.dump_words("cqe", cqn, pi & 0xffff, &bytes);
                if let Some(c) = self.cqs.get_mut(&cqn) {
                    c.pi = c.pi.wrapping_add(1);
                }
                self.stats.cqes += 1;
                if cqe.status != status::SUCCESS {
                    self.stats.errors += 1;
                }
                self.touched.insert(cqn);
            }
            Err(e) => self.log(&format!("CQ {cqn:#x}: CQE not written: {e}")),
        }
    }

    /// Writes the held-back error completions that are due; whether any
    /// was.
    pub(super) fn post_deferred<M: Dma>(&mut self, mem: &M, now: Instant) -> bool {
        if self.deferred.is_empty() {
            return false;
        }
        let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|(t, _, _)| *t <= now);
        self.deferred = wait;
        for (_, cqn, cqe) in &due {
            self.push_cqe(mem, *cqn, cqe);
        }
        !due.is_empty()
    }

    /// The asynchronous events raised so far, then one CEQE per CQ that got
    /// CQEs (every CQ counts as armed).
    pub(super) fn raise_events<M: Dma, H: Host>(&mut self, host: &mut H, mem: &M) {
        self.post_aeqes(host, mem);
        for cqn in std::mem::take(&mut self.touched) {
            if let Some(c) = self.cqs.get(&cqn) {
                host.post_ceqe(mem, c.ctx.ceqn, cqn);
                self.stats.ceqes += 1;
            }
        }
    }

    /// Posts the asynchronous events raised so far. A responder's event is
    /// posted before the requester's error CQE is written (`sq.rs`), as on
    /// hardware, where the responder raises it when it rejects the request,
    /// before its NAK reaches the requester: the driver's handler (the C
    /// driver's flush work for the responder QP) starts before the
    /// requester's process can see the failure and act on it.
    pub(super) fn post_aeqes<M: Dma, H: Host>(&mut self, host: &mut H, mem: &M) {
        for (ev, queue) in std::mem::take(&mut self.aeqes) {
            if ev == aev::SRQ_LIMIT_REACH {
                // The limit is disarmed: a QUERY_SRQC reads 0 from now on.
                if let Ok(a) = host.ctx_addr(mem, Table::Srqc, queue) {
                    if let Ok(w) = mem.read_u32(a + 4) {
                        let _ = mem.write(a + 4, &(w & !0xffff).to_le_bytes());
                    }
                }
            }
            host.post_event(mem, ev, 0, queue);
        }
    }
}
