#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The lean traffic plan for the HIP09 option flags (make check's
# capsx boots run it with STASH, SDI_MODE and LIMIT_BANK on, and the caps
# offering all four congestion control algorithms with DIP the default):
# uqp-plan.sh (user RC/UD/XRC pingpongs, QP states, XRC objects, unload;
# its trace is compared), then hns_sim and the driver again for an
# ib_write_bw pair per algorithm asked for through libhns'
# hnsdv_create_qp (perftest's --congest_type), an ib_send_bw pair and one
# run of pyverbs' test_qpex (outcomes compared, per test), then the
# unload. TEST lines in the group "uqp-<driver>/" as uqp-plan.sh's, and
# pyverbs-plan.sh's "pyverbs/test_qpex-1".
#
#   sh /opt/hns/capsx-plan.sh c|rs
. /opt/hns/lib.sh
HNS_SERVER_DELAY=${HNS_SERVER_DELAY:-3}
HNS_TIMEOUT=${HNS_TIMEOUT:-120}
d=${1:-rs}
g=uqp-$d
MOD=$(driver_module "$d") || exit 2

sh /opt/hns/uqp-plan.sh "$d"

reload() {
    insmod /opt/run/modules/hns_sim.ko && load_roce "$d" && port_state hns_0 PORT_ACTIVE
}
check "$g/reload" reload || plan_exit
need_roce_v2_gid "$g"
# The QP contexts of each pair carry the algorithm; the host checks them
# in the trace (make check's capsx-cong-fields).
port=18530
for alg in DCQCN LDCP HC3 DIP; do
    perf_pair "$g/write-bw-$alg" \
        "ib_write_bw -d hns_0 -x $GIDX -p $port -n 20 -F --no_ddp --congest_type=$alg" \
        "ib_write_bw -d hns_0 -x $GIDX -p $port -n 20 -F --no_ddp --congest_type=$alg 127.0.0.1"
    port=$((port + 1))
done
send_bw_and_qpex "$g" "$d"
plan_exit
