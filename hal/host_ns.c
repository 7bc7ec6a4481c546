/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether the agent sees the node's network from the node's own network
 * namespace. Network devices (RDMA NICs, SR-IOV PFs and VFs) are only safe
 * to publish when it does: in a pod's namespace the default-route check
 * reads the pod's routes (it would publish the node's uplink), and VF
 * settings, netdev names and RDMA GIDs are the pod's, not the node's.
 *
 * The node is the one behind the proc root:
 *   - a real procfs (fstatfs: PROC_SUPER_MAGIC): the agent must be in the
 *     initial PID namespace (<proc>/self/ns/pid is pid:[4026531836],
 *     PROC_PID_INIT_INO of include/linux/proc_ns.h, fixed since Linux 3.8),
 *     so <proc>/1 is the node's init and not a pod's; and its network
 *     namespace must be init's (<proc>/self/ns/net and <proc>/1/ns/net name
 *     the same namespace). A link that cannot be read (no CAP_SYS_PTRACE
 *     over init, say) is a problem too: the agent cannot tell.
 *   - a simulated node (a board's tree, not procfs) is its own host: the
 *     same comparisons apply to the links it has, and a tree without them
 *     passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "hal/scan_internal.h"

#define INIT_PID_NS "pid:[4026531836]"

/* The text of <proc>/@rel into @buf: 0, or -errno. */
static int read_ns(struct hal_scan_private *s, const char *rel, char *buf, size_t size)
{
	ssize_t n = readlinkat(s->proc_fd, rel, buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static const char *problem(struct hal_scan_private *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *problem(struct hal_scan_private *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	const char *copy = arena_strdup(s->arena, buf);

	return copy ? copy : "out of memory";
}

const char *host_ns_problem(struct hal_scan_private *s)
{
	const char *proc = s->roots.proc;
	char pid[64], net[64], init_net[64];
	struct statfs sfs;
	bool real;
	int r;

	if (s->proc_fd < 0)
		return NULL;	/* no proc root at all: warned about already */
	real = fstatfs(s->proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;

	r = read_ns(s, "self/ns/pid", pid, sizeof(pid));
	if (r < 0 && (real || r != -ENOENT))
		return problem(s, "cannot read %s/self/ns/pid (%s) to tell whether the agent is "
			       "in the host's PID namespace", proc, strerror(-r));
	if (r == 0 && strcmp(pid, INIT_PID_NS))
		return problem(s, "the agent is not in the host's PID namespace (%s/self/ns/pid is "
			       "%s, the host's is " INIT_PID_NS "), so %s/1 is not the host's init "
			       "(run it with hostPID: true)", proc, pid, proc);

	const char *link = "self/ns/net";
	r = read_ns(s, link, net, sizeof(net));
	if (r == 0)
		r = read_ns(s, link = "1/ns/net", init_net, sizeof(init_net));
	if (r < 0 && (real || r != -ENOENT))
		return problem(s, "cannot read %s/%s (%s) to tell whether the agent is in the host's "
			       "network namespace%s", proc, link, strerror(-r),
			       r == -EACCES ? " (reading init's needs ptrace access to it: "
					      "CAP_SYS_PTRACE in the host's user namespace)" : "");
	if (r == 0 && strcmp(net, init_net))
		return problem(s, "the agent is not in the host's network namespace (it is in %s, "
			       "the host's init in %s; run it with hostNetwork: true)", net,
			       init_net);
	return NULL;
}
