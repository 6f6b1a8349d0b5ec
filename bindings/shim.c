// SPDX-License-Identifier: GPL-2.0
/*
 * C shim of hns_roce_rs. Everything that decides something lives in Rust;
 * this file only adapts C-only interfaces (see shim.h).
 */
#include <linux/interrupt.h>
#include <linux/irq_poll.h>
#include <linux/module.h>
#include <linux/ratelimit.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iter.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>
#include "shim.h"

static irqreturn_t rdma_shim_irq(int irq, void *cookie)
{
	return rdma_rs_irq(cookie) ? IRQ_HANDLED : IRQ_NONE;
}

int rdma_shim_request_irq(unsigned int irq, const char *name, void *cookie)
{
	return request_irq(irq, rdma_shim_irq, 0, name, cookie);
}

/*
 * An interrupt whose handler runs as a BH work item on system_bh_wq (the
 * CEQs, as hns_roce_v2_ceq_int and hns_roce_ceq_work): the hard interrupt
 * only queues the work, which calls rdma_rs_irq(cookie) in softirq context.
 * A work item never runs on two CPUs at once, so the handler does not nest.
 */
struct rdma_shim_bh_irq {
	struct work_struct work;
	void *cookie;
};

static void rdma_shim_ceq_work(struct work_struct *work)
{
	struct rdma_shim_bh_irq *b = container_of(work, struct rdma_shim_bh_irq, work);

	rdma_rs_irq(b->cookie);
}

static irqreturn_t rdma_shim_bh_irq(int irq, void *dev_id)
{
	struct rdma_shim_bh_irq *b = dev_id;

	queue_work(system_bh_wq, &b->work);
	return IRQ_HANDLED;
}

int rdma_shim_request_bh_irq(unsigned int irq, const char *name, void *cookie,
			    void **bh)
{
	struct rdma_shim_bh_irq *b;
	int ret;

	b = kzalloc_obj(*b);
	if (!b)
		return -ENOMEM;
	INIT_WORK(&b->work, rdma_shim_ceq_work);
	b->cookie = cookie;
	ret = request_irq(irq, rdma_shim_bh_irq, 0, name, b);
	if (ret) {
		kfree(b);
		return ret;
	}
	*bh = b;
	return 0;
}

/* Frees the line, then cancels the work or waits for its run to end. */
void rdma_shim_free_bh_irq(unsigned int irq, void *bh)
{
	struct rdma_shim_bh_irq *b = bh;

	free_irq(irq, b);
	cancel_work_sync(&b->work);
	kfree(b);
}

bool rdma_shim_irqs_disabled(void)
{
	return irqs_disabled();
}

/*
 * reinit_completion() under the completion's wait-queue lock, which every
 * complete() takes: the count is never cleared in the middle of an
 * increment.
 */
void rdma_shim_reinit_completion(struct completion *x)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&x->wait.lock, flags);
	reinit_completion(x);
	raw_spin_unlock_irqrestore(&x->wait.lock, flags);
}

/* The driver's ordered workqueue for event and flush work (irq_workq). */
struct workqueue_struct *rdma_shim_alloc_wq(const char *name)
{
	return alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM, name);
}

/* --- ib_device ------------------------------------------------------------
 * Containers of the RDMA core objects. The Rust side keeps its state behind
 * `rs` and numbers (pdn, uar index) in these; the ops below adapt the core's
 * calling conventions and call the driver's rdma_shim_ib_ops for every
 * decision. The data path and the device, CQ, SRQ and MR verbs are the
 * driver's own ib_device_ops (the tables rdma_shim_ib_ops points to), with
 * the containers they read in shim.h.
 */
#include <linux/if_vlan.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

static struct rdma_shim_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rdma_shim_dev, ibdev);
}

/* Calls the driver's op on the device's state. */
#define RDMA_RS_OP(sdev, op, ...) ((sdev)->ops->op((sdev)->rs, ##__VA_ARGS__))

struct rdma_shim_mmap {
	struct rdma_user_mmap_entry rdma_entry;
	u64 address;
};

void rdma_shim_netdev_port(struct net_device *dev, u32 *mtu, u32 *state,
			   u8 *mac)
{
	*mtu = iboe_get_mtu(dev->mtu);
	*state = ib_get_curr_port_state(dev);
	memcpy(mac, dev->dev_addr, ETH_ALEN);
}

