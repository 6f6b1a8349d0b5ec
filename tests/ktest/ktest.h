/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernel test modules share: the counters their guest plans read
 * as read-only module parameters (/sys/module/NAME/parameters/COUNTER),
 * and the RTR/RTS steps of an RC QP connected on one port.
 */
#ifndef HNS_KTEST_H
#define HNS_KTEST_H

#include <linux/atomic.h>
#include <linux/if_ether.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>

static inline int ktest_get_atomic(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops ktest_atomic_ops = {
	.get = ktest_get_atomic,
};

/* The atomic_t var as the read-only parameter name. */
#define KTEST_COUNTER(name, var) \
	module_param_cb(name, &ktest_atomic_ops, &(var), 0444)

/*
 * An RC QP in INIT to RTR and RTS, its destination QP dest on the same
 * port: the port's GID gid (table index gid_index) and its netdev's mac,
 * path MTU mtu.
 */
static inline int ktest_connect(struct ib_qp *qp, u32 dest, u32 port,
				enum ib_mtu mtu, union ib_gid *gid,
				int gid_index, const u8 *mac)
{
	struct ib_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = mtu;
	attr.dest_qp_num = dest;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(qp->device, port);
	rdma_ah_set_port_num(&attr.ah_attr, port);
	rdma_ah_set_grh(&attr.ah_attr, gid, 0, gid_index, 64, 0);
	memcpy(attr.ah_attr.roce.dmac, mac, ETH_ALEN);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* ktest_connect with the QP itself as its destination. */
static inline int ktest_connect_self(struct ib_qp *qp, u32 port,
				     enum ib_mtu mtu, union ib_gid *gid,
				     int gid_index, const u8 *mac)
{
	return ktest_connect(qp, qp->qp_num, port, mtu, gid, gid_index, mac);
}

#endif
