/* SPDX-License-Identifier: Apache-2.0 */
/* Checkpoint codec (encode/decode/checksum/corruption) and recovery decisions. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/claims/checkpoint.h"
#include "agent/claims/recovery.h"

#define UID1 "11111111-0000-4000-8000-000000000001"
#define UID2 "22222222-0000-4000-8000-000000000002"
#define UID3 "33333333-0000-4000-8000-000000000003"
#define BOOT "7c3f2a10-5c8e-4f2e-9d3a-0123456789ab"
#define VENDOR "k8s.gpu.dralet.dev"

static void fill_device(struct ckpt_device *d, const char *name, const char *uid, bool with_undo)
{
	struct dralet_devnode node = { .path = "/dev/nvidia0", .major = 195, .minor = 0 };
	char id[256];

	memset(d, 0, sizeof(*d));
	d->pool = strdup("node-1");
	d->device = strdup(name);
	d->requests = calloc(2, sizeof(char *));
	d->requests[d->n_requests++] = strdup("gpu/big");
	d->requests[d->n_requests++] = strdup("mon");
	d->admin_access = false;
	d->prepared = true;
	d->cdi_class = strdup("gpu");
	snprintf(id, sizeof(id), VENDOR "/gpu=%s-%s", uid, name);
	d->cdi_id = strdup(id);
	d->identity.pci_address = strdup("0000:3b:00.0");
	d->identity.vendor_id = 0x10de;
	d->identity.device_id = 0x2330;
	d->identity.subsystem_vendor_id = 0x10de;
	d->identity.subsystem_device_id = 0x16c1;
	d->identity.uuid = strdup("GPU-1234");
	assert_int_equal(dralet_edits_add_env(&d->edits, "NVIDIA_VISIBLE_DEVICES", "GPU-1234/\"x\""), 0);
	assert_int_equal(dralet_edits_add_node(&d->edits, &node, "rw"), 0);
	assert_int_equal(dralet_edits_add_mount(&d->edits, "/a", "/b", NULL), 0);
	if (with_undo)
		assert_int_equal(dralet_undo_set(&d->undo, "previousDriver", "mlx5_core"), 0);
}

static struct ckpt_claim *make_claim(const char *uid, enum ckpt_state state, size_t n_devices)
{
	struct ckpt_claim *c = calloc(1, sizeof(*c));

	c->uid = strdup(uid);
	c->namespace_ = strdup("ns");
	c->name = strdup("claim");
	c->state = state;
	c->devices = calloc(n_devices + 1, sizeof(*c->devices));
	for (size_t i = 0; i < n_devices; i++) {
		char name[32];
		snprintf(name, sizeof(name), "gpu-%zu", i);
		fill_device(&c->devices[c->n_devices++], name, uid, i == 0);
	}
	if (n_devices > 1) {	/* the second device is a share of a shared device */
		static const struct dralet_capacity consumed[] = { { "memory", "8Gi" },
								   { "shares", "10" } };
		c->devices[1].share_id = strdup("5a5a5a5a-0000-4000-8000-00000000000a");
		assert_int_equal(ckpt_consumed_copy(&c->devices[1].consumed,
						    &c->devices[1].n_consumed, consumed, 2), 0);
	}
	return c;
}

static struct checkpoint *sample(void)
{
	struct checkpoint *ck = checkpoint_new("gpu.dralet.dev", BOOT);

	assert_non_null(ck);
	assert_int_equal(checkpoint_add(ck, make_claim(UID1, CKPT_PREPARE_COMPLETED, 2)), 0);
	assert_int_equal(checkpoint_add(ck, make_claim(UID2, CKPT_PREPARE_STARTED, 1)), 0);
	assert_int_equal(checkpoint_add(ck, make_claim(UID3, CKPT_UNPREPARE_STARTED, 0)), 0);
	return ck;
}

static void test_crc32(void **state)
{
	(void)state;
	assert_int_equal(checkpoint_crc32("123456789", 9), 0xcbf43926u);
	assert_int_equal(checkpoint_crc32("", 0), 0);
}

