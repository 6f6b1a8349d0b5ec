// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hns_kbench: kernel hot-path benchmark of an RDMA driver.
 *
 * Uses kernel verbs only, so the same module measures any ib_device: the
 * C driver's hns_0 (hns-roce-hw-v2) and the Rust driver's (hns_roce_rs).
 * An ib_client whose add callback, for the device named by the parameter
 * "dev" (default "hns_0"), runs the benchmark once, synchronously: the
 * results are in the kernel log before insmod returns. Meanwhile (3-25 s
 * under TCG) ib_register_client() holds the RDMA core's devices_rwsem and
 * clients_rwsem for writing: device lookups (the rdma tool, other
 * clients, device registration) wait until it is done.
 *
 * Setup: a PD, one CQ (KB_CQE entries, polled only here and never armed:
 * ib_create_cq() with a completion handler that only counts calls, not
 * ib_alloc_cq(IB_POLL_DIRECT), because hns-sim treats every CQ as armed
 * and raises a completion event for each batch of CQEs, which would make
 * a direct CQ's handler WARN; the count is printed as "completion events
 * of the never-armed CQ"), an RC QP connected to itself
 * (destination QPN = its own, address vector from the port's first
 * non-zero RoCE v2 GID, destination MAC = the GID's own MAC), SQ and RQ of
 * KB_DEPTH WRs, one SGE each: a page of kmalloc memory mapped with
 * ib_dma_map_single() and the PD's local DMA lkey. Every WR is signaled; a
 * SEND to self consumes one receive, so receives are posted (untimed)
 * before the sends of a send metric, and sends (untimed) after the
 * receives of a receive metric. The CQ is drained outside the timed region
 * after every round, every completion must be IB_WC_SUCCESS.
 *
 * Metrics (local_clock() around the single verbs call only; ns per WR or
 * per CQE; median, 10th and 90th percentile of n samples):
 *   post_send_1      ib_post_send() of one SEND
 *   post_send_16     ib_post_send() of a chain of 16 SENDs, per WR
 *   post_send_depth  ib_post_send() of a chain as long as the SQ takes
 *                    (its depth - 1: the driver keeps one WQE free), per WR
 *   post_recv_1      ib_post_recv() of one receive
 *   post_recv_16     ib_post_recv() of a chain of 16, per WR
 *   poll_cq_16       ib_poll_cq(cq, 16) with at least 16 CQEs written (half
 *                    send, half receive CQEs), per CQE; a round posts the
 *                    WRs, sleeps until the device has surely written all
 *                    CQEs (the CQ cannot be peeked without consuming it), then
 *                    times one poll of 16 after another. A poll that returns
 *                    fewer than 16 is not a sample: the round's rest is
 *                    drained untimed and the sleep doubled (the count of
 *                    such polls is printed)
 *   poll_cq_empty    ib_poll_cq(cq, 16) on an empty CQ (whole call)
 *
 * The doorbell written inside post_send/post_recv reaches the simulated
 * device (hns-sim) asynchronously through an ivshmem doorbell, the device
 * executes the WRs on the host, so post figures are the driver's own cost
 * (WQE building, locking, the doorbell's MMIO write), not the device's.
 * The timed region includes one clock read; the median cost of a pair of
 * reads is printed as "hns_kbench: clock overhead" for local_clock() and
 * for ktime_get_ns(): under TCG (clocksource tsc) ktime_get_ns() cost
 * 1.4-3 us, local_clock() 0.1-0.25 us, hence local_clock(). Also printed,
 * as a reference for drivers that allocate per WR: the median cost of a
 * 64-byte GFP_ATOMIC kmalloc() + kfree() (50-125 us on the test kernel
 * under TCG: kmemleak and lockdep are on).
 *
 * Output (pr_info), one line per metric and then a final line:
 *   BENCHK <metric> n=<N> ns=<median> p10=<p10> p90=<p90>
 *   BENCHK done
 * or, on failure, "BENCHK error <errno> <step>" (errno negative, as the
 * kernel returns it; step the name of what failed). Everything is torn
 * down (outstanding WRs flushed and polled, QP, CQ, PD destroyed, buffer
 * unmapped and freed) in both cases. The module loads whatever the
 * outcome (insmod returns 0 unless ib_register_client() fails): check the
 * log for "BENCHK done", or read the parameter "result" (0, or the
 * negative errno of the last run; -ENODEV when no device named "dev"
 * existed at insmod, which also prints "BENCHK error -19 no_device"), and
 * rmmod it afterwards. Failing the insmod instead would run the benchmark
 * twice: busybox's insmod (the guest's) retries a failed finit_module()
 * with init_module(). A device of that name registered later (e.g. after
 * a function reset) runs the benchmark again.
 *
 * Parameters: dev (device name), samples (samples per metric, default
 * 256), result (read-only, above).
 *
 * Build: make bench-kmod (build/bench/extra/hns_kbench.ko). Run, e.g.:
 *   HNS_GUEST_EXTRA=build/bench/extra bash scripts/run-guest.sh --driver rs \
 *     --sim 1 --cmd 'insmod /opt/run/extra/hns_kbench.ko && \
 *     rmmod hns_kbench; dmesg | grep BENCHK'
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/sched/clock.h>
#include <linux/jiffies.h>
#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

#define KB_CQE		4096
#define KB_DEPTH	256
#define KB_WC		16
#define KB_MSG		64
#define KB_RECV_OFF	2048

static char *dev = "hns_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the ib_device to benchmark (default hns_0)");

static unsigned int samples = 256;
module_param(samples, uint, 0444);
MODULE_PARM_DESC(samples, "samples per metric (default 256)");

struct kb {
	struct ib_device *ibdev;
	u32 port;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	void *buf;
	u64 dma;
	bool mapped;
	u32 depth;		/* longest chain the SQ and RQ take */
	u64 outstanding;	/* WRs posted whose CQE is not polled yet */
	u64 wr_id;
	struct ib_sge send_sge;
	struct ib_sge recv_sge;
	struct ib_send_wr swr[KB_DEPTH];
	struct ib_recv_wr rwr[KB_DEPTH];
	struct ib_wc wc[KB_WC];
	u64 *t;			/* samples */
	atomic_t events;	/* completion handler calls */
};

static int kb_result = -ENODEV;
module_param_named(result, kb_result, int, 0444);
MODULE_PARM_DESC(result, "outcome of the last run: 0 or a negative errno (read-only)");

static int kb_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void kb_report(const char *metric, u64 *t, u32 n)
{
	sort(t, n, sizeof(*t), kb_cmp, NULL);
	pr_info("BENCHK %s n=%u ns=%llu p10=%llu p90=%llu\n", metric, n,
		t[n / 2], t[n * 10 / 100], t[n * 90 / 100]);
}

/* Chains of n sends/receives starting at the first WR of each array. */
static struct ib_send_wr *kb_sends(struct kb *kb, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		kb->swr[i].wr_id = kb->wr_id++;
		kb->swr[i].next = i + 1 < n ? &kb->swr[i + 1] : NULL;
	}
	return &kb->swr[0];
}

