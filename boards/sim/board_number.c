/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The layout pass, part two: class devices. Gives VFs their netdevs and
 * RDMA devices, hands out the numbers the kernel would (ifindex, uverbsN,
 * umadN, cardN/renderDN, NVIDIA minors and MIG capability minors, fpgaN,
 * regionN, dfl ids, block minors), fills defaults (MACs, GUIDs, UUIDs) and
 * checks that names are unique and references resolve.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_model.h"

int board_number(struct board *b, const struct board_diag *d);

uint64_t board_hash(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *s = a ? a : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (const char *s = b ? b : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	/* final avalanche so that near-identical inputs differ in every byte */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

struct named {
	const char *name;
	const struct jpath *at;
};

static int cmp_named(const void *x, const void *y)
{
	return strcmp(((const struct named *)x)->name, ((const struct named *)y)->name);
}

/* Sorts @v and fails on the first name used twice. */
static int unique_names(const struct board_diag *d, struct named *v, size_t n, const char *what)
{
	qsort(v, n, sizeof(*v), cmp_named);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i].name, v[i - 1].name))
			return board_fail(d, v[i].at ? v[i].at : v[i - 1].at, "%s name '%s' is used "
					  "twice", what, v[i].name);
	return 0;
}

/* A small set of used numbers. */
struct numset {
	unsigned char *bits;
	unsigned size;
};

static int numset_init(struct numset *s, unsigned size)
{
	s->size = size;
	s->bits = calloc(size / 8 + 1, 1);
	return s->bits ? 0 : -ENOMEM;
}

static bool numset_has(const struct numset *s, unsigned n)
{
	return n < s->size && (s->bits[n / 8] & (1u << (n % 8)));
}

static void numset_add(struct numset *s, unsigned n)
{
	if (n < s->size)
		s->bits[n / 8] |= (unsigned char)(1u << (n % 8));
}

/* Lowest free number from @from; adds it. -1 when none is left. */
static int numset_take(struct numset *s, unsigned from)
{
	for (unsigned n = from; n < s->size; n++)
		if (!numset_has(s, n)) {
			numset_add(s, n);
			return (int)n;
		}
	return -1;
}

char *board_auto_mac(struct arena *a, const char *board, const char *ifname, int type)
{
	uint64_t h = board_hash(board, ifname);

	if (type == 32)	/* IPoIB: flags/QPN, GID prefix, port GUID */
		return arena_printf(a, "00:00:10:87:fe:80:00:00:00:00:00:00:%02x:%02x:%02x:%02x:"
				    "%02x:%02x:%02x:%02x", (unsigned)(h >> 56) & 0xff,
				    (unsigned)(h >> 48) & 0xff, (unsigned)(h >> 40) & 0xff,
				    (unsigned)(h >> 32) & 0xff, (unsigned)(h >> 24) & 0xff,
				    (unsigned)(h >> 16) & 0xff, (unsigned)(h >> 8) & 0xff,
				    (unsigned)h & 0xff);
	/* locally administered unicast */
	return arena_printf(a, "02:%02x:%02x:%02x:%02x:%02x", (unsigned)(h >> 32) & 0xff,
			    (unsigned)(h >> 24) & 0xff, (unsigned)(h >> 16) & 0xff,
			    (unsigned)(h >> 8) & 0xff, (unsigned)h & 0xff);
}

static char *auto_guid(struct arena *a, const char *board, const char *name)
{
	uint64_t h = board_hash(board, name);

	return arena_printf(a, "%04x:%04x:%04x:%04x", (unsigned)(h >> 48) & 0xffff,
			    (unsigned)(h >> 32) & 0xffff, (unsigned)(h >> 16) & 0xffff,
			    (unsigned)h & 0xffff);
}

static char *auto_uuid(struct arena *a, const char *prefix, const char *seed1, const char *seed2)
{
	uint64_t h1 = board_hash(seed1, seed2), h2 = board_hash(seed2, seed1);

	/* version 4 / variant 1 bits, so the value looks like a real UUID */
	return arena_printf(a, "%s%08x-%04x-4%03x-%04x-%04x%08x", prefix, (unsigned)(h1 >> 32),
			    (unsigned)(h1 >> 16) & 0xffff, (unsigned)h1 & 0xfff,
			    (unsigned)(0x8000 | ((h2 >> 48) & 0x3fff)), (unsigned)(h2 >> 32) & 0xffff,
			    (unsigned)h2);
}

