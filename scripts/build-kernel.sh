#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the pinned test kernel out of tree in $KOBJ: allnoconfig + the
# configs/qemu-$ARCH.config fragment, verified after olddefconfig, then an
# incremental vmlinux (x86_64) or Image (arm64, cross-built) + modules build
# and a modules_install into $KOBJ/modroot.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kbuild_env

KSRC=$(kernel_src)
FRAG=$HNS_TOP/configs/qemu-$HNS_ARCH.config
# The base fragment, then the variant's (HNS_KASAN=1 or HNS_KCFI=1: the
# KASAN and kCFI fragments, scripts/common.sh).
FRAGS=("$FRAG")
[ -z "$HNS_KFRAGS" ] || FRAGS+=($HNS_KFRAGS)
mapfile -t ARCH_ARGS < <(kbuild_arch_args)
if [ -n "$HNS_CROSS" ]; then
    command -v "${HNS_CROSS}gcc" >/dev/null || die "${HNS_CROSS}gcc missing: run 'make setup'"
fi
# x86_64 boots vmlinux (PVH), arm64 the Image.
case "$HNS_ARCH" in
arm64) KTARGET=Image ;;
*) KTARGET=vmlinux ;;
esac
JOBS=${JOBS:-$(nproc)}
mkdir -p "$KOBJ"

# The kernel build must not see the variables of the make that called us
# (`make module-variant CLIPPY=1` would otherwise rebuild the kernel's own
# Rust crates under clippy), and only one build may touch $KOBJ at a time.
unset MAKEFLAGS MFLAGS MAKELEVEL CLIPPY KRUSTFLAGS ARCH CROSS_COMPILE
exec 8>"$KBUILD_LOCK"
flock 8
kmake() { make -C "$KSRC" O="$KOBJ" "${ARCH_ARGS[@]}" -j"$JOBS" "$@"; }

# Every option the fragment sets must be in the final .config as written.
verify_config() {
    local bad=0 line opt val
    # A later fragment overrides an earlier one (as merge_config.sh
    # merges them), so the last word on each option is the one checked.
    local -A want=()
    local -a order=()
    while IFS= read -r line; do
        if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
            opt=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
        elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
            opt=${BASH_REMATCH[1]} val=
        else
            continue
        fi
        [ -n "${want[$opt]+set}" ] || order+=("$opt")
        want[$opt]=$val
    done < <(cat "${FRAGS[@]}")
    for opt in "${order[@]}"; do
        val=${want[$opt]}
        if [ -n "$val" ]; then
            if ! grep -qxF "$opt=$val" "$KOBJ/.config"; then
                log "config: $opt=$val requested, got: $(grep -E "^(# )?$opt[= ]" "$KOBJ/.config" || echo 'absent')"
                bad=1
            fi
        elif grep -qE "^$opt=[ym]" "$KOBJ/.config"; then
            log "config: $opt requested off, got: $(grep -E "^$opt=" "$KOBJ/.config")"
            bad=1
        fi
    done
    if [ $bad -ne 0 ]; then
        if ! grep -qx CONFIG_RUST=y "$KOBJ/.config"; then
            log "Rust is not available to the kernel build:"
            kmake rustavailable >&2 || true
        fi
        die "requested kernel options did not survive olddefconfig (see above)"
    fi
}

# The x86_64 id is as before (no cross compiler), so its tree is reused.
[ "$HNS_RUSTC" = rustc ] || [ -x "$HNS_RUSTC" ] || die "$HNS_RUSTC missing: run 'make setup'"
# A variant adds its fragments and compiler; the base trees' ids are unchanged.
want=$(cat "$FRAG" "$KSRC/Makefile" <("$HNS_RUSTC" --version) <(echo "$KSRC") \
    <([ -z "$HNS_CROSS" ] || "${HNS_CROSS}gcc" --version) \
    <([ -z "$HNS_KFRAGS" ] || cat $HNS_KFRAGS) <([ -z "$HNS_KCC" ] || "$HNS_KCC" --version) |
    sha256sum | cut -c1-16)
have=$(cat "$KOBJ/.hns-config-id" 2>/dev/null || true)
if [ "$want" != "$have" ] || [ ! -f "$KOBJ/.config" ]; then
    log "configuring kernel in $KOBJ"
    kmake -s allnoconfig >/dev/null
    KCONFIG_CONFIG=$KOBJ/.config "$KSRC/scripts/kconfig/merge_config.sh" -m -O "$KOBJ" "$KOBJ/.config" "${FRAGS[@]}" >/dev/null
    kmake -s olddefconfig >/dev/null
    verify_config
    echo "$want" >"$KOBJ/.hns-config-id"
fi

log "building kernel (incremental) in $KOBJ"
start=$(date +%s)
if ! kmake "$KTARGET" modules >"$KOBJ/build.log" 2>&1; then
    tail -n 60 "$KOBJ/build.log" >&2
    die "kernel build failed; full log: $KOBJ/build.log"
fi
rm -rf "$KOBJ/modroot"
kmake -s INSTALL_MOD_PATH="$KOBJ/modroot" modules_install >/dev/null
log "kernel ready ($(($(date +%s) - start)) s): $(cat "$KOBJ/include/config/kernel.release")"
