#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The upstream NIC side (run-guest.sh HNS_NIC=hclge, SIM=1 or 2): hclge and
# hns3 on hns-sim, with a RoCE driver as hclge's RoCE client.
#
#   sh /opt/hns/nic-plan.sh [c|rs|none] [data]
#
# The driver defaults to DRIVER of the run (/opt/run/env); init already
# loaded hns_sim (nic_hclge=1), the NIC modules and the RoCE driver. TEST
# lines in the group "nic-<driver>/":
#   hclge-probe       hclge logged the end of its probe
#   netdev            hns3 registered a net_device on the function
#   roce-base-vector  (c, rs) the RoCE driver's abnormal-event interrupt
#                     is MSI-X vector roce_base_vector of hns-sim's caps,
#                     the NIC vector count hclge was told (QUERY_PF_RSRC)
#   then reg-plan.sh's "trace" mode (probe, `ibv_devinfo -v`, remove; its
#   lines in the group "regtrace-<driver>/", which check.sh renames), with
#   the interface down: an up interface takes an IPv6 link-local address,
#   whose GID the RoCE driver would write at a time of its own in the
#   middle of the compared trace;
#   link-up           after the RoCE driver is gone, `ip link set up`
#                     gives carrier within 3 s (QUERY_LINK_STATUS), and
#                     the interface is set down again at once.
#   ping              with a second function (--sim 2): its netdev in a
#                     network namespace, IPv4 ping -c 3 between the two
#                     over hns-sim's TQP rings gets 3 replies, no TX
#                     queue timeout logged (after the RoCE trace).
# Then (c, rs), after the compared registration window (check.sh cuts the
# trace at the RoCE driver's reload):
#   order-hclge-first the RoCE driver loaded again with hclge bound:
#                     hns_0 listed, port ACTIVE once the interface (IPv6
#                     off) is up;
#   rc-, ud-, srq-pingpong, send-bw, write-bw, rping
#                     20 iterations each on hns_0 (GID 0), rping (5) over
#                     an IPv4 address on the interface;
#   nvme-write-read   NVMe over RDMA from hns_0 to hns_1 (target on
#                     hns_1), 1 MiB written, read back and compared (the
#                     C driver's boot needs HNS_GUEST_KNOWN=
#                     "hns-map-mr-sg-sleeps hns-cq-xa-irq-inversion":
#                     C driver findings 10, 2; either driver's
#                     "nvmet-rdma-port-lockdep": 11, not the RoCE
#                     driver's);
#   live-objects-rmmod-hclge
#                     live_faults.py nic: a process holding a context, PD,
#                     CQ, MR, RC QP and SRQ while `rmmod hclge` runs gets
#                     DEVICE_FATAL, rmmod succeeds, hns_0 goes (the MBX
#                     line, compared between the drivers by check.sh);
#   order-roce-first  the RoCE driver unloaded and loaded with no hclge
#                     (no hns_0), then hclge loaded: hns_0 back, port
#                     ACTIVE, and rc-pingpong-after-reload passes;
#   live-objects-unbind
#                     live_faults.py unbind: the same process while
#                     hns_0's PCI function is unbound from hns3 in sysfs
#                     gets DEVICE_FATAL, the write succeeds, hns_0 goes
#                     (its MBX line compared by check.sh);
#   rebind            the function bound to hns3 again: hns_0 back, port
#                     ACTIVE, and rc-pingpong-after-rebind passes;
#   unload            the RoCE driver unloads (kmemleak at the boot's end).
# With "data" (c, rs) instead: IPv6 off on the interface (it then sends
# nothing of its own), the interface up, then rc-pingpong, ud-pingpong
# and srq-pingpong (100 iterations on GID 0, both ends on hns_0) through
# the RoCE driver on hclge. This mode's traffic is in the RoCE trace:
# check.sh's registration comparison does not run it.
. /opt/hns/lib.sh
DRIVER=none
[ -f /opt/run/env ] && . /opt/run/env
D=$(plan_driver nic-plan.sh "${1:-$DRIVER}") || {
    echo "$D"
    exit 2
}
G=nic-$D
MODE=${2:-}

# The simulated function: the one hns3 is bound to.
fn=$(hns3_function)

