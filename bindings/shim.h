/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The thin C side of the rdma layer: what Rust cannot or must not do itself
 * (containers of the RDMA core's objects, ops tables with enum-typed
 * callbacks, static inline helpers). Shared by shim.c and bindgen; the
 * hnae3 client is hnae3_shim.h's.
 */
#ifndef RDMA_SHIM_H
#define RDMA_SHIM_H

#include <linux/types.h>

/*
 * Interrupts: the handler is C (irq_handler_t typing) and calls
 * rdma_rs_irq(cookie), which returns true when it handled something.
 */
int rdma_shim_request_irq(unsigned int irq, const char *name, void *cookie);
/*
 * The same, the handler run as BH work on system_bh_wq (the hard interrupt
 * queues it); *bh is the line's dev_id for rdma_shim_free_bh_irq, which
 * frees the line and then cancels the work or waits for its run.
 */
int rdma_shim_request_bh_irq(unsigned int irq, const char *name, void *cookie,
			    void **bh);
void rdma_shim_free_bh_irq(unsigned int irq, void *bh);
/* Implemented in Rust (rdma/irq.rs). */
bool rdma_rs_irq(void *cookie);

/* Whether this CPU runs with interrupts disabled (the locks' KUnit case). */
bool rdma_shim_irqs_disabled(void);

/* --- ib_device ---------------------------------------------------------- */
#include <rdma/ib_verbs.h>

/*
 * The shim's containers of the RDMA core's objects. The Rust side keeps its
 * state behind the `rs` pointers; the data-path ops (rdma_shim_ib_ops'
 * `datapath`) reach it from the core's object through these.
 */
struct rdma_shim_dev {
	struct ib_device ibdev;
	void *rs;
	const struct rdma_shim_ib_ops *ops;
	spinlock_t sm_lock;
	u32 core_cap_flags;
	u32 max_mad_size;
	u16 pkey;
	const struct rdma_stat_desc *stats;
	u32 num_stats;
	struct net_device *netdev;
	void *owner;
	bool bond_cap;
	bool vf;
};

/* A CQ: the Rust CQ behind `rs_cq`, its number for the XRC SRQs on it. */
struct rdma_shim_cq {
	struct ib_cq ibcq;
	void *rs_cq;
	u32 cqn;
};

/* A QP: the Rust QP behind `rs_qp`. */
struct rdma_shim_qp {
	struct ib_qp ibqp;
	void *rs_qp;
};

/* An AH: room for the Rust address vector (rdma/ib/ah.rs checks it fits). */
struct rdma_shim_ah {
	struct ib_ah ibah;
	u64 av[6];
};

/* A user context: the Rust state behind `rs_uctx`, its UAR index, the
 * configuration agreed with libhns and the doorbell page's mmap entry.
 */
struct rdma_shim_uctx {
	struct ib_ucontext ibuctx;
	struct rdma_user_mmap_entry *db_entry;
	void *rs_uctx;
	u32 uar_index;
	u32 config;
};

/* A PD and an XRCD: their numbers, written by the driver's alloc ops. */
struct rdma_shim_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct rdma_shim_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

/* An SRQ: the Rust SRQ behind `rs_srq`, its number for the QPs on it. */
struct rdma_shim_srq {
	struct ib_srq ibsrq;
	void *rs_srq;
	u32 srqn;
};

struct ib_device;
struct ib_device_attr;
struct ib_port_attr;
struct ib_ucontext;
struct ib_pd;
struct ib_xrcd;
struct ib_mr;
struct scatterlist;
struct ib_udata;
struct net_device;
struct device;
struct rdma_user_mmap_entry;
struct rdma_shim_ib_ops;

/* Records state as the port's last LAG state (kept where the C driver
 * keeps it, port_data[0].cache, under cache_lock): whether it changed.
 */
bool rdma_shim_swap_last_port_state(struct ib_device *ibdev, u32 state);
/* What a port reads of a net device: iboe_get_mtu() of its MTU (an enum
 * ib_mtu or 0), ib_get_curr_port_state() and its ETH_ALEN-byte MAC.
 */
void rdma_shim_netdev_port(struct net_device *dev, u32 *mtu, u32 *state,
			   u8 *mac);
/* Copies a node description (IB_DEVICE_NODE_DESC_MAX bytes) under the
 * device's lock.
 */
void rdma_shim_set_node_desc(struct ib_device *ibdev, const char *desc);

