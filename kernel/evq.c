// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: event queues read through a file of their own.  A completion
 * channel (cq.c) and a CM event channel (cm_chan.c) are each one, as
 * upstream ib_uverbs_event_queue serves both the completion and the
 * async event files: the queue, its lock, its readers' wait queue and
 * its lifetime are here, with poll(), release(), the file's creation and
 * its lookup by fd.  What is queued (CQs with an event, CM events) and
 * read() are each channel's own.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>

#include "sxrc.h"

/*
 * A new queue on @dev with one reference (the caller's, which passes to
 * the file); @free frees the channel @q is in, with what it still holds.
 */
void sxrc_evq_init(struct sxrc_evq *q, struct sxrc_dev *dev,
		   void (*free)(struct sxrc_evq *q))
{
	kref_init(&q->ref);
	q->dev = dev;
	q->free = free;
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->events);
	init_waitqueue_head(&q->wait);
}

static void sxrc_evq_free(struct kref *ref)
{
	struct sxrc_evq *q = container_of(ref, struct sxrc_evq, ref);

	q->free(q);
}

void sxrc_evq_put(struct sxrc_evq *q)
{
	kref_put(&q->ref, sxrc_evq_free);
}

static bool sxrc_evq_pending(struct sxrc_evq *q)
{
	bool pending;

	spin_lock_bh(&q->lock);
	pending = !list_empty(&q->events);
	spin_unlock_bh(&q->lock);
	return pending;
}

/*
 * read()'s wait for something queued on @q, read through @file: 0 once
 * there is, -EAGAIN for a non-blocking file, or a signal's error.
 */
int sxrc_evq_wait(struct sxrc_evq *q, struct file *file)
{
	int ret;

	while (!sxrc_evq_pending(q)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(q->wait, sxrc_evq_pending(q));
		if (ret)
			return ret;
	}
	return 0;
}

__poll_t sxrc_evq_poll(struct file *file, struct poll_table_struct *wait)
{
	struct sxrc_evq *q = file->private_data;

	poll_wait(file, &q->wait, wait);
	return sxrc_evq_pending(q) ? EPOLLIN | EPOLLRDNORM : 0;
}

int sxrc_evq_release(struct inode *inode, struct file *file)
{
	sxrc_evq_put(file->private_data);
	return 0;
}

/*
 * A file @name of @fops reading @q, on a reserved fd returned in the
 * call's struct sxrc_channel_out; the dispatcher installs it once the
 * number reached userspace.  The file takes the caller's reference to
 * @q; on an error it does not, and the caller frees its channel.
 */
int sxrc_evq_create_file(struct sxrc_call *call, struct sxrc_evq *q,
			 const char *name, const struct file_operations *fops)
{
	struct sxrc_channel_out *out = call->out;
	struct file *file;
	int fd, ret;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_getfile(name, fops, q, O_RDWR);
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
	return ret;
}

/*
 * The queue of the file @fd names, if it is one of @fops made on @dev,
 * with a reference; or an ERR_PTR: -EBADF for no file, else -EINVAL.
 */
struct sxrc_evq *sxrc_evq_get(struct sxrc_dev *dev, int fd,
			      const struct file_operations *fops)
{
	struct sxrc_evq *q = ERR_PTR(-EINVAL);
	struct file *file;

	if (fd < 0)
		return q;
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op == fops) {
		q = file->private_data;
		if (q->dev == dev)
			kref_get(&q->ref);
		else
			q = ERR_PTR(-EINVAL);
	}
	fput(file);
	return q;
}