/* "{pf}v{n}" -> "ens1f0v3" */
static char *expand_vf_name(struct arena *a, const char *tmpl, const char *pf, unsigned n)
{
	char out[64];
	size_t len = 0;

	for (const char *p = tmpl; *p && len < sizeof(out) - 1;) {
		if (!strncmp(p, "{pf}", 4)) {
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%s", pf ? pf : "");
			p += 4;
		} else if (!strncmp(p, "{n}", 3)) {
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%u", n);
			p += 3;
		} else {
			out[len++] = *p++;
		}
		if (len >= sizeof(out))
			len = sizeof(out) - 1;
	}
	out[len] = '\0';
	return arena_strdup(a, out);
}

struct board_netdev *board_vf_netdev(struct arena *a, const struct board_func *vf)
{
	const struct board_func *pf = vf->physfn;
	struct board_netdev *n = arena_alloc(a, sizeof(*n));

	if (!n)
		return NULL;
	n->name = expand_vf_name(a, pf->vf_net, pf->net[0].name, (unsigned)vf->vf_index);
	if (!n->name)
		return NULL;
	n->operstate = pf->net[0].operstate;
	n->speed = pf->net[0].speed;
	n->mtu = pf->net[0].mtu;
	n->type = pf->net[0].type;
	n->at = pf->at;
	return n;
}

static const char *rate_for_speed(long mbps)
{
	if (mbps >= 800000)
		return "800 Gb/sec (4X XDR)";
	if (mbps >= 400000)
		return "400 Gb/sec (4X NDR)";
	if (mbps >= 200000)
		return "200 Gb/sec (4X HDR)";
	if (mbps >= 100000)
		return "100 Gb/sec (4X EDR)";
	if (mbps >= 50000)
		return "50 Gb/sec (2X HDR)";
	if (mbps >= 25000)
		return "25 Gb/sec (1X EDR)";
	if (mbps >= 10000)
		return "10 Gb/sec (1X QDR)";
	return "100 Gb/sec (4X EDR)";
}

static int vf_class_devices(struct board *b, const struct board_diag *d)
{
	struct arena *a = b->arena;

	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_func *vf = b->tree[i], *pf = vf->physfn;

		if (!pf || !board_driver_makes_class_devices(vf->driver))
			continue;
		const struct board_vf_setting *set = &pf->vf_settings[vf->vf_index];

		if (pf->vf_net && !set->no_net) {
			struct board_netdev *n;

			if (!pf->n_net)
				return board_fail(d, pf->at, "'vf_net' on %s needs a PF netdev for {pf}",
						  pf->bdf);
			if (!(n = board_vf_netdev(a, vf)))
				return -ENOMEM;
			if (!n->name[0] || strlen(n->name) > 15 || strchr(n->name, '/'))
				return board_fail(d, pf->at, "VF netdev name '%s' from 'vf_net' is not "
						  "1 to 15 characters", n->name);
			vf->net = n;
			vf->n_net = 1;
		}
		if (pf->vf_rdma && !set->no_rdma) {
			const struct board_ibdev *model = pf->n_ib ? &pf->ib[0] : NULL;
			struct board_ibdev *ib = arena_alloc(a, sizeof(*ib));

			if (!ib)
				return -ENOMEM;
			ib->node_type = 1;
			ib->uverbs = -1;
			ib->at = pf->at;
			ib->n_ports = 1;
			ib->ports = arena_alloc(a, sizeof(*ib->ports));
			if (!ib->ports)
				return -ENOMEM;
			ib->ports[0] = (struct board_ibport){ .number = 1, .state = 4, .phys_state = 5 };
			if (model) {
				ib->fw_ver = model->fw_ver;
				ib->hca_type = model->hca_type;
				ib->hw_rev = model->hw_rev;
				ib->board_id = model->board_id;
				ib->ports[0].link_layer = model->ports[0].link_layer;
				ib->ports[0].rate = model->ports[0].rate;
			}
			vf->ib = ib;
			vf->n_ib = 1;
		}
	}
	return 0;
}

