#!/usr/bin/env bash
#
# `make demo`: build everything, boot the guest with one simulated HIP09
# function (hns-sim), load hns_roce_rs and show what it did: today it runs
# the firmware bring-up profile over the command queue and clears the
# function again (no ib_device yet). The firmware traffic is shown from
# hns-sim's trace.
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$HNS_TOP"

bash scripts/setup.sh
bash scripts/build-kernel.sh
make -s modules sim
log "module built: $HNS_BUILD/module/hns_roce_rs.ko"

HNS_MODULE_DIR=$HNS_BUILD/module bash scripts/run-guest.sh --driver none --sim 1 --name demo --cmd '
set -e
KO=/opt/run/modules/hns_roce_rs.ko
echo "== modinfo hns_roce_rs.ko"
modinfo $KO | grep -E "^(name|description|license|alias|vermagic|depends):" | head -n 12
echo
echo "== insmod hns_roce_rs.ko"
dmesg -c >/dev/null
insmod $KO
dmesg | sed "s/^\[[ 0-9.]*\] //"
echo
echo "== /proc/modules"
grep hns_roce_rs /proc/modules
echo
echo "== ibv_devices (hns_roce_rs does not register an ib_device yet)"
ibv_devices
echo
echo "== rmmod hns_roce_rs"
rmmod hns_roce_rs
dmesg | tail -n 1 | sed "s/^\[[ 0-9.]*\] //"
'
echo
echo "== firmware commands hns_roce_rs sent to the simulated function (hns-sim trace)"
grep '^cmq >' "$HNS_BUILD/guest/demo/trace-0.txt" | awk '{print "   ", $3, $4}' | uniq -c
