#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core's own pyverbs suite on hns_0, every module that applies to a
# RoCE device without vendor-specific (mlx5, efa, irdma) hardware, each run
# PYV_RUNS times (default 3) in one boot, one python process per run.
# A run passes when the process exits 0 (no signal, no timeout), its
# unittest summary says OK, no test failed or errored, and every skip
# reason is one listed in /opt/hns/pyverbs-skips.txt (capabilities the C
# driver really lacks). TEST lines: "pyverbs/<module>-<run>".
#
#   sh /opt/hns/pyverbs-plan.sh [DRIVER]      (DRIVER: module to unload at the end)
#   PYV_MODULES="test_mr" PYV_RUNS=4 sh /opt/hns/pyverbs-plan.sh
. /opt/hns/lib.sh
DRV=${1:-c}
PYV_RUNS=${PYV_RUNS:-3}
PYV_TIMEOUT=${PYV_TIMEOUT:-600}
# test_flow, test_rss_traffic, test_tag_matching, test_parent_domain and
# test_cuda_dmabuf need raw packet QPs, RSS, tag matching, parent domains or
# CUDA (no RoCE-only device has them); vendor modules (test_mlx5_*,
# test_efa*) are left out too.
PYV_MODULES=${PYV_MODULES:-"test_device test_pd test_addr test_mr test_cq test_cqex
test_cq_events test_qp test_qpex test_srq test_atomic test_rdmacm test_shared_pd
test_odp test_relaxed_ordering test_fork"}
SKIPS=/opt/hns/pyverbs-skips.txt

check pyverbs/hns0-active port_state hns_0 PORT_ACTIVE || plan_exit
# test_rdmacm and test_addr look for an IP address on the port's netdev.
/usr/bin/ip addr add 192.168.77.1/24 dev eth0 && /usr/bin/ip link set eth0 up
roce_v2_gid hns_0 >/dev/null

# pyverbs_run MODULE RUN: one process; prints its counts and every line
# that is not "ok"; status 0 when the run passes (see above).
pyverbs_run() {
    log=/tmp/pyv-$1-$2.log out=/tmp/pyv-$1-$2.out
    (cd /usr/share/doc/rdma-core/tests &&
        timeout "$PYV_TIMEOUT" python3 run_tests.py --dev hns_0 -v "$1") >"$log" 2>&1
    prc=$?
    python3 /opt/hns/unittest-outcomes.py <"$log" >"$out"
    n_ok=$(grep -c ' ok$' "$out")
    n_skip=$(grep -c ' skip' "$out")
    n_bad=$(grep -cvE ' (ok|skip)( |$)' "$out")
    # A skip whose reason is not in the list is a failure.
    n_odd=$(grep ' skip' "$out" | sed 's/^[^ ]* skip //' | grep -cvxFf "$SKIPS")
    echo "$n_ok ok, $n_skip skipped, $n_bad failed or errors, exit $prc, $(tail -n 1 "$log")"
    grep -vE ' ok$' "$out"
    if [ "$n_odd" -ne 0 ]; then
        echo "skip reasons not in pyverbs-skips.txt:"
        grep ' skip' "$out" | sed 's/^[^ ]* skip //' | grep -vxFf "$SKIPS" | sort -u
    fi
    if [ "$prc" -ne 0 ] || [ "$n_bad" -ne 0 ]; then
        grep -E '^(FAIL|ERROR):|Error|error|Segmentation|Traceback' "$log" | head -n 20
    fi
    [ "$prc" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_odd" -eq 0 ] &&
        tail -n 1 "$log" | grep -qE '^OK( |$)'
}

for m in $PYV_MODULES; do
    r=1
    while [ "$r" -le "$PYV_RUNS" ]; do
        check "pyverbs/$m-$r" pyverbs_run "$m" "$r"
        printf '%s\n' "$out" | sed 's/^/    /'
        r=$((r + 1))
    done
done

case $DRV in
c) check pyverbs/final-unload sh -c 'rmmod hns_roce_hw_v2 && rmmod hns_sim' ;;
rs) check pyverbs/final-unload sh -c 'rmmod hns_roce_rs && rmmod hns_sim' ;;
esac
plan_exit