probed() {
    dmesg | grep -q "hns3 $fn: hclge driver initialization finished"
}
check "$G/hclge-probe" probed

dev=$(netdev_of "$fn")
has_netdev() {
    [ -n "$dev" ] && echo "$fn: $dev"
}
check "$G/netdev" has_netdev

if [ "$MODE" = data ]; then
    if [ "$D" = none ] || [ -z "$dev" ]; then
        report "$G/data" FAIL "needs a RoCE driver and the netdev"
        plan_exit
    fi
    echo 1 >/proc/sys/net/ipv6/conf/"$dev"/disable_ipv6
    ip link set "$dev" up
    wait_hns0
    for t in rc ud srq; do
        pair "$G/$t-pingpong" "ibv_${t}_pingpong -d hns_0 -g 0 -n 100" \
            "ibv_${t}_pingpong -d hns_0 -g 0 -n 100 127.0.0.1"
    done
    ip link set "$dev" down
    plan_exit
fi

if [ "$D" != none ]; then
    check "$G/roce-base-vector" base_matches
    sh /opt/hns/reg-plan.sh "$D" trace || HNS_FAILS=$((HNS_FAILS + 1))
fi

check "$G/link-up" link_up

# ping: with a second function (--sim 2), IPv4 between the two netdevs
# through hns-sim's TQP rings and the switch between its functions. The
# second netdev goes into a network namespace (iproute2's ip, not
# busybox's applet), or the kernel would answer locally; both interfaces
# up, `ping -c 3` must get 3 replies, and no TX queue timeout may be
# logged. After the RoCE driver is gone, so none of it reaches the
# RoCE trace (the frames are notes in nic-trace-N.txt).
fn2=$(hns3_function "$fn")
dev2=$(netdev_of "$fn2")
IP=/usr/bin/ip
ping_peer() {
    mkdir -p /run/netns
    $IP netns add hnspeer || return 1
    $IP link set "$dev2" netns hnspeer || return 1
    $IP addr add 192.168.90.1/24 dev "$dev"
    $IP link set "$dev" up
    $IP netns exec hnspeer $IP addr add 192.168.90.2/24 dev "$dev2"
    $IP netns exec hnspeer $IP link set "$dev2" up
    pw=0
    while [ $pw -lt 30 ] && [ "$(cat /sys/class/net/"$dev"/carrier 2>/dev/null)" != 1 ]; do
        sleep 0.1
        pw=$((pw + 1))
    done
    ping -c 3 -W 2 192.168.90.2
    rc=$?
    if dmesg | grep -E "NETDEV WATCHDOG|tx_timeout|transmit queue [0-9]+ timed out"; then
        rc=1
    fi
    $IP link set "$dev" down
    $IP addr del 192.168.90.1/24 dev "$dev"
    # Deleting the namespace hands the netdev back to the initial one.
    $IP netns exec hnspeer $IP link set "$dev2" down
    $IP netns del hnspeer
    return $rc
}
if [ -n "$dev" ] && [ -n "$dev2" ]; then
    check "$G/ping" ping_peer
fi
[ "$D" = none ] && plan_exit

# --- After the compared window (the RoCE driver's first removal): the
# load orders, traffic and the NIC driver going away under live objects.
# The trace from here on starts at the reload's first command (check.sh
# cuts the registration trace there).
MOD=$(driver_module "$D")
T_AFTER=$(date +%s)
# up_quiet: the interface of the function up with IPv6 off (no address
# of its own, so no GID change in the middle of traffic).
up_quiet() {
    echo 1 >/proc/sys/net/ipv6/conf/"$1"/disable_ipv6 && ip link set "$1" up
}
# roce_up: hns_0 listed and port 1 ACTIVE within 10 s each.
roce_up() {
    wait_hns0 && port_state hns_0 PORT_ACTIVE
}
# order-hclge-first: the RoCE driver loaded with hclge bound (the boot's
# own order, here as a reload after the trace's removal).
hclge_first() {
    load_roce "$D" && up_quiet "$dev" && roce_up
}
check "$G/order-hclge-first" hclge_first || plan_exit

