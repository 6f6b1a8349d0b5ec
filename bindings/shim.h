/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The thin C side of hns_roce_rs: what Rust cannot or must not do itself
 * (hnae3 client registration, ops tables with enum-typed callbacks, static
 * inline helpers). Shared by shim.c and bindgen.
 */
#ifndef HNS_RS_SHIM_H
#define HNS_RS_SHIM_H

#include <linux/types.h>

struct hnae3_handle;

/*
 * Sizes and offsets as the C compiler sees them. Rust compares them with its
 * own (bindgen) view at module init and refuses to load on any difference.
 */
struct hns_shim_layout {
	u32 hnae3_handle_size;
	u32 hnae3_handle_pdev;
	u32 hnae3_handle_rinfo;
	u32 hnae3_handle_client;
	u32 hnae3_roce_info_size;
	u32 hnae3_roce_info_netdev;
	u32 hnae3_roce_info_roce_io_base;
	u32 hnae3_roce_info_roce_mem_base;
	u32 hnae3_roce_info_base_vector;
	u32 hnae3_roce_info_num_vectors;
	u32 hnae3_client_size;
	u32 ib_device_size;
	u32 ib_device_dev;
	u32 ib_device_ops;
	u32 ib_udata_size;
	u32 ib_pd_size;
	u32 ib_cq_size;
	u32 ib_qp_size;
};

void hns_shim_get_layout(struct hns_shim_layout *l);

/* hnae3 RoCE client: registration calls back into the hns_rs_* functions. */
int hns_shim_register_client(void);
void hns_shim_unregister_client(void);

/* Implemented in Rust (rdma.rs); called from the shim's client ops. */
int hns_rs_init_instance(struct hnae3_handle *handle);
void hns_rs_uninit_instance(struct hnae3_handle *handle, bool reset);
void hns_rs_link_status_change(struct hnae3_handle *handle, bool up);
int hns_rs_reset_notify(struct hnae3_handle *handle, int type);

/*
 * Interrupts: the handler is C (irq_handler_t typing) and calls
 * hns_rs_irq(cookie), which returns true when it handled something.
 */
int hns_shim_request_irq(unsigned int irq, const char *name, void *cookie);
void hns_shim_free_irq(unsigned int irq, void *cookie);
unsigned int hns_shim_irq_vector(struct hnae3_handle *handle, unsigned int i);

/* Implemented in Rust (rdma.rs). */
bool hns_rs_irq(void *cookie);

#endif /* HNS_RS_SHIM_H */
