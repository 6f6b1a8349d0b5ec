#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The kernel data path without user QPs (either driver, SIM=1): a user MAD
# agent's GETs and GetResps through the kernel GSI QP (umad_ping.py:
# post_send UD with GRH, CEQ -> completion handler, poll_cq, receive
# re-posting), then an unload that must leave no WARN or lockdep report.
# TEST lines are in the group "kpath/...".
#
#   sh /opt/hns/kpath-plan.sh [DRIVER-MODULE]
. /opt/hns/lib.sh
mod=${1:-hns_roce_rs}

check kpath/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
GIDX=$(roce_v2_gid hns_0)
[ -n "$GIDX" ] || { report kpath/roce-v2-gid FAIL "no RoCE v2 GID"; plan_exit; }
check kpath/umad-ping timeout 60 python3 /opt/hns/umad_ping.py "$GIDX" hns_0 5
echo "    $(printf '%s\n' "$out" | tail -n 1)"
check kpath/unload sh -c "rmmod $mod && rmmod hns_sim"
plan_exit
