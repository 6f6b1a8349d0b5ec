// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C half of hns_sim.ko: presents a bound ivshmem-doorbell function as an
 * HNS3 RoCE function. It relabels the pci_dev (and gives it a BAR4 for
 * direct WQE), creates the port's net_device and registers a minimal hnae3
 * ae_algo/ae_dev so that a RoCE client (hns-roce-hw-v2 or hns_roce_rs)
 * gets an hnae3 handle. It contains no device behaviour: that is all in
 * the host-side hns-sim.
 */
#include <linux/atomic.h>
#include <linux/etherdevice.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "hnae3.h"
#include "hns_sim_glue.h"

#define HNS_SIM_VENDOR 0x19e5
#define HNS_SIM_DEVICE 0xa222
/* HNAE3_DEV_ID_RDMA_DCB_PFC_VF: the RoCE drivers' is_vf */
#define HNS_SIM_DEVICE_VF 0xa22f
/* HIP09, unless the model says otherwise (below). */
#define HNS_SIM_DEFAULT_REVISION 0x30
#define HNS_SIM_REVISION_HIP08 0x21
#define HNS_SIM_BAR 2
/* sim/src/mem.rs MEM_BASE_OFFSET (a test there compares the two). */
#define HNS_SIM_MEM_BASE_OFFSET 0x1000000
/* The BAR an HNS3 function's RoCE driver maps direct WQE pages from. */
#define HNS_SIM_DWQE_BAR 4
/*
 * The model's own words sit in the last 64 KiB page of BAR2's register
 * window, where neither the RoCE engine nor hclge/hns3 has a register.
 * These restate sim/src/device.rs MODEL_BLOCK, CTRL_* and IDENT_*; a test
 * there (glue_restates_the_model_block) reads this file and compares.
 *
 * The control channel: command text, then a new sequence number; the
 * model answers with a result and the number as acknowledgement.
 */
#define HNS_SIM_CTRL_SEQ 0xff0000
#define HNS_SIM_CTRL_ACK 0xff0004
#define HNS_SIM_CTRL_RESULT 0xff0008
#define HNS_SIM_CTRL_CMD 0xff0040
#define HNS_SIM_CTRL_CMD_LEN 64
/*
 * The model's identity, written before the guest runs. The magic word
 * tells it from an older model, which leaves every word 0; a model
 * without the VF personality leaves the device word 0 (then 0xa222).
 */
#define HNS_SIM_IDENT_MAGIC 0xff0010
#define HNS_SIM_IDENT_REVISION 0xff0014
#define HNS_SIM_IDENT_DEVICE 0xff0018
#define HNS_SIM_IDENT_MAGIC_VALUE 0x44495348 /* "HSID" */
/*
 * The function's PCI location, written by the glue at attach for the
 * model (bond masks are PCI function bits). Bit 31: the word is valid.
 */
#define HNS_SIM_IDENT_PCI 0xff001c
#define HNS_SIM_IDENT_PCI_VALID BIT(31)
/*
 * The MSI-X vector the RoCE engine's vectors start at (hclge's
 * rinfo.base_vector: the NIC's vectors come first). 0 from a model that
 * does not write it.
 */
#define HNS_SIM_IDENT_BASE_VECTOR 0xff0020
/* How long the model may take to answer a control command. */
#define HNS_SIM_CTRL_TIMEOUT_US 2000000

struct hns_sim_dev {
	struct pci_dev *pdev;
	struct hnae3_ae_dev *ae_dev;
	struct hnae3_handle roce;
	struct net_device *netdev;
	void __iomem *bar;
	unsigned int num_vectors;
	/* The first of them that is the RoCE engine's (rinfo.base_vector). */
	unsigned int base_vector;
	/*
	 * The RoCE client's instance is registered (hclge's
	 * HCLGE_STATE_ROCE_REGISTERED): set when init_instance succeeded with
	 * a device (a client that declined has no priv), cleared at uninit.
	 * The C driver's bond code tears a member's instance down and builds
	 * it again behind the glue's back (handle->priv NULL meanwhile); the
	 * client ops check their own state, as with hclge.
	 */
	bool roce_inited;
	/* The model's port is down (the link parameter). */
	bool link_down;
	u16 orig_vendor, orig_device;
	u8 orig_revision;
	struct resource orig_dwqe_bar;
};