/* VF RDMA devices continue the numbering of their prefix (mlx5_8 after
 * mlx5_0..7), in PF order then VF order, like the driver probing them. */
static int name_vf_ibdevs(struct board *b)
{
	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_func *vf = b->tree[i];
		const char *prefix;
		size_t plen;
		long next = 0;

		if (!vf->physfn || !vf->n_ib || vf->ib[0].name)
			continue;
		prefix = vf->physfn->vf_rdma;
		plen = strlen(prefix);
		for (size_t k = 0; k < b->n_funcs; k++)
			for (size_t j = 0; j < b->tree[k]->n_ib; j++) {
				const char *name = b->tree[k]->ib[j].name;

				if (name && !strncmp(name, prefix, plen) &&
				    isdigit((unsigned char)name[plen]) && atol(name + plen) >= next)
					next = atol(name + plen) + 1;
			}
		vf->ib[0].name = arena_printf(b->arena, "%s%ld", prefix, next);
		if (!vf->ib[0].name)
			return -ENOMEM;
	}
	return 0;
}

static struct board_netdev *find_netdev(struct board *b, const char *name)
{
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_net; k++)
			if (!strcmp(b->tree[i]->net[k].name, name))
				return &b->tree[i]->net[k];
	return NULL;
}

static int number_netdevs(struct board *b, const struct board_diag *d)
{
	struct named *names;
	struct numset used;
	size_t n = 0, total = 0;
	int r;

	for (size_t i = 0; i < b->n_funcs; i++)
		total += b->tree[i]->n_net;
	names = calloc(total + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	r = numset_init(&used, 1u << 20);
	if (r < 0) {
		free(names);
		return r;
	}
	numset_add(&used, 0);
	numset_add(&used, 1);	/* lo */
	names[n++] = (struct named){ "lo", NULL };
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_net; k++) {
			struct board_netdev *nd = &b->tree[i]->net[k];

			if (nd->ifindex) {
				if (numset_has(&used, (unsigned)nd->ifindex)) {
					r = board_fail(d, nd->at, "ifindex %d is used twice", nd->ifindex);
					goto out;
				}
				numset_add(&used, (unsigned)nd->ifindex);
			}
			if (n < total + 1)
				names[n++] = (struct named){ nd->name, nd->at };
		}
	r = unique_names(d, names, n, "netdev");
	if (r < 0)
		goto out;
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_net; k++) {
			struct board_netdev *nd = &b->tree[i]->net[k];

			if (!nd->ifindex)
				nd->ifindex = numset_take(&used, 2);
			if (!nd->mac)
				nd->mac = board_auto_mac(b->arena, b->name, nd->name, nd->type);
			if (!nd->mac || nd->ifindex < 0) {
				r = -ENOMEM;
				goto out;
			}
		}
out:
	free(used.bits);
	free(names);
	return r;
}

static int finish_ibdev(struct board *b, const struct board_diag *d, struct board_ibdev *ib,
			const struct board_func *f)
{
	struct arena *a = b->arena;

	if (!ib->node_guid)
		ib->node_guid = auto_guid(a, b->name, ib->name);
	if (!ib->sys_image_guid)
		ib->sys_image_guid = ib->node_guid;
	if (!ib->fw_ver)
		ib->fw_ver = f ? "1.0.0" : "0.0.0";
	if (!ib->node_desc)
		ib->node_desc = arena_printf(a, "%s %s", b->hostname, ib->name);
	if (!ib->node_guid || !ib->node_desc)
		return -ENOMEM;
	for (size_t p = 0; p < ib->n_ports; p++) {
		struct board_ibport *port = &ib->ports[p];
		const struct board_netdev *nd = NULL;

		if (!port->link_layer)
			port->link_layer = f && (f->class_code >> 8) == 0x0207 ? "InfiniBand"
									      : "Ethernet";
		if (port->netdev) {
			if (!find_netdev(b, port->netdev))
				return board_fail(d, ib->at, "RDMA device %s port %u: no netdev named "
						  "'%s'", ib->name, port->number, port->netdev);
		} else if (!strcmp(port->link_layer, "Ethernet")) {
			if (ib->parent_netdev)
				port->netdev = ib->parent_netdev;
			else if (f && f->n_net)
				port->netdev = f->net[p < f->n_net ? p : 0].name;
		}
		if (port->netdev)
			nd = find_netdev(b, port->netdev);
		if (!port->rate)
			port->rate = rate_for_speed(nd ? nd->speed : 0);
	}
	return 0;
}

