#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make stress: the SMP stress (tests/guest/stress-plan.sh) on
# both drivers, one boot each with 2 vCPUs (--smp 2) and two simulated
# devices (SIM=2): object churn on hns_0 and hns_1 while pingpong,
# send_bw and rping pairs pass traffic from hns_0 to hns_1, for
# STRESS_TIME seconds (default 60); then the processes' ends, `rdma res
# show` back to its baseline, unload, kmemleak and the kernel log.
# STRESS_TIME, STRESS_SEED reach the plan; STRESS_DRIVERS (default "c rs")
# chooses the boots, STRESS_SMP (default 2) the vCPUs. Results:
# build/stress/. Prints the plan's TEST lines (groups stress-c, stress-rs),
# run-guest.sh's guest/kernel-log-stress-D line when the console shows a
# kernel report, one "TEST stress-D/boot FAIL" when a boot failed without
# a failing line, "TEST sim/stress-D-no-bad-dma" (the engines refused no
# DMA), each boot's time and a "stress: D ops N traffic M
# errors E" summary line per driver.
# Exit status: 1 when a boot or a check failed.
set -uo pipefail
. "$(dirname "$0")/common.sh"

out=$HNS_RUNS/stress
mkdir -p "$out"
limit=${STRESS_TIME:-60}
seed=${STRESS_SEED:-15}
smp=${STRESS_SMP:-2}
race=${RACE_TIME:-15}
rc=0
for d in ${STRESS_DRIVERS:-c rs}; do
    echo "STRESS_TIME=$limit STRESS_SEED=$seed STRESS_CPUS=$smp RACE_TIME=$race sh /opt/hns/stress-plan.sh $d" >"$out/stress-$d.cmd"
    t0=$(date +%s)
    bash "$HNS_TOP/scripts/run-guest.sh" --name "stress-$d" --driver "$d" --sim 2 \
        --smp "$smp" --timeout $((limit + 400)) --cmd-file "$out/stress-$d.cmd" \
        >"$out/stress-$d.out" 2>"$out/stress-$d.err"
    grc=$?
    q=$(sed -n "s/.*guest 'stress-$d' finished in \([0-9]*\)s.*/\1/p" "$out/stress-$d.err")
    echo "stress: $d boot took $(($(date +%s) - t0)) s (QEMU ${q:-?} s, the rest waiting for the guest lock and packing)"
    grep -h '^TEST ' "$out/stress-$d.out" "$out/stress-$d.err"
    if [ $grc -ne 0 ]; then
        rc=1
        grep -q ' FAIL' "$out/stress-$d.out" "$out/stress-$d.err" ||
            echo "TEST stress-$d/boot FAIL exit $grc, see $HNS_RUNS/guest/stress-$d/console.log"
    fi
    grep -q ' FAIL' "$out/stress-$d.out" && rc=1
    # Both engines refused no DMA (as make check's guest_tests).
    slog=$HNS_RUNS/guest/stress-$d/hns-sim.log
    dl=$(grep -h '^hns-sim\[[0-9]*\]: data:' "$slog" 2>/dev/null)
    if [ -n "$dl" ] && ! printf '%s\n' "$dl" | grep -qv ', 0 bad DMA$'; then
        echo "TEST sim/stress-$d-no-bad-dma PASS"
    else
        echo "TEST sim/stress-$d-no-bad-dma FAIL ${dl:-no data line in $slog}" | head -n 1
        rc=1
    fi
    # The race phase's event storm happened: hns-sim's count of the
    # events it posted, over both devices.
    if [ "$race" -gt 0 ]; then
        se=$(sed -n 's/^hns-sim\[[0-9]*\]: done: .*, \([0-9]*\) storm events.*/\1/p' "$slog" 2>/dev/null |
            awk '{s += $1; n++} END {if (n) print s}')
        if [ "${se:-0}" -gt 0 ]; then
            echo "TEST sim/stress-$d-storm-events PASS $se events"
        else
            echo "TEST sim/stress-$d-storm-events FAIL ${se:-no done line in $slog}"
            rc=1
        fi
    fi
    s=$(grep -h '^STRESS ops ' "$out/stress-$d.out" | tail -n 1)
    echo "stress: $d ${s#STRESS }"
done
exit $rc
