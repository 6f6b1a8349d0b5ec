// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! What the model checks of the congestion control fields a driver writes
//! into a QP's context (HIP09's 512-byte QPC, whose second half is the
//! extended context, QPCEX).
//!
//! The caps offer algorithms as bits of `cong_cap` (bit 0 DCQCN, 1 LDCP,
//! 2 HC3, 3 DIP) and name a default (`default_alg`). A QP selects one with
//! `QPCEX_CONG_ALG_SEL` and `QPCEX_CONG_ALG_SUB_SEL` (DCQCN 0/0, LDCP 1/0,
//! HC3 1/1); a DIP QP is a DCQCN one whose `QPCEX_DIP_CTX_IDX_VLD` is set
//! and whose `QPCEX_DIP_CTX_IDX` names a per-destination congestion
//! context, an SCC context indexed as a QPN. QPs sending to the same
//! destination GID may share a context; QPs sending to different ones must
//! not (the engine would pace both destinations as one).
//!
//! [`CongCheck::modify`] sees each QP's context after MODIFY_QPC and
//! returns what is wrong as trace notes: an algorithm the caps do not
//! offer (DCQCN, which UD QPs always use, is not judged), a DIP index past
//! the QPN space, a DIP context shared by QPs of different destinations.
//! The engine itself paces nothing: traffic runs the same whatever the
//! algorithm.

use crate::caps::Caps;
use crate::engine::qps;
use crate::field::Ctx;
use crate::hw_v2_fields::{qpc, qpcex, Qpc, QpcEx};
use std::collections::BTreeMap;

/// Bytes of the base QPC (the extended context follows it).
const QPC_BASE_BYTES: usize = 256;

/// The algorithm a context selects, as its bit in `cong_cap`.
pub fn algorithm(ex: &Ctx<QpcEx, 64>) -> u32 {
    match (
        ex.read(qpcex::CONG_ALG_SEL),
        ex.read(qpcex::CONG_ALG_SUB_SEL),
        ex.read(qpcex::DIP_CTX_IDX_VLD),
    ) {
        (0, _, 0) => 0,
        (1, 0, _) => 1,
        (1, _, _) => 2,
        _ => 3,
    }
}

/// Name of an algorithm bit.
fn name(alg: u32) -> &'static str {
    ["DCQCN", "LDCP", "HC3", "DIP"]
        .get(alg as usize)
        .copied()
        .unwrap_or("?")
}

/// The DIP contexts in use, as the QPs' contexts name them.
#[derive(Default)]
pub struct CongCheck {
    /// QPN → (DIP context index, destination GID) of QPs past INIT whose
    /// context has a valid DIP index.
    dip: BTreeMap<u32, (u32, [u8; 16])>,
}

fn gid(g: &[u8; 16]) -> String {
    g.iter().map(|b| format!("{b:02x}")).collect()
}

impl CongCheck {
    /// Forgets every QP (the function's tables were cleared).
    pub fn clear(&mut self) {
        self.dip.clear();
    }

