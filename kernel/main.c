// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: module entry points and devices.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "sxrc.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "softxrc devices to create (1-8, default 1)");

/* Pages, not objects: bounds what all MRs of a device may pin. */
unsigned long sxrc_max_mr_pages;
module_param_named(max_mr_pages, sxrc_max_mr_pages, ulong, 0444);
MODULE_PARM_DESC(max_mr_pages,
		 "pages all MRs of a device may pin (0: bounded by RLIMIT_MEMLOCK only)");

/* Domains, not the per-context opens of them that SXRC_TYPE_XRCD counts. */
unsigned int sxrc_max_xrcd = 1U << 16;
module_param_named(max_xrcd, sxrc_max_xrcd, uint, 0644);
MODULE_PARM_DESC(max_xrcd, "XRC domains per device");

static struct dentry *sxrc_debugfs;

/* Caller holds dev->users_lock. */
static struct sxrc_user *sxrc_user_find(struct sxrc_dev *dev, kuid_t uid)
{
	struct sxrc_user *user;

	hash_for_each_possible(dev->users, user, node, __kuid_val(uid))
		if (uid_eq(user->uid, uid))
			return user;
	return NULL;
}

/**
 * sxrc_user_get - the record of user @uid on @dev, made on first use
 * @dev: the device
 * @uid: the user
 *
 * Return: the record with a new reference, or ERR_PTR(-ENOMEM).
 */
struct sxrc_user *sxrc_user_get(struct sxrc_dev *dev, kuid_t uid)
{
	struct sxrc_user *user, *new;

	/* A record in the table has references: its last put removes it. */
	spin_lock(&dev->users_lock);
	user = sxrc_user_find(dev, uid);
	if (user)
		kref_get(&user->ref);
	spin_unlock(&dev->users_lock);
	if (user)
		return user;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return ERR_PTR(-ENOMEM);
	kref_init(&new->ref);
	new->dev = dev;
	new->uid = uid;

	spin_lock(&dev->users_lock);
	user = sxrc_user_find(dev, uid);
	if (user) {
		kref_get(&user->ref);
	} else {
		hash_add(dev->users, &new->node, __kuid_val(uid));
		user = new;
		new = NULL;
	}
	spin_unlock(&dev->users_lock);
	kfree(new);
	return user;
}

/* Called by kref_put_lock() with dev->users_lock held; drops it. */
static void sxrc_user_free(struct kref *ref)
	__releases(&user->dev->users_lock)
{
	struct sxrc_user *user = container_of(ref, struct sxrc_user, ref);
	int i;

	hash_del(&user->node);
	spin_unlock(&user->dev->users_lock);
	for (i = 0; i < SXRC_NUM_TYPES; i++)
		WARN_ON_ONCE(atomic_read(&user->nobj[i]));
	kfree(user);
}

void sxrc_user_put(struct sxrc_user *user)
{
	kref_put_lock(&user->ref, sxrc_user_free, &user->dev->users_lock);
}

/* debugfs softxrc/softxrcN/users: live objects per user, a line each. */
static int sxrc_users_show(struct seq_file *m, void *unused)
{
	struct sxrc_dev *dev = m->private;
	struct sxrc_user *user;
	unsigned int bkt;
	int i;

	seq_puts(m, "uid");
	for (i = 0; i < SXRC_NUM_TYPES; i++)
		seq_printf(m, " %s", sxrc_types[i].name);
	seq_putc(m, '\n');
	spin_lock(&dev->users_lock);
	hash_for_each(dev->users, bkt, user, node) {
		seq_printf(m, "%u", from_kuid_munged(seq_user_ns(m), user->uid));
		for (i = 0; i < SXRC_NUM_TYPES; i++)
			seq_printf(m, " %d", atomic_read(&user->nobj[i]));
		seq_putc(m, '\n');
	}
	spin_unlock(&dev->users_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sxrc_users);

/*
 * The devices by index.  Written under sxrc_devs_mutex (module load and
 * unload, link add and remove), read under RCU (the data path finds the
 * device an address leads to) or that mutex.  The table holds a
 * reference on each device, every context one on its own: a removed
 * device is freed, after a grace period, when its last context is.
 */
static struct sxrc_dev __rcu *sxrc_devs[SXRC_MAX_DEVICES];
static DEFINE_MUTEX(sxrc_devs_mutex);

/*
 * The subnet prefix of this host's devices without a link: GID 0 of each
 * is it and the port GUID.  Drawn at load, as RFC 4193 draws a unique
 * local prefix (fd, 40 random bits, subnet 0): such a device's fabric is
 * this host, and every host's softxrc0 has LID 1, so a consumer that takes
 * equal prefixes for one subnet (UCX's IB reachability) would otherwise
 * send to another host's device by a LID that leads back to its own.
 */
static __be64 sxrc_local_prefix __ro_after_init;

/* GID 0 of @dev, a device without a link, into @gid. */
void sxrc_local_gid(const struct sxrc_dev *dev, u8 *gid)
{
	memcpy(gid, &sxrc_local_prefix, sizeof(sxrc_local_prefix));
	memcpy(gid + 8, &dev->node_guid, sizeof(dev->node_guid));
}

/* The device whose port has @lid (LIDs are index + 1), or NULL; RCU. */
struct sxrc_dev *sxrc_dev_by_lid(u16 lid)
{
	if (!lid || lid > SXRC_MAX_DEVICES)
		return NULL;
	return rcu_dereference(sxrc_devs[lid - 1]);
}

/* The device whose port GUID is @guid, or NULL; RCU. */
struct sxrc_dev *sxrc_dev_by_guid(__be64 guid)
{
	struct sxrc_dev *dev;
	u32 i;

	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = rcu_dereference(sxrc_devs[i]);
		if (dev && dev->node_guid == guid)
			return dev;
	}
	return NULL;
}

