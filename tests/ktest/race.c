// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * race: kernel threads that use and destroy the same verbs objects at the
 * same time, within the kernel verbs contract, while hns-sim posts events
 * for the objects' numbers around their create and destroy mailboxes
 * (the plan arms its storm:N control command first).
 *
 * At load, for the device named by "dev" (default hns_0), "workers" pairs
 * of kernel threads (default 2) run rounds for "seconds" seconds (default
 * 15). In each round the owner thread creates a CQ (its completion
 * handler polls it and re-arms it, its event handler polls it), an SRQ
 * (its event handler counts), an RC QP connected to itself and a second
 * RC QP on the SRQ moved to INIT (the QPs' event handlers poll the CQ).
 * The poster thread of the pair then posts receive and SEND pairs on the
 * first QP in a loop while the owner, after a random pause, modifies the
 * QP to ERR under it; the owner stops the poster (the contract: no post
 * on a destroyed QP) and destroys the QPs, the SRQ and the CQ in a
 * random order of the QPs while the flush completions still reach the
 * completion handler. The next round gets freshly reused numbers.
 *
 * insmod returns when the rounds are over; the counts are read-only
 * parameters: rounds, posts (accepted), post_refused, comp_calls, polled
 * (successful completions), flushed (WR_FLUSH_ERR), other_status (any
 * other unsuccessful status), qp_events, cq_events, srq_events, failures
 * (a create, modify or destroy that failed, a negative ib_poll_cq or
 * ib_req_notify_cq) and result (0 when the rounds ran, else a negative
 * errno of the set-up). One "race:" summary line in the kernel log.
 *
 * Build: make ktest-kmod (build/ktest/race.ko); run by
 * tests/guest/stress-plan.sh.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/wait.h>
#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include "ktest.h"

#define RACE_DEPTH	16
/* Room for every WR the QPs can have outstanding, as the driver rounds them. */
#define RACE_CQE	1024
#define RACE_MSG	64
#define RACE_RECV_OFF	2048
#define RACE_WC		8
#define RACE_MAX_WORKERS 4

static char *dev = "hns_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the ib_device to use (default hns_0)");

static int seconds = 15;
module_param(seconds, int, 0444);
MODULE_PARM_DESC(seconds, "how long the rounds run (default 15)");

static int workers = 2;
module_param(workers, int, 0444);
MODULE_PARM_DESC(workers, "owner/poster thread pairs (default 2, at most 4)");

static int race_result = -ENODEV;
module_param_named(result, race_result, int, 0444);
MODULE_PARM_DESC(result, "0 once the rounds ran, else the set-up's errno");

static atomic_t race_rounds, race_posts, race_post_refused, race_comp_calls;
static atomic_t race_polled, race_flushed, race_other, race_qp_events;
static atomic_t race_cq_events, race_srq_events, race_failures;

KTEST_COUNTER(rounds, race_rounds);
KTEST_COUNTER(posts, race_posts);
KTEST_COUNTER(post_refused, race_post_refused);
KTEST_COUNTER(comp_calls, race_comp_calls);
KTEST_COUNTER(polled, race_polled);
KTEST_COUNTER(flushed, race_flushed);
KTEST_COUNTER(other_status, race_other);
KTEST_COUNTER(qp_events, race_qp_events);
KTEST_COUNTER(cq_events, race_cq_events);
KTEST_COUNTER(srq_events, race_srq_events);
KTEST_COUNTER(failures, race_failures);

/* What every round of every worker shares. */
struct race_dev {
	struct ib_device *ibdev;
	u32 port;
	struct ib_pd *pd;
	union ib_gid gid;
	int gid_index;
	u8 mac[ETH_ALEN];
	enum ib_mtu mtu;
	/* The rounds' deadline (ktime_get(): jiffies lag behind in a loaded TCG guest). */
	ktime_t end;
};

/* One round's objects. */
struct race_round {
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *qp;
	struct ib_qp *qp2;
};

/* An owner/poster pair. */
struct race_worker {
	struct race_dev *rd;
	int id;
	void *buf;
	u64 dma;
	bool mapped;
	struct task_struct *owner;
	struct task_struct *poster;
	/*
	 * The QP the poster posts on while post_go is set; post_busy while it
	 * may still post on it. Both flags change under lock, so that the
	 * owner, once it saw post_go clear and post_busy clear, knows that
	 * no post on the QP is running or will start.
	 */
	spinlock_t lock;
	struct ib_qp *post_qp;
	bool post_go;
	bool post_busy;
	bool done;
	wait_queue_head_t wq;
	struct completion owner_done;
};

