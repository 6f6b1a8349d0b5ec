#!/usr/bin/env bash
#
# make bench: perftest over hns-sim (tests/guest/bench-plan.sh) with the C
# driver, and where the time goes: wall time of the guest, CPU time of
# hns-sim and of QEMU (sampled from /proc while they run), and hns-sim's
# data counters. Results: build/bench/results.txt. No pass/fail on numbers.
#
#   scripts/bench.sh [ITERS]        (default 20000 iterations per bw run, 1/100 of it for latency)
#
# HNS_SIM_ARGS (e.g. --idle-us 0) reaches hns-sim through run-guest.sh. The
# engine logs each QP's SQ rate by the host clock when the QP is destroyed
# (QPs with >= 1000 WQEs), and the loop's time in passes that did work.
set -euo pipefail
. "$(dirname "$0")/common.sh"

iters=${1:-20000}
name=bench
out=$HNS_BUILD/bench
mkdir -p "$out"
echo "sh /opt/hns/bench-plan.sh $iters" >"$out/bench.cmd"
rundir=$HNS_BUILD/guest/$name
tick=$(getconf CLK_TCK)

# cpu_of PID: "utime+stime" in clock ticks, or nothing once it is gone.
cpu_of() {
    awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || true
}

start=$(date +%s.%N)
bash "$HNS_TOP/scripts/run-guest.sh" --name "$name" --driver c --sim 1 --timeout 1800 \
    --cmd-file "$out/bench.cmd" >"$out/guest.out" 2>"$out/guest.err" &
guest=$!
sim_cpu=0 qemu_cpu=0
while kill -0 "$guest" 2>/dev/null; do
    spid=$(pgrep -f "^[^ ]*hns-sim .*$rundir" | head -n 1 || true)
    qpid=$(pgrep -f "^qemu-system-x86_64 .*$rundir/" | head -n 1 || true)
    [ -n "$spid" ] && v=$(cpu_of "$spid") && [ -n "$v" ] && sim_cpu=$v
    [ -n "$qpid" ] && v=$(cpu_of "$qpid") && [ -n "$v" ] && qemu_cpu=$v
    sleep 0.5
done
rc=0
wait "$guest" || rc=$?
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

{
    echo "# make bench, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, QEMU TCG, C driver on hns-sim"
    echo "# rates from the guest clock: (N - 10) messages over the extra time of an N-iteration run"
    grep '^BENCH ' "$out/guest.out" || echo "no BENCH lines (guest exit $rc, see $rundir/console.log)"
    echo "guest wall time: $wall s"
    awk -v s="$sim_cpu" -v q="$qemu_cpu" -v t="$tick" \
        'BEGIN { printf "hns-sim CPU: %.1f s, QEMU CPU: %.1f s\n", s / t, q / t }'
    echo "hns-sim options: ${HNS_SIM_ARGS:-(none)}"
    grep -h 'data:\|^hns-sim: loop:\|SQ WQEs in' "$rundir/hns-sim.log" 2>/dev/null || true
    # Module size (issue 16): the release build of hns_roce_rs.ko (the
    # shim linked in) against the C driver's module of the same kernel
    # and config; every .text*, .rodata* and .data* section counted.
    rs_ko=$HNS_BUILD/module/hns_roce_rs.ko
    c_ko=$KOBJ/drivers/infiniband/hw/hns/hns-roce-hw-v2.ko
    if [ -f "$rs_ko" ] && [ -f "$c_ko" ]; then
        size -A "$rs_ko" "$c_ko" | awk '
            /^[^ ]*:$/ || / :$/ { m++ }
            $1 ~ /^\.text/ { t[m] += $2 } $1 ~ /^\.rodata/ { r[m] += $2 } $1 ~ /^\.data/ { d[m] += $2 }
            END {
                printf "module size (bytes) Rust/C: .text %d/%d = %.2f, .rodata %d/%d = %.2f, .data %d/%d = %.2f\n",
                    t[1], t[2], t[1] / t[2], r[1], r[2], r[1] / r[2], d[1], d[2], d[1] / d[2]
            }'
    else
        echo "module size: $rs_ko or $c_ko missing (make modules, make kernel)"
    fi
} | tee "$out/results.txt"
exit "$rc"