static struct ib_recv_wr *kb_recvs(struct kb *kb, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		kb->rwr[i].wr_id = kb->wr_id++;
		kb->rwr[i].next = i + 1 < n ? &kb->rwr[i + 1] : NULL;
	}
	return &kb->rwr[0];
}

/* The number of WRs of a chain that a failed post did take. */
static void kb_posted(struct kb *kb, int ret, u32 n, u32 bad)
{
	if (ret)
		n = bad;
	kb->outstanding += n;
}

static int kb_post_sends(struct kb *kb, u32 n)
{
	const struct ib_send_wr *bad = NULL;
	int ret = ib_post_send(kb->qp, kb_sends(kb, n), &bad);

	kb_posted(kb, ret, n, bad ? bad - kb->swr : 0);
	return ret;
}

static int kb_post_recvs(struct kb *kb, u32 n)
{
	const struct ib_recv_wr *bad = NULL;
	int ret = ib_post_recv(kb->qp, kb_recvs(kb, n), &bad);

	kb_posted(kb, ret, n, bad ? bad - kb->rwr : 0);
	return ret;
}

/*
 * Polls n CQEs (all must be successful unless any_status), sleeping while
 * the CQ is empty; -ETIMEDOUT after 10 s without all of them.
 */
static int kb_drain(struct kb *kb, u64 n, bool any_status)
{
	unsigned long deadline = jiffies + 10 * HZ;
	int got, i;

	while (n) {
		got = ib_poll_cq(kb->cq, min_t(u64, n, KB_WC), kb->wc);
		if (got < 0)
			return got;
		n -= got;
		kb->outstanding -= got;
		for (i = 0; i < got; i++) {
			if (kb->wc[i].status != IB_WC_SUCCESS && !any_status) {
				pr_err("hns_kbench: wr_id %llu: %s (vendor 0x%x)\n",
				       kb->wc[i].wr_id,
				       ib_wc_status_msg(kb->wc[i].status),
				       kb->wc[i].vendor_err);
				return -EIO;
			}
		}
		if (!got) {
			if (time_after(jiffies, deadline))
				return -ETIMEDOUT;
			fsleep(50);
		}
	}
	return 0;
}

