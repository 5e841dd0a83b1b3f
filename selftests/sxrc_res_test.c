// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the resource view.  Known objects are made, then
 * build/bin/softxrc (found next to this program's directory) is run with
 * -j and its JSON checked: counts, pinned pages, QP numbers and states,
 * XRC registrants, dumps spanning many messages, and that a caller
 * without CAP_SYS_ADMIN sees its own objects and nobody else's.  Where a
 * test dumps in a tight loop it speaks netlink itself (nl_dump()), so
 * that no process is started per dump.
 */
#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>
#include <limits.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <rdma/softxrc-netlink.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

#define NPAGES		8
#define NOBODY		65534
#define MANY_PDS	1000
#define OUT_MAX		(1 << 20)

/* Output of one run of the tool. */
struct run {
	char *out;
	int status;
};

/* Run "softxrc ARGS"; r->out gets its stdout, r->status its exit code. */
static int run_tool(struct run *r, const char *fmt, ...)
{
	char cmd[PATH_MAX + 256], args[256];
	va_list ap;
	size_t len = 0;
	ssize_t n;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	/* A hung tool fails the test, not the whole run. */
	snprintf(cmd, sizeof(cmd), "timeout 20 %s %s", sxrc_tool(), args);
	r->out = calloc(1, OUT_MAX);
	if (!r->out)
		return -1;
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while ((n = fread(r->out + len, 1, OUT_MAX - 1 - len, f)) > 0)
		len += n;
	r->out[len] = '\0';
	r->status = pclose(f);
	r->status = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128;
	return 0;
}

/* python3, when installed, must take the output for valid JSON. */
static bool json_valid(const char *out)
{
	FILE *f;

	if (access("/usr/bin/python3", X_OK))
		return true;
	f = popen("python3 -m json.tool >/dev/null 2>&1", "w");
	if (!f)
		return false;
	fputs(out, f);
	return pclose(f) == 0;
}

/*
 * The i-th top-level object of a JSON array of objects, copied to @obj;
 * false when there is none.
 */
static bool json_obj(const char *out, int i, char *obj, size_t size)
{
	const char *start = NULL;
	bool str = false;
	int depth = 0;
	const char *p;

	for (p = out; *p; p++) {
		if (str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				str = false;
			continue;
		}
		if (*p == '"') {
			str = true;
		} else if (*p == '{' || *p == '[') {
			if (++depth == 2 && *p == '{')
				start = p;
		} else if (*p == '}' || *p == ']') {
			if (depth-- == 2 && start && i-- == 0) {
				size_t len = p + 1 - start;

				if (len >= size)
					return false;
				memcpy(obj, start, len);
				obj[len] = '\0';
				return true;
			}
		}
	}
	return false;
}

/* The first number named @key in @obj (top-level keys come first). */
static long long json_num(const char *obj, const char *key)
{
	char pat[64];

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	return sxrc_num_after(obj, pat);
}

static bool json_is(const char *obj, const char *key, const char *val)
{
	char pat[128];

	snprintf(pat, sizeof(pat), "\"%s\":\"%s\"", key, val);
	return strstr(obj, pat);
}

/* Objects of @type, of @pid unless it is 0, in the output. */
static int count_objs(const char *out, const char *type, pid_t pid)
{
	static char obj[65536];
	int i, n = 0;

	for (i = 0; json_obj(out, i, obj, sizeof(obj)); i++)
		if (json_is(obj, "type", type) &&
		    (!pid || json_num(obj, "pid") == pid))
			n++;
	return n;
}

/* The object of @type whose @key is @val, copied to @obj. */
static bool find_obj(const char *out, const char *type, const char *key,
		     long long val, char *obj, size_t size)
{
	int i;

	for (i = 0; json_obj(out, i, obj, size); i++)
		if (json_is(obj, "type", type) && json_num(obj, key) == val)
			return true;
	return false;
}

/* The registration count of @pid in an xrcqp object, 0 if absent. */
static long long reg_count(const char *obj, pid_t pid)
{
	const char *p = strstr(obj, "\"registrations\":[");
	char pat[64];

	if (!p)
		return -1;
	snprintf(pat, sizeof(pat), "{\"pid\":%d,\"count\":", pid);
	p = strstr(p, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : 0;
}

/* ------------------------------------------------------------------
 * The dump without the tool: one netlink socket, many dumps.
 */

/* What nl_dump() hands its callback of one object. */
struct nl_obj {
	uint32_t class;
	int64_t pid;		/* -1: absent */
	int64_t inode;		/* -1: absent */
	int64_t opens;		/* -1: absent */
};

struct nl {
	int fd;
	uint16_t family;
	uint32_t seq;
	char buf[32768];
};

static struct nlattr *nl_put(struct nlmsghdr *h, uint16_t type,
			     const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

static struct nlmsghdr *nl_req(struct nl *nl, uint16_t type, uint16_t flags,
			       uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nl->buf;
	struct genlmsghdr *g = NLMSG_DATA(h);

	memset(nl->buf, 0, NLMSG_SPACE(GENL_HDRLEN) + 256);
	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++nl->seq;
	g->cmd = cmd;
	g->version = version;
	return h;
}

/* Attributes of a generic netlink message. */
#define for_each_attr(a, h, left)					\
	for (a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN),	\
	     left = (int)(h)->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);	\
	     left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&		\
	     a->nla_len <= left;						\
	     left -= NLA_ALIGN(a->nla_len),					\
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

static int64_t nla_uint(const struct nlattr *a)
{
	const char *p = (const char *)a + NLA_HDRLEN;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (a->nla_len - NLA_HDRLEN) {
	case 8:
		memcpy(&v64, p, 8);
		return v64;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	default:
		return -1;
	}
}

/*
 * Send what nl->buf holds and run @cb on every reply up to NLMSG_DONE
 * (a dump) or the one reply; 0 or -errno.
 */
static int nl_talk(struct nl *nl, bool dump,
		   void (*cb)(struct nlmsghdr *h, void *arg), void *arg)
{
	struct nlmsghdr *h = (struct nlmsghdr *)nl->buf;
	uint32_t seq = h->nlmsg_seq;
	ssize_t n;

	if (send(nl->fd, h, h->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(nl->fd, nl->buf, sizeof(nl->buf), 0);
		if (n < 0)
			return -errno;
		for (h = (struct nlmsghdr *)nl->buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			cb(h, arg);
			if (!dump)
				return 0;
		}
	}
}

static void nl_family_cb(struct nlmsghdr *h, void *arg)
{
	struct nlattr *a;
	int left;

	for_each_attr(a, h, left)
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			*(uint16_t *)arg = nla_uint(a);
}

/* Open a generic netlink socket and find the softxrc family: 0 or -errno. */
static int nl_open(struct nl *nl)
{
	struct nlmsghdr *h;
	int ret;

	nl->seq = 0;
	nl->family = 0;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	h = nl_req(nl, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, 1);
	nl_put(h, CTRL_ATTR_FAMILY_NAME, SXRC_NL_FAMILY_NAME,
	       sizeof(SXRC_NL_FAMILY_NAME));
	ret = nl_talk(nl, false, nl_family_cb, &nl->family);
	if (!ret && !nl->family)
		ret = -ENOENT;
	if (ret)
		close(nl->fd);
	return ret;
}

struct nl_dump_arg {
	void (*cb)(const struct nl_obj *o, void *arg);
	void *arg;
};

static void nl_dump_cb(struct nlmsghdr *h, void *arg)
{
	struct nl_dump_arg *d = arg;
	struct nl_obj o = { 0, -1, -1, -1 };
	struct nlattr *a;
	int left;

	for_each_attr(a, h, left) {
		switch (a->nla_type) {
		case SXRC_NL_ATTR_RES_CLASS:
			o.class = nla_uint(a);
			break;
		case SXRC_NL_ATTR_PID:
			o.pid = nla_uint(a);
			break;
		case SXRC_NL_ATTR_INODE:
			o.inode = nla_uint(a);
			break;
		case SXRC_NL_ATTR_OPENS:
			o.opens = nla_uint(a);
			break;
		}
	}
	d->cb(&o, d->arg);
}

/* Dump @class (0: all), calling @cb for each object: 0 or -errno. */
static int nl_dump(struct nl *nl, uint32_t class,
		   void (*cb)(const struct nl_obj *o, void *arg), void *arg)
{
	struct nl_dump_arg d = { cb, arg };
	struct nlmsghdr *h;

	h = nl_req(nl, nl->family, NLM_F_DUMP, SXRC_NL_CMD_RES_GET,
		   SXRC_NL_FAMILY_VERSION);
	if (class)
		nl_put(h, SXRC_NL_ATTR_RES_CLASS, &class, sizeof(class));
	return nl_talk(nl, true, nl_dump_cb, &d);
}

FIXTURE(res) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	void *buf;
	char path[64];
	int fd;
	struct run r;
	char obj[65536];
};

FIXTURE_SETUP(res)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
	};
	int num;

	memset(&self->r, 0, sizeof(self->r));
	self->fd = -1;
	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, access(sxrc_tool(), X_OK));
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = mmap(NULL, NPAGES * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, NPAGES * 4096,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	ia.send_cq = self->cq;
	ia.recv_cq = self->cq;
	self->qp = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, self->qp);
	ASSERT_EQ(0, ibv_modify_qp(self->qp, &a, IBV_QP_STATE |
				   IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS));
	strcpy(self->path, "/tmp/sxrc_res.XXXXXX");
	self->fd = mkstemp(self->path);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(res)
{
	free(self->r.out);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, NPAGES * 4096);
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->list)
		ibv_free_device_list(self->list);
}

