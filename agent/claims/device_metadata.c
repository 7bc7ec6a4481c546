/* SPDX-License-Identifier: Apache-2.0 */
/* Device metadata files (KEP-5304): paths, rendering, writing, removal. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/lib/json_put.h"
#include "agent/claims/device_metadata.h"
#include "agent/lib/atomic_file.h"
#include "agent/slices/device_json.h"

#define GROUP "metadata.resource.k8s.io"
#define FILE_NAME "metadata.json"

/* A name used as one path component: not empty, no '/', not "." or "..". */
static bool component_ok(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* "req" of "req/sub" into @buf. */
static int base_request(const char *request, char *buf, size_t size)
{
	size_t n = request ? strcspn(request, "/") : 0;

	if (!n || n >= size)
		return -EINVAL;
	memcpy(buf, request, n);
	buf[n] = '\0';
	return component_ok(buf) ? 0 : -EINVAL;
}

static int claim_dir(const char *state_dir, const char *ns, const char *name, char *buf,
		     size_t size)
{
	if (!state_dir || state_dir[0] != '/' || !component_ok(ns) || !component_ok(name))
		return -EINVAL;
	if (snprintf(buf, size, "%s/" DEVICE_METADATA_HOST_SUBDIR "/%s_%s", state_dir, ns, name) >=
	    (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static int request_dir(const char *state_dir, const struct device_metadata_claim *c,
		       const char *request, char *buf, size_t size)
{
	char base[128], dir[4096];
	int r = base_request(request, base, sizeof(base));

	if (r < 0 || (r = claim_dir(state_dir, c->namespace_, c->name, dir, sizeof(dir))) < 0)
		return r;
	if (snprintf(buf, size, "%s/%s", dir, base) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int device_metadata_host_path(const char *state_dir, const struct device_metadata_claim *c,
			      const char *request, char *buf, size_t size)
{
	char dir[4096];
	int r = request_dir(state_dir, c, request, dir, sizeof(dir));

	if (r < 0)
		return r;
	if (snprintf(buf, size, "%s/" FILE_NAME, dir) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int device_metadata_container_path(const struct device_metadata_claim *c, const char *request,
				   char *buf, size_t size)
{
	bool from_template = c->pod_claim_name && *c->pod_claim_name;
	const char *claim = from_template ? c->pod_claim_name : c->name;
	char base[128];
	int r = base_request(request, base, sizeof(base));

	if (r < 0)
		return r;
	if (!component_ok(claim) || !component_ok(c->driver))
		return -EINVAL;
	if (snprintf(buf, size, DEVICE_METADATA_CONTAINER_DIR "/%s/%s/%s/%s-metadata.json",
		     from_template ? "resourceclaimtemplates" : "resourceclaims", claim, base,
		     c->driver) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

struct json_object *device_network_data(const struct dralet_device *dev, int *r)
{
	const struct dralet_attr *ifname = dralet_device_find_attr(dev, "ifName");
	const struct dralet_attr *mac = dralet_device_find_attr(dev, "mac");
	struct json_object *nd;

	*r = 0;
	if ((!ifname || ifname->type != DRALET_ATTR_STRING) &&
	    (!mac || mac->type != DRALET_ATTR_STRING))
		return NULL;
	if (!(nd = json_object_new_object())) {
		*r = -ENOMEM;
		return NULL;
	}
	if (ifname && ifname->type == DRALET_ATTR_STRING && *ifname->string_value)
		*r = json_put_str(nd, "interfaceName", ifname->string_value);
	if (!*r && mac && mac->type == DRALET_ATTR_STRING && *mac->string_value)
		*r = json_put_str(nd, "hardwareAddress", mac->string_value);
	return nd;
}

static struct json_object *device_json(const struct device_metadata_claim *c,
				       const struct device_metadata_device *d)
{
	struct json_object *o = json_object_new_object(), *full, *attrs = NULL, *nd;
	int r = o ? 0 : -ENOMEM;

	if (!r)
		r = json_put_str(o, "driver", c->driver);
	if (!r)
		r = json_put_str(o, "pool", d->pool);
	if (!r)
		r = json_put_str(o, "name", dralet_device_name(d->dev));
	if (!r && (full = device_to_json(d->dev, false))) {
		if (json_object_object_get_ex(full, "attributes", &attrs))
			r = json_put(o, "attributes", json_object_get(attrs));
		json_object_put(full);
	} else if (!r) {
		r = -ENOMEM;
	}
	if (!r && (nd = device_network_data(d->dev, &r)))
		r = r ? (json_object_put(nd), r) : json_put(o, "networkData", nd);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *metadata_object(const char *version,
					   const struct device_metadata_claim *c,
					   const char *request,
					   const struct device_metadata_device *devices, size_t n)
{
	struct json_object *o = json_object_new_object(), *meta = json_object_new_object();
	struct json_object *reqs = json_object_new_array(), *req = json_object_new_object();
	struct json_object *devs = json_object_new_array();
	char api[64];
	int r = o && meta && reqs && req && devs ? 0 : -ENOMEM;

	snprintf(api, sizeof(api), GROUP "/%s", version);
	if (!r)
		r = json_put_str(o, "kind", "DeviceMetadata");
	if (!r)
		r = json_put_str(o, "apiVersion", api);
	if (!r)
		r = json_put_str(meta, "name", c->name);
	if (!r)
		r = json_put_str(meta, "namespace", c->namespace_);
	if (!r)
		r = json_put_str(meta, "uid", c->uid);
	if (!r)
		r = json_put(meta, "generation", json_object_new_int64(1));
	if (!r) {
		r = json_put(o, "metadata", meta);
		meta = NULL;
	}
	if (!r && c->pod_claim_name && *c->pod_claim_name)
		r = json_put_str(o, "podClaimName", c->pod_claim_name);
	for (size_t i = 0; !r && i < n; i++) {
		struct json_object *d = device_json(c, &devices[i]);

		r = d ? (json_object_array_add(devs, d) < 0 ? (json_object_put(d), -ENOMEM) : 0)
		      : -ENOMEM;
	}
	if (!r)
		r = json_put_str(req, "name", request);
	if (!r) {
		r = json_put(req, "devices", devs);
		devs = NULL;
	}
	if (!r) {
		r = json_object_array_add(reqs, req) < 0 ? -ENOMEM : 0;
		if (!r)
			req = NULL;
	}
	if (!r) {
		r = json_put(o, "requests", reqs);
		reqs = NULL;
	}
	json_object_put(meta);
	json_object_put(devs);
	json_object_put(req);
	json_object_put(reqs);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

char *device_metadata_render(const struct device_metadata_claim *c, const char *request,
			     const struct device_metadata_device *devices, size_t n_devices)
{
	static const char *const versions[] = { "v1beta1", "v1alpha1" };
	size_t len = 0;
	char *text = NULL;

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		struct json_object *o = metadata_object(versions[i], c, request, devices, n_devices);
		const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								      JSON_C_TO_STRING_NOSLASHESCAPE)
				  : NULL;
		size_t n = s ? strlen(s) : 0;
		char *grown = s ? realloc(text, len + n + 2) : NULL;

		if (!grown) {
			json_object_put(o);
			free(text);
			return NULL;
		}
		text = grown;
		memcpy(text + len, s, n);
		len += n;
		text[len++] = '\n';
		text[len] = '\0';
		json_object_put(o);
	}
	return text;
}

int device_metadata_write(const char *state_dir, const struct device_metadata_claim *c,
			  const char *request, const char *text, enum atomic_file_sync sync)
{
	char dir[4096], parent[4096];
	int r = request_dir(state_dir, c, request, dir, sizeof(dir));

	/* the claim's directory, then the request's: two mkdirs for a new claim */
	if (r < 0 || (r = claim_dir(state_dir, c->namespace_, c->name, parent,
				    sizeof(parent))) < 0 ||
	    (r = atomic_file_mkdirs(parent, 0755)) < 0)
		return r;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return atomic_file_write_sync(dir, FILE_NAME, text, strlen(text), 0644, sync);
}

/* Removes the files and directories below @dir (one level of request directories,
 * each with files only), then @dir. */
static int remove_claim_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char sub[4096];
		DIR *sd;
		struct dirent *f;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub)) {
			r = -ENAMETOOLONG;
			continue;
		}
		if (!(sd = opendir(sub))) {
			if (unlink(sub) < 0 && errno != ENOENT)
				r = -errno;
			continue;
		}
		while ((f = readdir(sd)))
			if (strcmp(f->d_name, ".") && strcmp(f->d_name, "..") &&
			    unlinkat(dirfd(sd), f->d_name, 0) < 0 && errno != ENOENT)
				r = -errno;
		closedir(sd);
		if (rmdir(sub) < 0 && errno != ENOENT)
			r = -errno;
	}
	closedir(d);
	if (!r && rmdir(dir) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

int device_metadata_remove(const char *state_dir, const char *namespace_, const char *name)
{
	char dir[4096];
	int r = claim_dir(state_dir, namespace_, name, dir, sizeof(dir));

	return r < 0 ? r : remove_claim_dir(dir);
}

int device_metadata_remove_requests(const char *state_dir, const char *namespace_,
				    const char *name, const char *const *requests, size_t n)
{
	struct device_metadata_claim c = { .namespace_ = namespace_, .name = name };
	char dir[4096], path[4200];
	int r = claim_dir(state_dir, namespace_, name, dir, sizeof(dir));

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		char req[4096];

		/* a request seen before (two devices, or "r/a" and "r/b") is gone already */
		if (request_dir(state_dir, &c, requests[i], req, sizeof(req)) < 0 ||
		    snprintf(path, sizeof(path), "%s/" FILE_NAME, req) >= (int)sizeof(path))
			continue;
		if (unlink(path) < 0 && errno != ENOENT)
			break;
		if (rmdir(req) < 0 && errno != ENOENT)
			break;
	}
	if (rmdir(dir) == 0 || errno == ENOENT)
		return 0;
	/* something else is in it (a request not named, a crash's temporary file) */
	return remove_claim_dir(dir);
}

int device_metadata_remove_others(const char *state_dir,
				  int (*keep)(void *userdata, const char *ns_name),
				  void *userdata)
{
	char top[4096];
	DIR *d;
	struct dirent *de;
	int removed = 0, r = 0;

	if (!state_dir || state_dir[0] != '/')
		return -EINVAL;
	if (snprintf(top, sizeof(top), "%s/" DEVICE_METADATA_HOST_SUBDIR, state_dir) >=
	    (int)sizeof(top))
		return -ENAMETOOLONG;
	if (!(d = opendir(top)))
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char dir[4096];

		if (de->d_name[0] == '.' || keep(userdata, de->d_name))
			continue;
		if (snprintf(dir, sizeof(dir), "%s/%s", top, de->d_name) >= (int)sizeof(dir))
			continue;
		if ((r = remove_claim_dir(dir)) == 0)
			removed++;
	}
	closedir(d);
	return r < 0 ? r : removed;
}
