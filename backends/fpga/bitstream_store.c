/* SPDX-License-Identifier: Apache-2.0 */
/* bitstream.h: the store over a directory, and sha256 (OpenSSL's libcrypto,
 * opened with dlopen at each digest: linked, it would be mapped by every
 * process, discover included, for the few that hash a bitstream). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <openssl/evp.h>

#include "bitstream.h"

#define LIBCRYPTO "libcrypto.so.3"

int fpga_sha256_hex(const void *data, size_t len, char hex[FPGA_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	__typeof__(EVP_Digest) *digest;
	__typeof__(EVP_sha256) *sha256;
	void *lib = dlopen(LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
	int ok;

	if (!lib)
		return -ENOPKG;	/* libssl3 is a dependency of the package */
	digest = (__typeof__(EVP_Digest) *)dlsym(lib, "EVP_Digest");
	sha256 = (__typeof__(EVP_sha256) *)dlsym(lib, "EVP_sha256");
	ok = digest && sha256 && digest(data, len, md, &n, sha256(), NULL) && n == 32;
	dlclose(lib);
	if (!ok)
		return -EIO;
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

/* Reads the small file <dir>/<name> into a malloc'd, NUL-terminated buffer. */
static int read_small(const char *dir, const char *name, size_t max, char **ret, size_t *ret_len)
{
	char path[4096];
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, r = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		r = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : -EFBIG;
		close(fd);
		return r;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, buf, (size_t)st.st_size);
	if (n < 0 || n != st.st_size)
		r = n < 0 ? -errno : -EIO;
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[n] = '\0';
	*ret = buf;
	*ret_len = (size_t)n;
	return 0;
}

int fpga_store_index(const char *dir, struct fpga_index *ret, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int r = read_small(dir, "index.json", 1 << 20, &text, &len);

	if (r == -ENOENT) {
		*ret = (struct fpga_index){ 0 };
		return 0;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s/index.json: %s", dir, strerror(-r));
		return r;
	}
	r = fpga_index_parse(text, len, ret, err, errlen);
	free(text);
	return r;
}

static int map_file(const char *dir, const char *sha256, const uint8_t **ret, size_t *ret_len)
{
	char path[4096];
	struct stat st;
	void *p;
	int fd, r;

	if (snprintf(path, sizeof(path), "%s/%s", dir, sha256) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return S_ISREG(st.st_mode) ? -ENODATA : -EINVAL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	*ret = p;
	*ret_len = (size_t)st.st_size;
	return 0;
}

/* Kind and IDs of @data: its header, else its manifest <sha256>.json. */
static int describe(const char *dir, const char *sha256, const uint8_t *data, size_t len,
		    struct fpga_image *ret, char *err, size_t errlen)
{
	char name[FPGA_SHA256_HEX + 8], *text;
	size_t tlen;
	int r = fpga_image_parse(data, len, ret, err, errlen);

	if (r == 0 || len < 8 || (!memcmp(data, "xclbin2\0", 8)) ||
	    (len >= 16 && !memcmp(data, "XeonFPGA", 8)))
		return r;	/* a known header that is broken stays broken */
	snprintf(name, sizeof(name), "%s.json", sha256);
	r = read_small(dir, name, 1 << 16, &text, &tlen);
	if (r == -ENOENT)
		return -EINVAL;	/* @err: unknown format */
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(-r));
		return r;
	}
	r = fpga_manifest_parse(text, tlen, len, ret, err, errlen);
	free(text);
	return r;
}

int fpga_store_describe(const char *dir, const char *sha256, struct fpga_image *ret, char *err,
			size_t errlen)
{
	const uint8_t *data;
	size_t len;
	int r;

	if (!fpga_sha256_valid(sha256))
		return -EINVAL;
	r = map_file(dir, sha256, &data, &len);
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	r = describe(dir, sha256, data, len, ret, err, errlen);
	if (r < 0)
		*ret = (struct fpga_image){ .kind = FPGA_IMAGE_UNKNOWN, .payload_size = len };
	munmap((void *)data, len);
	return r;
}

int fpga_store_load(const char *dir, const char *name, const char *sha256,
		    struct fpga_loaded *ret, char *err, size_t errlen)
{
	struct fpga_loaded l = { 0 };
	struct fpga_index idx;
	char why[256];
	const char *want = sha256 && *sha256 ? sha256 : NULL;
	int r;