TEST_F(res, own_objects_by_pid)
{
	pid_t me = getpid();
	char *o = self->obj;

	ASSERT_EQ(0, run_tool(&self->r, "-j res show pid %d", me));
	ASSERT_EQ(0, self->r.status);
	EXPECT_TRUE(json_valid(self->r.out));
	EXPECT_EQ(1, count_objs(self->r.out, "ctx", me));
	EXPECT_EQ(1, count_objs(self->r.out, "pd", me));
	EXPECT_EQ(1, count_objs(self->r.out, "mr", me));
	EXPECT_EQ(1, count_objs(self->r.out, "cq", me));
	EXPECT_EQ(1, count_objs(self->r.out, "qp", me));
	EXPECT_EQ(0, count_objs(self->r.out, "srq", me));
	/* The pid filter leaves only this process's objects. */
	EXPECT_EQ(count_objs(self->r.out, "mr", 0), 1);
	/* Devices are not filtered by pid. */
	EXPECT_LE(1, count_objs(self->r.out, "dev", 0));

	ASSERT_TRUE(find_obj(self->r.out, "mr", "pid", me, o, sizeof(self->obj)));
	EXPECT_EQ(NPAGES, json_num(o, "pinned_pages"));
	EXPECT_EQ(NPAGES * 4096, json_num(o, "length"));
	EXPECT_EQ(self->mr->lkey, json_num(o, "key"));

	ASSERT_TRUE(find_obj(self->r.out, "qp", "qpn", self->qp->qp_num, o,
			     sizeof(self->obj)));
	EXPECT_EQ(me, json_num(o, "pid"));
	EXPECT_TRUE(json_is(o, "state", "INIT"));
	EXPECT_TRUE(json_is(o, "qp_type", "RC"));
	EXPECT_EQ(0, json_num(o, "send_wqes"));

	ASSERT_TRUE(find_obj(self->r.out, "ctx", "pid", me, o, sizeof(self->obj)));
	EXPECT_EQ(0, json_num(o, "uid"));
	EXPECT_NE(NULL, strstr(o, "\"comm\":\"sxrc_res_test\""));
}

