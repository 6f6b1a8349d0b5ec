#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The second provider on the rdma layer: the software loopback device rlo_0
# (tests/loopback/rdma_lo.ko, built by make ktest-kmod), which reports
# rdma-core's siw driver id (see tests/loopback/rdma_lo_main.rs). TEST
# group loopback/:
#   load            rdma_lo.ko loads (it needs no hnae3 symbol: check.sh's
#                   build/loopback-no-hnae3), rlo_0 is listed by
#                   libibverbs, its port ACTIVE with a RoCE v2 GID (lo's)
#   pyverbs-<m>     rdma-core's pyverbs module m (test_device, test_pd) on
#                   rlo_0: exit 0, no test failed or errored, every skip's
#                   reason one of LO_SKIPS below (each printed)
#   user-refused    ibv_rc_pingpong on rlo_0 fails at its setup (the
#                   device has no user MRs, CQs or QPs), the kernel says
#                   nothing
#   kernel-pingpong tests/ktest/lo_pingpong.ko: 200 rounds of SENDs
#                   between two RC QPs of rlo_0, every byte compared, and
#                   a SEND without a receive completing RNR_RETRY_EXC_ERR
#   unload-clean    no object of rlo_0 left (rdma res), rmmod rdma_lo,
#                   rlo_0 gone, no WARN/BUG/lockdep report since the load
#
#   sh /opt/hns/loopback-plan.sh
. /opt/hns/lib.sh
X=/opt/run/ktest
g=loopback
# Why pyverbs skips on rlo_0: capabilities the device does not claim.
LO_SKIPS="Device memory is not supported
ibv_query_gid_ex is not supported on this device
All gid indices populated, cannot check bad flow
Some object imports are not supported"

kernel_reports() {
    dmesg | grep -cE 'WARNING:|BUG:|Oops|Call Trace:|possible (circular|recursive)|inconsistent lock state'
}
reports0=$(kernel_reports)

lo_load() {
    [ -f $X/rdma_lo.ko ] || { echo "no $X/rdma_lo.ko (make ktest-kmod)"; return 1; }
    insmod $X/rdma_lo.ko || return 1
    i=0
    while ! ibv_devices 2>/dev/null | grep -qw rlo_0; do
        [ $i -lt 50 ] || { echo "rlo_0 not listed"; ibv_devices; return 1; }
        sleep 0.1
        i=$((i + 1))
    done
    port_state rlo_0 PORT_ACTIVE || return 1
    ibv_devinfo -v -d rlo_0 | grep -E 'transport|GID\[|state|active_mtu'
    ibv_devinfo -v -d rlo_0 | grep -qE 'GID\[ *[0-9]+\]:.*v2'
}
check $g/load lo_load || plan_exit

# lo_pyverbs MODULE: one pyverbs process on rlo_0.
lo_pyverbs() {
    log=/tmp/lo-$1.log out=/tmp/lo-$1.out
    (cd /usr/share/doc/rdma-core/tests &&
        timeout 600 python3 run_tests.py --dev rlo_0 -v "$1") >"$log" 2>&1
    prc=$?
    python3 /opt/hns/unittest-outcomes.py <"$log" >"$out"
    n_ok=$(grep -c ' ok$' "$out")
    n_skip=$(grep -c ' skip' "$out")
    n_bad=$(grep -cvE ' (ok|skip)( |$)' "$out")
    summ=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$log" | tail -n 1)
    echo "$n_ok ok, $n_skip skipped, $n_bad failed or errors, exit $prc, ${summ:-no summary}" |
        tee "/tmp/lo-$1.sum"
    grep -vE ' ok$' "$out"
    odd=$(grep ' skip' "$out" | cut -d' ' -f3- | sort -u | while read -r why; do
        printf '%s\n' "$LO_SKIPS" | grep -qxF "$why" || echo "$why"
    done)
    [ -z "$odd" ] || { echo "skip reasons not expected on rlo_0:"; printf '%s\n' "$odd"; }
    grep -E '^(FAIL|ERROR):|Error' "$log" | head -n 20
    [ "$prc" -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ] && [ -z "$odd" ] &&
        [ "${summ%% *}" = OK ]
}
for m in test_device test_pd; do
    check $g/pyverbs-$m lo_pyverbs $m
    head -n 1 "/tmp/lo-$m.sum" 2>/dev/null | sed 's/^/    /'
    grep ' skip' /tmp/lo-$m.out | sed 's/^/    /'
done

lo_user_cq() {
    r0=$(kernel_reports)
    out=$(timeout 20 ibv_rc_pingpong -d rlo_0 -g 1 -n 1 2>&1)
    rc=$?
    echo "$out" | tail -n 3
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "exit $rc"; return 1; }
    echo "$out" | grep -qE "Couldn't (register MR|create CQ|create QP)" &&
        [ "$(kernel_reports)" = "$r0" ]
}
check $g/user-refused lo_user_cq

lo_ping() {
    [ -f $X/lo_pingpong.ko ] || { echo "no $X/lo_pingpong.ko (make ktest-kmod)"; return 1; }
    timeout 120 insmod $X/lo_pingpong.ko dev=rlo_0 || return 1
    res=$(cat /sys/module/lo_pingpong/parameters/result)
    timeout 60 rmmod lo_pingpong || return 1
    dmesg | grep 'LOPING '
    [ "$res" = 0 ] && dmesg | grep -q 'LOPING rounds 200 ' &&
        dmesg | grep -q 'LOPING rnr ok$' && dmesg | grep -q 'LOPING done$'
}
check $g/kernel-pingpong lo_ping
dmesg | grep 'LOPING ' | sed 's/^/    /'

lo_unload() {
    line=$(rdma res show 2>/dev/null | grep -w rlo_0)
    echo "$line"
    for o in pd cq qp mr ctx; do
        echo "$line" | grep -qw "$o 0" || { echo "rlo_0 still has $o"; return 1; }
    done
    rmmod rdma_lo || return 1
    ! ibv_devices 2>/dev/null | grep -qw rlo_0 || { echo "rlo_0 still listed"; return 1; }
    [ "$(kernel_reports)" = "$reports0" ] || { dmesg | tail -n 30; return 1; }
}
check $g/unload-clean lo_unload
plan_exit
