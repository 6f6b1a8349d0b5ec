// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_event_poll: a kernel ULP that uses its objects from inside the
 * driver's callbacks, as the verbs contract allows (and as the C driver
 * permits): its CQ's completion handler polls the CQ and re-arms it, and
 * its QP's and CQ's asynchronous event handlers poll the CQ. A driver that
 * runs these handlers under its own object-table locks deadlocks or gets
 * a lockdep report here (the CQ poll takes the QP table lock under the CQ
 * lock to find the QP of a CQE).
 *
 * The QP event handler also posts a receive and a SEND to itself and polls
 * 50 ms later, so that its poll finds CQEs (and looks their QP up).
 *
 * An ib_client whose add callback, for the device named by the parameter
 * "dev" (default "hns_0"), sets up a PD, a CQ (ib_create_cq with both
 * handlers, armed) and an RC QP connected to itself (as hns_kbench), then
 * posts one receive and one SEND and waits up to 10 s for the completion
 * handler to poll both completions. The objects stay until the client is
 * removed (rmmod), so that the test plan can inject asynchronous events
 * for them through hns-sim meanwhile:
 *   aeq:0x3:0:<qpn>        (COMM_EST on the QP: the QP event handler)
 *   aeq:0xb:0:<cqn>        (CQ_ACCESS_ERROR: the CQ event handler)
 *
 * Read-only parameters: result (0 once both completions were polled by
 * the handler, else a negative errno; -ENODEV without the device), qpn,
 * comp_calls, polled (successful completions polled by any handler),
 * bad (unsuccessful ones), qp_events, cq_events, poll_errors (negative
 * returns of ib_poll_cq or ib_req_notify_cq in a handler), hardirq_calls
 * and softirq_calls (completion handler calls in a hard interrupt, and
 * in softirq context: the C driver calls it from the CEQ's BH work).
 *
 * Writing N to the parameter "pending" posts N receives that nothing
 * will consume and arms the CQ: a function reset then has to complete
 * them in software (IB_WC_WR_FLUSH_ERR) and run the CQ's completion
 * handler. From then on the handler asks, before it polls, for the
 * solicited event with IB_CQ_REPORT_MISSED_EVENTS: the device is down,
 * nothing can be armed, and the driver must answer 1 while software
 * completions are owed to the CQ. The answers of the handler call that
 * polled flush completions are read-only parameters too: missed (before
 * the poll, 1 expected), missed_after (the re-arm after it, 0 expected:
 * nothing is owed any more), flushed (flush completions polled). Only
 * the first device the client meets is used: after a reset the new
 * instance is left alone.
 *
 * Build: make ktest (build/ktest/cq_event_poll.ko); run by
 * tests/guest/kpath-plan.sh.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/wait.h>
#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include "ktest.h"

#define CEP_DEPTH	16
#define CEP_MSG		64
#define CEP_RECV_OFF	2048
#define CEP_WC		4

static char *dev = "hns_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the ib_device to use (default hns_0)");

static int cep_result = -ENODEV;
module_param_named(result, cep_result, int, 0444);
MODULE_PARM_DESC(result, "0 once the completion handler polled the loopback's completions");

static int cep_qpn = -1;
module_param_named(qpn, cep_qpn, int, 0444);
MODULE_PARM_DESC(qpn, "number of the test's QP");

static atomic_t cep_comp_calls, cep_polled, cep_bad, cep_qp_events;
static atomic_t cep_cq_events, cep_poll_errors, cep_flushed;
static atomic_t cep_hardirq_calls, cep_softirq_calls;

static int cep_missed = -1;
module_param_named(missed, cep_missed, int, 0444);
MODULE_PARM_DESC(missed, "req_notify_cq(SOLICITED | REPORT_MISSED_EVENTS) before the flush poll");

static int cep_missed_after = -1;
module_param_named(missed_after, cep_missed_after, int, 0444);
MODULE_PARM_DESC(missed_after, "req_notify_cq(NEXT_COMP | REPORT_MISSED_EVENTS) after the flush poll");