TEST_F(res, class_filter_and_device_counts)
{
	pid_t me = getpid();
	char *o = self->obj;

	ASSERT_EQ(0, run_tool(&self->r, "-j res show qp"));
	ASSERT_EQ(0, self->r.status);
	EXPECT_TRUE(json_valid(self->r.out));
	EXPECT_EQ(1, count_objs(self->r.out, "qp", me));
	EXPECT_EQ(0, count_objs(self->r.out, "pd", 0));
	EXPECT_EQ(0, count_objs(self->r.out, "dev", 0));
	free(self->r.out);

	ASSERT_EQ(0, run_tool(&self->r, "-j res show dev"));
	ASSERT_EQ(0, self->r.status);
	ASSERT_TRUE(find_obj(self->r.out, "dev", "pid", -1, o,
			     sizeof(self->obj)));
	EXPECT_TRUE(json_is(o, "dev", "softxrc0"));
	EXPECT_EQ(sxrc_sysfs_long("objects/contexts"), json_num(o, "contexts"));
	EXPECT_EQ(sxrc_sysfs_long("objects/mr_pages"),
		  json_num(o, "pinned_pages"));
	EXPECT_LE(1, json_num(o, "qps"));
	EXPECT_LE(0, json_num(o, "send_wqes"));
	free(self->r.out);

	/* Human output: one line per object, naming the QP and its state. */
	ASSERT_EQ(0, run_tool(&self->r, "res show qp pid %d", me));
	ASSERT_EQ(0, self->r.status);
	snprintf(o, sizeof(self->obj), "qpn %u qp_type RC state INIT",
		 self->qp->qp_num);
	EXPECT_NE(NULL, strstr(self->r.out, o));
	free(self->r.out);

	/* Bad usage fails, with nothing on stdout. */
	ASSERT_EQ(0, run_tool(&self->r, "res show bogus 2>/dev/null"));
	EXPECT_NE(0, self->r.status);
	EXPECT_EQ('\0', self->r.out[0]);
	free(self->r.out);
	ASSERT_EQ(0, run_tool(&self->r, "res show pid x 2>/dev/null"));
	EXPECT_NE(0, self->r.status);
}

