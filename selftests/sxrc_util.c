// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftests: the verbs helpers every test program shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "sxrc_util.h"

int sxrc_open_dev(struct ibv_device ***list, struct ibv_context **ctx)
{
	int num;

	*ctx = NULL;
	*list = ibv_get_device_list(&num);
	if (!*list)
		return errno ? -errno : -ENODEV;
	if (!num)
		return 1;
	*ctx = ibv_open_device((*list)[0]);
	if (!*ctx)
		return errno ? -errno : -ENODEV;
	return 0;
}

int sxrc_qp_attr(enum ibv_qp_type t, enum ibv_qp_state s,
		 const struct sxrc_link *l, struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE;

	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		a->port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (t == IBV_QPT_UD) {
			a->qkey = l->qkey;
			mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = l->access;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		break;
	case IBV_QPS_RTR:
		if (t == IBV_QPT_UD)
			break;
		a->path_mtu = l->mtu;
		a->dest_qp_num = l->dqpn;
		a->rq_psn = l->rq_psn;
		a->ah_attr.dlid = l->dlid;
		a->ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV) {
			a->max_dest_rd_atomic = l->max_dest_rd_atomic;
			a->min_rnr_timer = l->min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		break;
	case IBV_QPS_RTS:
		a->sq_psn = l->sq_psn;
		mask |= IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND) {
			a->timeout = l->timeout;
			a->retry_cnt = l->retry_cnt;
			a->rnr_retry = l->rnr_retry;
			a->max_rd_atomic = l->max_rd_atomic;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		} else if (t == IBV_QPT_XRC_RECV) {
			a->timeout = l->timeout;
			mask |= IBV_QP_TIMEOUT;
		}
		break;
	default:
		break;
	}
	return mask;
}

static const enum ibv_qp_state up_steps[] = {
	IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
};

int sxrc_qp_up(struct ibv_qp *qp, const struct sxrc_link *l)
{
	struct ibv_qp_attr a;
	unsigned int i;
	int ret;

	for (i = 0; i < 3 && up_steps[i] <= l->upto; i++) {
		ret = ibv_modify_qp(qp, &a,
				    sxrc_qp_attr(qp->qp_type, up_steps[i], l, &a));
		if (ret)
			return ret;
	}
	return 0;
}

int sxrc_xrc_rcv_up(struct ibv_xrc_domain *d, uint32_t qpn,
		    const struct sxrc_link *l)
{
	struct ibv_qp_attr a;
	unsigned int i;
	int ret;

	for (i = 0; i < 3 && up_steps[i] <= l->upto; i++) {
		ret = ibv_modify_xrc_rcv_qp(d, qpn, &a,
					    sxrc_qp_attr(IBV_QPT_XRC_RECV,
							 up_steps[i], l, &a));
		if (ret)
			return ret;
	}
	return 0;
}

int sxrc_rc_connect(struct ibv_qp *qp, uint32_t dqpn, unsigned int access)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = dqpn, .access = access,
	};

	return sxrc_qp_up(qp, &l);
}

int sxrc_qp_to(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int sxrc_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

struct ibv_qp *sxrc_create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type, int sig_all,
			      struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.sq_sig_all = sig_all, .cap = *cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp)
		*cap = ia.cap;
	return qp;
}

struct ibv_qp *sxrc_qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
			   enum ibv_qp_type type, uint32_t wr, uint32_t sge)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = wr, .max_recv_wr = wr,
		.max_send_sge = sge, .max_recv_sge = sge,
	};

	return sxrc_create_qp(pd, cq, type, 1, &cap);
}

double sxrc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int sxrc_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	double end = sxrc_now_ms() + ms;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got == n || sxrc_now_ms() > end)
			break;
		if (!r)
			usleep(200);
	}
	return got;
}

int sxrc_poll_wr(struct ibv_cq *cq, uint64_t wr_id, int ms)
{
	double end = sxrc_now_ms() + ms;
	struct ibv_wc wc;
	int left;

	while ((left = (int)(end - sxrc_now_ms())) > 0) {
		if (sxrc_poll_n(cq, &wc, 1, left) != 1)
			break;
		if (wc.wr_id == wr_id)
			return wc.status;
	}
	return -1;
}

int sxrc_get_event(struct ibv_context *ctx, struct ibv_async_event *ev,
		   int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	return ibv_get_async_event(ctx, ev);
}

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)(seed + i * 7 + (i >> 8));
}

void sxrc_fill(void *p, size_t len, unsigned int seed)
{
	unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		c[i] = pattern(i, seed);
}

bool sxrc_filled(const void *p, size_t len, unsigned int seed)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i] != pattern(i, seed))
			return false;
	return true;
}

long sxrc_vmpin_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int sxrc_drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].effective &= ~(1U << CAP_IPC_LOCK);
	data[0].permitted &= ~(1U << CAP_IPC_LOCK);
	data[0].inheritable &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, data);
}

