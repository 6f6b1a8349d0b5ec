#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Asynchronous events the engine raises on a responder QP, on the C
# reference driver (SIM=1, DRIVER=c), in a boot of their own that leaves the
# driver loaded: rc_access.py (an RDMA WRITE with a wrong rkey: the
# requester's CQE is IBV_WC_REM_ACCESS_ERR, the responder QP gets
# LOCAL_WQ_ACCESS_ERROR, AEQE 0x07, which the driver reports as
# IBV_EVENT_QP_ACCESS_ERR). TEST lines are in the group "event/...".
#
# Why not in data-plan.sh: the C driver handles that AEQE in hard IRQ
# context (hns_roce_flush_cqe -> hns_roce_qp_lookup takes qp_table_xa) and
# takes dip_xa with IRQs on at unload (free_dip_entry); both xarrays are
# xa_init'ed in hns_roce_init_qp_table, and xa_init_flags' lock class key
# is one per translation unit, so they share a lockdep class and lockdep
# reports "inconsistent lock state" at rmmod, which fails the run's
# kernel-log check. HNS_UNLOAD=1 unloads at the end to show it.
#
#   sh /opt/hns/event-plan.sh
. /opt/hns/lib.sh

check event/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
GIDX=$(roce_v2_gid hns_0)
[ -n "$GIDX" ] || { report event/roce-v2-gid FAIL "no RoCE v2 GID on hns_0"; plan_exit; }
check event/access-error timeout 60 python3 /opt/hns/rc_access.py "$GIDX"
echo "    $(printf '%s\n' "$out" | tail -n 1)"
if [ "${HNS_UNLOAD:-0}" = 1 ]; then
    check event/unload sh -c "rmmod $DRV_MODULE && rmmod hns_sim"
fi
plan_exit
