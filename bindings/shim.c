// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C shim of hns_roce_rs. Everything that decides something lives in Rust;
 * this file only adapts C-only interfaces (see shim.h).
 */
#include <linux/interrupt.h>
#include <linux/pci.h>
#include <linux/stddef.h>
#include <rdma/ib_verbs.h>
#include "hnae3.h"
#include "shim.h"

void hns_shim_get_layout(struct hns_shim_layout *l)
{
	l->hnae3_handle_size = sizeof(struct hnae3_handle);
	l->hnae3_handle_pdev = offsetof(struct hnae3_handle, pdev);
	l->hnae3_handle_rinfo = offsetof(struct hnae3_handle, rinfo);
	l->hnae3_handle_client = offsetof(struct hnae3_handle, client);
	l->hnae3_roce_info_size = sizeof(struct hnae3_roce_private_info);
	l->hnae3_roce_info_netdev =
		offsetof(struct hnae3_roce_private_info, netdev);
	l->hnae3_roce_info_roce_io_base =
		offsetof(struct hnae3_roce_private_info, roce_io_base);
	l->hnae3_roce_info_roce_mem_base =
		offsetof(struct hnae3_roce_private_info, roce_mem_base);
	l->hnae3_roce_info_base_vector =
		offsetof(struct hnae3_roce_private_info, base_vector);
	l->hnae3_roce_info_num_vectors =
		offsetof(struct hnae3_roce_private_info, num_vectors);
	l->hnae3_client_size = sizeof(struct hnae3_client);
	l->ib_device_size = sizeof(struct ib_device);
	l->ib_device_dev = offsetof(struct ib_device, dev);
	l->ib_device_ops = offsetof(struct ib_device, ops);
	l->ib_udata_size = sizeof(struct ib_udata);
	l->ib_pd_size = sizeof(struct ib_pd);
	l->ib_cq_size = sizeof(struct ib_cq);
	l->ib_qp_size = sizeof(struct ib_qp);
}

static int hns_shim_init_instance(struct hnae3_handle *handle)
{
	return hns_rs_init_instance(handle);
}

static void hns_shim_uninit_instance(struct hnae3_handle *handle, bool reset)
{
	hns_rs_uninit_instance(handle, reset);
}

static void hns_shim_link_status_change(struct hnae3_handle *handle,
					bool state)
{
	hns_rs_link_status_change(handle, state);
}

/* The enum argument is why this trampoline exists (KCFI typing). */
static int hns_shim_reset_notify(struct hnae3_handle *handle,
				 enum hnae3_reset_notify_type type)
{
	return hns_rs_reset_notify(handle, (int)type);
}

static const struct hnae3_client_ops hns_shim_client_ops = {
	.init_instance = hns_shim_init_instance,
	.uninit_instance = hns_shim_uninit_instance,
	.link_status_change = hns_shim_link_status_change,
	.reset_notify = hns_shim_reset_notify,
};

static struct hnae3_client hns_shim_client = {
	.name = "hns_roce_rs",
	.type = HNAE3_CLIENT_ROCE,
	.ops = &hns_shim_client_ops,
};

int hns_shim_register_client(void)
{
	return hnae3_register_client(&hns_shim_client);
}

void hns_shim_unregister_client(void)
{
	hnae3_unregister_client(&hns_shim_client);
}

static irqreturn_t hns_shim_irq(int irq, void *cookie)
{
	return hns_rs_irq(cookie) ? IRQ_HANDLED : IRQ_NONE;
}

int hns_shim_request_irq(unsigned int irq, const char *name, void *cookie)
{
	return request_irq(irq, hns_shim_irq, 0, name, cookie);
}

void hns_shim_free_irq(unsigned int irq, void *cookie)
{
	free_irq(irq, cookie);
}

/* Linux irq number of the i-th RoCE vector of the function (0 if none). */
unsigned int hns_shim_irq_vector(struct hnae3_handle *handle, unsigned int i)
{
	int irq;

	if (i >= (unsigned int)handle->rinfo.num_vectors)
		return 0;
	irq = pci_irq_vector(handle->pdev, handle->rinfo.base_vector + i);
	return irq < 0 ? 0 : irq;
}
