#!/usr/bin/env bash
#
# `make demo`: build everything, boot the guest, load hns_roce_rs and show
# what it did. Today the module registers its hnae3 RoCE client and, with no
# HNS function present yet (the simulator arrives with hns-sim), attaches to
# nothing; the demo shows exactly that.
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$HNS_TOP"

bash scripts/setup.sh
bash scripts/build-kernel.sh
make -s modules
log "module built: $HNS_BUILD/module/hns_roce_rs.ko"

HNS_MODULE_DIR=$HNS_BUILD/module bash scripts/run-guest.sh --driver none --name demo --cmd '
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
echo "== ibv_devices (no HNS function exists until the simulator lands)"
ibv_devices
echo
echo "== rmmod hns_roce_rs"
rmmod hns_roce_rs
dmesg | tail -n 1 | sed "s/^\[[ 0-9.]*\] //"
'
