#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Boots tests/guest/bond-plan.sh (RoCE bonding) and checks the
# host side of the run: the bond commands in the model's trace, the
# model's bond table summary, the stall counter and bad DMA. Prints the
# guest's TEST lines, then its own ("TEST bond-<d>-host/..."). Not part of
# make check (yet).
#
# Usage: scripts/bond-run.sh c|rs [NAME]
#   (environment as for run-guest.sh: HNS_GUEST_LANE, KOBJ, ...)
set -uo pipefail
. "$(dirname "$0")/common.sh"

d=${1:?usage: bond-run.sh c|rs [NAME]}
name=${2:-bond-$d}
# Default caps (0x48077f) plus HNS_ROCE_CAP_FLAG_BOND (bit 21).
export HNS_SIM_PCI="3.0 3.1 3.2 4.0"
export HNS_SIM_ARGS="${HNS_SIM_ARGS:-} --set cap_flags=0x68077f"
start=$(date +%s)
bash "$HNS_TOP/scripts/run-guest.sh" --driver "$d" --sim 4 --name "$name" \
    --timeout "${HNS_GUEST_TIMEOUT:-600}" --cmd "sh /opt/hns/bond-plan.sh $d"
grc=$?
echo "bond-run: guest exit $grc after $(($(date +%s) - start)) s"
run=$HNS_RUNS/guest/$name
g=bond-$d-host
fails=0
t() {
    echo "TEST $g/$1 $2${3:+ $3}"
    [ "$2" = PASS ] || fails=$((fails + 1))
}
[ $grc -eq 0 ] && t guest-exit PASS || t guest-exit FAIL "exit $grc ($run/console.log)"

# bond_note NAME REGEX: a "# bond" note of any device's trace matches.
bond_note() {
    local hit
    hit=$(grep -h -E "^# bond $2" "$run"/trace-*.txt 2>/dev/null | head -n 1)
    if [ -n "$hit" ]; then t "$1" PASS "$hit"; else t "$1" FAIL "no '# bond $2' in $run/trace-*.txt"; fi
}
bond_note trace-set-ab '0: SET from function 0 \(bus 0x00\): mode 1 slaves 0x3 active 0x1 \(1\) hash -$'
bond_note trace-change-active-f1 '0: CHANGE_ACTIVE_PORT from function 0 \(bus 0x00\): mode 1 slaves 0x3 active 0x2 \(1\) hash -$'
bond_note trace-clear '0: CLEAR from function [0-9] \(bus 0x00\): cleared'
bond_note trace-set-after-reset '0: SET from function 0 \(bus 0x00\): mode 1 slaves 0x3 active 0x2 \(1\) hash -$'
bond_note trace-change-join-f2 '0: CHANGE_ACTIVE_PORT from function 0 \(bus 0x00\): mode 2/4 slaves 0x7 active 0x7 \(3\) hash L34$'
bond_note trace-set-lacp-l2 '0: SET from function 0 \(bus 0x00\): mode 2/4 slaves 0x3 active 0x3 \(2\) hash L2$'
bond_note trace-set-xor-l34 '0: SET from function 0 \(bus 0x00\): mode 2/4 slaves 0x3 active 0x3 \(2\) hash L34$'
bond_note trace-change-xor-f1 '0: CHANGE_ACTIVE_PORT from function 0 \(bus 0x00\): mode 2/4 slaves 0x3 active 0x2 \(1\) hash L34$'
bond_note trace-change-xor-both '0: CHANGE_ACTIVE_PORT from function 0 \(bus 0x00\): mode 2/4 slaves 0x3 active 0x3 \(2\) hash L34$'
# Five SETs (active-backup, its recovery after the reset, 802.3ad,
# balance-xor, again after a slave left) and four CLEARs (del bond0 twice,
# nomaster, rmmod while bonded).
table=$(grep -h 'hns-sim: bond 0 (bus 0x00):' "$run/hns-sim.log")
if [[ "$table" =~ :\ 5\ SET,\ [0-9]+\ CHANGE_ACTIVE_PORT,\ 4\ CLEAR,\ 0\ refused\;\ cleared$ ]]; then
    t bond-table PASS "${table#hns-sim: }"
else
    t bond-table FAIL "${table:-no bond table line in $run/hns-sim.log}"
fi
checks=$(grep -h -E '^# bond [0-9]+: .*check:' "$run"/trace-*.txt 2>/dev/null | sort | uniq -c)
if [ -z "$checks" ]; then
    t trace-no-check-notes PASS
else
    t trace-no-check-notes FAIL "$(echo "$checks" | head -n 3 | tr -s ' ' | tr '\n' ';')"
fi
echo "    bond notes:"
grep -h -E '^# bond |^# control: link' "$run"/trace-*.txt 2>/dev/null | sed 's/^/    /'

# The stall counter: hns_bond_0's traffic to hns_3 waited for the
# CHANGE_ACTIVE_PORT at least once.
stalls=$(grep -h -o '[0-9]* stalls by a down port' "$run/hns-sim.log" | awk '{s += $1} END {print s + 0}')
if [ "$stalls" -gt 0 ]; then t stalls-by-down-port PASS "$stalls"; else t stalls-by-down-port FAIL "0: the failover never held traffic"; fi
unowned=$(grep -h -o '[0-9]* stalls for a GID no device owns' "$run/hns-sim.log" | awk '{s += $1} END {print s + 0}')
echo "    stalls for a GID no device owns: $unowned"
dl=$(grep -h '^hns-sim\[[0-9]*\]: data:' "$run/hns-sim.log")
if [ -z "$dl" ]; then
    t no-bad-dma FAIL "no data line"
elif printf '%s\n' "$dl" | grep -qv ', 0 bad DMA$'; then
    t no-bad-dma FAIL "$(printf '%s\n' "$dl" | grep -v ', 0 bad DMA$' | head -n 1)"
else
    t no-bad-dma PASS
fi
[ $fails -eq 0 ] && [ $grc -eq 0 ]
