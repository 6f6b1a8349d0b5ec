#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Source of the data-path test vectors (tests/vectors/cqe.rs, wqe.rs): run
# once on the C driver with hns-sim dumping every WQE it takes and every
# CQE it writes,
#
#   HNS_SIM_ARGS="--dump-data /tmp/dump.txt" scripts/run-guest.sh \
#       --driver c --sim 1 --cmd-file tests/guest/dump-plan.sh --name dump-c
#
# wqe_ops.py posts every RC opcode and a UD SEND_WITH_IMM through libhns;
# cm_noqp.py's CM MADs go through the kernel GSI QP without user QPs;
# rping's connection setup sends the RDMA CM's MADs through the C kernel
# driver's GSI QP (post_send UD with GRH, poll_cq of its receives). TEST
# lines are in the group "dump/...".
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-1}

check dump/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
GIDX=$(roce_v2_gid hns_0)
[ -n "$GIDX" ] || { report dump/roce-v2-gid FAIL "no RoCE v2 GID"; plan_exit; }
check dump/wqe-ops timeout 60 python3 /opt/hns/wqe_ops.py "$GIDX"
echo "    $(printf '%s\n' "$out" | tail -n 1)"
/usr/bin/ip addr add 192.168.77.1/24 dev eth0 && /usr/bin/ip link set eth0 up
check dump/cm-no-qp timeout 60 python3 /opt/hns/cm_noqp.py 192.168.77.1 2
echo "    $(printf '%s\n' "$out" | tail -n 1)"
pair dump/rping "rping -s -a 192.168.77.1 -C 2 -v" "rping -c -a 192.168.77.1 -C 2 -v"
plan_exit
