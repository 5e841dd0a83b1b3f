// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: links, devices attached to a network device as rdma_rxe's
 * are.  They are added and removed through netlink (netlink.c, the
 * softxrc tool's "link add") or at load by the module parameter
 * "netdev"; the port follows the interface (up, down, carrier, MTU, its
 * removal) and its GID table is the interface's addresses as RoCEv2
 * GIDs.
 *
 * Locks: RTNL, then sxrc_devs_mutex (main.c).  A link's ndev is written
 * under both and read under RCU (the data path's GID lookups) or either.
 *
 * The GID table is read from the interface's addresses when asked for.
 * When an address comes or goes, IPv4 or IPv6, a work item compares each
 * link's table with the one its users last heard of and tells them of a
 * change (IBV_EVENT_GID_CHANGE).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ipv6.h>

#include "sxrc.h"

static char *netdev;
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev,
		 "network devices to attach links to at load, comma separated");

/*
 * Bytes of a RoCEv2 packet beside the payload, at most: IPv6 (40), UDP
 * (8), BTH (12), RETH or AtomicETH (28), ICRC (4).  The path MTU is the
 * largest IBTA MTU the rest of the interface's MTU holds.
 */
#define SXRC_ROCE_HDR_MAX	(40 + 8 + 12 + 28 + 4)
#define SXRC_IBV_MTU_256	1
#define SXRC_IBV_MTU_4096	5

static u32 sxrc_link_mtu(unsigned int ndev_mtu)
{
	u32 mtu = SXRC_IBV_MTU_4096;

	/* IBV_MTU_n is 128 << n bytes. */
	while (mtu > SXRC_IBV_MTU_256 &&
	       ndev_mtu < (128U << mtu) + SXRC_ROCE_HDR_MAX)
		mtu--;
	return mtu;
}

/* The interface's speed in Mb/s, 0 when it does not say; RTNL held. */
static u32 sxrc_link_speed(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;

	ASSERT_RTNL();
	if (__ethtool_get_link_ksettings(ndev, &ks) ||
	    ks.base.speed == (u32)SPEED_UNKNOWN)
		return 0;
	return ks.base.speed;
}

static u32 sxrc_link_port_state(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       SXRC_PORT_ACTIVE : SXRC_PORT_DOWN;
}

/* The interface went up or down, or its carrier came or went. */
static void sxrc_link_set_state(struct sxrc_dev *dev, struct net_device *ndev)
{
	u32 state = sxrc_link_port_state(ndev);

	if (xchg(&dev->port_state, state) != state)
		sxrc_dev_event(dev, state == SXRC_PORT_ACTIVE ?
			       SXRC_EVENT_PORT_ACTIVE : SXRC_EVENT_PORT_ERR, 1);
}

static u32 sxrc_link_gids(struct sxrc_dev *dev,
			  u8 gids[SXRC_LINK_GID_TBL_LEN][16]);

/* Make @dev a link of @ndev; RTNL and sxrc_devs_mutex are held. */
void sxrc_link_init(struct sxrc_dev *dev, struct net_device *ndev)
{
	ASSERT_RTNL();
	netdev_hold(ndev, &dev->ndev_tracker, GFP_KERNEL);
	rcu_assign_pointer(dev->ndev, ndev);
	/* The node GUID is the interface's EUI-64, as rxe's. */
	addrconf_addr_eui48((u8 *)&dev->node_guid, ndev->dev_addr);
	dev->ndev_mtu = sxrc_link_mtu(ndev->mtu);
	dev->ndev_speed = sxrc_link_speed(ndev);
	dev->port_state = sxrc_link_port_state(ndev);
	dev->ngids = sxrc_link_gids(dev, dev->gids);
}

/* Let go of the interface; RTNL and sxrc_devs_mutex are held. */
void sxrc_link_release(struct sxrc_dev *dev)
{
	struct net_device *ndev = rtnl_dereference(dev->ndev);

	RCU_INIT_POINTER(dev->ndev, NULL);
	/* GID lookups that found it are done with its addresses. */
	synchronize_net();
	netdev_put(ndev, &dev->ndev_tracker);
}

/*
 * Walk the GID table of a link on @ndev: index 0 is the link-local
 * address made of the interface's MAC (ib_core's default RoCE GID),
 * then its IPv4 addresses, IPv4-mapped, then its other IPv6 addresses.
 * @fn is called with each until it returns true, at most
 * SXRC_LINK_GID_TBL_LEN times.  Caller holds the RCU read lock.
 */
static void sxrc_gid_walk(struct net_device *ndev,
			  bool (*fn)(const u8 *gid, u32 index, void *arg),
			  void *arg)
{
	struct in_device *in_dev;
	struct in_ifaddr *ifa;
	struct in6_addr gid = {};
	u32 i = 0;

	gid.s6_addr[0] = 0xfe;
	gid.s6_addr[1] = 0x80;
	addrconf_addr_eui48(&gid.s6_addr[8], ndev->dev_addr);
	if (fn(gid.s6_addr, i++, arg))
		return;

	in_dev = __in_dev_get_rcu(ndev);
	if (in_dev) {
		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			struct in6_addr v4;

			if (i == SXRC_LINK_GID_TBL_LEN)
				return;
			ipv6_addr_set_v4mapped(ifa->ifa_address, &v4);
			if (fn(v4.s6_addr, i++, arg))
				return;
		}
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct inet6_dev *in6 = __in6_dev_get(ndev);
		struct inet6_ifaddr *ifp;

		if (!in6)
			return;
		read_lock_bh(&in6->lock);
		list_for_each_entry(ifp, &in6->addr_list, if_list) {
			if (ipv6_addr_equal(&ifp->addr, &gid))
				continue;	/* the default GID again */
			if (i == SXRC_LINK_GID_TBL_LEN ||
			    fn(ifp->addr.s6_addr, i++, arg))
				break;
		}
		read_unlock_bh(&in6->lock);
	}
#endif
}

