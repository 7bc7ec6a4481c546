/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet sriov status | apply: the SR-IOV PFs of the node against the
 * policies of the configuration (docs/sriov.md). `status` only reads;
 * `apply` carries the policies out once, for nodes where the daemon does not
 * run yet (the daemon applies them itself, at start, on SIGHUP, when the
 * configuration file changes and when a PF appears).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/claims_lock.h"
#include "agent/cli/commands.h"
#include "agent/core/config.h"
#include "agent/core/inventory.h"
#include "agent/kubelet/registration.h"
#include "agent/lib/log.h"
#include "agent/cli/setup.h"
#include "agent/sriov/apply.h"
#include "agent/sriov/prepared.h"
#include "agent/sriov/status.h"
#include "hal/hal.h"
#include "hal/node_ops.h"

enum { OPT_OUTPUT = OPT_FIRST_COMMAND_OPTION, OPT_PLUGINS_DIR, OPT_DRY_RUN, OPT_HELP };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dralet sriov status [--config FILE] [--plugins-dir D] [-o text|json]\n"
		"       dralet sriov apply  [--config FILE] [--plugins-dir D] [--dry-run] [-o text|json]\n\n"
		"status  every SR-IOV PF: the policy that manages it, wanted and actual VF counts,\n"
		"        what the policy would change now (or why it may not), each VF's driver\n"
		"        and the claim it is prepared for\n"
		"apply   carry the policies of the configuration's 'sriov' section out once\n"
		"        (the daemon does this itself; use apply where it does not run yet);\n"
		"        exits 1 when a PF was refused or failed\n\n"
		"  --plugins-dir D       where the claims checkpoints are (D/<driver>/checkpoint.json;\n"
		"                        default %s)\n"
		"  --dry-run             apply: report what would change, change nothing\n"
		"  -o, --output FORMAT   text (default) or json\n"
		SETUP_OPTIONS_HELP, KUBELET_DEFAULT_PLUGINS_DIR);
}

static void print_json(struct json_object *j)
{
	printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_SPACED |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
}

static struct json_object *report_json(const struct sriov_report *rep)
{
	struct json_object *root = json_object_new_object(), *pfs = json_object_new_array();

	for (size_t i = 0; i < rep->n; i++) {
		const struct sriov_pf_report *p = &rep->pfs[i];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "pf", json_object_new_string(p->pf));
		json_object_object_add(o, "policy", json_object_new_string(p->policy));
		json_object_object_add(o, "outcome",
				       json_object_new_string(sriov_pf_outcome_name(p->outcome)));
		json_object_object_add(o, "wantedVfs", json_object_new_int64(p->wanted));
		json_object_object_add(o, "vfsBefore", json_object_new_int64(p->before));
		json_object_object_add(o, "vfsAfter", json_object_new_int64(p->after));
		json_object_object_add(o, "vfsRebound", json_object_new_int64(p->vfs_rebound));
		json_object_object_add(o, "vfSettingsChanged", json_object_new_int64(p->vfs_set));
		if (p->message[0])
			json_object_object_add(o, "message", json_object_new_string(p->message));
		json_object_array_add(pfs, o);
	}
	json_object_object_add(root, "pfs", pfs);
	return root;
}

static void print_report(const struct sriov_report *rep, bool dry_run)
{
	if (!rep->n)
		printf("no SR-IOV PF is selected by a policy\n");
	for (size_t i = 0; i < rep->n; i++) {
		const struct sriov_pf_report *p = &rep->pfs[i];
		printf("PF %s (policy %s): %s%s, VFs %u -> %u (wanted %u), %u rebound, %u with new "
		       "settings\n", p->pf, p->policy, dry_run ? "would be " : "",
		       sriov_pf_outcome_name(p->outcome), p->before, p->after, p->wanted,
		       p->vfs_rebound, p->vfs_set);
		if (p->message[0])
			printf("  %s\n", p->message);
		if (p->also)
			printf("  note: policy %s selects it too and is ignored\n", p->also);
	}
}

/* The claims checkpoints of this node's DRA drivers (other plugins keep
 * files of their own in the plugins directory). */
/* With @ret_locks, read under the drivers' claims locks, which stay held
 * (waiting for a running dralet's operation): an apply then races no
 * prepare and no other apply. */
