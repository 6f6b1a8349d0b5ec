#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make demo`: build everything, boot the guest with one simulated HIP09
# function (hns-sim), load hns_roce_rs and show what a user would look at:
# the ib_device it registers (`ibv_devices`, `ibv_devinfo`, `rdma link`),
# then traffic through it — an RC ping-pong, a perftest pair and rping over
# the RDMA CM — each with its outcome, and at the end a per-command summary
# of the firmware traffic hns-sim saw (commands and mailboxes, counted).
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$HNS_TOP"

bash scripts/setup.sh
bash scripts/build-kernel.sh
make -s modules sim
log "module built: $HNS_BUILD/module/hns_roce_rs.ko"

HNS_MODULE_DIR=$HNS_BUILD/module bash scripts/run-guest.sh --driver none --sim 1 --name demo \
    --timeout 600 --cmd '
. /opt/hns/lib.sh
KO=/opt/run/modules/hns_roce_rs.ko
HNS_TIMEOUT=60
HNS_SERVER_DELAY=1
echo "== modinfo hns_roce_rs.ko"
modinfo $KO | grep -E "^(name|description|license|alias|vermagic|depends):" | head -n 12
echo
echo "== insmod hns_roce_rs.ko"
dmesg -c >/dev/null
insmod $KO
sleep 1
dmesg | sed "s/^\[[ 0-9.]*\] //" | grep -v "KTAP\|^ *ok \|# Subtest\|1\.\.[0-9]" | head -n 20
echo
echo "== ibv_devices"
ibv_devices
echo
echo "== ibv_devinfo -d hns_0"
port_state hns_0 PORT_ACTIVE
ibv_devinfo -d hns_0
echo
echo "== rdma link"
rdma link
echo
GIDX=$(roce_v2_gid hns_0)
echo "== traffic through hns_roce_rs (RoCE v2 GID index ${GIDX:-none})"
pair demo/rc-pingpong "ibv_rc_pingpong -d hns_0 -g $GIDX -p 18515 -n 100" \
    "ibv_rc_pingpong -d hns_0 -g $GIDX -p 18515 -n 100 127.0.0.1"
grep -E "bytes in|iters in" /tmp/server.out | sed "s/^/    /"
pair demo/ib_send_bw "ib_send_bw -d hns_0 -x $GIDX --no_ddp -F -n 1000" \
    "ib_send_bw -d hns_0 -x $GIDX --no_ddp -F -n 1000 127.0.0.1"
/usr/bin/ip addr add 192.168.77.1/24 dev eth0 && /usr/bin/ip link set eth0 up
pair demo/rping "rping -s -a 192.168.77.1 -C 5 -v" "rping -c -a 192.168.77.1 -C 5 -v"
printf "%s\n" "$cout" | tail -n 2 | sed "s/^/    /"
echo
echo "== rmmod hns_roce_rs"
rmmod hns_roce_rs
dmesg | tail -n 1 | sed "s/^\[[ 0-9.]*\] //"
' || true
echo
trace=$HNS_BUILD/guest/demo/trace-0.txt
echo "== firmware traffic hns_roce_rs caused (hns-sim trace, $(grep -c '^cmq >' "$trace") commands)"
echo "   CMQ commands:"
grep '^cmq >' "$trace" | awk '{print $4}' | sort | uniq -c | sort -rn | awk '{printf "    %6d  %s\n", $1, $2}'
echo "   mailbox commands (through POST_MB):"
grep '^mbx >' "$trace" | awk '{print $4}' | sort | uniq -c | sort -rn | awk '{printf "    %6d  %s\n", $1, $2}'
echo "   data engine: $(grep -h '^hns-sim\[0\]: data:' "$HNS_BUILD/guest/demo/hns-sim.log" | sed 's/^hns-sim\[0\]: data: //')"
