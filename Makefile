# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# hns-roce-rs: top-level entry points. The module itself is described by
# Kbuild; this Makefile drives setup, the pinned test kernel, module builds,
# host tests, the QEMU guest and the checks. Everything downloaded or built
# for the harness lives in $(HNS_CACHE); build outputs of this tree in build/.
#
#   make check          every test (= .ci/run): host tests, builds, style, the QEMU boots
#                       of both drivers compared; ends with "N passed, N failed"
#   make demo           build, boot, load hns_roce_rs on hns-sim and show it working
#   make guest DRIVER=none|c|rs SIM=0 CMD='...'   run CMD in a QEMU guest
#   make help           this list
#
#   Builds:
#   make setup          fetch the toolchain, kernel source and guest userland into $(HNS_CACHE)
#   make kernel         the pinned 7.3 test kernel (incremental)
#   make modules [KDIR=/path/to/prepared/kernel]  the release module, build/module/hns_roce_rs.ko
#   make modules-kunit  the test build (KUnit suites run at insmod)
#   make module-cov     the test build with basic-block coverage and its collector, build/module-cov/
#   make module-variant VARIANT=name HNS_CFG='cfg ...'  a test build with extra cfgs
#   make clippy         clippy with the kernel's lint set (module, glue, hns-sim),
#                       and every constant defined once (scripts/const-once.py),
#                       no static state outside the module object (scripts/no-static.py)
#   make fmt | fmt-check   rustfmt the Rust sources, or check them
#   make sim | sim-test    hns-sim and hns_sim.ko; hns-sim's unit tests
#   make host-test      the core-only code's tests on the host (cargo test), coverage-report's self-test
#   make initramfs      the guest's base initramfs
#   make intree-patch [KSRC=/path/to/linux-7.3] [PATCH_OUT=file]  the in-tree patch
#   make intree-build   that patch applied to the cached source and built by Kbuild
#   make ktest-kmod     the kernel test modules of tests/ktest/ and the loopback
#                       provider tests/loopback/ (rdma_lo.ko), build/ktest/*.ko
#   make kernel|modules|sim|guest ARCH=arm64      the same, cross-built for arm64
#   make clean          remove build/
#
#   One part of make check on its own:
#   make faults         fault sweep on both drivers, build/faults/report.md
#   make fuzz           uverbs fuzzer on both drivers, errno tables compared, build/fuzz/
#   make coverage       what make check (COVERAGE_RUN=check|fuzz|kpath) reaches of the
#                       driver, by function and line, build/coverage/report.md
#
#   Longer runs, not part of make check:
#   make stress         object churn and traffic on 2 vCPUs, both drivers, build/stress/
#   make check-kasan    fuzzer and fault sweep on a KASAN kernel, build/kasan/
#   make check-kcfi     Rust's indirect-call paths on a kCFI (CONFIG_CFI) kernel, build/kcfi/
#   make bench          Rust against C, alternating in one boot, build/bench/report.md
#   make bench-kmod     the kernel hot-path benchmark module
#   make call-count     instructions per kverbs call, C against Rust, build/callcount/
#   make call-lines KIND=post_send_16   one traced Rust call of call-count by source line
#   make call-stack     stack-slot accesses of call-count's traced calls
#   make kprof WHAT=unload|load   CPU of rmmod/insmod by kernel function, build/kprof/
#   make size-attr      where the module's .text goes, build/size/attr.txt
#   make size-floor     the module's .text without messages and at -Os, build/size/floor.md

HNS_CACHE ?= $(HOME)/.cache/hns-roce-rs
export HNS_CACHE
# ARCH=x86_64 or arm64 (default: the host's): the test kernel, modules and
# guest are per architecture. On an x86_64 host arm64 is cross-built
# (CROSS_COMPILE=aarch64-linux-gnu-, Debian's gcc-aarch64-linux-gnu) into
# its own kernel tree and build/arm64/; on an arm64 host it is native.
HOST_ARCH := $(patsubst aarch64,arm64,$(shell uname -m))
ARCH ?= $(HOST_ARCH)
ifneq ($(filter arm64 aarch64,$(ARCH)),)
override ARCH := arm64
KOBJ_DEFAULT := $(HNS_CACHE)/kbuild-arm64
KLOCKFILE := $(HNS_CACHE)/kbuild-arm64.lock
ifeq ($(HOST_ARCH),arm64)
CROSS_COMPILE ?=
KRUSTC :=
else
ifneq ($(origin CROSS_COMPILE),command line)
CROSS_COMPILE := aarch64-linux-gnu-
endif
# The cached arm64 test kernel is cross-built with the kernel's minimum
# rustc (1.85, bookworm's rustc-web, fetched by setup into the cache), also
# as the proc-macro host compiler; `make clippy ARCH=arm64` uses its
# clippy-driver. A KDIR of the user's own takes the rustc on PATH.
KRUSTC = $(if $(KDIR_DEP),RUSTC=$(HNS_CACHE)/rustc-1.85/bin/rustc \
	HOSTRUSTC=$(HNS_CACHE)/rustc-1.85/bin/rustc \
	CLIPPY_DRIVER=$(HNS_CACHE)/rustc-1.85/bin/clippy-driver)
