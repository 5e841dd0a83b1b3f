// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the ioctl fuzzer's tracked handles and mapped rings,
 * its data path (WQEs, doorbells, CQ polling) and its odd calls (event
 * reads, random mmaps, bad ioctls and headers).  See sxrc_fuzz_test.c.
 */
#include "sxrc_fuzz.h"

/* ------------------------------------------------------------------ */
/* Handles. */

struct obj *pick_obj(struct fz *t, struct fctx *c, int kind)
{
	if (!c->n[kind])
		return NULL;
	return &c->o[kind][sxrc_rnd(&t->r, c->n[kind])];
}

/*
 * A handle for a @kind argument: mostly a live one, else stale, from the
 * other context, of another class, or junk.
 */
uint32_t pick_handle(struct fz *t, struct fctx *c, int kind)
{
	unsigned int p = sxrc_rnd(&t->r, 100);
	struct fctx *other;
	struct obj *o;

	if (p < 80 && (o = pick_obj(t, c, kind)))
		return o->h;
	if (p < 86 && c->nstale)
		return c->stale[sxrc_rnd(&t->r, c->nstale)];
	if (p < 90) {
		other = &t->c[sxrc_rnd(&t->r, FZ_CTXS)];
		if ((o = pick_obj(t, other, kind)))
			return o->h;
	}
	if (p < 94 && (o = pick_obj(t, c, sxrc_rnd(&t->r, K_NKINDS))))
		return o->h;
	switch (sxrc_rnd(&t->r, 4)) {
	case 0: return 0;
	case 1: return sxrc_rnd(&t->r, 64);
	case 2: return 0xffffffffu;
	default: return (uint32_t)sxrc_rnd64(&t->r);
	}
}

struct obj *track(struct fctx *c, int kind, uint32_t h)
{
	struct obj *o;
	int i;

	for (i = 0; i < c->n[kind]; i++)
		if (c->o[kind][i].h == h)
			return &c->o[kind][i];	/* e.g. REG_QP again */
	if (c->n[kind] == FZ_MAXOBJ)
		return NULL;	/* leaks into the context; freed at close */
	o = &c->o[kind][c->n[kind]++];
	memset(o, 0, sizeof(*o));
	o->h = h;
	return o;
}

void untrack(struct fctx *c, int kind, uint32_t h)
{
	int i;

	for (i = 0; i < c->n[kind]; i++) {
		if (c->o[kind][i].h != h)
			continue;
		c->o[kind][i] = c->o[kind][--c->n[kind]];
		if (c->nstale < FZ_MAXSTALE)
			c->stale[c->nstale++] = h;
		else
			c->stale[h % FZ_MAXSTALE] = h;
		return;
	}
}

/* ------------------------------------------------------------------ */
/* Rings. */

void ring_unmap(struct fz *t, int i)
{
	munmap(t->rings[i].addr, t->rings[i].size);
	t->rings[i] = t->rings[--t->nrings];
}

void ring_map(struct fz *t, int ci, int kind, uint32_t qp,
	      uint64_t off, uint64_t size, uint32_t entries,
	      uint32_t stride, uint32_t max_sge, uint32_t max_inline)
{
	struct ring *r;
	void *p;

	if (!size || size > (1 << 22))
		return;
	if (t->nrings == FZ_MAXRINGS)
		ring_unmap(t, sxrc_rnd(&t->r, t->nrings));
	count_extra(X_MMAP_RING);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 t->c[ci].fd, off);
	if (p == MAP_FAILED) {
		check(t, "mmap ring", -errno, true);
		return;
	}
	r = &t->rings[t->nrings++];
	r->addr = p;
	r->size = size;
	r->entries = entries;
	r->stride = stride;
	r->max_sge = max_sge;
	r->max_inline = max_inline;
	r->kind = kind;
	r->ctx = ci;
	r->gen = t->c[ci].gen;
	r->qp = qp;
}

int ctx_index(struct fz *t, struct fctx *c)
{
	return (int)(c - t->c);
}

/* ------------------------------------------------------------------ */
/* Data path: WQEs in the mapped rings, doorbells, CQ polling. */

