#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# ib_device registration plan (SIM=1), run once per driver so that the host
# can compare the two runs (scripts/compare-runs.py, scripts/trace-diff.py):
#
#   sh /opt/hns/reg-plan.sh [c|rs] [full|trace]
#
# The driver defaults to DRIVER of the run (/opt/run/env); it is loaded here
# unless init already loaded it (run-guest.sh --driver c|rs does), and so is
# hns_sim. Modes:
#   full   wait for hns_0, `ibv_devinfo -v -d hns_0`, open a context and
#          allocate a PD (pyverbs), pyverbs test_device and test_pd, the
#          debugfs writes, a node description written and read back, for rs
#          10 rmmod/insmod cycles each waiting for hns_0 again (REG_CYCLES=N
#          sets the count, also for c), final unload.
#   trace  wait for hns_0, `ibv_devinfo -v -d hns_0`, unload the driver and
#          hns_sim: the firmware traffic of probe -> devinfo -> remove, kept
#          short and free of timing-dependent commands for trace-diff.py.
# Results for the host to compare are printed between
# "HNS-REG-BEGIN <section>" and "HNS-REG-END <section>" lines: devinfo,
# pyverbs-<module> ("<test id> <ok|skip|fail|error|...>" per test) and
# pyverbs-<module>-log (the raw unittest output). Checks print TEST lines
# in the group "c/..." or "rs/..." (full) and "regtrace-c/..." or
# "regtrace-rs/..." (trace).
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=${1:-${REG_DRIVER:-$DRIVER}}
MODE=${2:-${REG_MODE:-full}}
SIMKO=/opt/run/modules/hns_sim.ko
# How long hns_0 may take to appear, in tenths of a second.
REG_WAIT=${REG_WAIT:-100}
# Reload cycles in full mode (the C driver's are only for trying the plan).
[ "$D" = rs ] && REG_CYCLES=${REG_CYCLES:-10}
REG_CYCLES=${REG_CYCLES:-0}
case "$D" in
c) MOD=hns_roce_hw_v2 ;;
rs) MOD=hns_roce_rs ;;
*)
    echo "reg-plan.sh: driver must be c or rs (got '$D')"
    exit 2
    ;;
esac
case "$MODE" in
full) G=$D ;;
trace) G=regtrace-$D ;;
*)
    echo "reg-plan.sh: mode must be full or trace (got '$MODE')"
    exit 2
    ;;
esac

loaded() {
    grep -q "^$1 " /proc/modules
}

# has_hns0: hns_0 in sysfs and listed by libibverbs within about REG_WAIT
# tenths of a second (the sysfs test is a shell builtin: cheap under TCG).
has_hns0() {
    hw=0
    while [ $hw -lt "$REG_WAIT" ]; do
        [ -e /sys/class/infiniband/hns_0 ] && ibv_devices 2>/dev/null | grep -qw hns_0 && return 0
        sleep 0.1
        hw=$((hw + 1))
    done
    echo "hns_0 not registered after $((REG_WAIT / 10)) s"
    return 1
}

