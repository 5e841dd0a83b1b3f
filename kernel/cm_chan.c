// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: CM event channels, files of their own as completion channels
 * are: read() returns whole struct sxrc_cm_event records, poll() says
 * whether one waits.  The ids bound to a channel queue their events on
 * it (cm.c); a channel holds at most SXRC_CM_MAX_EVENTS of those that a
 * peer can make (REQ, SIDR_REQ, MRA), and a destroyed id takes its own
 * back, so its memory is bounded by the ids of the contexts that use it.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cm.h"
#include "sxrc_methods.h"

static void sxrc_cm_chan_free(struct kref *ref)
{
	struct sxrc_cm_chan *ch = container_of(ref, struct sxrc_cm_chan, ref);
	struct sxrc_cm_evq *e, *tmp;

	list_for_each_entry_safe(e, tmp, &ch->events, entry)
		kfree(e);
	kfree(ch);
}

void sxrc_cm_chan_put(struct sxrc_cm_chan *ch)
{
	kref_put(&ch->ref, sxrc_cm_chan_free);
}

static bool sxrc_cm_chan_pending(struct sxrc_cm_chan *ch)
{
	bool pending;

	spin_lock(&ch->lock);
	pending = ch->nevents;
	spin_unlock(&ch->lock);
	return pending;
}

static ssize_t sxrc_cm_chan_read(struct file *file, char __user *buf,
				 size_t len, loff_t *pos)
{
	struct sxrc_cm_chan *ch = file->private_data;
	struct sxrc_cm_evq *e;
	size_t done = 0;
	int ret;

	if (len < sizeof(e->ev))
		return -EINVAL;
	while (!sxrc_cm_chan_pending(ch)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(ch->wait,
					       sxrc_cm_chan_pending(ch));
		if (ret)
			return ret;
	}
	while (done + sizeof(e->ev) <= len) {
		spin_lock(&ch->lock);
		e = list_first_entry_or_null(&ch->events, struct sxrc_cm_evq,
					     entry);
		if (e) {
			list_del(&e->entry);
			ch->nevents--;
		}
		spin_unlock(&ch->lock);
		if (!e)
			break;
		if (copy_to_user(buf + done, &e->ev, sizeof(e->ev))) {
			/* Not seen: back in front. */
			spin_lock(&ch->lock);
			list_add(&e->entry, &ch->events);
			ch->nevents++;
			spin_unlock(&ch->lock);
			return done ? done : -EFAULT;
		}
		kfree(e);
		done += sizeof(e->ev);
	}
	return done;
}

static __poll_t sxrc_cm_chan_poll(struct file *file,
				  struct poll_table_struct *wait)
{
	struct sxrc_cm_chan *ch = file->private_data;

	poll_wait(file, &ch->wait, wait);
	return sxrc_cm_chan_pending(ch) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int sxrc_cm_chan_release(struct inode *inode, struct file *file)
{
	sxrc_cm_chan_put(file->private_data);
	return 0;
}

static const struct file_operations sxrc_cm_chan_fops = {
	.owner = THIS_MODULE,
	.read = sxrc_cm_chan_read,
	.poll = sxrc_cm_chan_poll,
	.release = sxrc_cm_chan_release,
};

/* SXRC_CM_CHANNEL_CREATE: a new channel's fd, installed by the caller. */
int sxrc_cm_channel_create(struct sxrc_call *call)
{
	struct sxrc_channel_out *out = call->out;
	struct sxrc_cm_chan *ch;
	struct file *file;
	int fd, ret;

	if (!call->ctx->dev->wire_cm)
		return -EOPNOTSUPP;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	kref_init(&ch->ref);
	ch->dev = call->ctx->dev;
	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->events);
	init_waitqueue_head(&ch->wait);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}
	file = anon_inode_getfile("[softxrc-cm]", &sxrc_cm_chan_fops, ch,
				  O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_fd;
	}
	call->new_file = file;
	call->new_fd = fd;
	out->fd = fd;
	return 0;

err_fd:
	put_unused_fd(fd);
err_free:
	kfree(ch);
	return ret;
}

/* The CM channel @fd names on @dev, with a reference; or an ERR_PTR. */
struct sxrc_cm_chan *sxrc_cm_chan_get(struct sxrc_dev *dev, int fd)
{
	struct sxrc_cm_chan *ch = ERR_PTR(-EINVAL);
	struct file *file;

	if (fd < 0)
		return ch;
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op == &sxrc_cm_chan_fops) {
		ch = file->private_data;
		if (ch->dev == dev)
			kref_get(&ch->ref);
		else
			ch = ERR_PTR(-EINVAL);
	}
	fput(file);
	return ch;
}

/* No room for an event a peer makes: a new REQ is left unanswered. */
bool sxrc_cm_chan_full(struct sxrc_cm_chan *ch)
{
	bool full;

	spin_lock(&ch->lock);
	full = ch->nevents >= SXRC_CM_MAX_EVENTS;
	spin_unlock(&ch->lock);
	return full;
}

/*
 * Queue @e, which passes to the channel; false (and @e freed) when
 * @limited and the channel is full.  An id's own events (REP, RTU, REJ,
 * DREQ, ...) come once per state it passes, so they are never limited.
 */
bool sxrc_cm_chan_queue(struct sxrc_cm_chan *ch, struct sxrc_cm_evq *e,
			bool limited)
{
	spin_lock(&ch->lock);
	if (limited && ch->nevents >= SXRC_CM_MAX_EVENTS) {
		spin_unlock(&ch->lock);
		kfree(e);
		return false;
	}
	list_add_tail(&e->entry, &ch->events);
	ch->nevents++;
	spin_unlock(&ch->lock);
	wake_up_interruptible(&ch->wait);
	return true;
}

/* @id is destroyed: its events go with it. */
void sxrc_cm_chan_purge(struct sxrc_cm_chan *ch, struct sxrc_cm_id *id)
{
	struct sxrc_cm_evq *e, *tmp;
	LIST_HEAD(gone);

	spin_lock(&ch->lock);
	list_for_each_entry_safe(e, tmp, &ch->events, entry) {
		if (e->id != id)
			continue;
		list_move(&e->entry, &gone);
		ch->nevents--;
	}
	spin_unlock(&ch->lock);
	list_for_each_entry_safe(e, tmp, &gone, entry)
		kfree(e);
}