static int number_ibdevs(struct board *b, const struct board_diag *d)
{
	struct named *names;
	struct numset used;
	size_t n = 0, total = b->n_rxe;
	unsigned umad = 0;
	int r;

	for (size_t i = 0; i < b->n_funcs; i++)
		total += b->tree[i]->n_ib;
	b->any_ib = total > 0;
	names = calloc(total + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	r = numset_init(&used, 1024);
	if (r < 0) {
		free(names);
		return r;
	}
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_ib; k++) {
			struct board_ibdev *ib = &b->tree[i]->ib[k];

			names[n++] = (struct named){ ib->name, ib->at };
			if (ib->uverbs >= 0) {
				if (numset_has(&used, (unsigned)ib->uverbs)) {
					r = board_fail(d, ib->at, "uverbs%d is used twice", ib->uverbs);
					goto out;
				}
				numset_add(&used, (unsigned)ib->uverbs);
			}
		}
	for (size_t i = 0; i < b->n_rxe; i++) {
		names[n++] = (struct named){ b->rxe[i].ib.name, b->rxe[i].ib.at };
		if (b->rxe[i].ib.uverbs >= 0)
			numset_add(&used, (unsigned)b->rxe[i].ib.uverbs);
		if (!find_netdev(b, b->rxe[i].netdev)) {
			r = board_fail(d, b->rxe[i].ib.at, "rxe device %s: no netdev named '%s'",
				       b->rxe[i].ib.name, b->rxe[i].netdev);
			goto out;
		}
	}
	r = unique_names(d, names, n, "RDMA device");
	if (r < 0)
		goto out;
	for (size_t i = 0; i < b->n_funcs; i++)
		for (size_t k = 0; k < b->tree[i]->n_ib; k++) {
			struct board_ibdev *ib = &b->tree[i]->ib[k];

			if (ib->uverbs < 0)
				ib->uverbs = numset_take(&used, 0);
			for (size_t p = 0; p < ib->n_ports; p++)
				ib->ports[p].umad = umad++;
			r = finish_ibdev(b, d, ib, b->tree[i]);
			if (r < 0)
				goto out;
		}
	for (size_t i = 0; i < b->n_rxe; i++) {
		struct board_ibdev *ib = &b->rxe[i].ib;

		if (ib->uverbs < 0)
			ib->uverbs = numset_take(&used, 0);
		for (size_t p = 0; p < ib->n_ports; p++)
			ib->ports[p].umad = umad++;
		r = finish_ibdev(b, d, ib, NULL);
		if (r < 0)
			goto out;
	}
out:
	free(used.bits);
	free(names);
	return r;
}

static int number_drm(struct board *b, const struct board_diag *d)
{
	struct numset cards, renders;
	int r = numset_init(&cards, 128);

	if (r < 0)
		return r;
	r = numset_init(&renders, 256);
	if (r < 0) {
		free(cards.bits);
		return r;
	}
	for (size_t i = 0; i < b->n_funcs && r == 0; i++) {
		struct board_func *f = b->funcs[i];

		if (f->drm.card >= 0) {
			if (numset_has(&cards, (unsigned)f->drm.card))
				r = board_fail(d, f->at, "card%d is used twice", f->drm.card);
			numset_add(&cards, (unsigned)f->drm.card);
		}
		if (f->drm.render >= 0) {
			if (numset_has(&renders, (unsigned)f->drm.render))
				r = board_fail(d, f->at, "renderD%d is used twice", f->drm.render);
			numset_add(&renders, (unsigned)f->drm.render);
		}
	}
	for (size_t i = 0; i < b->n_funcs && r == 0; i++) {
		struct board_func *f = b->funcs[i];

		if (f->drm.card == -2)
			f->drm.card = numset_take(&cards, 0);
		/* render minors are allocated on their own (drm_minor_alloc),
		 * so a card without one does not leave a hole */
		if (f->drm.render == -2)
			f->drm.render = numset_take(&renders, 128);
		if (f->drm.card < -1 || f->drm.render < -1)
			r = board_fail(d, f->at, "out of DRM minors");
	}
	free(cards.bits);
	free(renders.bits);
	return r;
}