/* Set once the receives of "pending" are posted. */
static bool cep_pending_mode;
/* The device in use, and whether one was taken. */
static struct cep *cep_live;
static bool cep_taken;

KTEST_COUNTER(comp_calls, cep_comp_calls);
KTEST_COUNTER(polled, cep_polled);
KTEST_COUNTER(bad, cep_bad);
KTEST_COUNTER(qp_events, cep_qp_events);
KTEST_COUNTER(cq_events, cep_cq_events);
KTEST_COUNTER(poll_errors, cep_poll_errors);
KTEST_COUNTER(hardirq_calls, cep_hardirq_calls);
KTEST_COUNTER(softirq_calls, cep_softirq_calls);
KTEST_COUNTER(flushed, cep_flushed);

struct cep {
	struct ib_device *ibdev;
	u32 port;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	void *buf;
	u64 dma;
	bool mapped;
	wait_queue_head_t wq;
};

/*
 * Polls the CQ empty, counting what it finds; how many flush completions
 * of the "pending" receives it found.
 */
static int cep_poll(struct cep *c)
{
	struct ib_wc wc[CEP_WC];
	int n, i, flushed = 0;

	do {
		n = ib_poll_cq(c->cq, CEP_WC, wc);
		if (n < 0) {
			atomic_inc(&cep_poll_errors);
			break;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status == IB_WC_SUCCESS)
				atomic_inc(&cep_polled);
			else if (READ_ONCE(cep_pending_mode) &&
				 wc[i].status == IB_WC_WR_FLUSH_ERR)
				flushed++;
			else
				atomic_inc(&cep_bad);
		}
	} while (n > 0);
	atomic_add(flushed, &cep_flushed);
	return flushed;
}

/*
 * The completion handler: poll, re-arm, poll what came in between. With
 * receives pending, it first asks for missed events (see above).
 */
static void cep_comp(struct ib_cq *cq, void *ctx)
{
	struct cep *c = ctx;
	int before = 0;
	int ret;

	atomic_inc(&cep_comp_calls);
	if (in_hardirq())
		atomic_inc(&cep_hardirq_calls);
	else if (in_serving_softirq())
		atomic_inc(&cep_softirq_calls);
	if (READ_ONCE(cep_pending_mode))
		before = ib_req_notify_cq(cq, IB_CQ_SOLICITED |
					  IB_CQ_REPORT_MISSED_EVENTS);
	if (cep_poll(c) > 0) {
		cep_missed = before;
		ret = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				       IB_CQ_REPORT_MISSED_EVENTS);
		cep_missed_after = ret;
	} else {
		ret = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				       IB_CQ_REPORT_MISSED_EVENTS);
	}
	if (ret < 0)
		atomic_inc(&cep_poll_errors);
	else if (ret > 0)
		cep_poll(c);
	wake_up(&c->wq);
}

static void cep_cq_event(struct ib_event *ev, void *ctx)
{
	struct cep *c = ctx;

	cep_poll(c);
	pr_info("cq_event_poll: CQ event %s, CQ polled\n",
		ib_event_msg(ev->event));
	atomic_inc(&cep_cq_events);
	wake_up(&c->wq);
}

static int cep_post_pair(struct cep *c);

/*
 * The QP event handler sends to itself once more and polls after the
 * completions had time to arrive: the poll then looks the QP up for its
 * CQEs, from inside the driver's event delivery.
 */
static void cep_qp_event(struct ib_event *ev, void *ctx)
{
	struct cep *c = ctx;

	if (cep_post_pair(c))
		atomic_inc(&cep_poll_errors);
	mdelay(50);
	cep_poll(c);
	pr_info("cq_event_poll: QP event %s, CQ polled\n",
		ib_event_msg(ev->event));
	atomic_inc(&cep_qp_events);
	wake_up(&c->wq);
}

