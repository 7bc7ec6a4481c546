# SPDX-License-Identifier: Apache-2.0
"""What the scenarios create and read back: claims, pods, and what a
container saw. Every object is plain resource.k8s.io/v1 or core/v1 as a user
writes it (../shared/reference/scenarios.md)."""

import json
import os
import time

from cluster import BUSYBOX_IMAGE, ClusterError, wait_until

# The character devices every runc container has without any claim.
STANDARD_DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                    "/dev/tty", "/dev/ptmx", "/dev/pts/ptmx", "/dev/console"}

# The container prints its character devices and environment, then waits.
# the device nodes, the environment, and the first line (the first API version) of
# every device metadata file (KEP-5304) the container sees
METADATA_DIR = "/var/run/kubernetes.io/dra-device-attributes"
PROBE = ("find /dev -type c -exec stat -c 'dev %n %t:%T' {} + 2>/dev/null; "
         "env | sed 's/^/env /'; "
         f"for f in $(find {METADATA_DIR} -name '*-metadata.json' 2>/dev/null); do "
         "echo \"meta $f $(head -n 1 $f)\"; done; echo probe-done; exec sleep 100000")


def namespace(c, name, labels=None):
    c.apply(json.dumps({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": name, "labels": labels or {}}}))
    wait_until(f"namespace {name}'s ServiceAccount", lambda: c.kubectl(
        "get", "serviceaccount", "default", "-n", name, check=False).returncode == 0,
        timeout=60)


def request(name, device_class, selectors=(), count=None, admin=False):
    exactly = {"deviceClassName": device_class}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if count:
        exactly["count"] = count
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def claim_spec(requests, constraints=None, config=None):
    devices = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"devices": devices}


def create_claim(c, ns, name, spec):
    c.apply(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": name, "namespace": ns}, "spec": spec}))


def create_template(c, ns, name, spec):
    c.apply(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"spec": spec}}))


def pod_spec(claims=(), templates=()):
    """A probe container using every claim (by name) and template."""
    refs = [{"name": f"c{i}", "resourceClaimName": n} for i, n in enumerate(claims)]
    refs += [{"name": f"t{i}", "resourceClaimTemplateName": n}
             for i, n in enumerate(templates)]
    container = {"name": "probe", "image": BUSYBOX_IMAGE, "imagePullPolicy": "Never",
                 "command": ["sh", "-c", PROBE]}
    if refs:
        container["resources"] = {"claims": [{"name": r["name"]} for r in refs]}
    spec = {"terminationGracePeriodSeconds": 1, "containers": [container]}
    if refs:
        spec["resourceClaims"] = refs
    return spec


def create_pod(c, ns, name, claims=(), templates=()):
    c.apply(json.dumps({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": pod_spec(claims, templates)}))


def pod_events(c, ns, name):
    r = c.kubectl("get", "events", "-n", ns, "--field-selector",
                  f"involvedObject.name={name}", "-o",
                  "custom-columns=REASON:.reason,MESSAGE:.message", check=False)
    return r.stdout + r.stderr


def wait_running(c, ns, name, timeout=120):
    """Waits until the pod is Ready and its probe has printed; returns the pod."""
    def ready():
        pod = c.get("pod", name, "-n", ns)
        if pod["status"].get("phase") in ("Failed", "Succeeded"):
            raise ClusterError(f"pod {ns}/{name} ended: {pod['status']}")
        if not any(x["type"] == "Ready" and x["status"] == "True"
                   for x in pod["status"].get("conditions", [])):
            return None
        return pod if "probe-done" in c.kubectl("logs", "-n", ns, name) else None
    return wait_until(f"pod {ns}/{name} running", ready, timeout=timeout, interval=0.5,
                      detail=lambda: pod_events(c, ns, name))


def container_view(c, ns, name):
    """{'devices': {path: 'major:minor'} beyond the standard ones, 'env': {...},
    'metadata': {path: the file's first DeviceMetadata object}}."""
    devices, env, metadata = {}, {}, {}
    for line in c.kubectl("logs", "-n", ns, name).splitlines():
        if line.startswith("meta "):
            _, path, text = line.split(" ", 2)
            metadata[path] = json.loads(text)
            continue
        if line.startswith("dev "):
            _, path, nums = line.split(" ", 2)
            major, minor = (int(x, 16) for x in nums.split(":"))
            if path not in STANDARD_DEVICES:
                devices[path] = f"{major}:{minor}"
        elif line.startswith("env ") and "=" in line:
            k, v = line[4:].split("=", 1)
            env[k] = v
    return {"devices": devices, "env": env, "metadata": metadata}


def allocation(c, ns, claim):
    """The claim's allocation results, waiting until it has one."""
    def allocated():
        st = c.get("resourceclaim", claim, "-n", ns).get("status", {})
        return st.get("allocation", {}).get("devices", {}).get("results")
    return wait_until(f"claim {ns}/{claim} allocated", allocated, timeout=60)


def pod_claim(c, ns, pod, ref):
    """The name of the claim the pod's resourceClaims entry @ref got."""
    for st in c.get("pod", pod, "-n", ns)["status"].get("resourceClaimStatuses", []):
        if st["name"] == ref:
            return st["resourceClaimName"]
    raise ClusterError(f"pod {ns}/{pod} has no claim for {ref}")


def delete(c, kind, ns, *names, wait=True):
    c.kubectl("delete", kind, "-n", ns, "--ignore-not-found", f"--wait={str(wait).lower()}",
              "--timeout", "120s", *names, timeout=150)


def cdi_specs(driver=None):
    """CDI spec files dralet wrote on the node (/var/run/cdi in the sandbox)."""
    try:
        names = sorted(os.listdir("/var/run/cdi"))
    except FileNotFoundError:
        return []
    prefix = f"k8s.{driver}-" if driver else "k8s."
    return [n for n in names if n.startswith(prefix)]


def cdi_spec_for(claim_uid):
    for n in cdi_specs():
        if claim_uid in n:
            with open(os.path.join("/var/run/cdi", n)) as f:
                return n, json.load(f)
    return None, None


def cdi_env_of_pod(c, ns, pod):
    """{name: value} the CDI specs of the pod's claims put into its containers
    (the spec's own edits and each device's)."""
    env = {}
    for st in c.get("pod", pod, "-n", ns)["status"].get("resourceClaimStatuses", []):
        uid = c.get("resourceclaim", st["resourceClaimName"], "-n", ns)["metadata"]["uid"]
        specs = []
        for n in cdi_specs():
            if uid in n:
                with open(os.path.join("/var/run/cdi", n)) as f:
                    specs.append(json.load(f))
        if not specs:
            raise ClusterError(f"pod {ns}/{pod}: no CDI spec for claim {uid}")
        edits = [s.get("containerEdits", {}) for s in specs]
        edits += [d.get("containerEdits", {}) for s in specs for d in s.get("devices", [])]
        for e in edits:
            for kv in e.get("env", []):
                k, _, v = kv.partition("=")
                env[k] = v
    return env


def wait_no_spec(claim_uid, timeout=60):
    wait_until(f"the CDI spec of claim {claim_uid} removed",
               lambda: cdi_spec_for(claim_uid)[0] is None, timeout=timeout)


def measure(fn):
    t = time.monotonic()
    fn()
    return time.monotonic() - t
