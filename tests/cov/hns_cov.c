// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hns_cov: the coverage collector of `make coverage` (docs/harness.md,
 * "Coverage"). The coverage build of hns_roce_rs.ko (make module-cov) calls
 * __sanitizer_cov_trace_pc at the entry of every basic block, as KCOV
 * instruments the kernel; the test kernel has no KCOV, so this module
 * defines the symbol and the driver links against it.
 *
 * Each call records its return address (the instrumented block's call
 * site) once, in a fixed open-addressing table filled with cmpxchg: no
 * lock, no allocation, nothing that sleeps, so any context the driver runs
 * in (hard IRQ, softirq, process) may record. This file is built without
 * instrumentation and the hook is notrace.
 *
 * Addresses mean nothing once the driver's memory is freed or reused, so
 * a module notifier turns them into offsets in the driver's text: when
 * the module named by the parameter "target" (default hns_roce_rs) comes,
 * its MOD_TEXT and MOD_INIT_TEXT bases are noted; when it is live (its
 * init text is about to be freed) and when it goes (after its exit
 * function, or after a failed init) every recorded address inside it is
 * moved to a second table as "init" or "text" plus offset, the raw
 * entries cleared. Reloads within one boot therefore accumulate.
 *
 * debugfs hns_cov/offsets lists the offset set (converting what the live
 * driver recorded so far, without clearing it): a header of "#" lines
 * (loads, entries, what did not fit), an "anchor" line per region giving
 * the offset of the target's init and exit functions (for the host to
 * check its section layout against), then one "text OFF" or "init OFF"
 * line per recorded block, OFF in hex. scripts/coverage-report.py maps the
 * offsets to functions and lines of the .ko.
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>

/*
 * Raw return addresses: a power of two, about four times the call sites
 * of the coverage build (about 8000), so that probe chains stay short.
 */
#define HNS_COV_RAW_BITS 15
#define HNS_COV_RAW_SIZE (1U << HNS_COV_RAW_BITS)
/* Probes before a record gives up (counted in raw_dropped). */
#define HNS_COV_PROBES 64
/* Offsets of every load: region bit 31, offset below. */
#define HNS_COV_OFF_BITS 15
#define HNS_COV_OFF_SIZE (1U << HNS_COV_OFF_BITS)
#define HNS_COV_INIT_BIT 0x80000000U

static char *target = "hns_roce_rs";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "name of the instrumented module (default hns_roce_rs)");

static unsigned long hns_cov_raw[HNS_COV_RAW_SIZE];
static atomic_t hns_cov_raw_dropped = ATOMIC_INIT(0);

/* Everything below is only touched under hns_cov_lock (process context). */
static DEFINE_MUTEX(hns_cov_lock);
/* Key + 1, so that 0 marks a free slot. */
static u32 hns_cov_off[HNS_COV_OFF_SIZE];
static unsigned int hns_cov_off_count;
static unsigned int hns_cov_off_dropped;
static unsigned int hns_cov_loads;
static unsigned int hns_cov_outside;

/* The target's text regions while it is loaded (0: not loaded). */
static unsigned long hns_cov_text, hns_cov_text_size;
static unsigned long hns_cov_init, hns_cov_init_size;
/* Offsets of its init and exit functions, -1 when unknown. */
static long hns_cov_anchor_init = -1, hns_cov_anchor_exit = -1;

static __always_inline u32 hns_cov_hash(unsigned long v, unsigned int bits)
{
	return hash_64((u64)v, bits);
}

void __sanitizer_cov_trace_pc(void);

/*
 * The instrumented driver's hook, at the entry of each of its basic
 * blocks. Lock-free and allocation-free: safe in every context.
 */
void notrace __sanitizer_cov_trace_pc(void)
{
	unsigned long pc = _RET_IP_;
	u32 i = hns_cov_hash(pc, HNS_COV_RAW_BITS);
	unsigned int n;

	for (n = 0; n < HNS_COV_PROBES; n++) {
		unsigned long cur = READ_ONCE(hns_cov_raw[i]);

		if (cur == pc)
			return;
		if (!cur) {
			cur = cmpxchg(&hns_cov_raw[i], 0UL, pc);
			if (!cur || cur == pc)
				return;
		}
		i = (i + 1) & (HNS_COV_RAW_SIZE - 1);
	}
	atomic_inc(&hns_cov_raw_dropped);
}
EXPORT_SYMBOL(__sanitizer_cov_trace_pc);

static void hns_cov_add_off(u32 key)
{
	u32 i = hns_cov_hash(key, HNS_COV_OFF_BITS);
	unsigned int n;

	lockdep_assert_held(&hns_cov_lock);
	for (n = 0; n < HNS_COV_OFF_SIZE; n++) {
		if (hns_cov_off[i] == key + 1)
			return;
		if (!hns_cov_off[i]) {
			hns_cov_off[i] = key + 1;
			hns_cov_off_count++;
			return;
		}
		i = (i + 1) & (HNS_COV_OFF_SIZE - 1);
	}
	hns_cov_off_dropped++;
}

/*
 * Move the raw addresses inside the loaded target's text (and init text
 * when with_init) to the offset table. Those of a region about to be freed
 * (drop_init, drop_text) leave the raw table, so that a later load placed
 * there starts clean; the others stay (they are recorded already).
 */
