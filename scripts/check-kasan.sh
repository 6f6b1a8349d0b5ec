#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make check-kasan: the uverbs fuzzer (scripts/fuzz.sh), the
# probe/runtime fault sweep (scripts/faults.sh) and the SMP stress with its
# races (scripts/stress.sh) on both drivers, and a long fuzzer run of the
# ioctl, XRC and mmap class groups on the Rust driver (KASAN_GROUP_CALLS
# calls drawn from each group at least, default 10 000), on the hardened
# test kernel: configs/qemu-x86_64.config + configs/kasan-x86_64.config +
# configs/kcfi-x86_64.config, built with clang in
# $HNS_CACHE/kbuild-x86_64-hard under its own lock; hns_roce_rs.ko (with
# its KUnit suites), hns_sim.ko and the kernel test modules (tests/ktest/)
# are built against it into build/kasan/,
# guest runs and results go to build/kasan/. The normal kernel tree and
# build/module* are not touched. Any KASAN (or other kernel) report fails
# the boot that shows it (scripts/run-guest.sh, the plans).
# KASAN_PARTS (default "fuzz groups faults stress") chooses the parts;
# FUZZ_*, FAULTS_* and STRESS_* reach the scripts as in `make fuzz`,
# `make faults` and `make stress`.
# Prints the TEST lines of both scripts and one summary line
# `TEST kasan/summary PASS|FAIL ...`; exit status 1 on any failure.
set -uo pipefail
export HNS_KASAN=1
. "$(dirname "$0")/common.sh"
[ "$HNS_ARCH" = x86_64 ] || die "check-kasan is x86_64 only"
# The project's setup with HNS_KASAN=1 also installs the clang it needs.
bash "$HNS_TOP/scripts/setup.sh" >&2 || die "setup failed"
command -v "$HNS_KCC" >/dev/null ||
    die "$HNS_KCC missing: the KASAN kernel needs clang (scripts/setup.sh installs clang-19 with HNS_KASAN=1; HNS_HARD_CC=clang-N for another)"

L=$HNS_RUNS/logs
mkdir -p "$L"
t0=$(date +%s)
bash "$HNS_TOP/scripts/build-kernel.sh" 2>&1 | tee "$L/kernel.log" | grep -v '^  ' >&2
[ "${PIPESTATUS[0]}" -eq 0 ] || die "KASAN kernel build failed (log: $L/kernel.log)"
t1=$(date +%s)
# The modules against the KASAN tree, into build/kasan/ (KDIR given: make
# does not build the normal kernel; KCC: the tree's compiler).
make -s -C "$HNS_TOP" modules-kunit sim ktest-kmod KDIR="$KOBJ" KLOCKFILE="$KBUILD_LOCK" \
    BUILD="$HNS_ABUILD" KCC="$HNS_KCC" >"$L/modules.log" 2>&1 || {
    tail -n 40 "$L/modules.log" >&2
    die "module build against the KASAN kernel failed (log: $L/modules.log)"
}
t2=$(date +%s)
echo "check-kasan: kernel $((t1 - t0)) s, modules $((t2 - t1)) s"

rc=0
# KASAN_PARTS chooses what runs (default all: fuzz groups faults stress).
parts=" ${KASAN_PARTS:-fuzz groups faults stress} "
part() { [[ $parts == *" $1 "* ]]; }
: >"$L/fuzz.log" >"$L/fuzz-groups.log" >"$L/faults.log" >"$L/stress.log"
if part fuzz; then
    bash "$HNS_TOP/scripts/fuzz.sh" >"$L/fuzz.log" 2>&1 || rc=1
    grep -h '^TEST \|^fuzz: ' "$L/fuzz.log"
fi
# The newer class groups on Rust: each group's share of the draw is its
# entries' share (ioctl 7, xrc 8, mmap 5 of 20), so mmap, the smallest,
# needs 4x the per-group target in total; 4.5x leaves it a margin over
# the draw's spread.
per=${KASAN_GROUP_CALLS:-10000}
if part groups; then
    FUZZ_NAME=fuzz-groups FUZZ_DRIVERS=rs FUZZ_GROUPS=ioctl,xrc,mmap FUZZ_CALLS=$((per * 9 / 2)) \
        FUZZ_TIME=${KASAN_GROUP_TIME:-5400} bash "$HNS_TOP/scripts/fuzz.sh" >"$L/fuzz-groups.log" 2>&1 || rc=1
    grep -h '^TEST ' "$L/fuzz-groups.log" | sed 's/^TEST fuzz-rs\//TEST kasan-groups-rs\//'
    groups=$(grep -h '^FUZZ group ' "$HNS_RUNS/fuzz-groups/fuzz-rs.out" 2>/dev/null |
        awk '{printf "%s%s %s", sep, $3, $5; sep=", "}')
    if [ -n "$groups" ] && ! grep -h '^FUZZ group ' "$HNS_RUNS/fuzz-groups/fuzz-rs.out" |
        awk -v per="$per" '$5 < per { bad = 1 } END { exit !bad }'; then
        echo "TEST kasan/groups-rs-calls PASS ($groups; at least $per each)"
    else
        echo "TEST kasan/groups-rs-calls FAIL (${groups:-no FUZZ group lines}; want at least $per each)"
        rc=1
    fi
fi
t3=$(date +%s)
if part faults; then
    bash "$HNS_TOP/scripts/faults.sh" >"$L/faults.log" 2>&1 || rc=1
    grep -h '^TEST \|faults alike' "$L/faults.log"
fi
t4=$(date +%s)
if part stress; then
    bash "$HNS_TOP/scripts/stress.sh" >"$L/stress.log" 2>&1 || rc=1
    grep -h '^TEST ' "$L/stress.log"
fi
t5=$(date +%s)

# KASAN reports in any console of this run, counted apart (run-guest.sh
# already failed the boot that showed one).
nk=$(cat "$HNS_RUNS"/guest/{fuzz,faults,stress}-*/console.log 2>/dev/null | grep -ac 'BUG: KASAN' || true)
nbad=$(cat "$L"/{fuzz,fuzz-groups,faults,stress}.log | grep -c '^TEST .* FAIL' || true)
[ "$nk" -eq 0 ] && [ "$nbad" -eq 0 ] || rc=1
summary="fuzz $((t3 - t2)) s, faults $((t4 - t3)) s, stress $((t5 - t4)) s, whole $((t5 - t0)) s; $nk KASAN report(s), $nbad failed TEST line(s)"
if [ "$rc" -eq 0 ]; then
    echo "TEST kasan/summary PASS ($summary)"
else
    echo "TEST kasan/summary FAIL ($summary; logs: $L)"
fi
exit $rc
