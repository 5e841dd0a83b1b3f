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

static struct sxrc_dev *sxrc_devs[SXRC_MAX_DEVICES];
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

/* The device whose port has @lid (LIDs are index + 1), or NULL. */
struct sxrc_dev *sxrc_dev_by_lid(u16 lid)
{
	if (!lid || lid > num_devices)
		return NULL;
	return sxrc_devs[lid - 1];
}

/* The device whose port GUID is @guid, or NULL. */
struct sxrc_dev *sxrc_dev_by_guid(__be64 guid)
{
	u32 i;

	for (i = 0; i < num_devices; i++)
		if (sxrc_devs[i] && sxrc_devs[i]->node_guid == guid)
			return sxrc_devs[i];
	return NULL;
}

/* Device @index, or NULL past the last; devices live as long as the module. */
struct sxrc_dev *sxrc_dev_at(u32 index)
{
	if (index >= num_devices)
		return NULL;
	return sxrc_devs[index];
}

static int sxrc_dev_add(u32 index)
{
	struct sxrc_dev *dev;
	u64 guid;
	int ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;

	dev->index = index;
	snprintf(dev->name, sizeof(dev->name), SXRC_DEV_PREFIX "%u", index);
	snprintf(dev->nodename, sizeof(dev->nodename), "infiniband/%s",
		 dev->name);
	/*
	 * A locally administered EUI-64: 0x02 in the first byte marks it as
	 * not IEEE-assigned; the low bytes keep devices of one host apart.
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

	ret = sxrc_sqpoll_start(dev);
	if (ret) {
		kfree(dev);
		return ret;
	}

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
		kfree(dev);
		return ret;
	}
	sxrc_devs[index] = dev;
	dev->debugfs = debugfs_create_dir(dev->name, sxrc_debugfs);
	debugfs_create_file("users", 0400, dev->debugfs, dev,
			    &sxrc_users_fops);
	return 0;
}

static void sxrc_dev_remove(u32 index)
{
	struct sxrc_dev *dev = sxrc_devs[index];

	if (!dev)
		return;
	/* No context can be open: each holds a reference on the module. */
	debugfs_remove_recursive(dev->debugfs);
	misc_deregister(&dev->misc);
	WARN_ON(!xa_empty(&dev->mrs) || !xa_empty(&dev->qps) ||
		!xa_empty(&dev->srqs) || !list_empty(&dev->mcast_list) ||
		!list_empty(&dev->xrcds) || !hash_empty(dev->users));
	sxrc_sqpoll_stop(dev);
	xa_destroy(&dev->mrs);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->srqs);
	kfree(dev);
	sxrc_devs[index] = NULL;
}

static int __init sxrc_init(void)
{
	u32 i;
	int ret;

	if (num_devices < 1 || num_devices > SXRC_MAX_DEVICES) {
		pr_err(SXRC_DRV_NAME ": num_devices must be 1 to %d\n",
		       SXRC_MAX_DEVICES);
		return -EINVAL;
	}
	ret = sxrc_engine_init();
	if (ret)
		return ret;

	sxrc_debugfs = debugfs_create_dir(SXRC_DRV_NAME, NULL);
	for (i = 0; i < num_devices; i++) {
		ret = sxrc_dev_add(i);
		if (ret)
			goto err_remove;
	}
	/* After the devices: a dump may come in as soon as it is registered. */
	ret = sxrc_nl_init();
	if (ret)
		goto err_remove;
	pr_info(SXRC_DRV_NAME ": %u device(s), ABI version %d\n",
		num_devices, SXRC_ABI_VERSION);
	return 0;

err_remove:
	while (i--)
		sxrc_dev_remove(i);
	debugfs_remove(sxrc_debugfs);
	sxrc_engine_exit();
	return ret;
}

static void __exit sxrc_exit(void)
{
	u32 i;

	sxrc_nl_exit();
	for (i = 0; i < num_devices; i++)
		sxrc_dev_remove(i);
	debugfs_remove(sxrc_debugfs);
	sxrc_engine_exit();
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