/* The port's first non-zero RoCE v2 GID (waits up to 10 s for it). */
static const struct ib_gid_attr *cep_find_gid(struct cep *c, int len)
{
	const struct ib_gid_attr *attr;
	int tries, i;

	for (tries = 0; tries < 100; tries++) {
		for (i = 0; i < len; i++) {
			attr = rdma_get_gid_attr(c->ibdev, c->port, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			    !rdma_is_zero_gid(&attr->gid))
				return attr;
			rdma_put_gid_attr(attr);
		}
		msleep(100);
	}
	return ERR_PTR(-ENOENT);
}

/* The RC QP to RTS, connected to itself. */
static int cep_connect(struct cep *c)
{
	const struct ib_gid_attr *gattr;
	struct ib_port_attr pattr;
	struct ib_qp_attr attr;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	u16 vlan;
	int ret, i;

	for (i = 0; i < 100; i++) {
		ret = ib_query_port(c->ibdev, c->port, &pattr);
		if (ret)
			return ret;
		if (pattr.state == IB_PORT_ACTIVE)
			break;
		msleep(100);
	}
	if (pattr.state != IB_PORT_ACTIVE)
		return -ENETDOWN;
	gattr = cep_find_gid(c, pattr.gid_tbl_len);
	if (IS_ERR(gattr))
		return PTR_ERR(gattr);
	gid = gattr->gid;
	ret = rdma_read_gid_l2_fields(gattr, &vlan, mac);
	if (ret)
		goto out;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_INIT;
	attr.port_num = c->port;
	ret = ib_modify_qp(c->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		goto out;

	ret = ktest_connect_self(c->qp, c->port,
				 min_t(enum ib_mtu, pattr.active_mtu, IB_MTU_1024),
				 &gid, gattr->index, mac);
out:
	rdma_put_gid_attr(gattr);
	return ret;
}

static void cep_teardown(struct cep *c)
{
	if (c->qp)
		ib_destroy_qp(c->qp);
	if (c->cq)
		ib_destroy_cq(c->cq);
	if (c->mapped)
		ib_dma_unmap_single(c->ibdev, c->dma, PAGE_SIZE,
				    DMA_BIDIRECTIONAL);
	kfree(c->buf);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	kfree(c);
}

/* One receive and one SEND to itself. */
static int cep_post_pair(struct cep *c)
{
	struct ib_sge ssge = {
		.addr = c->dma,
		.length = CEP_MSG,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_sge rsge = {
		.addr = c->dma + CEP_RECV_OFF,
		.length = CEP_MSG,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.wr_id = 2,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	int ret;

	ret = ib_post_recv(c->qp, &rwr, NULL);
	if (ret)
		return ret;
	return ib_post_send(c->qp, &swr, NULL);
}

/* A receive and a SEND to itself; both completions polled by the handler. */
static int cep_loopback(struct cep *c)
{
	int ret;

	ret = ib_req_notify_cq(c->cq, IB_CQ_NEXT_COMP);
	if (ret < 0)
		return ret;
	ret = cep_post_pair(c);
	if (ret)
		return ret;
	if (!wait_event_timeout(c->wq, atomic_read(&cep_polled) +
				atomic_read(&cep_bad) >= 2, 10 * HZ))
		return -ETIMEDOUT;
	return atomic_read(&cep_bad) ? -EIO : 0;
}

static struct ib_client cep_client;

static int cep_add(struct ib_device *ibdev)
{
	struct ib_qp_init_attr init = {};
	struct ib_cq_init_attr cattr = { .cqe = 2 * CEP_DEPTH };
	const char *step = "alloc";
	struct cep *c;
	int ret;

	if (strcmp(dev_name(&ibdev->dev), dev) || cep_taken)
		return -EOPNOTSUPP;
	cep_taken = true;
	c = kzalloc_obj(*c);
	if (!c) {
		cep_result = -ENOMEM;
		return -ENOMEM;
	}
	c->ibdev = ibdev;
	c->port = rdma_start_port(ibdev);
	init_waitqueue_head(&c->wq);

	step = "alloc_pd";
	c->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		goto err;
	}
	step = "create_cq";
	c->cq = ib_create_cq(ibdev, cep_comp, cep_cq_event, c, &cattr);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		goto err;
	}
	step = "create_qp";
	init.event_handler = cep_qp_event;
	init.qp_context = c;
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.qp_type = IB_QPT_RC;
	init.cap.max_send_wr = CEP_DEPTH;
	init.cap.max_recv_wr = CEP_DEPTH;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	c->qp = ib_create_qp(c->pd, &init);
	if (IS_ERR(c->qp)) {
		ret = PTR_ERR(c->qp);
		c->qp = NULL;
		goto err;
	}
	step = "dma_map";
	ret = -ENOMEM;
	c->buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!c->buf)
		goto err;
	c->dma = ib_dma_map_single(ibdev, c->buf, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, c->dma))
		goto err;
	c->mapped = true;
	step = "connect";
	ret = cep_connect(c);
	if (ret)
		goto err;
	cep_qpn = c->qp->qp_num;
	step = "loopback";
	ret = cep_loopback(c);
	cep_result = ret;
	pr_info("cq_event_poll: %s: QP %u, loopback %d, %d completion handler calls\n",
		dev_name(&ibdev->dev), c->qp->qp_num, ret,
		atomic_read(&cep_comp_calls));
	/* The objects stay (whatever the outcome) for the injected events. */
	ib_set_client_data(ibdev, &cep_client, c);
	WRITE_ONCE(cep_live, c);
	return 0;
