#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Boot the test kernel in QEMU (TCG), load a driver, run a command in the
# guest and report. The command's output (second serial port) is printed on
# stdout; the full console log is kept in build/guest/<name>/console.log.
# Exit status: the command's, or 124 on timeout, 125 when the driver did not
# load, and 1 when the kernel log shows a WARN, BUG, Oops, lockdep splat or
# kmemleak report (the offending lines go to stderr).
#
# ARCH=arm64 (environment, as `make guest ARCH=arm64` exports it) boots the
# cross-built arm64 kernel on qemu-system-aarch64 `virt` (GICv3 + ITS for
# MSI-X): console on the PL011 (ttyAMA0), the command's output on a virtio
# console (hvc0), guest RAM at 0x4000_0000 (hns-sim --ram-base).
#
# Usage: run-guest.sh [--driver none|c|rs] [--sim N] [--cmd CMD | --cmd-file F]
#                     [--name NAME] [--timeout SECONDS] [--smp N]
set -euo pipefail
. "$(dirname "$0")/common.sh"

driver=rs sim=0 cmd="" cmd_file="" name="" timeout=${HNS_GUEST_TIMEOUT:-900} smp=1
while [ $# -gt 0 ]; do
    case "$1" in
    --driver) driver=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --cmd-file) cmd_file=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    *) die "run-guest.sh: unknown argument $1" ;;
    esac
done
case "$driver" in none | c | rs) ;; *) die "DRIVER must be none, c or rs (got '$driver')" ;; esac
[[ "$sim" =~ ^[0-9]+$ ]] || die "SIM must be a number (got '$sim')"
[ "$sim" -le 4 ] || die "SIM=$sim: at most 4 simulated devices"
# HNS_NIC: what stands on the NIC side of the simulated functions. "stub"
# (the default): hns_sim.ko, the stand-in ae_algo. "hclge": hns_sim.ko
# only relabels the functions and the upstream hns3, hclge and hclgevf
# modules bind them, hns-sim answering hclge's command queue (--set
# nic=hclge; docs/harness.md "NIC side"). hclge gives RoCE the vectors
# after the NIC's: hns-sim sets roce_base_vector to the NIC's vector count
# (unless HNS_SIM_ARGS sets it) and the function gets that many vectors
# plus the RoCE engine's.
nic=${HNS_NIC:-stub}
case "$nic" in stub | hclge) ;; *) die "HNS_NIC must be stub or hclge (got '$nic')" ;; esac
simopts=${HNS_SIM_ARGS:-}
[ "$nic" = stub ] || simopts="--set nic=$nic $simopts"
[ -n "$cmd_file" ] && cmd=$(cat "$cmd_file")
[ -n "$cmd" ] || cmd="ibv_devinfo"
if [ -z "$name" ]; then
    name=guest
    [ "$HNS_ARCH" = x86_64 ] || name=guest-$HNS_ARCH
fi

# One guest at a time per lane: later runs wait for the lane's lock. The
# default lane 1 is what everyone uses; `make check` runs its longest boot
# (pyverbs-c) in lane 2 beside the others (HNS_GUEST_LANE=2), so at most two
# guests share the two cores. Lanes 3 to 6 are for development beside a
# running make check or check-kasan, or beside each other (more guests than
# cores: expect slow boots). The initramfs staging directory of the cache
# (two builds at once fail with FileExistsError) has a lock of its own.
mkdir -p "$HNS_CACHE"
lane=${HNS_GUEST_LANE:-1}
[[ "$lane" =~ ^[1-6]$ ]] || die "HNS_GUEST_LANE must be 1 to 6 (got '$lane')"
if [ "$lane" = 1 ]; then
    exec 9>"$HNS_CACHE/guest.lock"
else
    exec 9>"$HNS_CACHE/guest-$lane.lock"
fi
flock 9

modules=${HNS_MODULE_DIR:-$HNS_ABUILD/module-kunit}
rundir=$HNS_RUNS/guest/$name
rm -rf "$rundir"
mkdir -p "$rundir/overlay/opt/run/modules"

