#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core's own pyverbs suite on hns_0, every module that applies to a
# RoCE device without vendor-specific (mlx5, efa, irdma) hardware, each run
# PYV_RUNS times (default 3) in one boot, one python process per run.
# A run passes when the process exits 0 (no signal, no timeout), its
# unittest summary says OK, no test failed or errored, and every skip
# reason is one listed in /opt/hns/pyverbs-skips.txt (capabilities the C
# driver lacks, or the test kernel: see docs/hns-sim.md). TEST lines:
# "pyverbs/<module>-<run>"; after each, its per-test outcomes ("<test id>
# <outcome> [skip reason]") between "HNS-REG-BEGIN pyverbs-<module>-<run>"
# and "HNS-REG-END ..." (and its failure reports as section
# "pyverbs-<module>-<run>-log"), for scripts/compare-runs.py to set a Rust
# run beside a C one. Lines the process printed after its summary
# (pyverbs' destructors at interpreter exit) are shown, not judged: a
# crash there ends the process with a signal.
#
#   sh /opt/hns/pyverbs-plan.sh [c|rs]   (rs: unload the driver at the end)
#   PYV_MODULES="test_mr" PYV_RUNS=4 sh /opt/hns/pyverbs-plan.sh
#   PYV_REREG_SLOW=0 ...: without the rereg-pd-slow-restate check
#   PYV_MODULES="test_srq test_qpex:xrc": test_qpex's tests matching xrc
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

# pyverbs_run MODULE RUN [PATTERN]: one process (with PATTERN only the
# tests unittest's -k PATTERN selects); prints its counts and every line
# that is not "ok"; status 0 when the run passes (see above).
pyverbs_run() {
    log=/tmp/pyv-$1-$2.log out=/tmp/pyv-$1-$2.out
    (cd /usr/share/doc/rdma-core/tests &&
        timeout "$PYV_TIMEOUT" python3 run_tests.py --dev hns_0 -v "$1" ${3:+-k "$3"}) >"$log" 2>&1
    prc=$?
    python3 /opt/hns/unittest-outcomes.py <"$log" >"$out"
    n_ok=$(grep -c ' ok$' "$out")
    n_skip=$(grep -c ' skip' "$out")
    n_bad=$(grep -cvE ' (ok|skip)( |$)' "$out")
    # unittest's summary: "OK", "OK (skipped=N)", "FAILED (...)".
    summ=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$log" | tail -n 1)
    echo "$n_ok ok, $n_skip skipped, $n_bad failed or errors, exit $prc, ${summ:-no summary}"
    grep -vE ' ok$' "$out"
    # A skip whose reason is not in the list is a failure.
    odd=$(python3 -c '
import sys
known = {l.rstrip("\n") for l in open(sys.argv[1])}
for l in open(sys.argv[2]):
    p = l.rstrip("\n").split(" ", 2) + ["", ""]
    if p[1] == "skip" and p[2] not in known:
        print(p[2] or "(no reason)")
' "$SKIPS" "$out" | sort -u)
    if [ -n "$odd" ]; then
        echo "skip reasons not in pyverbs-skips.txt:"
        printf '%s\n' "$odd"
    fi
    # What the process printed after the summary (pyverbs' destructors at
    # interpreter exit), and failure reports.
    awk 'f { print } /^(OK|FAILED)( \(.*\))?$/ { f = 1 }' "$log" | head -n 5
    if [ "$prc" -ne 0 ] || [ "$n_bad" -ne 0 ]; then
        grep -E '^(FAIL|ERROR):|Error|Segmentation' "$log" | head -n 20
    fi
    [ "$prc" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ -z "$odd" ] && [ "${summ%% *}" = OK ]
}

# test_mr_rereg_pd with 0.3 s between restate_qps and the rereg back to the
# server's PD: the previous life's WQEs must stay unexecuted (hns-sim's
# scan took them 100 ms after RTS: docs/hns-sim.md, "Stale WQEs").
rereg_slow() {
    timeout "$PYV_TIMEOUT" python3 /opt/hns/rereg_pd_slow.py >/tmp/rereg-slow.log 2>&1
    prc=$?
    grep -E '^(OK|FAILED)|Error' /tmp/rereg-slow.log | tail -n 3
    [ "$prc" -eq 0 ] && grep -q '^OK$' /tmp/rereg-slow.log
}
[ "${PYV_REREG_SLOW:-1}" = 0 ] || check pyverbs/rereg-pd-slow-restate rereg_slow

for spec in $PYV_MODULES; do
    # MODULE, or MODULE:PATTERN for the tests of MODULE matching PATTERN.
    m=${spec%%:*} k=
    [ "$spec" = "$m" ] || k=${spec#*:}
    r=1
    while [ "$r" -le "$PYV_RUNS" ]; do
        check "pyverbs/$m-$r" pyverbs_run "$m" "$r" "$k"
        printf '%s\n' "$out" | sed 's/^/    /'
        echo "HNS-REG-BEGIN pyverbs-$m-$r"
        cat "/tmp/pyv-$m-$r.out"
        echo "HNS-REG-END pyverbs-$m-$r"
        echo "HNS-REG-BEGIN pyverbs-$m-$r-log"
        sed -n '/^=====/,$p' "/tmp/pyv-$m-$r.log" | head -n 80
        echo "HNS-REG-END pyverbs-$m-$r-log"
        r=$((r + 1))
    done
done

# The C driver stays loaded: responder access errors (test_mr, test_atomic)
# raise AEQEs it flushes from hard IRQ, and its unload then trips lockdep
# (docs/c-driver-findings.md, finding 2), as in event-plan.sh.
case $DRV in
rs) check pyverbs/final-unload sh -c 'rmmod hns_roce_rs && rmmod hns_sim' ;;
esac
plan_exit