endif
BUILD := $(CURDIR)/build/arm64
else ifneq ($(filter x86_64 x86 amd64,$(ARCH)),)
override ARCH := x86_64
ifneq ($(origin CROSS_COMPILE),command line)
CROSS_COMPILE :=
endif
KOBJ_DEFAULT := $(HNS_CACHE)/kbuild-x86_64
KLOCKFILE := $(HNS_CACHE)/kbuild.lock
KRUSTC :=
BUILD := $(CURDIR)/build
else
$(error ARCH must be x86_64 or arm64, not $(ARCH))
endif
# The kernel tree of ARCH; KOBJ=... on the command line overrides it (an
# inherited KOBJ, e.g. the x86_64 one `make check` exports, does not).
ifneq ($(origin KOBJ),command line)
KOBJ := $(KOBJ_DEFAULT)
endif
export ARCH CROSS_COMPILE KOBJ
# scripts/common.sh takes the arm64 tree from KOBJ_ARM64 (KOBJ may be an
# inherited x86_64 one there).
ifeq ($(ARCH),arm64)
export KOBJ_ARM64 := $(KOBJ)
endif
# Host-side outputs (hns-sim, cargo targets) are the same for every ARCH.
HBUILD := $(CURDIR)/build

# KDIR: the kernel tree to build the module against. Default: the cached
# test kernel (built on demand). Any other prepared Rust-enabled tree works.
ifeq ($(origin KDIR),undefined)
KDIR := $(KOBJ)
KDIR_DEP := kernel
else
KDIR_DEP :=
endif

# bindgen and libclang from the cache when setup has run, else from the system.
TOOLS_ENV = PATH="$(HNS_CACHE)/tools/bin:$$PATH" \
	LIBCLANG_PATH="$${LIBCLANG_PATH:-$$(cat $(HNS_CACHE)/libclang.path 2>/dev/null)}"
# Builds against the test kernel take $(HNS_CACHE)/kbuild.lock (arm64:
# kbuild-arm64.lock), as the kernel build does (scripts/build-kernel.sh): one
# at a time per kernel tree. A KDIR of the user's own needs no lock (and no
# cache). ARCH/CROSS_COMPILE reach every kernel make.
ifeq ($(KDIR_DEP),kernel)
KLOCK = flock $(KLOCKFILE) env
else
KLOCK = env
endif
# KCC: the C compiler of the kernel tree when it is not the default (the
# KASAN tree of `make check-kasan` is built with clang).
KCC ?=
KARCH = ARCH=$(ARCH) $(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE)) $(KRUSTC) $(if $(KCC),CC=$(KCC))
KMAKE = $(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)

# Guest test plan knobs (see `make guest`).
DRIVER ?= rs
SIM ?= 0
CMD ?=

RS_SOURCES = $(shell git ls-files --cached --others --exclude-standard '*.rs' 2>/dev/null || find . -name '*.rs' -not -path './build/*' -not -path '*/target/*')

.PHONY: all setup kernel modules modules-kunit module-cov coverage module-variant sim sim-test clippy fmt fmt-check host-test \
	initramfs guest check check-kasan check-kcfi demo bench bench-kmod ktest-kmod call-count call-lines call-stack size-attr size-floor kprof faults fuzz stress clean help intree-patch intree-build

all: modules

help:
	@sed -n '3,/^$$/p' Makefile

setup:
	@bash scripts/setup.sh

kernel: setup
	@bash scripts/build-kernel.sh

# A KDIR of the user's own: the tree must be a Rust-enabled build tree and
# bindgen must be found, else say what to do before Kbuild fails obscurely.
KDIR_CHECK = $(if $(KDIR_DEP),,@$(TOOLS_ENV) sh -c '\
	grep -qs "^CONFIG_RUST=y" "$(KDIR)/.config" || { \
	echo "error: $(KDIR) is not a kernel build tree with CONFIG_RUST=y (docs/deploy.md)" >&2; exit 1; }; \
	command -v bindgen >/dev/null || { \
	echo "error: bindgen not found: run make setup, or install bindgen-cli 0.73.2 and libclang (docs/deploy.md)" >&2; exit 1; }')