/* The attached functions, for the reset and fault triggers. */
#define HNS_SIM_MAX_DEVS 4
static struct hns_sim_dev *hns_sim_devs[HNS_SIM_MAX_DEVS];
static DEFINE_MUTEX(hns_sim_devs_lock);

static const struct pci_device_id hns_sim_ae_ids[] = {
	{ PCI_DEVICE(HNS_SIM_VENDOR, HNS_SIM_DEVICE) },
	{ PCI_DEVICE(HNS_SIM_VENDOR, HNS_SIM_DEVICE_VF) },
	{ }
};

static struct hnae3_ae_algo hns_sim_ae_algo;

static int hns_sim_init_ae_dev(struct hnae3_ae_dev *ae_dev)
{
	return 0;
}

static void hns_sim_uninit_ae_dev(struct hnae3_ae_dev *ae_dev)
{
}

static int hns_sim_init_client_instance(struct hnae3_client *client,
					struct hnae3_ae_dev *ae_dev)
{
	struct hns_sim_dev *sim = ae_dev->priv;
	struct hnae3_handle *h = &sim->roce;
	int ret;

	if (client->type != HNAE3_CLIENT_ROCE)
		return 0;

	memset(h, 0, sizeof(*h));
	h->client = client;
	h->pdev = sim->pdev;
	h->ae_algo = &hns_sim_ae_algo;
	h->rinfo.netdev = sim->netdev;
	h->rinfo.roce_io_base = sim->bar;
	h->rinfo.roce_mem_base = sim->bar + HNS_SIM_MEM_BASE_OFFSET;
	h->rinfo.base_vector = sim->base_vector;
	h->rinfo.num_vectors = sim->num_vectors - sim->base_vector;

	ret = client->ops->init_instance(h);
	if (ret)
		return ret;
	/* A client that declined the device (no priv) is not "inited". */
	sim->roce_inited = h->priv != NULL;
	if (sim->roce_inited)
		hnae3_set_client_init_flag(client, ae_dev, 1);
	return 0;
}

static void hns_sim_uninit_client_instance(struct hnae3_client *client,
					   struct hnae3_ae_dev *ae_dev)
{
	struct hns_sim_dev *sim = ae_dev->priv;

	if (client->type != HNAE3_CLIENT_ROCE || !sim->roce_inited)
		return;
	client->ops->uninit_instance(&sim->roce, false);
	/*
	 * As hclge_uninit_client_instance: the handle has no client any
	 * more. The C driver's bond code refuses to re-init a member whose
	 * handle has no client (hns_roce_bond_init_client), e.g. when the
	 * bond's main function is unregistered after this one at rmmod.
	 */
	sim->roce.client = NULL;
	sim->roce_inited = false;
	hnae3_set_client_init_flag(client, ae_dev, 0);
}

/*
 * The four reset queries a RoCE client asks hclge, answered from module
 * parameters so that a test can put every function in one of the states
 * hclge reports during a reset (all "no reset" by default): reset_cnt is
 * the count of finished hardware resets (hclge_ae_dev_reset_cnt),
 * hw_reset_stat a hardware reset under way (hclge_get_hw_reset_stat),
 * cmdq_stat the NIC's command queue disabled by one (hclge_get_cmdq_stat)
 * and sw_resetting the NIC's reset task running (hclge_ae_dev_resetting).
 */
static ulong hns_sim_reset_cnt_val;
module_param_named(reset_cnt, hns_sim_reset_cnt_val, ulong, 0644);
MODULE_PARM_DESC(reset_cnt, "hardware resets done, as ae_dev_reset_cnt answers");

static bool hns_sim_hw_reset_stat;
module_param_named(hw_reset_stat, hns_sim_hw_reset_stat, bool, 0644);
MODULE_PARM_DESC(hw_reset_stat, "a hardware reset is under way (get_hw_reset_stat)");

static bool hns_sim_cmdq_stat;
module_param_named(cmdq_stat, hns_sim_cmdq_stat, bool, 0644);
MODULE_PARM_DESC(cmdq_stat, "the command queue is disabled by a reset (get_cmdq_stat)");