static void race_fail(int id, const char *step, int ret)
{
	atomic_inc(&race_failures);
	pr_err("race: worker %d: %s failed: %d\n", id, step, ret);
}

/* Polls the CQ empty, counting what it finds. */
static void race_poll(struct ib_cq *cq)
{
	struct ib_wc wc[RACE_WC];
	int n, i;

	do {
		n = ib_poll_cq(cq, RACE_WC, wc);
		if (n < 0) {
			atomic_inc(&race_failures);
			return;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status == IB_WC_SUCCESS)
				atomic_inc(&race_polled);
			else if (wc[i].status == IB_WC_WR_FLUSH_ERR)
				atomic_inc(&race_flushed);
			else
				atomic_inc(&race_other);
		}
	} while (n > 0);
}

/* Completion handler: poll, re-arm, poll what came in between. */
static void race_comp(struct ib_cq *cq, void *ctx)
{
	int ret;

	atomic_inc(&race_comp_calls);
	race_poll(cq);
	ret = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
	if (ret < 0)
		atomic_inc(&race_failures);
	else if (ret > 0)
		race_poll(cq);
}

static void race_cq_event(struct ib_event *ev, void *ctx)
{
	atomic_inc(&race_cq_events);
	race_poll(ev->element.cq);
}

/* A QP's event handler polls the CQ of the round (alive: QPs go first). */
static void race_qp_event(struct ib_event *ev, void *ctx)
{
	struct race_round *r = ctx;

	atomic_inc(&race_qp_events);
	race_poll(r->cq);
}

static void race_srq_event(struct ib_event *ev, void *ctx)
{
	atomic_inc(&race_srq_events);
}

/* The port's first non-zero RoCE v2 GID (waits up to 10 s for it). */
static int race_find_gid(struct race_dev *rd)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int tries, i, ret;
	u16 vlan;

	for (tries = 0; tries < 100; tries++) {
		ret = ib_query_port(rd->ibdev, rd->port, &pattr);
		if (ret)
			return ret;
		if (pattr.state != IB_PORT_ACTIVE) {
			msleep(100);
			continue;
		}
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			attr = rdma_get_gid_attr(rd->ibdev, rd->port, i);
			if (IS_ERR(attr))
				continue;
			if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
			    !rdma_is_zero_gid(&attr->gid)) {
				rd->gid = attr->gid;
				rd->gid_index = attr->index;
				ret = rdma_read_gid_l2_fields(attr, &vlan, rd->mac);
				rdma_put_gid_attr(attr);
				rd->mtu = min_t(enum ib_mtu, pattr.active_mtu,
						IB_MTU_1024);
				return ret;
			}
			rdma_put_gid_attr(attr);
		}
		msleep(100);
	}
	return -ENOENT;
}