static int prepared_of_our_drivers(const struct setup *s, const char *plugins_dir,
				   struct sriov_prepared *prep, struct claims_lock ***ret_locks,
				   size_t *ret_n_locks, char *err, size_t errlen)
{
	struct inventory *inv;
	const char **names;
	size_t n;
	int r = inventory_discover(&s->roots, s->cfg, s->reg, &inv);

	if (r < 0)
		return r;
	n = inventory_n_drivers(inv);
	names = calloc(n + 1, sizeof(*names));
	if (!names) {
		inventory_free(inv);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		names[i] = inventory_driver(inv, i);
	if (ret_locks && (r = sriov_prepared_lock_drivers(plugins_dir, names, n, true, ret_locks,
							  prep, err, errlen)) == 0)
		*ret_n_locks = n;
	else if (!ret_locks)
		r = sriov_prepared_load_drivers(plugins_dir, names, n, prep, err, errlen);
	free(names);
	inventory_free(inv);
	return r;
}

int cmd_sriov(int argc, char **argv)
{
	static const struct option options[] = {
		SETUP_LONG_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "plugins-dir", required_argument, NULL, OPT_PLUGINS_DIR },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct setup_options so = { 0 };
	const char *output = "text", *plugins_dir = KUBELET_DEFAULT_PLUGINS_DIR, *verb;
	struct hal_scan_options scan_opts = { .no_names = true };
	struct sriov_prepared prep = { 0 };
	struct hal_scan *scan = NULL;
	struct claims_lock **locks = NULL;
	size_t n_locks = 0;
	bool dry_run = false, apply;
	char err[640];
	struct setup s;
	int opt, r, status = 0;

	if (argc < 2 || argv[1][0] == '-') {
		bool help = argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
		usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	verb = argv[1];
	if (strcmp(verb, "status") && strcmp(verb, "apply")) {
		fprintf(stderr, "dralet sriov: unknown command '%s'\n\n", verb);
		usage(stderr);
		return 2;
	}
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		r = setup_option(&so, opt, optarg);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (opt) {
		case 'o':
		case OPT_OUTPUT:
			output = optarg;
			break;
		case OPT_PLUGINS_DIR:
			plugins_dir = optarg;
			break;
		case OPT_DRY_RUN:
			dry_run = true;
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || (strcmp(output, "text") && strcmp(output, "json")) ||
	    (dry_run && strcmp(verb, "apply"))) {
		usage(stderr);
		return 2;
	}
	if (setup_init(&so, &s) < 0)
		return 1;
	r = hal_scan(&s.roots, &scan_opts, &scan);
	if (r < 0) {
		log_error("cannot scan the node below %s: %s", s.roots.sys, strerror(-r));
		setup_teardown(&s);
		return 1;
	}
	err[0] = '\0';
	apply = !strcmp(verb, "apply") && !dry_run;
	r = prepared_of_our_drivers(&s, plugins_dir, &prep, apply ? &locks : NULL, &n_locks, err,
				    sizeof(err));
	if (r < 0) {
		/* without it, prepared VFs are not protected: refuse to change anything */
		log_error("cannot tell which VFs are prepared for claims: %s",
			  err[0] ? err : strerror(-r));
		if (!strcmp(verb, "apply") && !dry_run) {
			status = 1;
			goto out;
		}
	}
	if (!strcmp(verb, "status")) {
		struct node_ops node = node_ops_real(&s.roots);
		struct json_object *j = sriov_status_json(&node, scan, s.cfg->sriov, &prep);
		if (!j) {
			status = 1;
			goto out;
		}
		if (!strcmp(output, "json"))
			print_json(j);
		else
			sriov_status_print(j, stdout);
		json_object_put(j);
	} else {
		struct node_ops node = node_ops_real(&s.roots);
		struct sriov_apply_options ao = { .dry_run = dry_run };
		struct sriov_report *rep;
		if (sriov_apply(&node, s.cfg->sriov, scan, &prep, &ao, &rep) < 0) {
			status = 1;
			goto out;
		}
		if (!strcmp(output, "json")) {
			struct json_object *j = report_json(rep);
			print_json(j);
			json_object_put(j);
		} else {
			print_report(rep, dry_run);
		}
		for (size_t i = 0; i < rep->n; i++)
			if (rep->pfs[i].outcome == SRIOV_PF_REFUSED ||
			    rep->pfs[i].outcome == SRIOV_PF_FAILED)
				status = 1;
		sriov_report_free(rep);
	}
out:
	claims_locks_free(locks, n_locks);
	sriov_prepared_clear(&prep);
	hal_scan_free(scan);
	setup_teardown(&s);
	return status;
}