static struct ring *pick_ring(struct fz *t, int kind)
{
	int i, j;

	if (!t->nrings)
		return NULL;
	for (j = 0; j < 6; j++) {
		i = sxrc_rnd(&t->r, t->nrings);
		if (kind < 0 || t->rings[i].kind == kind)
			return &t->rings[i];
	}
	return NULL;
}

static bool ring_fits(const struct ring *r)
{
	return r->entries && r->stride &&
	       !(r->entries & (r->entries - 1)) &&
	       SXRC_RING_HDR_SIZE + (uint64_t)r->entries * r->stride <= r->size;
}

void doorbell(struct fz *t, int fd, unsigned long h)
{
	count_extra(X_DOORBELL);
	check(t, "doorbell",
	      ioctl(fd, SXRC_IOCTL_DOORBELL, h) ? -errno : 0, false);
}

/* An SGE over a tracked MR of the ring's context, mostly in bounds. */
void gen_sge(struct fz *t, struct fctx *c, struct sxrc_sge *s)
{
	struct obj *mr = pick_obj(t, c, K_MR);

	if (!mr || pct(&t->r, 5)) {
		s->addr = sxrc_rnd64(&t->r);
		s->length = sxrc_rnd(&t->r, 8192);
		s->lkey = (uint32_t)sxrc_rnd64(&t->r);
		return;
	}
	s->lkey = mr->num;
	s->length = 1 + sxrc_rnd(&t->r, mr->len < 512 ? mr->len : 512);
	s->addr = mr->iova + sxrc_rnd(&t->r, mr->len > s->length ?
				 mr->len - s->length + 1 : 1);
	if (pct(&t->r, 5))
		s->length += sxrc_rnd(&t->r, 1 << 20);
}

static const uint32_t wr_ops[] = {
	SXRC_WR_RDMA_WRITE, SXRC_WR_RDMA_WRITE_WITH_IMM, SXRC_WR_SEND,
	SXRC_WR_SEND_WITH_IMM, SXRC_WR_RDMA_READ, SXRC_WR_ATOMIC_CMP_AND_SWP,
	SXRC_WR_ATOMIC_FETCH_AND_ADD, SXRC_WR_LOCAL_INV,
	SXRC_WR_SEND_WITH_INV, SXRC_WR_BIND_MW,
};