err:
	pr_info("cq_event_poll: %s failed: %d\n", step, ret);
	cep_result = ret;
	cep_teardown(c);
	return ret;
}

static void cep_remove(struct ib_device *ibdev, void *data)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct cep *c = data;

	if (!c)
		return;
	WRITE_ONCE(cep_live, NULL);
	/* Whatever did not complete is flushed and polled first. */
	if (!ib_modify_qp(c->qp, &attr, IB_QP_STATE))
		msleep(100);
	cep_poll(c);
	cep_teardown(c);
}

/* "pending": N receives nothing will consume, then the CQ armed. */
static int cep_pending_set(const char *val, const struct kernel_param *kp)
{
	struct cep *c = READ_ONCE(cep_live);
	struct ib_sge sge;
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	unsigned int n, i;
	int ret;

	ret = kstrtouint(val, 0, &n);
	if (ret)
		return ret;
	if (!c)
		return -ENODEV;
	sge.addr = c->dma + CEP_RECV_OFF;
	sge.length = CEP_MSG;
	sge.lkey = c->pd->local_dma_lkey;
	WRITE_ONCE(cep_pending_mode, true);
	for (i = 0; i < n; i++) {
		wr.wr_id = 100 + i;
		ret = ib_post_recv(c->qp, &wr, NULL);
		if (ret)
			return ret;
	}
	ret = ib_req_notify_cq(c->cq, IB_CQ_NEXT_COMP);
	return ret < 0 ? ret : 0;
}

static const struct kernel_param_ops cep_pending_ops = {
	.set = cep_pending_set,
};
module_param_cb(pending, &cep_pending_ops, NULL, 0200);
MODULE_PARM_DESC(pending, "post N receives nothing consumes and arm the CQ");

static struct ib_client cep_client = {
	.name = "cq_event_poll",
	.add = cep_add,
	.remove = cep_remove,
};

static int __init cep_init(void)
{
	return ib_register_client(&cep_client);
}

static void __exit cep_exit(void)
{
	ib_unregister_client(&cep_client);
}

module_init(cep_init);
module_exit(cep_exit);

MODULE_DESCRIPTION("Kernel ULP test: CQ polled from the driver's completion and event handlers");
MODULE_AUTHOR("hns-roce-rs");
MODULE_LICENSE("Dual BSD/GPL");
