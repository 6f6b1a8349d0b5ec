#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# User RC and UD QPs through libhns, the lines of data-plan.sh that need
# nothing beyond them (user MR, CQ, RC/UD QP with an address vector):
# ibv_rc_pingpong, ibv_ud_pingpong, ibv_xsrq_pingpong (and with
# HNS_UQP_PERF=1 perftest's ib_send_bw), each loopback
# on hns_0, a single-process walk through the QP states with query_qp
# (qp_states.py), XRC objects and one XRC SEND (xrc_objects.py), then the driver and hns_sim unloaded so the hns-sim trace
# ends with the teardown. Run on both drivers (DRIVER=c|rs, SIM=1); the two
# traces must be equal (scripts/trace-diff.py --full). TEST lines are in
# the group "uqp-<driver>/...".
#
#   sh /opt/hns/uqp-plan.sh c|rs
. /opt/hns/lib.sh
# The server creates its objects before the client starts (3 s on TCG),
# so both drivers number MRs, CQs and QPs alike.
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-3}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}
d=${1:-rs}
g=uqp-$d

check "$g/hns0-active" port_state hns_0 PORT_ACTIVE || plan_exit
GIDX=$(roce_v2_gid hns_0)
if [ -z "$GIDX" ]; then
    report "$g/roce-v2-gid" FAIL "no RoCE v2 GID on hns_0 after 10 s"
    plan_exit
fi

user_pingpongs "$g"
# ib_send_bw (perftest, --no_ddp -F) passed on both drivers too, but its
# server and client create their objects in a varying order even with the
# delay (QPN 0x18/0x1a, MR keys 2/3 swapped in one of four runs), which
# breaks the trace comparison: run it with HNS_UQP_PERF=1.
if [ "${HNS_UQP_PERF:-0}" = 1 ]; then
    PERF_OPTS="-n 50 -F --no_ddp"
    pair "$g/send-bw" \
        "ib_send_bw -d hns_0 -x $GIDX -p 18520 $PERF_OPTS" \
        "ib_send_bw -d hns_0 -x $GIDX -p 18520 $PERF_OPTS 127.0.0.1"
fi

# One process: QP states, address vector, query_qp, a refused RTS->SQD.
# Its output is printed between markers for the host to compare. The
# hns_roce trace events are on meanwhile (its CQ, QP and MR buffers, the MR,
# the moves to ERR): TRACEEV lines the host compares with the other
# driver's (scripts/trace-events-diff.py).
hns_events_on
echo "HNS-QPSTATES-BEGIN"
timeout "$HNS_TIMEOUT" python3 /opt/hns/qp_states.py "$GIDX" 2>&1
qrc=$?
echo "HNS-QPSTATES-END"
if [ $qrc -eq 0 ]; then report "$g/qp-states" PASS; else report "$g/qp-states" FAIL "exit $qrc"; fi
check "$g/trace-events" hns_events hns_mr hns_buf_attr hns_sq_flush_cqe hns_rq_flush_cqe \
    hns_cmdq_req hns_cmdq_resp
echo "    $(printf '%s\n' "$out" | grep ' events$')"
cat /tmp/hns-events.txt

# One process: XRC domain, XRC SRQ, XRC_TGT and XRC_INI QPs, one SEND,
# restrack of them (SRQs included); printed between markers as above.
echo "HNS-XRC-BEGIN"
timeout "$HNS_TIMEOUT" python3 /opt/hns/xrc_objects.py "$GIDX" 2>&1
xrc=$?
echo "HNS-XRC-END"
if [ $xrc -eq 0 ]; then report "$g/xrc-objects" PASS; else report "$g/xrc-objects" FAIL "exit $xrc"; fi

mod=$([ "$d" = c ] && echo hns_roce_hw_v2 || echo hns_roce_rs)
check "$g/unload" sh -c "rmmod $mod && rmmod hns_sim"
plan_exit
