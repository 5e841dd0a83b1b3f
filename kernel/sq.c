// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the send queue: its loop, its retries, its work item and its
 * locks.
 * The requester (requester.c) turns one WQE into a message, the local
 * delivery path (local.c) hands it to the responder (responder.c) of
 * the receiving QP, copy.c moves the bytes.
 *
 * A send queue runs when its owner rings the doorbell, in the owner's
 * own context: each WQE is read from the ring (once, into kernel
 * memory), checked, and executed against the pinned pages of the local
 * and the remote MRs, then completed.  Nothing is "sent": the responder's
 * side of the operation (consuming a receive WQE, checking an rkey,
 * writing its CQE) happens right there, under the responder's locks.
 *
 * A responder takes a message only from the QP it is connected to, in
 * PSN sequence (UD excepted: Q_Keys): anything else is dropped as a wire
 * would drop it, and the requester sees a lost message.
 *
 * When the responder cannot take a message yet (no receive posted: RNR;
 * QP not there, not ready, or not its peer: a lost packet), the head WQE
 * waits as the IBTA says it would on a wire: a delayed work item retries
 * it after the responder's RNR timer or the requester's ack timeout, up
 * to rnr_retry and retry_cnt times, and the queue goes on from there by
 * itself.
 *
 * One system call does bounded work: a doorbell executes at most
 * SXRC_SQ_BUDGET_WQES WQEs or SXRC_SQ_BUDGET_BYTES bytes and leaves the
 * rest to the QP's work item (on sxrc_wq); copies yield the CPU as they
 * go and stop when the poster is killed or the QP destroyed.
 *
 * Locks, outermost first, as Documentation/design.rst ("Locks") lists
 * them: mr->rereg_mutex, qp->sq_mutex (the requester's send queue), the
 * wire responder's rs_mutex (wire.h), dev->mcast_lock (UD multicast),
 * xrcd->lock (an XRC receive QP's registrations, for its events), in
 * softirq the wire's rs_lock or qp->sq_lock, the responder's rq_lock or
 * srq->lock, mw->lock, mr->lock, qp->lock, cq->lock, dev->lock, an
 * event queue's lock (a context's async events' ctx->evq.lock, a
 * channel's channel->evf.q.lock: one lockdep class, a leaf),
 * dev->users_lock.
 * Nothing is held while a copy waits for others to leave an MR
 * (invalidation, unbinding a window).  An ODP region's odp_lock (two at
 * most, in address order) is held around one page of a copy and
 * nothing else; its pages are faulted in with no spinlock held (odp.c).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "engine.h"
#include "sxrc_trace.h"

/* Work one doorbell (or one run of the work item) does at most. */
#define SXRC_SQ_BUDGET_WQES	256
#define SXRC_SQ_BUDGET_BYTES	(16ULL << 20)

/* Run (or flush) @qp's send queue from its work item, @delay from now. */
static void sxrc_qp_schedule(struct sxrc_qp *qp, unsigned long delay)
{
	spin_lock_bh(&qp->lock);
	if (!qp->dead)
		mod_delayed_work(sxrc_wq, &qp->retry_work, delay);
	spin_unlock_bh(&qp->lock);
}

void sxrc_qp_kick(struct sxrc_qp *qp)
{
	sxrc_qp_schedule(qp, 0);
}

/* IBTA RNR NAK timer values, in microseconds (code 0 is the longest). */
static const u32 sxrc_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* The ack timeout: 4.096 us << timeout; 0 is "infinite", waited in 1 s steps. */
unsigned long sxrc_ack_timeout(u8 timeout)
{
	u64 usec = timeout ? 4096ULL << min_t(u8, timeout, 31) : 1000000000ULL;

	return max_t(unsigned long, usecs_to_jiffies(div_u64(usec, 1000)), 1);
}

/* The responder's RNR NAK timer, in jiffies. */
unsigned long sxrc_rnr_delay(u8 timer)
{
	return max_t(unsigned long, 1, usecs_to_jiffies(sxrc_rnr_usec[timer & 31]));
}

static void sxrc_reset_retries(struct sxrc_qp *qp)
{
	qp->rnr_left = qp->attr.rnr_retry;
	qp->retry_left = qp->attr.retry_cnt;
}

/*
 * The head WQE waits @delay jiffies before it is tried again (RNR timer,
 * ack timeout); sq_mutex is held.  Until then a run of the work item
 * queued for another reason (a kick, left-over work) does not retry it.
 */
static void sxrc_qp_stall(struct sxrc_qp *qp, unsigned long delay)
{
	qp->stalled = true;
	qp->stall_until = jiffies + delay;
	sxrc_qp_schedule(qp, delay);
}

/* The QP (re)enters RTS: a fresh retry budget; sq_mutex is held. */
void sxrc_qp_engine_ready(struct sxrc_qp *qp)
{
	lockdep_assert_held(&qp->sq_mutex);
	sxrc_reset_retries(qp);
	qp->stalled = false;
}

/*
 * Execute the send queue until it is empty, must wait, or fails, or
 * until this call's budget is spent: the work item then goes on with the
 * rest.  Called with qp->sq_mutex held, from the doorbell or the work
 * item.
 */
static void sxrc_sq_process(struct sxrc_qp *qp)
{
	struct sxrc_ring *ring = qp->sq.ring;
	struct sxrc_scratch *s = qp->scratch;
	struct sxrc_result res;
	u32 state, wqes = 0;
	int pending;
	u64 bytes = 0;

	lockdep_assert_held(&qp->sq_mutex);
	if (!ring)
		return;		/* an XRC receive QP sends nothing */
	for (;;) {
		enum sxrc_outcome out;

		state = READ_ONCE(qp->attr.qp_state);
		if (state == SXRC_QPS_ERR) {
			sxrc_qp_flush_locked(qp);
			break;
		}
		if (state != SXRC_QPS_RTS || qp->stalled)
			break;
		pending = sxrc_ring_count(ring, sxrc_ring_prod(ring), qp->sq.next);
		if (!pending)
			break;
		if (pending < 0) {
			/* A corrupt ring fails this QP, nothing else. */
			if (sxrc_qp_set_error(qp))
				sxrc_obj_event(&qp->obj, SXRC_EVENT_QP_FATAL);
			continue;
		}
		if (wqes >= SXRC_SQ_BUDGET_WQES ||
		    bytes >= SXRC_SQ_BUDGET_BYTES) {
			/* Enough for one call: the work item goes on. */
			sxrc_qp_schedule(qp, 0);
			break;
		}
		if (wqes && sxrc_copy_aborted(qp))
			break;
		if (!s) {
			s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
			if (!s) {
				/* Try again later rather than fail. */
				sxrc_qp_schedule(qp, 1);
				break;
			}
			s->qp = qp;
			qp->scratch = s;
		}

		out = sxrc_wqe_execute(qp, sxrc_ring_slot(ring, qp->sq.next),
				       s, &res);
		if (out == SXRC_WAIT_WINDOW)
			break;	/* a response lets it go on (wire_req.c) */
		wqes++;
		bytes += res.byte_len;
		if (out == SXRC_STOPPED)
			break;	/* the WQE stays: its QP is going away */
		if (out == SXRC_SENT) {
			/* In flight: completed when acknowledged. */
			qp->sq.next++;
			continue;
		}
		cond_resched();
		if (out == SXRC_WAIT_RNR) {
			sxrc_count(qp, SXRC_STAT_RNR_RETRIES, 1);
			if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
				res.status = SXRC_WC_RNR_RETRY_EXC_ERR;
			} else {
				u32 usec = sxrc_rnr_usec[res.rnr_timer & 31];

				sxrc_qp_stall(qp, max_t(unsigned long, 1,
							usecs_to_jiffies(usec)));
				break;
			}
		} else if (out == SXRC_WAIT_LOST) {
			sxrc_count(qp, SXRC_STAT_RETRIES, 1);
			if (qp->attr.timeout && !qp->retry_left--) {
				res.status = SXRC_WC_RETRY_EXC_ERR;
			} else {
				sxrc_qp_stall(qp,
					      sxrc_ack_timeout(qp->attr.timeout));
				break;
			}
		}

		/*
		 * Done with this WQE, one way or the other.  Its slot is free
		 * before its completion can be seen (as on the wire): a poster
		 * that waits for one completion to post the next (a latency
		 * test, with the polling thread running the queue) finds room.
		 */
		trace_sxrc_send_wqe(qp, &s->wqe, res.status, res.byte_len);
		qp->sq.cons++;
		qp->sq.next = qp->sq.cons;
		sxrc_ring_publish_cons(ring, qp->sq.cons);
		sxrc_sq_complete(qp, s->wqe.wr_id,
				 sxrc_wc_opcode(s->wqe.opcode), res.status,
				 res.byte_len,
				 qp->sq_sig_all ||
				 (s->wqe.send_flags & SXRC_SEND_SIGNALED));
		sxrc_reset_retries(qp);
		/* After an error the QP is in ERR: the loop flushes the rest. */
	}
}