static int number_mig(struct board *b, const struct board_diag *d, struct board_func *f)
{
	struct board_nvidia *nv = f->nvidia;
	struct numset gis;
	int r = numset_init(&gis, 16);

	if (r < 0)
		return r;
	for (size_t i = 0; i < nv->n_mig; i++)
		if (nv->mig[i].gi >= 0)
			numset_add(&gis, (unsigned)nv->mig[i].gi);
	for (size_t i = 0; i < nv->n_mig && r == 0; i++) {
		struct board_mig *m = &nv->mig[i];

		if (m->gi < 0) {
			m->gi = numset_take(&gis, 1);
			if (m->gi < 0)
				r = board_fail(d, m->at, "more than 15 GPU instances on %s", f->bdf);
		}
	}
	for (size_t i = 0; i < nv->n_mig && r == 0; i++) {
		struct board_mig *m = &nv->mig[i];

		for (size_t k = 0; k < i && r == 0; k++) {
			struct board_mig *o = &nv->mig[k];

			if (o->gi == m->gi) {
				if (o->ci == m->ci)
					r = board_fail(d, m->at, "MIG gi %d ci %d is listed twice", m->gi,
						       m->ci);
				else if (o->placement_start != m->placement_start ||
					 strcmp(o->profile, m->profile))
					r = board_fail(d, m->at, "compute instances of gi %d must share "
						       "its profile and placement", m->gi);
			} else if (m->placement_start < o->placement_start + o->placement_size &&
				   o->placement_start < m->placement_start + m->placement_size) {
				r = board_fail(d, m->at, "MIG placement %d+%d overlaps gi %d (%d+%d)",
					       m->placement_start, m->placement_size, o->gi,
					       o->placement_start, o->placement_size);
			}
		}
		/* nvidia-caps numbering: config 1, monitor 2, then per GPU
		 * minor 15 GIs x (1 + 8 CIs) */
		m->gi_minor = 3u + (unsigned)nv->minor * 135u + (unsigned)m->gi * 9u;
		m->ci_minor = m->gi_minor + 1u + (unsigned)m->ci;
		if (!m->uuid) {
			char seed[32];

			snprintf(seed, sizeof(seed), "gi%d/ci%d", m->gi, m->ci);
			m->uuid = auto_uuid(b->arena, "MIG-", nv->uuid, seed);
			if (!m->uuid)
				r = -ENOMEM;
		}
	}
	free(gis.bits);
	return r;
}

static int number_nvidia(struct board *b, const struct board_diag *d)
{
	struct numset minors;
	size_t n = 0;
	int index = 0, r;

	for (size_t i = 0; i < b->n_funcs; i++)
		n += b->funcs[i]->nvidia != NULL;
	b->n_gpus = n;
	b->gpus = arena_alloc(b->arena, (n + 1) * sizeof(*b->gpus));
	if (!b->gpus)
		return -ENOMEM;
	r = numset_init(&minors, 256);
	if (r < 0)
		return r;
	n = 0;
	for (size_t i = 0; i < b->n_funcs && r == 0; i++) {
		struct board_func *f = b->funcs[i];

		if (!f->nvidia)
			continue;
		if (f->vendor != 0x10de)
			r = board_fail(d, f->nvidia->at, "'nvidia' on %s, whose vendor is %04x, not 10de",
				       f->bdf, f->vendor);
		else if (f->nvidia->minor >= 0 && numset_has(&minors, (unsigned)f->nvidia->minor))
			r = board_fail(d, f->nvidia->at, "NVIDIA minor %d is used twice",
				       f->nvidia->minor);
		if (f->nvidia->minor >= 0)
			numset_add(&minors, (unsigned)f->nvidia->minor);
		b->gpus[n++] = f;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct board_func *f = b->gpus[i];
		struct board_nvidia *nv = f->nvidia;

		if (nv->minor < 0)
			nv->minor = numset_take(&minors, 0);
		if (nv->irq < 0)
			nv->irq = f->irq;
		nv->nvml_index = nv->excluded ? -1 : index++;
		if (!nv->uuid)
			nv->uuid = auto_uuid(b->arena, "GPU-", b->name, f->bdf);
		if (!nv->uuid)
			r = -ENOMEM;
		else
			r = number_mig(b, d, f);
	}
	free(minors.bits);
	return r;
}