/* Many objects: the dump spans many messages, each object exactly once. */
TEST_F(res, dump_spans_many_messages)
{
	struct ibv_pd *pds[MANY_PDS];
	pid_t me = getpid();
	int i;

	for (i = 0; i < MANY_PDS; i++) {
		pds[i] = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pds[i]);
	}
	ASSERT_EQ(0, run_tool(&self->r, "-j res show pd"));
	ASSERT_EQ(0, self->r.status);
	EXPECT_TRUE(json_valid(self->r.out));
	EXPECT_LT(32768, strlen(self->r.out));
	EXPECT_EQ(MANY_PDS + 1, count_objs(self->r.out, "pd", me));
	free(self->r.out);
	ASSERT_EQ(0, run_tool(&self->r, "-j res show"));
	ASSERT_EQ(0, self->r.status);
	EXPECT_EQ(MANY_PDS + 1, count_objs(self->r.out, "pd", me));
	EXPECT_EQ(1, count_objs(self->r.out, "qp", me));
	for (i = 0; i < MANY_PDS; i++)
		EXPECT_EQ(0, ibv_dealloc_pd(pds[i]));
}

/* Shared between the test and its child. */
struct shared {
	_Atomic int ready;
	_Atomic int go;
	uint32_t qpn;
};

static bool shm_wait(_Atomic int *v, int ms)
{
	while (!atomic_load(v) && ms-- > 0)
		usleep(1000);
	return atomic_load(v);
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The child of xrc_domain_and_registrants: a second opener, registered. */
static int xrc_child(struct ibv_device *dev, const char *path,
		     struct shared *sh)
{
	struct ibv_xrc_domain *d;
	struct ibv_context *ctx;
	int fd;

	ctx = ibv_open_device(dev);
	fd = open(path, O_RDONLY);
	if (!ctx || fd < 0)
		return 1;
	d = ibv_open_xrc_domain(ctx, fd, 0);
	if (!d || ibv_reg_xrc_rcv_qp(d, sh->qpn))
		return 2;
	atomic_store(&sh->ready, 1);
	if (!shm_wait(&sh->go, 20000))
		return 3;
	ibv_close_device(ctx);
	return 0;
}

TEST_F(res, xrc_domain_and_registrants)
{
	struct ibv_qp_init_attr_xrc ia = { .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_xrc_domain *d;
	pid_t me = getpid(), pid;
	struct shared *sh;
	char *o = self->obj;
	struct stat st;

	ASSERT_EQ(0, fstat(self->fd, &st));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	d = ibv_open_xrc_domain(self->ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ia.xrc_domain = d;
	ASSERT_EQ(0, ibv_create_xrc_rcv_qp(&ia, &sh->qpn));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(xrc_child(self->list[0], self->path, sh));
	ASSERT_TRUE(shm_wait(&sh->ready, 20000));

	ASSERT_EQ(0, run_tool(&self->r, "-j res show xrcqp"));
	EXPECT_EQ(0, self->r.status);
	EXPECT_TRUE(json_valid(self->r.out));
	EXPECT_TRUE(find_obj(self->r.out, "xrcqp", "qpn", sh->qpn, o,
			     sizeof(self->obj)));
	EXPECT_EQ(me, json_num(o, "pid"));
	EXPECT_EQ(st.st_ino, json_num(o, "inode"));
	EXPECT_TRUE(json_is(o, "qp_type", "XRC_RECV"));
	EXPECT_TRUE(json_is(o, "state", "RESET"));
	EXPECT_EQ(1, reg_count(o, me));
	EXPECT_EQ(1, reg_count(o, pid));
	free(self->r.out);

	/* The child's registrations only, when asked for its pid. */
	ASSERT_EQ(0, run_tool(&self->r, "-j res show xrcqp pid %d", pid));
	EXPECT_EQ(0, self->r.status);
	EXPECT_TRUE(find_obj(self->r.out, "xrcqp", "qpn", sh->qpn, o,
			     sizeof(self->obj)));
	free(self->r.out);

	ASSERT_EQ(0, run_tool(&self->r, "-j res show xrcd"));
	EXPECT_EQ(0, self->r.status);
	EXPECT_EQ(1, count_objs(self->r.out, "xrcd", me));
	EXPECT_EQ(1, count_objs(self->r.out, "xrcd", pid));
	EXPECT_TRUE(find_obj(self->r.out, "xrcd", "pid", pid, o,
			     sizeof(self->obj)));
	EXPECT_EQ(st.st_ino, json_num(o, "inode"));
	EXPECT_EQ(2, json_num(o, "opens"));

	atomic_store(&sh->go, 1);
	EXPECT_EQ(0, wait_child(pid));
	free(self->r.out);
	/* The child's registration went with its context. */
	ASSERT_EQ(0, run_tool(&self->r, "-j res show xrcqp"));
	EXPECT_TRUE(find_obj(self->r.out, "xrcqp", "qpn", sh->qpn, o,
			     sizeof(self->obj)));
	EXPECT_EQ(1, reg_count(o, me));
	EXPECT_EQ(0, reg_count(o, pid));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, sh->qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	munmap(sh, sizeof(*sh));
}

/* A pid as a JSON member of @obj, not a prefix of another number. */
static bool has_pid(const char *obj, pid_t pid)
{
	char pat[64];

	snprintf(pat, sizeof(pat), "\"pid\":%d,", pid);
	if (strstr(obj, pat))
		return true;
	snprintf(pat, sizeof(pat), "\"pid\":%d}", pid);
	return strstr(obj, pat);
}

/*
 * The child of xrcqp_registrant_sees_only_its_own: as uid NOBODY, it
 * registers with root's receive QP through ibv_open_qp() and looks.
 */
static int nobody_registrant(struct ibv_device *dev, const char *path,
			     pid_t parent, struct shared *sh)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = sh->qpn, .qp_type = IBV_QPT_XRC_RECV,
	};
	static char obj[65536];
	struct ibv_context *ctx;
	struct ibv_qp *qp;
	struct run r;

	if (setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 1;
	ctx = ibv_open_device(dev);
	xa.fd = open(path, O_RDONLY);
	if (!ctx || xa.fd < 0)
		return 2;
	oa.xrcd = ibv_open_xrcd(ctx, &xa);
	qp = oa.xrcd ? ibv_open_qp(ctx, &oa) : NULL;
	if (!qp)
		return 3;
	if (run_tool(&r, "-j res show xrcqp") || r.status)
		return 4;
	/* A registrant is shown the QP and its own registration... */
	if (!find_obj(r.out, "xrcqp", "qpn", sh->qpn, obj, sizeof(obj)))
		return 5;
	if (reg_count(obj, getpid()) != 1)
		return 6;
	/* ...not root's pid or context, as creator or registrant... */
	if (has_pid(obj, parent) || json_num(obj, "ctx") != -1) {
		fprintf(stderr, "# as uid %d: %s\n", NOBODY, obj);
		return 7;
	}
	/* ...only how many registrations others hold. */
	if (json_num(obj, "other_registrations") != 1)
		return 8;
	free(r.out);
	/* Asked for root's pid: nothing. */
	if (run_tool(&r, "-j res show xrcqp pid %d", parent) || r.status ||
	    count_objs(r.out, "xrcqp", 0))
		return 9;
	free(r.out);
	atomic_store(&sh->ready, 1);
	if (!shm_wait(&sh->go, 20000))
		return 10;
	if (ibv_destroy_qp(qp) || ibv_close_xrcd(oa.xrcd))
		return 11;
	ibv_close_device(ctx);
	return 0;
}

TEST_F(res, xrcqp_registrant_sees_only_its_own)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = self->fd, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	pid_t me = getpid(), pid;
	struct shared *sh;
	char *o = self->obj;
	struct ibv_qp *rq;

	/* A domain file both may open; the QP is root's. */
	ASSERT_EQ(0, fchmod(self->fd, 0644));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	ia.xrcd = ibv_open_xrcd(self->ctx, &xa);
	ASSERT_NE(NULL, ia.xrcd);
	rq = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, rq);
	sh->qpn = rq->qp_num;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ret = nobody_registrant(self->list[0], self->path, me, sh);

		if (ret)
			atomic_store(&sh->ready, -1);
		_exit(ret);
	}
	ASSERT_TRUE(shm_wait(&sh->ready, 20000));
	ASSERT_EQ(1, atomic_load(&sh->ready)) {
		TH_LOG("the uid %d child failed: %d", NOBODY, wait_child(pid));
	}

	/* Root sees everybody: the creator and both registrants. */
	ASSERT_EQ(0, run_tool(&self->r, "-j res show xrcqp"));
	EXPECT_EQ(0, self->r.status);
	EXPECT_TRUE(json_valid(self->r.out));
	ASSERT_TRUE(find_obj(self->r.out, "xrcqp", "qpn", sh->qpn, o,
			     sizeof(self->obj)));
	EXPECT_EQ(me, json_num(o, "pid"));
	EXPECT_EQ(1, reg_count(o, me));
	EXPECT_EQ(1, reg_count(o, pid));
	EXPECT_EQ(0, json_num(o, "other_registrations"));

	atomic_store(&sh->go, 1);
	EXPECT_EQ(0, wait_child(pid));
	EXPECT_EQ(0, ibv_destroy_qp(rq));
	EXPECT_EQ(0, ibv_close_xrcd(ia.xrcd));
	munmap(sh, sizeof(*sh));
}

