// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Gather and scatter: SGE lists, the payload of a SEND/WRITE, receive
//! WQEs of an RQ or SRQ (producer indexes, consumption, their CQ).

use super::*;

impl Engine {
    /// The data segments of an SQ WQE (without zero-length ones).
    pub(super) fn sq_sges<M: Dma>(
        &self,
        mem: &M,
        ctx: &QpCtx,
        w: &RcWqe,
        raw: &[u8],
    ) -> Result<Vec<DataSeg>, String> {
        let mut out = Vec::new();
        let n = w.sge_num as usize;
        for i in 0..n.min(wqe::SGE_IN_WQE) {
            let o = wqe::SQ_WQE_HDR + i * SGE_SIZE;
            out.push(DataSeg::from_bytes(raw.get(o..o + SGE_SIZE).unwrap_or(&[])));
        }
        for i in wqe::SGE_IN_WQE..n {
            let mut b = [0u8; SGE_SIZE];
            let at = ctx.sge_at(w.start_sge + (i - wqe::SGE_IN_WQE) as u32);
            ctx.buf.read(mem, at, &mut b).map_err(|e| e.to_string())?;
            out.push(DataSeg::from_bytes(&b));
        }
        out.retain(|s| s.len != 0);
        Ok(out)
    }

    /// The payload of a SEND/WRITE WQE: inline data or the gathered SGEs.
    pub(super) fn gather<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        ctx: &QpCtx,
        w: &RcWqe,
        raw: &[u8],
    ) -> Result<Vec<u8>, Fail> {
        let len = w.msg_len as usize;
        let mut data = vec![0u8; len];
        let loc = |req: u8, why: String| Fail {
            req,
            resp: None,
            why,
        };
        if w.inline {
            if w.inline_ext {
                // Contiguous in the extended SGE ring from start_sge,
                // wrapping. The engine fetches the WQE's SGE_NUM extended
                // SGEs with it: the data must lie in them (libhns counts
                // the length in whole SGEs, rounded up).
                if len > w.sge_num as usize * SGE_SIZE {
                    return Err(loc(
                        status::LOC_LEN_ERR,
                        format!("inline data of {len} bytes in {} extended SGEs", w.sge_num),
                    ));
                }
                let mut done = 0usize;
                let mut idx = w.start_sge;
                while done < len {
                    let n = (len - done).min(SGE_SIZE);
                    ctx.buf
                        .read(mem, ctx.sge_at(idx), &mut data[done..done + n])
                        .map_err(|e| loc(status::LOC_QP_OP_ERR, format!("inline data: {e}")))?;
                    done += n;
                    idx = idx.wrapping_add(1);
                }
            } else {
                let src = raw
                    .get(wqe::SQ_WQE_HDR..wqe::SQ_WQE_HDR + len)
                    .ok_or_else(|| loc(status::LOC_LEN_ERR, format!("inline length {len}")))?;
                data.copy_from_slice(src);
            }
            return Ok(data);
        }
        let sges = self
            .sq_sges(mem, ctx, w, raw)
            .map_err(|e| loc(status::LOC_QP_OP_ERR, format!("SGE list: {e}")))?;
        let mut done = 0usize;
        for s in sges {
            if done >= len {
                break;
            }
            let n = (s.len as usize).min(len - done);
            let pieces = self
                .key_pieces(
                    host,
                    mem,
                    ctx.pd,
                    Span {
                        key: s.lkey,
                        va: s.addr,
                        len: n as u64,
                    },
                    Access::LocalRead,
                )
                .map_err(|e| loc(status::LOC_PROT_ERR, format!("lkey {:#x}: {e}", s.lkey)))?;
            for (a, l) in pieces {
                let l = l as usize;
                mem.read(a, &mut data[done..done + l])
                    .map_err(|e| loc(status::LOC_PROT_ERR, e.to_string()))?;
                done += l;
            }
        }
        if done < len {
            return Err(loc(
                status::LOC_LEN_ERR,
                format!("SGEs hold {done} of {len} bytes"),
            ));
        }
        Ok(data)
    }

    /// The receive WQE the next message for QP `d` goes to: the RQ's
    /// head, or the SRQ's next index queue entry; `None` when nothing is
    /// posted.
    pub(super) fn next_recv<M: Dma>(&self, mem: &M, d: &QpCtx, srq: Option<u32>) -> Option<Recv> {
        let Some(srqn) = srq else {
            let ci = self.qps.get(&d.qpn).map_or(0, |q| q.rq_ci);
            return (self.rq_pi(mem, d) != ci & 0xffff).then_some(Recv::Rq { qpn: d.qpn, ci });
        };
        let s = self.srqs.get(&srqn)?;
        if self.srq_pi(mem, s) == s.ci & 0xffff {
            return None;
        }
        let mask = (1u32 << s.ctx.shift) - 1;
        let mut e = [0u8; 4];
        s.ctx
            .idx
            .read(mem, u64::from(s.ci & mask) * 4, &mut e)
            .ok()?;
        Some(Recv::Srq {
            srqn: s.ctx.srqn,
            ci: s.ci,
            wqe: u32::from_le_bytes(e) & mask,
        })
    }

    /// SRQ producer index (16 bits): the record doorbell, else the last
    /// SRQ doorbell seen.
    pub(super) fn srq_pi<M: Dma>(&self, mem: &M, s: &Srq) -> u32 {
        match s.ctx.db {
            Some(a) => mem.read_u32(a).map(|v| v & 0xffff).unwrap_or(s.pi_db),
            None => s.pi_db,
        }
    }

    /// Scatters `data` into the receive WQE `r` of QP `d` (lkeys checked
    /// against the SRQ's PD for an SRQ, else the QP's).
    pub(super) fn scatter<M: Dma, H: Host>(
        &self,
        host: &H,
        mem: &M,
        d: &QpCtx,
        r: Recv,
        data: &[u8],
    ) -> Result<(), Fail> {
        let rem = |resp: u8, req: u8, why: String| Fail {
            req,
            resp: Some(resp),
            why,
        };
        let (buf, off, rqws, pd) = match r {
            Recv::Rq { ci, .. } => (&d.buf, d.rq_wqe_off(ci), d.rqws, d.pd),
            Recv::Srq { srqn, wqe, .. } => {
                let s = self.srqs.get(&srqn).ok_or_else(|| {
                    rem(
                        status::LOC_QP_OP_ERR,
                        status::REM_OP_ERR,
                        format!("SRQ {srqn:#x} gone"),
                    )
                })?;
                let c = &s.ctx;
                (&c.buf, u64::from(wqe) << (4 + c.rqws), c.rqws, c.pd)
            }
        };
        let stride = 16usize << rqws;
        let mut raw = vec![0u8; stride];
        buf.read(mem, off, &mut raw).map_err(|e| {
            rem(
                status::LOC_QP_OP_ERR,
                status::REM_OP_ERR,
                format!("RQ WQE: {e}"),
            )
        })?;
        let mut done = 0usize;
        for c in raw.chunks_exact(SGE_SIZE) {
            if done >= data.len() {
                break;
            }
            let s = DataSeg::from_bytes(c);
            if s.len == wqe::INVALID_SGE_LENGTH && s.lkey == 0 {
                break;
            }
            if s.len == 0 {
                continue;
            }
            let n = (s.len as usize).min(data.len() - done);
            let pieces = self
                .key_pieces(
                    host,
                    mem,
                    pd,
                    Span {
                        key: s.lkey,
                        va: s.addr,
                        len: n as u64,
                    },
                    Access::LocalWrite,
                )
                .map_err(|e| {
                    rem(
                        status::LOC_PROT_ERR,
                        status::REM_OP_ERR,
                        format!("receive lkey {:#x}: {e}", s.lkey),
                    )
                })?;
            for (a, l) in pieces {
                let l = l as usize;
                self.put(mem, s.lkey, a, &data[done..done + l])
                    .map_err(|e| rem(status::LOC_PROT_ERR, status::REM_OP_ERR, e.to_string()))?;
                done += l;
            }
        }
        if done < data.len() {
            return Err(rem(
                status::LOC_LEN_ERR,
                status::REM_INV_REQ_ERR,
                format!("receive WQE holds {done} of {} bytes", data.len()),
            ));
        }
        Ok(())
    }

    /// RQ producer index of `d` (16 bits).
    pub(super) fn rq_pi<M: Dma>(&self, mem: &M, d: &QpCtx) -> u32 {
        let fallback = self.qps.get(&d.qpn).map_or(0, |q| q.rq_db);
        match d.rq_db {
            Some(a) => mem.read_u32(a).map(|v| v & 0xffff).unwrap_or(fallback),
            None => fallback,
        }
    }

    /// Takes receive WQE `r`; an SRQ that falls below its armed limit
    /// raises SRQ_LIMIT_REACH and disarms.
    pub(super) fn consume<M: Dma>(&mut self, mem: &M, r: Recv) {
        match r {
            Recv::Rq { qpn, ci } => {
                if let Some(q) = self.qps.get_mut(&qpn) {
                    q.rq_ci = ci.wrapping_add(1);
                }
            }
            Recv::Srq { srqn, ci, wqe } => {
                if self.dump.is_some() {
                    self.dump_srq(mem, srqn, ci, wqe);
                }
                let Some(s) = self.srqs.get(&srqn) else {
                    return;
                };
                let pi = self.srq_pi(mem, s);
                let left = pi.wrapping_sub(ci.wrapping_add(1)) & 0xffff;
                let fire = s.limit != 0 && left < s.limit;
                if let Some(s) = self.srqs.get_mut(&srqn) {
                    s.ci = ci.wrapping_add(1);
                    if fire {
                        s.limit = 0;
                        self.aeqes.push((aev::SRQ_LIMIT_REACH, srqn));
                    }
                }
            }
        }
    }

    /// `--dump-data`: the index queue entry `ci` of SRQ `srqn` (one word,
    /// as the driver wrote it) and the SRQ WQE `wqe` it names (all its
    /// SGE slots), as the engine takes them.
    fn dump_srq<M: Dma>(&mut self, mem: &M, srqn: u32, ci: u32, wqe: u32) {
        let Some(s) = self.srqs.get(&srqn) else {
            return;
        };
        let c = &s.ctx;
        let mask = (1u32 << c.shift) - 1;
        let mut e = [0u8; 4];
        let idx_ok = c.idx.read(mem, u64::from(ci & mask) * 4, &mut e).is_ok();
        let mut raw = vec![0u8; 16usize << c.rqws];
        let wqe_ok = c
            .buf
            .read(mem, u64::from(wqe) << (4 + c.rqws), &mut raw)
            .is_ok();
        if idx_ok {
            self.dump_words("srqidx", srqn, ci & 0xffff, &e);
        }
        if wqe_ok {
            self.dump_words("srqwqe", srqn, wqe, &raw);
        }
    }

    /// `XRC_SRQN` of a receive CQE: the SRQ, when it is an XRC SRQ.
    pub(super) fn xrc_srqn(&self, r: Recv) -> u32 {
        match r {
            Recv::Srq { srqn, .. } if self.srqs.get(&srqn).is_some_and(|s| s.ctx.xrc) => srqn,
            _ => 0,
        }
    }

    /// The CQ a receive completion of `d` goes to (an XRC SRQ's own CQ for
    /// XRC targets).
    pub(super) fn recv_cqn(&self, d: &QpCtx, r: Recv) -> u32 {
        match r {
            Recv::Srq { srqn, .. } => match self.srqs.get(&srqn) {
                Some(s) if s.ctx.xrc => s.ctx.xrc_cqn,
                _ => d.rx_cqn,
            },
            Recv::Rq { .. } => d.rx_cqn,
        }
    }
}