void post_send(struct fz *t)
{
	struct ring *r = pick_ring(t, R_SQ);
	struct fctx *c;
	struct sxrc_ring_hdr *h;
	struct sxrc_send_wqe *w;
	struct obj *o;
	uint32_t prod, n, i, cap;
	int nposts = 1 + sxrc_rnd(&t->r, 4);

	if (!r || !ring_fits(r))
		return;
	c = &t->c[r->ctx];
	if (c->gen != r->gen)
		return;		/* doorbell would go to the wrong context */
	count_extra(X_POST_SEND);
	h = r->addr;
	while (nposts--) {
		prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
		if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
		    r->entries && pct(&t->r, 95))
			break;
		w = (void *)((uint8_t *)r->addr + SXRC_RING_HDR_SIZE +
			     (size_t)(prod & (r->entries - 1)) * r->stride);
		memset(w, 0, r->stride);
		w->wr_id = sxrc_rnd64(&t->r);
		w->opcode = pct(&t->r, 97) ?
			wr_ops[sxrc_rnd(&t->r, sizeof(wr_ops) / sizeof(wr_ops[0]))] :
			sxrc_rnd(&t->r, 64);
		w->send_flags = sxrc_rnd(&t->r, 8);
		w->imm_data = (uint32_t)sxrc_rnd64(&t->r);
		o = pick_obj(t, c, K_MR);
		if (o) {
			w->rkey = pct(&t->r, 90) ? o->num : (uint32_t)sxrc_rnd64(&t->r);
			w->remote_addr = o->iova + (sxrc_rnd(&t->r, o->len) & ~7ULL);
			if (w->opcode == SXRC_WR_LOCAL_INV ||
			    w->opcode == SXRC_WR_SEND_WITH_INV)
				w->imm_data = o->num;
		}
		w->compare_add = sxrc_rnd64(&t->r);
		w->swap = sxrc_rnd64(&t->r);
		if ((o = pick_obj(t, c, K_QP)))
			w->remote_qpn = o->num;
		w->ah_handle = pick_handle(t, c, K_AH);
		w->remote_qkey = pct(&t->r, 80) ? 0x11111111 : sxrc_rnd64(&t->r);
		if ((o = pick_obj(t, c, K_SRQ)))
			w->remote_srqn = o->num;
		if (w->opcode == SXRC_WR_BIND_MW && pct(&t->r, 80)) {
			/* Window key, new key byte, MR lkey, small range. */
			struct obj *mw = pick_obj(t, c, K_MW);
			struct obj *mr = pick_obj(t, c, K_MR);

			if (mw) {
				w->rkey = mw->num;
				w->imm_data = pct(&t->r, 90) ?
					(mw->num & ~0xffu) |
					((mw->num + 1) & 0xff) :
					(uint32_t)sxrc_rnd64(&t->r);
				if (pct(&t->r, 50))
					mw->num = w->imm_data;
			}
			if (mr) {
				w->remote_qpn = mr->num;
				w->remote_addr = mr->iova +
					sxrc_rnd(&t->r, mr->len ? mr->len : 1);
				w->compare_add = sxrc_rnd(&t->r, mr->len + 1);
			}
			w->swap = sxrc_rnd(&t->r, 16);
		}
		cap = (r->stride - sizeof(*w)) / sizeof(struct sxrc_sge);
		if (pct(&t->r, 15) && r->max_inline) {
			w->send_flags |= SXRC_SEND_INLINE;
			w->num_sge = sxrc_rnd(&t->r, r->max_inline + 1);
			if (w->num_sge > r->stride - sizeof(*w))
				w->num_sge = r->stride - sizeof(*w);
			memset(w + 1, 0x5a, w->num_sge);
		} else {
			n = sxrc_rnd(&t->r, (r->max_sge < cap ? r->max_sge : cap) + 1);
			for (i = 0; i < n; i++)
				gen_sge(t, c, (struct sxrc_sge *)(w + 1) + i);
			w->num_sge = pct(&t->r, 97) ? n : sxrc_rnd(&t->r, 64);
		}
		/* A bind carries no list: mostly a well-formed one. */
		if (w->opcode == SXRC_WR_BIND_MW && pct(&t->r, 80)) {
			w->num_sge = 0;
			w->send_flags &= ~SXRC_SEND_INLINE;
		}
		if (pct(&t->r, 2))
			w->reserved = 1;
		__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	}
	doorbell(t, c->fd, r->qp);
}

void post_recv(struct fz *t)
{
	struct ring *r = pick_ring(t, pct(&t->r, 60) ? R_RQ : R_SRQ);
	struct sxrc_ring_hdr *h;
	struct sxrc_recv_wqe *w;
	uint32_t prod, n, i, cap;
	int nposts = 1 + sxrc_rnd(&t->r, 4);

	if (!r || !ring_fits(r))
		return;
	count_extra(X_POST_RECV);
	h = r->addr;
	while (nposts--) {
		prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
		if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
		    r->entries && pct(&t->r, 95))
			break;
		w = (void *)((uint8_t *)r->addr + SXRC_RING_HDR_SIZE +
			     (size_t)(prod & (r->entries - 1)) * r->stride);
		memset(w, 0, r->stride);
		w->wr_id = sxrc_rnd64(&t->r);
		cap = (r->stride - sizeof(*w)) / sizeof(struct sxrc_sge);
		n = 1 + sxrc_rnd(&t->r, r->max_sge < cap ? r->max_sge : cap);
		if (n > cap)
			n = cap;
		for (i = 0; i < n; i++)
			gen_sge(t, &t->c[r->ctx], (struct sxrc_sge *)(w + 1) + i);
		w->num_sge = pct(&t->r, 97) ? n : sxrc_rnd(&t->r, 64);
		if (pct(&t->r, 2))
			w->reserved = 1;
		__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	}
	if (r->kind == R_RQ && t->c[r->ctx].gen == r->gen && pct(&t->r, 30))
		doorbell(t, t->c[r->ctx].fd, r->qp);
}