/*
 * A thread that opens and closes XRC domains, each open the only one of
 * its domain, so that every close frees the domain.
 */
#define CHURN_DOMAINS	4
#define RACE_MS		2000

struct churn {
	struct ibv_context *ctx;
	int fd[CHURN_DOMAINS];
	ino_t ino[CHURN_DOMAINS];
	_Atomic bool stop;
	unsigned long cycles;
	int err;
};

static void *churn_main(void *arg)
{
	struct ibv_xrc_domain *d[CHURN_DOMAINS] = { NULL };
	struct churn *c = arg;
	unsigned int i;

	for (i = 0; i < CHURN_DOMAINS && !c->err; i++) {
		d[i] = ibv_open_xrc_domain(c->ctx, c->fd[i], O_CREAT);
		if (!d[i])
			c->err = errno;
	}
	for (i = 0; !c->err && !atomic_load(&c->stop);
	     i = (i + 1) % CHURN_DOMAINS) {
		c->err = ibv_close_xrc_domain(d[i]);
		d[i] = c->err ? NULL : ibv_open_xrc_domain(c->ctx, c->fd[i],
							    O_CREAT);
		if (!c->err && !d[i])
			c->err = errno;
		c->cycles++;
	}
	for (i = 0; i < CHURN_DOMAINS; i++)
		if (d[i] && ibv_close_xrc_domain(d[i]) && !c->err)
			c->err = errno;
	return NULL;
}