# Release build of the module (no KUnit suites).
modules: $(KDIR_DEP)
	$(KDIR_CHECK)
	@mkdir -p $(BUILD)/module
	$(KMAKE) MO=$(BUILD)/module modules

# Test build: KUnit suites compiled in, run by the KUnit core at insmod.
modules-kunit: $(KDIR_DEP)
	@mkdir -p $(BUILD)/module-kunit
	$(KMAKE) MO=$(BUILD)/module-kunit HNS_KUNIT=y modules

# A named test-build variant with extra cfgs (used by the harness self-test):
#   make module-variant VARIANT=name HNS_CFG='cfg1 cfg2'
module-variant: $(KDIR_DEP)
	@mkdir -p $(BUILD)/module-$(VARIANT)
	$(KMAKE) MO=$(BUILD)/module-$(VARIANT) HNS_KUNIT=y HNS_CFG="$(HNS_CFG)" modules

# Coverage build (docs/harness.md "Coverage"): the KUnit test build with
# every basic block instrumented (Kbuild HNS_COV_BUILD; not HNS_COVERAGE,
# which make coverage exports to its boots, so the other module builds of
# its make check run would see it) and line tables, plus the collector
# module tests/cov/hns_cov.ko, in $(BUILD)/module-cov.
module-cov: $(KDIR_DEP)
	@mkdir -p $(BUILD)/module-cov $(BUILD)/cov-kmod
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/tests/cov MO=$(BUILD)/cov-kmod modules
	$(KMAKE) MO=$(BUILD)/module-cov HNS_KUNIT=y HNS_COV_BUILD=1 \
		KBUILD_EXTRA_SYMBOLS=$(BUILD)/cov-kmod/Module.symvers modules
	cp $(BUILD)/cov-kmod/hns_cov.ko $(BUILD)/module-cov/

# clippy with the kernel's lint set (module and guest glue) and cargo clippy
# for hns-sim; any warning fails the build. First, as cheap as it is, the
# driver's constants: one definition each.
clippy: $(KDIR_DEP)
	python3 scripts/const-once.py --quiet
	python3 scripts/no-static.py --quiet
	python3 scripts/shim-review.py
	@mkdir -p $(BUILD)/module-clippy $(BUILD)/hns_sim-clippy
	$(KMAKE) MO=$(BUILD)/module-clippy HNS_KUNIT=y CLIPPY=1 KRUSTFLAGS=-Dwarnings modules
	@mkdir -p $(BUILD)/loopback-clippy
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/tests/loopback MO=$(BUILD)/loopback-clippy CLIPPY=1 KRUSTFLAGS=-Dwarnings modules
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/sim/guest MO=$(BUILD)/hns_sim-clippy CLIPPY=1 KRUSTFLAGS=-Dwarnings modules
	cd sim && CARGO_TARGET_DIR=$(HBUILD)/sim-target cargo clippy --quiet --all-targets -- -D warnings

# The hns-sim device model (host) and its guest glue module (for ARCH).
sim: $(KDIR_DEP)
	cd sim && CARGO_TARGET_DIR=$(HBUILD)/sim-target cargo build --release --quiet
	@mkdir -p $(BUILD)/hns_sim
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/sim/guest MO=$(BUILD)/hns_sim modules

sim-test:
	cd sim && CARGO_TARGET_DIR=$(HBUILD)/sim-target cargo test --quiet

fmt:
	rustfmt --config-path .rustfmt.toml $(RS_SOURCES)

fmt-check:
	rustfmt --check --config-path .rustfmt.toml $(RS_SOURCES)

host-test: setup
	cd tests/host && HNS_KSRC="$$(cat $(HNS_CACHE)/kernel-src.path)" cargo test
	python3 scripts/coverage-report.py --selftest

initramfs: kernel
	@python3 scripts/mkinitramfs.py

# CMD reaches the script through the environment (command-line variables are
# exported), so quotes and newlines survive; write a literal $ as $$.
# GNU make exits 2 whenever a recipe fails: the guest's exact status is
# printed on the last line (scripts/run-guest.sh returns it as is).
guest: modules-kunit kernel $(if $(filter-out 0,$(SIM)),sim)
	@bash scripts/run-guest.sh --driver "$(DRIVER)" --sim "$(SIM)" --cmd "$$CMD"

check:
	@bash scripts/check.sh