static int race_to_init(struct race_dev *rd, struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = rd->port,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

/* The RC QP to RTS, connected to itself. */
static int race_connect(struct race_dev *rd, struct ib_qp *qp)
{
	int ret;

	ret = race_to_init(rd, qp);
	if (ret)
		return ret;
	return ktest_connect_self(qp, rd->port, rd->mtu, &rd->gid,
				  rd->gid_index, rd->mac);
}

/* One receive and one SEND on the QP; 0 when both were accepted. */
static int race_post_pair(struct race_worker *w, struct ib_qp *qp)
{
	struct ib_sge ssge = {
		.addr = w->dma,
		.length = RACE_MSG,
		.lkey = w->rd->pd->local_dma_lkey,
	};
	struct ib_sge rsge = {
		.addr = w->dma + RACE_RECV_OFF,
		.length = RACE_MSG,
		.lkey = w->rd->pd->local_dma_lkey,
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

	ret = ib_post_recv(qp, &rwr, NULL);
	if (ret)
		return ret;
	return ib_post_send(qp, &swr, NULL);
}

/* The poster: pairs on post_qp while post_go, until the worker is done. */
static int race_poster(void *arg)
{
	struct race_worker *w = arg;
	struct ib_qp *qp;

	for (;;) {
		wait_event(w->wq, READ_ONCE(w->post_go) || READ_ONCE(w->done));
		if (READ_ONCE(w->done))
			break;
		spin_lock(&w->lock);
		if (!w->post_go) {
			spin_unlock(&w->lock);
			continue;
		}
		w->post_busy = true;
		qp = w->post_qp;
		spin_unlock(&w->lock);
		while (READ_ONCE(w->post_go)) {
			if (race_post_pair(w, qp)) {
				atomic_inc(&race_post_refused);
				usleep_range(200, 400);
			} else {
				atomic_inc(&race_posts);
			}
			cond_resched();
		}
		spin_lock(&w->lock);
		w->post_busy = false;
		spin_unlock(&w->lock);
		wake_up_all(&w->wq);
	}
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

static bool race_poster_idle(struct race_worker *w)
{
	bool idle;

	spin_lock(&w->lock);
	idle = !w->post_busy;
	spin_unlock(&w->lock);
	return idle;
}

static struct ib_qp *race_create_qp(struct race_dev *rd, struct race_round *r,
				    struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.event_handler = race_qp_event,
		.qp_context = r,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.srq = srq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
		.cap = {
			.max_send_wr = RACE_DEPTH,
			.max_recv_wr = srq ? 0 : RACE_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = srq ? 0 : 1,
		},
	};

	return ib_create_qp(rd->pd, &init);
}

static void race_destroy_qp(int id, struct ib_qp **qp)
{
	int ret;

	if (!*qp)
		return;
	ret = ib_destroy_qp(*qp);
	if (ret)
		race_fail(id, "destroy_qp", ret);
	*qp = NULL;
}

/* One round; false once a step failed. */
static bool race_round(struct race_worker *w)
{
	struct ib_cq_init_attr cattr = { .cqe = RACE_CQE };
	struct ib_srq_init_attr sattr = {
		.event_handler = race_srq_event,
		.attr = { .max_wr = RACE_DEPTH, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct race_dev *rd = w->rd;
	const char *step;
	struct race_round *r;
	bool ok = false;
	int ret;

	r = kzalloc_obj(*r);
	if (!r) {
		race_fail(w->id, "alloc", -ENOMEM);
		return false;
	}
	step = "create_cq";
	r->cq = ib_create_cq(rd->ibdev, race_comp, race_cq_event, r, &cattr);
	if (IS_ERR(r->cq)) {
		ret = PTR_ERR(r->cq);
		r->cq = NULL;
		goto out;
	}
	ret = ib_req_notify_cq(r->cq, IB_CQ_NEXT_COMP);
	if (ret < 0)
		goto out;
	step = "create_srq";
	sattr.srq_context = r;
	r->srq = ib_create_srq(rd->pd, &sattr);
	if (IS_ERR(r->srq)) {
		ret = PTR_ERR(r->srq);
		r->srq = NULL;
		goto out;
	}
	step = "create_qp";
	r->qp = race_create_qp(rd, r, NULL);
	if (IS_ERR(r->qp)) {
		ret = PTR_ERR(r->qp);
		r->qp = NULL;
		goto out;
	}
	step = "create_qp_srq";
	r->qp2 = race_create_qp(rd, r, r->srq);
	if (IS_ERR(r->qp2)) {
		ret = PTR_ERR(r->qp2);
		r->qp2 = NULL;
		goto out;
	}
	step = "connect";
	ret = race_connect(rd, r->qp);
	if (ret)
		goto out;
	step = "qp_srq_init";
	ret = race_to_init(rd, r->qp2);
	if (ret)
		goto out;

	/* Posts from the poster while this thread moves the QP to ERR. */
	spin_lock(&w->lock);
	w->post_qp = r->qp;
	w->post_go = true;
	spin_unlock(&w->lock);
	wake_up_all(&w->wq);
	usleep_range(1000, 1000 + get_random_u32_below(8000));
	step = "modify_err";
	ret = ib_modify_qp(r->qp, &err, IB_QP_STATE);
	usleep_range(100, 100 + get_random_u32_below(2000));
	spin_lock(&w->lock);
	w->post_go = false;
	spin_unlock(&w->lock);
	wait_event(w->wq, race_poster_idle(w));
	if (ret)
		goto out;
	ok = true;
out:
	if (!ok)
		race_fail(w->id, step, ret);
	/* QPs first (either order), then the SRQ and the CQ. */
	if (get_random_u32_below(2)) {
		race_destroy_qp(w->id, &r->qp2);
		race_destroy_qp(w->id, &r->qp);
	} else {
		race_destroy_qp(w->id, &r->qp);
		race_destroy_qp(w->id, &r->qp2);
	}
	if (r->srq)
		ib_destroy_srq(r->srq);
	if (r->cq)
		ib_destroy_cq(r->cq);
	kfree(r);
	if (ok)
		atomic_inc(&race_rounds);
	return ok;
}

static int race_owner(void *arg)
{
	struct race_worker *w = arg;
	int bad = 0;

	/* A few failed rounds in a row end the worker (a broken device). */
	while (ktime_before(ktime_get(), w->rd->end) && bad < 5) {
		if (race_round(w))
			bad = 0;
		else
			bad++;
	}
	WRITE_ONCE(w->done, true);
	wake_up_all(&w->wq);
	complete(&w->owner_done);
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

static void race_free_worker(struct race_worker *w)
{
	if (w->mapped)
		ib_dma_unmap_single(w->rd->ibdev, w->dma, PAGE_SIZE,
				    DMA_BIDIRECTIONAL);
	kfree(w->buf);
}

static int race_run(struct race_dev *rd)
{
	struct race_worker *ws;
	int i, n, ret = 0;

	n = clamp(workers, 1, RACE_MAX_WORKERS);
	ws = kcalloc(n, sizeof(*ws), GFP_KERNEL);
	if (!ws)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct race_worker *w = &ws[i];

		w->rd = rd;
		w->id = i;
		init_waitqueue_head(&w->wq);
		spin_lock_init(&w->lock);
		init_completion(&w->owner_done);
		w->buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
		if (!w->buf) {
			ret = -ENOMEM;
			goto free;
		}
		w->dma = ib_dma_map_single(rd->ibdev, w->buf, PAGE_SIZE,
					   DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(rd->ibdev, w->dma)) {
			ret = -ENOMEM;
			goto free;
		}
		w->mapped = true;
	}
	rd->end = ktime_add_ms(ktime_get(), seconds * MSEC_PER_SEC);
	pr_info("race: %s: %d worker pairs for %d s\n", dev, n, seconds);
	for (i = 0; i < n; i++) {
		struct race_worker *w = &ws[i];

		w->poster = kthread_run(race_poster, w, "race_post/%d", i);
		if (IS_ERR(w->poster)) {
			ret = PTR_ERR(w->poster);
			w->poster = NULL;
			break;
		}
		w->owner = kthread_run(race_owner, w, "race_own/%d", i);
		if (IS_ERR(w->owner)) {
			ret = PTR_ERR(w->owner);
			w->owner = NULL;
			WRITE_ONCE(w->done, true);
			wake_up_all(&w->wq);
			break;
		}
	}
	for (i = 0; i < n; i++) {
		struct race_worker *w = &ws[i];

		if (w->owner) {
			wait_for_completion(&w->owner_done);
			kthread_stop(w->owner);
		}
		if (w->poster)
			kthread_stop(w->poster);
	}
free:
	for (i = 0; i < n; i++)
		race_free_worker(&ws[i]);
	kfree(ws);
	return ret;
}

/* The device named by "dev", with a registration reference. */
static struct ib_device *race_ibdev;

static int race_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev) || race_ibdev)
		return -EOPNOTSUPP;
	if (!ib_device_try_get(ibdev))
		return -ENODEV;
	race_ibdev = ibdev;
	return 0;
}

static void race_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client race_client = {
	.name = "race",
	.add = race_add,
	.remove = race_remove,
};

static int __init race_init(void)
{
	struct race_dev *rd;
	int ret;

	ret = ib_register_client(&race_client);
	if (ret)
		return ret;
	rd = kzalloc_obj(*rd);
	if (!rd) {
		ret = -ENOMEM;
		goto put;
	}
	rd->ibdev = race_ibdev;
	if (!rd->ibdev) {
		ret = -ENODEV;
		goto free;
	}
	rd->port = rdma_start_port(rd->ibdev);
	ret = race_find_gid(rd);
	if (ret)
		goto free;
	rd->pd = ib_alloc_pd(rd->ibdev, 0);
	if (IS_ERR(rd->pd)) {
		ret = PTR_ERR(rd->pd);
		goto free;
	}
	ret = race_run(rd);
	ib_dealloc_pd(rd->pd);
free:
	kfree(rd);
put:
	if (race_ibdev)
		ib_device_put(race_ibdev);
	race_result = ret;
	pr_info("race: %s: result %d rounds %d posts %d refused %d comp_calls %d polled %d flushed %d other %d qp_events %d cq_events %d srq_events %d failures %d\n",
		dev, ret, atomic_read(&race_rounds), atomic_read(&race_posts),
		atomic_read(&race_post_refused), atomic_read(&race_comp_calls),
		atomic_read(&race_polled), atomic_read(&race_flushed),
		atomic_read(&race_other), atomic_read(&race_qp_events),
		atomic_read(&race_cq_events), atomic_read(&race_srq_events),
		atomic_read(&race_failures));
	return 0;
}

static void __exit race_exit(void)
{
	ib_unregister_client(&race_client);
}

module_init(race_init);
module_exit(race_exit);

MODULE_DESCRIPTION("Kernel verbs test: destroy racing use, events racing create and destroy");
MODULE_AUTHOR("hns-roce-rs");
MODULE_LICENSE("Dual BSD/GPL");