/* What the dumps saw of the churning thread's opens. */
struct race_seen {
	const struct churn *c;
	pid_t pid;
	unsigned long objs;
	unsigned long bad;
	struct nl_obj last_bad;
};

static void race_cb(const struct nl_obj *o, void *arg)
{
	struct race_seen *r = arg;
	bool inode_ok = false;
	unsigned int i;

	if (o->class != SXRC_NL_RES_XRCD || o->pid != r->pid)
		return;
	r->objs++;
	for (i = 0; i < CHURN_DOMAINS; i++)
		if (o->inode == (int64_t)r->c->ino[i])
			inode_ok = true;
	/* Each domain has that one open, or none once it was closed. */
	if (!inode_ok || o->opens < 0 || o->opens > 1) {
		r->bad++;
		r->last_bad = *o;
	}
}

/*
 * The dump reads the domain behind each open while opens are closed,
 * and with them their domains freed: a domain is pinned while it is
 * read.  A plain kernel may not show a read after the free; KASAN does.
 */
TEST_F(res, xrcd_dump_races_close)
{
	char paths[CHURN_DOMAINS][64];
	struct race_seen seen = { 0 };
	struct churn c = { 0 };
	unsigned long dumps = 0;
	struct timespec t0, t;
	pthread_t thread;
	struct stat st;
	struct nl nl;
	unsigned int i;
	int ret = 0;

	c.ctx = self->ctx;
	for (i = 0; i < CHURN_DOMAINS; i++) {
		strcpy(paths[i], "/tmp/sxrc_race.XXXXXX");
		c.fd[i] = mkstemp(paths[i]);
		ASSERT_LE(0, c.fd[i]);
		unlink(paths[i]);
		ASSERT_EQ(0, fstat(c.fd[i], &st));
		c.ino[i] = st.st_ino;
	}
	seen.c = &c;
	seen.pid = getpid();
	ASSERT_EQ(0, nl_open(&nl));
	ASSERT_EQ(0, pthread_create(&thread, NULL, churn_main, &c));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ret = nl_dump(&nl, SXRC_NL_RES_XRCD, race_cb, &seen);
		if (ret)
			break;
		dumps++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < RACE_MS);
	atomic_store(&c.stop, true);
	pthread_join(thread, NULL);

	TH_LOG("%lu dumps saw %lu opens; %lu open/close cycles", dumps,
	       seen.objs, c.cycles);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, c.err);
	EXPECT_LT(0, c.cycles);
	EXPECT_LT(0, dumps);
	EXPECT_LT(0, seen.objs);
	EXPECT_EQ(0, seen.bad) {
		TH_LOG("an open shown with inode %lld, opens %lld",
		       (long long)seen.last_bad.inode,
		       (long long)seen.last_bad.opens);
	}

	/* Every domain went with its last close. */
	seen.objs = 0;
	EXPECT_EQ(0, nl_dump(&nl, SXRC_NL_RES_XRCD, race_cb, &seen));
	EXPECT_EQ(0, seen.objs);
	close(nl.fd);
	for (i = 0; i < CHURN_DOMAINS; i++)
		close(c.fd[i]);
}

