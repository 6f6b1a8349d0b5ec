// SPDX-License-Identifier: GPL-2.0
/*
 * The hnae3 half of hns_roce_rs's C shim (see hnae3_shim.h): the RoCE
 * client's struct and trampolines, and what the driver reads and asks of
 * an hnae3 function. Everything that decides something lives in Rust.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <net/bonding.h>
#include <rdma/ib_verbs.h>
#include "hnae3.h"
#include "hnae3_shim.h"
#include "shim.h"

/*
 * The Rust side's client callbacks and the context they get back (the
 * registration's state), set while the client is registered: hnae3 keeps
 * one client per type, and its callbacks carry no context of their own.
 */
static const struct hnae3_shim_client_ops *hnae3_shim_rs_client;
static const void *hnae3_shim_rs_ctx;

static int hnae3_shim_init_instance(struct hnae3_handle *handle)
{
	return hnae3_shim_rs_client->init_instance(hnae3_shim_rs_ctx, handle);
}

static void hnae3_shim_uninit_instance(struct hnae3_handle *handle, bool reset)
{
	hnae3_shim_rs_client->uninit_instance(hnae3_shim_rs_ctx, handle, reset);
}

static void hnae3_shim_link_status_change(struct hnae3_handle *handle,
					  bool state)
{
	hnae3_shim_rs_client->link_status_change(hnae3_shim_rs_ctx, handle,
						 state);
}

/* The enum argument is why this trampoline exists (KCFI typing). */
static int hnae3_shim_reset_notify(struct hnae3_handle *handle,
				   enum hnae3_reset_notify_type type)
{
	return hnae3_shim_rs_client->reset_notify(hnae3_shim_rs_ctx, handle,
						  (int)type);
}

static const struct hnae3_client_ops hnae3_shim_client_ops = {
	.init_instance = hnae3_shim_init_instance,
	.uninit_instance = hnae3_shim_uninit_instance,
	.link_status_change = hnae3_shim_link_status_change,
	.reset_notify = hnae3_shim_reset_notify,
};

static struct hnae3_client hnae3_shim_client = {
	.name = "hns_roce_rs",
	.type = HNAE3_CLIENT_ROCE,
	.ops = &hnae3_shim_client_ops,
};

/* Asks the Rust side about every module that is about to start. */
static int hnae3_shim_module_notify(struct notifier_block *nb,
				    unsigned long state, void *data)
{
	struct module *mod = data;

	if (state != MODULE_STATE_COMING)
		return NOTIFY_DONE;
	return notifier_from_errno(hnae3_shim_rs_client->module_coming(hnae3_shim_rs_ctx,
									mod->name));
}

static struct notifier_block hnae3_shim_module_nb = {
	.notifier_call = hnae3_shim_module_notify,
};

int hnae3_shim_register_client(const struct hnae3_shim_client_ops *ops,
			       const void *ctx, bool *listed)
{
	int ret;

	hnae3_shim_rs_client = ops;
	hnae3_shim_rs_ctx = ctx;
	/* Before the client: a rival that starts meanwhile is asked about. */
	register_module_notifier(&hnae3_shim_module_nb);
	INIT_LIST_HEAD(&hnae3_shim_client.node);
	ret = hnae3_register_client(&hnae3_shim_client);
	*listed = !list_empty(&hnae3_shim_client.node);
	return ret;
}

void hnae3_shim_unregister_client(void)
{
	hnae3_unregister_client(&hnae3_shim_client);
}

void hnae3_shim_unwatch_modules(void)
{
	unregister_module_notifier(&hnae3_shim_module_nb);
	hnae3_shim_rs_client = NULL;
	hnae3_shim_rs_ctx = NULL;
}

/* The RoCE client's bit in rinfo.state: the function was not attached when
 * a reset began, so its UNINIT and INIT steps do nothing
 * (HNS_ROCE_RST_DIRECT_RETURN).
 */
#define HNAE3_SHIM_RST_DIRECT_RETURN 0

void hnae3_shim_rst_direct_set(struct hnae3_handle *h, bool on)
{
	assign_bit(HNAE3_SHIM_RST_DIRECT_RETURN, &h->rinfo.state, on);
}

bool hnae3_shim_rst_direct_test(struct hnae3_handle *h)
{
	return test_bit(HNAE3_SHIM_RST_DIRECT_RETURN, &h->rinfo.state);
}

bool hnae3_shim_rst_direct_test_and_clear(struct hnae3_handle *h)
{
	return test_and_clear_bit(HNAE3_SHIM_RST_DIRECT_RETURN,
				  &h->rinfo.state);
}

/* A function (or VF) reset asked of the ae_dev, as on an AEQ overflow. */
void hnae3_shim_request_reset(struct hnae3_handle *h, bool vf)
{
	struct hnae3_ae_dev *ae_dev = pci_get_drvdata(h->pdev);
	const struct hnae3_ae_ops *ops = ae_dev->ops;

	if (ops->set_default_reset_request)
		ops->set_default_reset_request(ae_dev, vf ? HNAE3_VF_FUNC_RESET :
					       HNAE3_FUNC_RESET);
	if (ops->reset_event)
		ops->reset_event(h->pdev, NULL);
}

void hnae3_shim_netdev_mac(struct hnae3_handle *h, u8 *mac)
{
	ether_addr_copy(mac, h->rinfo.netdev->dev_addr);
}

void hnae3_shim_bond_dev(struct net_device *dev,
			 struct hnae3_shim_bond_slave *out)
{
	struct ib_device *ibdev = ib_device_get_by_netdev(dev, RDMA_DRIVER_HNS);
	struct rdma_shim_dev *sdev;
	struct pci_dev *pdev;

	memset(out, 0, sizeof(*out));
	out->dev = dev;
	if (!ibdev)
		return;
	sdev = container_of(ibdev, struct rdma_shim_dev, ibdev);
	/* Only this module's devices: the C driver has the same driver id. */
	if (ibdev->ops.owner == THIS_MODULE && sdev->owner) {
		out->handle = sdev->owner;
		pdev = out->handle->pdev;
		out->func = PCI_FUNC(pdev->devfn);
		out->bus = pdev->bus->number;
		out->bond_cap = sdev->bond_cap;
		out->vf = sdev->vf || pci_num_vf(pdev) > 0;
	}
	ib_device_put(ibdev);
}

int hnae3_shim_bond_slaves(struct net_device *upper,
			   struct hnae3_shim_bond_slave *out, int max)
{
	struct net_device *dev;
	int n = 0;

	rcu_read_lock();
	for_each_netdev_in_bond_rcu(upper, dev) {
		if (n < max)
			hnae3_shim_bond_dev(dev, &out[n]);
		n++;
	}
	rcu_read_unlock();
	return n;
}
