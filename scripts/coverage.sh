#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make coverage: which functions and lines of hns_roce_rs.ko the tests
# reach (docs/harness.md, "Coverage"). The boots of COVERAGE_RUN run with
# HNS_COVERAGE=1: every boot that would load the test build loads the
# coverage build (build/module-cov, make module-cov) after the collector
# hns_cov.ko, and leaves the collector's offsets in its run directory
# (coverage.txt). scripts/coverage-report.py then merges them:
# build/coverage/report.md (COVERAGE_DOCS=1: docs/coverage.md too).
#
# COVERAGE_RUN: "check" (default: all of make check, whose boots include
# the fuzzer's), "fuzz" (make fuzz alone, Rust only: FUZZ_* as usual) or
# "kpath" (the kernel data-path plan, one boot: a quick look).
# Exit status: the report's (1 when the dumps do not fit the .ko); the
# run's failures are in its own output (build/check/results.txt).
set -uo pipefail
. "$(dirname "$0")/common.sh"
cd "$HNS_TOP"

[ "$HNS_ARCH" = x86_64 ] || die "make coverage: x86_64 only"
[ -f "$HNS_BUILD/module-cov/hns_roce_rs.ko" ] && [ -f "$HNS_BUILD/module-cov/hns_cov.ko" ] ||
    die "coverage build missing: run 'make module-cov'"
out=$HNS_BUILD/coverage
mkdir -p "$out"
# Only this run's dumps are merged: run-guest.sh keeps each boot's in
# build/coverage/dumps/NAME.PID/ (a boot name may come twice in a run).
rm -rf "$out/dumps"
mkdir -p "$out/dumps"
export HNS_COVERAGE=1 HNS_COVERAGE_OUT=$out/dumps
run=${COVERAGE_RUN:-check}
t0=$(date +%s)
case "$run" in
check)
    bash scripts/check.sh 2>&1 | tee "$out/run.log" | grep -E '^[0-9]+ passed|^check finished'
    ;;
fuzz)
    FUZZ_DRIVERS=${FUZZ_DRIVERS:-rs} bash scripts/fuzz.sh >"$out/run.log" 2>&1
    grep -h '^TEST ' "$out/run.log"
    ;;
kpath)
    echo "sh /opt/hns/kpath-plan.sh hns_roce_rs" >"$out/kpath.cmd"
    bash scripts/run-guest.sh --name cov-kpath-rs --driver rs --sim 1 \
        --cmd-file "$out/kpath.cmd" >"$out/run.log" 2>&1
    grep -h '^TEST ' "$out/run.log" | awk '{print $3}' | sort | uniq -c
    ;;
*) die "COVERAGE_RUN must be check, fuzz or kpath (got '$run')" ;;
esac
echo "coverage: the $run run took $(($(date +%s) - t0)) s"
case "$run" in
check) what="all of \`make check\` (the fuzzer's boots included)" ;;
fuzz) what="\`make fuzz\` on the Rust driver (${FUZZ_CALLS:-10000} calls)" ;;
kpath) what="the kernel data-path plan (one boot)" ;;
esac
docs=()
[ "${COVERAGE_DOCS:-0}" = 1 ] && docs=(--write-docs "$HNS_TOP/docs/coverage.md" --what "$what")
python3 scripts/coverage-report.py --ko "$HNS_BUILD/module-cov/hns_roce_rs.ko" \
    --out "$out/report.md" "${docs[@]}" "$out/dumps"
