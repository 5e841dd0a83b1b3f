// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: show the resources of softxrc devices, through the "softxrc"
 * generic netlink family (see the netlink section of softxrc-abi.h).
 *
 *   softxrc [-j] res show [dev|ctx|pd|mr|cq|qp|srq|xrcd|xrcqp|cm_id] [pid N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <rdma/softxrc-abi.h>
#include <rdma/softxrc-netlink.h>

static const char *const class_names[__SXRC_NL_RES_MAX] = {
	[SXRC_NL_RES_DEV] = "dev",
	[SXRC_NL_RES_CTX] = "ctx",
	[SXRC_NL_RES_PD] = "pd",
	[SXRC_NL_RES_MR] = "mr",
	[SXRC_NL_RES_CQ] = "cq",
	[SXRC_NL_RES_QP] = "qp",
	[SXRC_NL_RES_SRQ] = "srq",
	[SXRC_NL_RES_XRCD] = "xrcd",
	[SXRC_NL_RES_XRCQP] = "xrcqp",
	[SXRC_NL_RES_CM_ID] = "cm_id",
};

static const char *const stat_names[__SXRC_NL_STAT_MAX] = {
	[SXRC_NL_STAT_SEND_WQES] = "send_wqes",
	[SXRC_NL_STAT_SEND_BYTES] = "send_bytes",
	[SXRC_NL_STAT_RECV_WQES] = "recv_wqes",
	[SXRC_NL_STAT_RECV_BYTES] = "recv_bytes",
	[SXRC_NL_STAT_RNR_RETRIES] = "rnr_retries",
	[SXRC_NL_STAT_RETRIES] = "retries",
	[SXRC_NL_STAT_ERRORS] = "errors",
	[SXRC_NL_STAT_RECV_SHARED] = "recv_shared",
};

/* Plain u32/u64 attributes: their output name; 0 marks others. */
static const char *const u_names[__SXRC_NL_ATTR_MAX] = {
	[SXRC_NL_ATTR_PID] = "pid",
	[SXRC_NL_ATTR_CTX_ID] = "ctx",
	[SXRC_NL_ATTR_UID] = "uid",
	[SXRC_NL_ATTR_HANDLE] = "handle",
	[SXRC_NL_ATTR_NUM_CTX] = "contexts",
	[SXRC_NL_ATTR_NUM_PD] = "pds",
	[SXRC_NL_ATTR_NUM_MR] = "mrs",
	[SXRC_NL_ATTR_NUM_CQ] = "cqs",
	[SXRC_NL_ATTR_NUM_QP] = "qps",
	[SXRC_NL_ATTR_NUM_SRQ] = "srqs",
	[SXRC_NL_ATTR_NUM_XRCD] = "xrcds",
	[SXRC_NL_ATTR_PINNED_PAGES] = "pinned_pages",
	[SXRC_NL_ATTR_LENGTH] = "length",
	[SXRC_NL_ATTR_KEY] = "key",
	[SXRC_NL_ATTR_CQE] = "cqe",
	[SXRC_NL_ATTR_QPN] = "qpn",
	[SXRC_NL_ATTR_SRQN] = "srqn",
	[SXRC_NL_ATTR_INODE] = "inode",
	[SXRC_NL_ATTR_OPENS] = "opens",
	[SXRC_NL_ATTR_REG_COUNT] = "count",
	[SXRC_NL_ATTR_REG_OTHERS] = "other_registrations",
	[SXRC_NL_ATTR_NETDEV_INDEX] = "ifindex",
	[SXRC_NL_ATTR_NUM_CM_ID] = "cm_ids",
	[SXRC_NL_ATTR_CM_LOCAL_ID] = "local_id",
	[SXRC_NL_ATTR_CM_REMOTE_ID] = "remote_id",
	[SXRC_NL_ATTR_REMOTE_QPN] = "remote_qpn",
};

static bool json;
static unsigned int nobjs;
static bool need_comma;

static const char *qp_type_name(uint32_t t)
{
	switch (t) {
	case SXRC_QPT_RC: return "RC";
	case SXRC_QPT_UC: return "UC";
	case SXRC_QPT_UD: return "UD";
	case SXRC_QPT_XRC_SEND: return "XRC_SEND";
	case SXRC_QPT_XRC_RECV: return "XRC_RECV";
	default: return "?";
	}
}

static const char *qp_state_name(uint32_t s)
{
	static const char *const n[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

static const char *cm_state_name(uint32_t s)
{
	static const char *const n[__SXRC_NL_CM_MAX] = {
		[SXRC_NL_CM_IDLE] = "IDLE",
		[SXRC_NL_CM_LISTEN] = "LISTEN",
		[SXRC_NL_CM_REQ_SENT] = "REQ_SENT",
		[SXRC_NL_CM_REQ_RCVD] = "REQ_RCVD",
		[SXRC_NL_CM_REP_SENT] = "REP_SENT",
		[SXRC_NL_CM_REP_RCVD] = "REP_RCVD",
		[SXRC_NL_CM_ESTABLISHED] = "ESTABLISHED",
		[SXRC_NL_CM_DREQ_SENT] = "DREQ_SENT",
		[SXRC_NL_CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
		[SXRC_NL_CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
		[SXRC_NL_CM_DONE] = "DONE",
	};

	return s < __SXRC_NL_CM_MAX ? n[s] : "?";
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void sep(void)
{
	if (json && need_comma)
		putchar(',');
	else if (!json && need_comma)
		putchar(' ');
	need_comma = true;
}

static void out_str(const char *name, const char *val)
{
	sep();
	if (!json && !strcmp(name, "type")) {
		/* Human output: a line starts with the bare class name. */
		fputs(val, stdout);
	} else if (json) {
		json_string(name);
		putchar(':');
		json_string(val);
	} else {
		printf("%s %s", name, val);
	}
}

static void out_u64(const char *name, uint64_t val)
{
	sep();
	if (json)
		printf("\"%s\":%" PRIu64, name, val);
	else
		printf("%s %" PRIu64, name, val);
}

static uint64_t attr_uint(const struct nlattr *a)
{
	if (mnl_attr_get_payload_len(a) == sizeof(uint64_t))
		return mnl_attr_get_u64(a);
	if (mnl_attr_get_payload_len(a) == sizeof(uint32_t))
		return mnl_attr_get_u32(a);
	return 0;
}

static void print_stats(const struct nlattr *nest)
{
	const struct nlattr *a;

	if (json) {
		sep();
		printf("\"stats\":{");
		need_comma = false;
	}
	mnl_attr_for_each_nested(a, nest) {
		uint16_t t = mnl_attr_get_type(a);

		if (t < __SXRC_NL_STAT_MAX && stat_names[t] &&
		    mnl_attr_get_payload_len(a) == sizeof(uint64_t))
			out_u64(stat_names[t], mnl_attr_get_u64(a));
	}
	if (json) {
		putchar('}');
		need_comma = true;
	}
}

static void print_regs(const struct nlattr **regs, unsigned int n)
{
	unsigned int i;

	if (json) {
		sep();
		printf("\"registrations\":[");
	}
	for (i = 0; i < n; i++) {
		const struct nlattr *a;
		uint64_t pid = 0, count = 0;

		mnl_attr_for_each_nested(a, regs[i]) {
			if (mnl_attr_get_type(a) == SXRC_NL_ATTR_PID)
				pid = attr_uint(a);
			else if (mnl_attr_get_type(a) == SXRC_NL_ATTR_REG_COUNT)
				count = attr_uint(a);
		}
		if (json)
			printf("%s{\"pid\":%" PRIu64 ",\"count\":%" PRIu64 "}",
			       i ? "," : "", pid, count);
		else
			printf(" reg pid %" PRIu64 " count %" PRIu64, pid,
			       count);
	}
	if (json)
		putchar(']');
}

#define MAX_REGS 256

static int res_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *regs[MAX_REGS];
	const struct nlattr *stats = NULL;
	const struct nlattr *a;
	unsigned int nregs = 0;
	uint32_t class = 0;
	char hex[24];

	(void)data;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == SXRC_NL_ATTR_RES_CLASS)
			class = mnl_attr_get_u32(a);
	if (!class || class >= __SXRC_NL_RES_MAX)
		return MNL_CB_OK;

	if (json)
		printf("%s{", nobjs ? "," : "");
	nobjs++;
	need_comma = false;
	/*
	 * Human lines start with the class name, but a device's line starts
	 * with its "dev NAME" pair, as iproute2's rdma tool prints it.
	 */
	if (json || class != SXRC_NL_RES_DEV)
		out_str("type", class_names[class]);
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		uint16_t t = mnl_attr_get_type(a);

		switch (t) {
		case SXRC_NL_ATTR_DEV_NAME:
		case SXRC_NL_ATTR_COMM:
		case SXRC_NL_ATTR_NETDEV:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
				break;
			out_str(t == SXRC_NL_ATTR_COMM ? "comm" :
				t == SXRC_NL_ATTR_NETDEV ? "netdev" : "dev",
				mnl_attr_get_str(a));
			break;
		case SXRC_NL_ATTR_QP_TYPE:
			out_str("qp_type", qp_type_name(mnl_attr_get_u32(a)));
			break;
		case SXRC_NL_ATTR_QP_STATE:
			out_str("state", qp_state_name(mnl_attr_get_u32(a)));
			break;
		case SXRC_NL_ATTR_CM_STATE:
			out_str("state", cm_state_name(mnl_attr_get_u32(a)));
			break;
		case SXRC_NL_ATTR_SERVICE_ID:
			/* As ib_cm and rdma_cm show one: 16 hex digits. */
			snprintf(hex, sizeof(hex), "0x%016" PRIx64,
				 mnl_attr_get_u64(a));
			out_str("service_id", hex);
			break;
		case SXRC_NL_ATTR_STATS:
			stats = a;
			break;
		case SXRC_NL_ATTR_REG:
			if (nregs < MAX_REGS)
				regs[nregs++] = a;
			break;
		default:
			if (t < __SXRC_NL_ATTR_MAX && u_names[t])
				out_u64(u_names[t], attr_uint(a));
			break;
		}
	}
	if (class == SXRC_NL_RES_XRCQP)
		print_regs(regs, nregs);
	if (stats)
		print_stats(stats);
	printf(json ? "}" : "\n");
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			*(uint16_t *)data = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

/* Send @nlh and run @cb on every reply; 0 or -errno. */
static int transact(struct mnl_socket *nl, struct nlmsghdr *nlh,
		    mnl_cb_t cb, void *data)
{
	/* Dumps fill skbs up to the largest buffer a reader offered. */
	static char buf[32768];
	unsigned int portid = mnl_socket_get_portid(nl);
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, seq, portid, cb, data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

static struct nlmsghdr *put_genl(char *buf, uint16_t type, uint8_t cmd,
				 uint16_t flags, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: softxrc [-j] res show [dev|ctx|pd|mr|cq|qp|srq|xrcd|xrcqp] [pid N]\n"
		"       softxrc link add softxrcN netdev IFNAME\n"
		"       softxrc link del softxrcN\n"
		"  -j  JSON output\n");
}

/* A netlink socket and the softxrc family's id; NULL after a message. */
static struct mnl_socket *open_family(uint16_t *family)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	int ret;

	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("softxrc: netlink socket");
		if (nl)
			mnl_socket_close(nl);
		return NULL;
	}
	/* The ACK ends the exchange after the one reply. */
	*family = 0;
	nlh = put_genl(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SXRC_NL_FAMILY_NAME);
	ret = transact(nl, nlh, family_cb, family);
	if (ret || !*family) {
		fprintf(stderr, "softxrc: netlink family %s not found (is the module loaded?): %s\n",
			SXRC_NL_FAMILY_NAME, strerror(ret ? -ret : ENOENT));
		mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

/* softxrc link add NAME netdev IFNAME | link del NAME */
static int link_cmd(int argc, char **argv)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	uint16_t family;
	bool add;
	int ret;

	add = argc == 4 && !strcmp(argv[0], "add") &&
	      !strcmp(argv[2], "netdev");
	if (!add && (argc != 2 || (strcmp(argv[0], "del") &&
				   strcmp(argv[0], "delete")))) {
		usage(stderr);
		return 2;
	}
	nl = open_family(&family);
	if (!nl)
		return 1;
	nlh = put_genl(buf, family,
		       add ? SXRC_NL_CMD_LINK_ADD : SXRC_NL_CMD_LINK_DEL,
		       NLM_F_ACK, SXRC_NL_FAMILY_VERSION);
	mnl_attr_put_strz(nlh, SXRC_NL_ATTR_DEV_NAME, argv[1]);
	if (add)
		mnl_attr_put_strz(nlh, SXRC_NL_ATTR_NETDEV, argv[3]);
	ret = transact(nl, nlh, NULL, NULL);
	mnl_socket_close(nl);
	if (ret) {
		fprintf(stderr, "softxrc: link %s %s: %s%s\n", argv[0], argv[1],
			strerror(-ret), ret == -EADDRINUSE ?
			" (UDP port 4791 of this network namespace is taken: rdma_rxe loaded?)" :
			"");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	uint32_t class = 0, pid = 0;
	uint16_t family = 0;
	int i, ret;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "softxrc: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i < argc && !strcmp(argv[i], "link"))
		return link_cmd(argc - i - 1, argv + i + 1);
	if (argc - i < 2 || strcmp(argv[i], "res") ||
	    strcmp(argv[i + 1], "show")) {
		usage(stderr);
		return 2;
	}
	for (i += 2; i < argc; i++) {
		unsigned int c;

		for (c = 1; c < __SXRC_NL_RES_MAX; c++)
			if (!strcmp(argv[i], class_names[c]))
				break;
		if (c < __SXRC_NL_RES_MAX && !class) {
			class = c;
		} else if (!strcmp(argv[i], "pid") && i + 1 < argc && !pid) {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(argv[++i], &end, 10);
			if (errno || *end || !v || v > INT32_MAX) {
				fprintf(stderr, "softxrc: bad pid %s\n", argv[i]);
				return 2;
			}
			pid = (uint32_t)v;
		} else {
			fprintf(stderr, "softxrc: unexpected argument %s\n",
				argv[i]);
			usage(stderr);
			return 2;
		}
	}

	nl = open_family(&family);
	if (!nl)
		return 1;
	nlh = put_genl(buf, family, SXRC_NL_CMD_RES_GET, NLM_F_DUMP,
		       SXRC_NL_FAMILY_VERSION);
	if (class)
		mnl_attr_put_u32(nlh, SXRC_NL_ATTR_RES_CLASS, class);
	if (pid)
		mnl_attr_put_u32(nlh, SXRC_NL_ATTR_PID, pid);
	if (json)
		putchar('[');
	ret = transact(nl, nlh, res_cb, NULL);
	mnl_socket_close(nl);
	if (json)
		printf("]\n");
	if (fflush(stdout) || ret) {
		fprintf(stderr, "softxrc: resource dump failed: %s\n",
			strerror(ret ? -ret : errno));
		return 1;
	}
	return 0;
}