# gids_settled: the core fills the GID table from a work item after
# registration; wait until the non-zero GIDs of hns_0 read the same twice
# (sysfs only: no firmware traffic, so the trace does not depend on timing).
gid_snapshot() {
    cat /sys/class/infiniband/hns_0/ports/*/gids/* 2>/dev/null |
        grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$'
}
gids_settled() {
    gsw=0
    gprev=""
    while [ $gsw -lt 50 ]; do
        gcur=$(gid_snapshot)
        [ -n "$gcur" ] && [ "$gcur" = "$gprev" ] && return 0
        gprev=$gcur
        sleep 0.2
        gsw=$((gsw + 1))
    done
    echo "GID table of hns_0 not settled after 10 s: '$gcur'"
    return 1
}

section_begin() {
    echo "HNS-REG-BEGIN $1"
}
section_end() {
    echo "HNS-REG-END $1"
}

# The driver under test, on hns_sim (init loaded both for --driver c|rs).
loaded hns_sim || insmod $SIMKO || {
    report "$G/load-hns_sim" FAIL
    plan_exit
}
loaded $MOD || check "$G/load-driver" load_roce "$D" || plan_exit

REGISTERED=0
check "$G/hns0-registered" has_hns0 && REGISTERED=1
[ $REGISTERED = 1 ] && gids_settled

section_begin devinfo
if [ $REGISTERED = 1 ]; then
    timeout 60 ibv_devinfo -v -d hns_0 2>&1
    echo "[ibv_devinfo exit $?]"
else
    echo "[hns_0 not registered]"
fi
section_end devinfo

# debugfs of the driver: hns_roce/<pci name>/ with one *_cc_param/ directory
# per congestion control algorithm of the caps (DCQCN on hns-sim), every
# file reading as a number; on a VF (hns_0's function is 19e5:a22f, the
# upstream VF boot nicvf-plan.sh) none, as the C driver makes the
# directories on a PF only. Reads send no command, so the trace is as is.
DBGFS=/sys/kernel/debug/hns_roce
debugfs_read() {
    if [ "$(cat /sys/class/infiniband/hns_0/device/device 2>/dev/null)" = 0xa22f ]; then
        if ls -d $DBGFS/*/*_cc_param 2>/dev/null; then
            echo "*_cc_param directories on a VF"
            return 1
        fi
        ls -d $DBGFS/*
        return 0
    fi
    dbn=0
    for dbd in $DBGFS/*/*_cc_param; do
        [ -d "$dbd" ] || continue
        dbn=$((dbn + 1))
        for dbf in "$dbd"/*; do
            dbv=$(cat "$dbf") || return 1
            case $dbv in '' | *[!0-9]*) echo "$dbf reads '$dbv'"; return 1 ;; esac
        done
    done
    [ $dbn -gt 0 ] || { echo "no *_cc_param directory:"; ls -R $DBGFS; return 1; }
}
check "$G/debugfs-read" debugfs_read

if [ "$MODE" = full ]; then
    ctx_pd() {
        [ $REGISTERED = 1 ] || { echo "hns_0 not registered"; return 1; }
        timeout 60 python3 -c '
from pyverbs.device import Context
from pyverbs.pd import PD
ctx = Context(name="hns_0")
pd = PD(ctx)
print("context and PD on hns_0")
pd.close()
ctx.close()'
    }
    check "$G/context-and-pd" ctx_pd

    # pyverbs, one process per module; per-test outcomes for the host.
    for pvm in test_device test_pd test_addr; do
        if [ $REGISTERED = 1 ]; then
            (cd /usr/share/doc/rdma-core/tests &&
                timeout 300 python3 run_tests.py --dev hns_0 -v "$pvm") >/tmp/pyverbs-$pvm.log 2>&1
            echo "[run_tests.py exit $?]" >>/tmp/pyverbs-$pvm.log
        else
            echo "[hns_0 not registered]" >/tmp/pyverbs-$pvm.log
        fi
        section_begin "pyverbs-$pvm"
        python3 /opt/hns/unittest-outcomes.py </tmp/pyverbs-$pvm.log
        section_end "pyverbs-$pvm"
        section_begin "pyverbs-$pvm-log"
        cat /tmp/pyverbs-$pvm.log
        section_end "pyverbs-$pvm-log"
    done

    # A write outside the range is refused, one inside reaches the firmware
    # (CFG_DCQCN_PARAM) and reads back; then the old value goes back.
    debugfs_write() {
        set -- $DBGFS/*/dcqcn_cc_param/tkp
        [ -f "$1" ] || { echo "no dcqcn_cc_param/tkp"; return 1; }
        dbo=$(cat "$1")
        echo 11 >"$1" 2>/dev/null && { echo "tkp = 11 (max 10) accepted"; return 1; }
        echo 0xa >"$1" || return 1
        [ "$(cat "$1")" = 10 ] || { echo "tkp reads $(cat "$1") after writing 0xa"; return 1; }
        echo "$dbo" >"$1"
    }
    check "$G/debugfs-write" debugfs_write

    # The node description through sysfs: modify_device with
    # IB_DEVICE_MODIFY_NODE_DESC, the one bit either driver accepts; the
    # new description reads back, then the old one goes back.
    node_desc() {
        nd=/sys/class/infiniband/hns_0/node_desc
        ndo=$(cat $nd) || return 1
        echo hns-node-desc-check >$nd || return 1
        [ "$(cat $nd)" = hns-node-desc-check ] || { echo "node_desc reads '$(cat $nd)'"; return 1; }
        echo "$ndo" >$nd
    }
    check "$G/node-desc" node_desc

    # REG_CYCLES (default 10 for rs, 0 for c) unload/load cycles of the
    # driver, hns_0 gone after each rmmod and back after each load (and
    # usable: ibv_devinfo). The kernel log (WARN, lockdep, kmemleak at the
    # end of the run) is checked by run-guest.sh on the host.
    reg_reload_cycles() {
        [ $REGISTERED = 1 ] || { echo "not run: hns_0 never registered"; return 1; }
        reload_cycles "$D" "$REG_CYCLES" has_hns0
    }
    [ "$REG_CYCLES" -gt 0 ] && check "$G/reload-x$REG_CYCLES" reg_reload_cycles
fi

check "$G/final-unload" sh -c "rmmod $MOD && rmmod hns_sim"
plan_exit