/* post_send of chains of b WRs; n samples in ns per WR. */
static int kb_bench_send(struct kb *kb, u32 b, u32 n, const char **step)
{
	u32 c, i, got = 0;
	u64 t0, t1;
	int ret;

	while (got < n) {
		c = min(kb->depth / b, n - got);
		*step = "post_recv";
		ret = kb_post_recvs(kb, c * b);
		if (ret)
			return ret;
		*step = "post_send";
		for (i = 0; i < c; i++) {
			const struct ib_send_wr *bad = NULL;
			struct ib_send_wr *wr = kb_sends(kb, b);

			t0 = local_clock();
			ret = ib_post_send(kb->qp, wr, &bad);
			t1 = local_clock();
			kb_posted(kb, ret, b, bad ? bad - kb->swr : 0);
			if (ret)
				return ret;
			kb->t[got++] = div_u64(t1 - t0, b);
		}
		*step = "drain";
		ret = kb_drain(kb, 2ULL * c * b, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* post_recv of chains of b WRs; n samples in ns per WR. */
static int kb_bench_recv(struct kb *kb, u32 b, u32 n, const char **step)
{
	u32 c, i, got = 0;
	u64 t0, t1;
	int ret;

	while (got < n) {
		c = min(kb->depth / b, n - got);
		*step = "post_recv";
		for (i = 0; i < c; i++) {
			const struct ib_recv_wr *bad = NULL;
			struct ib_recv_wr *wr = kb_recvs(kb, b);

			t0 = local_clock();
			ret = ib_post_recv(kb->qp, wr, &bad);
			t1 = local_clock();
			kb_posted(kb, ret, b, bad ? bad - kb->rwr : 0);
			if (ret)
				return ret;
			kb->t[got++] = div_u64(t1 - t0, b);
		}
		*step = "post_send";
		ret = kb_post_sends(kb, c * b);
		if (ret)
			return ret;
		*step = "drain";
		ret = kb_drain(kb, 2ULL * c * b, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* ib_poll_cq of KB_WC CQEs already written; n samples in ns per CQE. */
static int kb_bench_poll(struct kb *kb, u32 n, u32 *short_polls,
			 const char **step)
{
	u32 pairs = kb->depth / KB_WC * KB_WC / 2;
	u32 wait_us = 2000, got = 0, left, i;
	u64 t0, t1;
	int ret, r;

	*short_polls = 0;
	while (got < n) {
		*step = "post_recv";
		ret = kb_post_recvs(kb, pairs);
		if (ret)
			return ret;
		*step = "post_send";
		ret = kb_post_sends(kb, pairs);
		if (ret)
			return ret;
		fsleep(wait_us);
		*step = "poll_cq";
		left = 2 * pairs;
		while (left && got < n) {
			t0 = local_clock();
			r = ib_poll_cq(kb->cq, KB_WC, kb->wc);
			t1 = local_clock();
			if (r < 0)
				return r;
			kb->outstanding -= r;
			left -= r;
			for (i = 0; i < r; i++)
				if (kb->wc[i].status != IB_WC_SUCCESS)
					return -EIO;
			if (r < KB_WC) {
				(*short_polls)++;
				wait_us = min(2 * wait_us, 1000000U);
				break;
			}
			kb->t[got++] = div_u64(t1 - t0, r);
		}
		*step = "drain";
		ret = kb_drain(kb, left, false);
		if (ret)
			return ret;
	}
	return 0;
}

static int kb_bench_empty(struct kb *kb, u32 n)
{
	u32 i;
	u64 t0, t1;
	int r;

	for (i = 0; i < n; i++) {
		t0 = local_clock();
		r = ib_poll_cq(kb->cq, KB_WC, kb->wc);
		t1 = local_clock();
		if (r)
			return r < 0 ? r : -EPROTO;
		kb->t[i] = t1 - t0;
	}
	return 0;
}

/* The port's first non-zero RoCE v2 GID (waits up to 10 s for it). */
static const struct ib_gid_attr *kb_find_gid(struct kb *kb, int len)
{
	const struct ib_gid_attr *attr;
	int tries, i;

	for (tries = 0; tries < 100; tries++) {
		for (i = 0; i < len; i++) {
			attr = rdma_get_gid_attr(kb->ibdev, kb->port, i);
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

static void kb_comp(struct ib_cq *cq, void *ctx)
{
	struct kb *kb = ctx;

	atomic_inc(&kb->events);
}

static void kb_cq_event(struct ib_event *ev, void *ctx)
{
	pr_err("hns_kbench: CQ event %s\n", ib_event_msg(ev->event));
}

static int kb_connect(struct kb *kb, const char **step)
{
	const struct ib_gid_attr *gattr;
	struct ib_port_attr pattr;
	struct ib_qp_attr attr;
	union ib_gid gid;
	enum ib_mtu mtu;
	u8 mac[ETH_ALEN];
	u16 vlan;
	int ret, i;

	*step = "query_port";
	for (i = 0; i < 100; i++) {
		ret = ib_query_port(kb->ibdev, kb->port, &pattr);
		if (ret)
			return ret;
		if (pattr.state == IB_PORT_ACTIVE)
			break;
		msleep(100);
	}
	if (pattr.state != IB_PORT_ACTIVE)
		return -ENETDOWN;

	*step = "find_gid";
	gattr = kb_find_gid(kb, pattr.gid_tbl_len);
	if (IS_ERR(gattr))
		return PTR_ERR(gattr);
	gid = gattr->gid;
	ret = rdma_read_gid_l2_fields(gattr, &vlan, mac);
	if (ret) {
		rdma_put_gid_attr(gattr);
		return ret;
	}

	*step = "modify_qp_init";
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = kb->port;
	attr.qp_access_flags = 0;
	ret = ib_modify_qp(kb->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		goto out;

	*step = "modify_qp_rtr";
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = min_t(enum ib_mtu, pattr.active_mtu, IB_MTU_1024);
	mtu = attr.path_mtu;
	attr.dest_qp_num = kb->qp->qp_num;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(kb->ibdev, kb->port);
	rdma_ah_set_port_num(&attr.ah_attr, kb->port);
	rdma_ah_set_grh(&attr.ah_attr, &gid, 0, gattr->index, 64, 0);
	memcpy(attr.ah_attr.roce.dmac, mac, ETH_ALEN);
	ret = ib_modify_qp(kb->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		goto out;

	*step = "modify_qp_rts";
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 1;
	ret = ib_modify_qp(kb->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		goto out;
	pr_info("hns_kbench: %s: RC QP %u looped back through GID index %u, mtu %d\n",
		dev_name(&kb->ibdev->dev), kb->qp->qp_num, gattr->index,
		ib_mtu_enum_to_int(mtu));
out:
	rdma_put_gid_attr(gattr);
	return ret;
}

static int kb_setup(struct kb *kb, const char **step)
{
	struct ib_qp_init_attr init = {};
	struct ib_cq_init_attr cattr = {};
	u32 i;

	*step = "alloc_pd";
	kb->pd = ib_alloc_pd(kb->ibdev, 0);
	if (IS_ERR(kb->pd)) {
		int ret = PTR_ERR(kb->pd);

		kb->pd = NULL;
		return ret;
	}

	*step = "alloc_cq";
	cattr.cqe = KB_CQE;
	kb->cq = ib_create_cq(kb->ibdev, kb_comp, kb_cq_event, kb, &cattr);
	if (IS_ERR(kb->cq)) {
		int ret = PTR_ERR(kb->cq);

		kb->cq = NULL;
		return ret;
	}

	*step = "create_qp";
	init.send_cq = kb->cq;
	init.recv_cq = kb->cq;
	init.sq_sig_type = IB_SIGNAL_ALL_WR;
	init.qp_type = IB_QPT_RC;
	init.cap.max_send_wr = KB_DEPTH;
	init.cap.max_recv_wr = KB_DEPTH;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	kb->qp = ib_create_qp(kb->pd, &init);
	if (IS_ERR(kb->qp)) {
		int ret = PTR_ERR(kb->qp);

		kb->qp = NULL;
		return ret;
	}
	/* The driver reports its real depths; it keeps one WQE free. */
	kb->depth = min3(init.cap.max_send_wr, init.cap.max_recv_wr,
			 (u32)KB_DEPTH + 1) - 1;
	if (kb->depth < KB_WC)
		return -ENOSPC;
	pr_info("hns_kbench: %s: sq %u, rq %u WRs (chains up to %u), cq %d\n",
		dev_name(&kb->ibdev->dev), init.cap.max_send_wr,
		init.cap.max_recv_wr, kb->depth, kb->cq->cqe);

	*step = "dma_map";
	kb->buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!kb->buf)
		return -ENOMEM;
	kb->dma = ib_dma_map_single(kb->ibdev, kb->buf, PAGE_SIZE,
				    DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(kb->ibdev, kb->dma))
		return -ENOMEM;
	kb->mapped = true;

	kb->send_sge.addr = kb->dma;
	kb->send_sge.length = KB_MSG;
	kb->send_sge.lkey = kb->pd->local_dma_lkey;
	kb->recv_sge.addr = kb->dma + KB_RECV_OFF;
	kb->recv_sge.length = KB_MSG;
	kb->recv_sge.lkey = kb->pd->local_dma_lkey;
	for (i = 0; i < KB_DEPTH; i++) {
		kb->swr[i].opcode = IB_WR_SEND;
		kb->swr[i].send_flags = IB_SEND_SIGNALED;
		kb->swr[i].sg_list = &kb->send_sge;
		kb->swr[i].num_sge = 1;
		kb->rwr[i].sg_list = &kb->recv_sge;
		kb->rwr[i].num_sge = 1;
	}

	return kb_connect(kb, step);
}

static void kb_teardown(struct kb *kb)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int ret;

	if (kb->qp && kb->outstanding) {
		/* Flush what is left and poll it: nothing may be lost. */
		ret = ib_modify_qp(kb->qp, &attr, IB_QP_STATE);
		if (!ret)
			ret = kb_drain(kb, kb->outstanding, true);
		if (ret)
			pr_err("hns_kbench: flush of %llu WRs: %d\n",
			       kb->outstanding, ret);
	}
	if (kb->qp)
		ib_destroy_qp(kb->qp);
	if (kb->cq)
		ib_destroy_cq(kb->cq);
	if (kb->mapped)
		ib_dma_unmap_single(kb->ibdev, kb->dma, PAGE_SIZE,
				    DMA_BIDIRECTIONAL);
	kfree(kb->buf);
	if (kb->pd)
		ib_dealloc_pd(kb->pd);
}

static void kb_clock_overhead(struct kb *kb, u32 n)
{
	u64 t0, t1, kt, lc;
	u32 i;

	for (i = 0; i < n; i++) {
		t0 = ktime_get_ns();
		t1 = ktime_get_ns();
		kb->t[i] = t1 - t0;
	}
	sort(kb->t, n, sizeof(*kb->t), kb_cmp, NULL);
	kt = kb->t[n / 2];
	for (i = 0; i < n; i++) {
		t0 = local_clock();
		t1 = local_clock();
		kb->t[i] = t1 - t0;
	}
	sort(kb->t, n, sizeof(*kb->t), kb_cmp, NULL);
	lc = kb->t[n / 2];
	pr_info("hns_kbench: clock overhead (median of back-to-back reads): ktime_get_ns %llu ns, local_clock %llu ns\n",
		kt, lc);
}

/*
 * A reference for drivers that allocate on the hot path: a 64-byte
 * GFP_ATOMIC kmalloc and its kfree (the test kernel has kmemleak and
 * lockdep, which make allocations expensive).
 */
static void kb_kmalloc_cost(struct kb *kb, u32 n)
{
	u64 t0, t1;
	void *p;
	u32 i;

	for (i = 0; i < n; i++) {
		t0 = local_clock();
		p = kmalloc(KB_MSG, GFP_ATOMIC);
		kfree(p);
		t1 = local_clock();
		kb->t[i] = t1 - t0;
	}
	sort(kb->t, n, sizeof(*kb->t), kb_cmp, NULL);
	pr_info("hns_kbench: kmalloc(64, GFP_ATOMIC) + kfree: median %llu ns, p90 %llu ns\n",
		kb->t[n / 2], kb->t[n * 90 / 100]);
}

static int kb_run(struct ib_device *ibdev)
{
	const char *step = "alloc";
	u32 n = max(samples, 10U), shorts;
	struct kb *kb;
	int ret;

	kb = kzalloc_obj(*kb);
	if (!kb)
		goto nomem;
	kb->t = kvzalloc_objs(*kb->t, n);
	if (!kb->t) {
		kfree(kb);
		goto nomem;
	}
	kb->ibdev = ibdev;
	kb->port = rdma_start_port(ibdev);

	ret = kb_setup(kb, &step);
	if (ret)
		goto out;

	kb_clock_overhead(kb, n);
	kb_kmalloc_cost(kb, n);

	ret = kb_bench_send(kb, 1, n, &step);
	if (ret)
		goto out;
	kb_report("post_send_1", kb->t, n);
	ret = kb_bench_send(kb, KB_WC, n, &step);
	if (ret)
		goto out;
	kb_report("post_send_16", kb->t, n);
	ret = kb_bench_send(kb, kb->depth, n, &step);
	if (ret)
		goto out;
	kb_report("post_send_depth", kb->t, n);

	ret = kb_bench_recv(kb, 1, n, &step);
	if (ret)
		goto out;
	kb_report("post_recv_1", kb->t, n);
	ret = kb_bench_recv(kb, KB_WC, n, &step);
	if (ret)
		goto out;
	kb_report("post_recv_16", kb->t, n);

	ret = kb_bench_poll(kb, n, &shorts, &step);
	if (ret)
		goto out;
	if (shorts)
		pr_info("hns_kbench: poll_cq_16: %u polls returned fewer than %d CQEs (not counted)\n",
			shorts, KB_WC);
	kb_report("poll_cq_16", kb->t, n);

	step = "poll_cq_empty";
	ret = kb_bench_empty(kb, n);
	if (ret)
		goto out;
	kb_report("poll_cq_empty", kb->t, n);
out:
	kb_teardown(kb);
	pr_info("hns_kbench: %s: %d completion events of the never-armed CQ\n",
		dev_name(&ibdev->dev), atomic_read(&kb->events));
	if (ret)
		pr_info("BENCHK error %d %s\n", ret, step);
	else
		pr_info("BENCHK done\n");
	kvfree(kb->t);
	kfree(kb);
	return ret;
nomem:
	pr_info("BENCHK error %d %s\n", -ENOMEM, step);
	return -ENOMEM;
}

static int kb_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev))
		return -EOPNOTSUPP;
	kb_result = kb_run(ibdev);
	/* No client data: nothing to do at remove. */
	return -EOPNOTSUPP;
}

static struct ib_client kb_client = {
	.name = "hns_kbench",
	.add = kb_add,
};

static int __init kb_init(void)
{
	int ret;

	kb_result = -ENODEV;
	ret = ib_register_client(&kb_client);
	if (ret)
		return ret;
	if (kb_result == -ENODEV) {
		pr_info("hns_kbench: no ib_device named \"%s\"\n", dev);
		pr_info("BENCHK error %d no_device\n", -ENODEV);
	}
	return 0;
}

static void __exit kb_exit(void)
{
	ib_unregister_client(&kb_client);
}

module_init(kb_init);
module_exit(kb_exit);

MODULE_DESCRIPTION("Kernel verbs hot-path benchmark (post_send, post_recv, poll_cq)");
MODULE_AUTHOR("hns-roce-rs");
MODULE_LICENSE("Dual BSD/GPL");
