#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# /init of the hns-roce-rs test guest (busybox sh). Mounts the basics, loads
# the driver the run asked for, runs /opt/run/cmd.sh with its output on the
# second serial port (ttyS1; on arm64 the virtio console hvc0, HNS_OUT in
# /opt/run/env) between sentinels, asks kmemleak for a scan and
# reboots (QEMU runs with -no-reboot, so that ends the run).

export PATH=/usr/sbin:/usr/bin
export HOME=/root
umask 022
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
ulimit -l unlimited
/usr/bin/ip link set lo up
hostname hns-guest

DRIVER=none
SIM=0
NIC=stub
HNS_OUT=
HNS_COV=0
[ -f /opt/run/env ] && . /opt/run/env

OUT=${HNS_OUT:-/dev/ttyS1}
stty -F "$OUT" raw -echo 2>/dev/null

finish() {
    rc=$1
    # A coverage run (HNS_COV=1, make coverage): the collector's offsets,
    # every load of the driver in this boot, on the third serial port.
    if [ "${HNS_COV:-0}" = 1 ]; then
        stty -F /dev/ttyS2 raw -echo 2>/dev/null
        { echo HNS-COV-BEGIN; cat /sys/kernel/debug/hns_cov/offsets; echo HNS-COV-END; } >/dev/ttyS2
    fi
    # kmemleak only reports objects older than a few seconds: scan, wait,
    # scan again. Reports land in the kernel log, which the host checks.
    if [ -w /sys/kernel/debug/kmemleak ]; then
        echo scan >/sys/kernel/debug/kmemleak
        sleep 6
        echo scan >/sys/kernel/debug/kmemleak
        if [ -s /sys/kernel/debug/kmemleak ]; then
            echo "kmemleak report:" >/dev/kmsg
            cat /sys/kernel/debug/kmemleak >/dev/console
        fi
    fi
    echo "HNS-GUEST-END rc=$rc" >"$OUT"
    sync
    reboot -f
    sleep 10
}

# The upstream NIC side (run-guest.sh HNS_NIC=hclge): hns_sim.ko only
# relabels the functions (nic_hclge=1), then the NIC modules in dependency
# order; the initramfs keeps them in /opt/nic, out of modprobe's reach.
load_nic() {
    insmod /opt/run/modules/hns_sim.ko nic_hclge=1 || return 1
    for m in libphy mdio_bus mdio_devres; do
        modprobe $m || return 1
    done
    for m in hns3 hclge-common hclge hclgevf; do
        [ ! -f /opt/nic/$m.ko ] || insmod /opt/nic/$m.ko || return 1
    done
}

load_driver() {
    if [ "$SIM" -gt 0 ] && [ "$NIC" = hclge ]; then
        load_nic || return 1
    elif [ "$SIM" -gt 0 ]; then
        insmod /opt/run/modules/hns_sim.ko || return 1
    fi
    case "$DRIVER" in
    none) ;;
    c) modprobe hns-roce-hw-v2 || return 1 ;;
    rs) insmod /opt/run/modules/hns_roce_rs.ko || return 1 ;;
    *) echo "unknown DRIVER=$DRIVER" ; return 1 ;;
    esac
}

{
    echo "HNS-GUEST-BEGIN"
    # The coverage build of the driver needs the collector before it loads.
    if [ "${HNS_COV:-0}" = 1 ] && ! insmod /opt/run/modules/hns_cov.ko; then
        echo "TEST guest/load-hns-cov FAIL"
        finish 125
    fi
    if ! load_driver; then
        echo "TEST guest/load-driver-$DRIVER FAIL"
        finish 125
    fi
    cd /root
    sh /opt/run/cmd.sh
    rc=$?
    finish $rc
} >"$OUT" 2>&1
