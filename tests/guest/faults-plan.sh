#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Probe fault sweep, run once per driver with SIM=1 by
# scripts/faults.sh (`make faults`):
#
#   sh /opt/hns/faults-plan.sh c|rs OPCODE...
#
# OPCODEs are the CMQ opcodes (hex) of a C probe, in the order the probe
# sends them (scripts/faults.sh takes them from a C probe's trace). For each
# one, two faults are armed in the model through hns_sim's control channel,
# one at a time: the opcode answered with CMD_PARA_ERR (6), and the opcode
# left unanswered (the driver's CMQ wait times out). After each, the driver
# is loaded and unloaded; the plan prints
#
#   FAULT <opcode> <err|timeout> <registered|failed> | <driver's log lines>
#
# (the kernel log lines of that probe that name RoCE, hns or the CMQ, with
# timestamps and addresses cut; the KUnit report and the Rust module's
# load banner left out), which the host compares between the two
# drivers. Then, with no fault armed, the driver must register hns_0 and
# unload, and kmemleak must report nothing. TEST lines: group faults-c or
# faults-rs.
#
# Between the clean probe and the unload, tests/guest/mbx_faults.py fails
# one mailbox command at a time while user space creates, changes and
# destroys MRs, CQs and QPs, printing "MBX <case> <outcome> | <log>", then
# injects AEQ events and abnormal interrupts (abn-* cases). Before the
# last unload, a RAM ECC recovery is queued just before an rmmod.
. /opt/hns/lib.sh
D=$1
shift
MOD=$(driver_module "$D") || {
    echo "faults-plan.sh: $MOD"
    exit 2
}
G=faults-$D
FAULT=/sys/module/hns_sim/parameters/fault

has_hns0() {
    ibv_devices 2>/dev/null | grep -qw hns_0
}

# The kernel log lines of a probe (the log is cleared before each one: a
# full ring buffer keeps its line count, so "lines after N" would lose
# them) in a form both drivers can be compared in: no timestamps, no PCI
# address. The serial console keeps the whole log for run-guest.sh.
probe_log() {
    dmesg | grep -iE 'roce|hns|cmq|cmdq|mailbox|mbox' |
        grep -vE 'hns-sim: |registered hnae3 RoCE client|^\[ *[0-9.]+\] +(# |ok |not ok |1\.\.|KTAP)' |
        sed -E 's/^\[ *[0-9.]+\] //; s/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9]/PCI/g' |
        tr '\n' ';'
}

# sweep_one OPCODE KIND SPEC: arm SPEC, probe, report, unload.
sweep_one() {
    dmesg -c >/dev/null
    if ! echo "$3" >$FAULT; then
        report "$G/arm-$1-$2" FAIL "the model refused '$3'"
        return
    fi
    if ! load_roce "$D"; then
        report "$G/load-$1-$2" FAIL "loading $MOD failed"
        return
    fi
    if has_hns0; then outcome=registered; else outcome=failed; fi
    echo "FAULT $1 $2 $outcome | $(probe_log)"
    rmmod $MOD || report "$G/unload-$1-$2" FAIL "rmmod $MOD failed"
    # A fault the probe never reached (or reached fewer times) stays
    # armed: disarm it before the next one.
    echo clear >$FAULT
}

start() {
    has_hns0 || {
        echo "no hns_0 at the start"
        return 1
    }
    rmmod $MOD
}
check "$G/start" start || plan_exit
for op in "$@"; do
    sweep_one "$op" err "0x$op:6:once"
    sweep_one "$op" timeout "0x$op:timeout:once"
done
# The EQ contexts: CREATE_CEQC (0x90) of each CEQ, then CREATE_AEQC (0x80)
# of each AEQ (EQNs in that order, from the model's caps) completed with
# status 0x11 in turn. The driver must destroy the contexts it created
# before (the model counts one created again over a live one: "stale EQ
# contexts" in hns-sim.log, checked by scripts/faults.sh). FAULT lines
# "mbx-CMD-tagN err".
cap() {
    v=$(sed -n "s/^$1 = //p" /opt/run/caps.txt)
    echo $((${v:-0}))
}
ceqs=$(cap num_ceqs)
eqs=$((ceqs + $(cap num_aeq_vectors)))
n=0
while [ $n -lt $eqs ]; do
    if [ $n -lt $ceqs ]; then c=0x90; else c=0x80; fi
    sweep_one "mbx-$c-tag$n" err "mbx:$c:0x11:once:tag=$n"
    n=$((n + 1))
done

clean_probe() {
    load_roce "$D" || return 1
    wait_hns0
}
check "$G/probe-after-sweep" clean_probe
# Runtime mailbox faults from user space (tests/guest/mbx_faults.py): its
# MBX lines go to the host's comparison, its TEST lines are renamed into
# this plan's group.
python3 /opt/hns/mbx_faults.py | sed "s#^TEST mbx/#TEST $G/mbx-#"
# A reset, then the unload, under a process holding live objects
# (tests/guest/live_faults.py; MBX lines to the host's comparison); then
# the driver again for the unload below.
python3 /opt/hns/live_faults.py reset $MOD | sed "s#^TEST live/#TEST $G/live-#"
python3 /opt/hns/live_faults.py rmmod $MOD | sed "s#^TEST live/#TEST $G/live-#"
check "$G/probe-after-live-rmmod" clean_probe
# A RAM ECC error whose recovery is queued just before the unload: the
# unload drains it (no use after free, no leak), the driver loads again.
ecc_at_unload() {
    echo "ecc:5:0" >$FAULT && rmmod $MOD && echo clear >$FAULT && clean_probe
}
check "$G/abn-ecc-at-unload" ecc_at_unload
check "$G/unload" sh -c "rmmod $MOD && rmmod hns_sim"
# kmemleak: every unreferenced object is a failure but the RDMA core's own
# leak on a failed first read of the port counters (docs/c-driver-findings.md
# 5: allocated in setup_port, into which the compiler folds
# setup_hw_port_stats, three objects per registration that fails there),
# which is counted and printed apart.
if [ -w /sys/kernel/debug/kmemleak ]; then
    echo scan >/sys/kernel/debug/kmemleak
    sleep 1
    echo scan >/sys/kernel/debug/kmemleak
    # clang (the KASAN kernel) inlines setup_port into ib_setup_port_attrs:
    # there the leak's stack is an allocation frame directly followed by
    # ib_setup_port_attrs.
    counts=$(awk '
        function done() { if (n) { if (core) k++; else o++ } core = 0; prev = "" }
        /^unreferenced object/ { done(); n = 1 }
        /setup_port\+|setup_hw_port_stats/ { core = 1 }
        /ib_setup_port_attrs\+/ && prev ~ /rdma_alloc_hw_stats_struct\+|kmalloc|kzalloc/ { core = 1 }
        { prev = $0 }
        END { done(); printf "%d %d", o, k }' /sys/kernel/debug/kmemleak)
    others=${counts% *}
    known=${counts#* }
    echo "KMEMLEAK core-port-stats $known others $others"
    if [ "$others" = 0 ]; then
        report "$G/kmemleak" PASS "(the core's port-counter leak: $known objects)"
    else
        report "$G/kmemleak" FAIL "$others unreferenced objects (+ $known of the core's port-counter leak)"
        head -n 60 /sys/kernel/debug/kmemleak | sed 's/^/    /'
    fi
else
    report "$G/kmemleak" SKIP "no kmemleak in this kernel"
fi
plan_exit