# The fuzzer and the fault sweep on both drivers on a KASAN test kernel of
# its own (not part of `make check`, see docs/harness.md).
check-kasan:
	@bash scripts/check-kasan.sh

# Plans through the ops the RDMA core, the hnae3 core and the netdev
# notifier chain call indirectly, on Rust, on a kCFI test kernel of its own
# (not part of `make check`, see docs/harness.md "kCFI run").
check-kcfi:
	@bash scripts/check-kcfi.sh

# In-tree route: a patch adding the driver as drivers/infiniband/hw/hns_rs
# (INFINIBAND_HNS_RS) to a 7.3 tree (default: the cached source), written to
# PATCH_OUT (default build/intree/hns_rs.patch); intree-build applies it to a
# copy of the cached source and builds the module through Kbuild (x86_64).
KSRC ?=
PATCH_OUT ?=
intree-patch:
	@bash scripts/intree-patch.sh "$(KSRC)" "$(PATCH_OUT)"

intree-build: kernel
	@bash scripts/intree-build.sh

demo:
	@bash scripts/demo.sh

# Both drivers alternating in one boot (ROUNDS rounds of C, Rust, C): the
# verbs control path, the kernel post/poll cost, probe/remove, perftest,
# NVMe over RDMA random reads, the completion interrupt, module size;
# build/bench/report.md (+ .svg, .png), docs/benchmarks.md.
# `make bench ROUNDS=3 BENCH_PARTS=ceq`: the completion interrupt alone.
ROUNDS ?= 5
bench: modules kernel sim bench-kmod
	@bash scripts/bench.sh $(ROUNDS)

# The instructions of post_send and post_recv of 1 and 16 WRs and of
# poll_cq of 0 and 16 CQEs in each driver, single-stepped through QEMU's
# gdb stub (docs/benchmarks.md); build/callcount/report.md.
call-count: modules kernel sim bench-kmod
	@bash scripts/call-count.sh $(SAMPLES)

# Where the module's .text goes (docs/benchmarks.md): the crate
# built again with debug info (the same .text as the release build, which
# is checked) and its instructions given to their inline chains by
# scripts/size-attr.py. FUNC=text: also the bytes, by source line and by
# inlined function, of the symbols whose name contains the text. Not part
# of `make check`.
size-attr: modules
	@mkdir -p $(BUILD)/module-dbg $(BUILD)/size
	$(KMAKE) MO=$(BUILD)/module-dbg KRUSTFLAGS=-Cdebuginfo=1 modules
	python3 scripts/size-attr.py --release $(BUILD)/module $(BUILD)/module-dbg/hns_roce_main.o \
		$(CURDIR) >$(BUILD)/size/attr.txt
	@echo "size-attr: $(BUILD)/size/attr.txt"
	$(if $(FUNC),python3 scripts/size-attr.py --func '$(FUNC)' $(BUILD)/module-dbg/hns_roce_main.o $(CURDIR))

# How far the module's .text is from 1.3x the C module's whatever the
# source's messages and the compiler's settings
# (docs/benchmarks.md): the same source built three more times, each step
# on top of the one before: every hdev_*!/ibdev_*! message compiled to
# nothing (--cfg rdma_no_msg), then -Copt-level=s, then -Coverflow-checks=off.
# These modules measure; none is meant to be loaded (the -Os builds draw
# objtool's "falls through" warnings on core functions). Not part of
# `make check`.
FLOOR := $(BUILD)/size-floor
size-floor: modules
	@mkdir -p $(FLOOR)/no-msg $(FLOOR)/no-msg-os $(FLOOR)/no-msg-os-noovf $(BUILD)/size
	$(KMAKE) MO=$(FLOOR)/no-msg HNS_CFG=rdma_no_msg modules
	$(KMAKE) MO=$(FLOOR)/no-msg-os HNS_CFG=rdma_no_msg KRUSTFLAGS=-Copt-level=s modules
	$(KMAKE) MO=$(FLOOR)/no-msg-os-noovf HNS_CFG=rdma_no_msg \
		KRUSTFLAGS="-Copt-level=s -Coverflow-checks=off" modules
	python3 scripts/size-floor.py $(KOBJ)/drivers/infiniband/hw/hns/hns-roce-hw-v2.ko \
		"as is=$(BUILD)/module" "messages compiled out=$(FLOOR)/no-msg" \
		"and -Copt-level=s=$(FLOOR)/no-msg-os" \
		"and -Coverflow-checks=off=$(FLOOR)/no-msg-os-noovf" >$(BUILD)/size/floor.md
	@cat $(BUILD)/size/floor.md

