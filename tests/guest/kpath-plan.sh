#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The kernel data path without user QPs (either driver, SIM=1): RDMA CM
# connections without QPs (cm_noqp.py): REQ, REP, RTU, DREQ, DREP through
# the kernel GSI QP (post_send UD with GRH, CEQ -> completion handler,
# poll_cq, receive re-posting), then an unload that must leave no WARN or
# lockdep report. (The test kernel has no ib_umad for a user MAD agent.)
# TEST lines are in the group "kpath-rs/..." or "kpath-c/...".
#
#   sh /opt/hns/kpath-plan.sh [DRIVER-MODULE]
. /opt/hns/lib.sh
mod=${1:-hns_roce_rs}
g=kpath-rs
[ "$mod" = hns_roce_rs ] || g=kpath-c

check $g/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
GIDX=$(roce_v2_gid hns_0)
[ -n "$GIDX" ] || { report $g/roce-v2-gid FAIL "no RoCE v2 GID"; plan_exit; }
/usr/bin/ip addr add 192.168.77.1/24 dev eth0 && /usr/bin/ip link set eth0 up
check $g/cm-no-qp timeout 60 python3 /opt/hns/cm_noqp.py 192.168.77.1 5
echo "    $(printf '%s\n' "$out" | tail -n 1)"
check $g/unload sh -c "rmmod $mod && rmmod hns_sim"
plan_exit
