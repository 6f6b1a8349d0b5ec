#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Idempotent setup of everything the harness needs, all under $HNS_CACHE:
# host build packages (apt-get), the Linux 7.3 source and the matching Debian
# rust-src (private apt configuration, apt-get download + dpkg -x), bindgen-cli
# and libclang, and the trixie guest userland for x86_64 and arm64 (the arm64
# kernel is cross-built with bookworm's gcc-aarch64-linux-gnu and booted with
# qemu-system-aarch64). Each step leaves a stamp and is skipped when done.
set -euo pipefail
. "$(dirname "$0")/common.sh"

mkdir -p "$HNS_CACHE" "$TOOLS/bin"
# Steps remove and refill their directories: one setup at a time (every
# `make` target that needs the kernel runs setup, and runs overlap).
exec 6>"$HNS_CACHE/setup.lock"
flock 6

host_packages=(flex bison bc libelf-dev libssl-dev cpio qemu-system-x86 busybox-static
    xz-utils zstd dwarves python3 kmod file binutils gcc make rsync
    gcc-aarch64-linux-gnu qemu-system-arm)
# make check-kasan (HNS_KASAN=1): the KASAN kernel's C side needs clang
# (docs/harness.md "KASAN run").
if [ "${HNS_KASAN:-0}" = 1 ]; then
    host_packages+=("${HNS_HARD_CC:-clang-19}")
fi
# make check-kcfi (HNS_KCFI=1): -fsanitize=kcfi is clang's.
if [ "${HNS_KCFI:-0}" = 1 ]; then
    host_packages+=("${HNS_HARD_CC:-clang-19}")
fi
# make bench and make call-count (HNS_BENCH=1): the report's chart is drawn
# with Debian's matplotlib, run by Debian's own python3; call-count steps
# the guest with Debian's gdb (docs/benchmarks.md).
if [ "${HNS_BENCH:-0}" = 1 ]; then
    host_packages+=(python3-matplotlib gdb)
fi

step_host_packages() {
    local missing=() p
    for p in "${host_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing host packages: ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then die "need root to apt-get install: ${missing[*]}"; fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        die "apt-get install failed for: ${missing[*]}"
}

