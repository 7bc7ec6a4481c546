/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the board parser: typed getters over the json-c DOM that
 * reject wrong types and unknown keys with the YAML position of the culprit.
 *
 * Getters return 1 when the key was present and valid (out parameter set),
 * 0 when absent (out parameter untouched), -EINVAL with a message in the
 * diagnostics otherwise. Strings are copied into the board's arena.
 */
#ifndef DRALET_BOARD_PARSE_H
#define DRALET_BOARD_PARSE_H

#include <json-c/json.h>

#include "boards/sim/board_model.h"

struct pctx {
	struct board *b;
	struct arena *a;
	const struct board_diag *d;
	struct json_object *templates;
	const struct jpath *templates_at;
};

#define JP_KEY(up_, key_) { .up = (up_), .key = (key_), .index = 0 }
#define JP_INDEX(up_, i_) { .up = (up_), .key = NULL, .index = (int)(i_) }

/* An arena copy of a stack path, for model elements blamed by later passes. */
const struct jpath *p_keep_path(struct pctx *c, const struct jpath *at);

/* Checks that @obj is a mapping whose keys are all in the NULL-terminated
 * @allowed list; @what names the mapping in messages ("pci function"). */
int p_check_keys(struct pctx *c, struct json_object *obj, const struct jpath *at,
		 const char *what, const char *const *allowed);
int p_expect_object(struct pctx *c, struct json_object *v, const struct jpath *at,
		    const char *what);
/* A list, or a single mapping standing for a one-element list (*ret_single). */
int p_expect_list(struct pctx *c, struct json_object *v, const struct jpath *at,
		  const char *what, bool allow_single, bool *ret_single);

/* The key is present and not null. */
bool p_present(struct json_object *obj, const char *key);

int p_str(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	  const char **ret);
/* Like p_str but numbers and booleans are taken as their text. */
int p_text(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   const char **ret);
int p_int(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	  long long min, long long max, long long *ret);
int p_bool(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   bool *ret);
/* Sizes: integers (bytes) or "16M", "64G", "3.84TB": K/M/G/T (and KiB...)
 * are powers of 1024, kB/MB/GB/TB powers of 1000. */
int p_size(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   uint64_t *ret);
/* "vvvv:dddd" (hex). */
int p_id_pair(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	      uint16_t *ret_first, uint16_t *ret_second);
/* A short name that becomes a file name: no '/', no leading '.', printable. */
int p_name(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   const char **ret);
/* A PCIe link: "32GT/s x16", "16 GT/s x8", "gen5 x16". */
int p_link(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   struct board_link *ret);
/* BAR list: ["16M", "128G pref", "32M pref"]; 64-bit unless "32bit". */
int p_bars(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   struct board_bar bars[6]);
/* A CPU list "0-15,32-47" (or a single integer), normalized; *ret_max is the
 * highest CPU. */
int p_cpulist(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	      const char **ret, unsigned *ret_max);

/* A value from a table of names (also its number, or the kernel's "N: NAME"). */
struct named_int {
	const char *name;
	int value;
};
int p_enum(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	   const struct named_int *table, int *ret);
/* 32 hex digits (a UUID written without dashes, as DFL and FPGA regions do). */
int p_hex128(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	     const char **ret);
/* A relative sub-path inside a device directory ("fmgr.m.0"). */
int p_subpath(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	      const char **ret);
/* A list-valued key: *ret_n items (a single mapping counts as a list of one,
 * *ret_single set); returns 0 when absent. p_item() picks item @i. */
int p_list_of(struct pctx *c, struct json_object *obj, const char *key, const struct jpath *at,
	      struct json_object **ret_list, size_t *ret_n, bool *ret_single);
struct json_object *p_item(struct json_object *list, bool single, size_t i);

/* board_parse_rdma.c: netdevs and RDMA devices. */
int p_netdev(struct pctx *c, struct json_object *obj, const struct jpath *at,
	     struct board_netdev *n);
int p_ibdev(struct pctx *c, struct json_object *obj, const struct jpath *at,
	    struct board_ibdev *ib, bool soft);

/* board_parse_gpu.c: DRM nodes, NVIDIA (with MIG), ROCm kfd. */
int p_drm(struct pctx *c, struct board_func *f, struct json_object *obj,
	  const struct jpath *at);
int p_nvidia(struct pctx *c, struct board_func *f, struct json_object *obj,
	     const struct jpath *at);
int p_kfd(struct pctx *c, struct board_func *f, struct json_object *obj,
	  const struct jpath *at);

/* board_parse_dev.c: the class devices and vendor extras of one function. */
int p_function_devices(struct pctx *c, struct board_func *f, struct json_object *obj,
		       const struct jpath *at);
int p_sriov(struct pctx *c, struct board_func *f, struct json_object *obj,
	    const struct jpath *at);
/* The board's platform devices (an SoC's FPGA managers and regions, named
 * in the board) and configfs_overlays. */
int p_platform(struct pctx *c, struct json_object *top, const struct jpath *at);

#endif