    /// Checks QP `qpn`'s context `ctx` (base and extended, as stored after
    /// a MODIFY_QPC); returns the notes for the trace.
    pub fn modify(&mut self, caps: &Caps, qpn: u32, ctx: &[u8]) -> Vec<String> {
        let mut notes = Vec::new();
        if ctx.len() < 2 * QPC_BASE_BYTES {
            return notes;
        }
        let base = Ctx::<Qpc, 64>::from_bytes(&ctx[..QPC_BASE_BYTES]);
        let ex = Ctx::<QpcEx, 64>::from_bytes(&ctx[QPC_BASE_BYTES..2 * QPC_BASE_BYTES]);
        let st = base.read(qpc::QP_ST);
        if st == qps::RESET || st == qps::INIT {
            self.dip.remove(&qpn);
            return notes;
        }
        let alg = algorithm(&ex);
        if alg != 0 && caps.cong_cap & (1 << alg) == 0 {
            notes.push(format!(
                "QP {qpn:#x}: congestion algorithm {} is not offered (cong_cap {:#x})",
                name(alg),
                caps.cong_cap
            ));
        }
        if ex.read(qpcex::DIP_CTX_IDX_VLD) == 0 {
            self.dip.remove(&qpn);
            return notes;
        }
        let idx = ex.read(qpcex::DIP_CTX_IDX);
        if idx >= caps.num_qps() {
            notes.push(format!(
                "QP {qpn:#x}: DIP context {idx:#x} past the {} QPNs",
                caps.num_qps()
            ));
        }
        let mut dgid = [0u8; 16];
        dgid.copy_from_slice(&ctx[qpc::DGID_BYTES]);
        for (&other, (i, g)) in &self.dip {
            if other != qpn && *i == idx && *g != dgid {
                notes.push(format!(
                    "DIP context {idx:#x}: QP {qpn:#x} to {} shares it with QP {other:#x} to {}",
                    gid(&dgid),
                    gid(g)
                ));
            }
        }
        self.dip.insert(qpn, (idx, dgid));
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 512-byte context in state `st` with the given QPCEX word 0 and
    /// the first DGID byte `g`.
    fn ctx(st: u32, ex0: u32, g: u8) -> Vec<u8> {
        let mut b = vec![0u8; 512];
        let mut base = Ctx::<Qpc, 64>::default();
        base.write(qpc::QP_ST, st);
        for (i, w) in base.as_le_words().iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        b[qpc::DGID_BYTES.start] = g;
        b[256..260].copy_from_slice(&ex0.to_le_bytes());
        b
    }

    /// QPCEX word 0 of a DIP QP on context `idx`.
    fn dip(idx: u32) -> u32 {
        (idx << 3) | (1 << 2)
    }

    #[test]
    fn shared_only_by_one_destination() {
        let caps = Caps {
            cong_cap: 0xf,
            ..Caps::default()
        };
        let mut c = CongCheck::default();
        assert!(c.modify(&caps, 8, &ctx(qps::RTR, dip(8), 1)).is_empty());
        assert!(c.modify(&caps, 9, &ctx(qps::RTR, dip(8), 1)).is_empty());
        let n = c.modify(&caps, 10, &ctx(qps::RTR, dip(8), 2));
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n[0].starts_with("DIP context 0x8: QP 0xa to 02"), "{n:?}");
        // Back to RESET: no longer counted; QP 0xa (to 02) is left.
        assert!(c.modify(&caps, 8, &ctx(qps::RESET, 0, 0)).is_empty());
        assert!(c.modify(&caps, 9, &ctx(qps::RESET, 0, 0)).is_empty());
        assert!(c.modify(&caps, 11, &ctx(qps::RTS, dip(8), 2)).is_empty());
        assert_eq!(c.modify(&caps, 12, &ctx(qps::RTS, dip(8), 3)).len(), 2);
    }

    #[test]
    fn algorithms_against_the_caps() {
        let caps = Caps::default();
        assert_eq!(caps.cong_cap, 1);
        let mut c = CongCheck::default();
        // DCQCN (all zero) is never judged; LDCP, HC3 and DIP are not offered.
        assert!(c.modify(&caps, 8, &ctx(qps::RTS, 0, 0)).is_empty());
        for (ex0, alg) in [(1 | 1 << 23, "LDCP"), (3, "HC3"), (dip(8), "DIP")] {
            let n = c.modify(&caps, 8, &ctx(qps::RTS, ex0, 0));
            assert_eq!(n.len(), 1, "{n:?}");
            assert!(n[0].contains(alg), "{n:?}");
        }
        let n = c.modify(&caps, 8, &ctx(qps::RTS, dip(caps.num_qps()), 0));
        assert!(n.iter().any(|s| s.contains("past the")), "{n:?}");
        // A HIP08 context (256 bytes) has no extended part.
        assert!(c.modify(&caps, 8, &ctx(qps::RTS, 3, 0)[..256]).is_empty());
    }
}
