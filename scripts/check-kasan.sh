#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make check-kasan: the uverbs fuzzer (scripts/fuzz.sh) and the
# probe/runtime fault sweep (scripts/faults.sh) on both drivers, on a KASAN
# test kernel of its own: configs/qemu-x86_64.config +
# configs/kasan-x86_64.config, built with clang in
# $HNS_CACHE/kbuild-x86_64-kasan under its own lock; hns_roce_rs.ko (with
# its KUnit suites) and hns_sim.ko are built against it into build/kasan/,
# guest runs and results go to build/kasan/. The normal kernel tree and
# build/module* are not touched. Any KASAN (or other kernel) report fails
# the boot that shows it (scripts/run-guest.sh, the plans).
# FUZZ_* and FAULTS_* reach the two scripts as in `make fuzz`/`make faults`.
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
make -s -C "$HNS_TOP" modules-kunit sim KDIR="$KOBJ" KLOCKFILE="$KBUILD_LOCK" \
    BUILD="$HNS_ABUILD" KCC="$HNS_KCC" >"$L/modules.log" 2>&1 || {
    tail -n 40 "$L/modules.log" >&2
    die "module build against the KASAN kernel failed (log: $L/modules.log)"
}
t2=$(date +%s)
echo "check-kasan: kernel $((t1 - t0)) s, modules $((t2 - t1)) s"

rc=0
bash "$HNS_TOP/scripts/fuzz.sh" >"$L/fuzz.log" 2>&1 || rc=1
grep -h '^TEST \|^fuzz: ' "$L/fuzz.log"
t3=$(date +%s)
bash "$HNS_TOP/scripts/faults.sh" >"$L/faults.log" 2>&1 || rc=1
grep -h '^TEST \|faults alike' "$L/faults.log"
t4=$(date +%s)

# KASAN reports in any console of this run, counted apart (run-guest.sh
# already failed the boot that showed one).
nk=$(cat "$HNS_RUNS"/guest/{fuzz,faults}-*/console.log 2>/dev/null | grep -ac 'BUG: KASAN' || true)
nbad=$(cat "$L/fuzz.log" "$L/faults.log" | grep -c '^TEST .* FAIL' || true)
[ "$nk" -eq 0 ] && [ "$nbad" -eq 0 ] || rc=1
summary="fuzz $((t3 - t2)) s, faults $((t4 - t3)) s, whole $((t4 - t0)) s; $nk KASAN report(s), $nbad failed TEST line(s)"
if [ "$rc" -eq 0 ]; then
    echo "TEST kasan/summary PASS ($summary)"
else
    echo "TEST kasan/summary FAIL ($summary; logs: $L)"
fi
exit $rc