# The data subset on hclge: 20 iterations each, both ends on hns_0 with
# GID 0, then ib_send_bw and ib_write_bw, then rping over an IPv4 address
# on the interface (a local destination: no frames for the address).
# Each client starts once its server listens (pair_on), not after a
# fixed delay.
for t in rc ud srq; do
    pair_on "$G/$t-pingpong" tcp 18515 "ibv_${t}_pingpong -d hns_0 -g 0 -n 20" \
        "ibv_${t}_pingpong -d hns_0 -g 0 -n 20 127.0.0.1"
done
PAIR_LISTEN="tcp 18520"
for t in send write; do
    perf_pair "$G/$t-bw" "ib_${t}_bw -d hns_0 -x 0 -p 18520 -n 20 -F --no_ddp" \
        "ib_${t}_bw -d hns_0 -x 0 -p 18520 -n 20 -F --no_ddp 127.0.0.1"
done
PAIR_LISTEN=
$IP addr add 192.168.91.1/24 dev "$dev"
pair_on "$G/rping" rping 7174 "rping -s -a 192.168.91.1 -C 5 -v" \
    "rping -c -a 192.168.91.1 -C 5 -v"
$IP addr del 192.168.91.1/24 dev "$dev"

# nvme-write-read: NVMe over RDMA from hns_0 to hns_1 on hclge,
# the in-kernel target (nvmet-rdma, a memory-backed null_blk) on
# hns_1's address, the host (nvme-rdma) connecting from hns_0's
# (ipv4_pair); 1 MiB of random data written and read back with O_DIRECT
# and compared, then everything undone.
NQN=nqn.2026-12.io.github.hns-roce-rs:nic
NVME_HOST="--hostnqn=nqn.2014-08.org.nvmexpress:uuid:6e5f0a14-0000-4000-8000-000000000015"
nvme_rw() {
    n1=$(rdma_netdev hns_1)
    [ -n "$n1" ] || { echo "no netdev for hns_1"; return 1; }
    nrc=1
    if ipv4_pair "$dev" "$n1" && port_state hns_1 PORT_ACTIVE &&
        modprobe null_blk nr_devices=1 gb=1 memory_backed=1 && modprobe nvmet-rdma &&
        nvmet_export "$NQN" && modprobe nvme-rdma &&
        nvme connect -t rdma -a 192.168.77.2 -s 4420 -w 192.168.77.1 -n "$NQN" -i 1 \
            "$NVME_HOST" && wait_nvme0n1; then
        head -c 1048576 /dev/urandom >/tmp/nvme-in
        dd if=/tmp/nvme-in of=/dev/nvme0n1 bs=1M count=1 oflag=direct &&
            dd if=/dev/nvme0n1 of=/tmp/nvme-out bs=1M count=1 iflag=direct &&
            cmp /tmp/nvme-in /tmp/nvme-out && nrc=0
        rm -f /tmp/nvme-in /tmp/nvme-out
    fi
    # Whatever was set up is undone, so the steps after start clean.
    [ -e /sys/class/nvme/nvme0 ] && { nvme disconnect -n "$NQN" || nrc=1; }
    lw=0
    while [ -e /dev/nvme0n1 ] && [ $lw -lt 100 ]; do
        sleep 0.1
        lw=$((lw + 1))
    done
    unload_left nvme_rdma nvme_fabrics nvme_core || nrc=1
    [ -d /sys/kernel/config/nvmet/ports/1 ] && { nvmet_unexport "$NQN" || nrc=1; }
    unload_left nvmet_rdma nvmet null_blk || nrc=1
    $IP addr flush dev "$dev"
    $IP addr flush dev "$n1"
    $IP link set "$n1" down
    return $nrc
}
T_NVME=$(date +%s)
check "$G/nvme-write-read" nvme_rw
echo "    $G: nvme $(($(date +%s) - T_NVME)) s"

# hclge unloaded while a process holds a context with a PD, CQ, MR, an RC
# QP in INIT and an SRQ (live_faults.py nic): the hnae3 core takes the
# RoCE client off each function, the core disassociates the context. The
# MBX line (async events, rmmod's status, a PD made on the dead context,
# the destroys) is compared between the drivers by check.sh; here the
# process must get DEVICE_FATAL (8), rmmod must succeed and hns_0 go.
live_nic() {
    lo=$(timeout 120 python3 /opt/hns/live_faults.py nic hclge)
    echo "$lo"
    lm=$(printf '%s\n' "$lo" | grep '^MBX live-nic ')
    case "$lm" in
    "MBX live-nic event 8 rmmod 0 "*) ;;
    *) return 1 ;;
    esac
    if ibv_devices 2>/dev/null | grep -qw hns_0; then
        echo "hns_0 still listed without hclge"
        return 1
    fi
}
check "$G/live-objects-rmmod-hclge" live_nic
printf '%s\n' "$out" | grep '^MBX ' | sed 's/ | .*//'

