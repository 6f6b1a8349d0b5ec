// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lo_pingpong: a kernel-verbs pingpong between two RC QPs of one device
 * (default rlo_0, the loopback provider tests/loopback/rdma_lo.ko).
 *
 * An ib_client whose add callback, for the device named by "dev", runs
 * once, synchronously, then frees everything it made: a PD, one CQ for
 * both QPs, QP a and QP b connected to each other (each the other's
 * destination, over the port's first RoCE v2 GID), a buffer pair per QP.
 * Each of "iters" rounds: both QPs post a receive, a sends a ping of
 * len(round) bytes (two SGEs) to b, b checks the bytes and sends them
 * back with every byte complemented (one SGE), a checks them. Then the
 * "rnr" case: a sends with no receive posted at b, which must complete
 * with IB_WC_RNR_RETRY_EXC_ERR (the loopback device does not retry).
 *
 * Output (pr_info):
 *   LOPING rounds <n> bytes <total>    every round passed
 *   LOPING rnr ok | rnr <wc status>
 *   LOPING done | LOPING error <errno> <step> [round <i>]
 * and the module parameter "result" (0 or a negative errno).
 * tests/guest/loopback-plan.sh reads them.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "ktest.h"

static char *dev = "rlo_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the ib_device to test (default rlo_0)");

static int iters = 200;
module_param(iters, int, 0444);
MODULE_PARM_DESC(iters, "pingpong rounds (default 200)");

static int lp_result = -ENODEV;
module_param_named(result, lp_result, int, 0444);
MODULE_PARM_DESC(result, "outcome of the run: 0 or a negative errno (read-only)");

#define LP_PORT 1
#define LP_BUF 4096

struct lp_side {
	struct ib_qp *qp;
	u8 *tx, *rx;
	u64 tx_dma, rx_dma;
	bool mapped;
};

struct lp {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct lp_side a, b;
	const struct ib_gid_attr *gattr;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	enum ib_mtu mtu;
};

/* The port's first non-zero RoCE v2 GID (waits up to 10 s for it). */
static int lp_find_gid(struct lp *p)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int tries, i, ret;
	u16 vlan;

	for (tries = 0; tries < 100; tries++) {
		ret = ib_query_port(p->ibdev, LP_PORT, &pattr);
		if (ret)
			return ret;
		p->mtu = min_t(enum ib_mtu, pattr.active_mtu, IB_MTU_1024);
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			attr = rdma_get_gid_attr(p->ibdev, LP_PORT, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			    !rdma_is_zero_gid(&attr->gid)) {
				p->gattr = attr;
				p->gid = attr->gid;
				return rdma_read_gid_l2_fields(attr, &vlan, p->mac);
			}
			rdma_put_gid_attr(attr);
		}
		msleep(100);
	}
	return -ENOENT;
}

/* QP s from RESET to RTS, its destination QP number dest. */
static int lp_connect(struct lp *p, struct lp_side *s, u32 dest)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = LP_PORT,
	};
	int ret;

	ret = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	return ktest_connect(s->qp, dest, LP_PORT, p->mtu, &p->gid,
			     p->gattr->index, p->mac);
}

static int lp_side_init(struct lp *p, struct lp_side *s)
{
	struct ib_qp_init_attr init = {
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 2,
			.max_recv_sge = 1,
		},
	};

	s->tx = kzalloc(LP_BUF, GFP_KERNEL);
	s->rx = kzalloc(LP_BUF, GFP_KERNEL);
	if (!s->tx || !s->rx)
		return -ENOMEM;
	s->tx_dma = ib_dma_map_single(p->ibdev, s->tx, LP_BUF, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(p->ibdev, s->tx_dma))
		return -ENOMEM;
	s->rx_dma = ib_dma_map_single(p->ibdev, s->rx, LP_BUF,
				      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(p->ibdev, s->rx_dma)) {
		ib_dma_unmap_single(p->ibdev, s->tx_dma, LP_BUF,
				    DMA_TO_DEVICE);
		return -ENOMEM;
	}
	s->mapped = true;
	s->qp = ib_create_qp(p->pd, &init);
	if (IS_ERR(s->qp)) {
		int ret = PTR_ERR(s->qp);

		s->qp = NULL;
		return ret;
	}
	return 0;
}