static int name_fpga(struct board *b, const struct board_diag *d)
{
	struct numset mgrs, regions, bridges, fmes, ports;
	struct arena *a = b->arena;
	int r;

	if ((r = numset_init(&mgrs, 4096)) < 0)
		return r;
	if ((r = numset_init(&regions, 4096)) < 0 || (r = numset_init(&bridges, 4096)) < 0 ||
	    (r = numset_init(&fmes, 1024)) < 0 || (r = numset_init(&ports, 1024)) < 0)
		goto out;
	/* names given in the board first (a platform device's are always given) */
	for (size_t i = 0; i < b->n_platform; i++) {
		for (size_t k = 0; k < b->platform[i].n_fpga_mgr; k++)
			if (!strncmp(b->platform[i].fpga_mgr[k].name, "fpga", 4))
				numset_add(&mgrs, (unsigned)atoi(b->platform[i].fpga_mgr[k].name + 4));
		for (size_t k = 0; k < b->platform[i].n_fpga_region; k++)
			if (!strncmp(b->platform[i].fpga_region[k].name, "region", 6))
				numset_add(&regions,
					   (unsigned)atoi(b->platform[i].fpga_region[k].name + 6));
	}
	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_func *f = b->tree[i];

		for (size_t k = 0; k < f->n_fpga_mgr; k++)
			if (f->fpga_mgr[k].name && !strncmp(f->fpga_mgr[k].name, "fpga", 4))
				numset_add(&mgrs, (unsigned)atoi(f->fpga_mgr[k].name + 4));
		for (size_t k = 0; k < f->n_fpga_region; k++)
			if (f->fpga_region[k].name && !strncmp(f->fpga_region[k].name, "region", 6))
				numset_add(&regions, (unsigned)atoi(f->fpga_region[k].name + 6));
		if (f->dfl && f->dfl->fme_id >= 0)
			numset_add(&fmes, (unsigned)f->dfl->fme_id);
		for (size_t k = 0; f->dfl && k < f->dfl->n_ports; k++)
			if (f->dfl->ports[k].id >= 0)
				numset_add(&ports, (unsigned)f->dfl->ports[k].id);
	}
	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_func *f = b->tree[i];
		struct board_dfl *dfl = f->dfl;

		if (dfl) {
			if (dfl->fme_id < 0)
				dfl->fme_id = numset_take(&fmes, 0);
			dfl->fme_minor = (unsigned)dfl->fme_id;
			dfl->base_region = arena_printf(a, "region%d", numset_take(&regions, 0));
			dfl->pr_region = arena_printf(a, "region%d", numset_take(&regions, 0));
			dfl->mgr_name = arena_printf(a, "fpga%d", numset_take(&mgrs, 0));
			dfl->bridge_name = arena_printf(a, "br%d", numset_take(&bridges, 0));
			for (size_t k = 0; k < dfl->n_ports; k++) {
				if (dfl->ports[k].id < 0)
					dfl->ports[k].id = numset_take(&ports, 0);
				dfl->ports[k].minor = (unsigned)dfl->ports[k].id;
			}
			if (!dfl->base_region || !dfl->pr_region || !dfl->mgr_name ||
			    !dfl->bridge_name) {
				r = -ENOMEM;
				goto out;
			}
		}
		for (size_t k = 0; k < f->n_fpga_mgr; k++) {
			struct board_fpga_mgr *m = &f->fpga_mgr[k];

			if (!m->name)
				m->name = arena_printf(a, "fpga%d", numset_take(&mgrs, 0));
			if (!m->driver_name)
				m->driver_name = f->driver ? f->driver : "fpga-manager";
			if (!m->name) {
				r = -ENOMEM;
				goto out;
			}
		}
		for (size_t k = 0; k < f->n_fpga_region; k++)
			if (!f->fpga_region[k].name &&
			    !(f->fpga_region[k].name = arena_printf(a, "region%d",
								    numset_take(&regions, 0)))) {
				r = -ENOMEM;
				goto out;
			}
	}
	/* the class directories hold every name once */
	{
		size_t total = 0, n = 0;
		struct named *names;

		for (size_t i = 0; i < b->n_funcs; i++)
			total += b->tree[i]->n_fpga_mgr + b->tree[i]->n_fpga_region + 2;
		for (size_t i = 0; i < b->n_platform; i++)
			total += b->platform[i].n_fpga_mgr + b->platform[i].n_fpga_region;
		names = calloc(total + 1, sizeof(*names));
		if (!names) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < b->n_funcs; i++) {
			struct board_func *f = b->tree[i];

			for (size_t k = 0; k < f->n_fpga_mgr; k++)
				names[n++] = (struct named){ f->fpga_mgr[k].name, f->at };
			for (size_t k = 0; k < f->n_fpga_region; k++)
				names[n++] = (struct named){ f->fpga_region[k].name, f->at };
			if (f->dfl) {
				names[n++] = (struct named){ f->dfl->mgr_name, f->at };
				names[n++] = (struct named){ f->dfl->base_region, f->at };
			}
		}
		for (size_t i = 0; i < b->n_platform; i++) {
			const struct board_platform *p = &b->platform[i];

			for (size_t k = 0; k < p->n_fpga_mgr; k++)
				names[n++] = (struct named){ p->fpga_mgr[k].name, p->at };
			for (size_t k = 0; k < p->n_fpga_region; k++)
				names[n++] = (struct named){ p->fpga_region[k].name, p->at };
		}
		r = unique_names(d, names, n, "fpga manager/region");
		free(names);
	}
