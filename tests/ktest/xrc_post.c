// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrc_post: kernel posts on the QP types whose WRs carry no UD part.
 *
 * An ib_client whose add callback, for the device named by the parameter
 * "dev" (default "hns_0"), runs once, synchronously (the results are in the
 * kernel log before insmod returns), then frees everything it made: a PD,
 * a CQ, an XRC domain, an XRC target QP of it (no CQ, no receive queue, a
 * send queue it cannot use), an XRC initiator QP (send queue on the CQ, no
 * receive queue) and, as the
 * control, a UD QP with a receive buffer and an AH to itself.
 *
 * Every send WR is an ib_ud_wr whose ah is a poison pointer, except the
 * control's SEND, which names the real AH: a driver that reads the UD part
 * of a WR on a QP that is not UD or GSI, or before it has refused the
 * opcode, follows the poison pointer and faults. The XRC QPs are moved to
 * RTS (each the other's destination, the port's RoCE v2 GID) so that no
 * state check answers first; one post is made in RESET as well.
 *
 * Output (pr_info), one line per call, then a final line:
 *   XRCPOST <case> <ret> <bad>    ret: 0 or the negative errno; bad: the
 *                                 index of the WR *bad_wr names, -1 if NULL
 *   XRCPOST <case> skip <why>     a call left out (cdrv=1, below)
 *   XRCPOST done | XRCPOST error <errno> <step>
 * tests/guest/kpath-plan.sh compares them with the expected answers.
 *
 * cdrv=1 (the C driver hns-roce-hw-v2) leaves out the calls on which that
 * driver faults or WARNs (docs/c-driver-findings.md, 20): post_send on
 * either XRC QP and post_recv on the XRC target in RTS (an oops), an RDMA
 * WRITE on the UD QP (WARN_ON_ONCE before its EINVAL).
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "hns_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the ib_device to test (default hns_0)");

static bool cdrv;
module_param(cdrv, bool, 0444);
MODULE_PARM_DESC(cdrv, "the device is the C driver's: leave out the calls it faults or WARNs on");

static int xp_result;
module_param_named(result, xp_result, int, 0444);
MODULE_PARM_DESC(result, "outcome of the run: 0 or a negative errno (read-only)");

#define XP_POISON ((struct ib_ah *)0xdead000000000100UL)
#define XP_PORT 1
#define XP_BUF 256
#define XP_QKEY 0x11111111

struct xp {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_xrcd *xrcd;
	struct ib_qp *tgt;
	struct ib_qp *ini;
	struct ib_qp *ud;
	struct ib_ah *ah;
	void *buf;
	u64 dma;
	const struct ib_gid_attr *gattr;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
};

static void xp_comp(struct ib_cq *cq, void *ctx)
{
}

/* One send WR on qp (poison AH unless ah is given); prints the outcome. */
static void xp_send(const char *name, struct ib_qp *qp, enum ib_wr_opcode op,
		    struct ib_ah *ah, u32 dqpn)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = 1,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
		},
		.ah = ah ? ah : XP_POISON,
		.remote_qpn = dqpn,
		.remote_qkey = XP_QKEY,
	};
	int ret;

	ret = ib_post_send(qp, &wr.wr, &bad);
	pr_info("XRCPOST %s %d %d\n", name, ret, bad ? (bad == &wr.wr ? 0 : 99) : -1);
}

/* One receive WR on qp (with the buffer's SGE if sge); prints the outcome. */
static void xp_recv(const char *name, struct xp *xp, struct ib_qp *qp, bool sge)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_sge sg = {
		.addr = xp->dma,
		.length = XP_BUF,
		.lkey = xp->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = 2,
		.sg_list = sge ? &sg : NULL,
		.num_sge = sge ? 1 : 0,
	};
	int ret;

	ret = ib_post_recv(qp, &wr, &bad);
	pr_info("XRCPOST %s %d %d\n", name, ret, bad ? (bad == &wr ? 0 : 99) : -1);
}

static void xp_skip(const char *name, const char *why)
{
	pr_info("XRCPOST %s skip %s\n", name, why);
}

/* The port's first non-zero RoCE v2 GID (waits up to 10 s for it). */
static int xp_find_gid(struct xp *xp)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int tries, i, ret;
	u16 vlan;

	for (tries = 0; tries < 100; tries++) {
		ret = ib_query_port(xp->ibdev, XP_PORT, &pattr);
		if (ret)
			return ret;
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			attr = rdma_get_gid_attr(xp->ibdev, XP_PORT, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			    !rdma_is_zero_gid(&attr->gid)) {
				xp->gattr = attr;
				xp->gid = attr->gid;
				return rdma_read_gid_l2_fields(attr, &vlan, xp->mac);
			}
			rdma_put_gid_attr(attr);
		}
		msleep(100);
	}
	return -ENOENT;
}

