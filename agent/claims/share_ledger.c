/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/share_ledger.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/sharing.h>

#include "agent/lib/err_msg.h"

static void holder_clear(struct share_holder *h)
{
	free(h->uid);
	free(h->desc);
	free(h->share_id);
	for (size_t i = 0; i < h->n_consumed; i++) {
		free((char *)h->consumed[i].name);
		free((char *)h->consumed[i].quantity);
	}
	free(h->consumed);
	memset(h, 0, sizeof(*h));
}

void share_ledger_clear(struct share_ledger *l)
{
	for (size_t i = 0; i < l->n; i++)
		holder_clear(&l->holders[i]);
	free(l->holders);
	l->holders = NULL;
	l->n = 0;
}

void share_ledger_release(struct share_ledger *l, const char *uid)
{
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->holders[i].uid, uid))
			holder_clear(&l->holders[i]);
		else
			l->holders[kept++] = l->holders[i];
	}
	l->n = kept;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* @name without the device driver's domain ("gpu.dralet.dev/memory" -> "memory"). */
static const char *short_name(const struct dralet_device *dev, const char *name)
{
	const char *driver = dralet_device_driver(dev);
	size_t n = driver ? strlen(driver) : 0;

	return n && !strncmp(name, driver, n) && name[n] == '/' ? name + n + 1 : name;
}

/* The device's capacity named @name (with or without the driver's domain). */
static const struct dralet_capacity *capacity_of(const struct dralet_device *dev,
						 const char *name)
{
	const char *want = short_name(dev, name);

	for (size_t i = 0; i < dralet_device_n_capacities(dev); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(dev, i);
		if (!strcmp(short_name(dev, c->name), want))
			return c;
	}
	return NULL;
}

/* What holder @h consumes of @dev's capacity @cap (0 when it names none). */
static int64_t holder_consumes(const struct dralet_device *dev, const struct share_holder *h,
			       const struct dralet_capacity *cap)
{
	int64_t v = 0;

	for (size_t i = 0; i < h->n_consumed; i++)
		if (capacity_of(dev, h->consumed[i].name) == cap &&
		    dralet_quantity_value(h->consumed[i].quantity, &v) == 0)
			return v;
	return 0;
}

static int check_capacity(const struct share_ledger *l, const struct dralet_device *dev,
			  const char *uid, const char *share_id, const struct dralet_capacity *want,
			  char *err, size_t errlen)
{
	const struct dralet_capacity *cap = capacity_of(dev, want->name);
	int64_t have, total, others = 0;
	size_t n_others = 0;

	if (!cap)
		return err_printf(err, errlen, -EINVAL, "device %s: the allocation consumes "
				  "capacity %s, which the device does not have",
				  dralet_device_name(dev), want->name);
	if (dralet_quantity_value(want->quantity, &total) < 0 || total < 0)
		return err_printf(err, errlen, -EINVAL, "device %s: consumed capacity %s=%s is "
				  "no quantity", dralet_device_name(dev), want->name,
				  want->quantity);
	if (dralet_quantity_value(cap->quantity, &have) < 0)
		return err_printf(err, errlen, -EINVAL, "device %s: its capacity %s=%s is no "
				  "quantity", dralet_device_name(dev), cap->name, cap->quantity);
	for (size_t i = 0; i < l->n; i++) {
		const struct share_holder *h = &l->holders[i];
		int64_t v;
		if (!strcmp(h->uid, uid) && same(h->share_id, share_id))
			continue;
		if ((v = holder_consumes(dev, h, cap)) > 0) {
			others += v;
			n_others++;
		}
	}
	if (total > have - others)
		return err_printf(err, errlen, -ENOSPC, "device %s: share %s consumes %s of "
				  "capacity %s, but only %" PRId64 " of its %s are left (%zu other "
				  "share(s) hold %" PRId64 "); the allocation overcommits the device",
				  dralet_device_name(dev), share_id, want->quantity, cap->name,
				  have - others, cap->quantity, n_others, others);
	return 0;
}

int share_ledger_check(const struct share_ledger *l, const struct dralet_device *dev,
		       const char *uid, const char *share_id,
		       const struct dralet_capacity *consumed, size_t n, char *err, size_t errlen)
{
	int r;

	for (size_t i = 0; i < l->n; i++) {
		const struct share_holder *h = &l->holders[i];
		if (!strcmp(h->uid, uid))
			continue;
		if (!share_id || !h->share_id)
			return err_printf(err, errlen, -EBUSY, "device %s is in use by another "
					  "claim, %s (uid %s)%s", dralet_device_name(dev), h->desc,
					  h->uid, h->share_id ? ", which holds a share of it" : "");
	}
	if (!share_id)
		return 0;
	if (!dralet_device_allows_multiple(dev))
		return err_printf(err, errlen, -EINVAL, "device %s: the allocation gives it as "
				  "share %s, but the device does not allow multiple allocations "
				  "(its sharing is off)", dralet_device_name(dev), share_id);
	for (size_t i = 0; i < n; i++)
		if ((r = check_capacity(l, dev, uid, share_id, &consumed[i], err, errlen)) < 0)
			return r;
	return 0;
}

int share_ledger_add(struct share_ledger *l, const char *uid, const char *desc,
		     const char *share_id, const struct dralet_capacity *consumed, size_t n)
{
	struct share_holder h = { 0 }, *grown;
	bool fail;

	h.uid = strdup(uid);
	h.desc = strdup(desc ? desc : "");
	h.share_id = share_id ? strdup(share_id) : NULL;
	h.consumed = n ? calloc(n, sizeof(*h.consumed)) : NULL;
	fail = !h.uid || !h.desc || (share_id && !h.share_id) || (n && !h.consumed);
	for (size_t i = 0; !fail && i < n; i++) {
		h.consumed[i].name = strdup(consumed[i].name);
		h.consumed[i].quantity = strdup(consumed[i].quantity);
		h.n_consumed++;
		fail = !h.consumed[i].name || !h.consumed[i].quantity;
	}
	if (fail) {
		holder_clear(&h);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->holders[i].uid, uid) && same(l->holders[i].share_id, share_id)) {
			holder_clear(&l->holders[i]);
			l->holders[i] = h;
			return 0;
		}
	if (!(grown = realloc(l->holders, (l->n + 1) * sizeof(*grown)))) {
		holder_clear(&h);
		return -ENOMEM;
	}
	l->holders = grown;
	l->holders[l->n++] = h;
	return 0;
}