/*
 * Process context takes the requester's state for as long as it likes
 * (it may sleep): softirq, which takes only qp->sq_lock, finds it busy
 * and leaves its acknowledgment to the receive worker.
 */
static void sxrc_sq_busy(struct sxrc_qp *qp, bool busy)
{
	spin_lock_bh(&qp->sq_lock);
	qp->sq_busy = busy;
	spin_unlock_bh(&qp->sq_lock);
}

void sxrc_sq_lock(struct sxrc_qp *qp)
{
	mutex_lock(&qp->sq_mutex);
	sxrc_sq_busy(qp, true);
}

bool sxrc_sq_trylock(struct sxrc_qp *qp)
{
	if (!mutex_trylock(&qp->sq_mutex))
		return false;
	sxrc_sq_busy(qp, true);
	return true;
}

static int sxrc_sq_lock_killable(struct sxrc_qp *qp)
{
	if (mutex_lock_killable(&qp->sq_mutex))
		return -EINTR;
	sxrc_sq_busy(qp, true);
	return 0;
}

void sxrc_sq_unlock(struct sxrc_qp *qp)
{
	sxrc_sq_busy(qp, false);
	mutex_unlock(&qp->sq_mutex);
}

/*
 * The doorbell.  Another thread of the poster (or the work item) may be
 * running the queue: waiting for it can be interrupted by a fatal
 * signal only, and its run is bounded anyway.
 */