step_private_apt() {
    local stamp=$APT_PRIV/.updated mirror
    mkdir -p "$APT_PRIV/lists/partial" "$APT_PRIV/cache/archives/partial" \
        "$APT_PRIV/sources.list.d" "$APT_PRIV/preferences.d"
    touch "$APT_PRIV/status" "$APT_PRIV/preferences"
    # Refresh the lists once a day at most.
    if [ -f "$stamp" ] && [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then return 0; fi
    mirror=$(debian_mirror)
    local key=/usr/share/keyrings/debian-archive-keyring.gpg
    cat >"$APT_PRIV/sources.list" <<SRC
deb [signed-by=$key] $mirror trixie main
deb [signed-by=$key] $mirror trixie-backports main
deb [signed-by=$key] $mirror sid main
SRC
    log "private apt: updating lists (trixie, trixie-backports, sid)"
    papt_get update -qq >/dev/null 2>"$APT_PRIV/update.err" || {
        cat "$APT_PRIV/update.err" >&2
        die "private apt-get update failed"
    }
    touch "$stamp"
}

# The arm64 guest userland's private apt configuration: trixie only (the
# guest packages are resolved there anyway), arm64 lists.
step_private_apt_arm64() {
    local d=$APT_PRIV_ARM64 stamp=$APT_PRIV_ARM64/.updated mirror
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/sources.list.d" "$d/preferences.d"
    touch "$d/status" "$d/preferences"
    if [ -f "$stamp" ] && [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then return 0; fi
    mirror=$(debian_mirror)
    local key=/usr/share/keyrings/debian-archive-keyring.gpg
    echo "deb [arch=arm64 signed-by=$key] $mirror $GUEST_SUITE main" >"$d/sources.list"
    log "private apt (arm64): updating lists ($GUEST_SUITE)"
    papt_get_arm64 update -qq >/dev/null 2>"$d/update.err" || {
        cat "$d/update.err" >&2
        die "private apt-get update (arm64) failed"
    }
    touch "$stamp"
}

# Download package $1 at version $2 into $3 (a directory) unless present.
fetch_deb() {
    local pkg=$1 ver=$2 dir=$3
    mkdir -p "$dir"
    if ls "$dir/${pkg}_"*.deb >/dev/null 2>&1; then return 0; fi
    (cd "$dir" && papt_get download -qq "$pkg=$ver") || die "apt-get download $pkg=$ver failed"
}

step_kernel_source() {
    local ver
    ver=$(papt_newest "linux-source-$KERNEL_SERIES")
    if [ -z "$ver" ]; then
        die "no linux-source-$KERNEL_SERIES in trixie/trixie-backports/sid; found: $(papt_cache search '^linux-source-[0-9.]*$' 2>/dev/null | awk '{print $1}' | tr '\n' ' ')"
    fi
    local dest=$KSRC_ROOT/$ver
    if [ -f "$dest/.unpacked" ]; then
        echo "$dest/linux" >"$HNS_CACHE/kernel-src.path"
        return 0
    fi
    log "fetching linux-source-$KERNEL_SERIES $ver"
    local dl=$HNS_CACHE/debs/linux-source
    rm -rf "$dl" "$dest"
    fetch_deb "linux-source-$KERNEL_SERIES" "$ver" "$dl"
    mkdir -p "$dest/x"
    dpkg -x "$dl"/*.deb "$dest/x"
    local tarball
    tarball=$(ls "$dest/x/usr/src/linux-source-$KERNEL_SERIES".tar.* 2>/dev/null | head -n1)
    [ -n "$tarball" ] || die "linux-source deb has no tarball"
    log "unpacking $(basename "$tarball")"
    tar -C "$dest" -xf "$tarball"
    mv "$dest/linux-source-$KERNEL_SERIES" "$dest/linux"
    rm -rf "$dest/x" "$dl"
    touch "$dest/.unpacked"
    echo "$dest/linux" >"$HNS_CACHE/kernel-src.path"
}

step_rust_src() {
    local rv ver
    rv=$(rustc --version | awk '{print $2}')
    ver=$(papt_newest rust-src "^${rv//./\\.}[+~-]")
    if [ -z "$ver" ]; then
        die "no Debian rust-src for rustc $rv; available: $(papt_cache madison rust-src | awk -F'|' '{gsub(/ /,"",$2); printf "%s ", $2}')"
    fi
    local dest=$HNS_CACHE/rust-src/$ver
    if [ ! -f "$dest/.unpacked" ]; then
        log "fetching rust-src $ver"
        local dl=$HNS_CACHE/debs/rust-src
        rm -rf "$dl" "$dest"
        fetch_deb rust-src "$ver" "$dl"
        mkdir -p "$dest"
        dpkg -x "$dl"/*.deb "$dest"
        rm -rf "$dl"
        touch "$dest/.unpacked"
    fi
    local lib
    lib=$(ls -d "$dest"/usr/src/rustc-*/library 2>/dev/null | head -n1)
    [ -n "$lib" ] || die "rust-src $ver has no library/ directory"
    echo "$lib" >"$HNS_CACHE/rust-lib-src.path"
}

# The kernel's minimum rustc for the arm64 build: bookworm's rustc-web
# $RUST_MIN_SERIES.x with its std, LLVM, source and clippy, from the system's apt
# sources (bookworm), `apt-get download` + `dpkg -x` into $RUSTC_MIN_DIR.
step_rustc_min() {
    local d=$RUSTC_MIN_DIR ver v best="" re="^${RUST_MIN_SERIES//./\\.}\\."
    while read -r v; do
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
    done < <(apt-cache madison rustc-web 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -E "$re" || true)
    ver=$best
    if [ -z "$ver" ]; then
        apt-get update -qq || die "apt-get update failed"
        ver=$(apt-cache madison rustc-web | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -E "$re" | sort -V | tail -n1 || true)
    fi
    [ -n "$ver" ] || die "no rustc-web $RUST_MIN_SERIES.x in the system's apt sources; found: $(apt-cache madison rustc-web | awk -F'|' '{print $2}' | tr -d ' ' | tr '\n' ' ')"
    if [ "$(cat "$d/.id" 2>/dev/null)" = "$ver+clippy" ] && [ -x "$d/bin/rustc" ]; then return 0; fi
    log "fetching rustc-web $ver (the kernel's minimum rustc, for arm64)"
    rm -rf "$d"
    mkdir -p "$d/debs" "$d/root" "$d/bin"
    (cd "$d/debs" && apt-get -o APT::Sandbox::User=root download -qq "rustc-web=$ver" \
        "libstd-rust-web-$RUST_MIN_SERIES=$ver" "libstd-rust-web-dev=$ver" "rust-web-src=$ver" \
        "rust-web-clippy=$ver") ||
        die "apt-get download of rustc-web $ver failed"
    # Its LLVM, as rustc-web's std library package depends on it.
    local llvm
    llvm=$(apt-cache show "libstd-rust-web-$RUST_MIN_SERIES=$ver" | sed -n 's/^Depends: //p' | tr ',' '\n' |
        grep -oE 'libllvm[0-9]+' | head -n1)
    [ -n "$llvm" ] || die "cannot tell which libllvm rustc-web $ver needs"
    (cd "$d/debs" && apt-get -o APT::Sandbox::User=root download -qq "$llvm") || die "apt-get download $llvm failed"
    local f
    for f in "$d"/debs/*.deb; do dpkg -x "$f" "$d/root"; done
    rm -rf "$d/debs"
    local w
    for w in rustc rustdoc clippy-driver; do
        # shellcheck disable=SC2016 # $LD_LIBRARY_PATH is the wrapper's, at run time
        printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
            "$d/root/usr/lib/x86_64-linux-gnu" "$d/root/usr/bin/$w" >"$d/bin/$w"
        chmod +x "$d/bin/$w"
    done
    "$d/bin/rustc" --version >/dev/null || die "the unpacked rustc-web $ver does not run"
    local lib
    lib=$(find "$d/root/usr/src" -maxdepth 3 -type d -name library -path '*/rustc-*' | head -n1)
    [ -n "$lib" ] || die "rust-web-src $ver has no library/ directory"
    echo "$lib" >"$d/rust-lib-src.path"
    echo "$ver+clippy" >"$d/.id"
}

step_bindgen() {
    if "$TOOLS/bin/bindgen" --version 2>/dev/null | grep -q " $BINDGEN_VERSION\$"; then return 0; fi
    log "cargo install bindgen-cli $BINDGEN_VERSION"
    cargo install --locked --quiet --root "$TOOLS" bindgen-cli --version "=$BINDGEN_VERSION" ||
        die "cargo install bindgen-cli $BINDGEN_VERSION failed"
}

step_libclang() {
    local dest=$TOOLS/libclang-$LIBCLANG_VERSION so
    so=$(find "$dest" -name 'libclang*.so*' 2>/dev/null | head -n1 || true)
    if [ -z "$so" ]; then
        log "pip: libclang==$LIBCLANG_VERSION"
        rm -rf "$dest"
        python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
            --target "$dest" "libclang==$LIBCLANG_VERSION" || die "pip install libclang==$LIBCLANG_VERSION failed"
        so=$(find "$dest" -name 'libclang*.so*' | head -n1)
        [ -n "$so" ] || die "libclang wheel has no shared library"
    fi
    dirname "$so" >"$HNS_CACHE/libclang.path"
}

# Guest userland: the trixie rdma-core tools, pyverbs and their dependency
# closure, downloaded (not installed) and unpacked into $GUEST_ROOT.
guest_packages=(busybox-static libibverbs1 ibverbs-providers ibverbs-utils librdmacm1t64
    rdmacm-utils perftest libibumad3 python3-pyverbs python3.13 python3.13-minimal
    iproute2 libgcc-s1 kmod nvme-cli)

# step_guest_debs [arm64]: the x86_64 userland into guest-root (amd64 apt
# configuration), or the arm64 one into guest-root-arm64.
step_guest_debs() {
    local arch=${1:-x86_64} id debs root get=papt_get cache=papt_cache
    if [ "$arch" = arm64 ]; then
        debs=$HNS_CACHE/guest-debs-arm64 root=$HNS_CACHE/guest-root-arm64
        get=papt_get_arm64 cache=papt_cache_arm64
        id=$(printf '%s\n' "$GUEST_SUITE" arm64 "${guest_packages[@]}" | sha256sum | cut -c1-16)
    else
        debs=$HNS_CACHE/guest-debs root=$HNS_CACHE/guest-root
        id=$(printf '%s\n' "$GUEST_SUITE" "${guest_packages[@]}" | sha256sum | cut -c1-16)
    fi
    if [ "$(cat "$root/.id" 2>/dev/null)" = "$id" ]; then return 0; fi
    log "guest userland ($arch): resolving $GUEST_SUITE closure of ${#guest_packages[@]} packages"
    local list
    list=$($cache -o "APT::Default-Release=$GUEST_SUITE" depends --recurse --no-recommends \
        --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "${guest_packages[@]}" |
        grep -E '^[a-z0-9]' | sort -u) || die "cannot resolve guest packages: ${guest_packages[*]}"
    rm -rf "$debs" "$root"
    mkdir -p "$debs" "$root"
    log "guest userland ($arch): downloading $(echo "$list" | wc -l) packages"
    # shellcheck disable=SC2086
    (cd "$debs" && $get -o "APT::Default-Release=$GUEST_SUITE" download -qq $list) ||
        die "downloading the $arch guest packages failed"
    local d
    for d in "$debs"/*.deb; do dpkg -x "$d" "$root"; done
    echo "$id" >"$root/.id"
}

# make bench's extra guest programs (HNS_BENCH=1; scripts/bench-build.sh):
# trixie's libibverbs-dev at the version of the guest's libibverbs1, only
# its headers and the .so link are used, unpacked into $HNS_CACHE/bench-dev.
# Not a guest package (the guest userland's id stays as it is).
step_bench_dev() {
    local dest=$HNS_CACHE/bench-dev deb ver debs
    debs=("$GUEST_DEBS"/libibverbs1_*.deb)
    deb=${debs[0]}
    [ -f "$deb" ] || die "no libibverbs1 deb in $GUEST_DEBS (guest userland not set up)"
    ver=$(dpkg-deb -f "$deb" Version) || die "cannot read the version of $deb"
    if [ "$(cat "$dest/.id" 2>/dev/null)" = "$ver" ] && [ -f "$dest/usr/include/infiniband/verbs.h" ]; then
        return 0
    fi
    log "bench: fetching libibverbs-dev $ver (headers for the guest's libibverbs1)"
    local dl=$HNS_CACHE/debs/bench-dev
    rm -rf "$dl" "$dest"
    fetch_deb libibverbs-dev "$ver" "$dl"
    mkdir -p "$dest"
    dpkg -x "$dl"/libibverbs-dev_*.deb "$dest"
    rm -rf "$dl"
    [ -f "$dest/usr/include/infiniband/verbs.h" ] || die "libibverbs-dev $ver has no infiniband/verbs.h"
    echo "$ver" >"$dest/.id"
}

step_host_packages
step_private_apt
step_guest_debs
if [ "${HNS_BENCH:-0}" = 1 ]; then step_bench_dev; fi
step_private_apt_arm64
step_guest_debs arm64
step_kernel_source
step_rust_src
step_rustc_min
step_libclang
step_bindgen
log "setup complete: kernel $(kernel_src), rust-src $(cat "$HNS_CACHE/rust-lib-src.path")"