# order-roce-first: with hclge gone, the RoCE driver reloaded (it
# registers its hnae3 client; no function, so no hns_0), then hclge
# loaded: its probe hands each function to the RoCE client, hns_0 comes
# back and carries an RC pingpong on the new netdev.
roce_first() {
    rmmod "$MOD" || return 1
    load_roce "$D" || return 1
    sleep 1
    if ibv_devices 2>/dev/null | grep -qw hns_0; then
        echo "hns_0 listed without hclge"
        return 1
    fi
    insmod /opt/nic/hclge.ko || return 1
    wait_hns0 || return 1
    nd=$(rdma_netdev hns_0)
    echo "hns_0 on $nd"
    [ -n "$nd" ] && up_quiet "$nd" && port_state hns_0 PORT_ACTIVE
}
if check "$G/order-roce-first" roce_first; then
    pair_on "$G/rc-pingpong-after-reload" tcp 18515 "ibv_rc_pingpong -d hns_0 -g 0 -n 20" \
        "ibv_rc_pingpong -d hns_0 -g 0 -n 20 127.0.0.1"
fi

# The PCI-unbind variant: hns_0's function unbound from hns3 through sysfs
# while a process holds a context with a PD, CQ, MR, RC QP (INIT) and SRQ
# (live_faults.py unbind). hclge's remove of that function alone takes the
# RoCE client off it; the process must get DEVICE_FATAL (8), the write
# must succeed and hns_0 go (the MBX line is compared by check.sh). Then
# the function is bound again: hclge's probe hands it back to the RoCE
# client, hns_0 returns and carries an RC pingpong.
# ufn: hns_0's function, found here (check runs each step in a subshell).
ufn=$(readlink -f /sys/class/infiniband/hns_0/device 2>/dev/null)
ufn=${ufn##*/}
live_unbind() {
    [ -n "$ufn" ] || { echo "no PCI function under hns_0"; return 1; }
    echo "hns_0 on $ufn"
    lo=$(timeout 120 python3 /opt/hns/live_faults.py unbind "$ufn")
    echo "$lo"
    lm=$(printf '%s\n' "$lo" | grep '^MBX live-unbind ')
    case "$lm" in
    "MBX live-unbind event 8 unbind 0 "*) ;;
    *) return 1 ;;
    esac
    if ibv_devices 2>/dev/null | grep -qw hns_0; then
        echo "hns_0 still listed with its function unbound"
        return 1
    fi
}
rebind() {
    [ -n "$ufn" ] || { echo "no PCI function to bind"; return 1; }
    echo "$ufn" >/sys/bus/pci/drivers/hns3/bind || return 1
    wait_hns0 || return 1
    nd=$(rdma_netdev hns_0)
    echo "hns_0 on $nd"
    [ -n "$nd" ] && up_quiet "$nd" && port_state hns_0 PORT_ACTIVE
}
T_UNBIND=$(date +%s)
check "$G/live-objects-unbind" live_unbind
printf '%s\n' "$out" | grep '^MBX ' | sed 's/ | .*//'
if check "$G/rebind" rebind; then
    pair_on "$G/rc-pingpong-after-rebind" tcp 18515 "ibv_rc_pingpong -d hns_0 -g 0 -n 20" \
        "ibv_rc_pingpong -d hns_0 -g 0 -n 20 127.0.0.1"
fi
echo "    $G: unbind and rebind $(($(date +%s) - T_UNBIND)) s"

# The RoCE driver goes last (its refcount back to 0: nothing of the
# process or the traffic held it); kmemleak is scanned at the boot's end.
check "$G/unload" rmmod "$MOD"
echo "    $G: $(($(date +%s) - T_AFTER)) s past the registration window"
plan_exit