struct sxrc_gid_copy {
	u8 (*gids)[16];
	u32 n;
};

static bool sxrc_gid_copy(const u8 *gid, u32 index, void *arg)
{
	struct sxrc_gid_copy *c = arg;

	memcpy(c->gids[index], gid, 16);
	c->n = index + 1;
	return false;
}

/* Copy the GID table of the link @dev to @gids; returns its entries. */
static u32 sxrc_link_gids(struct sxrc_dev *dev,
			  u8 gids[SXRC_LINK_GID_TBL_LEN][16])
{
	struct sxrc_gid_copy c = { .gids = gids };
	struct net_device *ndev;

	rcu_read_lock();
	ndev = rcu_dereference(dev->ndev);
	if (ndev)
		sxrc_gid_walk(ndev, sxrc_gid_copy, &c);
	rcu_read_unlock();
	return c.n;
}

struct sxrc_gid_find {
	const u8 *gid;
	u32 index;
	bool found;
};

static bool sxrc_gid_match(const u8 *gid, u32 index, void *arg)
{
	struct sxrc_gid_find *f = arg;

	f->found = !memcmp(gid, f->gid, 16);
	f->index = index;
	return f->found;
}

/* The index of @gid in the link @dev's table, or -ENOENT.  RCU. */
int sxrc_link_gid_index(struct sxrc_dev *dev, const u8 *gid)
{
	struct net_device *ndev = rcu_dereference(dev->ndev);
	struct sxrc_gid_find f = { .gid = gid };

	if (ndev)
		sxrc_gid_walk(ndev, sxrc_gid_match, &f);
	return f.found ? f.index : -ENOENT;
}

/* Is @gid one of the link @dev's?  RCU. */
bool sxrc_link_has_gid(struct sxrc_dev *dev, const u8 *gid)
{
	return sxrc_link_gid_index(dev, gid) >= 0;
}

struct sxrc_gid_get {
	u8 *gid;
	u32 index;
	bool found;
};

static bool sxrc_gid_at(const u8 *gid, u32 index, void *arg)
{
	struct sxrc_gid_get *g = arg;

	if (index != g->index)
		return false;
	memcpy(g->gid, gid, 16);
	g->found = true;
	return true;
}

/**
 * sxrc_link_gid - GID @index of the link @dev
 * @dev: a link
 * @index: table index
 * @gid: 16 bytes, filled
 *
 * Return: 0, or -ENODATA for an empty entry.
 */