int sxrc_sq_run(struct sxrc_qp *qp)
{
	if (sxrc_sq_lock_killable(qp))
		return -EINTR;
	if (trace_sxrc_doorbell_enabled() && qp->sq.ring)
		trace_sxrc_doorbell(qp, READ_ONCE(sxrc_ring_hdr(qp->sq.ring)->prod) -
				    qp->sq.cons);
	sxrc_sq_process(qp);
	sxrc_sq_unlock(qp);
	return 0;
}

/*
 * The polling thread's doorbell (sqpoll.c): never on a destroyed QP, and
 * never waiting for one QP's owner (a doorbell or a modify holding
 * sq_mutex) or for a page fault in one user's memory (an ODP region on
 * the device, which a copy may touch): the QP's own work item then runs
 * the queue.
 */
void sxrc_sq_poll(struct sxrc_qp *qp)
{
	if (atomic_read(&qp->obj.ctx->dev->odp_regions) ||
	    !sxrc_sq_trylock(qp)) {
		sxrc_qp_kick(qp);
		return;
	}
	/* Set before sxrc_qp_stop_engine() takes sq_mutex. */
	if (!READ_ONCE(qp->dead))
		sxrc_sq_process(qp);
	sxrc_sq_unlock(qp);
}

static void sxrc_retry_work(struct work_struct *work)
{
	struct sxrc_qp *qp = container_of(to_delayed_work(work),
					  struct sxrc_qp, retry_work);

	sxrc_sq_lock(qp);
	if (qp->stalled && time_before(jiffies, qp->stall_until)) {
		/* Run early (a kick raced with the stall): wait it out. */
		sxrc_qp_schedule(qp, qp->stall_until - jiffies);
	} else {
		qp->stalled = false;
		sxrc_sq_process(qp);
	}
	sxrc_sq_unlock(qp);
}

void sxrc_qp_init_engine(struct sxrc_qp *qp)
{
	mutex_init(&qp->sq_mutex);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_DELAYED_WORK(&qp->retry_work, sxrc_retry_work);
}

/* The QP is being destroyed: no more work runs on it after this. */
void sxrc_qp_stop_engine(struct sxrc_qp *qp)
{
	spin_lock_bh(&qp->lock);
	qp->dead = true;
	spin_unlock_bh(&qp->lock);
	cancel_delayed_work_sync(&qp->retry_work);
	/* Wait for a doorbell still running on it, or an acknowledgment. */
	sxrc_sq_lock(qp);
	sxrc_sq_unlock(qp);
	/* Whoever arms the wire's timer saw the QP alive, under sq_mutex. */
	sxrc_wire_qp_stop(qp);
}