/* Random bytes or indices in a ring we own, then a doorbell. */
void scribble(struct fz *t)
{
	struct ring *r = pick_ring(t, -1);
	struct sxrc_ring_hdr *h;
	struct fctx *c;
	struct obj *qp;
	size_t off;
	uint32_t i, n;

	if (!r)
		return;
	count_extra(X_SCRIBBLE);
	h = r->addr;
	switch (sxrc_rnd(&t->r, 6)) {
	case 0:
		h->prod = pct(&t->r, 50) ? (uint32_t)sxrc_rnd64(&t->r) :
			h->cons + r->entries + 1 + sxrc_rnd(&t->r, 4);
		break;
	case 1:
		h->cons = pct(&t->r, 50) ? (uint32_t)sxrc_rnd64(&t->r) :
			h->prod - 1 - sxrc_rnd(&t->r, 4);
		break;
	case 2:
		h->flags = (uint32_t)sxrc_rnd64(&t->r);
		h->arm = sxrc_rnd(&t->r, 5);
		break;
	default:	/* WQE/CQE bytes */
		n = 1 + sxrc_rnd(&t->r, 32);
		off = SXRC_RING_HDR_SIZE +
		      sxrc_rnd(&t->r, r->size - SXRC_RING_HDR_SIZE);
		for (i = 0; i < n && off + i < r->size; i++)
			((uint8_t *)r->addr)[off + i] = sxrc_rnd(&t->r, 256);
		if (pct(&t->r, 50))
			h->prod++;
		break;
	}
	c = &t->c[r->ctx];
	if (r->qp && c->gen == r->gen)
		doorbell(t, c->fd, r->qp);
	else if ((qp = pick_obj(t, c, K_QP)))
		doorbell(t, c->fd, qp->h);
}

void cq_poll(struct fz *t)
{
	struct ring *r = pick_ring(t, R_CQ);
	struct sxrc_ring_hdr *h;
	volatile struct sxrc_cqe *e;
	uint32_t prod, cons;
	uint64_t sum = 0;

	if (!r || !ring_fits(r))
		return;
	count_extra(X_CQ_POLL);
	h = r->addr;
	prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
	cons = h->cons;
	if (prod - cons > r->entries)
		cons = prod - r->entries;	/* overrun or scribbled */
	for (; cons != prod; cons++) {
		e = (void *)((uint8_t *)r->addr + SXRC_RING_HDR_SIZE +
			     (size_t)(cons & (r->entries - 1)) * r->stride);
		sum += e->wr_id + e->status;
	}
	(void)sum;
	__atomic_store_n(&h->cons, prod, __ATOMIC_RELEASE);
	if (pct(&t->r, 30))
		__atomic_store_n(&h->arm, 1 + sxrc_rnd(&t->r, 2), __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------ */
/* Event fds, mmap, odd ioctls. */

void read_fd(struct fz *t, int fd, int x, size_t rec)
{
	static const size_t lens[] = { 0, 1, 7, 8, 23, 24, 48, 100, 4096 };
	size_t len = lens[sxrc_rnd(&t->r, 9)];
	void *p = t->out;
	ssize_t n;

	count_extra(x);
	if (pct(&t->r, 8))
		p = pct(&t->r, 50) ? g_none : NULL;
	else if (pct(&t->r, 5))
		p = t->ro;
	if (len > FZ_IOBUF)
		len = FZ_IOBUF;
	n = read(fd, p, len);
	check(t, x == X_EV_READ ? "read(event fd)" : "read(channel)",
	      n < 0 ? -errno : 0, false);
	if (n > 0 && (n % rec || (size_t)n > len)) {
		t->violations++;
		printf("# VIOLATION seed=%llu thread=%d: read returned %zd of %zu (record %zu)\n",
		       (unsigned long long)g_seed, t->id, n, len, rec);
	}
}

void mmap_random(struct fz *t, struct fctx *c)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE, PROT_EXEC,
	};
	size_t size = PAGE * (pct(&t->r, 80) ? 1 + sxrc_rnd(&t->r, 8) :
			      sxrc_rnd(&t->r, 64));
	off_t off;
	void *p;

	count_extra(X_MMAP_RANDOM);
	switch (sxrc_rnd(&t->r, 4)) {
	case 0: off = (off_t)sxrc_rnd(&t->r, 64) * PAGE; break;
	case 1: off = sxrc_rnd(&t->r, 1 << 20); break;	/* unaligned */
	case 2: off = (off_t)((uint64_t)sxrc_rnd(&t->r, 1 << 20) << 32) & ~0xfffLL;
		break;
	default: off = 0; break;
	}
	if (pct(&t->r, 3))
		size = (size_t)1 << (20 + sxrc_rnd(&t->r, 20));
	p = mmap(NULL, size, prots[sxrc_rnd(&t->r, 4)],
		 pct(&t->r, 85) ? MAP_SHARED : MAP_PRIVATE, c->fd, off);
	if (p == MAP_FAILED) {
		check(t, "mmap(random)", -errno, true);
		return;
	}
	check(t, "mmap(random)", 0, true);
	munmap(p, size);	/* a real ring: never written through */
}

