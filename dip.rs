// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The DIP (destination IP) congestion contexts of HIP09 (`core` only):
//! which context index a QP with the DIP algorithm writes into its
//! extended QPC (`QPCEX_DIP_CTX_IDX`).
//!
//! QPs that send to the same destination GID share one congestion
//! context, so that the engine paces that destination once. The C driver
//! keeps the contexts in `qp_table.dip_xa`, an XArray keyed by QPN: the
//! first time a QP takes a DIP context, an unused entry keyed by its own
//! QPN is added (`alloc_dip_entry`), so there is always at least one
//! unused entry for it; then the QP joins the in-use entry of its
//! destination GID, or else claims the unused entry with the lowest key
//! (`get_dip_ctx_idx`). The key is the context index. An entry whose last
//! QP goes is unused again (`put_dip_ctx_idx`); entries are freed only
//! with the device (`free_dip_entry`).
//!
//! [`DipEntry`] slices here are that table, sorted by index; the caller
//! owns the storage, adds entries where [`slot`] says and serialises the
//! calls (one lock around the table), so nothing here allocates or locks.
//! The indices handed out are the C driver's for the same sequence of
//! calls (the contexts appear in both drivers' QPC traces).

/// Length of a GID (`GID_LEN_V2`).
pub const GID_LEN: usize = 16;

/// One DIP context (`struct hns_roce_dip`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DipEntry {
    /// The context index (the QPN the entry was added for).
    pub idx: u32,
    /// Destination GID of the QPs using it (zero while unused).
    pub dgid: [u8; GID_LEN],
    /// QPs using it (0: unused).
    pub qp_cnt: u32,
}

impl DipEntry {
    /// An unused entry for the QP `qpn`.
    pub const fn unused(qpn: u32) -> Self {
        Self {
            idx: qpn,
            dgid: [0; GID_LEN],
            qp_cnt: 0,
        }
    }
}

/// Where the QP `qpn`'s own entry is in `entries` (sorted by index):
/// `Ok(position)` if it is there, `Err(position)` where it goes.
#[inline(never)]
pub fn slot(entries: &[DipEntry], qpn: u32) -> Result<usize, usize> {
    entries.binary_search_by_key(&qpn, |e| e.idx)
}

/// Takes a reference on the context for `dgid` and returns its index: the
/// in-use entry of that GID if there is one, else the unused entry with
/// the lowest index, now that GID's. `None` if every entry is in use (the
/// caller adds its QP's entry first, so that cannot happen).
pub fn get(entries: &mut [DipEntry], dgid: &[u8; GID_LEN]) -> Option<u32> {
    let pos = entries
        .iter()
        .position(|e| e.qp_cnt != 0 && e.dgid == *dgid)
        .or_else(|| entries.iter().position(|e| e.qp_cnt == 0))?;
    let e = &mut entries[pos];
    if e.qp_cnt == 0 {
        e.dgid = *dgid;
    }
    e.qp_cnt += 1;
    Some(e.idx)
}

/// Drops a reference on the context `idx`; the last one leaves the entry
/// unused (its GID cleared). An index not in the table or not in use is
/// left alone.
pub fn put(entries: &mut [DipEntry], idx: u32) {
    if let Ok(pos) = slot(entries, idx) {
        let e = &mut entries[pos];
        if e.qp_cnt != 0 {
            e.qp_cnt -= 1;
            if e.qp_cnt == 0 {
                e.dgid = [0; GID_LEN];
            }
        }
    }
}