/* Registration parameters. */
struct rdma_shim_reg {
	/* The parent device, NULL for a software device (no bus). */
	struct device *parent;
	struct net_device *netdev;
	/* The device's driver id (RDMA_DRIVER_*); whether it is kept from
	 * rdma-core (uverbs_no_driver_id_binding: rdma-core then matches a
	 * provider by the device's modalias); whether the device does DMA
	 * through parent or takes kernel virtual addresses in its SGEs (no
	 * DMA device: ib_uses_virt_dma).
	 */
	u32 driver_id;
	bool no_driver_id_binding;
	bool virt_dma;
	/* The bus binding's function behind the device, its bond capability
	 * and whether it is a VF (what another function's bond group reads
	 * of this device, hnae3_shim.h).
	 */
	void *owner;
	bool bond_cap;
	bool vf;
	/* The device's name format (ib_register_device), node type
	 * (enum rdma_node_type) and node GUID (big endian).
	 */
	const char *name;
	u32 node_type;
	u8 node_guid[8];
	/* Registers as a bonded device, its port on bond_active (see
	 * rdma_shim_bond_set_netdev) instead of on netdev, when not NULL.
	 */
	bool bond_ab;
	struct net_device *bond_active;
	u32 num_comp_vectors;
	u32 local_dma_lkey;
	/* What get_port_immutable and query_pkey answer (the port's fixed
	 * capabilities, its one P_Key).
	 */
	u32 core_cap_flags;
	u32 max_mad_size;
	u16 pkey;
	bool xrc;
	bool srq;
	/* The hardware counters (NULL and 0: none), static. */
	const struct rdma_stat_desc *stats;
	u32 num_stats;
	bool frmr;
	bool rereg;
};

/* An MR: the Rust MR behind `rs_mr` (Rust allocates and frees it: the
 * core does not for MRs).
 */
struct rdma_shim_mr {
	struct ib_mr ibmr;
	void *rs_mr;
};

struct ib_device *rdma_shim_alloc_ibdev(void *rs,
				      const struct rdma_shim_ib_ops *ops);
void rdma_shim_dealloc_ibdev(struct ib_device *ibdev);
int rdma_shim_register_ibdev(struct ib_device *ibdev,
			    const struct rdma_shim_reg *reg);
void rdma_shim_unregister_ibdev(struct ib_device *ibdev);
struct net_device *rdma_shim_loopback_netdev(void);
void rdma_shim_disassociate_mmaps(struct ib_device *ibdev);

/*
 * RoCE bonding: what rdma/hnae3/bond.rs reads of net devices. Net device pointers
 * handed to Rust are for comparison and for passing back while the device
 * is known to live (as the C driver keeps them), never dereferenced by Rust.
 */
void rdma_shim_dev_hold(struct net_device *dev);
void rdma_shim_dev_put(struct net_device *dev);
/* netif_is_lag_master(), netif_is_lag_port() and whether dev is being
 * unregistered.
 */
void rdma_shim_netdev_lag(const struct net_device *dev, bool *master,
			 bool *port, bool *unregistering);
/* net_lag_port_dev_txable() and ib_get_curr_port_state() == ACTIVE. */
void rdma_shim_bond_link(struct net_device *dev, bool *txable,
			bool *port_active);
/* Whether upper is a bond master; if so *active is the bonding driver's
 * active slave (NULL: none), read under RCU, no reference kept.
 */
bool rdma_shim_bond_active_slave(struct net_device *upper,
				 struct net_device **active);
/* Points the port at active, unless it is there; with ab (active-backup)
 * the old netdev's GIDs then go and the port is rescanned.
 */
int rdma_shim_bond_set_netdev(struct ib_device *ibdev,
			     struct net_device *active, bool ab);
void rdma_shim_reinit_completion(struct completion *x);
struct workqueue_struct *rdma_shim_alloc_wq(const char *name);

/* --- resource tracking (rdma res show) ----------------------------------- */
/* VLAN ids from here on are none (the kernel's VLAN_N_VID). */
#define RDMA_SHIM_VLAN_N_VID VLAN_N_VID
/* Netlink nesting of the restrack ops (inline in net/netlink.h). */
struct nlattr *rdma_shim_nla_nest_start(struct sk_buff *msg, int type);
void rdma_shim_nla_nest_end(struct sk_buff *msg, struct nlattr *nest);
void rdma_shim_nla_nest_cancel(struct sk_buff *msg, struct nlattr *nest);

