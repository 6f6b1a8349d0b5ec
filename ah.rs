// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Address handles (`hns_roce_ah.c`): the software address vector of an AH,
//! user or kernel, from what the RDMA core resolved (GID, MAC, DSCP).
//!
//! An AH has no hardware context and no mailbox: the vector is kept in the
//! shim's `ib_ah` container (`rdma_shim_ah`), which also answers a user AH
//! (priority, TC mode, MAC for libhns) and does `query_ah`/`destroy_ah` on
//! its own. The shim gathers the request (`AhIn`: GRH, random UDP source
//! port, the NIC's DSCP lookup); this file decides.

use crate::hns_roce_hw_v2::caps::Caps;
use crate::hns_roce_hw_v2::ctx::flow_label_to_udp_sport;
use crate::hns_roce_hw_v2::qpc::max_sl;
use crate::hw_rev::HwRev;
use crate::rdma::{AddrVec, AhIn, DscpMap, RATE_10_GBPS, TC_MAP_MODE_DSCP, VLAN_N_VID};
use kernel::{device::Device, prelude::*};

/// What creating an AH needs from the device.
pub(crate) struct AhEnv<'a> {
    /// The PCI function, for logging.
    pub(crate) dev: &'a Device,
    /// Capabilities (service levels).
    pub(crate) caps: &'a Caps,
    /// Engine revision.
    pub(crate) rev: HwRev,
    /// The NIC's DSCP-to-priority map.
    pub(crate) dscp: &'a DscpMap,
}

/// Fills the address vector `av` of a new AH from `req`
/// (`hns_roce_create_ah`).
///
/// # Errors
///
/// `EOPNOTSUPP` for a user AH on HIP08, `EINVAL` for a service level the
/// engine does not have, the errno of the DSCP lookup, or on HIP08 that of
/// reading the source GID's VLAN.
pub(crate) fn create_ah(env: &AhEnv<'_>, req: &AhIn, av: &mut AddrVec) -> Result {
    if env.rev.is_hip08() && req.user != 0 {
        return Err(EOPNOTSUPP);
    }
    let tclass = if req.roce_v2 != 0 {
        req.traffic_class >> 2
    } else {
        req.traffic_class
    };
    av.port = req.port;
    av.gid_index = req.sgid_index;
    if req.static_rate != 0 {
        // A non-zero static rate becomes 10 Gb/s.
        av.stat_rate = RATE_10_GBPS;
    }
    av.hop_limit = req.hop_limit;
    av.flowlabel = req.flow_label;
    av.udp_sport = if req.flow_label == 0 {
        req.random_sport
    } else {
        flow_label_to_udp_sport(req.flow_label)
    };
    av.tclass = tclass;
    av.sl = req.sl;
    av.tc_mode = 0;
    if req.roce_v2 != 0 {
        match env.dscp.prio(req.traffic_class >> 2) {
            Ok((mode, prio)) => {
                av.tc_mode = mode;
                if mode == TC_MAP_MODE_DSCP {
                    av.sl = prio;
                }
            }
            Err(e) if e == EOPNOTSUPP => {}
            Err(e) => return Err(e),
        }
    }
    if !sl_valid(env, av.sl) {
        return Err(EINVAL);
    }
    av.dgid = req.dgid;
    av.mac = req.dmac;
    // HIP08 takes the VLAN from the address vector (the UD WQE's fields).
    if env.rev.is_hip08() {
        if req.l2_ret != 0 {
            return Err(Error::from_errno(req.l2_ret));
        }
        av.vlan_id = req.vlan_id;
        av.vlan_en = u8::from(req.vlan_id < VLAN_N_VID);
    }
    Ok(())
}

/// Whether `sl` fits the engine's service levels (`check_sl_valid`).
fn sl_valid(env: &AhEnv<'_>, sl: u8) -> bool {
    let max = max_sl(env.caps.sl_num);
    if u32::from(sl) > max {
        dev_err_ratelimited!(
            env.dev,
            "failed to set SL({}). Shouldn't be larger than {}.\n",
            sl,
            max
        );
        return false;
    }
    true
}