static enum rdma_link_layer rdma_shim_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

void rdma_shim_set_node_desc(struct ib_device *ibdev, const char *desc)
{
	unsigned long flags;

	spin_lock_irqsave(&to_sdev(ibdev)->sm_lock, flags);
	memcpy(ibdev->node_desc, desc, IB_DEVICE_NODE_DESC_MAX);
	spin_unlock_irqrestore(&to_sdev(ibdev)->sm_lock, flags);
}

/*
 * The doorbell page of a new user context: at pgoff 0, the offset libhns
 * maps.
 */
int rdma_shim_uctx_db_insert(struct ib_ucontext *uctx, u64 address)
{
	struct rdma_shim_uctx *ctx = container_of(uctx, struct rdma_shim_uctx,
						 ibuctx);
	struct rdma_shim_mmap *entry;
	int ret;

	entry = kzalloc_obj(*entry);
	if (!entry)
		return -ENOMEM;
	entry->address = address;
	ret = rdma_user_mmap_entry_insert_exact(uctx, &entry->rdma_entry,
						PAGE_SIZE, 0);
	if (ret) {
		kfree(entry);
		return ret;
	}
	ctx->db_entry = &entry->rdma_entry;
	return 0;
}

void rdma_shim_uctx_db_remove(struct ib_ucontext *uctx)
{
	struct rdma_shim_uctx *ctx = container_of(uctx, struct rdma_shim_uctx,
						 ibuctx);

	rdma_user_mmap_entry_remove(ctx->db_entry);
	ctx->db_entry = NULL;
}

static int rdma_shim_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct rdma_shim_mmap *entry;
	int ret;

	if (RDMA_RS_OP(to_sdev(uctx->device), mmap_refused))
		return -EPERM;
	rdma_entry = rdma_user_mmap_entry_get_pgoff(uctx, vma->vm_pgoff);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct rdma_shim_mmap, rdma_entry);
	ret = rdma_user_mmap_io(uctx, vma, entry->address >> PAGE_SHIFT,
				rdma_entry->npages * PAGE_SIZE,
				pgprot_device(vma->vm_page_prot), rdma_entry);
	rdma_user_mmap_entry_put(rdma_entry);
	return ret;
}

static void rdma_shim_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	kfree(container_of(rdma_entry, struct rdma_shim_mmap, rdma_entry));
}

struct rdma_user_mmap_entry *rdma_shim_mmap_insert(struct ib_ucontext *uctx,
						  u64 address, size_t len,
						  u64 *key)
{
	struct rdma_shim_mmap *entry;

	entry = kzalloc_obj(*entry);
	if (!entry)
		return NULL;
	entry->address = address;
	/* Offset 0 belongs to the context's doorbell page. */
	if (rdma_user_mmap_entry_insert_range(uctx, &entry->rdma_entry, len, 1,
					      U32_MAX)) {
		kfree(entry);
		return NULL;
	}
	*key = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return &entry->rdma_entry;
}

void rdma_shim_mmap_remove(struct rdma_user_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(entry);
}

/* The enum argument is why this trampoline exists (kCFI typing, as for
 * req_notify_cq): the driver's function takes the mask as an integer.
 */
static int rdma_shim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			       enum ib_srq_attr_mask mask,
			       struct ib_udata *udata)
{
	return to_sdev(ibsrq->device)->ops->modify_srq(ibsrq, attr, (u32)mask,
						       udata);
}

/* The enum argument is why this trampoline exists (kCFI typing, as for
 * req_notify_cq): the driver's function takes the type as an integer.
 */
static struct ib_mr *rdma_shim_alloc_mr(struct ib_pd *pd,
				       enum ib_mr_type mr_type, u32 max_num_sg)
{
	return to_sdev(pd->device)->ops->alloc_mr(pd, (u32)mr_type, max_num_sg);
}

/* --- resource tracking: netlink's inline nest helpers ------------------ */
struct nlattr *rdma_shim_nla_nest_start(struct sk_buff *msg, int type)
{
	return nla_nest_start(msg, type);
}

void rdma_shim_nla_nest_end(struct sk_buff *msg, struct nlattr *nest)
{
	nla_nest_end(msg, nest);
}