/* The address of this port's GID, for an RTR transition or an AH. */
static void xp_av(struct xp *xp, struct rdma_ah_attr *ah)
{
	ah->type = rdma_ah_find_type(xp->ibdev, XP_PORT);
	rdma_ah_set_port_num(ah, XP_PORT);
	rdma_ah_set_grh(ah, &xp->gid, 0, xp->gattr->index, 64, 0);
	memcpy(ah->roce.dmac, xp->mac, ETH_ALEN);
}

/* An XRC QP to RTS with the masks the core requires of its type. */
static int xp_xrc_rts(struct xp *xp, struct ib_qp *qp, u32 dqpn, bool tgt)
{
	struct ib_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_INIT;
	a.port_num = XP_PORT;
	a.qp_access_flags = tgt ? IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE : 0;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	xp_av(xp, &a.ah_attr);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   (tgt ? IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER : 0));
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_SQ_PSN |
			    (tgt ? 0 : IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			     IB_QP_MAX_QP_RD_ATOMIC));
}

static int xp_ud_rts(struct ib_qp *qp)
{
	struct ib_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_INIT;
	a.port_num = XP_PORT;
	a.qkey = XP_QKEY;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_QKEY);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* Polls n successful completions, 10 s at most. */
static int xp_drain(struct xp *xp, int n)
{
	unsigned long deadline = jiffies + 10 * HZ;
	struct ib_wc wc;
	int got;

	while (n) {
		got = ib_poll_cq(xp->cq, 1, &wc);
		if (got < 0)
			return got;
		if (got && wc.status != IB_WC_SUCCESS) {
			pr_err("xrc_post: wr_id %llu: %s\n", wc.wr_id,
			       ib_wc_status_msg(wc.status));
			return -EIO;
		}
		n -= got;
		if (!got) {
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			msleep(20);
		}
	}
	return 0;
}