# HNS_COVERAGE=1 (make coverage, docs/harness.md "Coverage"): a boot that
# would load the test build (build/module-kunit) loads the coverage build
# (build/module-cov: the same KUnit build with every basic block
# instrumented, and the collector hns_cov.ko, which /init loads first);
# /init dumps the collector's offsets on a third serial port at the end,
# kept as coverage.txt in the run's directory. Boots of other builds (the
# release module, the self-test variants) and arm64 boots are not measured.
cov=0
if [ "${HNS_COVERAGE:-0}" = 1 ]; then
    covdir=$HNS_ABUILD/module-cov
    if [ "$HNS_ARCH" != x86_64 ]; then
        log "coverage: $name is not measured (x86_64 only)"
    elif [ "$(realpath -m "$modules")" = "$(realpath -m "$HNS_ABUILD/module-kunit")" ]; then
        [ -f "$covdir/hns_roce_rs.ko" ] && [ -f "$covdir/hns_cov.ko" ] ||
            die "$covdir: coverage build missing: run 'make module-cov'"
        modules=$covdir
        cov=1
    else
        log "coverage: $name loads $modules, not the test build: not measured"
    fi
fi

base=$(flock "$HNS_CACHE/initramfs.lock" env HNS_ARCH="$HNS_ARCH" KOBJ="$KOBJ" python3 "$HNS_TOP/scripts/mkinitramfs.py")
if [ "$driver" = rs ] && [ ! -f "$modules/hns_roce_rs.ko" ]; then
    die "$modules/hns_roce_rs.ko missing: run 'make modules-kunit'"