/* As uid NOBODY: its own context and PD are shown, root's objects not. */
static int nobody_child(pid_t parent, uint32_t parent_qpn)
{
	struct run r;
	uint32_t pd;
	int fd;

	if (setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 1;
	fd = open(SXRC_DEV, O_RDWR);
	if (fd < 0 || sxrc_pd_alloc(fd, &pd))
		return 2;
	if (run_tool(&r, "-j res show") || r.status)
		return 3;
	if (count_objs(r.out, "pd", getpid()) != 1 ||
	    count_objs(r.out, "ctx", getpid()) != 1)
		return 4;
	/* Nothing of root's: every object (devices aside) is ours. */
	if (count_objs(r.out, "pd", 0) != 1 ||
	    count_objs(r.out, "ctx", 0) != 1 ||
	    count_objs(r.out, "qp", 0) || count_objs(r.out, "mr", 0) ||
	    count_objs(r.out, "cq", parent) || strstr(r.out, "\"uid\":0,"))
		return 5;
	if (count_objs(r.out, "dev", 0) < 1)
		return 6;
	free(r.out);
	if (run_tool(&r, "-j res show qp pid %d", parent) || r.status ||
	    count_objs(r.out, "qp", 0))
		return 7;
	(void)parent_qpn;
	free(r.out);
	close(fd);
	return 0;
}

TEST_F(res, unprivileged_sees_only_its_own)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_child(getppid(), self->qp->qp_num));
	EXPECT_EQ(0, wait_child(pid));

	/* Root sees everybody's: its own objects are still there. */
	ASSERT_EQ(0, run_tool(&self->r, "-j res show qp pid %d", getpid()));
	EXPECT_EQ(1, count_objs(self->r.out, "qp", getpid()));
}