/*
 * The device a GID names: the port GUID of a device without a network
 * device, or one of the RoCE GIDs of a link (link.c) whose network device
 * is in @net (any namespace if @net is NULL: a sender without a link);
 * NULL if none.  A link in another namespace is on another network: a
 * message for it goes out on the wire.  RCU.
 */
struct sxrc_dev *sxrc_dev_by_gid(const u8 *gid, const struct net *net)
{
	struct net_device *ndev;
	struct sxrc_dev *dev;
	__be64 guid;
	u32 i;

	memcpy(&guid, gid + 8, sizeof(guid));
	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = rcu_dereference(sxrc_devs[i]);
		if (!dev)
			continue;
		ndev = rcu_dereference(dev->ndev);
		if (!ndev) {
			if (dev->node_guid == guid)
				return dev;
		} else if ((!net || net_eq(dev_net(ndev), net)) &&
			   sxrc_link_has_gid(dev, gid)) {
			return dev;
		}
	}
	return NULL;
}

/* The link on @ndev, or NULL; RCU. */
struct sxrc_dev *sxrc_dev_by_ndev(const struct net_device *ndev)
{
	struct sxrc_dev *dev;
	u32 i;

	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = rcu_dereference(sxrc_devs[i]);
		if (dev && rcu_access_pointer(dev->ndev) == ndev)
			return dev;
	}
	return NULL;
}

/* Device @index with a reference (sxrc_dev_put()), or NULL. */
struct sxrc_dev *sxrc_dev_get(u32 index)
{
	struct sxrc_dev *dev;

	if (index >= SXRC_MAX_DEVICES)
		return NULL;
	rcu_read_lock();
	dev = rcu_dereference(sxrc_devs[index]);
	if (dev && !kref_get_unless_zero(&dev->ref))
		dev = NULL;
	rcu_read_unlock();
	return dev;
}

static void sxrc_dev_free(struct kref *ref)
{
	struct sxrc_dev *dev = container_of(ref, struct sxrc_dev, ref);

	/* No context is left, hence no object either. */
	WARN_ON(!xa_empty(&dev->mrs) || !xa_empty(&dev->qps) ||
		!xa_empty(&dev->srqs) || !list_empty(&dev->mcast_list) ||
		!list_empty(&dev->xrcds) || !hash_empty(dev->users));
	xa_destroy(&dev->mrs);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->srqs);
	sxrc_cm_free(dev);
	/* Data path readers may still be looking at it. */
	kfree_rcu(dev, rcu);
}

void sxrc_dev_put(struct sxrc_dev *dev)
{
	kref_put(&dev->ref, sxrc_dev_free);
}

/**
 * sxrc_dev_add - create device softxrc@index
 * @index: a free slot of the table
 * @ndev: the network device it is attached to (a reference that passes to
 *	the device), or NULL
 *
 * Caller holds sxrc_devs_mutex (and RTNL with @ndev).
 *
 * Return: the device, or an ERR_PTR.
 */
struct sxrc_dev *sxrc_dev_add(u32 index, struct net_device *ndev)
{
	struct sxrc_dev *dev;
	u64 guid;
	int ret;

