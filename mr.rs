// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause

//! Memory regions (`hns_roce_mr.c`): so far the DMA MR of kernel users
//! (`hns_roce_get_dma_mr`) and deregistration.
//!
//! An MR is an MPT entry: its index comes from the device's MR key space,
//! its key is the index rotated (`hw_index_to_key`), the MPT table chunk is
//! taken from the HEM tables and the entry written with CREATE_MPT. User
//! MRs (a PBL MPT over a umem) come with the user-memory MTR.

use crate::cmdq::{Cmd, MailboxBuf};
use crate::hem::table::HemTables;
use crate::hem::HemType;
use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::consts::mbox;
use crate::hns_roce_hw_v2::ctx::{self as hw_ctx, index_to_key, key_to_index};
use crate::pd::IdSpace;
use crate::rdma;
use kernel::{
    device::{Bound, Device},
    prelude::*, //
};

/// What registering and deregistering an MR needs from the device.
pub(crate) struct MrEnv<'a> {
    /// Commands.
    pub(crate) cmd: &'a Cmd,
    /// DMA device.
    pub(crate) dev: &'a Device<Bound>,
    /// Context tables (the MPT table).
    pub(crate) hem: &'a HemTables,
    /// Capabilities.
    pub(crate) caps: &'a Caps,
    /// MPT indexes (MR keys).
    pub(crate) ids: &'a IdSpace,
}

/// The MPT access bits of `IB_ACCESS_*` flags `access`.
fn mpt_access(access: u32) -> hw_ctx::MrAccess {
    hw_ctx::MrAccess {
        remote_atomic: access & rdma::ACCESS_REMOTE_ATOMIC != 0,
        remote_read: access & rdma::ACCESS_REMOTE_READ != 0,
        remote_write: access & rdma::ACCESS_REMOTE_WRITE != 0,
        local_write: access & rdma::ACCESS_LOCAL_WRITE != 0,
    }
}

/// A DMA MR on PD `pdn` with `access` (`IB_ACCESS_*`): MR key, MPT table
/// entry, CREATE_MPT (`hns_roce_get_dma_mr`). Returns the key (lkey and
/// rkey alike).
///
/// # Errors
///
/// `ENOMEM` when no key is free, or the errno of the table get or of the
/// mailbox; what was taken is given back.
pub(crate) fn get_dma_mr(env: &MrEnv<'_>, pdn: u32, access: u32) -> Result<u32> {
    let idx = env.ids.alloc()?;
    let key = index_to_key(idx);
    let mtpt = env.hem.table(HemType::Mtpt)?;
    if let Err(e) = mtpt.get(env.dev, idx) {
        dev_err!(
            env.cmd.device(),
            "failed to alloc mtpt, ret = {}.\n",
            e.to_errno()
        );
        env.ids.free(idx);
        return Err(e);
    }
    let c = hw_ctx::dma_mr_mpt(pdn, mpt_access(access), key);
    let r = MailboxBuf::new(env.dev).and_then(|mb| {
        mb.write_le_words(c.as_le_words());
        env.cmd.mbox(
            mb.dma(),
            0,
            mbox::CREATE_MPT,
            idx & (env.caps.num_mtpts - 1),
        )
    });
    if let Err(e) = r {
        dev_err!(
            env.cmd.device(),
            "failed to create mpt, ret = {}.\n",
            e.to_errno()
        );
        mtpt.put(env.dev, idx);
        env.ids.free(idx);
        return Err(e);
    }
    Ok(key)
}

/// Deregisters the MR with `key` (`hns_roce_dereg_mr`): DESTROY_MPT (a
/// failure is only logged), then the MPT table entry and the key go back.
pub(crate) fn dereg_mr(env: &MrEnv<'_>, key: u32) {
    let idx = key_to_index(key);
    if let Err(e) = env
        .cmd
        .mbox(0, 0, mbox::DESTROY_MPT, idx & (env.caps.num_mtpts - 1))
    {
        dev_warn!(
            env.cmd.device(),
            "failed to destroy mpt, ret = {}.\n",
            e.to_errno()
        );
    }
    if let Ok(t) = env.hem.table(HemType::Mtpt) {
        t.put(env.dev, idx);
    }
    env.ids.free(idx);
}
