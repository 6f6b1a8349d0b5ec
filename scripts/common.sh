# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Shared definitions for the hns-roce-rs harness scripts: cache layout, pinned
# versions and small helpers. Sourced, never executed.

HNS_CACHE=${HNS_CACHE:-$HOME/.cache/hns-roce-rs}
HNS_TOP=${HNS_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
HNS_BUILD=${HNS_BUILD:-$HNS_TOP/build}

# Pinned pieces of the toolchain (see docs/toolchain.md).
KERNEL_SERIES=7.3
BINDGEN_VERSION=0.73.2
LIBCLANG_VERSION=18.1.1
# Guest userland comes from this Debian release.
GUEST_SUITE=trixie

# Guest/kernel architecture: x86_64 (default) or arm64 (cross-built with
# Debian's gcc-aarch64-linux-gnu, booted on qemu-system-aarch64 `virt`).
# `make ... ARCH=arm64` exports ARCH to the scripts.
HNS_ARCH=${HNS_ARCH:-${ARCH:-x86_64}}
case "$HNS_ARCH" in
x86_64 | x86 | amd64) HNS_ARCH=x86_64 HNS_CROSS="" ;;
arm64 | aarch64) HNS_ARCH=arm64 HNS_CROSS=aarch64-linux-gnu- ;;
*) printf '[hns] error: ARCH must be x86_64 or arm64 (got %s)\n' "$HNS_ARCH" >&2; exit 1 ;;
esac

# The kernel's minimum rustc (scripts/min-tool-version.sh: 1.85.0) builds the
# arm64 kernel and modules: bookworm's rustc-web 1.85.x, downloaded (not
# installed) and unpacked by setup.sh into $RUSTC_MIN_DIR, run through the
# wrappers in its bin/. x86_64 uses the rustc on PATH (rustup's, current).
RUST_MIN_SERIES=1.85
RUSTC_MIN_DIR=$HNS_CACHE/rustc-$RUST_MIN_SERIES
if [ "$HNS_ARCH" = arm64 ]; then
    HNS_RUSTC=$RUSTC_MIN_DIR/bin/rustc
else
    HNS_RUSTC=rustc
fi

APT_PRIV=$HNS_CACHE/apt
# The arm64 guest userland has its own private apt configuration (trixie
# only, APT::Architecture=arm64), so the amd64 one is left as it was.
APT_PRIV_ARM64=$HNS_CACHE/apt-arm64
TOOLS=$HNS_CACHE/tools
KSRC_ROOT=$HNS_CACHE/src
# Per-architecture kernel tree, guest userland and kernel-build lock; the
# x86_64 names are the historical ones.
# HNS_KASAN=1 (make check-kasan) and HNS_KCFI=1 (make check-kcfi), x86_64
# only: the hardened test kernel, one clang tree with KASAN and kCFI both
# (configs/kasan-x86_64.config + configs/kcfi-x86_64.config), a lock of its
# own, so neither it nor the normal tree ever reconfigures or rebuilds the
# other. Each target keeps its own module and run outputs.
HNS_KASAN=${HNS_KASAN:-0}
HNS_KCFI=${HNS_KCFI:-0}
# Extra config fragments merged after configs/qemu-$ARCH.config, and the C
# compiler of the kernel tree (empty: the kernel's default, gcc).
HNS_KFRAGS=""
HNS_KCC=""
if [ "$HNS_ARCH" = x86_64 ] && { [ "$HNS_KASAN" = 1 ] || [ "$HNS_KCFI" = 1 ]; }; then
    KOBJ=${KOBJ_HARD:-$HNS_CACHE/kbuild-x86_64-hard}
    GUEST_DEBS=$HNS_CACHE/guest-debs
    GUEST_ROOT=$HNS_CACHE/guest-root
    KBUILD_LOCK=$HNS_CACHE/kbuild-x86_64-hard.lock
    HNS_KFRAGS="$HNS_TOP/configs/kasan-x86_64.config $HNS_TOP/configs/kcfi-x86_64.config"
    HNS_KCC=${HNS_HARD_CC:-clang-19}
    # Modules, guest runs and results of this kernel (not build/guest).
    if [ "$HNS_KASAN" = 1 ]; then
        HNS_ABUILD=$HNS_BUILD/kasan
    else
        HNS_ABUILD=$HNS_BUILD/kcfi
    fi
    HNS_RUNS=$HNS_ABUILD
elif [ "$HNS_ARCH" = x86_64 ]; then
    KOBJ=${KOBJ:-$HNS_CACHE/kbuild-x86_64}
    GUEST_DEBS=$HNS_CACHE/guest-debs
    GUEST_ROOT=$HNS_CACHE/guest-root
    # A private tree (KOBJ=...) may have a lock of its own (KBUILD_LOCK=...).
    KBUILD_LOCK=${KBUILD_LOCK:-$HNS_CACHE/kbuild.lock}
    # Our build outputs (modules, guest runs) for this architecture.
    HNS_ABUILD=$HNS_BUILD
else
    # Not KOBJ: `make check` exports the x86_64 one.
    KOBJ=${KOBJ_ARM64:-$HNS_CACHE/kbuild-$HNS_ARCH}
    GUEST_DEBS=$HNS_CACHE/guest-debs-$HNS_ARCH
    GUEST_ROOT=$HNS_CACHE/guest-root-$HNS_ARCH
    KBUILD_LOCK=$HNS_CACHE/kbuild-$HNS_ARCH.lock
    HNS_ABUILD=$HNS_BUILD/$HNS_ARCH