	if (name && *name) {
		r = fpga_store_index(dir, &idx, why, sizeof(why));
		if (r < 0) {
			snprintf(err, errlen, "bitstream store %s: %s", dir, why);
			return r;
		}
		const char *found = fpga_index_find(&idx, name);
		if (!found || (want && strcmp(found, want))) {
			if (!found)
				snprintf(err, errlen, "bitstream \"%s\" is not in the store %s "
					 "(index.json)", name, dir);
			else
				snprintf(err, errlen, "bitstream \"%s\" is %.12s… in the store %s, "
					 "the claim names %.12s…", name, found, dir, want);
			fpga_index_free(&idx);
			return found ? -EINVAL : -ENOENT;
		}
		memcpy(l.sha256, found, FPGA_SHA256_HEX);
		fpga_index_free(&idx);
	} else if (want && fpga_sha256_valid(want)) {
		memcpy(l.sha256, want, FPGA_SHA256_HEX);
	} else {
		snprintf(err, errlen, "a bitstream needs a name or a sha256 of 64 lower-case hex "
			 "digits");
		return -EINVAL;
	}
	r = map_file(dir, l.sha256, &l.data, &l.len);
	if (r < 0) {
		snprintf(err, errlen, "bitstream %s is not in the store %s: %s", l.sha256, dir,
			 r == -ENOENT ? "no such file" : strerror(-r));
		return r == -ENODATA ? -EBADMSG : r;
	}
	char sum[FPGA_SHA256_HEX];
	r = fpga_sha256_hex(l.data, l.len, sum);
	if (r == 0 && strcmp(sum, l.sha256)) {
		snprintf(err, errlen, "bitstream %s in the store %s fails its checksum (its "
			 "content hashes to %s): refusing to load it", l.sha256, dir, sum);
		r = -EBADMSG;
	} else if (r < 0) {
		snprintf(err, errlen, "bitstream %s: computing its sha256 failed", l.sha256);
	}
	if (r == 0) {
		r = describe(dir, l.sha256, l.data, l.len, &l.image, why, sizeof(why));
		if (r < 0)
			snprintf(err, errlen, "bitstream %.12s… in %s: %s", l.sha256, dir, why);
	}
	if (r < 0) {
		munmap((void *)l.data, l.len);
		return r;
	}
	*ret = l;
	return 0;
}

void fpga_store_unload(struct fpga_loaded *l)
{
	if (l && l->data) {
		munmap((void *)l->data, l->len);
		l->data = NULL;
	}
}

int fpga_store_match(const char *dir, enum fpga_image_kind kind, const char *accelerator_id,
		     const char *interface_id, char ret[FPGA_SHA256_HEX])
{
	char best[FPGA_SHA256_HEX] = "", why[256];
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		struct fpga_image img;

		if (!fpga_sha256_valid(e->d_name) ||
		    fpga_store_describe(dir, e->d_name, &img, why, sizeof(why)) < 0)
			continue;
		if (img.kind != kind || strcmp(img.accelerator_id, accelerator_id) ||
		    (interface_id && *interface_id && strcmp(img.interface_id, interface_id)))
			continue;
		if (!best[0] || strcmp(e->d_name, best) < 0)
			memcpy(best, e->d_name, FPGA_SHA256_HEX);
	}
	closedir(d);
	if (!best[0])
		return -ENOENT;
	memcpy(ret, best, FPGA_SHA256_HEX);
	return 0;
}

int fpga_store_find(const char *dir, enum fpga_image_kind kind, const char *accelerator_id,
		    const char *interface_id, struct fpga_loaded *ret, char *err, size_t errlen)
{
	char sha[FPGA_SHA256_HEX];

	if (fpga_store_match(dir, kind, accelerator_id, interface_id, sha) < 0) {
		snprintf(err, errlen, "the store %s has no %s image bringing accelerator %s%s%s", dir,
			 fpga_image_kind_name(kind), accelerator_id,
			 interface_id && *interface_id ? " for interface " : "",
			 interface_id && *interface_id ? interface_id : "");
		return -ENOENT;
	}
	return fpga_store_load(dir, NULL, sha, ret, err, errlen);
}

void fpga_store_name_of(const char *dir, const char *sha256, char name[FPGA_NAME_MAX])
{
	struct fpga_index idx;
	char err[256];

	name[0] = '\0';
	if (fpga_store_index(dir, &idx, err, sizeof(err)) < 0)
		return;
	for (size_t i = 0; i < idx.n; i++)
		if (!strcmp(idx.entries[i].sha256, sha256)) {
			memcpy(name, idx.entries[i].name, FPGA_NAME_MAX);
			break;
		}
	fpga_index_free(&idx);
}