void rdma_shim_nla_nest_cancel(struct sk_buff *msg, struct nlattr *nest)
{
	nla_nest_cancel(msg, nest);
}

/* The enum argument is why this trampoline exists (kCFI typing, as for
 * reset_notify): the driver's function takes the flags as an integer.
 */
static int rdma_shim_req_notify_cq(struct ib_cq *ibcq,
				  enum ib_cq_notify_flags flags)
{
	return to_sdev(ibcq->device)->ops->req_notify_cq(ibcq, (u32)flags);
}

/* The mmap entry: the mapping, its result handed to the driver (which
 * counts a failure anywhere in it, the shim's own checks included).
 */
static int rdma_shim_mmap_counted(struct ib_ucontext *uctx,
				  struct vm_area_struct *vma)
{
	return RDMA_RS_OP(to_sdev(uctx->device), mmap_done,
			  rdma_shim_mmap(uctx, vma));
}

static const struct ib_device_ops rdma_shim_dev_ops = {
	.owner = THIS_MODULE,
	.uverbs_abi_ver = 1,

	.req_notify_cq = rdma_shim_req_notify_cq,
	.get_link_layer = rdma_shim_link_layer,
	.mmap = rdma_shim_mmap_counted,
	.mmap_free = rdma_shim_mmap_free,

	INIT_RDMA_OBJ_SIZE(ib_ah, rdma_shim_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, rdma_shim_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, rdma_shim_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, rdma_shim_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rdma_shim_uctx, ibuctx),
};

static const struct ib_device_ops rdma_shim_xrcd_size = {
	INIT_RDMA_OBJ_SIZE(ib_xrcd, rdma_shim_xrcd, ibxrcd),
};


static const struct ib_device_ops rdma_shim_frmr_ops = {
	.alloc_mr = rdma_shim_alloc_mr,
};

static const struct ib_device_ops rdma_shim_srq_ops = {
	.modify_srq = rdma_shim_modify_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, rdma_shim_srq, ibsrq),
};

struct ib_device *rdma_shim_alloc_ibdev(void *rs,
				      const struct rdma_shim_ib_ops *ops)
{
	struct rdma_shim_dev *sdev = ib_alloc_device(rdma_shim_dev, ibdev);

	if (!sdev)
		return NULL;
	sdev->rs = rs;
	sdev->ops = ops;
	spin_lock_init(&sdev->sm_lock);
	return &sdev->ibdev;
}

void rdma_shim_dealloc_ibdev(struct ib_device *ibdev)
{
	ib_dealloc_device(ibdev);
}

int rdma_shim_register_ibdev(struct ib_device *ibdev,
			    const struct rdma_shim_reg *reg)
{
	int ret;

	to_sdev(ibdev)->core_cap_flags = reg->core_cap_flags;
	to_sdev(ibdev)->max_mad_size = reg->max_mad_size;
	to_sdev(ibdev)->pkey = reg->pkey;
	to_sdev(ibdev)->stats = reg->stats;
	to_sdev(ibdev)->num_stats = reg->num_stats;
	ibdev->node_type = reg->node_type;
	ibdev->dev.parent = reg->parent;
	ibdev->phys_port_cnt = 1;
	ibdev->local_dma_lkey = reg->local_dma_lkey;
	ibdev->num_comp_vectors = reg->num_comp_vectors;
	memcpy(&ibdev->node_guid, reg->node_guid, sizeof(ibdev->node_guid));

	/* The driver's data-path ops go first (the core keeps the first op
	 * it is given of each name).
	 */
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->datapath);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->qp_ah);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->dev);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->cq);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->mr);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->pd);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->gid);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->uctx);
	ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->res);
	if (reg->srq) {
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->srq_datapath);
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->srq);
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->res_srq);
		ib_set_device_ops(ibdev, &rdma_shim_srq_ops);
	}
	if (reg->xrc) {
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->xrcd);
		ib_set_device_ops(ibdev, &rdma_shim_xrcd_size);
	}
	if (reg->num_stats)
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->hw_stats);
	if (reg->rereg)
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->mr_rereg);
	if (reg->frmr) {
		ib_set_device_ops(ibdev, to_sdev(ibdev)->ops->mr_frmr);
		ib_set_device_ops(ibdev, &rdma_shim_frmr_ops);
	}
	ib_set_device_ops(ibdev, &rdma_shim_dev_ops);
	ibdev->ops.driver_id = reg->driver_id;
	ibdev->ops.uverbs_no_driver_id_binding = reg->no_driver_id_binding;
	if (!reg->virt_dma)
		dma_set_max_seg_size(reg->parent, SZ_2G);

	to_sdev(ibdev)->netdev = reg->netdev;
	to_sdev(ibdev)->owner = reg->owner;
	to_sdev(ibdev)->bond_cap = reg->bond_cap;
	to_sdev(ibdev)->vf = reg->vf;
	if (reg->bond_active) {
		ret = rdma_shim_bond_set_netdev(ibdev, reg->bond_active,
					       reg->bond_ab);
		if (ret)
			return ret;
		return ib_register_device(ibdev, reg->name, reg->parent);
	}
	ret = ib_device_set_netdev(ibdev, reg->netdev, 1);
	if (ret)
		return ret;
	return ib_register_device(ibdev, reg->name,
				  reg->virt_dma ? NULL : reg->parent);
}

