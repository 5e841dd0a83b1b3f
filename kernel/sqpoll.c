// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the send queue polling thread, as io_uring's SQPOLL.  One
 * kernel thread per device watches the producer index of every QP
 * created with SXRC_CREATE_QP_SQPOLL and runs the send queue when it
 * moves, as a doorbell from the poster would: the same loop
 * (sxrc_sq_poll()), the same checks, the same error for a corrupt ring.
 *
 * Between runs it spins while its CPU has nothing else to do.  When
 * another task waits for the CPU it steps aside for SXRC_SQPOLL_BACKOFF,
 * as if asleep except that doorbells do not wake it: the posters ring
 * the doorbell meanwhile, and the send path is what it is without the
 * thread, rather than waiting for the thread's CPU (a spinning thread
 * would keep a busy-polling poster off it until the next tick).
 * After sqpoll_idle_ms without new work (at once when no QP asks for
 * it) the thread marks every polled ring SXRC_RING_POLL_WAKEUP and
 * sleeps; the library then rings the doorbell, which runs the queue in
 * the poster's context and wakes the thread.  The uapi header says how
 * the two sides' barriers pair.
 *
 * Lifetime: dev->sqpoll.qps holds a reference on each QP; a QP leaves
 * the list in its destroy, under sqpoll.lock, before its engine stops.
 * The thread takes a reference of its own on the QP it runs, drops the
 * lock, and runs it under sq_mutex only while the QP is not dead, so a
 * destroyed QP is never run, only its memory kept until the thread lets
 * go.  The thread lives from the device's creation to its removal
 * (sxrc_sqpoll_stop()).
 */
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>

#include "engine.h"

static unsigned int sxrc_sqpoll_idle_ms = 100;
module_param_named(sqpoll_idle_ms, sxrc_sqpoll_idle_ms, uint, 0644);
MODULE_PARM_DESC(sqpoll_idle_ms,
		 "Milliseconds the send queue polling thread spins without work before it sleeps (default 100)");

/* How long the thread steps aside while other tasks want its CPU. */
#define SXRC_SQPOLL_BACKOFF	max_t(long, msecs_to_jiffies(10), 1)

static u32 sxrc_sqpoll_prod(struct sxrc_qp *qp)
{
	return READ_ONCE(sxrc_ring_hdr(qp->sq.ring)->prod);
}

/*
 * The next polled QP whose producer index moved since the thread last
 * acted on it, with a reference; it goes to the end of the list, so
 * that every QP gets its turn.  NULL if none.
 */
static struct sxrc_qp *sxrc_sqpoll_next(struct sxrc_sqpoll *sp)
{
	struct sxrc_qp *qp, *found = NULL;
	u32 prod;

	spin_lock_bh(&sp->lock);
	list_for_each_entry(qp, &sp->qps, sqpoll_entry) {
		prod = sxrc_sqpoll_prod(qp);
		if (prod != qp->sqpoll_seen) {
			qp->sqpoll_seen = prod;
			kref_get(&qp->obj.ref);
			list_move_tail(&qp->sqpoll_entry, &sp->qps);
			found = qp;
			break;
		}
	}
	spin_unlock_bh(&sp->lock);
	return found;
}

/* Mark the polled rings (@wakeup) or clear them, under sp->lock. */
static void sxrc_sqpoll_mark(struct sxrc_sqpoll *sp, bool wakeup)
{
	struct sxrc_qp *qp;

	lockdep_assert_held(&sp->lock);
	WRITE_ONCE(sp->sleeping, wakeup);
	list_for_each_entry(qp, &sp->qps, sqpoll_entry)
		WRITE_ONCE(sxrc_ring_hdr(qp->sq.ring)->poll,
			   wakeup ? SXRC_RING_POLL_WAKEUP : 0);
}

/* Has a polled ring moved since the thread last looked? */
static bool sxrc_sqpoll_pending(struct sxrc_sqpoll *sp)
{
	struct sxrc_qp *qp;
	bool ret = false;

	spin_lock_bh(&sp->lock);
	list_for_each_entry(qp, &sp->qps, sqpoll_entry)
		if (sxrc_sqpoll_prod(qp) != qp->sqpoll_seen)
			ret = true;
	spin_unlock_bh(&sp->lock);
	return ret;
}

/*
 * Sleep until a doorbell, a new polled QP or the device's removal wakes
 * the thread; with @backoff, until @backoff jiffies have passed, and not
 * for a doorbell.  The task state is set before the rings are marked: a
 * wake-up from then on makes schedule() return at once.
 */
static void sxrc_sqpoll_sleep(struct sxrc_sqpoll *sp, long backoff)
{
	set_current_state(TASK_INTERRUPTIBLE);
	spin_lock_bh(&sp->lock);
	WRITE_ONCE(sp->backoff, backoff != 0);
	sxrc_sqpoll_mark(sp, true);
	spin_unlock_bh(&sp->lock);
	/* Pairs with the library's barrier between @prod and @poll. */
	smp_mb();
	if (!sxrc_sqpoll_pending(sp) && !kthread_should_stop())
		schedule_timeout(backoff ? backoff : MAX_SCHEDULE_TIMEOUT);
	__set_current_state(TASK_RUNNING);
	spin_lock_bh(&sp->lock);
	WRITE_ONCE(sp->backoff, false);
	sxrc_sqpoll_mark(sp, false);
	spin_unlock_bh(&sp->lock);
}

