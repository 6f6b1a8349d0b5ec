#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make faults: the probe fault sweep on both drivers. The CMQ
# opcodes of a C probe are taken from a C probe's hns-sim trace (the
# registration trace of `make check` when present, else one boot that only
# probes); then tests/guest/faults-plan.sh arms each one twice (error
# answer, no answer) through hns_sim's control channel and reloads the
# driver, once per driver; scripts/compare-faults.py compares outcomes,
# log lines and trace segments. Results: build/faults/report.md.
# Exit status: 1 when the drivers differ on any fault or a plan check
# failed. Not part of `make check` yet (see docs/harness.md).
set -uo pipefail
. "$(dirname "$0")/common.sh"

out=$HNS_RUNS/faults
mkdir -p "$out"
# The probe's opcodes do not depend on the kernel: the KASAN run
# (HNS_KASAN=1, results in build/kasan/) reuses a normal kernel's trace.
ref=$HNS_RUNS/guest/regtrace-c/trace-0.txt
[ -s "$ref" ] || ref=$HNS_BUILD/guest/regtrace-c/trace-0.txt
[ -s "$ref" ] || ref=$HNS_BUILD/guest/faults-ref/trace-0.txt
if [ ! -s "$ref" ]; then
    ref=$HNS_RUNS/guest/faults-ref/trace-0.txt
    bash "$HNS_TOP/scripts/run-guest.sh" --name faults-ref --driver c --sim 1 \
        --cmd "rmmod hns_roce_hw_v2 && rmmod hns_sim" >"$out/ref.out" 2>"$out/ref.err" || {
        echo "faults: the reference probe failed, see $out/ref.err"
        exit 1
    }
fi
# The opcodes of the probe: every CMQ opcode before the first FUNC_CLEAR,
# in order of first use.
ops=$(awk '/^cmq > op=8508 /{exit} /^cmq > op=/{sub("op=", "", $3); if (!s[$3]++) printf "%s ", $3}' "$ref")
[ -n "$ops" ] || {
    echo "faults: no CMQ opcodes in $ref"
    exit 1
}
# FAULTS_FLUSH_EVENTS=1: also inject the AEQ events that flush a QP from
# the interrupt handler (on C they trip lockdep at the next teardown,
# docs/c-driver-findings.md 2, so the C boot's kernel-log check fails).
# FAULTS_SKIP: opcodes left out (make check leaves out QUERY_COUNTER,
# whose failure leaks in the RDMA core: docs/c-driver-findings.md 5).
for skip in ${FAULTS_SKIP:-}; do
    ops=$(printf '%s\n' $ops | grep -vx "$skip" | tr '\n' ' ')
    echo "faults: left out: $skip"
done
echo "faults: probe opcodes: $ops"
rc=0
# FAULTS_DRIVERS: the boots to run (default both; the comparison reads the
# other driver's output of an earlier run from $out and build/guest).
for d in ${FAULTS_DRIVERS:-c rs}; do
    echo "MBX_FLUSH_EVENTS=${FAULTS_FLUSH_EVENTS:-0} sh /opt/hns/faults-plan.sh $d $ops" >"$out/faults-$d.cmd"
    HNS_GUEST_KMEMLEAK_BY_PLAN=1 bash "$HNS_TOP/scripts/run-guest.sh" --name "faults-$d" --driver $d --sim 1 --timeout 1800 \
        --cmd-file "$out/faults-$d.cmd" >"$out/faults-$d.out" 2>"$out/faults-$d.err" || rc=1
    # The model's count of EQ contexts created again while live (a driver
    # freed an EQ without DESTROY_*EQC): a line of the plan's group.
    sim_no_stale_eqc "faults-$d/sim-no-stale-eqc" "$HNS_RUNS/guest/faults-$d/hns-sim.log" >>"$out/faults-$d.out"
    grep -h '^TEST ' "$out/faults-$d.out" "$out/faults-$d.err"
done
python3 "$HNS_TOP/scripts/compare-faults.py" \
    "$out/faults-c.out" "$HNS_RUNS/guest/faults-c/trace-0.txt" \
    "$out/faults-rs.out" "$HNS_RUNS/guest/faults-rs/trace-0.txt" \
    "$out/report.md" || rc=1
grep -q ' FAIL' "$out/faults-c.out" "$out/faults-rs.out" && rc=1
exit $rc