	lockdep_assert_held(&sxrc_devs_mutex);
	if (index >= SXRC_MAX_DEVICES)
		return ERR_PTR(-EINVAL);
	if (rcu_access_pointer(sxrc_devs[index]))
		return ERR_PTR(-EEXIST);
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);

	kref_init(&dev->ref);
	dev->index = index;
	snprintf(dev->name, sizeof(dev->name), SXRC_DEV_PREFIX "%u", index);
	snprintf(dev->nodename, sizeof(dev->nodename), "infiniband/%s",
		 dev->name);
	/*
	 * A locally administered EUI-64: 0x02 in the first byte marks it as
	 * not IEEE-assigned; the low bytes keep devices of one host apart.
	 * A link's is its interface's, as rxe's (link.c).
	 */
	guid = get_random_u64();
	guid = (guid & ~(0xffULL << 56)) | (0x02ULL << 56);
	guid = (guid & ~0xffULL) | index;
	dev->node_guid = cpu_to_be64(guid);
	dev->port_state = SXRC_PORT_ACTIVE;
	spin_lock_init(&dev->lock);
	INIT_LIST_HEAD(&dev->ctx_list);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&dev->srqs, XA_FLAGS_ALLOC);
	mutex_init(&dev->mcast_lock);
	INIT_LIST_HEAD(&dev->mcast_list);
	mutex_init(&dev->xrcd_mutex);
	INIT_LIST_HEAD(&dev->xrcds);
	spin_lock_init(&dev->users_lock);
	hash_init(dev->users);
	if (ndev) {
		sxrc_link_init(dev, ndev);
		ret = sxrc_wire_start(dev);
		if (ret) {
			sxrc_link_release(dev);
			kfree(dev);
			return ERR_PTR(ret);
		}
	}

	ret = sxrc_sqpoll_start(dev);
	if (ret)
		goto err_link;

	dev->misc.minor = MISC_DYNAMIC_MINOR;
	dev->misc.name = dev->name;
	/* /dev/infiniband/softxrcN, beside uverbs: where tools look. */
	dev->misc.nodename = dev->nodename;
	dev->misc.fops = &sxrc_fops;
	dev->misc.groups = sxrc_dev_groups;
	/* Like uverbs: any user may open; pinning is bounded by MEMLOCK. */
	dev->misc.mode = 0666;

	ret = misc_register(&dev->misc);
	if (ret) {
		sxrc_sqpoll_stop(dev);
		goto err_link;
	}
	dev->debugfs = debugfs_create_dir(dev->name, sxrc_debugfs);
	debugfs_create_file("users", 0400, dev->debugfs, dev,
			    &sxrc_users_fops);
	rcu_assign_pointer(sxrc_devs[index], dev);
	return dev;

err_link:
	if (ndev) {
		sxrc_link_release(dev);
		sxrc_wire_stop(dev);
		sxrc_cm_free(dev);
	}
	kfree(dev);
	return ERR_PTR(ret);
}

/**
 * sxrc_dev_remove - take a device away
 * @dev: a device of the table
 *
 * Nothing reaches it any more: not the data path, not open().  Contexts
 * still open on it hear IBV_EVENT_DEVICE_FATAL and from then on may only
 * destroy what they hold (the rest fails with EIO); the device is freed
 * with the last of them.  Caller holds sxrc_devs_mutex (and RTNL for a
 * link, whose network device is let go here).
 */
void sxrc_dev_remove(struct sxrc_dev *dev)
{
	lockdep_assert_held(&sxrc_devs_mutex);
	RCU_INIT_POINTER(sxrc_devs[dev->index], NULL);
	WRITE_ONCE(dev->dead, true);
	/* misc_open() runs under the lock this takes: no open is left. */
	misc_deregister(&dev->misc);
	debugfs_remove_recursive(dev->debugfs);
	sxrc_sqpoll_stop(dev);
	if (rcu_access_pointer(dev->ndev)) {
		sxrc_link_release(dev);
		/* No packet finds the device now: its queue empties. */
		sxrc_wire_stop(dev);
	}
	if (xchg(&dev->port_state, SXRC_PORT_DOWN) == SXRC_PORT_ACTIVE)
		sxrc_dev_event(dev, SXRC_EVENT_PORT_ERR, 1);
	sxrc_dev_event(dev, SXRC_EVENT_DEVICE_FATAL, 1);
	sxrc_dev_put(dev);
}

/* Serialise a table change: link.c's add and remove. */
void sxrc_devs_lock(void)
{
	mutex_lock(&sxrc_devs_mutex);
}

void sxrc_devs_unlock(void)
{
	mutex_unlock(&sxrc_devs_mutex);
}

/* The device @index if the table has one; sxrc_devs_mutex held. */
struct sxrc_dev *sxrc_dev_locked(u32 index)
{
	lockdep_assert_held(&sxrc_devs_mutex);
	if (index >= SXRC_MAX_DEVICES)
		return NULL;
	return rcu_dereference_protected(sxrc_devs[index],
					 lockdep_is_held(&sxrc_devs_mutex));
}