static void hns_cov_convert(bool with_init, bool drop_init, bool drop_text)
{
	unsigned int i;

	lockdep_assert_held(&hns_cov_lock);
	if (!hns_cov_text)
		return;
	for (i = 0; i < HNS_COV_RAW_SIZE; i++) {
		unsigned long pc = READ_ONCE(hns_cov_raw[i]);
		bool drop;
		u32 key;

		if (!pc)
			continue;
		if (pc - hns_cov_text < hns_cov_text_size) {
			key = pc - hns_cov_text;
			drop = drop_text;
		} else if (with_init && hns_cov_init &&
			   pc - hns_cov_init < hns_cov_init_size) {
			key = (pc - hns_cov_init) | HNS_COV_INIT_BIT;
			drop = drop_init;
		} else {
			continue;
		}
		hns_cov_add_off(key);
		if (drop)
			cmpxchg(&hns_cov_raw[i], pc, 0UL);
	}
}

static int hns_cov_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, target))
		return NOTIFY_DONE;
	mutex_lock(&hns_cov_lock);
	switch (state) {
	case MODULE_STATE_COMING:
		/* Whatever lies there now cannot be an older load's. */
		hns_cov_text = (unsigned long)mod->mem[MOD_TEXT].base;
		hns_cov_text_size = mod->mem[MOD_TEXT].size;
		hns_cov_init = (unsigned long)mod->mem[MOD_INIT_TEXT].base;
		hns_cov_init_size = mod->mem[MOD_INIT_TEXT].size;
		if (mod->init && hns_cov_init &&
		    (unsigned long)mod->init - hns_cov_init < hns_cov_init_size)
			hns_cov_anchor_init = (unsigned long)mod->init - hns_cov_init;
#ifdef CONFIG_MODULE_UNLOAD
		if (mod->exit &&
		    (unsigned long)mod->exit - hns_cov_text < hns_cov_text_size)
			hns_cov_anchor_exit = (unsigned long)mod->exit - hns_cov_text;
#endif
		hns_cov_loads++;
		break;
	case MODULE_STATE_LIVE:
		/* The init text is freed after this notification. */
		hns_cov_convert(true, true, false);
		hns_cov_init = 0;
		hns_cov_init_size = 0;
		break;
	case MODULE_STATE_GOING:
		hns_cov_convert(true, true, true);
		hns_cov_text = 0;
		hns_cov_text_size = 0;
		hns_cov_init = 0;
		hns_cov_init_size = 0;
		break;
	}
	mutex_unlock(&hns_cov_lock);
	return NOTIFY_DONE;
}

static struct notifier_block hns_cov_nb = {
	.notifier_call = hns_cov_notify,
};

static int hns_cov_show(struct seq_file *m, void *v)
{
	unsigned int i, raw_left = 0;

	mutex_lock(&hns_cov_lock);
	/* The live target's blocks so far; they stay in the raw table. */
	hns_cov_convert(false, false, false);
	for (i = 0; i < HNS_COV_RAW_SIZE; i++) {
		unsigned long pc = READ_ONCE(hns_cov_raw[i]);

		if (pc && !(hns_cov_text && pc - hns_cov_text < hns_cov_text_size))
			raw_left++;
	}
	hns_cov_outside = raw_left;
	seq_printf(m, "# hns_cov target=%s loads=%u offsets=%u\n", target, hns_cov_loads,
		   hns_cov_off_count);
	seq_printf(m, "# dropped raw=%d offsets=%u outside=%u\n",
		   atomic_read(&hns_cov_raw_dropped), hns_cov_off_dropped, hns_cov_outside);
	if (hns_cov_anchor_init >= 0)
		seq_printf(m, "anchor init init_module %lx\n",
			   (unsigned long)hns_cov_anchor_init);
	if (hns_cov_anchor_exit >= 0)
		seq_printf(m, "anchor text cleanup_module %lx\n",
			   (unsigned long)hns_cov_anchor_exit);
	for (i = 0; i < HNS_COV_OFF_SIZE; i++) {
		u32 key = hns_cov_off[i];

		if (!key)
			continue;
		key--;
		seq_printf(m, "%s %x\n", key & HNS_COV_INIT_BIT ? "init" : "text",
			   key & ~HNS_COV_INIT_BIT);
	}
	mutex_unlock(&hns_cov_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hns_cov);

static struct dentry *hns_cov_dir;

static int __init hns_cov_mod_init(void)
{
	int ret = register_module_notifier(&hns_cov_nb);

	if (ret)
		return ret;
	hns_cov_dir = debugfs_create_dir("hns_cov", NULL);
	debugfs_create_file("offsets", 0444, hns_cov_dir, NULL, &hns_cov_fops);
	return 0;
}

static void __exit hns_cov_mod_exit(void)
{
	debugfs_remove_recursive(hns_cov_dir);
	unregister_module_notifier(&hns_cov_nb);
}

module_init(hns_cov_mod_init);
module_exit(hns_cov_mod_exit);
MODULE_DESCRIPTION("Basic-block coverage collector for an instrumented module");
MODULE_LICENSE("Dual BSD/GPL");
