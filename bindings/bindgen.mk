# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The bindgen rule of the rdma layer's bindings, included by every Kbuild
# whose crate compiles the layer (the module's, tests/loopback's), with
# the layer's bindings/ in $(src). The includer sets HNS_CRATE_ROOT (the
# object of its crate root); the bindings are generated into
# $(obj)/bindings/.

# --- Bindings generated at build time -------------------------------------
# bindgen parses our helper header with the module's own C flags. With a GCC
# kernel, libclang cannot take some GCC-only flags: the list below mirrors
# bindgen_skip_c_flags of the pinned kernel's rust/Makefile.
hns_bindgen_skip_c_flags := -mno-fp-ret-in-387 -mpreferred-stack-boundary=% \
	-mskip-rax-setup -mgeneral-regs-only -msign-return-address=% \
	-mindirect-branch=thunk-extern -mindirect-branch-register \
	-mfunction-return=thunk-extern -mrecord-mcount -mabi=lp64 \
	-mindirect-branch-cs-prefix -mstack-protector-guard% -mtraceback=no \
	-mno-pointers-to-nested-functions -mno-string \
	-mno-strict-align -mstrict-align -mdirect-extern-access \
	-mexplicit-relocs -mno-check-zero-division \
	-fconserve-stack -falign-jumps=% -falign-loops=% \
	-femit-struct-debug-baseonly -fno-ipa-cp-clone -fno-ipa-sra \
	-fno-partial-inlining -fplugin-arg-arm_ssp_per_task_plugin-% \
	-fno-reorder-blocks -fno-allow-store-data-races -fasan-shadow-offset=% \
	-fzero-call-used-regs=% -fno-stack-clash-protection \
	-fno-inline-functions-called-once -fsanitize=bounds-strict \
	-fstrict-flex-arrays=% -fmin-function-alignment=% \
	-fzero-init-padding-bits=% -mno-fdpic \
	-fdiagnostics-show-context -fdiagnostics-show-context=% \
	--param=% --param asan-% -fno-isolate-erroneous-paths-dereference \
	-ffixed-r2 -mmultiple -mno-readonly-in-sdata

hns_bindgen_target-$(CONFIG_X86_64) := x86_64-linux-gnu
hns_bindgen_target-$(CONFIG_ARM64) := aarch64-linux-gnu

ifdef CONFIG_CC_IS_CLANG
hns_bindgen_c_flags = $(c_flags)
else
hns_bindgen_c_flags = $(filter-out $(hns_bindgen_skip_c_flags), $(c_flags)) \
	-w --target=$(hns_bindgen_target-y)
endif

# Types the RDMA core and hnae3 headers embed that the kernel crate's
# bindings do not provide. The first list is generated as is; the second
# only as opaque blobs of the right size and alignment (we never look inside).
hns_bindgen_extra_types := opa_ah_attr roce_ah_attr port_pkey_state iphdr \
	packed_ulong tph_mem_type read_func netdev_lag_tx_type netdev_lag_hash \
	netdev_cmd netdev_notifier_info netdev_notifier_changeupper_info \
	netdev_lag_upper_info
hns_bindgen_opaque_types := dim irq_poll hw_stats_device_data iw_cm_id \
	iw_cm_conn_param uapi_definition auto_mode_param hns3_mac_stats dcb_app \
	ieee_ets ieee_pfc 'ifla_vf_.*' flow_cls_offload tc_mqprio_qopt_offload \
	'ib_mad_notice_attr.*' opa_mad

# Only our own, RDMA core and hnae3 items are generated (and irq_poll's
# disable/enable, which a drain stops a CQ's poll with); every other type
# they mention resolves to the kernel crate's bindings (see bindings/mod.rs).
hns_bindgen_flags := --rust-target 1.85 --use-core --with-derive-default \
	--ctypes-prefix ffi --no-layout-tests --no-debug '.*' \
	--enable-function-attribute-detection --no-doc-comments \
	--no-recursive-allowlist \
	--allowlist-type '(ib|rdma|uverbs|hnae3|hns_shim|hns_rs|hns_roce_ib|hns_roce_create_qp)_.*' \
	--allowlist-function '(ib|rdma|hnae3|hns_shim)_.*|ibdev_(err|warn|info)|irq_poll_(disable|enable)' \
	--allowlist-function '(un)?register_netdevice_notifier|netdev_master_upper_dev_get_rcu|__rdma_block_iter_(start|next)' \
	--allowlist-var '(IB|RDMA|HNAE3|HNS_SHIM)_.*' \
	$(foreach t,$(hns_bindgen_extra_types) $(hns_bindgen_opaque_types),--allowlist-type $(t)) \
	$(foreach t,$(hns_bindgen_opaque_types),--opaque-type $(t)) \
	--blocklist-type '__kernel_s?size_t' --blocklist-type __kernel_ptrdiff_t \
	--opaque-type spinlock \
	--with-derive-custom-struct '.*=MaybeZeroable' \
	--with-derive-custom-union '.*=MaybeZeroable'

quiet_cmd_hns_bindgen = BINDGEN $@
      cmd_hns_bindgen = $(BINDGEN) $< $(hns_bindgen_flags) -o $@ -- \
		$(hns_bindgen_c_flags) -fno-builtin -D__BINDGEN__ -DMODULE

$(obj)/bindings/bindings_generated.rs: $(src)/bindings/bindings_helper.h FORCE
	$(call if_changed_dep,hns_bindgen)

targets += bindings/bindings_generated.rs
$(obj)/$(HNS_CRATE_ROOT): $(obj)/bindings/bindings_generated.rs
# The generated file sits in the output tree (MO=), so tell rustc where.
$(obj)/$(HNS_CRATE_ROOT): export HNS_BINDINGS_RS = $(abspath $(obj)/bindings/bindings_generated.rs)
clean-files += bindings/bindings_generated.rs

# The C compiler's sizes and offsets of what the rdma layer reads
# (bindings/layout.c, compiled to assembly as the kernel's asm-offsets.c),
# as Rust constants that rdma/layout.rs compares with bindgen's at compile
# time. The sed keeps each "->NAME VALUE" marker, whatever the immediate's
# prefix ($ on x86, # on arm64).
quiet_cmd_hns_layout = GEN     $@
      cmd_hns_layout = $(CC) $(filter-out $(DEBUG_CFLAGS) $(CC_FLAGS_LTO), \
		$(c_flags)) -S -o $@.s $< && sed -ne \
		's|^[[:space:]]*\.ascii[[:space:]]*"->\([A-Z0-9_]*\) [^0-9]*\([0-9]*\) .*|pub(crate) const \1: usize = \2;|p' \
		<$@.s >$@ && rm -f $@.s

$(obj)/bindings/layout_generated.rs: $(src)/bindings/layout.c FORCE
	$(call if_changed_dep,hns_layout)

targets += bindings/layout_generated.rs
$(obj)/$(HNS_CRATE_ROOT): $(obj)/bindings/layout_generated.rs
$(obj)/$(HNS_CRATE_ROOT): export RDMA_LAYOUT_RS = $(abspath $(obj)/bindings/layout_generated.rs)
clean-files += bindings/layout_generated.rs