int sxrc_link_gid(struct sxrc_dev *dev, u32 index, u8 *gid)
{
	struct sxrc_gid_get g = { .gid = gid, .index = index };
	struct net_device *ndev;

	rcu_read_lock();
	ndev = rcu_dereference(dev->ndev);
	if (ndev)
		sxrc_gid_walk(ndev, sxrc_gid_at, &g);
	rcu_read_unlock();
	return g.found ? 0 : -ENODATA;
}

/* The link on @ndev, if any; sxrc_devs_mutex is held. */
static struct sxrc_dev *sxrc_link_of(struct net_device *ndev)
{
	struct sxrc_dev *dev;
	u32 i;

	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = sxrc_dev_locked(i);
		if (dev && rcu_access_pointer(dev->ndev) == ndev)
			return dev;
	}
	return NULL;
}

/*
 * A link change by name: "softxrcN", N below SXRC_MAX_DEVICES, written
 * without leading zeros, its N in *@index.  0: RTNL and sxrc_devs_mutex
 * are taken, sxrc_link_unlock() lets go of them; -EINVAL: nothing is.
 */
static int sxrc_link_lock(const char *name, u32 *index)
{
	size_t len = strlen(SXRC_DEV_PREFIX);
	const char *n = name + len;

	if (strncmp(name, SXRC_DEV_PREFIX, len) || !*n ||
	    (n[0] == '0' && n[1]) || kstrtou32(n, 10, index) ||
	    *index >= SXRC_MAX_DEVICES)
		return -EINVAL;
	rtnl_lock();
	sxrc_devs_lock();
	return 0;
}

static void sxrc_link_unlock(void)
{
	sxrc_devs_unlock();
	rtnl_unlock();
}

/* Add a link on @ndev at @index; RTNL and sxrc_devs_mutex are held. */
static int sxrc_link_add_locked(u32 index, struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER)
		return -EINVAL;
	if (sxrc_link_of(ndev))
		return -EEXIST;
	return PTR_ERR_OR_ZERO(sxrc_dev_add(index, ndev));
}

/**
 * sxrc_link_add - attach a new device to a network device
 * @net: the namespace @ifname is looked up in
 * @name: "softxrcN", the device's name
 * @ifname: the interface
 *
 * Return: 0; -EINVAL for a bad name or an interface that is not
 * Ethernet; -ENODEV for no such interface; -EEXIST when the name is
 * taken or the interface has a link already; -ENOMEM.
 */
int sxrc_link_add(struct net *net, const char *name, const char *ifname)
{
	struct net_device *ndev;
	u32 index;
	int ret;

	ret = sxrc_link_lock(name, &index);
	if (ret)
		return ret;
	ndev = __dev_get_by_name(net, ifname);
	ret = ndev ? sxrc_link_add_locked(index, ndev) : -ENODEV;
	sxrc_link_unlock();
	return ret;
}

/**
 * sxrc_link_del - remove a link
 * @name: its name
 *
 * Return: 0; -EINVAL for a bad name; -ENODEV for no such device;
 * -EOPNOTSUPP for a device that is not a link (those live as long as
 * the module).
 */
int sxrc_link_del(const char *name)
{
	struct sxrc_dev *dev;
	u32 index;
	int ret;

	ret = sxrc_link_lock(name, &index);
	if (ret)
		return ret;
	dev = sxrc_dev_locked(index);
	if (!dev)
		ret = -ENODEV;
	else if (!rcu_access_pointer(dev->ndev))
		ret = -EOPNOTSUPP;
	else
		sxrc_dev_remove(dev);
	sxrc_link_unlock();
	return ret;
}

static int sxrc_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sxrc_dev *dev;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	sxrc_devs_lock();
	dev = sxrc_link_of(ndev);
	if (dev) {
		if (event == NETDEV_UNREGISTER)
			sxrc_dev_remove(dev);
		else if (event == NETDEV_CHANGEMTU)
			WRITE_ONCE(dev->ndev_mtu, sxrc_link_mtu(ndev->mtu));
		else
			sxrc_link_set_state(dev, ndev);
		/* A carrier that came back may have come at another speed. */
		if (event == NETDEV_UP || event == NETDEV_CHANGE)
			WRITE_ONCE(dev->ndev_speed, sxrc_link_speed(ndev));
	}
	sxrc_devs_unlock();
	return NOTIFY_DONE;
}