static bool hns_sim_sw_resetting;
module_param_named(sw_resetting, hns_sim_sw_resetting, bool, 0644);
MODULE_PARM_DESC(sw_resetting, "the reset task is running (ae_dev_resetting)");

static unsigned long hns_sim_reset_cnt(struct hnae3_handle *h)
{
	return READ_ONCE(hns_sim_reset_cnt_val);
}

static bool hns_sim_get_hw_reset_stat(struct hnae3_handle *h)
{
	return READ_ONCE(hns_sim_hw_reset_stat);
}

static bool hns_sim_get_cmdq_stat(struct hnae3_handle *h)
{
	return READ_ONCE(hns_sim_cmdq_stat);
}

static bool hns_sim_resetting(struct hnae3_handle *h)
{
	return READ_ONCE(hns_sim_sw_resetting);
}

/*
 * Reset requests of the RoCE client (an AEQ overflow asks the ae_dev for a
 * function reset): logged and counted in the reset_requests parameter for
 * the tests, not carried out (the reset parameter does that).
 */
static atomic_t hns_sim_reset_requests = ATOMIC_INIT(0);

static void hns_sim_set_default_reset_request(struct hnae3_ae_dev *ae_dev,
					      enum hnae3_reset_type rst_type)
{
	struct hns_sim_dev *sim = ae_dev->priv;

	dev_info(&sim->pdev->dev, "hns-sim: reset request, type %d\n",
		 rst_type);
}

static void hns_sim_reset_event(struct pci_dev *pdev,
				struct hnae3_handle *handle)
{
	atomic_inc(&hns_sim_reset_requests);
	dev_info(&pdev->dev, "hns-sim: reset event\n");
}

static int hns_sim_reset_requests_get(char *buf,
				      const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&hns_sim_reset_requests));
}

static const struct kernel_param_ops hns_sim_reset_requests_ops = {
	.get = hns_sim_reset_requests_get,
};
module_param_cb(reset_requests, &hns_sim_reset_requests_ops, NULL, 0444);
MODULE_PARM_DESC(reset_requests, "reset events the RoCE client asked for");

static const struct hnae3_ae_ops hns_sim_ae_ops = {
	.set_default_reset_request = hns_sim_set_default_reset_request,
	.reset_event = hns_sim_reset_event,
	.init_ae_dev = hns_sim_init_ae_dev,
	.uninit_ae_dev = hns_sim_uninit_ae_dev,
	.init_client_instance = hns_sim_init_client_instance,
	.uninit_client_instance = hns_sim_uninit_client_instance,
	.ae_dev_reset_cnt = hns_sim_reset_cnt,
	.get_cmdq_stat = hns_sim_get_cmdq_stat,
	.ae_dev_resetting = hns_sim_resetting,
	.get_hw_reset_stat = hns_sim_get_hw_reset_stat,
};

static struct hnae3_ae_algo hns_sim_ae_algo = {
	.ops = &hns_sim_ae_ops,
	.pdev_id_table = hns_sim_ae_ids,
};

