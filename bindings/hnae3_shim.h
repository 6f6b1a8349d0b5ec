/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hnae3 half of hns_roce_rs's C shim: the RoCE client of HNS's bus
 * (hnae3) and what the driver reads and asks of an hnae3 function. Linked
 * into hns_roce_rs only; the rdma layer's own shim is shim.h.
 */
#ifndef HNAE3_SHIM_H
#define HNAE3_SHIM_H

#include <linux/types.h>

struct hnae3_handle;
struct net_device;

/* hnae3 RoCE client: the Rust side's entry points, one table per module;
 * each gets back the ctx given at registration.
 * reset_notify gets the hnae3_reset_notify_type as an int.
 */
struct hnae3_shim_client_ops {
	int (*init_instance)(const void *ctx, struct hnae3_handle *handle);
	void (*uninit_instance)(const void *ctx, struct hnae3_handle *handle,
				bool reset);
	void (*link_status_change)(const void *ctx,
				   struct hnae3_handle *handle, bool up);
	int (*reset_notify)(const void *ctx, struct hnae3_handle *handle,
			    int type);
	/* A module is about to start: 0, or the errno that refuses it. */
	int (*module_coming)(const void *ctx, const char *name);
};

/*
 * Registers the RoCE client; its callbacks go to ops, with ctx, until
 * unregistered. 0 or hnae3_register_client's errno; *listed says whether
 * the client is on hnae3's list afterwards (hnae3 keeps one client per
 * type and answers 0 without listing a second one).
 */
int hnae3_shim_register_client(const struct hnae3_shim_client_ops *ops,
			       const void *ctx, bool *listed);
/* Unregisters the client (its uninit_instance runs for every function
 * first); then hnae3_shim_unwatch_modules, which also undoes a failed or
 * refused registration.
 */
void hnae3_shim_unregister_client(void);
void hnae3_shim_unwatch_modules(void);

/* The RoCE client's bit in the handle's rinfo.state. */
void hnae3_shim_rst_direct_set(struct hnae3_handle *h, bool on);
bool hnae3_shim_rst_direct_test(struct hnae3_handle *h);
bool hnae3_shim_rst_direct_test_and_clear(struct hnae3_handle *h);

/* A function (vf false) or VF reset asked of the function's ae_dev. */
void hnae3_shim_request_reset(struct hnae3_handle *h, bool vf);
/* The MAC address of the function's netdev. */
void hnae3_shim_netdev_mac(struct hnae3_handle *h, u8 *mac);

/*
 * RoCE bonding: a net device and the hns_roce_rs device on it, if any
 * (handle NULL: none). vf: a VF, or a PF with VFs enabled. Net device
 * pointers handed to Rust are for comparison and for passing back while
 * the device is known to live, never dereferenced by Rust.
 */
struct hnae3_shim_bond_slave {
	struct net_device *dev;
	struct hnae3_handle *handle;
	u8 func;
	u8 bus;
	bool bond_cap;
	bool vf;
};

/* The first max lower devices of upper, filled in; returns how many there
 * are (more than max when some were left out).
 */
int hnae3_shim_bond_slaves(struct net_device *upper,
			   struct hnae3_shim_bond_slave *out, int max);
void hnae3_shim_bond_dev(struct net_device *dev,
			 struct hnae3_shim_bond_slave *out);

#endif /* HNAE3_SHIM_H */
