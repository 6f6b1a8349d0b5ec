#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make call-count: the instructions one kverbs call executes in
# the C driver and in the Rust driver, counted by single-stepping the guest
# through QEMU's gdb stub (scripts/call-count.py, in gdb). One boot, SIM=1:
# tests/guest/callcount-plan.sh loads each driver and runs hns_kbench.ko
# with a few samples; gdb traces post_send and post_recv of one WR and of
# 16, an empty poll_cq and one returning 16 CQEs, CC_CALLS calls of each
# (default 3; the posts after CC_SKIP, default 3). Writes
# build/callcount/report.md, summary.md (make bench appends it to its
# report) and traces.json. Counts, not time: the same for the same code
# and path, whatever the machine's load.
#
#   scripts/call-count.sh [SAMPLES]          (hns_kbench samples, default 12)
set -euo pipefail
. "$(dirname "$0")/common.sh"

samples=${1:-12}
[[ "$samples" =~ ^[1-9][0-9]*$ ]] || die "SAMPLES must be a positive number (got '$samples')"
out=$HNS_BUILD/callcount
mkdir -p "$out"
rm -f "$out"/report.md "$out"/summary.md "$out"/traces.json "$out"/guest.* "$out"/gdb.log
HNS_BENCH=1 bash "$HNS_TOP/scripts/setup.sh" >&2 || die "setup failed"
[ -f "$HNS_BUILD/bench/extra/hns_kbench.ko" ] || die "hns_kbench.ko missing (make bench-kmod)"
name=callcount
rundir=$HNS_RUNS/guest/$name
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "sh /opt/hns/callcount-plan.sh $samples" >"$out/plan.cmd"

HNS_GUEST_GDB=$port HNS_MODULE_DIR=$HNS_BUILD/module HNS_GUEST_EXTRA=$HNS_BUILD/bench/extra \
    bash "$HNS_TOP/scripts/run-guest.sh" --name "$name" --driver none --sim 1 --timeout 1800 \
    --cmd-file "$out/plan.cmd" >"$out/guest.out" 2>"$out/guest.err" &
guest=$!
rc=0
CC_PORT=$port CC_OUTPUT=$rundir/output.raw CC_SYSMAP=$KOBJ/System.map CC_OUT=$out \
    gdb -batch -nx -x "$HNS_TOP/scripts/call-count.py" >"$out/gdb.log" 2>&1 || rc=1
wait "$guest" || rc=1
grep '^CC-ERROR' "$out/guest.out" >&2 && rc=1
grep -q '^CC-END' "$out/guest.out" || { echo "call-count: the plan did not finish (see $rundir/console.log)" >&2; rc=1; }
[ -f "$out/report.md" ] || { echo "call-count: no report (see $out/gdb.log)" >&2; rc=1; }
# A kind of call missing in either driver (gdb missed the plan's sync
# stop, or the benchmark did not make such a call) is a failure too.
if grep -q 'not traced' "$out/summary.md" 2>/dev/null; then
    echo "call-count: some calls were not traced in both drivers (see $out/gdb.log)" >&2
    rc=1
fi
[ -f "$out/report.md" ] && cat "$out/report.md"
exit $rc