static void test_roundtrip(void **state)
{
	struct checkpoint *ck = sample(), *back = NULL;
	char *text, *text2, err[256] = "";
	size_t len, len2;

	(void)state;
	assert_int_equal(checkpoint_encode(ck, &text, &len), 0);
	assert_non_null(strstr(text, "\"kind\": \"DraletCheckpoint\""));
	assert_non_null(strstr(text, "\"checksum\": \"crc32:"));
	assert_int_equal(checkpoint_decode(text, len, &back, err, sizeof(err)), 0);
	assert_string_equal(back->driver, "gpu.dralet.dev");
	assert_string_equal(back->boot_id, BOOT);
	assert_int_equal(back->n_claims, 3);
	assert_int_equal(back->claims[0]->state, CKPT_PREPARE_COMPLETED);
	assert_int_equal(back->claims[1]->state, CKPT_PREPARE_STARTED);
	assert_int_equal(back->claims[2]->state, CKPT_UNPREPARE_STARTED);
	assert_int_equal(back->claims[2]->n_devices, 0);
	{
		struct ckpt_device *d = &back->claims[0]->devices[0];
		assert_string_equal(d->device, "gpu-0");
		assert_int_equal(d->n_requests, 2);
		assert_string_equal(d->requests[0], "gpu/big");
		assert_true(d->prepared);
		assert_string_equal(d->cdi_id, VENDOR "/gpu=" UID1 "-gpu-0");
		assert_string_equal(d->identity.pci_address, "0000:3b:00.0");
		assert_int_equal(d->identity.vendor_id, 0x10de);
		assert_int_equal(d->identity.subsystem_device_id, 0x16c1);
		assert_string_equal(d->identity.uuid, "GPU-1234");
		assert_int_equal(d->edits.n_env, 1);
		assert_string_equal(d->edits.env[0], "NVIDIA_VISIBLE_DEVICES=GPU-1234/\"x\"");
		assert_int_equal(d->edits.n_nodes, 1);
		assert_int_equal(d->edits.nodes[0].node.major, 195);
		assert_string_equal(d->edits.nodes[0].permissions, "rw");
		assert_int_equal(d->edits.n_mounts, 1);
		assert_string_equal(d->edits.mounts[0].options, "ro,nosuid,nodev,bind");
		assert_int_equal(d->undo.n, 1);
		assert_string_equal(dralet_undo_get(&d->undo, "previousDriver"), "mlx5_core");
		assert_int_equal(back->claims[0]->devices[1].undo.n, 0);
		assert_null(d->share_id);
		assert_int_equal(d->n_consumed, 0);
		d = &back->claims[0]->devices[1];
		assert_string_equal(d->share_id, "5a5a5a5a-0000-4000-8000-00000000000a");
		assert_int_equal(d->n_consumed, 2);
		assert_string_equal(d->consumed[0].name, "memory");
		assert_string_equal(d->consumed[0].quantity, "8Gi");
		assert_string_equal(d->consumed[1].quantity, "10");
	}
	/* encoding what was decoded gives the same bytes */
	assert_int_equal(checkpoint_encode(back, &text2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(text, text2, len);
	free(text);
	free(text2);
	checkpoint_free(ck);
	checkpoint_free(back);
}

/* An entry is serialized once and written from its cache until
 * ckpt_claim_changed() says it changed; the file holds one entry per line. */
static void test_write_serializes_changed_entries(void **state)
{
	struct checkpoint *ck = sample(), *back = NULL;
	char *text, *again, *line, err[256] = "";
	size_t len, len2;

	(void)state;
	assert_int_equal(checkpoint_encode(ck, &text, &len), 0);
	assert_non_null(ck->claims[1]->written);
	line = strstr(text, "\n    {\"uid\":\"" UID2 "\"");
	assert_non_null(line);
	assert_memory_equal(line + 5, ck->claims[1]->written, strlen(ck->claims[1]->written));
	assert_int_equal(line[5 + strlen(ck->claims[1]->written)], ',');

	/* a change not announced is not written: the cache is what is written */
	ck->claims[1]->state = CKPT_PREPARE_COMPLETED;
	assert_int_equal(checkpoint_encode(ck, &again, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(text, again, len);
	free(again);

	/* announced, it is serialized again, and the checksum covers it */
	ckpt_claim_changed(ck->claims[1]);
	assert_null(ck->claims[1]->written);
	assert_int_equal(checkpoint_add(ck, make_claim("44444444-4444-4444-8444-444444444444",
						       CKPT_PREPARE_STARTED, 1)), 0);
	assert_int_equal(checkpoint_encode(ck, &again, &len2), 0);
	assert_int_equal(checkpoint_decode(again, len2, &back, err, sizeof(err)), 0);
	assert_int_equal(back->n_claims, 4);
	assert_int_equal(back->claims[0]->state, CKPT_PREPARE_COMPLETED);
	assert_int_equal(back->claims[1]->state, CKPT_PREPARE_COMPLETED);
	assert_int_equal(back->claims[2]->state, CKPT_UNPREPARE_STARTED);
	assert_int_equal(back->claims[3]->state, CKPT_PREPARE_STARTED);
	assert_int_equal(back->claims[3]->n_devices, 1);
	free(text);
	free(again);
	checkpoint_free(ck);
	checkpoint_free(back);
}

static int decode_mutated(const char *text, const char *from, const char *to, char *err,
			  size_t errlen)
{
	struct checkpoint *back = NULL;
	char *copy = malloc(strlen(text) + strlen(to) + 1), *at;
	int r;

	at = strstr(text, from);
	assert_non_null(at);
	memcpy(copy, text, (size_t)(at - text));
	strcpy(copy + (at - text), to);
	strcat(copy, at + strlen(from));
	r = checkpoint_decode(copy, strlen(copy), &back, err, errlen);
	assert_true(r < 0 || back);
	checkpoint_free(back);
	free(copy);
	return r;
}

static void test_corruption(void **state)
{
	struct checkpoint *ck = sample(), *back = NULL;
	char *text, err[256];
	size_t len;

	(void)state;
	assert_int_equal(checkpoint_encode(ck, &text, &len), 0);
	/* truncated anywhere */
	for (size_t cut = 0; cut < len - 2; cut += 37) {
		back = NULL;
		assert_int_equal(checkpoint_decode(text, cut, &back, err, sizeof(err)), -EBADMSG);
		assert_null(back);
	}
	/* a changed value fails the checksum */
	assert_int_equal(decode_mutated(text, "gpu-1", "gpu-9", err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "checksum"));
	assert_int_equal(decode_mutated(text, "\"PrepareStarted\"", "\"PrepareCompleted\"", err,
					sizeof(err)), -EBADMSG);
	/* whitespace does not matter */
	assert_int_equal(decode_mutated(text, "\"data\": {", "\"data\":\n\n   {", err, sizeof(err)), 0);
	/* wrong kind, newer version, trailing garbage, not JSON */
	assert_int_equal(decode_mutated(text, CHECKPOINT_KIND, "Other", err, sizeof(err)), -EBADMSG);
	assert_int_equal(decode_mutated(text, "\"version\": 1", "\"version\": 2", err, sizeof(err)),
			 -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "version 2"));
	assert_int_equal(decode_mutated(text, "\"kind\"", "\"kind\"", err, sizeof(err)), 0);
	{
		char *junk;
		assert_true(asprintf(&junk, "%sxyz", text) > 0);
		assert_int_equal(checkpoint_decode(junk, strlen(junk), &back, err, sizeof(err)), -EBADMSG);
		free(junk);
	}
	assert_int_equal(checkpoint_decode("", 0, &back, err, sizeof(err)), -EBADMSG);
	assert_int_equal(checkpoint_decode("[]", 2, &back, err, sizeof(err)), -EBADMSG);
	free(text);
	checkpoint_free(ck);
}

static void test_missing_fields_with_valid_checksum(void **state)
{
	/* a well-formed file whose data lacks a required field is corrupt too */
	static const char *data = "{\"driver\":\"d\",\"bootID\":\"b\",\"claims\":[{\"uid\":\"u\"}]}";
	struct checkpoint *back = NULL;
	char text[512], err[256];

	(void)state;
	snprintf(text, sizeof(text), "{\"kind\":\"" CHECKPOINT_KIND "\",\"version\":1,"
		 "\"checksum\":\"crc32:%08x\",\"data\":%s}", checkpoint_crc32(data, strlen(data)), data);
	assert_int_equal(checkpoint_decode(text, strlen(text), &back, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "claims[0]"));
}

static void test_model_helpers(void **state)
{
	struct checkpoint *ck = sample();
	struct dralet_edits e;
	struct dralet_undo u;

	(void)state;
	assert_non_null(checkpoint_find(ck, UID2));
	assert_null(checkpoint_find(ck, "nope"));
	assert_int_equal(checkpoint_remove(ck, UID2), 0);
	assert_int_equal(checkpoint_remove(ck, UID2), -ENOENT);
	assert_int_equal(ck->n_claims, 2);
	assert_string_equal(ck->claims[1]->uid, UID3);
	assert_int_equal(ckpt_edits_copy(&e, &ck->claims[0]->devices[0].edits), 0);
	assert_int_equal(ckpt_undo_copy(&u, &ck->claims[0]->devices[0].undo), 0);
	assert_string_equal(e.nodes[0].node.path, "/dev/nvidia0");
	assert_string_equal(u.entries[0].value, "mlx5_core");
	edits_clear(&e);
	undo_clear(&u);
	assert_string_equal(ckpt_state_name(CKPT_PREPARE_COMPLETED), "PrepareCompleted");
	checkpoint_free(ck);
	checkpoint_free(NULL);
}

/* ---- recovery ---- */

struct node_now {
	const char *missing;	/* device name that is gone */
	const char *changed_uuid;	/* device name whose uuid differs */
	const char *changed_pci;	/* device name whose device id differs */
};

static bool lookup(void *ud, const char *pool, const char *device, struct ckpt_identity *now)
{
	struct node_now *n = ud;

	(void)pool;
	if (n->missing && !strcmp(device, n->missing))
		return false;
	now->pci_address = "0000:3b:00.0";
	now->vendor_id = 0x10de;
	now->device_id = n->changed_pci && !strcmp(device, n->changed_pci) ? 0x2331 : 0x2330;
	now->subsystem_vendor_id = 0x10de;
	now->subsystem_device_id = 0x16c1;
	now->uuid = n->changed_uuid && !strcmp(device, n->changed_uuid) ? "GPU-9999" : "GPU-1234";
	return true;
}

static struct recovery_plan *plan_for(struct checkpoint *ck, const char *boot, struct node_now *n,
				      char *const *files, size_t n_files)
{
	struct recovery_plan *p = NULL;

	assert_int_equal(recovery_plan_build(ck, boot, lookup, n, VENDOR, files, n_files, &p), 0);
	return p;
}

static void test_recovery_basic(void **state)
{
	struct checkpoint *ck = sample();
	struct node_now n = { 0 };
	char *files[] = {
		VENDOR "-gpu_" UID1 ".json",	/* owned by the kept claim */
		VENDOR "-gpu_" UID2 ".json",	/* the rolled-back claim's: orphan */
		VENDOR "-gpu_44444444-0000-4000-8000-000000000004.json",	/* nobody's */
	};
	struct recovery_plan *p = plan_for(ck, BOOT, &n, files, 3);

	(void)state;
	assert_false(p->boot_changed);
	assert_int_equal(p->n_actions, 5);
	assert_int_equal(p->actions[0].kind, RECOVERY_KEEP);
	assert_int_equal(p->actions[1].kind, RECOVERY_ROLLBACK);
	assert_int_equal(p->actions[2].kind, RECOVERY_FINISH_UNPREPARE);
	assert_int_equal(p->actions[3].kind, RECOVERY_REMOVE_ORPHAN);
	assert_string_equal(p->actions[3].file, files[1]);
	assert_int_equal(p->actions[4].kind, RECOVERY_REMOVE_ORPHAN);
	assert_string_equal(p->actions[4].file, files[2]);
	recovery_plan_free(p);
	checkpoint_free(ck);
}

static void test_recovery_rewrites_missing_spec(void **state)
{
	struct checkpoint *ck = sample();
	struct node_now n = { 0 };
	struct recovery_plan *p = plan_for(ck, BOOT, &n, NULL, 0);

	(void)state;
	assert_int_equal(p->actions[0].kind, RECOVERY_REWRITE_SPEC);
	assert_int_equal(p->n_actions, 3);
	recovery_plan_free(p);
	checkpoint_free(ck);
}

static void test_recovery_boot_change(void **state)
{
	struct checkpoint *ck = sample();
	struct node_now n = { 0 };
	char *files[] = { VENDOR "-gpu_" UID1 ".json" };
	struct recovery_plan *p = plan_for(ck, "another-boot", &n, files, 1);

	(void)state;
	assert_true(p->boot_changed);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(p->actions[i].kind, RECOVERY_DROP_REBOOT);
	assert_int_equal(p->actions[3].kind, RECOVERY_REMOVE_ORPHAN);
	assert_non_null(strstr(p->actions[0].reason, "rebooted"));
	recovery_plan_free(p);
	/* an unknown boot ID now (or then) is no reason to drop anything */
	p = plan_for(ck, "", &n, files, 1);
	assert_false(p->boot_changed);
	assert_int_equal(p->actions[0].kind, RECOVERY_KEEP);
	recovery_plan_free(p);
	checkpoint_free(ck);
}

static void test_recovery_device_changed(void **state)
{
	struct checkpoint *ck = sample();
	char *files[] = { VENDOR "-gpu_" UID1 ".json" };
	struct node_now n = { .changed_uuid = "gpu-1" };
	struct recovery_plan *p = plan_for(ck, BOOT, &n, files, 1);

	(void)state;
	assert_int_equal(p->actions[0].kind, RECOVERY_DROP_CHANGED);
	assert_non_null(strstr(p->actions[0].reason, "GPU-9999"));
	assert_int_equal(p->actions[3].kind, RECOVERY_REMOVE_ORPHAN);	/* its spec goes */
	recovery_plan_free(p);

	n = (struct node_now){ .changed_pci = "gpu-0" };
	p = plan_for(ck, BOOT, &n, files, 1);
	assert_int_equal(p->actions[0].kind, RECOVERY_DROP_CHANGED);
	/* a started claim on a changed device is dropped, not rolled back */
	assert_int_equal(p->actions[1].kind, RECOVERY_DROP_CHANGED);
	recovery_plan_free(p);

	n = (struct node_now){ .missing = "gpu-1" };
	p = plan_for(ck, BOOT, &n, files, 1);
	assert_int_equal(p->actions[0].kind, RECOVERY_DROP_CHANGED);
	assert_non_null(strstr(p->actions[0].reason, "no longer"));
	assert_int_equal(p->actions[1].kind, RECOVERY_ROLLBACK);
	recovery_plan_free(p);
	checkpoint_free(ck);
}

static void test_same_device(void **state)
{
	struct ckpt_identity a = { .pci_address = "0000:01:00.0", .vendor_id = 1, .device_id = 2 };
	struct ckpt_identity b = a;

	(void)state;
	assert_true(recovery_same_device(&a, &b));
	b.uuid = "x";	/* a uuid appearing is fine when none was recorded */
	assert_true(recovery_same_device(&a, &b));
	a.uuid = "y";
	assert_false(recovery_same_device(&a, &b));
	b = a;
	b.pci_address = "0000:02:00.0";
	assert_false(recovery_same_device(&a, &b));
	b = a;
	b.subsystem_vendor_id = 9;
	assert_false(recovery_same_device(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_write_serializes_changed_entries),
		cmocka_unit_test(test_corruption),
		cmocka_unit_test(test_missing_fields_with_valid_checksum),
		cmocka_unit_test(test_model_helpers),
		cmocka_unit_test(test_recovery_basic),
		cmocka_unit_test(test_recovery_rewrites_missing_spec),
		cmocka_unit_test(test_recovery_boot_change),
		cmocka_unit_test(test_recovery_device_changed),
		cmocka_unit_test(test_same_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
