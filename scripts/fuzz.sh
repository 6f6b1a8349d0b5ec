#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make fuzz: the uverbs fuzzer (tests/guest/uverbs_fuzz.py) on
# both drivers, one boot each (SIM=1, tests/guest/fuzz-plan.sh), with the
# same seed; scripts/compare-fuzz.py compares the errno tables per call
# class (C's are the reference) and prints `equivalence/fuzz PASS|FAIL`.
# FUZZ_SEED, FUZZ_CALLS, FUZZ_TIME (s), FUZZ_GROUPS, FUZZ_C_BUGS, FUZZ_TRACE reach the
# fuzzer (see tests/guest/uverbs_fuzz.py); FUZZ_DRIVERS
# (default "c rs") chooses the boots. hns-sim runs with direct WQE on
# (cap_flags bit 12, as check.sh's kpath-dwqe boots), so user QPs get a
# direct-WQE mmap key for the mmap classes; FUZZ_SIM_ARGS replaces the
# hns-sim arguments. Results: build/fuzz/ (HNS_KASAN=1:
# build/kasan/fuzz/, on the KASAN kernel; FUZZ_NAME replaces "fuzz").
# Exit status: 1 when the tables differ or a plan check failed.
set -uo pipefail
. "$(dirname "$0")/common.sh"

# FUZZ_NAME (default fuzz) names the results directory and the boots
# (NAME-c, NAME-rs), so a second run beside the first keeps both.
name=${FUZZ_NAME:-fuzz}
out=$HNS_RUNS/$name
mkdir -p "$out"
seed=${FUZZ_SEED:-15}
calls=${FUZZ_CALLS:-10000}
limit=${FUZZ_TIME:-600}
rc=0
for d in ${FUZZ_DRIVERS:-c rs}; do
    echo "FUZZ_SEED=$seed FUZZ_CALLS=$calls FUZZ_TIME=$limit FUZZ_C_BUGS=${FUZZ_C_BUGS:-0} FUZZ_TRACE=${FUZZ_TRACE:-} FUZZ_GROUPS=${FUZZ_GROUPS:-} sh /opt/hns/fuzz-plan.sh $d" >"$out/fuzz-$d.cmd"
    t0=$(date +%s)
    HNS_SIM_ARGS=${FUZZ_SIM_ARGS---set cap_flags=0x48177f} \
        bash "$HNS_TOP/scripts/run-guest.sh" --name "$name-$d" --driver "$d" --sim 1 \
        --timeout $((limit + 600)) --cmd-file "$out/fuzz-$d.cmd" \
        >"$out/fuzz-$d.out" 2>"$out/fuzz-$d.err" || rc=1
    echo "fuzz: $d boot took $(($(date +%s) - t0)) s"
    grep -h '^TEST \|^FUZZ total\|^FUZZ stopped' "$out/fuzz-$d.out" "$out/fuzz-$d.err"
    grep -q ' FAIL' "$out/fuzz-$d.out" && rc=1
done
if [ -s "$out/fuzz-c.out" ] && [ -s "$out/fuzz-rs.out" ]; then
    python3 "$HNS_TOP/scripts/compare-fuzz.py" "$out/fuzz-c.out" "$out/fuzz-rs.out" \
        "$out/report.md" || rc=1
fi
exit $rc