fi
cp "$modules"/*.ko "$rundir/overlay/opt/run/modules/" 2>/dev/null || true
if [ "$sim" -gt 0 ]; then
    simko=$HNS_ABUILD/hns_sim/hns_sim.ko
    simbin=$HNS_BUILD/sim-target/release/hns-sim
    [ -f "$simko" ] && [ -x "$simbin" ] || die "hns-sim not built: run 'make sim'"
    cp "$simko" "$rundir/overlay/opt/run/modules/"
    # shellcheck disable=SC2086
    "$simbin" $simopts --dump-caps >"$rundir/overlay/opt/run/caps.txt" ||
        die "hns-sim rejected its arguments: $simopts"
    # Every other device's table too (a --personality list gives each
    # device its own: hip09,vf): caps-<i>.txt.
    for i in $(seq 1 $((sim - 1))); do
        # shellcheck disable=SC2086
        "$simbin" $simopts --dump-caps-device "$i" >"$rundir/overlay/opt/run/caps-$i.txt" ||
            die "hns-sim rejected its arguments: $simopts"
    done
fi
# MSI-X vectors per function: 8 (the stub's layout), or with hclge the
# RoCE base plus the RoCE engine's vectors, as the first device's caps say.
nvec=8
if [ "$sim" -gt 0 ] && [ "$nic" != stub ]; then
    nvec=0
    while IFS=' =' read -r key val; do
        case "$key" in
        roce_base_vector | num_other_vectors | num_aeq_vectors | num_ceqs) nvec=$((nvec + val)) ;;
        esac
    done <"$rundir/overlay/opt/run/caps.txt"
fi
# The kernel test modules (make ktest) go to /opt/run/ktest/ when built.
if compgen -G "$HNS_ABUILD/ktest/*.ko" >/dev/null; then
    mkdir -p "$rundir/overlay/opt/run/ktest"
    cp "$HNS_ABUILD"/ktest/*.ko "$rundir/overlay/opt/run/ktest/"
fi
# HNS_GUEST_EXTRA: a directory of files (benchmark programs and modules,
# make bench) copied to /opt/run/extra/ in the guest.
if [ -n "${HNS_GUEST_EXTRA:-}" ]; then
    [ -d "$HNS_GUEST_EXTRA" ] || die "HNS_GUEST_EXTRA=$HNS_GUEST_EXTRA is not a directory"
    mkdir -p "$rundir/overlay/opt/run/extra"
    cp -a "$HNS_GUEST_EXTRA"/. "$rundir/overlay/opt/run/extra/"
fi
printf '%s\n' "$cmd" >"$rundir/overlay/opt/run/cmd.sh"
# Where /init writes the command's output: the second 8250 on x86_64, the
# virtio console on arm64 (virt has a single PL011).
out_dev=/dev/ttyS1
[ "$HNS_ARCH" = arm64 ] && out_dev=/dev/hvc0
printf 'DRIVER=%s\nSIM=%s\nHNS_OUT=%s\n' "$driver" "$sim" "$out_dev" >"$rundir/overlay/opt/run/env"
[ "$nic" = stub ] || echo "NIC=$nic" >>"$rundir/overlay/opt/run/env"
[ "$cov" = 0 ] || echo HNS_COV=1 >>"$rundir/overlay/opt/run/env"
python3 "$HNS_TOP/scripts/mkinitramfs.py" --pack "$rundir/overlay" "$rundir/overlay.cpio.gz"
cat "$base" "$rundir/overlay.cpio.gz" >"$rundir/initrd.img"

if [ "$HNS_ARCH" = arm64 ]; then
    kernel=$KOBJ/arch/arm64/boot/Image
    qemu="qemu-system-aarch64"
    # pauth-impdef: QEMU's cheap pointer-auth algorithm (TCG speed).
    mtype=virt,gic-version=3
    cpu=(-cpu "max,pauth-impdef=on")
    ram_base=0x40000000
    console=ttyAMA0
    outchan=(-device virtio-serial-device -chardev "file,id=hnsout,path=$rundir/output.raw"
        -device "virtconsole,chardev=hnsout")
else
    kernel=$KOBJ/vmlinux
    qemu="qemu-system-x86_64"
    mtype=pc
    cpu=(-accel tcg -cpu max)
    ram_base=0
    console=ttyS0,115200
    outchan=(-serial "file:$rundir/output.raw")
fi
covchan=()
[ "$cov" = 0 ] || covchan=(-serial "file:$rundir/coverage.raw")
[ -f "$kernel" ] || die "$kernel missing: run 'make kernel ARCH=$HNS_ARCH'"
: >"$rundir/console.log"
: >"$rundir/output.raw"

# The simulated devices: hns-sim serves one ivshmem-doorbell function per
# device and reads guest RAM through the shared memory-backend file.
mem=2G
machine=(-machine "$mtype" -m "$mem")
simdev=()
simpid=""
ramfile=""
cleanup() {
    [ -n "$simpid" ] && kill "$simpid" 2>/dev/null
    [ -n "$ramfile" ] && rm -f "$ramfile"
    return 0
}
trap cleanup EXIT
if [ "$sim" -gt 0 ]; then
    ramfile=/dev/shm/hns-guest-ram-$$
    truncate -s "$mem" "$ramfile"
    machine=(-machine "$mtype,memory-backend=ram" -m "$mem"
        -object "memory-backend-file,id=ram,size=$mem,mem-path=$ramfile,share=on")
    simargs=(--ram "$ramfile" --ram-base "$ram_base" --out "$rundir" --vectors "$nvec" --ready "$rundir/sim.ready")
    # HNS_SIM_PCI="SLOT.FN ...": the PCI address of each device (one per
    # --sim device, in order), e.g. "3.0 3.1 4.0" for two functions of
    # one slot (bonding: the RoCE drivers index bond members by PCI
    # function number) and a third device. A slot whose function 0 is
    # followed by others gets multifunction=on. Default: QEMU's choice,
    # each device function 0 of its own slot.
    # shellcheck disable=SC2206
    pcis=(${HNS_SIM_PCI:-})
    if [ ${#pcis[@]} -gt 0 ] && [ ${#pcis[@]} -ne "$sim" ]; then
        die "HNS_SIM_PCI='${HNS_SIM_PCI:-}' names ${#pcis[@]} addresses for $sim devices"
    fi
    # HNS_SIM_BRIDGE=1: the devices sit behind a pci-bridge, so that the
    # PCI core can reset a lone function by a secondary bus reset
    # (/sys/bus/pci/devices/FN/reset; on the root bus it has no reset
    # method for them). Default: on the root bus.
    bus=""
    if [ "${HNS_SIM_BRIDGE:-0}" = 1 ]; then
        simdev+=(-device "pci-bridge,id=hnsbr,chassis_nr=1")
        bus=",bus=hnsbr"
    fi
    for i in $(seq 0 $((sim - 1))); do
        simargs+=(--socket "$rundir/sim-$i.sock")
        addr=""
        if [ ${#pcis[@]} -gt 0 ]; then
            p=${pcis[$i]}
            [[ "$p" =~ ^([0-9a-f]{1,2})\.([0-7])$ ]] || die "HNS_SIM_PCI: '$p' is not SLOT.FN"
            addr=",addr=0x$p"
            if [ "${BASH_REMATCH[2]}" = 0 ] && [[ " ${pcis[*]} " =~ \ ${BASH_REMATCH[1]}\.[1-7]\  ]]; then
                addr+=",multifunction=on"
            fi
        fi
        simdev+=(-chardev "socket,path=$rundir/sim-$i.sock,id=iv$i"
            -device "ivshmem-doorbell,chardev=iv$i,vectors=$nvec$bus$addr")
    done
    # shellcheck disable=SC2206
    extra=($simopts)
    # hns-sim answers CMQ commands the guest waits 30 ms for: a niceness of
    # -5 keeps it ahead of builds on a loaded host (docs/harness.md, "Host
    # load"); without the privilege nice warns and runs it as it is.
    nice -n -5 "$simbin" "${simargs[@]}" "${extra[@]}" >"$rundir/hns-sim.log" 2>&1 &
    simpid=$!
    for _ in $(seq 1 100); do
        [ -f "$rundir/sim.ready" ] && break
        kill -0 "$simpid" 2>/dev/null || die "hns-sim failed to start: $(cat "$rundir/hns-sim.log")"
        sleep 0.05
    done
fi
# HNS_GUEST_GDB=PORT: QEMU's gdb stub on 127.0.0.1:PORT, the guest running
# (make call-count attaches to it; scripts/call-count.sh).
gdbstub=()
if [ -n "${HNS_GUEST_GDB:-}" ]; then
    [[ "$HNS_GUEST_GDB" =~ ^[0-9]+$ ]] || die "HNS_GUEST_GDB must be a port number (got '$HNS_GUEST_GDB')"
    gdbstub=(-gdb "tcp:127.0.0.1:$HNS_GUEST_GDB")
fi
start=$(date +%s)
set +e
timeout --foreground -k 5 "$timeout" "$qemu" \
    "${machine[@]}" "${cpu[@]}" -smp "$smp" "${simdev[@]}" "${gdbstub[@]}" \
    -display none -monitor none -no-reboot -nic none \
    -kernel "$kernel" -initrd "$rundir/initrd.img" \
    -append "console=$console panic=-1 rdinit=/init loglevel=7 printk.devkmsg=on" \
    -serial "file:$rundir/console.log" "${outchan[@]}" "${covchan[@]}" \
    </dev/null >"$rundir/qemu.log" 2>&1
qrc=$?
set -e
if [ -n "$simpid" ]; then
    # hns-sim ends when QEMU's sockets close; give it a moment to flush.
    for _ in $(seq 1 50); do
        kill -0 "$simpid" 2>/dev/null || break
        sleep 0.1
    done
    kill "$simpid" 2>/dev/null || true
    wait "$simpid" 2>/dev/null || true
    simpid=""
fi
elapsed=$(($(date +%s) - start))
tr -d '\r' <"$rundir/output.raw" >"$rundir/output.log"
if [ "$cov" = 1 ]; then
    # Only a complete dump counts (a boot that hung or panicked has none).
    tr -d '\r' <"$rundir/coverage.raw" |
        sed -n '/^HNS-COV-BEGIN$/,/^HNS-COV-END$/p' | sed '1d;$d' >"$rundir/coverage.part"
    if grep -q '^HNS-COV-END$' <(tr -d '\r' <"$rundir/coverage.raw"); then
        mv "$rundir/coverage.part" "$rundir/coverage.txt"
        # HNS_COVERAGE_OUT (scripts/coverage.sh): every boot's dump kept
        # apart, as a later boot of the same name replaces its directory.
        if [ -n "${HNS_COVERAGE_OUT:-}" ]; then
            mkdir -p "$HNS_COVERAGE_OUT/$name.$$"
            cp "$rundir/coverage.txt" "$HNS_COVERAGE_OUT/$name.$$/"
        fi
        log "coverage: $(grep -c '^text \|^init ' "$rundir/coverage.txt") blocks of hns_roce_rs in $name"
    else
        rm -f "$rundir/coverage.part"
        log "coverage: $name left no dump (it did not reach the end)"
    fi
fi

# The command's output, between the sentinels.
sed -n '/^HNS-GUEST-BEGIN$/,/^HNS-GUEST-END rc=/p' "$rundir/output.log" | sed '1d;/^HNS-GUEST-END rc=/d'
end=$(grep -a -m1 '^HNS-GUEST-END rc=' "$rundir/output.log" || true)
if [ -n "$end" ]; then
    rc=${end#HNS-GUEST-END rc=}
elif [ $qrc -eq 124 ]; then
    log "guest timed out after ${timeout}s (console: $rundir/console.log)"
    rc=124
else
    log "guest ended without reporting (qemu exit $qrc; console: $rundir/console.log)"
    tail -n 30 "$rundir/console.log" >&2
    rc=1
fi

# Kernel log problems fail the run whatever the command said.
bad='WARNING: |BUG: |Oops|Kernel panic|general protection fault|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|unreferenced object|suspected memory leak|KFENCE: |UBSAN: |Call Trace:'
# HNS_GUEST_KMEMLEAK_BY_PLAN=1: the plan reads kmemleak itself and fails on
# every object it cannot attribute (the fault plan, which must tell the
# RDMA core's known leak apart); only kmemleak's own console summary line
# is then left out of this check.
if [ "${HNS_GUEST_KMEMLEAK_BY_PLAN:-0}" = 1 ]; then
    bad=${bad/|suspected memory leak/}
fi
# HNS_GUEST_KNOWN="NAME ...": reports of the known faults NAME of code
# that is not ours (scripts/known-faults.py, docs/c-driver-findings.md)
# that the run cannot avoid are left out of this check and counted in
# known-faults.txt ("NAME COUNT DOC" lines, for make check's TEST lines);
# any other report still fails the run.
klog=$rundir/console.log
rm -f "$rundir/known-faults.txt"
if [ -n "${HNS_GUEST_KNOWN:-}" ]; then
    klog=$rundir/console.unknown.log
    # shellcheck disable=SC2086
    python3 "$HNS_TOP/scripts/known-faults.py" "$bad" "$rundir/console.log" "$klog" \
        "$rundir/known-faults.txt" $HNS_GUEST_KNOWN || die "scripts/known-faults.py failed"
    while read -r kn kc kd; do
        log "known fault $kn ($kd): $kc report(s) left out of the kernel-log check"
    done <"$rundir/known-faults.txt"
fi
if grep -aEq "$bad" "$klog"; then
    log "kernel log of $name shows problems:"
    grep -aEn -A12 "$bad" "$klog" | head -n 80 >&2
    echo "TEST guest/kernel-log-$name FAIL see $rundir/console.log"
    [ "$rc" -eq 0 ] && rc=1
fi
log "guest '$name' finished in ${elapsed}s with status $rc (logs: $rundir)"
exit "$rc"