int sxrc_wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int sxrc_read_str(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

long sxrc_read_long(const char *path, int base)
{
	char buf[64];

	if (sxrc_read_str(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	return strtol(buf, NULL, base);
}

int sxrc_write_str(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

uint64_t sxrc_rnd64(struct sxrc_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint32_t sxrc_rnd(struct sxrc_rng *r, uint32_t n)
{
	return n ? (uint32_t)(sxrc_rnd64(r) >> 32) % n : 0;
}

long sxrc_param_read(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), SXRC_PARAMS "%s", name);
	return sxrc_read_long(path, 10);
}

int sxrc_param_write(const char *name, long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), SXRC_PARAMS "%s", name);
	snprintf(buf, sizeof(buf), "%ld", val);
	return sxrc_write_str(path, buf);
}

int sxrc_run(const char *cmd, int secs, size_t max, char **out)
{
	char path[] = "/tmp/sxrc_run.XXXXXX";
	int fd, status, waited = 0;
	pid_t pid;
	ssize_t n;

	fd = mkstemp(path);
	if (fd < 0)
		return -2;
	unlink(path);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -2;
	}
	if (!pid) {
		setpgid(0, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited >= secs * 10) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -1;
			break;
		}
		usleep(100000);
		waited++;
	}
	*out = calloc(1, max);
	if (*out) {
		n = pread(fd, *out, max - 1, 0);
		if (n < 0)
			n = 0;
		(*out)[n] = 0;
	}
	close(fd);
	if (status == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* build/@sub, from build/selftests/<this program>: @dir (PATH_MAX). */
static const char *sxrc_build_path(char *dir, const char *sub)
{
	char exe[PATH_MAX], up[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(up, sizeof(up), "%s/../%s", exe, sub);
	return realpath(up, dir);
}

const char *sxrc_libdir(void)
{
	static char dir[PATH_MAX];

	return sxrc_build_path(dir, "lib") ?: "build/lib";
}

const char *sxrc_tool(void)
{
	static char path[PATH_MAX];

	return sxrc_build_path(path, "bin/softxrc") ?: "build/bin/softxrc";
}

bool sxrc_have(const char *prog)
{
	char path[256];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	snprintf(path, sizeof(path), "/usr/bin/%s", prog);
	return access(path, X_OK) == 0;
}

long long sxrc_num_after(const char *s, const char *pat)
{
	const char *p = strstr(s, pat);

	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

void sxrc_tail(const char *s, int n)
{
	const char *p = s + strlen(s);

	while (p > s && n >= 0)
		if (*--p == '\n')
			n--;
	fprintf(stderr, "%s\n", p);
}

void *sxrc_map(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void sxrc_close_dev(struct ibv_device **list, struct ibv_context *ctx)
{
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
}

int sxrc_node_open(struct sxrc_node *n, struct ibv_device *dev, size_t len)
{
	struct ibv_device **list = NULL;
	int num;

	memset(n, 0, sizeof(*n));
	if (!dev) {
		list = ibv_get_device_list(&num);
		if (!list || !num) {
			if (list)
				ibv_free_device_list(list);
			return -1;
		}
		dev = list[0];
	}
	n->ctx = ibv_open_device(dev);
	if (list)
		ibv_free_device_list(list);
	if (!n->ctx)
		return -1;
	n->pd = ibv_alloc_pd(n->ctx);
	n->cq = ibv_create_cq(n->ctx, 256, NULL, NULL, 0);
	n->len = len;
	n->buf = sxrc_map(len, 0);
	if (!n->pd || !n->cq || !n->buf)
		return -1;
	n->mr = ibv_reg_mr(n->pd, n->buf, len, SXRC_IBV_ACCESS_ALL);
	return n->mr ? 0 : -1;
}

void sxrc_node_close(struct sxrc_node *n)
{
	if (n->ctx)
		ibv_close_device(n->ctx);
	if (n->buf)
		munmap(n->buf, n->len);
	memset(n, 0, sizeof(*n));
}

int sxrc_run_wr(struct ibv_qp *qp, struct ibv_cq *cq,
		struct ibv_send_wr *wr, int ms)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, wr, &bad))
		return -1;
	if (sxrc_poll_n(cq, &wc, 1, ms) != 1)
		return -2;
	return wc.status;
}

int sxrc_rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
	      uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
	      uint32_t len, int ms)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return sxrc_run_wr(qp, cq, &wr, ms);
}

void sxrc_build_recvs(struct ibv_recv_wr *wr, struct ibv_sge *sge, int n,
		      uint64_t id0, uint64_t stride)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ .addr = stride * i, .length = 64 };
		wr[i] = (struct ibv_recv_wr){
			.wr_id = id0 + i,
			.sg_list = &sge[i],
			.num_sge = 1,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	}
}

size_t sxrc_read_all(int fd, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	while (got < size - 1) {
		n = read(fd, buf + got, size - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	return got;
}

pid_t sxrc_fork_ready(int ready[2])
{
	if (pipe(ready))
		return -1;
	return fork();
}

int sxrc_child_ready(int ready[2])
{
	char c;

	close(ready[1]);
	return read(ready[0], &c, 1) == 1 ? 0 : -1;
}

void sxrc_ready_and_wait(int fd, int code)
{
	if (write(fd, "r", 1) != 1)
		_exit(code);
	for (;;)
		pause();
}

bool sxrc_thp_on(void)
{
	char mode[128] = "";
	FILE *f;

	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = '\0';
		fclose(f);
	}
	return strstr(mode, "[always]") || strstr(mode, "[madvise]");
}

int sxrc_sh(const char *fmt, ...)
{
	char cmd[1024];
	int status, ret;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (ret)
		fprintf(stderr, "# %s: exit status %d\n", cmd, ret);
	return ret;
}