out:
	free(mgrs.bits);
	free(regions.bits);
	free(bridges.bits);
	free(fmes.bits);
	free(ports.bits);
	return r;
}

static int number_blocks(struct board *b, const struct board_diag *d)
{
	struct named *names = NULL;
	struct numset ctrls;
	size_t n = 0, total = 0;
	unsigned minor = 0;
	int r = numset_init(&ctrls, 1024);

	if (r < 0)
		return r;
	for (size_t i = 0; i < b->n_funcs; i++)
		if (b->tree[i]->nvme)
			for (size_t k = 0; k < b->tree[i]->nvme->n_ns; k++)
				total += 1 + b->tree[i]->nvme->ns[k].n_parts;
	names = calloc(total + 1, sizeof(*names));
	if (!names) {
		free(ctrls.bits);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->n_funcs && r == 0; i++) {
		struct board_func *f = b->tree[i];
		struct board_nvme *nv = f->nvme;

		if (!nv)
			continue;
		b->any_nvme = true;
		if (numset_has(&ctrls, nv->instance)) {
			r = board_fail(d, f->at, "NVMe controller %s is used twice", nv->controller);
			break;
		}
		numset_add(&ctrls, nv->instance);
		if (!nv->serial)
			nv->serial = arena_printf(b->arena, "S6EUNA0T%06u",
						  (unsigned)(board_hash(b->name, f->bdf) % 1000000));
		for (size_t k = 0; k < nv->n_ns && r == 0; k++) {
			struct board_nvme_ns *ns = &nv->ns[k];
			uint64_t sector = 2048, sectors = ns->disk.size / 512;

			ns->disk.major = 259;
			ns->disk.minor = minor++;
			names[n++] = (struct named){ ns->disk.name, f->at };
			for (size_t p = 0; p < ns->n_parts; p++) {
				struct board_block *part = &ns->parts[p];

				part->major = 259;
				part->minor = minor++;
				part->start = sector;
				sector += part->size / 512;
				names[n++] = (struct named){ part->name, f->at };
				if (sector > sectors) {
					r = board_fail(d, f->at, "partitions of %s do not fit its size",
						       ns->disk.name);
					break;
				}
			}
		}
	}
	if (r == 0)
		r = unique_names(d, names, n, "block device");
	free(names);
	free(ctrls.bits);
	return r;
}