# One traced Rust call of the last `make call-count` by source line
# (scripts/call-lines.py): KIND=post_send_1, post_send_16,
# post_recv_1, post_recv_16, poll_cq_empty or poll_cq_16. Needs the
# debug-info build of size-attr of the same source.
KIND ?= post_send_16
call-lines: size-attr
	@python3 scripts/call-lines.py $(BUILD)/callcount/traces.json $(KIND) \
		$(BUILD)/module-dbg/hns_roce_main.o

# Stack traffic of every traced call of the last `make call-count`, C
# against Rust (scripts/call-stack.py): instructions in each
# driver's module and how many of them use a stack slot. No boot.
call-stack:
	@python3 scripts/call-stack.py $(BUILD)/callcount/traces.json \
		$(KOBJ)/drivers/infiniband/hw/hns/hns-roce-hw-v2.ko $(BUILD)/module/hns_roce_rs.ko

# Where the CPU time of unloading (WHAT=unload) or loading (WHAT=load) each
# driver goes, by kernel function: tests/guest/kprof.py, a sampling profile
# of the rmmod/insmod process in one `--sim 2` boot, KPROF_ROUNDS cycles
# per driver (default 30, about 90 s of boot). build/kprof/WHAT.txt; the
# guest's whole output in build/kprof/WHAT.log. Not part of `make check`.
WHAT ?= unload
kprof: modules kernel sim
	@mkdir -p $(BUILD)/kprof
	HNS_MODULE_DIR=$(BUILD)/module bash scripts/run-guest.sh --name kprof --driver none --sim 2 \
		--timeout 1400 --cmd 'python3 /opt/hns/kprof.py $(WHAT) $(or $(KPROF_ROUNDS),30)' \
		>$(BUILD)/kprof/$(WHAT).log 2>&1
	@grep '^KP' $(BUILD)/kprof/$(WHAT).log >$(BUILD)/kprof/$(WHAT).txt
	@echo "kprof: $(BUILD)/kprof/$(WHAT).txt"

# The kernel hot-path benchmark module (kverbs only, any ib_device;
# tests/bench/hns_kbench.c) into $(BUILD)/bench/extra/ for HNS_GUEST_EXTRA.
# Not part of `make check`.
bench-kmod: $(KDIR_DEP)
	@mkdir -p $(BUILD)/bench/kmod $(BUILD)/bench/extra
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/tests/bench MO=$(BUILD)/bench/kmod modules
	cp $(BUILD)/bench/kmod/hns_kbench.ko $(BUILD)/bench/extra/

# The kernel test modules (kernel verbs, either driver; tests/ktest/) into
# $(BUILD)/ktest/, which scripts/run-guest.sh copies into every guest's
# /opt/run/ktest/. The old .ko files go first: the directory holds exactly
# what tests/ktest/Kbuild builds.
ktest-kmod: $(KDIR_DEP)
	@rm -f $(BUILD)/ktest/*.ko
	@mkdir -p $(BUILD)/ktest/kmod
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/tests/ktest MO=$(BUILD)/ktest/kmod modules
	@mkdir -p $(BUILD)/ktest/loopback
	$(KLOCK) $(TOOLS_ENV) $(MAKE) -C $(KDIR) $(KARCH) M=$(CURDIR)/tests/loopback MO=$(BUILD)/ktest/loopback modules
	cp $(BUILD)/ktest/kmod/*.ko $(BUILD)/ktest/loopback/rdma_lo.ko $(BUILD)/ktest/

# The probe fault sweep on both drivers, alone (make check runs it too):
# build/faults/report.md.
faults: modules-kunit kernel sim
	@bash scripts/faults.sh

# The uverbs fuzzer on both drivers (FUZZ_SEED, FUZZ_CALLS,
# FUZZ_TIME): build/fuzz/report.md.
fuzz: modules-kunit kernel sim
	@bash scripts/fuzz.sh

# Coverage of the driver (docs/harness.md, "Coverage"): the boots of
# COVERAGE_RUN (check, the default; fuzz; kpath) with the coverage build,
# then scripts/coverage-report.py: build/coverage/report.md
# (COVERAGE_DOCS=1: docs/coverage.md too). Not part of `make check`.
coverage: module-cov modules-kunit kernel sim ktest-kmod
	@bash scripts/coverage.sh

# The SMP stress on both drivers, 2 vCPUs, SIM=2 (STRESS_TIME,
# STRESS_SEED, STRESS_DRIVERS): build/stress/.
stress: modules-kunit kernel sim ktest-kmod
	@bash scripts/stress.sh

clean:
	rm -rf $(HBUILD)
	cd tests/host && cargo clean