/* Count RC QPs in RTS that have sent, of processes other than @me. */
static int busy_rc_qps(const char *out, pid_t me, pid_t *pids)
{
	static char obj[65536];
	int i, n = 0;

	for (i = 0; json_obj(out, i, obj, sizeof(obj)); i++) {
		if (!json_is(obj, "type", "qp") || !json_is(obj, "qp_type", "RC") ||
		    !json_is(obj, "state", "RTS") || json_num(obj, "pid") == me ||
		    json_num(obj, "send_wqes") <= 0)
			continue;
		if (n < 2)
			pids[n] = json_num(obj, "pid");
		n++;
	}
	return n;
}

/*
 * An unmodified rdma-core program at work: while Debian's
 * ibv_rc_pingpong runs as server and client, the tool shows their two
 * connected QPs, of two processes, moving WQEs; after they are killed,
 * nothing of theirs is left.
 */
TEST_F(res, running_pingpong_shows_its_two_qps)
{
	const char *prog = "/usr/bin/ibv_rc_pingpong";
	int port = 19000 + getpid() % 1000, i, n = 0;
	pid_t me = getpid(), pids[2] = { 0, 0 };
	char cmd[512];

	if (access(prog, X_OK))
		SKIP(return, "%s is not installed", prog);
	if (system("ip link set lo up 2>/dev/null"))
		TH_LOG("could not bring lo up");
	snprintf(cmd, sizeof(cmd),
		 "timeout 60 %s -d softxrc0 -p %d -n 100000000 >/dev/null 2>&1 &",
		 prog, port);
	ASSERT_EQ(0, system(cmd));
	usleep(500000);
	snprintf(cmd, sizeof(cmd),
		 "timeout 60 %s -d softxrc0 -p %d -n 100000000 127.0.0.1 >/dev/null 2>&1 &",
		 prog, port);
	ASSERT_EQ(0, system(cmd));

	for (i = 0; i < 60 && n != 2; i++) {
		usleep(250000);
		ASSERT_EQ(0, run_tool(&self->r, "-j res show qp"));
		ASSERT_EQ(0, self->r.status);
		n = busy_rc_qps(self->r.out, me, pids);
		if (n != 2) {
			free(self->r.out);
			self->r.out = NULL;
		}
	}
	EXPECT_EQ(2, n) {
		TH_LOG("QPs seen:\n%s", self->r.out ? self->r.out : "");
	}
	EXPECT_NE(pids[0], pids[1]);

	if (system("pkill -KILL -x ibv_rc_pingpong"))
		TH_LOG("no ibv_rc_pingpong left to kill");
	for (i = 0; i < 40; i++) {
		free(self->r.out);
		self->r.out = NULL;
		usleep(250000);
		ASSERT_EQ(0, run_tool(&self->r, "-j res show qp"));
		if (!count_objs(self->r.out, "qp", pids[0]) &&
		    !count_objs(self->r.out, "qp", pids[1]))
			break;
	}
	EXPECT_EQ(0, count_objs(self->r.out, "qp", pids[0]));
	EXPECT_EQ(0, count_objs(self->r.out, "qp", pids[1]));
}

TEST_HARNESS_MAIN
