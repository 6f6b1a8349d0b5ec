// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! UD: datagram execution and delivery with the RoCEv2 GRH, inline data.

use super::*;

/// Writes the 40-byte GRH of a RoCEv2 datagram into `h`: an IPv4 header
/// at bytes 20..40 when the destination GID is IPv4-mapped, an IPv6 header
/// otherwise. Returns the CQE `PORT_TYPE` (1 IPv4, 2 IPv6).
pub fn grh(h: &mut [u8], w: &UdWqe, sgid: &[u8; 16], len: usize) -> u8 {
    h.fill(0);
    let udp_len = (len + 8 + 12 + 4) as u32; // UDP + BTH + DETH (+ ICRC)
    let v4 = w.dgid[..10].iter().all(|&b| b == 0) && w.dgid[10] == 0xff && w.dgid[11] == 0xff;
    if v4 && h.len() >= 40 {
        let ip = &mut h[20..40];
        ip[0] = 0x45;
        ip[1] = w.tclass;
        let total = (udp_len + 20) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip[8] = w.hop_limit;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&sgid[12..16]);
        ip[16..20].copy_from_slice(&w.dgid[12..16]);
        // Header checksum.
        let mut sum = 0u32;
        for c in ip.chunks_exact(2) {
            sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        1
    } else if h.len() >= 40 {
        let vtf = 6u32 << 28 | u32::from(w.tclass) << 20 | (w.flow_label & 0xf_ffff);
        h[0..4].copy_from_slice(&vtf.to_be_bytes());
        h[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        h[6] = 17;
        h[7] = w.hop_limit;
        h[8..24].copy_from_slice(sgid);
        h[24..40].copy_from_slice(&w.dgid);
        2
    } else {
        0
    }
}

/// The inline payload of UD WQE `w` of `s` into `out` (`w.data_len()` bytes),
/// as libhns' `set_ud_inl` lays it out: up to [`wqe::UD_INL_INN_SZ`] bytes
/// in the WQE (`INLINE_TYPE` 0), else (`INLINE_TYPE` 1) contiguous in the
/// extended SGE ring from `MSG_START_SGE_IDX`, wrapping at its end
/// (`fill_ext_sge_inl_data`), inside the WQE's `SGE_NUM` extended SGEs
/// (which the engine fetches with the WQE).
fn ud_inline<M: Dma>(mem: &M, s: &QpCtx, w: &UdWqe, out: &mut [u8]) -> Result<(), (u8, String)> {
    if !w.inline_ext {
        let src = w.inner.get(..out.len()).ok_or_else(|| {
            (
                status::LOC_LEN_ERR,
                format!("{} bytes in the WQE", out.len()),
            )
        })?;
        out.copy_from_slice(src);
        return Ok(());
    }
    if out.len() > w.sge_num as usize * SGE_SIZE {
        return Err((
            status::LOC_LEN_ERR,
            format!(
                "inline data of {} bytes in {} extended SGEs",
                out.len(),
                w.sge_num
            ),
        ));
    }
    let mut idx = w.start_sge;
    for c in out.chunks_mut(SGE_SIZE) {
        s.buf
            .read(mem, s.sge_at(idx), c)
            .map_err(|e| (status::LOC_QP_OP_ERR, e.to_string()))?;
        idx = idx.wrapping_add(1);
    }
    Ok(())
}

impl Engine {
    /// Executes one UD WQE of `s`: SEND/SEND_WITH_IMM to the QPN in the
    /// WQE on the device owning the WQE's DGID, with the 40-byte GRH in
    /// front of the payload in the receive buffer. A datagram nobody can
    /// take (no such QP, Q_Key mismatch, no receive WQE, receive too small)
    /// is dropped; the sender completes anyway, as on a wire.
    pub(super) fn exec_ud<M: Dma, H: Host, W: Wire<M>>(
        &mut self,
        host: &mut H,
        mem: &M,
        wire: &mut W,
        s: &QpCtx,
        idx: u32,
        raw: &[u8],
    ) -> Step {
        let w = UdWqe::from_bytes(raw);
        let send_cqe = |status: u8| Cqe {
            opcode: w.opcode,
            status,
            wqe_idx: idx as u16,
            lcl_qpn: s.qpn,
            ..Cqe::default()
        };
        if !self.send_cq_room(mem, s, w.signaled) {
            return Step::Wait;
        }
        if !matches!(w.opcode, op::SEND | op::SEND_WITH_IMM) {
            self.log(&format!(
                "UD QP {:#x}: opcode {:#x} not modelled",
                s.qpn, w.opcode
            ));
            self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_QP_OP_ERR));
            return Step::Failed;
        }
        // Gather: every UD SGE is in the extended SGE area (none when the
        // data is inline).
        let mut sges = Vec::new();
        for i in 0..if w.inline { 0 } else { w.sge_num } {
            let mut b = [0u8; SGE_SIZE];
            if let Err(e) = s.buf.read(mem, s.sge_at(w.start_sge + i), &mut b) {
                self.log(&format!("UD QP {:#x}: SGE unreadable: {e}", s.qpn));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_QP_OP_ERR));
                return Step::Failed;
            }
            sges.push(DataSeg::from_bytes(&b));
        }
        let len = w.data_len() as usize;
        let mut data = vec![0u8; 40 + len];
        let mut done = 0usize;
        if w.inline {
            if let Err((st, why)) = ud_inline(mem, s, &w, &mut data[40..]) {
                self.log(&format!("UD QP {:#x}: inline data: {why}", s.qpn));
                self.push_cqe(mem, s.tx_cqn, &send_cqe(st));
                return Step::Failed;
            }
            done = len;
        }
        for g in sges.iter().filter(|g| g.len != 0) {
            if done >= len {
                break;
            }
            let n = (g.len as usize).min(len - done);
            let span = Span {
                key: g.lkey,
                va: g.addr,
                len: n as u64,
            };
            let pieces = match self.key_pieces(host, mem, s.pd, span, Access::LocalRead) {
                Ok(p) => p,
                Err(e) => {
                    self.log(&format!("UD QP {:#x}: lkey {:#x}: {e}", s.qpn, g.lkey));
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_PROT_ERR));
                    return Step::Failed;
                }
            };
            for (a, l) in pieces {
                let l = l as usize;
                if mem.read(a, &mut data[40 + done..40 + done + l]).is_err() {
                    self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_PROT_ERR));
                    return Step::Failed;
                }
                done += l;
            }
        }
        if done < len {
            self.push_cqe(mem, s.tx_cqn, &send_cqe(status::LOC_LEN_ERR));
            return Step::Failed;
        }
        let sgid = host.gid(u32::from(w.sgid_index)).unwrap_or([0; 16]);
        let port_type = grh(&mut data[..40], &w, &sgid, len);
        // Bit 31 of the WQE's Q_Key: use the QP's own (libhns already
        // resolves it, the kernel may not).
        let qkey = if w.qkey & (1 << 31) != 0 {
            s.qkey
        } else {
            w.qkey
        };
        let req = Request {
            sqpn: s.qpn,
            dqpn: w.dqpn,
            op: Op::Ud(UdMsg {
                imm: (w.opcode == op::SEND_WITH_IMM).then_some(w.imm),
                qkey,
                port_type,
                sl: w.sl,
                data,
            }),
        };
        if let Response::Wait = self.deliver(host, mem, wire, &w.dgid, &req) {
            return Step::Wait;
        }
        if s.sig_all || w.signaled {
            self.push_cqe(mem, s.tx_cqn, &send_cqe(status::SUCCESS));
        }
        Step::Done
    }

    /// UD responder: the datagram goes to a receive WQE of `d` or is
    /// dropped (no QP, not ready, Q_Key mismatch, no receive WQE, too
    /// small). Waits (without dropping) only for CQ space.
    pub(super) fn respond_ud<M: Dma, H: Host>(
        &mut self,
        host: &mut H,
        mem: &M,
        d: Option<QpCtx>,
        sqpn: u32,
        u: &UdMsg,
    ) -> Response {
        let dropped = Response::Done(Vec::new());
        let Some(d) = d else {
            self.log(&format!("UD QP {sqpn:#x}: no destination QP, dropped"));
            return dropped;
        };
        let ready = d.tst == tst::UD
            && (qps::RTR..=qps::SQD).contains(&d.state)
            && (d.qkey == u.qkey || d.qpn == 1);
        let srq = d.srq.then_some(d.srqn);
        let Some(r) = ready.then(|| self.next_recv(mem, &d, srq)).flatten() else {
            self.log(&format!(
                "UD QP {sqpn:#x} -> {:#x}: datagram dropped",
                d.qpn
            ));
            return dropped;
        };
        if !self.cq_room(mem, d.rx_cqn, 1) {
            return Response::Wait;
        }
        if let Err(f) = self.scatter(host, mem, &d, r, &u.data) {
            self.log(&format!("UD QP {:#x}: dropped: {}", d.qpn, f.why));
            return dropped;
        }
        self.consume(mem, r);
        let opcode = if u.imm.is_some() {
            rop::SEND_WITH_IMM
        } else {
            rop::SEND
        };
        self.push_cqe(
            mem,
            d.rx_cqn,
            &Cqe {
                opcode,
                is_recv: true,
                wqe_idx: r.wqe_idx(),
                imm: u.imm.unwrap_or(0),
                lcl_qpn: d.qpn,
                byte_cnt: u.data.len() as u32,
                port_type: u.port_type,
                rmt_qpn: sqpn,
                sl: u.sl,
                grh: true,
                ..Cqe::default()
            },
        );
        Response::Done(Vec::new())
    }
}