static int sxrc_sqpoll_thread(void *data)
{
	struct sxrc_sqpoll *sp = data;
	unsigned long busy = jiffies, idle;
	struct sxrc_qp *qp;

	while (!kthread_should_stop()) {
		qp = sxrc_sqpoll_next(sp);
		idle = msecs_to_jiffies(READ_ONCE(sxrc_sqpoll_idle_ms));
		if (qp) {
			sxrc_sq_poll(qp);
			sxrc_obj_drop(&qp->obj);
			busy = jiffies;
		} else if (list_empty_careful(&sp->qps) ||
			   time_after(jiffies, busy + idle)) {
			sxrc_sqpoll_sleep(sp, 0);
			busy = jiffies;
		} else if (!single_task_running()) {
			/*
			 * Another task (a poster busy polling its CQ, most
			 * likely) wants this CPU: spinning here would keep
			 * it off until the next tick, and a nap would not
			 * preempt it.  Step aside; posters ring the doorbell
			 * meanwhile, and the thread looks again later.
			 */
			sxrc_sqpoll_sleep(sp, SXRC_SQPOLL_BACKOFF);
		} else {
			cpu_relax();
		}
		cond_resched();
	}
	return 0;
}

int sxrc_sqpoll_start(struct sxrc_dev *dev)
{
	struct sxrc_sqpoll *sp = &dev->sqpoll;

	spin_lock_init(&sp->lock);
	INIT_LIST_HEAD(&sp->qps);
	sp->task = kthread_run(sxrc_sqpoll_thread, sp, "%s_sqpoll", dev->name);
	if (IS_ERR(sp->task)) {
		int ret = PTR_ERR(sp->task);

		sp->task = NULL;
		return ret;
	}
	return 0;
}

/*
 * The device goes away (sxrc_dev_remove()), or its creation failed: the
 * thread stops.  QPs of contexts still open on a removed device stay
 * listed, unpolled, until their destroy; nothing wakes the thread any
 * more (sp->task is cleared under the lock the wakers take).
 */
void sxrc_sqpoll_stop(struct sxrc_dev *dev)
{
	struct sxrc_sqpoll *sp = &dev->sqpoll;
	struct task_struct *task;

	spin_lock_bh(&sp->lock);
	task = sp->task;
	sp->task = NULL;
	spin_unlock_bh(&sp->lock);
	if (task)
		kthread_stop(task);
}

/*
 * A QP that asks for polling gets its scratch space now, charged to its
 * creator: the thread would otherwise allocate it on the first run.
 */
int sxrc_sqpoll_prepare(struct sxrc_qp *qp)
{
	struct sxrc_scratch *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->qp = qp;
	qp->scratch = s;
	qp->sqpoll = true;
	return 0;
}

/* Start polling a new QP (created, not yet published: nothing fails). */
void sxrc_sqpoll_add(struct sxrc_qp *qp)
{
	struct sxrc_sqpoll *sp = &qp->obj.ctx->dev->sqpoll;

	kref_get(&qp->obj.ref);
	spin_lock_bh(&sp->lock);
	qp->sqpoll_seen = sxrc_sqpoll_prod(qp);
	list_add_tail(&qp->sqpoll_entry, &sp->qps);
	/* The thread sleeps: this ring needs the doorbell too, until it wakes. */
	if (sp->sleeping)
		WRITE_ONCE(sxrc_ring_hdr(qp->sq.ring)->poll,
			   SXRC_RING_POLL_WAKEUP);
	if (sp->task)
		wake_up_process(sp->task);
	spin_unlock_bh(&sp->lock);
}

/* The QP is being destroyed: the thread no longer finds it. */
void sxrc_sqpoll_del(struct sxrc_qp *qp)
{
	struct sxrc_sqpoll *sp = &qp->obj.ctx->dev->sqpoll;

	bool listed;

	if (!qp->sqpoll)
		return;
	spin_lock_bh(&sp->lock);
	listed = !list_empty(&qp->sqpoll_entry);
	list_del_init(&qp->sqpoll_entry);
	spin_unlock_bh(&sp->lock);
	if (listed)
		sxrc_obj_drop(&qp->obj);
}

/* A doorbell on a polled QP: the thread sleeps (not aside), wake it. */
void sxrc_sqpoll_doorbell(struct sxrc_qp *qp)
{
	struct sxrc_sqpoll *sp = &qp->obj.ctx->dev->sqpoll;

	if (qp->sqpoll && READ_ONCE(sp->sleeping) && !READ_ONCE(sp->backoff)) {
		spin_lock_bh(&sp->lock);
		if (sp->task)
			wake_up_process(sp->task);
		spin_unlock_bh(&sp->lock);
	}
}
