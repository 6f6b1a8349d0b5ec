#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The lean traffic plan for direct WQE (HIP09 cap bit 12) on user
# QPs: make check's arm64 dwqe boots run it with hns-sim's cap flags plus
# DIRECT_WQE, one boot per driver. libhns maps each QP's 64 KiB page of
# BAR 4 and pushes every single-WR post into it whole; the x86_64 build of
# libhns 56.1 cannot (docs/c-driver-findings.md 15), so this plan runs on
# the arm64 guest only. ibv_rc_pingpong, ibv_ud_pingpong and
# ibv_xsrq_pingpong (libibverbs' post_send) and rping (user QPs, and the
# CM's MADs through the kernel GSI QP, whose posts are direct WQEs too),
# the driver unloaded and loaded again, an ib_send_bw pair (the WR API's
# wr_complete) and one run of pyverbs' test_qpex (the lean plan),
# then the driver and hns_sim unloaded. TEST lines in the group
# "dwqe-<driver>/", and pyverbs-plan.sh's "pyverbs/test_qpex-1".
#
#   sh /opt/hns/dwqe-plan.sh c|rs
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-3}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}
d=${1:-rs}
g=dwqe-$d
MOD=$(driver_module "$d") || exit 2

# rping's address, on hns_0's netdev before the GIDs are looked at.
nd=$(rdma_netdev hns_0)
/usr/bin/ip addr add 192.168.77.1/24 dev "${nd:-eth0}" 2>/dev/null
/usr/bin/ip link set "${nd:-eth0}" up
check "$g/hns0-active" port_state hns_0 PORT_ACTIVE || plan_exit
need_roce_v2_gid "$g"
user_pingpongs "$g"
pair "$g/rping" "rping -s -a 192.168.77.1 -C 5 -v" "rping -c -a 192.168.77.1 -C 5 -v"
# The driver is loaded again for the perftest pair: its server and client
# number their objects in a varying order, so make check compares the
# trace up to this reload only (as capsx-plan.sh's).
check "$g/unload" rmmod "$MOD"
check "$g/reload" load_roce "$d" || plan_exit
check "$g/hns0-active-again" port_state hns_0 PORT_ACTIVE || plan_exit
send_bw_and_qpex "$g" "$d"
plan_exit