static void lp_side_free(struct lp *p, struct lp_side *s)
{
	if (s->qp)
		ib_destroy_qp(s->qp);
	if (s->mapped) {
		ib_dma_unmap_single(p->ibdev, s->tx_dma, LP_BUF,
				    DMA_TO_DEVICE);
		ib_dma_unmap_single(p->ibdev, s->rx_dma, LP_BUF,
				    DMA_FROM_DEVICE);
	}
	kfree(s->tx);
	kfree(s->rx);
}

static int lp_post_recv(struct lp *p, struct lp_side *s, u64 id)
{
	struct ib_sge sge = {
		.addr = s->rx_dma,
		.length = LP_BUF,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };

	memset(s->rx, 0, LP_BUF);
	return ib_post_recv(s->qp, &wr, NULL);
}

/* A SEND of len bytes of s's tx buffer, in two SGEs when two. */
static int lp_post_send(struct lp *p, struct lp_side *s, u32 len, int nsge,
			u64 id)
{
	u32 first = nsge > 1 ? len / 3 : len;
	struct ib_sge sge[2] = {
		{ .addr = s->tx_dma, .length = first,
		  .lkey = p->pd->local_dma_lkey },
		{ .addr = s->tx_dma + first, .length = len - first,
		  .lkey = p->pd->local_dma_lkey },
	};
	struct ib_send_wr wr = {
		.wr_id = id,
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	return ib_post_send(s->qp, &wr, NULL);
}

/*
 * Polls until the completions of WR ids want[0..n) arrived (any order);
 * the byte count of the receive among them in *bytes. Any status but
 * success is returned as is in *status with -EIO.
 */
static int lp_wait(struct lp *p, const u64 *want, int n, u32 *bytes,
		   int *status)
{
	unsigned long deadline = jiffies + 10 * HZ;
	unsigned int seen = 0, all = (1u << n) - 1;
	struct ib_wc wc;
	int got, i;

	while (seen != all) {
		got = ib_poll_cq(p->cq, 1, &wc);
		if (got < 0)
			return got;
		if (!got) {
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			usleep_range(100, 200);
			continue;
		}
		if (wc.status != IB_WC_SUCCESS) {
			*status = wc.status;
			return -EIO;
		}
		for (i = 0; i < n; i++)
			if (wc.wr_id == want[i])
				seen |= 1u << i;
		if (wc.opcode == IB_WC_RECV)
			*bytes = wc.byte_len;
	}
	return 0;
}

/* One round: a pings b with len bytes, b pongs them back complemented. */
static int lp_round(struct lp *p, int r, const char **step)
{
	u32 len = 1 + (u32)r * 37 % (LP_BUF - 1), bytes = 0, i;
	u64 ping[2] = { 1000 + r, 2000 + r }, pong[2] = { 3000 + r, 4000 + r };
	int status = 0, ret;

	*step = "post_recv";
	ret = lp_post_recv(p, &p->b, ping[1]);
	if (!ret)
		ret = lp_post_recv(p, &p->a, pong[1]);
	if (ret)
		return ret;
	for (i = 0; i < len; i++)
		p->a.tx[i] = (u8)(r * 7 + i);
	*step = "ping";
	ret = lp_post_send(p, &p->a, len, len > 2 ? 2 : 1, ping[0]);
	if (!ret)
		ret = lp_wait(p, ping, 2, &bytes, &status);
	if (ret)
		goto out;
	*step = "ping_data";
	if (bytes != len || memcmp(p->b.rx, p->a.tx, len))
		return -EBADMSG;
	for (i = 0; i < len; i++)
		p->b.tx[i] = ~p->b.rx[i];
	*step = "pong";
	ret = lp_post_send(p, &p->b, len, 1, pong[0]);
	if (!ret)
		ret = lp_wait(p, pong, 2, &bytes, &status);
	if (ret)
		goto out;
	*step = "pong_data";
	if (bytes != len)
		return -EBADMSG;
	for (i = 0; i < len; i++)
		if (p->a.rx[i] != (u8)~(u8)(r * 7 + i))
			return -EBADMSG;
	return 0;
out:
	if (status)
		pr_info("LOPING wc status %d at %s\n", status, *step);
	return ret;
}

/* A SEND that finds no receive WR: RNR_RETRY_EXC_ERR, not a success. */
static void lp_rnr(struct lp *p)
{
	u64 id[1] = { 9999 };
	u32 bytes = 0;
	int status = 0, ret;

	ret = lp_post_send(p, &p->a, 16, 1, id[0]);
	if (!ret)
		ret = lp_wait(p, id, 1, &bytes, &status);
	if (ret == -EIO && status == IB_WC_RNR_RETRY_EXC_ERR)
		pr_info("LOPING rnr ok\n");
	else
		pr_info("LOPING rnr %d %d\n", ret, status);
}

static int lp_objects(struct lp *p, const char **step)
{
	struct ib_cq_init_attr cqa = { .cqe = 64 };
	int ret;

	*step = "gid";
	ret = lp_find_gid(p);
	if (ret)
		return ret;
	*step = "alloc_pd";
	p->pd = ib_alloc_pd(p->ibdev, 0);
	if (IS_ERR(p->pd))
		return PTR_ERR(p->pd);
	*step = "create_cq";
	p->cq = ib_create_cq(p->ibdev, NULL, NULL, NULL, &cqa);
	if (IS_ERR(p->cq))
		return PTR_ERR(p->cq);
	*step = "create_qp";
	ret = lp_side_init(p, &p->a);
	if (!ret)
		ret = lp_side_init(p, &p->b);
	if (ret)
		return ret;
	*step = "connect";
	ret = lp_connect(p, &p->a, p->b.qp->qp_num);
	if (!ret)
		ret = lp_connect(p, &p->b, p->a.qp->qp_num);
	return ret;
}

static void lp_free(struct lp *p)
{
	lp_side_free(p, &p->a);
	lp_side_free(p, &p->b);
	if (!IS_ERR_OR_NULL(p->cq))
		ib_destroy_cq(p->cq);
	if (!IS_ERR_OR_NULL(p->pd))
		ib_dealloc_pd(p->pd);
	if (p->gattr)
		rdma_put_gid_attr(p->gattr);
}

static int lp_run(struct ib_device *ibdev)
{
	const char *step = "alloc";
	u64 total = 0;
	struct lp *p;
	int ret, r = 0;

	p = kzalloc_obj(*p);
	if (!p) {
		pr_info("LOPING error %d alloc\n", -ENOMEM);
		return -ENOMEM;
	}
	p->ibdev = ibdev;
	ret = lp_objects(p, &step);
	for (r = 0; !ret && r < iters; r++) {
		ret = lp_round(p, r, &step);
		total += 1 + (u32)r * 37 % (LP_BUF - 1);
	}
	if (!ret) {
		pr_info("LOPING rounds %d bytes %llu\n", iters, total);
		lp_rnr(p);
	}
	lp_free(p);
	kfree(p);
	if (ret)
		pr_info("LOPING error %d %s round %d\n", ret, step, r - 1);
	else
		pr_info("LOPING done\n");
	return ret;
}

static int lp_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev))
		return -EOPNOTSUPP;
	lp_result = lp_run(ibdev);
	/* No client data: nothing to do at remove. */
	return -EOPNOTSUPP;
}

static struct ib_client lp_client = {
	.name = "lo_pingpong",
	.add = lp_add,
};

static int __init lp_init(void)
{
	int ret;

	ret = ib_register_client(&lp_client);
	if (ret)
		return ret;
	if (lp_result == -ENODEV)
		pr_info("LOPING error %d no_device\n", -ENODEV);
	return 0;
}

static void __exit lp_exit(void)
{
	ib_unregister_client(&lp_client);
}

module_init(lp_init);
module_exit(lp_exit);

MODULE_DESCRIPTION("Kernel-verbs pingpong between two RC QPs of one device (hns-roce-rs test)");
MODULE_AUTHOR("hns-roce-rs");
MODULE_LICENSE("Dual BSD/GPL");
