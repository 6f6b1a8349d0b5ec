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
# unload. With CAPSX_BASE_VECTOR=B, after the reload, a check that the
# driver's interrupts are on the MSI-X vectors from B on. TEST lines in
# the group "uqp-<driver>/" as uqp-plan.sh's, and
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
# With CAPSX_BASE_VECTOR=B (make check's capsx boots run hns-sim with
# roce_base_vector B, which the glue reports as rinfo.base_vector, as
# hclge reports the vectors after the NIC's) the driver's abnormal, AEQ
# and CEQ interrupts must sit on the function's MSI-X vectors B, B+1 and
# B+2.. (the hwirq column of /proc/interrupts is the MSI-X index): a
# driver counting from 0 would request vectors the model never raises.
roce_vectors_from() {
    awk -v b="$1" '
        $NF ~ /^hns-.*-(abn|aeq|ceq)-[0-9]+$/ {
            hw = -1
            for (i = 1; i < NF; i++)
                if ($i ~ /^[0-9]+-edge$/) { hw = $i; sub(/-edge$/, "", hw) }
            n = split($NF, p, "-"); kind = p[n - 1]; j = p[n]
            want = b + j + (kind == "aeq" ? 1 : kind == "ceq" ? 2 : 0)
            print kind "-" j " on MSI-X vector " hw " (want " want ")"
            seen++
            if (hw != want) bad++
        }
        END { if (!seen || bad) exit 1 }' /proc/interrupts
}
if [ -n "${CAPSX_BASE_VECTOR:-}" ]; then
    check "$g/roce-base-vector" roce_vectors_from "$CAPSX_BASE_VECTOR"
fi
# make check's capsx boots leave REREG_MR (cap bit 0) out: the driver
# offers no rereg_user_mr then, and the RDMA core refuses ibv_rereg_mr
# with EOPNOTSUPP before any driver code runs.
rereg_without_cap() {
    got=$(python3 -c '
import errno, pyverbs.device as d, pyverbs.pd as p, pyverbs.mr as m
import pyverbs.enums as e
from pyverbs.pyverbs_error import PyverbsRDMAError
ctx = d.Context(name="hns_0")
pd = p.PD(ctx)
mr = m.MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
try:
    mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, pd, 0, 0,
             e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
    print("rereg done")
except PyverbsRDMAError as x:
    c = x.error_code
    print("rereg refused:", "EOPNOTSUPP" if c == errno.EOPNOTSUPP else errno.errorcode.get(c, c))
mr.close()
pd.close()
ctx.close()' 2>&1)
    echo "$got"
    [ "$got" = "rereg refused: EOPNOTSUPP" ]
}
if [ "${CAPSX_NO_REREG:-0}" = 1 ]; then
    check "$g/rereg-mr-without-cap" rereg_without_cap
fi
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