void bad_ioctl(struct fz *t, struct fctx *c)
{
	static const unsigned long cmds[] = {
		_IO(SXRC_IOCTL_TYPE, 0x03), _IO(SXRC_IOCTL_TYPE, 0xff),
		_IOWR(SXRC_IOCTL_TYPE, 0x00, struct sxrc_ioctl_hdr),
		_IO(0x00, 0x00), FIONREAD,
		SXRC_IOCTL_IMPORT,	/* with a pointer: EINVAL */
	};
	unsigned long cmd = cmds[sxrc_rnd(&t->r, 6)];
	int ret;

	count_extra(X_BAD_IOCTL);
	ret = ioctl(c->fd, cmd, t->out) ? -errno : 0;
	check(t, "unknown ioctl cmd", ret, false);
	/* The opener imports again: nothing changes. */
	ret = ioctl(c->fd, SXRC_IOCTL_IMPORT, 0UL) ? -errno : 0;
	if (ret) {
		t->violations++;
		printf("# VIOLATION seed=%llu: the opener's import: %d\n",
		       (unsigned long long)g_seed, ret);
	}
}

/* A header that is itself wrong, or a verb that does not exist. */
void bad_hdr(struct fz *t, struct fctx *c)
{
	struct sxrc_ioctl_hdr *hdr = (void *)t->in;
	int ret, x;

	memset(t->in, 0, 128);
	hdr->size = sizeof(*hdr);
	hdr->out_len = 256;
	hdr->out = (uintptr_t)t->out;
	hdr->in_len = 64;
	hdr->in = (uintptr_t)t->in + 256;
	x = sxrc_rnd(&t->r, 6);
	switch (x) {
	case 0:
		hdr->object_id = SXRC_OBJ_MAX + sxrc_rnd(&t->r, 0x10000 - SXRC_OBJ_MAX);
		break;
	case 1:	/* a method past the end of a real object */
		hdr->object_id = sxrc_rnd(&t->r, SXRC_OBJ_MAX);
		hdr->method_id = 7 + sxrc_rnd(&t->r, 0x10000 - 7);
		break;
	case 2:
		hdr->object_id = SXRC_OBJ_CTX;
		hdr->method_id = 1 + sxrc_rnd(&t->r, 8);
		break;
	case 3:	/* a junk tail after the header */
		hdr->size = sizeof(*hdr) + 8;
		t->in[sizeof(*hdr) + sxrc_rnd(&t->r, 8)] = 1;
		break;
	case 4:
		hdr->size = pct(&t->r, 50) ? 0xffffffffu : PAGE + 8;
		break;
	default:	/* the header pointer itself is bad */
		count_extra(X_BAD_HDR);
		ret = ioctl(c->fd, SXRC_IOCTL_INVOKE,
			    pct(&t->r, 50) ? g_none : NULL) ? -errno : 0;
		check(t, "INVOKE with a bad header pointer", ret, false);
		return;
	}
	count_extra(x <= 2 ? X_UNKNOWN : X_BAD_HDR);
	ret = invoke(c->fd, hdr);
	check(t, "bad header / unknown verb", ret, false);
}