static int xp_objects(struct xp *xp, const char **step)
{
	struct ib_cq_init_attr cqa = { .cqe = 16 };
	struct ib_qp_init_attr qa;
	struct rdma_ah_attr aa;

	*step = "find_gid";
	if (xp_find_gid(xp))
		return -ENOENT;
	*step = "alloc_pd";
	xp->pd = ib_alloc_pd(xp->ibdev, 0);
	if (IS_ERR(xp->pd))
		return PTR_ERR(xp->pd);
	*step = "create_cq";
	xp->cq = ib_create_cq(xp->ibdev, xp_comp, NULL, xp, &cqa);
	if (IS_ERR(xp->cq))
		return PTR_ERR(xp->cq);
	*step = "alloc_xrcd";
	xp->xrcd = ib_alloc_xrcd_user(xp->ibdev, NULL, NULL);
	if (IS_ERR(xp->xrcd))
		return PTR_ERR(xp->xrcd);

	*step = "create_xrc_tgt";
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IB_QPT_XRC_TGT;
	qa.xrcd = xp->xrcd;
	/* Both drivers size a kernel SQ even for a target, and want a depth. */
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_ALL_WR;
	xp->tgt = ib_create_qp(xp->pd, &qa);
	if (IS_ERR(xp->tgt))
		return PTR_ERR(xp->tgt);

	*step = "create_xrc_ini";
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IB_QPT_XRC_INI;
	qa.send_cq = xp->cq;
	qa.recv_cq = xp->cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_ALL_WR;
	xp->ini = ib_create_qp(xp->pd, &qa);
	if (IS_ERR(xp->ini))
		return PTR_ERR(xp->ini);

	*step = "create_ud";
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IB_QPT_UD;
	qa.send_cq = xp->cq;
	qa.recv_cq = xp->cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_ALL_WR;
	xp->ud = ib_create_qp(xp->pd, &qa);
	if (IS_ERR(xp->ud))
		return PTR_ERR(xp->ud);

	*step = "create_ah";
	memset(&aa, 0, sizeof(aa));
	xp_av(xp, &aa);
	xp->ah = rdma_create_ah(xp->pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(xp->ah))
		return PTR_ERR(xp->ah);

	*step = "map_buf";
	xp->buf = kzalloc(XP_BUF, GFP_KERNEL);
	if (!xp->buf)
		return -ENOMEM;
	xp->dma = ib_dma_map_single(xp->ibdev, xp->buf, XP_BUF, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(xp->ibdev, xp->dma)) {
		kfree(xp->buf);
		xp->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int xp_cases(struct xp *xp, const char **step)
{
	int ret;

	/* RESET: the state check answers first, on every driver. */
	xp_send("xrc-tgt-post-send-reset", xp->tgt, IB_WR_SEND, NULL, 0);

	*step = "xrc_tgt_rts";
	ret = xp_xrc_rts(xp, xp->tgt, xp->ini->qp_num, true);
	if (ret)
		return ret;
	*step = "xrc_ini_rts";
	ret = xp_xrc_rts(xp, xp->ini, xp->tgt->qp_num, false);
	if (ret)
		return ret;

	/* C: set_ud_wqe follows the poison AH (findings 20). */
	if (cdrv)
		xp_skip("xrc-tgt-post-send", "C-driver-findings-20-oops");
	else
		xp_send("xrc-tgt-post-send", xp->tgt, IB_WR_SEND, NULL, 0);
	/* C: an oops on the target's NULL receive CQ (findings 20). */
	if (cdrv)
		xp_skip("xrc-tgt-post-recv", "C-driver-findings-20-oops");
	else
		xp_recv("xrc-tgt-post-recv", xp, xp->tgt, false);
	/* C: set_ud_wqe follows the poison AH (findings 20). */
	if (cdrv)
		xp_skip("xrc-ini-post-send", "C-driver-findings-20-oops");
	else
		xp_send("xrc-ini-post-send", xp->ini, IB_WR_SEND, NULL, 0);
	xp_recv("xrc-ini-post-recv", xp, xp->ini, false);

	*step = "ud_rts";
	ret = xp_ud_rts(xp->ud);
	if (ret)
		return ret;
	/* C: WARN_ON_ONCE on the opcode before its EINVAL (findings 20). */
	if (cdrv)
		xp_skip("ud-post-write-poison-ah", "C-driver-findings-20-warn");
	else
		xp_send("ud-post-write-poison-ah", xp->ud, IB_WR_RDMA_WRITE, NULL, 0);
	/* The control: a SEND to itself through the real AH, received. */
	xp_recv("ud-post-recv", xp, xp->ud, true);
	xp_send("ud-post-send", xp->ud, IB_WR_SEND, xp->ah, xp->ud->qp_num);
	*step = "ud_drain";
	ret = xp_drain(xp, 2);
	pr_info("XRCPOST ud-completions %d -1\n", ret);
	return 0;
}

static void xp_free(struct xp *xp)
{
	if (xp->buf) {
		ib_dma_unmap_single(xp->ibdev, xp->dma, XP_BUF, DMA_FROM_DEVICE);
		kfree(xp->buf);
	}
	if (!IS_ERR_OR_NULL(xp->ah))
		rdma_destroy_ah(xp->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(xp->ud))
		ib_destroy_qp(xp->ud);
	if (!IS_ERR_OR_NULL(xp->ini))
		ib_destroy_qp(xp->ini);
	if (!IS_ERR_OR_NULL(xp->tgt))
		ib_destroy_qp(xp->tgt);
	if (!IS_ERR_OR_NULL(xp->xrcd))
		ib_dealloc_xrcd_user(xp->xrcd, NULL);
	if (!IS_ERR_OR_NULL(xp->cq))
		ib_destroy_cq(xp->cq);
	if (!IS_ERR_OR_NULL(xp->pd))
		ib_dealloc_pd(xp->pd);
	if (xp->gattr)
		rdma_put_gid_attr(xp->gattr);
}

static int xp_run(struct ib_device *ibdev)
{
	const char *step = "alloc";
	struct xp *xp;
	int ret;

	xp = kzalloc_obj(*xp);
	if (xp) {
		xp->ibdev = ibdev;
		ret = xp_objects(xp, &step);
		if (!ret)
			ret = xp_cases(xp, &step);
		xp_free(xp);
		kfree(xp);
	} else {
		ret = -ENOMEM;
	}
	if (ret)
		pr_info("XRCPOST error %d %s\n", ret, step);
	else
		pr_info("XRCPOST done\n");
	return ret;
}

static int xp_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev))
		return -EOPNOTSUPP;
	xp_result = xp_run(ibdev);
	/* No client data: nothing to do at remove. */
	return -EOPNOTSUPP;
}

static struct ib_client xp_client = {
	.name = "xrc_post",
	.add = xp_add,
};

static int __init xp_init(void)
{
	int ret;

	xp_result = -ENODEV;
	ret = ib_register_client(&xp_client);
	if (ret)
		return ret;
	if (xp_result == -ENODEV)
		pr_info("XRCPOST error %d no_device\n", -ENODEV);
	return 0;
}

static void __exit xp_exit(void)
{
	ib_unregister_client(&xp_client);
}

module_init(xp_init);
module_exit(xp_exit);

MODULE_DESCRIPTION("Kernel posts on XRC QPs with poisoned UD parts (hns-roce-rs test)");
MODULE_AUTHOR("hns-roce-rs");
MODULE_LICENSE("Dual BSD/GPL");