fi

# Where guest runs (guest/NAME) and the fuzz/faults results go: build/
# except for the KASAN kernel.
HNS_RUNS=${HNS_RUNS:-$HNS_BUILD}

log() { printf '[hns] %s\n' "$*" >&2; }
die() { printf '[hns] error: %s\n' "$*" >&2; exit 1; }

# The Debian mirror the system is configured with: we reuse its URI for the
# private apt configuration rather than naming one here.
debian_mirror() {
    local uri
    uri=$(grep -hE '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '{print $2}' | grep -E '/debian/?$' | head -n1)
    if [ -z "$uri" ]; then
        uri=$(grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -E 's/\[[^]]*\]//' | awk '{print $2}' | grep -E '/debian/?$' | head -n1)
    fi
    [ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list*; cannot fetch ${GUEST_SUITE} packages"
    printf '%s\n' "${uri%/}"
}

# apt-get/apt-cache with the private configuration (own sources and lists,
# empty dpkg status), so nothing from other suites touches the system.
# PAPT_DIR / PAPT_ARCH select the configuration (default: the amd64 one).
papt_opts() {
    local d=${PAPT_DIR:-$APT_PRIV} a=${PAPT_ARCH:-amd64}
    printf '%s\n' \
        -o "Dir::Etc::SourceList=$d/sources.list" \
        -o "Dir::Etc::SourceParts=$d/sources.list.d" \
        -o "Dir::Etc::Preferences=$d/preferences" \
        -o "Dir::Etc::PreferencesParts=$d/preferences.d" \
        -o "Dir::State::Lists=$d/lists" \
        -o "Dir::State::status=$d/status" \
        -o "Dir::Cache=$d/cache" \
        -o "APT::Architecture=$a" \
        -o "APT::Architectures::=$a" \
        -o "Debug::NoLocking=1" \
        -o "APT::Sandbox::User=root"
}
papt_get() { local o; mapfile -t o < <(papt_opts); apt-get "${o[@]}" "$@"; }
papt_cache() { local o; mapfile -t o < <(papt_opts); apt-cache "${o[@]}" "$@"; }
# The same for the arm64 guest userland.
papt_get_arm64() { PAPT_DIR=$APT_PRIV_ARM64 PAPT_ARCH=arm64 papt_get "$@"; }
papt_cache_arm64() { PAPT_DIR=$APT_PRIV_ARM64 PAPT_ARCH=arm64 papt_cache "$@"; }

# Newest version of package $1 in the private lists whose version matches the
# extended regex $2 (empty: any).
papt_newest() {
    local pkg=$1 re=${2:-.} best="" v
    while read -r v; do
        [ -n "$v" ] || continue
        if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
    done < <(papt_cache madison "$pkg" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | grep -E "$re" || true)
    printf '%s\n' "$best"
}

# Where the unpacked kernel source lives (set by setup.sh).
# sim_no_stale_eqc TEST LOG: "TEST <TEST> PASS|FAIL" from the done lines of
# an hns-sim.log: every function must report 0 stale EQ contexts (an EQ
# context created again while live: its driver freed the EQ's pages
# without DESTROY_*EQC; sim/src/fw.rs).
sim_no_stale_eqc() {
    local dl
    dl=$(grep -h '^hns-sim\[[0-9]*\]: done:' "$2" 2>/dev/null)
    if [ -z "$dl" ]; then
        echo "TEST $1 FAIL no done line in $2"
    elif printf '%s\n' "$dl" | grep -qv ', 0 stale EQ contexts'; then
        echo "TEST $1 FAIL $(printf '%s\n' "$dl" | grep -v ', 0 stale EQ contexts' | head -n 2 | tr '\n' ' ')"
        grep -h 'stale EQ context:' "${2%/*}"/trace-*.txt 2>/dev/null | head -n 5 | sed 's/^/    /'
    else
        echo "TEST $1 PASS"
    fi
}

kernel_src() {
    local f=$HNS_CACHE/kernel-src.path
    [ -f "$f" ] || die "kernel source not set up; run 'make setup'"
    cat "$f"
}

# Environment for kernel and module builds: tools from the cache.
kbuild_env() {
    export PATH="$TOOLS/bin:$PATH"
    LIBCLANG_PATH=$(cat "$HNS_CACHE/libclang.path" 2>/dev/null || true)
    if [ "$HNS_ARCH" = arm64 ]; then
        RUST_LIB_SRC=$(cat "$RUSTC_MIN_DIR/rust-lib-src.path" 2>/dev/null || true)
    else
        RUST_LIB_SRC=$(cat "$HNS_CACHE/rust-lib-src.path" 2>/dev/null || true)
    fi
    export LIBCLANG_PATH RUST_LIB_SRC
}

# make arguments selecting the architecture (and, for arm64, the minimum
# rustc, also as the host rustc of the kernel's proc macros), for every
# kernel/module make.
kbuild_arch_args() {
    printf '%s\n' "ARCH=$HNS_ARCH"
    [ -z "$HNS_CROSS" ] || printf '%s\n' "CROSS_COMPILE=$HNS_CROSS"
    [ "$HNS_RUSTC" = rustc ] || printf '%s\n' "RUSTC=$HNS_RUSTC" "HOSTRUSTC=$HNS_RUSTC"
    [ -z "$HNS_KCC" ] || printf '%s\n' "CC=$HNS_KCC"
}