static struct notifier_block sxrc_netdev_nb = {
	.notifier_call = sxrc_netdev_event,
};

/*
 * Addresses came or went: each link whose GID table is not what its
 * users last heard of tells them.  A work item, as the IPv6 address
 * notifier may not sleep; the IPv4 one takes the same way, so that an
 * event means a table that changed.
 */
static void sxrc_gid_check(struct work_struct *work)
{
	u8 gids[SXRC_LINK_GID_TBL_LEN][16];
	struct sxrc_dev *dev;
	u32 i, n;

	sxrc_devs_lock();
	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = sxrc_dev_locked(i);
		if (!dev || !rcu_access_pointer(dev->ndev))
			continue;
		n = sxrc_link_gids(dev, gids);
		if (n == dev->ngids && !memcmp(gids, dev->gids, n * 16))
			continue;
		memcpy(dev->gids, gids, sizeof(gids));
		dev->ngids = n;
		sxrc_dev_event(dev, SXRC_EVENT_GID_CHANGE, 1);
	}
	sxrc_devs_unlock();
}

static DECLARE_WORK(sxrc_gid_work, sxrc_gid_check);

/* An IPv4 or IPv6 address came or went. */
static int sxrc_addr_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	if (event == NETDEV_UP || event == NETDEV_DOWN)
		schedule_work(&sxrc_gid_work);
	return NOTIFY_DONE;
}

static struct notifier_block sxrc_inetaddr_nb = {
	.notifier_call = sxrc_addr_event,
};

#if IS_ENABLED(CONFIG_IPV6)
static struct notifier_block sxrc_inet6addr_nb = {
	.notifier_call = sxrc_addr_event,
};
#endif

/* The links the "netdev" parameter asks for, each at the first free slot. */
static void sxrc_link_add_param(void)
{
	char *list, *p, *ifname;
	struct net_device *ndev;
	u32 index;
	int ret;

	list = kstrdup(netdev, GFP_KERNEL);
	if (!list)
		return;
	p = list;
	while ((ifname = strsep(&p, ","))) {
		if (!*ifname)
			continue;
		rtnl_lock();
		sxrc_devs_lock();
		for (index = 0; index < SXRC_MAX_DEVICES; index++)
			if (!sxrc_dev_locked(index))
				break;
		ndev = __dev_get_by_name(&init_net, ifname);
		ret = ndev ? sxrc_link_add_locked(index, ndev) : -ENODEV;
		sxrc_devs_unlock();
		rtnl_unlock();
		if (ret)
			pr_warn(SXRC_DRV_NAME ": no link on %s: %d\n", ifname,
				ret);
	}
	kfree(list);
}

int sxrc_link_init_module(void)
{
	int ret;

	ret = register_netdevice_notifier(&sxrc_netdev_nb);
	if (ret)
		return ret;
	ret = register_inetaddr_notifier(&sxrc_inetaddr_nb);
	if (ret)
		goto err_netdev;
#if IS_ENABLED(CONFIG_IPV6)
	ret = register_inet6addr_notifier(&sxrc_inet6addr_nb);
	if (ret)
		goto err_inet;
#endif
	if (netdev)
		sxrc_link_add_param();
	return 0;

#if IS_ENABLED(CONFIG_IPV6)
err_inet:
	unregister_inetaddr_notifier(&sxrc_inetaddr_nb);
#endif
err_netdev:
	unregister_netdevice_notifier(&sxrc_netdev_nb);
	cancel_work_sync(&sxrc_gid_work);
	return ret;
}

void sxrc_link_exit_module(void)
{
	struct sxrc_dev *dev;
	u32 i;

#if IS_ENABLED(CONFIG_IPV6)
	unregister_inet6addr_notifier(&sxrc_inet6addr_nb);
#endif
	unregister_inetaddr_notifier(&sxrc_inetaddr_nb);
	unregister_netdevice_notifier(&sxrc_netdev_nb);
	cancel_work_sync(&sxrc_gid_work);
	rtnl_lock();
	sxrc_devs_lock();
	for (i = 0; i < SXRC_MAX_DEVICES; i++) {
		dev = sxrc_dev_locked(i);
		if (dev && rcu_access_pointer(dev->ndev))
			sxrc_dev_remove(dev);
	}
	sxrc_devs_unlock();
	rtnl_unlock();
}
