// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! QP flow control on HIP08 (`hns_roce_v2_qp_flow_control_init`): every new
//! QP's congestion control (SCC) context is cleared by the firmware before
//! the QP is used, when the caps have QP_FLOW_CTRL. HIP09 does nothing here.

use super::QpEnv;
use crate::cmdq::desc::{CmqData, Desc};
use crate::field::Field;
use crate::hns_roce_hw_v2::consts::{cap_flag, cmq_op};
use kernel::{
    prelude::*,
    time::{delay::fsleep, Delta}, //
};

/// The QP number in CLR_SCCC's payload (`hns_roce_sccc_clr.qpn`).
const SCCC_CLR_QPN: Field<CmqData> = Field::new(31, 0);
/// The clear-done flag in QUERY_SCCC's answer
/// (`hns_roce_sccc_clr_done.clr_done`).
const SCCC_CLR_DONE: Field<CmqData> = Field::new(31, 0);
/// Queries of the flag after the first (`HNS_ROCE_CMQ_SCC_CLR_DONE_CNT`).
const SCC_CLR_DONE_CNT: u32 = 5;
/// Sleep between two queries, ms.
const SCC_CLR_POLL_MS: i64 = 20;

impl QpEnv<'_> {
    /// Clears the SCC context of new QP `qpn` (HIP08 with QP_FLOW_CTRL):
    /// RESET_SCCC, CLR_SCCC for the QP, then QUERY_SCCC until the firmware
    /// says done, one QP at a time (C's `scc_mutex`).
    ///
    /// # Errors
    ///
    /// The command's errno, or `ETIMEDOUT` if the flag never came; each
    /// logged as C logs it.
    pub(crate) fn flow_control_init(&self, qpn: u32) -> Result {
        if self.caps.flags & cap_flag::QP_FLOW_CTRL == 0 || self.rev.is_hip09() {
            return Ok(());
        }
        let _one_at_a_time = self.scc.lock();
        let mut d = [Desc::new(cmq_op::RESET_SCCC, false)];
        self.cmd
            .send(&mut d)
            .inspect_err(|e| ibdev_err!(self.cmd, "failed to reset SCC ctx", ret = e.to_errno()))?;
        let mut d = [Desc::new(cmq_op::CLR_SCCC, false)];
        d[0].data.write(SCCC_CLR_QPN, qpn);
        self.cmd
            .send(&mut d)
            .inspect_err(|e| ibdev_err!(self.cmd, "failed to clear SCC ctx", ret = e.to_errno()))?;
        for _ in 0..=SCC_CLR_DONE_CNT {
            let mut d = [Desc::new(cmq_op::QUERY_SCCC, true)];
            self.cmd.send(&mut d).inspect_err(|e| {
                ibdev_err!(
                    self.cmd,
                    "failed to query clr cmq, ret = {}\n",
                    e.to_errno()
                )
            })?;
            if d[0].data.read(SCCC_CLR_DONE) != 0 {
                return Ok(());
            }
            fsleep(Delta::from_millis(SCC_CLR_POLL_MS));
        }
        ibdev_err!(self.cmd, "query SCC clr done flag overtime.\n");
        Err(ETIMEDOUT)
    }
}
