// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: helpers with no kernel involvement (names
 * of enums, rate conversions, sysfs access, fork support, logging).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sxu.h"

/* One message, one write(): lines from several threads do not mix. */
void sxu_log(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (getenv("SXRC_QUIET"))
		return;
	n = snprintf(buf, sizeof(buf), "softxrc: ");
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	fputs(buf, stderr);
}

/* Read a sysfs attribute into @buf, without the trailing newline. */
int sxu_read_sysfs(const char *dir, const char *file, char *buf, size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];
	ssize_t n;
	int fd;

	if (!size)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	if ((size_t)n == size)
		n--;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return n;
}

static const char *sxu_sysfs_path = "/sys";

static void sxu_sysfs_path_init(void)
{
	const char *env = NULL;
	char *dup;
	size_t len;

	if (getuid() == geteuid() && getgid() == getegid())
		env = getenv("SYSFS_PATH");
	if (!env || !*env)
		return;
	dup = strndup(env, IBV_SYSFS_PATH_MAX);
	if (!dup)
		return;
	len = strlen(dup);
	while (len > 1 && dup[len - 1] == '/')
		dup[--len] = '\0';
	sxu_sysfs_path = dup;
}

SXU_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file,
				    char *buf, size_t size)
{
	return sxu_read_sysfs(dir, file, buf, size);
}

SXU_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
					  struct ibv_device *dev,
					  const char *fnfmt, ...)
{
	char file[IBV_SYSFS_PATH_MAX];
	va_list ap;

	va_start(ap, fnfmt);
	vsnprintf(file, sizeof(file), fnfmt, ap);
	va_end(ap);
	if (!sxu_device_is_ours(dev))
		return SXU_FORWARD(ibv_read_ibdev_sysfs_file, -1, buf, size,
				   dev, "%s", file);
	return sxu_read_sysfs(dev->ibdev_path, file, buf, size);
}

/*
 * rdma-core's: the sysfs mount point, "/sys" unless $SYSFS_PATH says
 * otherwise (trailing slashes dropped; ignored in set-id programs).
 * Callers (Open MPI's common verbs, for one) declare it themselves as
 * const char *ibv_get_sysfs_path(void), so its signature is fixed.
 */
SXU_EXPORT const char *ibv_get_sysfs_path(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sxu_sysfs_path_init);
	return sxu_sysfs_path;
}

/*
 * Memory pinned with FOLL_LONGTERM stays with the parent across fork() on
 * every kernel softxrc supports (pinned anonymous pages are copied for the
 * child at fork time), so no madvise(MADV_DONTFORK) dance is needed.
 * Where the host has other RDMA devices (sys.c), their library decides
 * for their memory: these are its answers, else softxrc's.
 */
SXU_EXPORT int ibv_fork_init(void)
{
	if (sxu_sys_present())
		return SXU_FORWARD(ibv_fork_init, 0);
	return 0;
}

SXU_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	if (sxu_sys_present())
		return SXU_FORWARD(ibv_is_fork_initialized, IBV_FORK_UNNEEDED);
	return IBV_FORK_UNNEEDED;
}

SXU_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	if (sxu_sys_present())
		return SXU_FORWARD(ibv_dontfork_range, 0, base, size);
	return 0;
}

SXU_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	if (sxu_sys_present())
		return SXU_FORWARD(ibv_dofork_range, 0, base, size);
	return 0;
}

#define SXU_STR(table, i) \
	((size_t)(i) < SXU_ARRAY_SIZE(table) && (table)[i] ? (table)[i] : "unknown")

SXU_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	static const char *const names[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return SXU_STR(names, node_type);
}

SXU_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return SXU_STR(names, port_state);
}

SXU_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const names[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return SXU_STR(names, event);
}

SXU_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return SXU_STR(names, status);
}

/* Static rate: enum ibv_rate, multiple of 2.5 Gb/s, and Mb/s. */
static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} sxu_rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, 5, 14062 },
	{ IBV_RATE_56_GBPS, 22, 56250 },
	{ IBV_RATE_112_GBPS, 45, 112500 },
	{ IBV_RATE_168_GBPS, 67, 168750 },
	{ IBV_RATE_25_GBPS, 10, 25781 },
	{ IBV_RATE_100_GBPS, 40, 103125 },
	{ IBV_RATE_200_GBPS, 80, 206250 },
	{ IBV_RATE_300_GBPS, 120, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
};

SXU_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < SXU_ARRAY_SIZE(sxu_rates); i++)
		if (sxu_rates[i].rate == rate)
			return sxu_rates[i].mult;
	return -1;
}

SXU_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < SXU_ARRAY_SIZE(sxu_rates); i++)
		if (sxu_rates[i].mult == mult)
			return sxu_rates[i].rate;
	return IBV_RATE_MAX;
}

SXU_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < SXU_ARRAY_SIZE(sxu_rates); i++)
		if (sxu_rates[i].rate == rate)
			return sxu_rates[i].mbps;
	return -1;
}

SXU_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < SXU_ARRAY_SIZE(sxu_rates); i++)
		if (sxu_rates[i].mbps == mbps)
			return sxu_rates[i].rate;
	return IBV_RATE_MAX;
}

/*
 * A creation failed with ENOMEM: if the device's object limit is the
 * reason, or may be the user's, say which module parameter to raise.
 */
void sxu_explain_limit(struct ibv_context *context, const char *type)
{
	char file[64], buf[32], param[96];
	long count, limit;

	snprintf(file, sizeof(file), "objects/%s", type);
	if (sxu_read_sysfs(context->device->ibdev_path, file, buf,
			    sizeof(buf)) <= 0)
		return;
	count = atol(buf);
	snprintf(param, sizeof(param), "max_%s", type);
	if (sxu_read_sysfs("/sys/module/softxrc/parameters", param, buf,
			    sizeof(buf)) <= 0)
		return;
	limit = atol(buf);
	if (count >= limit) {
		sxu_log("%s: the device's limit of %ld %s objects is reached; "
			 "raise the module parameter %s\n",
			 context->device->name, limit, type, param);
		return;
	}
	/*
	 * A user's own count is not shown to it, but it cannot exceed the
	 * device's: below the per-user limit, that limit is not the reason.
	 */
	snprintf(param, sizeof(param), "max_%s_per_user", type);
	if (sxu_read_sysfs("/sys/module/softxrc/parameters", param, buf,
			    sizeof(buf)) <= 0)
		return;
	limit = atol(buf);
	if (limit > 0 && count >= limit)
		sxu_log("%s: out of memory, or this user's limit of %ld %s "
			 "objects is reached; raise the module parameter %s\n",
			 context->device->name, limit, type, param);
}