/* The verbs and queries of an ib_device, implemented in Rust: tables of
 * ib_device_ops the registration sets, and entry points the shim's ops
 * call; rs is the driver state given to rdma_shim_alloc_ibdev, the object
 * pointers what the create calls returned.
 */
struct rdma_shim_ib_ops {
	/* The data path, called by the RDMA core without the shim:
	 * post_send, post_recv, poll_cq, drain_sq and drain_rq, and the SRQ's
	 * post_srq_recv (set only with SRQs). They find the driver's objects
	 * through the containers below.
	 */
	const struct ib_device_ops *datapath;
	const struct ib_device_ops *srq_datapath;
	/* The QP and AH verbs, called by the RDMA core without the shim. */
	const struct ib_device_ops *qp_ah;
	/* The device and port verbs but get_link_layer (an enum return). */
	const struct ib_device_ops *dev;
	/* The CQ verbs (create_cq, destroy_cq, modify_cq), called by the RDMA
	 * core without the shim.
	 */
	const struct ib_device_ops *cq;
	/* The SRQ verbs but modify_srq (set with SRQs only). */
	const struct ib_device_ops *srq;
	/* The core's modify_srq through a shim function (an enum argument,
	 * as req_notify_cq); mask is that enum's value.
	 */
	int (*modify_srq)(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			  u32 mask, struct ib_udata *udata);
	/* The MR verbs: get_dma_mr, reg_user_mr, dereg_mr; rereg_user_mr
	 * (set with the REREG_MR capability only); map_mr_sg (with
	 * fast-register MRs only).
	 */
	const struct ib_device_ops *mr;
	const struct ib_device_ops *mr_rereg;
	const struct ib_device_ops *mr_frmr;
	/* The restrack ops (fill_res_{cq,qp,mr}_entry and their _raw); res_srq
	 * the SRQ's (set with SRQs only).
	 */
	const struct ib_device_ops *res;
	const struct ib_device_ops *res_srq;
	/* The core's alloc_mr through a shim function (an enum argument);
	 * mr_type is that enum's value.
	 */
	struct ib_mr *(*alloc_mr)(struct ib_pd *pd, u32 mr_type,
				  u32 max_num_sg);
	/* The PD and the XRCD verbs (the latter set only with XRC), called
	 * by the RDMA core without the shim.
	 */
	const struct ib_device_ops *pd;
	const struct ib_device_ops *xrcd;
	/* add_gid and del_gid, called by the RDMA core without the shim. */
	const struct ib_device_ops *gid;
	/* The user context verbs, called by the RDMA core without the shim:
	 * they fill struct rdma_shim_uctx, the doorbell page's entry through
	 * rdma_shim_uctx_db_insert.
	 */
	const struct ib_device_ops *uctx;
	/* The core's req_notify_cq through a shim function: its prototype has
	 * an enum, whose kCFI type no Rust function can have; flags is that
	 * enum's value.
	 */
	int (*req_notify_cq)(struct ib_cq *ibcq, u32 flags);
	/* The device refuses user mappings of its pages now (EPERM). */
	bool (*mmap_refused)(void *rs);
	/* The result of an mmap (0 or a negative errno), returned: the
	 * driver counts a failure.
	 */
	int (*mmap_done)(void *rs, int ret);
	/* alloc_hw_port_stats and get_hw_stats (set with counters only). */
	const struct ib_device_ops *hw_stats;
};

/* --- user memory --------------------------------------------------------- */
struct ib_umem;

/*
 * A device range of @len bytes at bus @address the process may map, at an
 * mmap offset past the doorbell page's (returned in *key); NULL when out of
 * memory or offsets. rdma_shim_mmap_remove withdraws it.
 */
struct rdma_user_mmap_entry *rdma_shim_mmap_insert(struct ib_ucontext *uctx,
						  u64 address, size_t len,
						  u64 *key);
void rdma_shim_mmap_remove(struct rdma_user_mmap_entry *entry);
/* The doorbell page of a new user context, at bus @address: mapped at
 * offset 0 (0 or the errno); rdma_shim_uctx_db_remove withdraws it.
 */
int rdma_shim_uctx_db_insert(struct ib_ucontext *uctx, u64 address);
void rdma_shim_uctx_db_remove(struct ib_ucontext *uctx);
/* The u32 at byte offset (below PAGE_SIZE - 3) of the first pinned page. */
u32 rdma_shim_umem_read_u32(struct ib_umem *umem, size_t offset);
void rdma_shim_cond_resched(void);

#endif /* RDMA_SHIM_H */