static const struct board_block *find_block(struct board *b, const char *name)
{
	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_nvme *nv = b->tree[i]->nvme;

		for (size_t k = 0; nv && k < nv->n_ns; k++) {
			if (!strcmp(nv->ns[k].disk.name, name))
				return &nv->ns[k].disk;
			for (size_t p = 0; p < nv->ns[k].n_parts; p++)
				if (!strcmp(nv->ns[k].parts[p].name, name))
					return &nv->ns[k].parts[p];
		}
	}
	return NULL;
}

static int number_chardevs(struct board *b, const struct board_diag *d)
{
	/* dynamic majors go downward from 501 (511..502 are taken, see
	 * board_write.h), one per class; minors count up per class */
	struct { const char *cls; int major; int next_minor; } classes[64];
	size_t n = 0;
	int next_major = 501;

	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_func *f = b->tree[i];

		for (size_t k = 0; k < f->n_chardev; k++) {
			struct board_chardev *cd = &f->chardev[k];
			size_t c;

			for (c = 0; c < n; c++)
				if (!strcmp(classes[c].cls, cd->class_name))
					break;
			if (c == n) {
				if (n == sizeof(classes) / sizeof(classes[0]))
					return board_fail(d, f->at, "too many char device classes");
				classes[n].cls = cd->class_name;
				classes[n].major = cd->major >= 0 ? cd->major : next_major--;
				classes[n].next_minor = 0;
				n++;
			}
			if (cd->major < 0) {
				cd->major = classes[c].major;
				cd->minor = classes[c].next_minor++;
			}
		}
	}
	return 0;
}

int board_number(struct board *b, const struct board_diag *d)
{
	int r;

	if ((r = vf_class_devices(b, d)) < 0 || (r = name_vf_ibdevs(b)) < 0 ||
	    (r = number_netdevs(b, d)) < 0 || (r = number_ibdevs(b, d)) < 0 ||
	    (r = number_drm(b, d)) < 0 || (r = number_nvidia(b, d)) < 0 ||
	    (r = name_fpga(b, d)) < 0 || (r = number_blocks(b, d)) < 0 ||
	    (r = number_chardevs(b, d)) < 0)
		return r;

	for (size_t i = 0; i < b->n_mounts; i++) {
		b->mounts[i].block = find_block(b, b->mounts[i].source);
		if (!b->mounts[i].block)
			return board_fail(d, b->mounts[i].at, "mount source '%s' is not a block device "
					  "of this board", b->mounts[i].source);
	}
	if (b->default_dev && !find_netdev(b, b->default_dev))
		return board_fail(d, b->default_at, "default_route: no netdev named '%s'",
				  b->default_dev);
	if (b->default6_dev && !find_netdev(b, b->default6_dev))
		return board_fail(d, b->default6_at, "default_route6: no netdev named '%s'",
				  b->default6_dev);
	for (size_t i = 0; i < b->n_funcs; i++) {
		struct board_func *f = b->tree[i];

		if (f->driver && !strcmp(f->driver, "vfio-pci")) {
			b->any_vfio = true;
			if (!b->iommu)
				return board_fail(d, f->at, "%s is bound to vfio-pci but the board has "
						  "no IOMMU", f->bdf);
		}
		if (f->kfd) {
			b->any_kfd = true;
			if (!f->kfd->gpu_id)
				f->kfd->gpu_id = (unsigned)(board_hash(b->name, f->bdf) % 65535) + 1;
		}
	}
	if (!b->boot_id) {
		b->boot_id = auto_uuid(b->arena, "", b->name, "boot_id");
		if (!b->boot_id)
			return -ENOMEM;
	}
	return 0;
}
