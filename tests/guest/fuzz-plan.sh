#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The uverbs fuzzer, run once per driver with SIM=1 by
# scripts/fuzz.sh (`make fuzz`); run-guest.sh --driver c|rs has loaded
# hns_sim and the driver:
#
#   sh /opt/hns/fuzz-plan.sh c|rs
#
# hns_0 registered, then tests/guest/uverbs_fuzz.py (FUZZ_SEED, FUZZ_CALLS,
# FUZZ_TIME from the command line scripts/fuzz.sh writes), whose "FUZZ ..." errno
# tables the host compares between the drivers (scripts/compare-fuzz.py).
# Then the driver and hns_sim must unload, and kmemleak must find nothing.
# TEST lines: group fuzz-c or fuzz-rs (the fuzzer's own uverbs-fuzz/*
# lines renamed into it).
. /opt/hns/lib.sh
D=$1
MOD=$(driver_module "$D") || {
    echo "fuzz-plan.sh: $MOD"
    exit 2
}
G=fuzz-$D

check "$G/hns0-registered" wait_hns0 || plan_exit
# The fuzzer prints its tables and TEST lines; its exit status is a check
# too (fixtures, cleanup, every call within the time limit).
python3 /opt/hns/uverbs_fuzz.py hns_0 >/tmp/fuzz.out 2>&1
frc=$?
sed "s#^TEST uverbs-fuzz/#TEST $G/#" /tmp/fuzz.out
if [ $frc -eq 0 ]; then
    report "$G/fuzzer-exit" PASS
else
    report "$G/fuzzer-exit" FAIL "exit $frc"
fi
check "$G/unload" sh -c "rmmod $MOD && rmmod hns_sim"
# kmemleak: nothing may be left unreferenced by the fuzzed driver.
if [ -w /sys/kernel/debug/kmemleak ]; then
    echo scan >/sys/kernel/debug/kmemleak
    sleep 6
    echo scan >/sys/kernel/debug/kmemleak
    n=$(grep -c '^unreferenced object' /sys/kernel/debug/kmemleak)
    echo "KMEMLEAK objects $n"
    if [ "$n" = 0 ]; then
        report "$G/kmemleak" PASS
    else
        report "$G/kmemleak" FAIL "$n unreferenced objects"
        head -n 60 /sys/kernel/debug/kmemleak | sed 's/^/    /'
    fi
else
    report "$G/kmemleak" SKIP "no kmemleak in this kernel"
fi
# Kernel reports during the fuzz: run-guest.sh fails the run on them
# (console log); say so here too, for the host's summary line.
if dmesg | grep -qE 'WARNING:|BUG:|Oops|Call Trace:|KFENCE:|UBSAN:|possible circular|inconsistent lock'; then
    report "$G/kernel-log" FAIL "a kernel report during the fuzz (see the console log)"
else
    report "$G/kernel-log" PASS
fi
plan_exit