/* The initial namespace's loopback device, which is never unregistered. */
struct net_device *rdma_shim_loopback_netdev(void)
{
	return init_net.loopback_dev;
}

bool rdma_shim_swap_last_port_state(struct ib_device *ibdev, u32 state)
{
	bool changed;

	/* port_data is indexed by the 0-based port here, as in the C driver:
	 * a slot the RDMA core does not use for port 1.
	 */
	write_lock_irq(&ibdev->cache_lock);
	changed = ibdev->port_data[0].cache.last_port_state != state;
	ibdev->port_data[0].cache.last_port_state = state;
	write_unlock_irq(&ibdev->cache_lock);
	return changed;
}

/* --- RoCE bonding ----------------------------------------------------------
 * The kernel objects a Rust bond group works with (see shim.h).
 */
#include <net/bonding.h>
#include <net/lag.h>

void rdma_shim_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void rdma_shim_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

void rdma_shim_netdev_lag(const struct net_device *dev, bool *master,
			 bool *port, bool *unregistering)
{
	*master = netif_is_lag_master(dev);
	*port = netif_is_lag_port(dev);
	*unregistering = dev->reg_state >= NETREG_UNREGISTERING;
}

void rdma_shim_bond_link(struct net_device *dev, bool *txable,
			bool *port_active)
{
	*txable = net_lag_port_dev_txable(dev);
	*port_active = ib_get_curr_port_state(dev) == IB_PORT_ACTIVE;
}

bool rdma_shim_bond_active_slave(struct net_device *upper,
				 struct net_device **active)
{
	/* Only a bond master's private data is a struct bonding. */
	if (!netif_is_bond_master(upper))
		return false;
	rcu_read_lock();
	*active = bond_option_active_slave_get_rcu(netdev_priv(upper));
	rcu_read_unlock();
	return true;
}

int rdma_shim_bond_set_netdev(struct ib_device *ibdev,
			     struct net_device *active, bool ab)
{
	struct net_device *old;
	int ret = 0;

	old = ib_device_get_netdev(ibdev, 1);
	if (old == active)
		goto out;
	ret = ib_device_set_netdev(ibdev, active, 1);
	if (ret) {
		dev_err(ibdev->dev.parent, "failed to set netdev for bond.\n");
		goto out;
	}
	if (ab) {
		if (old)
			roce_del_all_netdev_gids(ibdev, 1, old);
		rdma_roce_rescan_port(ibdev, 1);
	}
out:
	dev_put(old);
	return ret;
}

void rdma_shim_disassociate_mmaps(struct ib_device *ibdev)
{
	rdma_user_mmap_disassociate(ibdev);
}

void rdma_shim_unregister_ibdev(struct ib_device *ibdev)
{
	ib_unregister_device(ibdev);
}

/* --- user memory --------------------------------------------------------- */

u32 rdma_shim_umem_read_u32(struct ib_umem *umem, size_t offset)
{
	const void *page = page_address(sg_page(umem->sgt_append.sgt.sgl));

	return READ_ONCE(*(const u32 *)(page + offset));
}

void rdma_shim_cond_resched(void)
{
	cond_resched();
}