/* Module load failed, or unload: no context is open (each holds the module). */
static void sxrc_devs_remove_all(void)
{
	struct sxrc_dev *dev;
	u32 i;

	mutex_lock(&sxrc_devs_mutex);
	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = sxrc_dev_locked(i);
		if (dev && !rcu_access_pointer(dev->ndev))
			sxrc_dev_remove(dev);
	}
	mutex_unlock(&sxrc_devs_mutex);
}

/* The workqueue of retries and of the work a doorbell left over. */
struct workqueue_struct *sxrc_wq;
/* The workqueue of received packets (wire.c). */
struct workqueue_struct *sxrc_rx_wq;

static int sxrc_workqueues_init(void)
{
	/*
	 * Retries and leftover work of every QP: unbound (a long queue
	 * does not pin one CPU), and never in the way of system_wq users.
	 */
	sxrc_wq = alloc_workqueue("softxrc", WQ_UNBOUND, 0);
	if (!sxrc_wq)
		return -ENOMEM;
	/*
	 * Received packets: bound and high priority, so a packet is handled
	 * on the CPU whose softirq took it, right after that softirq, as
	 * rxe handles it in the softirq itself.  An unbound worker would
	 * wake another CPU for every packet.
	 */
	sxrc_rx_wq = alloc_workqueue("softxrc_rx", WQ_HIGHPRI, 0);
	if (!sxrc_rx_wq) {
		destroy_workqueue(sxrc_wq);
		return -ENOMEM;
	}
	return 0;
}

static void sxrc_workqueues_exit(void)
{
	destroy_workqueue(sxrc_rx_wq);
	destroy_workqueue(sxrc_wq);
}

static int __init sxrc_init(void)
{
	struct sxrc_dev *dev;
	u32 i;
	int ret;

	if (num_devices < 1 || num_devices > SXRC_MAX_DEVICES) {
		pr_err(SXRC_DRV_NAME ": num_devices must be 1 to %d\n",
		       SXRC_MAX_DEVICES);
		return -EINVAL;
	}
	sxrc_local_prefix = cpu_to_be64(0xfdULL << 56 |
					(get_random_u64() & 0x00ffffffffff0000ULL));
	ret = sxrc_workqueues_init();
	if (ret)
		return ret;

	sxrc_debugfs = debugfs_create_dir(SXRC_DRV_NAME, NULL);
	mutex_lock(&sxrc_devs_mutex);
	for (i = 0; i < num_devices; i++) {
		dev = sxrc_dev_add(i, NULL);
		if (IS_ERR(dev)) {
			ret = PTR_ERR(dev);
			mutex_unlock(&sxrc_devs_mutex);
			goto err_remove;
		}
	}
	mutex_unlock(&sxrc_devs_mutex);
	ret = sxrc_link_init_module();
	if (ret)
		goto err_remove;
	/* After the devices: a dump may come in as soon as it is registered. */
	ret = sxrc_nl_init();
	if (ret)
		goto err_links;
	pr_info(SXRC_DRV_NAME ": %u device(s), ABI version %d\n",
		num_devices, SXRC_ABI_VERSION);
	return 0;

err_links:
	sxrc_link_exit_module();
err_remove:
	sxrc_devs_remove_all();
	debugfs_remove(sxrc_debugfs);
	sxrc_workqueues_exit();
	return ret;
}

static void __exit sxrc_exit(void)
{
	sxrc_nl_exit();
	/* Links first: they need RTNL, taken before the table's mutex. */
	sxrc_link_exit_module();
	/* Releases left by packets handled in softirq, before the devices. */
	sxrc_late_flush();
	sxrc_devs_remove_all();
	debugfs_remove(sxrc_debugfs);
	/* kfree_rcu() of the devices: done before the module text goes. */
	rcu_barrier();
	sxrc_workqueues_exit();
}

module_init(sxrc_init);
module_exit(sxrc_exit);

MODULE_AUTHOR("The softxrc developers");
MODULE_DESCRIPTION("softxrc: software RDMA verbs device with XRC");
MODULE_LICENSE("Dual BSD/GPL");
/* dma-buf MRs (kernel/mr.c). */
MODULE_IMPORT_NS(DMA_BUF);
/*
 * softxrc uses nothing of ib_core, but ib_core's class directory,
 * /sys/class/infiniband, is how Open MPI (and hwloc) decide that a host
 * has RDMA devices at all; modprobe skips a missing soft dependency.
 */
MODULE_SOFTDEP("pre: ib_core");
