// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the generic netlink family SXRC_NL_FAMILY_NAME.
 *
 * The family, its policy and its commands: SXRC_NL_CMD_RES_GET, the
 * resource view, is a dump built in nl_res.c; SXRC_NL_CMD_LINK_ADD and
 * SXRC_NL_CMD_LINK_DEL add and remove a device attached to a network
 * device (link.c).
 */
#include <net/genetlink.h>
#include <net/netlink.h>
#include <rdma/softxrc-netlink.h>

#include "sxrc.h"

static const struct nla_policy sxrc_nl_policy[SXRC_NL_ATTR_MAX + 1] = {
	[SXRC_NL_ATTR_RES_CLASS] = NLA_POLICY_MAX(NLA_U32,
						  __SXRC_NL_RES_MAX - 1),
	[SXRC_NL_ATTR_PID] = { .type = NLA_U32 },
	[SXRC_NL_ATTR_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 15 },
	[SXRC_NL_ATTR_NETDEV] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
};

static int sxrc_nl_link_add(struct sk_buff *skb, struct genl_info *info)
{
	if (!info->attrs[SXRC_NL_ATTR_DEV_NAME] ||
	    !info->attrs[SXRC_NL_ATTR_NETDEV])
		return -EINVAL;
	return sxrc_link_add(genl_info_net(info),
			     nla_data(info->attrs[SXRC_NL_ATTR_DEV_NAME]),
			     nla_data(info->attrs[SXRC_NL_ATTR_NETDEV]));
}

static int sxrc_nl_link_del(struct sk_buff *skb, struct genl_info *info)
{
	if (!info->attrs[SXRC_NL_ATTR_DEV_NAME])
		return -EINVAL;
	return sxrc_link_del(nla_data(info->attrs[SXRC_NL_ATTR_DEV_NAME]));
}

static const struct genl_ops sxrc_nl_ops[] = {
	{
		.cmd = SXRC_NL_CMD_RES_GET,
		.start = sxrc_nl_start,
		.dumpit = sxrc_nl_dumpit,
	},
	{
		.cmd = SXRC_NL_CMD_LINK_ADD,
		.doit = sxrc_nl_link_add,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = SXRC_NL_CMD_LINK_DEL,
		.doit = sxrc_nl_link_del,
		.flags = GENL_ADMIN_PERM,
	},
};

struct genl_family sxrc_nl_family = {
	.name = SXRC_NL_FAMILY_NAME,
	.version = SXRC_NL_FAMILY_VERSION,
	.maxattr = SXRC_NL_ATTR_MAX,
	.policy = sxrc_nl_policy,
	.module = THIS_MODULE,
	/*
	 * Heard in every network namespace: a link is added on an interface
	 * of the caller's.  The permission stays CAP_NET_ADMIN of the
	 * initial user namespace (GENL_ADMIN_PERM).
	 */
	.netnsok = true,
	.ops = sxrc_nl_ops,
	.n_ops = ARRAY_SIZE(sxrc_nl_ops),
	.resv_start_op = SXRC_NL_CMD_RES_GET + 1,
};

int __init sxrc_nl_init(void)
{
	return genl_register_family(&sxrc_nl_family);
}

void sxrc_nl_exit(void)
{
	genl_unregister_family(&sxrc_nl_family);
}
