// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: CM event channels, event queues read through a file of their
 * own (struct sxrc_evfile, evq.c) as completion channels are: read()
 * returns whole struct sxrc_cm_event records, poll() says whether one
 * waits.  The ids bound to a channel queue their events on it (cm.c); a
 * channel holds at most SXRC_CM_MAX_EVENTS of those that a peer can make
 * (REQ, SIDR_REQ, MRA), and a destroyed id takes its own back, so its
 * memory is bounded by the ids of the contexts that use it.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cm.h"
#include "sxrc_methods.h"

static void sxrc_cm_chan_free(struct sxrc_evfile *evf)
{
	struct sxrc_cm_chan *ch = container_of(evf, struct sxrc_cm_chan, evf);
	struct sxrc_cm_qev *e, *tmp;

	list_for_each_entry_safe(e, tmp, &evf->q.events, entry)
		kfree(e);
	kfree(ch);
}

void sxrc_cm_chan_put(struct sxrc_cm_chan *ch)
{
	sxrc_evfile_put(&ch->evf);
}

static ssize_t sxrc_cm_chan_read(struct file *file, char __user *buf,
				 size_t len, loff_t *pos)
{
	struct sxrc_evfile *evf = file->private_data;
	struct sxrc_cm_chan *ch = container_of(evf, struct sxrc_cm_chan, evf);
	struct sxrc_evq *q = &evf->q;
	struct sxrc_cm_qev *e;
	size_t done = 0;
	int ret;

	if (len < sizeof(e->ev))
		return -EINVAL;
	ret = sxrc_evq_wait(q, file);
	if (ret)
		return ret;
	while (done + sizeof(e->ev) <= len) {
		spin_lock_bh(&q->lock);
		e = list_first_entry_or_null(&q->events, struct sxrc_cm_qev,
					     entry);
		if (e) {
			list_del(&e->entry);
			ch->nevents--;
		}
		spin_unlock_bh(&q->lock);
		if (!e)
			break;
		if (copy_to_user(buf + done, &e->ev, sizeof(e->ev))) {
			/* Not seen: back in front. */
			spin_lock_bh(&q->lock);
			list_add(&e->entry, &q->events);
			ch->nevents++;
			spin_unlock_bh(&q->lock);
			return done ? done : -EFAULT;
		}
		kfree(e);
		done += sizeof(e->ev);
	}
	return done;
}

static const struct file_operations sxrc_cm_chan_fops = {
	.owner = THIS_MODULE,
	.read = sxrc_cm_chan_read,
	.poll = sxrc_evfile_poll,
	.release = sxrc_evfile_release,
};

/* SXRC_CM_CHANNEL_CREATE: a new channel's fd, installed by the caller. */
int sxrc_cm_channel_create(struct sxrc_call *call)
{
	struct sxrc_cm_chan *ch;
	int ret;

	if (!call->ctx->dev->wire_cm)
		return -EOPNOTSUPP;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	sxrc_evfile_init(&ch->evf, call->ctx->dev, sxrc_cm_chan_free);
	ret = sxrc_evfile_create(call, &ch->evf, "[softxrc-cm]",
				 &sxrc_cm_chan_fops);
	if (ret)
		kfree(ch);
	return ret;
}

/* The CM channel @fd names on @dev, with a reference; or an ERR_PTR. */
struct sxrc_cm_chan *sxrc_cm_chan_get(struct sxrc_dev *dev, int fd)
{
	struct sxrc_evfile *evf = sxrc_evfile_get(dev, fd, &sxrc_cm_chan_fops);

	if (IS_ERR(evf))
		return ERR_CAST(evf);
	return container_of(evf, struct sxrc_cm_chan, evf);
}

/* No room for an event a peer makes: a new REQ is left unanswered. */
bool sxrc_cm_chan_full(struct sxrc_cm_chan *ch)
{
	bool full;

	spin_lock_bh(&ch->evf.q.lock);
	full = ch->nevents >= SXRC_CM_MAX_EVENTS;
	spin_unlock_bh(&ch->evf.q.lock);
	return full;
}

/*
 * Queue @e, which passes to the channel; false (and @e freed) when
 * @limited and the channel is full.  An id's own events (REP, RTU, REJ,
 * DREQ, ...) come once per state it passes, so they are never limited.
 */
bool sxrc_cm_chan_queue(struct sxrc_cm_chan *ch, struct sxrc_cm_qev *e,
			bool limited)
{
	spin_lock_bh(&ch->evf.q.lock);
	if (limited && ch->nevents >= SXRC_CM_MAX_EVENTS) {
		spin_unlock_bh(&ch->evf.q.lock);
		kfree(e);
		return false;
	}
	list_add_tail(&e->entry, &ch->evf.q.events);
	ch->nevents++;
	spin_unlock_bh(&ch->evf.q.lock);
	wake_up_interruptible(&ch->evf.q.wait);
	return true;
}

/* @id is destroyed: its events go with it. */
void sxrc_cm_chan_purge(struct sxrc_cm_chan *ch, struct sxrc_cm_id *id)
{
	struct sxrc_cm_qev *e, *tmp;
	LIST_HEAD(gone);

	spin_lock_bh(&ch->evf.q.lock);
	list_for_each_entry_safe(e, tmp, &ch->evf.q.events, entry) {
		if (e->id != id)
			continue;
		list_move(&e->entry, &gone);
		ch->nevents--;
	}
	spin_unlock_bh(&ch->evf.q.lock);
	list_for_each_entry_safe(e, tmp, &gone, entry)
		kfree(e);
}