/* The port: an Ethernet device that drops what it is given. */
static netdev_tx_t hns_sim_xmit(struct sk_buff *skb, struct net_device *nd)
{
	nd->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/*
 * The RoCE client of the function whose port is `nd`, if one is attached:
 * hclge tells it about link changes (hclge_update_link_status).
 */
static void hns_sim_link_notify(struct net_device *nd, bool up)
{
	/* Called under RTNL, which the reset path may take inside
	 * hns_sim_devs_lock: find the function through the netdev instead.
	 */
	struct hns_sim_dev *sim = *(struct hns_sim_dev **)netdev_priv(nd);
	struct hnae3_client *client;

	if (!sim || !sim->roce_inited)
		return;
	client = sim->roce.client;
	if (client && client->ops->link_status_change)
		client->ops->link_status_change(&sim->roce, up);
}

static int hns_sim_open(struct net_device *nd)
{
	struct hns_sim_dev *sim = *(struct hns_sim_dev **)netdev_priv(nd);
	bool up = !sim || !READ_ONCE(sim->link_down);

	/* No carrier while the model's port is down (the link parameter). */
	if (up)
		netif_carrier_on(nd);
	netif_start_queue(nd);
	hns_sim_link_notify(nd, up);
	return 0;
}

static int hns_sim_stop(struct net_device *nd)
{
	netif_stop_queue(nd);
	netif_carrier_off(nd);
	hns_sim_link_notify(nd, false);
	return 0;
}

/*
 * A function reset as hclge_reset() walks the RoCE client through it:
 * DOWN, UNINIT, (the hardware reset: nothing to do for the model, which
 * sees the client re-initialise its command queue), INIT, UP. steps[from]
 * up to steps[to - 1] are run: 0..2 takes the function down, 2..4 brings
 * it back. A failing step is logged and ends the sequence, as hclge does.
 */
static int hns_sim_reset_steps(struct hns_sim_dev *sim, int from, int to)
{
	static const enum hnae3_reset_notify_type steps[] = {
		HNAE3_DOWN_CLIENT, HNAE3_UNINIT_CLIENT, HNAE3_INIT_CLIENT,
		HNAE3_UP_CLIENT,
	};
	struct hnae3_client *client = sim->roce.client;
	int i, ret;

	if (!sim->roce_inited || !client || !client->ops->reset_notify)
		return 0;
	for (i = from; i < to; i++) {
		ret = client->ops->reset_notify(&sim->roce, steps[i]);
		if (ret) {
			dev_err(&sim->pdev->dev,
				"hns-sim: RoCE reset notify %d failed: %d\n",
				steps[i], ret);
			return ret;
		}
	}
	if (to == ARRAY_SIZE(steps))
		dev_info(&sim->pdev->dev, "hns-sim: function reset done\n");
	return 0;
}

/*
 * Writing "f<index>" (f0, f1, ...: the attach order, which is the model's
 * device order) to /sys/module/hns_sim/parameters/reset resets that
 * function alone (a VF's own reset, as hclgevf does it); writing anything
 * else resets every attached function: all go down in reverse attach
 * order (a PF's VFs before it, so that the PF's function clear of its VFs
 * at UNINIT meets no live VF), then all come back in attach order (the
 * PF gives its VFs their resources before they ask for them).
 *
 * "down" and "up" split a reset of every attached function in two: "down"
 * runs the DOWN step alone, as hclge does before it waits for the
 * hardware reset, so that a test can use the devices in that state;
 * "up" runs the rest (UNINIT, INIT, UP). "up" splits in two in turn:
 * "uninit" runs UNINIT alone and "init" the rest (INIT, UP), so that a
 * test can change what the reset queries answer before the re-init.
 */
static int hns_sim_reset_set(const char *val, const struct kernel_param *kp)
{
	bool down = sysfs_streq(val, "down"), up = sysfs_streq(val, "up");
	bool uninit = sysfs_streq(val, "uninit"), init = sysfs_streq(val, "init");
	unsigned int one;
	int i, ret = 0;

	mutex_lock(&hns_sim_devs_lock);
	if (down || up || uninit || init) {
		for (i = HNS_SIM_MAX_DEVS - 1; i >= 0 && !ret && !init; i--)
			if (hns_sim_devs[i])
				ret = hns_sim_reset_steps(hns_sim_devs[i],
							  down ? 0 : 1,
							  down ? 1 : 2);
		for (i = 0; i < HNS_SIM_MAX_DEVS && !ret && (up || init); i++)
			if (hns_sim_devs[i])
				ret = hns_sim_reset_steps(hns_sim_devs[i], 2, 4);
		goto out;
	}
	if (val[0] == 'f' && !kstrtouint(val + 1, 10, &one)) {
		if (one < HNS_SIM_MAX_DEVS && hns_sim_devs[one])
			ret = hns_sim_reset_steps(hns_sim_devs[one], 0, 4);
		else
			ret = -ENODEV;
		goto out;
	}
	for (i = HNS_SIM_MAX_DEVS - 1; i >= 0 && !ret; i--)
		if (hns_sim_devs[i])
			ret = hns_sim_reset_steps(hns_sim_devs[i], 0, 2);
	for (i = 0; i < HNS_SIM_MAX_DEVS && !ret; i++)
		if (hns_sim_devs[i])
			ret = hns_sim_reset_steps(hns_sim_devs[i], 2, 4);
out:
	mutex_unlock(&hns_sim_devs_lock);
	return ret;
}

static const struct kernel_param_ops hns_sim_reset_ops = {
	.set = hns_sim_reset_set,
};
module_param_cb(reset, &hns_sim_reset_ops, NULL, 0200);
MODULE_PARM_DESC(reset, "write f<index> to reset that function, down/up for the two halves of a reset of all (up: uninit/init), anything else to reset all");

/* Hands one control command to the model behind sim and waits for its
 * answer: 0, -EINVAL if the model refused it, -ETIMEDOUT without answer.
 */
static int hns_sim_control_one(struct hns_sim_dev *sim, const char *cmd,
			       size_t len)
{
	u8 buf[HNS_SIM_CTRL_CMD_LEN] = {};
	u32 seq, ack;
	int ret;

	memcpy(buf, cmd, len);
	memcpy_toio(sim->bar + HNS_SIM_CTRL_CMD, buf, sizeof(buf));
	seq = ioread32(sim->bar + HNS_SIM_CTRL_SEQ) + 1;
	iowrite32(seq, sim->bar + HNS_SIM_CTRL_SEQ);
	ret = readl_poll_timeout(sim->bar + HNS_SIM_CTRL_ACK, ack, ack == seq,
				 100, HNS_SIM_CTRL_TIMEOUT_US);
	if (ret)
		return ret;
	return ioread32(sim->bar + HNS_SIM_CTRL_RESULT) ? -EINVAL : 0;
}

/* Writing a fault to /sys/module/hns_sim/parameters/fault arms it in the
 * model of every attached function, in hns-sim's --fault syntax
 * (OPCODE:RETVAL|timeout[:once|always], mbx:CMD:STATUS[:once|always]);
 * "clear" disarms them all.
 */
static int hns_sim_fault_set(const char *val, const struct kernel_param *kp)
{
	size_t len = strcspn(val, "\n");
	int i, ret = 0;

	if (!len || len >= HNS_SIM_CTRL_CMD_LEN)
		return -EINVAL;
	mutex_lock(&hns_sim_devs_lock);
	for (i = 0; i < HNS_SIM_MAX_DEVS && !ret; i++)
		if (hns_sim_devs[i])
			ret = hns_sim_control_one(hns_sim_devs[i], val, len);
	mutex_unlock(&hns_sim_devs_lock);
	return ret;
}

static const struct kernel_param_ops hns_sim_fault_ops = {
	.set = hns_sim_fault_set,
};
module_param_cb(fault, &hns_sim_fault_ops, NULL, 0200);
MODULE_PARM_DESC(fault, "write a fault to arm it in the model, or clear");

/*
 * Writing "f<index>:down" or "f<index>:up" to
 * /sys/module/hns_sim/parameters/link takes that function's port down or
 * up as a cable would: the model's port first (control command link:down
 * or link:up, so the engine stops or resumes carrying its traffic), then
 * what hclge's link poll does when the MAC link changes
 * (hclge_update_link_status): the NIC side's carrier (hns3's
 * link_status_change; only while the netdev is open) and the RoCE
 * client's link_status_change.
 */
static int hns_sim_link_set(const char *val, const struct kernel_param *kp)
{
	size_t len = strcspn(val, "\n");
	struct hns_sim_dev *sim;
	const char *cmd;
	char buf[16];
	unsigned int one;
	char *colon;
	bool up;
	int ret;

	if (len >= sizeof(buf) || val[0] != 'f')
		return -EINVAL;
	memcpy(buf, val, len);
	buf[len] = '\0';
	colon = strchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (!strcmp(colon + 1, "up"))
		up = true;
	else if (!strcmp(colon + 1, "down"))
		up = false;
	else
		return -EINVAL;
	if (kstrtouint(buf + 1, 10, &one) || one >= HNS_SIM_MAX_DEVS)
		return -EINVAL;

	mutex_lock(&hns_sim_devs_lock);
	sim = hns_sim_devs[one];
	if (!sim) {
		ret = -ENODEV;
		goto out;
	}
	cmd = up ? "link:up" : "link:down";
	ret = hns_sim_control_one(sim, cmd, strlen(cmd));
	if (ret)
		goto out;
	WRITE_ONCE(sim->link_down, !up);
	if (!up)
		netif_carrier_off(sim->netdev);
	else if (netif_running(sim->netdev))
		netif_carrier_on(sim->netdev);
	if (sim->roce_inited && sim->roce.client &&
	    sim->roce.client->ops->link_status_change)
		sim->roce.client->ops->link_status_change(&sim->roce, up);
	dev_info(&sim->pdev->dev, "hns-sim: link %s\n", up ? "up" : "down");
out:
	mutex_unlock(&hns_sim_devs_lock);
	return ret;
}

static const struct kernel_param_ops hns_sim_link_ops = {
	.set = hns_sim_link_set,
};
module_param_cb(link, &hns_sim_link_ops, NULL, 0200);
MODULE_PARM_DESC(link, "write f<index>:down or f<index>:up to take that function's port down or up");

static const struct net_device_ops hns_sim_netdev_ops = {
	.ndo_open = hns_sim_open,
	.ndo_stop = hns_sim_stop,
	.ndo_start_xmit = hns_sim_xmit,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_set_mac_address = eth_mac_addr,
};

/*
 * The PCI revision the model gives this function (hns-sim --personality):
 * 0x21 makes the RoCE drivers take their HIP08 paths.
 */
static u8 hns_sim_revision(void __iomem *bar)
{
	if (ioread32(bar + HNS_SIM_IDENT_MAGIC) != HNS_SIM_IDENT_MAGIC_VALUE)
		return HNS_SIM_DEFAULT_REVISION;
	return ioread32(bar + HNS_SIM_IDENT_REVISION) & 0xff;
}

/*
 * The PCI device ID the model gives this function (hns-sim --personality
 * vf): 0xa22f makes it a VF for the RoCE drivers' PCI tables.
 */
static u16 hns_sim_device(void __iomem *bar)
{
	u16 device;

	if (ioread32(bar + HNS_SIM_IDENT_MAGIC) != HNS_SIM_IDENT_MAGIC_VALUE)
		return HNS_SIM_DEVICE;
	device = ioread32(bar + HNS_SIM_IDENT_DEVICE) & 0xffff;
	return device ? device : HNS_SIM_DEVICE;
}

/*
 * The first MSI-X vector of the RoCE engine (hns-sim's roce_base_vector):
 * 0 unless the model says otherwise.
 */
static unsigned int hns_sim_base_vector(void __iomem *bar)
{
	if (ioread32(bar + HNS_SIM_IDENT_MAGIC) != HNS_SIM_IDENT_MAGIC_VALUE)
		return 0;
	return ioread32(bar + HNS_SIM_IDENT_BASE_VECTOR);
}

/*
 * An HNS3 function's BAR4 is its "mem" BAR: hclge hands its RoCE half to
 * the client as roce_mem_base (64 KiB per QPN), and with DIRECT_WQE the
 * RoCE drivers map the page of a user QP from pci_resource_start(pdev, 4)
 * + qpn * 64 KiB. The ivshmem function has no BAR4, so the window of BAR2
 * that is roce_mem_base here stands in for it. The resource is not
 * inserted into the resource tree (no parent): nothing requests or
 * releases it, and detach puts the original (empty) one back.
 */
static void hns_sim_set_dwqe_bar(struct hns_sim_dev *sim)
{
	struct pci_dev *pdev = sim->pdev;
	struct resource *res = &pdev->resource[HNS_SIM_DWQE_BAR];

	sim->orig_dwqe_bar = *res;
	memset(res, 0, sizeof(*res));
	res->name = pci_name(pdev);
	res->start = pci_resource_start(pdev, HNS_SIM_BAR) +
		     HNS_SIM_MEM_BASE_OFFSET;
	res->end = pci_resource_end(pdev, HNS_SIM_BAR);
	res->flags = pci_resource_flags(pdev, HNS_SIM_BAR);
}

/* Gives the function back its identity and its BAR4 as they were. */
static void hns_sim_restore_pdev(struct hns_sim_dev *sim)
{
	struct pci_dev *pdev = sim->pdev;

	pdev->vendor = sim->orig_vendor;
	pdev->device = sim->orig_device;
	pdev->revision = sim->orig_revision;
	pdev->resource[HNS_SIM_DWQE_BAR] = sim->orig_dwqe_bar;
}

/*
 * nic_hclge: the upstream hns3/hclge drivers take the NIC side instead
 * (run-guest.sh HNS_NIC=hclge). The glue then registers no ae_algo (hnae3
 * would hand it the ae_dev hns3 registers, before hclge) and only
 * relabels each function, leaving it unbound for hns3 to bind by its PCI
 * ID. Not reversible: the function keeps its HNS3 identity until reboot.
 */
static bool hns_sim_nic_hclge;
module_param_named(nic_hclge, hns_sim_nic_hclge, bool, 0444);
MODULE_PARM_DESC(nic_hclge, "relabel the functions for hns3/hclge and leave them unbound");

int hns_sim_glue_init(void)
{
	if (!hns_sim_nic_hclge)
		hnae3_register_ae_algo(&hns_sim_ae_algo);
	return 0;
}

void hns_sim_glue_exit(void)
{
	if (!hns_sim_nic_hclge)
		hnae3_unregister_ae_algo(&hns_sim_ae_algo);
}

/*
 * For hclge, which requests every BAR (pci_request_regions): BAR2 becomes
 * the 16 MiB register window alone and BAR4 the mem_base window after it,
 * a resource of its own in the tree, so that the two requests do not
 * overlap. Both still name the one ivshmem BAR in config space.
 */
static int hns_sim_split_bars(struct pci_dev *pdev)
{
	struct resource *bar = &pdev->resource[HNS_SIM_BAR];
	struct resource *mem = &pdev->resource[HNS_SIM_DWQE_BAR];
	resource_size_t end = bar->end;
	int ret;

	ret = adjust_resource(bar, bar->start, HNS_SIM_MEM_BASE_OFFSET);
	if (ret)
		return ret;
	memset(mem, 0, sizeof(*mem));
	mem->name = pci_name(pdev);
	mem->start = bar->start + HNS_SIM_MEM_BASE_OFFSET;
	mem->end = end;
	mem->flags = bar->flags;
	return pci_claim_resource(pdev, HNS_SIM_DWQE_BAR);
}

int hns_sim_glue_attach(struct pci_dev *pdev, void *ae_dev_space,
			unsigned int num_vectors)
{
	struct hnae3_ae_dev *ae_dev = ae_dev_space;
	struct hns_sim_dev *sim;
	u8 mac[ETH_ALEN];
	int ret, i;

	/*
	 * The ae_dev lives at the start of the Rust driver's per-device data,
	 * which is what the PCI core's drvdata points at: the RoCE driver
	 * expects pci_get_drvdata() to be the ae_dev.
	 */
	BUILD_BUG_ON(sizeof(struct hnae3_ae_dev) > HNS_SIM_AE_DEV_SPACE);
	memset(ae_dev, 0, sizeof(*ae_dev));

	sim = kzalloc_obj(*sim, GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	sim->pdev = pdev;
	sim->num_vectors = num_vectors;
	/* roce_mem_base and the BAR4 stand-in must lie inside BAR2. */
	if (pci_resource_len(pdev, HNS_SIM_BAR) <= HNS_SIM_MEM_BASE_OFFSET) {
		dev_err(&pdev->dev, "hns-sim: BAR%d of %llu bytes has no mem_base window\n",
			HNS_SIM_BAR,
			(unsigned long long)pci_resource_len(pdev, HNS_SIM_BAR));
		ret = -ENODEV;
		goto err_free;
	}
	sim->bar = pci_iomap(pdev, HNS_SIM_BAR, 0);
	if (!sim->bar) {
		ret = -ENOMEM;
		goto err_free;
	}

	sim->base_vector = hns_sim_base_vector(sim->bar);
	if (sim->base_vector >= num_vectors) {
		dev_err(&pdev->dev, "hns-sim: RoCE base vector %u of %u vectors\n",
			sim->base_vector, num_vectors);
		ret = -EINVAL;
		goto err_iounmap;
	}

	/*
	 * From now on the function is an HNS3 RoCE function of the engine
	 * the model presents: a HIP09 PF by default, a HIP08 with revision
	 * 0x21, a HIP09 VF with device 0xa22f.
	 */
	sim->orig_vendor = pdev->vendor;
	sim->orig_device = pdev->device;
	sim->orig_revision = pdev->revision;
	pdev->vendor = HNS_SIM_VENDOR;
	pdev->device = hns_sim_device(sim->bar);
	pdev->revision = hns_sim_revision(sim->bar);
	hns_sim_set_dwqe_bar(sim);
	/* Where the function sits, for the model's bond masks. */
	iowrite32(HNS_SIM_IDENT_PCI_VALID | pdev->bus->number << 8 | pdev->devfn,
		  sim->bar + HNS_SIM_IDENT_PCI);

	if (hns_sim_nic_hclge) {
		ret = hns_sim_split_bars(pdev);
		dev_info(&pdev->dev, "hns-sim: relabelled %04x:%04x rev %#x for hns3, left unbound (BARs: %d)\n",
			 pdev->vendor, pdev->device, pdev->revision, ret);
		pci_iounmap(pdev, sim->bar);
		kfree(sim);
		/* The probe fails on purpose: hns3 binds the function next. */
		return -ENODEV;
	}

	sim->netdev = alloc_etherdev(sizeof(struct hns_sim_dev *));
	if (!sim->netdev) {
		ret = -ENOMEM;
		goto err_unmap;
	}
	*(struct hns_sim_dev **)netdev_priv(sim->netdev) = sim;
	SET_NETDEV_DEV(sim->netdev, &pdev->dev);
	sim->netdev->netdev_ops = &hns_sim_netdev_ops;
	sim->netdev->mtu = ETH_DATA_LEN;
	/* A stable locally administered MAC per PCI slot. */
	mac[0] = 0x02;
	mac[1] = 0x19;
	mac[2] = 0xe5;
	mac[3] = pdev->bus->number;
	mac[4] = PCI_SLOT(pdev->devfn);
	mac[5] = PCI_FUNC(pdev->devfn);
	eth_hw_addr_set(sim->netdev, mac);
	ret = register_netdev(sim->netdev);
	if (ret)
		goto err_netdev;
	rtnl_lock();
	ret = dev_open(sim->netdev, NULL);
	rtnl_unlock();
	if (ret)
		goto err_unregister;

	sim->ae_dev = ae_dev;
	ae_dev->pdev = pdev;
	ae_dev->priv = sim;
	ret = hnae3_register_ae_dev(ae_dev);
	if (ret)
		goto err_unregister;
	mutex_lock(&hns_sim_devs_lock);
	for (i = 0; i < HNS_SIM_MAX_DEVS; i++) {
		if (!hns_sim_devs[i]) {
			hns_sim_devs[i] = sim;
			break;
		}
	}
	mutex_unlock(&hns_sim_devs_lock);
	dev_info(&pdev->dev, "hns-sim: %s%s RoCE function, netdev %s, %u vectors\n",
		 pdev->revision == HNS_SIM_DEFAULT_REVISION ? "HIP09" :
		 pdev->revision == HNS_SIM_REVISION_HIP08 ? "HIP08" : "unknown-revision",
		 pdev->device == HNS_SIM_DEVICE_VF ? " VF" : "",
		 netdev_name(sim->netdev), num_vectors);
	if (sim->base_vector)
		dev_info(&pdev->dev, "hns-sim: RoCE vectors from %u\n",
			 sim->base_vector);
	return 0;

err_unregister:
	unregister_netdev(sim->netdev);
err_netdev:
	free_netdev(sim->netdev);
err_unmap:
	hns_sim_restore_pdev(sim);
err_iounmap:
	pci_iounmap(pdev, sim->bar);
err_free:
	kfree(sim);
	return ret;
}

void hns_sim_glue_detach(struct pci_dev *pdev)
{
	struct hnae3_ae_dev *ae_dev = pci_get_drvdata(pdev);
	struct hns_sim_dev *sim;
	int i;

	if (!ae_dev)
		return;
	sim = ae_dev->priv;
	mutex_lock(&hns_sim_devs_lock);
	for (i = 0; i < HNS_SIM_MAX_DEVS; i++)
		if (hns_sim_devs[i] == sim)
			hns_sim_devs[i] = NULL;
	mutex_unlock(&hns_sim_devs_lock);
	hnae3_unregister_ae_dev(ae_dev);
	unregister_netdev(sim->netdev);
	free_netdev(sim->netdev);
	/* Give the function back as the ivshmem device it is, so a new
	 * hns_sim instance can bind it again.
	 */
	hns_sim_restore_pdev(sim);
	pci_iounmap(pdev, sim->bar);
	kfree(sim);
}
