#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Harness sanity check: rdma_rxe over a veth pair inside the guest proves the
# rdma-core userland works before any hns device exists. rxe0 (veth0) is the
# server side, rxe1 (veth1) the client side; GID index 0 is the link-local
# GID derived from each MAC.
. /opt/hns/lib.sh
IP=/usr/bin/ip

setup() {
    modprobe rdma_rxe || return 1
    $IP link add veth0 type veth peer name veth1 || return 1
    $IP link set veth0 up && $IP link set veth1 up || return 1
    rdma link add rxe0 type rxe netdev veth0 || return 1
    rdma link add rxe1 type rxe netdev veth1 || return 1
    # Wait for duplicate address detection to finish on both ends.
    i=0
    while [ $i -lt 50 ]; do
        if $IP -6 addr show dev veth0 scope link | grep -q 'inet6' &&
            $IP -6 addr show dev veth1 scope link | grep -q 'inet6' &&
            ! $IP -6 addr show tentative | grep -q inet6; then
            return 0
        fi
        sleep 0.2
        i=$((i + 1))
    done
    echo "no link-local addresses on the veth pair"
    return 1
}

if ! check rxe/setup setup; then
    plan_exit
fi

check rxe/ibv_devinfo sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE && ibv_devinfo -d rxe1 | grep -q PORT_ACTIVE'
pair rxe/ibv_rc_pingpong "ibv_rc_pingpong -d rxe0 -g 0 -p 18515 -n 100" \
    "ibv_rc_pingpong -d rxe1 -g 0 -p 18515 -n 100 127.0.0.1"
pair rxe/ibv_ud_pingpong "ibv_ud_pingpong -d rxe0 -g 0 -p 18516 -n 100" \
    "ibv_ud_pingpong -d rxe1 -g 0 -p 18516 -n 100 127.0.0.1"
pair rxe/ibv_srq_pingpong "ibv_srq_pingpong -d rxe0 -g 0 -p 18517 -n 100" \
    "ibv_srq_pingpong -d rxe1 -g 0 -p 18517 -n 100 127.0.0.1"
addr=$($IP -6 -o addr show dev veth0 scope link | awk '{print $4}' | cut -d/ -f1)
pair rxe/rping "rping -s -a $addr%veth0 -C 10" "rping -c -a $addr%veth1 -C 10 -v"

rdma link delete rxe1
rdma link delete rxe0
$IP link delete veth0
rmmod rdma_rxe
plan_exit
