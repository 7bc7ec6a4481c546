# SPDX-License-Identifier: Apache-2.0
"""The e2e scenarios: what a user does with dralet on a real cluster.

Each scenario runs against the node's current simulated board; they run in
board phases (the node "gets" other hardware between them, see deploy.py).
A scenario raises on the first thing that is not as it must be; the rest
still run, and the suite fails if any failed. Nothing is skipped.
"""

import glob
import json
import os
import re
import signal
import subprocess
import time
import traceback

import yaml

import deploy
import workload as w
from cluster import ClusterError, NODE, wait_until

BOARDS = "/usr/share/dralet/boards"  # inside dralet's image
GPU = "gpu.dralet.dev"
NET = "net.dralet.dev"
SCENARIOS = []
REPORT = []  # (name, seconds, error or None)
FIGURES = {}  # printed at the end: what the run measured


def scenario(board):
    def register(fn):
        SCENARIOS.append((board, fn.__name__, fn))
        return fn
    return register


class Env:
    """What every scenario gets: the cluster, the devices dralet should have
    published on the current board (from `dralet discover`), helpers."""

    def __init__(self, c, build, root):
        self.c, self.build, self.root = c, build, root
        self.dralet = os.path.join(build, "dralet")
        self.board = None
        self.devices = {}  # name -> device JSON of `dralet discover`

    def config(self, board):
        """The agent configuration the ConfigMap carries for @board: the board,
        and its simulated NVML, nvidia-smi and XRT (installed in the image)."""
        return {"simulatedBoard": f"{BOARDS}/{board}.yaml",
                "backends": {"nvidia": {"options": {
                    "nvmlLibrary": "/usr/lib/dralet/board-nvml.so",
                    "nvidiaSmi": "/usr/lib/dralet/board-nvidia-smi"}},
                    "xrt": {"options": {"xrtLibrary": "/usr/lib/dralet/board-xrt.so"}}}}

    def discover(self, board):
        """The same discovery outside the cluster (the build's simulators)."""
        cfg = os.path.join(self.c.dir, f"discover-{board}.yaml")
        with open(cfg, "w") as f:
            json.dump({"backends": {"nvidia": {"options": {
                "nvmlLibrary": os.path.join(self.build, "tests/lib/fake-nvml.so")}}}}, f)
        r = subprocess.run([self.dralet, "discover", "--board",
                            os.path.join(self.root, "boards", board + ".yaml"),
                            "--config", cfg, "-o", "json"], capture_output=True, text=True)
        if r.returncode != 0:
            raise ClusterError(f"dralet discover --board {board}: {r.stderr}")
        self.devices = {d["name"]: d for d in json.loads(r.stdout)["devices"]}
        expected = {}
        for d in self.devices.values():
            if d.get("partition") and not self.partitionable():
                continue  # published only where the server has counters
            expected.setdefault(d["driver"], []).append(d["name"])
        return {k: sorted(v) for k, v in expected.items()}

    def partitionable(self):
        """DRAPartitionableDevices is on (beta, on by default, from 1.36)."""
        major, minor = (int(x) for x in self.c.version.split(".")[:2])
        return (major, minor) >= (1, 36)

    def use_board(self, board):
        expected = self.discover(board)
        if self.board is None:
            deploy.deploy(self.c, self.build, self.root, self.config(board))
        else:
            deploy.switch_board(self.c, self.root, self.config(board))
        self.board = board
        self.expected = expected
        t = time.monotonic()
        deploy.wait_published(self.c, expected, timeout=180)
        FIGURES[f"publish {board} ({sum(map(len, expected.values()))} devices)"] = \
            f"{time.monotonic() - t:.1f}s after the agent was Ready"

    def nodes_of(self, device):
        """{path: 'major:minor'} dralet hands a container for @device."""
        return {n["path"]: n["device"] for n in self.devices[device]["deviceNodes"]}

    def expect_container(self, ns, pod, devices):
        """The container sees exactly the device nodes of @devices, and every
        variable the CDI specs of its claims set."""
        want = {}
        for d in devices:
            want.update(self.nodes_of(d))
        got = w.container_view(self.c, ns, pod)
        if got["devices"] != want:
            raise ClusterError(f"pod {ns}/{pod}: device nodes {got['devices']}, "
                               f"expected {want} (for {devices})")
        env = w.cdi_env_of_pod(self.c, ns, pod)
        missing = {k: v for k, v in env.items() if got["env"].get(k) != v}
        if missing:
            raise ClusterError(f"pod {ns}/{pod}: the CDI specs set {missing}, the container "
                               f"has {[k for k in got['env'] if k in missing]}")
        return got


# ---- hgx-h100: GPUs, MIG, ConnectX-7 RDMA NICs and their VFs ----------------

@scenario("hgx-h100")
def helm_chart(e):
    """helm lint passes; helm template renders the objects of the plain
    manifests (same kinds and names), and the real apiserver accepts them
    (server-side dry run)."""
    helm = os.path.join(e.c.runtime_dir, "helm")
    chart = os.path.join(e.root, "deploy", "helm", "dralet")
    env = dict(os.environ, HELM_CACHE_HOME=e.c.path("helm"), HELM_CONFIG_HOME=e.c.path("helm"),
               HELM_DATA_HOME=e.c.path("helm"))
    r = subprocess.run([helm, "lint", "--strict", chart], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        raise ClusterError(f"helm lint: {r.stdout}{r.stderr}")
    r = subprocess.run([helm, "template", "dralet", chart, "--namespace", deploy.NAMESPACE],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise ClusterError(f"helm template: {r.stderr}")
    rendered = [d for d in yaml.safe_load_all(r.stdout) if d]
    plain = []
    for name in (*deploy.MANIFESTS, "configmap.yaml", "daemonset.yaml"):
        with open(os.path.join(e.root, "deploy", name)) as f:
            plain += [d for d in yaml.safe_load_all(f) if d]

    def objects(docs):
        return sorted((d["kind"], d["metadata"]["name"]) for d in docs
                      if d["kind"] != "Namespace")
    if objects(rendered) != objects(plain):
        raise ClusterError(f"the chart renders {objects(rendered)}, deploy/ has "
                           f"{objects(plain)}")

    def daemonset(docs):
        [ds] = [d for d in docs if d["kind"] == "DaemonSet"]
        return ds["spec"]
    if daemonset(rendered) != daemonset(plain):
        raise ClusterError("the chart's DaemonSet (default values) differs from "
                           f"deploy/daemonset.yaml:\n{daemonset(rendered)}\n{daemonset(plain)}")
    e.c.kubectl("apply", "--dry-run=server", "-f", "-", input=r.stdout)


@scenario("hgx-h100")
def slices_accepted(e):
    """The real apiserver holds every slice dralet wrote; kubectl shows them; they are
    owned by the Node, whose UID the agent took from its ServiceAccount token."""
    table = e.c.kubectl("get", "resourceslices")
    rows = [r for r in table.splitlines()[1:] if NODE in r]
    slices = deploy.slices(e.c)
    if len(rows) != len(slices) or not rows:
        raise ClusterError(f"kubectl get resourceslices shows {len(rows)} rows for {NODE}, "
                           f"the API {len(slices)} slices:\n{table}")
    node_uid = e.c.get("nodes/" + NODE)["metadata"]["uid"]
    for s in slices:
        if s["spec"].get("nodeName") != NODE:
            raise ClusterError(f"slice {s['metadata']['name']} is not for node {NODE}")
        owner = s["metadata"]["ownerReferences"][0]
        if (owner["kind"], owner["name"], owner["uid"]) != ("Node", NODE, node_uid):
            raise ClusterError(f"slice {s['metadata']['name']} is owned by {owner}, "
                               f"not the Node {NODE} ({node_uid})")
    # the owner's UID came from the pod's ServiceAccount token (kubernetes.io.node),
    # not from a read of the Node (docs/publishing.md, "Requests at start"); the
    # agent deployed for this board created the slices, so it took the UID once
    log = deploy.agent_log(e.c, deploy.wait_agent_ready(e.c))
    uids = [line for line in log.splitlines() if f"node {NODE} has uid" in line]
    if not uids or not all(f"has uid {node_uid} (from the service account token)" in u for u in uids):
        raise ClusterError("the agent did not take the Node's UID from its token:\n"
                           + "\n".join(uids))


@scenario("hgx-h100")
def vap_refuses_other_node(e):
    """dralet's own ServiceAccount (a token bound to its pod) may write slices
    for its node only: the ValidatingAdmissionPolicy refuses another node's."""
    pod = deploy.wait_agent_ready(e.c)
    token = e.c.kubectl("create", "token", "dralet", "-n", deploy.NAMESPACE,
                        "--bound-object-kind", "Pod",
                        "--bound-object-name", pod["metadata"]["name"],
                        "--bound-object-uid", pod["metadata"]["uid"]).strip()

    def as_agent(node, name):
        s = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
             "metadata": {"name": name},
             "spec": {"driver": "vap-test.dralet.dev", "nodeName": node,
                      "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                      "devices": [{"name": "dev0"}]}}
        return subprocess.run([e.c.bin, "kubectl", "--server", f"https://{e.c.pki.node_ip}:6443",
                               "--certificate-authority", e.c.pki.ca_cert, "--token", token,
                               "create", "-f", "-"], input=json.dumps(s),
                              capture_output=True, text=True)
    r = as_agent("another-node", "vap-test-other")
    if r.returncode == 0 or "may not modify ResourceSlices of node another-node" not in r.stderr:
        raise ClusterError(f"a slice for another node was not refused as it must be: "
                           f"{r.returncode} {r.stdout} {r.stderr}")
    r = as_agent(NODE, "vap-test-own")
    if r.returncode != 0:
        raise ClusterError(f"the agent's identity cannot write its own node's slice: {r.stderr}")
    e.c.kubectl("delete", "resourceslice", "vap-test-own")


@scenario("hgx-h100")
def gpu_40gi(e):
    """A GPU with at least 40 GiB (a capacity selector), prepared by the real
    kubelet: the container sees exactly its device nodes; deleting the pod
    unprepares it and removes the CDI spec."""
    ns = "gpu-40gi"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "gpu", w.claim_spec([w.request("gpu", GPU, [
        f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'])]))
    w.create_pod(e.c, ns, "app", claims=["gpu"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "gpu")
    dev = e.devices[res["device"]]
    memory = dev["capacity"].get("memory", {}).get("value", "0")
    if res["driver"] != GPU or dev["kind"] != "gpu" or not memory.endswith("Mi") or \
            int(memory[:-2]) < 40 * 1024:
        raise ClusterError(f"allocated {res} with memory {memory}")
    e.expect_container(ns, "app", [res["device"]])
    uid = e.c.get("resourceclaim", "gpu", "-n", ns)["metadata"]["uid"]
    spec_name, spec = w.cdi_spec_for(uid)
    if not spec:
        raise ClusterError(f"no CDI spec for claim {uid} in /var/run/cdi: {w.cdi_specs()}")
    w.delete(e.c, "pod", ns, "app")
    w.wait_no_spec(uid)
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def deployment_one_gpu_per_replica(e):
    """A ResourceClaimTemplate behind a 3-replica Deployment: three claims,
    three different GPUs, three running pods."""
    ns = "replicas"
    w.namespace(e.c, ns)
    w.create_template(e.c, ns, "one-gpu", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"'])]))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "train", "namespace": ns},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "train"}},
                           "template": {"metadata": {"labels": {"app": "train"}},
                                        "spec": w.pod_spec(templates=["one-gpu"])}}}
    e.c.apply(json.dumps(deployment))
    e.c.kubectl("rollout", "status", "-n", ns, "deployment/train", "--timeout", "180s",
                timeout=200)
    pods = [p["metadata"]["name"] for p in e.c.get("pods", "-n", ns)["items"]]
    gpus = []
    for pod in pods:
        w.wait_running(e.c, ns, pod)
        claim = w.pod_claim(e.c, ns, pod, "t0")
        [res] = w.allocation(e.c, ns, claim)
        e.expect_container(ns, pod, [res["device"]])
        gpus.append(res["device"])
    if len(pods) != 3 or len(set(gpus)) != 3:
        raise ClusterError(f"pods {pods} got GPUs {gpus}")
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def timeslicing_shared_gpu(e):
    """Time-slicing from the claim's opaque config; two pods share the claim
    (and the GPU); nvidia-smi set the interval; both see the GPU."""
    ns = "timeslicing"
    w.namespace(e.c, ns)
    config = [{"requests": ["gpu"], "opaque": {"driver": GPU, "parameters": {
        "apiVersion": "gpu.dralet.dev/v1alpha1", "kind": "GpuConfig",
        "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}}}}]
    w.create_claim(e.c, ns, "shared", w.claim_spec(
        [w.request("gpu", GPU, [f'device.attributes["{GPU}"].type == "gpu"',
                                f'device.attributes["{GPU}"].productName.contains("H100")'])],
        config=config))
    for pod in ("a", "b"):
        w.create_pod(e.c, ns, pod, claims=["shared"])
    for pod in ("a", "b"):
        w.wait_running(e.c, ns, pod)
    [res] = w.allocation(e.c, ns, "shared")
    for pod in ("a", "b"):
        view = e.expect_container(ns, pod, [res["device"]])
        if not any(k.endswith("_TIMESLICE") and v == "Long" for k, v in view["env"].items()):
            raise ClusterError(f"pod {pod}: no time-slice setting in its environment: "
                               f"{view['env']}")
    uuid = e.devices[res["device"]]["attributes"]["uuid"]["string"]
    settings = agent_board_file(e, "nvml.json.timeslice")
    if f"{uuid} 3" not in settings.splitlines():
        raise ClusterError(f"nvidia-smi did not set the Long interval on {uuid}: {settings!r}")
    w.delete(e.c, "namespace", "", ns)
    settings = agent_board_file(e, "nvml.json.timeslice")
    if settings.splitlines()[-1] != f"{uuid} 0":
        raise ClusterError(f"unprepare did not reset the interval: {settings!r}")


@scenario("hgx-h100")
def gpu_shared_by_memory(e):
    """Consumable capacity (docs/sharing.md). On 1.37 (DRAConsumableCapacity on): the
    GPUs are published shareable by memory; two pods, each with its own claim for
    8Gi of one H100, run on that same GPU with two shares, each container with the
    GPU's nodes and its share's memory; a claim for more than is left stays
    pending. On 1.34 (gate off): the server dropped the fields, the agent said so
    once, and its GPU slices are not written again (no write loop)."""
    # sharing is opt-in (docs/sharing.md: the scheduler makes adminAccess requests
    # consume capacity too): this scenario turns it on, and back off at the end
    config = e.config(e.board)
    config["backends"]["nvidia"]["options"]["sharing"] = "true"
    pod = deploy.switch_board(e.c, e.root, config)
    try:
        shared_gpu_scenario(e, pod)
    finally:
        deploy.switch_board(e.c, e.root, e.config(e.board))


def shared_gpu_scenario(e, pod):
    import urllib.request
    from cluster import NODE_IP

    port = pod["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"]

    def slice_writes():
        with urllib.request.urlopen(f"http://{NODE_IP}:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("dralet_slice_writes_total{") and f'driver="{GPU}"' in line)

    gpu = sorted(n for n, d in e.devices.items()
                 if d["driver"] == GPU and d["attributes"].get("type") == {"string": "gpu"}
                 and "uuid" in d["attributes"])[0]

    def published_gpus():
        return {d["name"]: d for s in deploy.slices(e.c, GPU) for d in s["spec"]["devices"]}
    if e.c.version != "1.34":
        wait_until(f"{gpu} published shareable",
                   lambda: published_gpus().get(gpu, {}).get("allowMultipleAllocations"),
                   timeout=60)
    published = published_gpus()
    if e.c.version == "1.34":
        if any("allowMultipleAllocations" in d or any(
                "requestPolicy" in c for c in d.get("capacity", {}).values())
                for d in published.values()):
            raise ClusterError(f"1.34 stored the consumable-capacity fields: {published[gpu]}")
        log = deploy.agent_log(e.c, pod)
        warned = log.count("the feature gate DRAConsumableCapacity is probably disabled")
        if warned != 1:
            raise ClusterError(f"the agent warned {warned} times about the dropped gate")
        versions = {s["metadata"]["name"]: s["metadata"]["resourceVersion"]
                    for s in deploy.slices(e.c, GPU)}
        writes = slice_writes()
        time.sleep(15)
        again = {s["metadata"]["name"]: s["metadata"]["resourceVersion"]
                 for s in deploy.slices(e.c, GPU)}
        if again != versions or slice_writes() != writes:
            raise ClusterError(f"the GPU slices were written again (a write loop): "
                               f"{versions} -> {again}, writes {writes} -> {slice_writes()}")
        return
    d = published.get(gpu, {})
    policy = d.get("capacity", {}).get("memory", {}).get("requestPolicy", {})
    if d.get("allowMultipleAllocations") is not True or policy.get("validRange", {}).get(
            "step") != "1Gi":
        raise ClusterError(f"the GPU {gpu} as published: {d}")
    uuid = e.devices[gpu]["attributes"]["uuid"]["string"]
    ns = "shared-gpu"
    w.namespace(e.c, ns)

    def claim(name, memory):
        req = w.request("gpu", GPU, [f'device.attributes["{GPU}"].uuid == "{uuid}"'])
        req["exactly"]["capacity"] = {"requests": {"memory": memory}}
        w.create_claim(e.c, ns, name, w.claim_spec([req]))
    for pod_name in ("a", "b"):
        claim(pod_name, "8Gi")
        w.create_pod(e.c, ns, pod_name, claims=[pod_name])
    shares = set()
    for pod_name in ("a", "b"):
        w.wait_running(e.c, ns, pod_name)
        [res] = w.allocation(e.c, ns, pod_name)
        if res["device"] != gpu or not res.get("shareID") or \
                res.get("consumedCapacity", {}).get("memory") != "8Gi":
            raise ClusterError(f"claim {pod_name}: allocated {res}")
        shares.add(res["shareID"])
        view = e.expect_container(ns, pod_name, [gpu])
        mem = [v for k, v in view["env"].items() if k.endswith("_SHARE_MEMORY")]
        sid = [v for k, v in view["env"].items() if k.endswith("_SHARE_ID")]
        if mem != [str(8 << 30)] or sid != [res["shareID"]]:
            raise ClusterError(f"pod {pod_name}: share env {view['env']}")
    if len(shares) != 2:
        raise ClusterError(f"two claims, shares {shares}")
    # what is left of the GPU's memory is less than 75Gi: this one cannot fit
    claim("big", "75Gi")
    w.create_pod(e.c, ns, "big", claims=["big"])

    def pending():
        p = e.c.get("pod", "big", "-n", ns)
        return any(c["type"] == "PodScheduled" and c["status"] == "False"
                   for c in p["status"].get("conditions", []))
    wait_until("the pod asking for more memory than is left unschedulable", pending, timeout=60)
    uids = [e.c.get("resourceclaim", n, "-n", ns)["metadata"]["uid"] for n in ("a", "b")]
    w.delete(e.c, "namespace", "", ns)
    for uid in uids:
        w.wait_no_spec(uid)


@scenario("hgx-h100")
def mig_1g_10gb(e):
    """A MIG 1g.10gb partition: the container gets the parent GPU's node and
    the MIG capability nodes of that instance."""
    ns = "mig"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "mig", w.claim_spec([w.request("mig", "mig." + GPU, [
        f'device.attributes["{GPU}"].migProfile == "1g.10gb"'])]))
    w.create_pod(e.c, ns, "app", claims=["mig"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "mig")
    if e.devices[res["device"]]["kind"] != "mig":
        raise ClusterError(f"allocated {res}")
    e.expect_container(ns, "app", [res["device"]])
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def gpu_and_rdma_nic_aligned(e):
    """Two requests under one PCIe root (matchAttribute pcieRoot)."""
    ns = "aligned"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "pair", w.claim_spec(
        [w.request("gpu", GPU, [f'device.attributes["{GPU}"].type == "gpu"',
                                f'device.attributes["{GPU}"].productName.contains("H100")']),
         w.request("nic", NET, [f'device.attributes["{NET}"].ibDevice != ""',
                                f'!device.attributes["{NET}"].isVF'])],
        constraints=[{"requests": ["gpu", "nic"],
                      "matchAttribute": "resource.kubernetes.io/pcieRoot"}]))
    w.create_pod(e.c, ns, "app", claims=["pair"])
    w.wait_running(e.c, ns, "app")
    results = w.allocation(e.c, ns, "pair")
    roots = {e.devices[r["device"]]["attributes"]["resource.kubernetes.io/pcieRoot"]["string"]
             for r in results}
    if len(results) != 2 or len(roots) != 1:
        raise ClusterError(f"allocated {results} under {roots}")
    e.expect_container(ns, "app", [r["device"] for r in results])
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def rdma_nic(e):
    """An RDMA NIC: the uverbs and rdma_cm nodes reach the container."""
    ns = "rdma"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "nic", w.claim_spec([w.request("nic", NET, [
        f'device.attributes["{NET}"].ibDevice != ""', f'!device.attributes["{NET}"].isVF'])]))
    w.create_pod(e.c, ns, "app", claims=["nic"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "nic")
    view = e.expect_container(ns, "app", [res["device"]])
    if "/dev/infiniband/rdma_cm" not in view["devices"]:
        raise ClusterError(f"no rdma_cm in {view['devices']}")
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def sriov_vf(e):
    """An SR-IOV virtual function of a ConnectX-7 (its own RDMA device)."""
    ns = "vf"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "vf", w.claim_spec([w.request("vf", NET, [
        f'device.attributes["{NET}"].isVF'])]))
    w.create_pod(e.c, ns, "app", claims=["vf"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "vf")
    if not e.devices[res["device"]]["attributes"]["isVF"]["bool"]:
        raise ClusterError(f"allocated {res}, not a VF")
    e.expect_container(ns, "app", [res["device"]])
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def admin_access_monitor(e):
    """An adminAccess claim in a namespace labelled for it gets a GPU that a
    workload already holds; both run."""
    ns = "monitoring"
    w.namespace(e.c, "workload")
    w.create_claim(e.c, "workload", "gpu", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"',
        f'device.attributes["{GPU}"].productName.contains("H100")'])]))
    w.create_pod(e.c, "workload", "app", claims=["gpu"])
    w.wait_running(e.c, "workload", "app")
    [held] = w.allocation(e.c, "workload", "gpu")
    w.namespace(e.c, ns, {"resource.kubernetes.io/admin-access": "true"})
    w.create_claim(e.c, ns, "monitor", w.claim_spec([w.request("gpu", GPU, [
        'device.attributes["resource.kubernetes.io"].pciBusID == '
        f'"{e.devices[held["device"]]["pciAddress"]}"'],
        admin=True)]))
    w.create_pod(e.c, ns, "monitor", claims=["monitor"])
    w.wait_running(e.c, ns, "monitor")
    [res] = w.allocation(e.c, ns, "monitor")
    if res["device"] != held["device"] or not res.get("adminAccess"):
        raise ClusterError(f"monitor got {res}, the workload holds {held['device']}")
    e.expect_container(ns, "monitor", [res["device"]])
    w.delete(e.c, "namespace", "", ns, "workload")


@scenario("hgx-h100")
def unsatisfiable_stays_pending(e):
    """A claim nothing can satisfy: the pod stays Pending with the scheduler's
    reason, and dralet is never asked to prepare."""
    ns = "unsatisfiable"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "huge", w.claim_spec([w.request("gpu", GPU, [
        f'device.capacity["{GPU}"].memory.compareTo(quantity("1Ti")) >= 0'])]))
    w.create_pod(e.c, ns, "app", claims=["huge"])

    def unschedulable():
        pod = e.c.get("pod", "app", "-n", ns)
        for cond in pod["status"].get("conditions", []):
            if cond["type"] == "PodScheduled" and cond["status"] == "False" and \
                    cond.get("reason") == "Unschedulable":
                return cond.get("message", "")
        return None
    message = wait_until("the scheduler's verdict", unschedulable, timeout=60)
    if "claim" not in message:
        raise ClusterError(f"the scheduler's reason does not name the claim: {message}")
    time.sleep(3)
    pod = e.c.get("pod", "app", "-n", ns)
    if pod["status"].get("phase") != "Pending" or pod["spec"].get("nodeName"):
        raise ClusterError(f"the pod did not stay Pending: {pod['status']}")
    FIGURES["unsatisfiable claim, scheduler says"] = message
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def prepare_failed_event(e):
    """A claim whose config the GPU driver refuses (an unknown field): the kubelet's
    prepare fails, and dralet records a Warning Event PrepareFailed about the
    ResourceClaim (docs/operations.md, "Events"), which the real apiserver accepts
    (RBAC create+patch on events); another prepare of the claim counts up on that one
    Event."""
    ns = "prepare-failed"
    w.namespace(e.c, ns)
    config = [{"requests": ["gpu"], "opaque": {"driver": GPU, "parameters": {
        "apiVersion": "gpu.dralet.dev/v1alpha1", "kind": "GpuConfig", "colour": "red"}}}]
    w.create_claim(e.c, ns, "bad", w.claim_spec(
        [w.request("gpu", GPU, [f'device.attributes["{GPU}"].type == "gpu"'])], config=config))
    w.create_pod(e.c, ns, "app", claims=["bad"])

    def claim_events():
        r = e.c.kubectl("get", "events", "-n", ns, "--field-selector",
                        "involvedObject.kind=ResourceClaim,reason=PrepareFailed", "-o", "json")
        return json.loads(r)["items"] or None
    [ev] = wait_until("the PrepareFailed Event on the claim", claim_events, timeout=120,
                      detail=lambda: w.pod_events(e.c, ns, "app"))
    claim = e.c.get("resourceclaim", "bad", "-n", ns)
    ref = ev["involvedObject"]
    if (ref.get("apiVersion"), ref.get("name"), ref.get("uid")) != \
            ("resource.k8s.io/v1", "bad", claim["metadata"]["uid"]):
        raise ClusterError(f"the Event is about {ref}")
    if ev["type"] != "Warning" or "colour" not in ev["message"]:
        raise ClusterError(f"the Event: {ev['type']} {ev['message']}")
    if ev.get("source", {}).get("component") != "dralet":
        raise ClusterError(f"the Event's source: {ev.get('source')}")
    # another prepare of the claim (a second pod sharing it, rather than waiting about
    # a minute for the kubelet's retry of the first): the same Event counts up (a patch)
    w.create_pod(e.c, ns, "app2", claims=["bad"])
    wait_until("a repeat of the Event", lambda: (claim_events() or [{}])[0].get("count", 0) > 1,
               timeout=120)
    if len(claim_events()) != 1:
        raise ClusterError(f"more than one PrepareFailed Event: {claim_events()}")
    FIGURES["prepare failed, Event on the claim"] = ev["message"][:120]
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def agent_killed_pods_keep_running(e):
    """dralet SIGKILLed while a pod runs: the pod keeps running, the slices
    stay (same objects), a new pod with a claim starts afterwards."""
    ns = "restart-agent"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "before", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"'])]))
    w.create_pod(e.c, ns, "before", claims=["before"])
    w.wait_running(e.c, ns, "before")
    slice_uids = sorted(s["metadata"]["uid"] for s in deploy.slices(e.c))
    pid = agent_pid(e)
    os.kill(pid, signal.SIGKILL)
    wait_until("the agent restarted", lambda: agent_pid(e, missing_ok=True) not in (None, pid),
               timeout=120)
    deploy.wait_registered(e.c)
    if sorted(s["metadata"]["uid"] for s in deploy.slices(e.c)) != slice_uids:
        raise ClusterError("the slices were replaced across the agent's restart")
    pod = e.c.get("pod", "before", "-n", ns)
    if pod["status"]["containerStatuses"][0].get("restartCount", 0) or \
            pod["status"].get("phase") != "Running":
        raise ClusterError(f"the workload did not keep running: {pod['status']}")
    w.create_claim(e.c, ns, "after", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"'])]))
    w.create_pod(e.c, ns, "after", claims=["after"])
    w.wait_running(e.c, ns, "after")
    [a] = w.allocation(e.c, ns, "before")
    [b] = w.allocation(e.c, ns, "after")
    if a["device"] == b["device"]:
        raise ClusterError(f"both claims got {a['device']}")
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def kubelet_restart_reregisters(e):
    """The kubelet restarted: it finds dralet's sockets again, the slices it
    wiped at start come back, and it prepares."""
    ns = "restart-kubelet"
    drivers = deploy.served_drivers(deploy.agent_log(e.c, deploy.wait_agent_ready(e.c)))
    e.c.restart("kubelet")
    e.c.wait_node_ready()

    def registered():
        # the sockets are named by the agent's pod UID (--pod-uid)
        log = e.c.procs["kubelet"].since_start()
        return all(re.search(rf"plugins_registry/{re.escape(d)}-[0-9a-f-]+-reg\.sock", log) and
                   f'"Connection changed" logger="DRA registration handler" driverName="{d}"'
                   in log for d in drivers)
    wait_until(f"the restarted kubelet's registration of {sorted(drivers)}", registered,
               timeout=60)
    # a starting kubelet deletes its node's slices; dralet writes them again
    deploy.wait_published(e.c, e.expected, timeout=60)
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "gpu", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"'])]))
    w.create_pod(e.c, ns, "app", claims=["gpu"])
    w.wait_running(e.c, ns, "app", timeout=180)
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def apiserver_restart_watch_recovers(e):
    """The apiserver restarted: dralet's watch comes back, and a slice wiped
    afterwards is written again."""
    before = e.expected  # what discovery says the board has (not a snapshot)
    deploy.wait_published(e.c, before)
    e.c.restart("kube-apiserver")
    e.c.wait_apiserver()
    time.sleep(2)
    victim = deploy.slices(e.c, GPU)[0]["metadata"]["name"]
    e.c.kubectl("delete", "resourceslice", victim)
    t = time.monotonic()
    wait_until("the wiped slice back", lambda: deploy.published_devices(e.c) == before,
               timeout=60, detail=lambda: deploy.agent_logs(e.c))
    FIGURES["wiped slice republished after an apiserver restart"] = \
        f"{time.monotonic() - t:.1f}s"


@scenario("hgx-h100")
def rolling_update_keeps_claims(e):
    """A DaemonSet rolling update (maxSurge 1: the new pod starts beside the
    old one, with its own --pod-uid sockets) while a claim is prepared: the
    workload keeps running, the new agent serves the old claim's unprepare and
    new claims, and only the new pod's sockets are left."""
    ns = "rolling"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "old", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"'])]))
    w.create_pod(e.c, ns, "old", claims=["old"])
    w.wait_running(e.c, ns, "old")
    uid = e.c.get("resourceclaim", "old", "-n", ns)["metadata"]["uid"]
    old_agent = deploy.wait_agent_ready(e.c)["metadata"]["uid"]
    new_pod = deploy.switch_board(e.c, e.root, e.config(e.board))
    new_agent = new_pod["metadata"]["uid"]
    # --pod-uid: the new pod's own sockets, and none of the old pod's left
    drivers = deploy.served_drivers(deploy.agent_log(e.c, new_pod))
    registry = sorted(os.listdir("/var/lib/kubelet/plugins_registry"))
    want = sorted(f"{d}-{new_agent}-reg.sock" for d in drivers)
    if registry != want:
        raise ClusterError(f"registration sockets after the update: {registry}, want {want} "
                           f"(old pod {old_agent})")
    for d in drivers:
        sock = f"/var/lib/kubelet/plugins/{d}/dra-{new_agent}.sock"
        if not os.path.exists(sock):
            raise ClusterError(f"{sock} is missing after the update")
    w.create_claim(e.c, ns, "new", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["{GPU}"].type == "gpu"'])]))
    w.create_pod(e.c, ns, "new", claims=["new"])
    w.wait_running(e.c, ns, "new")
    w.delete(e.c, "pod", ns, "old")
    w.wait_no_spec(uid)
    w.delete(e.c, "namespace", "", ns)


def checkpoint_entries(claim_uid):
    """The GPU driver's checkpoint entries of @claim_uid on the node."""
    with open(f"/var/lib/kubelet/plugins/{GPU}/checkpoint.json") as f:
        return [c for c in json.load(f)["data"]["claims"] if c["uid"] == claim_uid]


def set_agent_env(e, assignment):
    """`kubectl set env` on the DaemonSet (NAME=VALUE, or NAME- to remove):
    a rolling update; does not wait for it."""
    e.c.kubectl("set", "env", "-n", deploy.NAMESPACE, "daemonset/dralet", assignment)


def wait_rollout(e, old_uid):
    e.c.kubectl("rollout", "status", "-n", deploy.NAMESPACE, "daemonset/dralet",
                "--timeout", "240s", timeout=260)
    new = deploy.wait_agent_ready(e.c, not_uid=old_uid)
    deploy.wait_registered(e.c)
    return new


@scenario("hgx-h100")
def rolling_update_during_prepare(e):
    """The DaemonSet updated while the kubelet's NodePrepareResources is in
    flight on the old instance (held 15 s by the test-only DRALET_PAUSE_AT,
    after the device's prepare): both instances run, the operation finishes,
    the pod starts, its claim is in exactly one checkpoint entry, and the new
    instance unprepares it."""
    ns = "rolling-prepare"
    paused = deploy.wait_agent_ready(e.c)
    try:
        set_agent_env(e, "DRALET_PAUSE_AT=prepare-device:15000")
        old = wait_rollout(e, paused["metadata"]["uid"])
        w.namespace(e.c, ns)
        w.create_claim(e.c, ns, "slow", w.claim_spec([w.request("gpu", GPU, [
            f'device.attributes["{GPU}"].type == "gpu"'])]))
        w.create_pod(e.c, ns, "slow", claims=["slow"])
        wait_until("the old instance's prepare in flight",
                   lambda: "DRALET_PAUSE_AT: pausing at prepare-device" in
                   deploy.agent_log(e.c, old), timeout=120, interval=0.5,
                   detail=lambda: w.pod_events(e.c, ns, "slow"))
        t = time.monotonic()
        set_agent_env(e, "DRALET_PAUSE_AT-")	# the update, now
        new = wait_rollout(e, old["metadata"]["uid"])
        w.wait_running(e.c, ns, "slow", timeout=180)
        FIGURES["rolling update during a 15 s prepare: rollout done and pod running"] = \
            f"{time.monotonic() - t:.1f}s after the update started"
    finally:
        if "DRALET_PAUSE_AT" in json.dumps(e.c.get("daemonset", "dralet", "-n",
                                                   deploy.NAMESPACE)["spec"]["template"]):
            set_agent_env(e, "DRALET_PAUSE_AT-")
    uid = e.c.get("resourceclaim", "slow", "-n", ns)["metadata"]["uid"]
    entries = checkpoint_entries(uid)
    if len(entries) != 1 or entries[0]["state"] != "PrepareCompleted":
        raise ClusterError(f"claim {uid} in the checkpoint: {entries}")
    new_log = deploy.agent_log(e.c, new)
    if "DRALET_PAUSE_AT" in new_log:
        raise ClusterError("the new instance has the pause armed:\n" + new_log[-2000:])
    # the new instance's sockets only, and it unprepares what the old one prepared
    registry = os.listdir("/var/lib/kubelet/plugins_registry")
    if any(old["metadata"]["uid"] in f for f in registry):
        raise ClusterError(f"the old instance's sockets are left: {registry}")
    w.delete(e.c, "pod", ns, "slow")
    w.wait_no_spec(uid)
    if checkpoint_entries(uid):
        raise ClusterError(f"claim {uid} still in the checkpoint after its unprepare")
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def pod_start_latency(e):
    """Pod start (create -> Ready) with a DRA claim against one without;
    printed and recorded in docs/performance.md, never asserted."""
    ns = "latency"
    w.namespace(e.c, ns)
    with_claim, without = [], []
    for i in range(5):
        w.create_claim(e.c, ns, f"gpu{i}", w.claim_spec([w.request("gpu", GPU, [
            f'device.attributes["{GPU}"].type == "gpu"'])]))
        with_claim.append(w.measure(lambda: (w.create_pod(e.c, ns, f"claim{i}", [f"gpu{i}"]),
                                             w.wait_running(e.c, ns, f"claim{i}"))))
        without.append(w.measure(lambda: (w.create_pod(e.c, ns, f"plain{i}"),
                                          w.wait_running(e.c, ns, f"plain{i}"))))
    with_claim.sort()
    without.sort()
    FIGURES["pod start, median of 5: with a GPU claim / without"] = \
        f"{with_claim[2]:.2f}s / {without[2]:.2f}s"
    w.delete(e.c, "namespace", "", ns)


# ---- other boards ---------------------------------------------------------

@scenario("fpga-server")
def fpga_by_shell(e):
    """An FPGA chosen by its shell (XRT platform) gets its nodes and env."""
    ns = "fpga"
    fpgas = [d for d in e.devices.values() if d["driver"] == "fpga.dralet.dev"]
    shells = sorted({d["attributes"]["shell"]["string"] for d in fpgas
                     if "shell" in d["attributes"]})
    if not shells:
        raise ClusterError(f"no FPGA with a shell attribute on fpga-server: {fpgas}")
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "fpga", w.claim_spec([w.request("fpga", "fpga.dralet.dev", [
        f'device.attributes["fpga.dralet.dev"].shell == "{shells[0]}"'])]))
    w.create_pod(e.c, ns, "app", claims=["fpga"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "fpga")
    if e.devices[res["device"]]["attributes"]["shell"]["string"] != shells[0]:
        raise ClusterError(f"allocated {res}")
    e.expect_container(ns, "app", [res["device"]])
    w.delete(e.c, "namespace", "", ns)


@scenario("synthetic-1k")
def generic_accelerator(e):
    """A processing accelerator (class 0x12, Gaudi2) through the accel backend,
    on the 1,009-function board (832 devices, every slice accepted)."""
    ns = "accel"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "accel", w.claim_spec([w.request("acc", "accel.dralet.dev")]))
    w.create_pod(e.c, ns, "app", claims=["accel"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "accel")
    e.expect_container(ns, "app", [res["device"]])
    w.delete(e.c, "namespace", "", ns)


@scenario("mi300x")
def amd_gpu(e):
    """An AMD Instinct GPU from the plain GPU class (KFD and DRM render nodes),
    never the board's BMC VGA."""
    ns = "amd"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "gpu", w.claim_spec([w.request("gpu", GPU)]))
    w.create_pod(e.c, ns, "app", claims=["gpu"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "gpu")
    if e.devices[res["device"]]["attributes"]["type"]["string"] != "amdgpu":
        raise ClusterError(f"the GPU class gave {res['device']}: "
                           f"{e.devices[res['device']]['attributes'].get('productName')}")
    view = e.expect_container(ns, "app", [res["device"]])
    if "/dev/kfd" not in view["devices"]:
        raise ClusterError(f"no /dev/kfd in {view['devices']}")
    w.delete(e.c, "namespace", "", ns)


@scenario("vm-like")
def vfio_gpu_for_vm(e):
    """A GPU bound to vfio-pci (the board's L40S) from vfio.gpu.dralet.dev, as a
    KubeVirt virt-launcher pod would ask for it: the container gets the IOMMU group
    node and /dev/vfio/vfio (tests/integration/test_deploy.py shows on every golden
    board that the plain GPU class never selects it)."""
    ns = "vfio"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "gpu", w.claim_spec([w.request("gpu", "vfio." + GPU)]))
    w.create_pod(e.c, ns, "virt-launcher", claims=["gpu"])
    w.wait_running(e.c, ns, "virt-launcher")
    [res] = w.allocation(e.c, ns, "gpu")
    attrs = e.devices[res["device"]]["attributes"]
    if attrs["type"]["string"] != "vfio" or attrs["driver"]["string"] != "vfio-pci":
        raise ClusterError(f"the vfio class gave {res['device']}: {attrs}")
    view = e.expect_container(ns, "virt-launcher", [res["device"]])
    group = "/dev/vfio/%d" % attrs["iommuGroup"]["int"]
    if group not in view["devices"] or "/dev/vfio/vfio" not in view["devices"]:
        raise ClusterError(f"no {group} and /dev/vfio/vfio in {view['devices']}")
    w.delete(e.c, "namespace", "", ns)


@scenario("e810")
def e810_vf(e):
    """An E810 virtual function on the NIC board (every slice accepted)."""
    ns = "e810"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "vf", w.claim_spec([w.request("vf", NET, [
        f'device.attributes["{NET}"].isVF'])]))
    w.create_pod(e.c, ns, "app", claims=["vf"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "vf")
    e.expect_container(ns, "app", [res["device"]])
    w.delete(e.c, "namespace", "", ns)


# ---- device classes and extended resources (deploy/deviceclasses.yaml) ------

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "deploy", "examples", "claims")


def start_example(e, name):
    """Creates the shipped example claim @name (without its offline allocation) and a
    pod using it, in a namespace of its own; returns what check_example needs."""
    with open(os.path.join(EXAMPLES, name)) as f:
        claim = yaml.safe_load(f)
    spec = claim["spec"]
    ns = "example-" + name[:-5]
    admin = any(r.get("exactly", {}).get("adminAccess") for r in spec["devices"]["requests"])
    w.namespace(e.c, ns, {"resource.kubernetes.io/admin-access": "true"} if admin else None)
    w.create_claim(e.c, ns, claim["metadata"]["name"], spec)
    w.create_pod(e.c, ns, "app", claims=[claim["metadata"]["name"]])
    return name, ns, claim


def check_example(e, started):
    """The real scheduler allocated the example's claim from the classes it names, and
    the container got the devices; returns the allocation's results."""
    name, ns, claim = started
    w.wait_running(e.c, ns, "app")
    results = w.allocation(e.c, ns, claim["metadata"]["name"])
    requests = claim["spec"]["devices"]["requests"]
    if len(results) != len(requests):
        raise ClusterError(f"{name}: allocated {results} for {len(requests)} request(s)")
    e.expect_container(ns, "app", [r["device"] for r in results])
    return results


def allocate_example(e, name):
    started = start_example(e, name)
    results = check_example(e, started)
    w.delete(e.c, "namespace", "", started[1])
    return results


@scenario("hgx-h100")
def examples_allocatable(e):
    """Every example claim of deploy/examples/claims for this board is allocated by the
    real scheduler from the shipped classes (mig.gpu, rdma.net ... included), all of
    them at once (the board has the devices for every one)."""
    names = sorted(n for n in os.listdir(EXAMPLES) if n.endswith(".yaml") and n != "fpga.yaml")
    if len(names) < 7:
        raise ClusterError(f"examples: {names}")
    started = [start_example(e, name) for name in names]
    kinds = {}
    for s in started:
        for r in check_example(e, s):
            kinds.setdefault(s[0], []).append(e.devices[r["device"]]["attributes"]["type"]["string"])
    w.delete(e.c, "namespace", "", *[s[1] for s in started])
    want = {"gpu.yaml": ["gpu"], "mig.yaml": ["mig"], "rdma.yaml": ["rdma"], "vf.yaml": ["rdma"],
            "gpu-nic-aligned.yaml": ["gpu", "rdma"]}
    for name, types in want.items():
        if sorted(kinds.get(name, [])) != sorted(types):
            raise ClusterError(f"{name}: device types {kinds.get(name)}, expected {types}")
    FIGURES["examples allocated"] = ", ".join(names + ["fpga.yaml (fpga-server)"])


@scenario("fpga-server")
def fpga_example_allocatable(e):
    """deploy/examples/claims/fpga.yaml on the FPGA board."""
    allocate_example(e, "fpga.yaml")


@scenario("fpga-server")
def fpga_bitstream_programmed(e):
    """A claim names a bitstream (FpgaConfig.bitstream, docs/fpga.md): the image is
    put in the node's store with `dralet fpga add` (the host's /var/lib/dralet/bitstreams,
    which the DaemonSet mounts read-only), the pod starts with the N6001's port node,
    the agent programmed the port (its afu_id in the agent's simulated tree, through
    the board's kernel model) and the container's AFU_ID is the image's; the slice
    then shows loadedBitstream, and a second claim selecting it gets the same region."""
    import struct
    ns = "fpga-bitstream"
    iface = "2f3b8c6e1d4a5b7c9e0f1a2b3c4d5e6f"   # the N6001's PR region (boards/fpga-server.yaml)
    afu = "f7df405cbd7acf7222f144b0b93acd18"

    def dashed(h):
        return "-".join((h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]))
    # an OPAE GBS (docs/fpga.md 1.2) whose PR data starts with the AFU ID's bytes:
    # what the board model's FPGA loads as the port's afu_id
    meta = json.dumps({"version": 1, "afu-image": {
        "magic-no": 488605312, "interface-uuid": dashed(iface),
        "accelerator-clusters": [{"name": "e2e", "total-contexts": 1,
                                  "accelerator-type-uuid": dashed(afu)}]}}).encode()
    image = os.path.join(e.c.dir, "e2e-nlb.gbs")
    with open(image, "wb") as f:
        f.write(bytes.fromhex("58656f6e46504741b747425376303031") + struct.pack("<I", len(meta))
                + meta + bytes.fromhex(afu) + bytes(4080))
    r = subprocess.run([e.dralet, "fpga", "add", "e2e-nlb", image, "--dir",
                        "/var/lib/dralet/bitstreams"], capture_output=True, text=True)
    if r.returncode != 0:
        raise ClusterError(f"dralet fpga add: {r.stderr}")
    w.namespace(e.c, ns)
    config = [{"requests": ["fpga"], "opaque": {"driver": "fpga.dralet.dev", "parameters": {
        "apiVersion": "fpga.dralet.dev/v1alpha1", "kind": "FpgaConfig",
        "bitstream": {"name": "e2e-nlb"}, "onUnprepare": "keep"}}}]
    # not every FPGA device has an interfaceID: has() first (a missing key is an error)
    fpga = 'device.attributes["fpga.dralet.dev"]'
    w.create_claim(e.c, ns, "nlb", w.claim_spec([w.request("fpga", "fpga.dralet.dev", [
        f'has({fpga}.interfaceID) && {fpga}.interfaceID == "{iface}"'])], config=config))
    w.create_pod(e.c, ns, "app", claims=["nlb"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "nlb")
    port = e.devices[res["device"]]["attributes"].get("portDevice", {}).get("string")
    if port != "dfl-port.0":
        raise ClusterError(f"allocated {res}, not the N6001's port")
    view = e.expect_container(ns, "app", [res["device"]])
    if "/dev/dfl-port.0" not in view["devices"]:
        raise ClusterError(f"no /dev/dfl-port.0 in {view['devices']}")
    got = {k: v for k, v in view["env"].items() if k.endswith("_AFU_ID")}
    if list(got.values()) != [afu]:
        raise ClusterError(f"the container's AFU_ID {got}, the image brings {afu}")
    now = agent_board_file(e, "sys/bus/platform/devices/dfl-port.0/afu_id").strip()
    if now != afu:
        raise ClusterError(f"the port shows {now} after the prepare, the image brings {afu}")

    # the agent discovered again after programming: the slice shows the image
    def loaded():
        for sl in e.c.get("resourceslices")["items"]:
            if sl["spec"].get("driver") != "fpga.dralet.dev" or sl["spec"].get("nodeName") != NODE:
                continue
            for d in sl["spec"].get("devices", []):
                if d["name"] == res["device"]:
                    got = d.get("attributes", {}).get("loadedBitstream", {}).get("string")
                    return got == "e2e-nlb" or None
        return None
    wait_until(f"loadedBitstream e2e-nlb in the slice of {res['device']}", loaded, timeout=60)
    # the first claim goes (onUnprepare keep: the image stays); a second claim for the
    # same image selects the programmed region by its loadedBitstream
    w.delete(e.c, "pod", ns, "app")
    w.delete(e.c, "resourceclaim", ns, "nlb")
    w.create_claim(e.c, ns, "again", w.claim_spec([w.request("fpga", "fpga.dralet.dev", [
        f'has({fpga}.loadedBitstream) && {fpga}.loadedBitstream == "e2e-nlb"'])],
        config=config))
    w.create_pod(e.c, ns, "app2", claims=["again"])
    w.wait_running(e.c, ns, "app2")
    [again] = w.allocation(e.c, ns, "again")
    if again["device"] != res["device"]:
        raise ClusterError(f"the second claim got {again['device']}, not the programmed "
                           f"{res['device']}")
    w.delete(e.c, "namespace", "", ns)


def slice_attribute(e, device, key):
    """@device's attribute @key as the node's published fpga.dralet.dev slices
    show it (None when absent)."""
    for sl in e.c.get("resourceslices")["items"]:
        if sl["spec"].get("driver") != "fpga.dralet.dev" or sl["spec"].get("nodeName") != NODE:
            continue
        for d in sl["spec"].get("devices", []):
            if d["name"] == device:
                return next(iter(d.get("attributes", {}).get(key, {}).values()), None)
    return None


@scenario("fpga-server")
def fpga_xclbin_programmed(e):
    """A claim names an xclbin (FpgaConfig.bitstream, docs/fpga.md): the image is put
    in the node's store with `dralet fpga add`; the pod starts with the Alveo U55C's
    user-function nodes, the agent loaded the xclbin through XRT's C API (the image's
    board XRT, which writes the user PF's xclbinuuid in the agent's simulated tree) and
    the container's XCLBIN_UUID is the image's; the slice then shows xclbinUUID and
    loadedBitstream, and a second claim selecting the image gets the same card."""
    import struct
    ns = "fpga-xclbin"
    iface = "5a4ab2ef5c8b4d62a1e7f3d8b2c09e61"   # the U55C mgmt PF's interface_uuids
    uuid = "7e0b3a1c5d2f4e6a8b9c0d1e2f3a4b5c"
    user_pf = "0000:3b:00.1"
    # an axlf (docs/fpga.md 1.3): the 456-byte header, no sections, m_length the file
    length = 4096
    axlf = bytearray(length)
    axlf[0:8] = b"xclbin2\0"
    axlf[304:312] = struct.pack("<Q", length)
    axlf[336:352] = bytes.fromhex(iface)
    vbnv = b"xilinx_u55c_gen3x16_xdma_base_3"
    axlf[352:352 + len(vbnv)] = vbnv
    axlf[416:432] = bytes.fromhex(uuid)
    image = os.path.join(e.c.dir, "e2e-vadd.xclbin")
    with open(image, "wb") as f:
        f.write(axlf)
    r = subprocess.run([e.dralet, "fpga", "add", "e2e-vadd", image, "--dir",
                        "/var/lib/dralet/bitstreams"], capture_output=True, text=True)
    if r.returncode != 0:
        raise ClusterError(f"dralet fpga add: {r.stderr}")
    w.namespace(e.c, ns)
    config = [{"requests": ["fpga"], "opaque": {"driver": "fpga.dralet.dev", "parameters": {
        "apiVersion": "fpga.dralet.dev/v1alpha1", "kind": "FpgaConfig",
        "bitstream": {"name": "e2e-vadd"}, "onUnprepare": "keep"}}}]
    fpga = 'device.attributes["fpga.dralet.dev"]'
    w.create_claim(e.c, ns, "vadd", w.claim_spec([w.request("fpga", "fpga.dralet.dev", [
        f'has({fpga}.interfaceUUID) && {fpga}.interfaceUUID == "{iface}"'])], config=config))
    w.create_pod(e.c, ns, "app", claims=["vadd"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "vadd")
    attrs = e.devices[res["device"]]["attributes"]
    if attrs.get("userPciAddress", {}).get("string") != user_pf:
        raise ClusterError(f"allocated {res}, not the U55C")
    if uuid == attrs.get("xclbinUUID", {}).get("string"):
        raise ClusterError("the board's U55C has the image already: nothing to program")
    view = e.expect_container(ns, "app", [res["device"]])
    if not any(p.startswith("/dev/dri/renderD") for p in view["devices"]):
        raise ClusterError(f"no render node of the user PF in {view['devices']}")
    got = {k: v for k, v in view["env"].items() if k.endswith("_XCLBIN_UUID")}
    if list(got.values()) != [uuid]:
        raise ClusterError(f"the container's XCLBIN_UUID {got}, the image brings {uuid}")
    now = agent_board_file(e, f"sys/bus/pci/devices/{user_pf}/xclbinuuid").strip()
    if now != uuid:
        raise ClusterError(f"the user PF shows xclbinuuid {now} after the prepare, the "
                           f"image brings {uuid}")

    # the agent discovered again after loading: the slice shows the image
    wait_until(f"xclbinUUID {uuid} and loadedBitstream e2e-vadd in the slice of "
               f"{res['device']}",
               lambda: (slice_attribute(e, res["device"], "xclbinUUID") == uuid and
                        slice_attribute(e, res["device"], "loadedBitstream") == "e2e-vadd")
               or None, timeout=60)
    # the first claim goes (keep: the xclbin stays); a second claim for the same image
    # selects the programmed card by its loadedBitstream, and nothing is loaded again
    w.delete(e.c, "pod", ns, "app")
    w.delete(e.c, "resourceclaim", ns, "vadd")
    w.create_claim(e.c, ns, "again", w.claim_spec([w.request("fpga", "fpga.dralet.dev", [
        f'has({fpga}.loadedBitstream) && {fpga}.loadedBitstream == "e2e-vadd"'])],
        config=config))
    w.create_pod(e.c, ns, "app2", claims=["again"])
    w.wait_running(e.c, ns, "app2")
    [again] = w.allocation(e.c, ns, "again")
    if again["device"] != res["device"]:
        raise ClusterError(f"the second claim got {again['device']}, not the programmed "
                           f"{res['device']}")
    view = w.container_view(e.c, ns, "app2")
    got = {k: v for k, v in view["env"].items() if k.endswith("_XCLBIN_UUID")}
    if list(got.values()) != [uuid]:
        raise ClusterError(f"the second container's XCLBIN_UUID {got}, expected {uuid}")
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def bmc_vga_is_no_gpu(e):
    """The board's ASPEED BMC VGA (a DRM card without a render node) is outside the GPU
    class: a claim for it there stays unschedulable, the display class gets it."""
    [bmc] = [n for n, d in e.devices.items()
             if d["attributes"].get("vendorID", {}).get("string") == "0x1a03"]
    ns = "bmc"
    w.namespace(e.c, ns)
    aspeed = f'device.attributes["{GPU}"].vendorID == "0x1a03"'
    w.create_claim(e.c, ns, "as-gpu", w.claim_spec([w.request("gpu", GPU, [aspeed])]))
    w.create_pod(e.c, ns, "as-gpu", claims=["as-gpu"])
    w.create_claim(e.c, ns, "display", w.claim_spec([w.request("d", "display." + GPU)]))
    w.create_pod(e.c, ns, "display", claims=["display"])
    w.wait_running(e.c, ns, "display")
    [res] = w.allocation(e.c, ns, "display")
    if res["device"] != bmc:
        raise ClusterError(f"the display class gave {res['device']}, not the BMC {bmc}")

    def unschedulable():
        pod = e.c.get("pod", "as-gpu", "-n", ns)
        return any(c["type"] == "PodScheduled" and c["status"] == "False" and
                   c.get("reason") == "Unschedulable" for c in pod["status"].get("conditions", []))
    wait_until("the GPU-class claim for the BMC unschedulable", unschedulable, timeout=60)
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def extended_resource_gpu(e):
    """resources.limits {dralet.dev/gpu: 1} without a claim (KEP-5004): on 1.37 the
    scheduler makes the claim from the GPU class and the pod runs with a whole GPU; on
    1.34 (gate off) the server dropped the class's field and the pod stays pending."""
    cls = e.c.get("deviceclass", GPU)
    ns = "extended"
    w.namespace(e.c, ns)
    spec = w.pod_spec()
    spec["containers"][0]["resources"] = {"limits": {"dralet.dev/gpu": "1"}}
    e.c.apply(json.dumps({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "app", "namespace": ns}, "spec": spec}))
    if e.c.version == "1.34":
        if "extendedResourceName" in cls["spec"]:
            raise ClusterError(f"1.34 kept extendedResourceName: {cls['spec']}")

        def pending():
            pod = e.c.get("pod", "app", "-n", ns)
            return any(c["type"] == "PodScheduled" and c["status"] == "False"
                       for c in pod["status"].get("conditions", []))
        wait_until("the limits pod unschedulable on 1.34", pending, timeout=60)
        w.delete(e.c, "namespace", "", ns)
        return
    if cls["spec"].get("extendedResourceName") != "dralet.dev/gpu":
        raise ClusterError(f"the GPU class lost extendedResourceName: {cls['spec']}")
    w.wait_running(e.c, ns, "app")
    st = e.c.get("pod", "app", "-n", ns)["status"].get("extendedResourceClaimStatus") or {}
    claim = st.get("resourceClaimName")
    if not claim:
        raise ClusterError(f"no extendedResourceClaimStatus: {st}")
    [res] = w.allocation(e.c, ns, claim)
    dev = e.devices[res["device"]]
    if dev["attributes"]["type"]["string"] != "gpu" or "H100" not in \
            dev["attributes"]["productName"]["string"]:
        raise ClusterError(f"dralet.dev/gpu gave {res['device']}: {dev['attributes']['type']}")
    e.expect_container(ns, "app", [res["device"]])
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def device_metadata_in_container(e):
    """KEP-5304: the container reads, without the API, a metadata file per request
    naming its device with the PCI address, and for an RDMA VF its netdev and MAC;
    a claim from a template is found under the pod's entry name."""
    ns = "metadata"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "vf", w.claim_spec([w.request("nic", "rdma." + NET, [
        f'device.attributes["{NET}"].isVF'])]))
    w.create_template(e.c, ns, "gpu", w.claim_spec([w.request("gpu", GPU)]))
    w.create_pod(e.c, ns, "app", claims=["vf"], templates=["gpu"])
    w.wait_running(e.c, ns, "app")
    [vf] = w.allocation(e.c, ns, "vf")
    [gpu] = w.allocation(e.c, ns, w.pod_claim(e.c, ns, "app", "t0"))
    view = e.expect_container(ns, "app", [vf["device"], gpu["device"]])
    want = {f"{w.METADATA_DIR}/resourceclaims/vf/nic/{NET}-metadata.json": vf,
            f"{w.METADATA_DIR}/resourceclaimtemplates/t0/gpu/{GPU}-metadata.json": gpu}
    if sorted(view["metadata"]) != sorted(want):
        raise ClusterError(f"metadata files {sorted(view['metadata'])}, expected {sorted(want)}")
    for path, res in want.items():
        m = view["metadata"][path]
        [d] = m["requests"][0]["devices"]
        dev = e.devices[res["device"]]
        if (m["apiVersion"] != "metadata.resource.k8s.io/v1beta1" or d["name"] != res["device"]
                or d["pool"] != res["pool"] or d["driver"] != res["driver"] or
                d["attributes"]["resource.kubernetes.io/pciBusID"]["string"] !=
                dev["pciAddress"]):
            raise ClusterError(f"{path}: {m}")
    nd = view["metadata"][f"{w.METADATA_DIR}/resourceclaims/vf/nic/{NET}-metadata.json"][
        "requests"][0]["devices"][0].get("networkData", {})
    attrs = e.devices[vf["device"]]["attributes"]
    if nd != {"interfaceName": attrs["ifName"]["string"],
              "hardwareAddress": attrs["mac"]["string"]}:
        raise ClusterError(f"networkData {nd} for {vf['device']}")
    tmpl = view["metadata"][f"{w.METADATA_DIR}/resourceclaimtemplates/t0/gpu/{GPU}-metadata.json"]
    if tmpl.get("podClaimName") != "t0":
        raise ClusterError(f"template claim's metadata: {tmpl}")
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def claim_device_status(e):
    """KEP-4817: the prepared claim's status.devices has dralet's entry for the VF it
    got (Ready, with the VF's netdev and MAC), written by the agent through the real
    apiserver's server-side apply and its RBAC; deleting the pod removes it while the
    claim stays (the agent sends nothing at unprepare: the controller deallocates the
    claim and the apiserver drops the entries of deallocated devices)."""
    ns = "status"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "vf", w.claim_spec([w.request("nic", "rdma." + NET, [
        f'device.attributes["{NET}"].isVF'])]))
    w.create_pod(e.c, ns, "app", claims=["vf"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "vf")

    def ours():
        st = e.c.get("resourceclaim", "vf", "-n", ns).get("status", {})
        return [d for d in st.get("devices", []) if d.get("driver") == NET]
    [entry] = wait_until("dralet's device status in claim status/vf", ours, timeout=60)
    attrs = e.devices[res["device"]]["attributes"]
    [cond] = entry.get("conditions", [{}])
    if (entry["pool"], entry["device"]) != (res["pool"], res["device"]) or \
            (cond.get("type"), cond.get("status"), cond.get("reason")) != \
            ("Ready", "True", "Prepared") or \
            entry.get("networkData") != {"interfaceName": attrs["ifName"]["string"],
                                         "hardwareAddress": attrs["mac"]["string"]}:
        raise ClusterError(f"device status {entry} for {res}")
    w.delete(e.c, "pod", ns, "app")
    wait_until("the device status removed after the pod", lambda: not ours(), timeout=60)
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def pcie_aer_taints_device(e):
    """A new uncorrectable PCIe error on an allocated GPU (its AER counter raised in the
    agent's board tree, as the kernel would): the agent's next health round makes it
    Unhealthy, its slice entry gets the taint dralet.dev/pcie-aer, and on 1.37 the kubelet
    shows the pod's device Unhealthy in its status (ResourceHealthStatus, beta and on)."""
    ns = "aer"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "gpu", w.claim_spec([w.request("gpu", GPU)]))
    w.create_pod(e.c, ns, "app", claims=["gpu"])
    w.wait_running(e.c, ns, "app")
    [res] = w.allocation(e.c, ns, "gpu")
    address = e.devices[res["device"]]["pciAddress"]
    agent_board_write(e, f"sys/bus/pci/devices/{address}/aer_dev_fatal",
                      "Undefined 0\nDLP 0\nSDES 0\nTLP 1\nTOTAL_ERR_FATAL 1\n")

    def taint():
        for sl in e.c.get("resourceslices")["items"]:
            if sl["spec"].get("driver") != GPU or sl["spec"].get("nodeName") != NODE:
                continue
            for d in sl["spec"].get("devices", []):
                if d["name"] == res["device"]:
                    return [t for t in d.get("taints", []) if t["key"] == "dralet.dev/pcie-aer"]
        return None
    [t] = wait_until(f"the taint dralet.dev/pcie-aer on {res['device']}", taint, timeout=90)
    if t.get("effect") != "NoSchedule":
        raise ClusterError(f"taint {t}")
    if e.c.version != "1.34":
        def unhealthy():
            pod = e.c.get("pod", "app", "-n", ns)
            for cs in pod["status"].get("containerStatuses", []):
                for ar in cs.get("allocatedResourcesStatus") or []:
                    for r in ar.get("resources", []):
                        if r.get("resourceID", "").endswith(res["device"]) and \
                                r.get("health") == "Unhealthy":
                            return r
            return None
        wait_until("the pod's device Unhealthy in its status", unhealthy, timeout=90)
    w.delete(e.c, "namespace", "", ns)


@scenario("hgx-h100")
def metrics_and_probes(e):
    """The DaemonSet's probes ask the agent's endpoint and the kubelet finds it ready;
    /readyz is 200, /metrics parses as Prometheus text (python3-prometheus-client) and
    counts a claim prepared through the real kubelet."""
    import urllib.request
    from prometheus_client.parser import text_string_to_metric_families
    from cluster import NODE_IP

    pod = deploy.wait_agent_ready(e.c)
    [c] = pod["spec"]["containers"]
    port = c["readinessProbe"]["httpGet"]["port"]
    log = deploy.agent_log(e.c, pod)
    drivers = deploy.served_drivers(log)
    done = re.findall(r"driver (\S+): registered with the kubelet", log)
    if not drivers or not set(drivers) <= set(done):
        raise ClusterError(f"Ready before every driver registered: {drivers} vs {done}")

    def scrape(path):
        with urllib.request.urlopen(f"http://{NODE_IP}:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    if scrape("/readyz") != (200, "ok\n") or scrape("/healthz") != (200, "ok\n"):
        raise ClusterError(f"probes: {scrape('/readyz')} {scrape('/healthz')}")

    def count():
        got = {}
        for fam in text_string_to_metric_families(scrape("/metrics")[1]):
            for smp in fam.samples:
                got[(smp.name, smp.labels.get("driver"))] = smp.value
        return got
    before = count().get(("dralet_claim_prepare_seconds_count", GPU), 0)
    ns = "metrics"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "gpu", w.claim_spec([w.request("gpu", GPU)]))
    w.create_pod(e.c, ns, "app", claims=["gpu"])
    w.wait_running(e.c, ns, "app")
    got = count()
    if got.get(("dralet_claim_prepare_seconds_count", GPU), 0) < before + 1 or \
            got.get(("dralet_prepared_claims", GPU), 0) < 1 or \
            any(got.get(("dralet_driver_registered", d)) != 1 for d in drivers):
        raise ClusterError(f"metrics after a prepare: {sorted(got.items())[:40]}")
    FIGURES["metrics samples"] = str(len(got))
    w.delete(e.c, "namespace", "", ns)


# ---- the agent's process, seen from the node -------------------------------

def agent_pid(e, missing_ok=False):
    """PID of the running `dralet run` (the DaemonSet's container)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"dralet") and len(argv) > 1 and argv[1] == b"run":
            return int(pid)
    if missing_ok:
        return None
    raise ClusterError("no dralet process on the node")


def agent_board_path(e, name):
    """A file in the simulated board tree the agent materialized in its
    container ($TMPDIR or /dev/shm there), through /proc/<pid>/root."""
    root = f"/proc/{agent_pid(e)}/root"
    found = glob.glob(f"{root}/dev/shm/dralet-board.*/{name}") + \
        glob.glob(f"{root}/tmp/dralet-board.*/{name}")
    if len(found) != 1:
        raise ClusterError(f"{name} in the agent's board tree: {found}")
    return found[0]


def agent_board_file(e, name):
    with open(agent_board_path(e, name)) as f:
        return f.read()


def agent_board_write(e, name, text):
    """Rewrites a file of the agent's board tree, as the kernel changes a sysfs
    attribute."""
    with open(agent_board_path(e, name), "w") as f:
        f.write(text)


# ---- hgx-h100-mig: dynamic MIG (a MIG-mode GPU without instances) ----------

MIG_GPU = "gpu-0000-e3-00-0"


def mig_claim(e, ns, name, profile):
    w.create_claim(e.c, ns, name, w.claim_spec([w.request("mig", "mig." + GPU, [
        f'device.attributes["{GPU}"].migProfile == "{profile}"'])]))


def unschedulable(e, ns, pod):
    p = e.c.get("pod", pod, "-n", ns)
    for cond in p["status"].get("conditions", []):
        if cond["type"] == "PodScheduled" and cond["status"] == "False" and \
                cond.get("reason") == "Unschedulable":
            return cond.get("message", "") or "unschedulable"
    return None


@scenario("hgx-h100-mig")
def mig_dynamic_placement(e):
    """Dynamic MIG: the GPU's counter set and its profile x placement
    partitions are published (1.36+); two 3g.40gb claims get the two
    placements the scheduler picks, the agent makes each GPU and compute
    instance at prepare and the containers get them; a third 3g.40gb claim
    waits until one of them is released. On 1.34 (gate off) the slices carry
    neither counters nor partitions, stay still (no write loop), and such a
    claim stays Pending."""
    ns = "mig-dynamic"
    w.namespace(e.c, ns)
    sl = [s for s in e.c.get("resourceslices")["items"] if s["spec"]["driver"] == GPU]
    sets = [c["name"] for s in sl for c in s["spec"].get("sharedCounters", [])]
    if not e.partitionable():
        if sets or any("consumesCounters" in d for s in sl for d in s["spec"].get("devices", [])):
            raise ClusterError(f"counters published on {e.c.version}: {sets}")
        versions = {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in sl}
        mig_claim(e, ns, "a", "3g.40gb")
        w.create_pod(e.c, ns, "app", claims=["a"])
        wait_until("the scheduler's verdict", lambda: unschedulable(e, ns, "app"), timeout=60)
        time.sleep(10)
        now = {s["metadata"]["name"]: s["metadata"]["resourceVersion"]
               for s in e.c.get("resourceslices")["items"] if s["spec"]["driver"] == GPU}
        if now != versions:
            raise ClusterError(f"the slices keep changing: {versions} -> {now}")
        w.delete(e.c, "namespace", "", ns)
        return
    if sets != [MIG_GPU]:
        raise ClusterError(f"counter sets {sets}, expected [{MIG_GPU}]")
    if any(s["spec"].get("sharedCounters") and s["spec"].get("devices") for s in sl):
        raise ClusterError("a slice carries both devices and sharedCounters")
    for name in ("a", "b", "c"):
        mig_claim(e, ns, name, "3g.40gb")
    w.create_pod(e.c, ns, "pa", claims=["a"])
    w.create_pod(e.c, ns, "pb", claims=["b"])
    w.wait_running(e.c, ns, "pa")
    w.wait_running(e.c, ns, "pb")
    got = sorted(w.allocation(e.c, ns, n)[0]["device"] for n in ("a", "b"))
    want = ["mig-0000-e3-00-0-3g-40gb-0", "mig-0000-e3-00-0-3g-40gb-4"]
    if got != want:
        raise ClusterError(f"allocated {got}, expected the two placements {want}")
    minor = e.devices[MIG_GPU]["deviceNodes"][0]["path"]
    for pod in ("pa", "pb"):
        view = w.container_view(e.c, ns, pod)
        caps = [p for p in view["devices"] if p.startswith("/dev/nvidia-caps/")]
        if minor not in view["devices"] or len(caps) != 2:
            raise ClusterError(f"pod {pod}: devices {view['devices']}")
        if not any(k.endswith("_UUID") and v.startswith("MIG-") for k, v in view["env"].items()):
            raise ClusterError(f"pod {pod}: no MIG UUID in {view['env']}")
    # the GPU's memory slices are all taken: the third waits
    w.create_pod(e.c, ns, "pc", claims=["c"])
    wait_until("the third claim unschedulable", lambda: unschedulable(e, ns, "pc"), timeout=60)
    freed = w.allocation(e.c, ns, "a")[0]["device"]
    w.delete(e.c, "pod", ns, "pa")
    w.delete(e.c, "resourceclaim", ns, "a")
    w.wait_running(e.c, ns, "pc", timeout=180)
    [res] = w.allocation(e.c, ns, "c")
    if res["device"] != freed:
        raise ClusterError(f"the third claim got {res}, expected the freed {freed}")
    FIGURES["dynamic MIG: placements the scheduler picked"] = ", ".join(got)
    w.delete(e.c, "namespace", "", ns)


# ---- running them ----------------------------------------------------------

def run_all(c, build, root, only=None):
    e = Env(c, build, root)
    failed = 0
    for board, name, fn in SCENARIOS:
        if only and name not in only:
            continue
        t = time.monotonic()
        try:
            if e.board != board:
                e.use_board(board)
            fn(e)
            REPORT.append((name, time.monotonic() - t, None))
            print(f"PASS  {c.version} {name} ({time.monotonic() - t:.1f}s)", flush=True)
        except Exception as ex:
            failed += 1
            REPORT.append((name, time.monotonic() - t, ex))
            print(f"FAIL  {c.version} {name} ({time.monotonic() - t:.1f}s): {ex}", flush=True)
            traceback.print_exc()
    print(f"e2e {c.version}: {len(REPORT) - failed} passed, {failed} failed")
    for k, v in FIGURES.items():
        print(f"e2e {c.version}: {k}: {v}")
    return 1 if failed else 0


# ---- hgx-h100 with vfio forms: whole-GPU passthrough to a VM ---------------

@scenario("hgx-h100")
def vfio_gpu_passthrough(e):
    """Whole-device VFIO passthrough (docs/sharing.md): with the nvidia backend's
    option vfio "true" every GPU is also published in its vfio form (type vfio,
    one counter with the native form). On 1.37 a KubeVirt-style virt-launcher pod
    gets one from vfio.gpu.dralet.dev: the agent moved the GPU to vfio-pci in the
    node's (simulated) kernel, the container sees /dev/vfio/<group> and
    /dev/vfio/vfio, and a claim for that GPU's native form stays pending until
    the pod is gone, the GPU is back on nvidia and the native claim runs on it.
    On 1.34 (no partitionable devices) the vfio forms are left out, the agent
    said so once, and the GPU slices are not written again (no write loop)."""
    config = e.config(e.board)
    config["backends"]["nvidia"]["options"]["vfio"] = "true"
    pod = deploy.switch_board(e.c, e.root, config)
    try:
        vfio_passthrough_scenario(e, pod)
    finally:
        deploy.switch_board(e.c, e.root, e.config(e.board))


def vfio_passthrough_scenario(e, pod):
    import urllib.request
    from cluster import NODE_IP

    def published():
        return {d["name"]: d for s in deploy.slices(e.c, GPU) for d in s["spec"].get("devices", [])}
    natives = sorted(n for n, d in e.devices.items() if d["driver"] == GPU and
                     d["attributes"].get("type") == {"string": "gpu"} and "uuid" in d["attributes"])
    if not e.partitionable():
        port = pod["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"]

        def slice_writes():
            with urllib.request.urlopen(f"http://{NODE_IP}:{port}/metrics", timeout=10) as r:
                text = r.read().decode()
            return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("dralet_slice_writes_total{") and f'driver="{GPU}"' in line)
        wait_until("the native GPUs published", lambda: all(n in published() for n in natives),
                   timeout=60)
        forms = [n for n in published() if n.endswith("-vfio")]
        sl = deploy.slices(e.c, GPU)
        if forms or any(s["spec"].get("sharedCounters") for s in sl) or \
                any("consumesCounters" in d for s in sl for d in s["spec"].get("devices", [])):
            raise ClusterError(f"1.34 got vfio forms or counters: {forms}")
        log = deploy.agent_log(e.c, pod)
        warned = log.count("vfio forms of GPUs and accelerators) not published")
        if warned != 1:
            raise ClusterError(f"the agent warned {warned} times about the left-out vfio forms")
        versions = {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in sl}
        writes = slice_writes()
        time.sleep(15)
        again = {s["metadata"]["name"]: s["metadata"]["resourceVersion"]
                 for s in deploy.slices(e.c, GPU)}
        if again != versions or slice_writes() != writes:
            raise ClusterError(f"the GPU slices were written again (a write loop): "
                               f"{versions} -> {again}, writes {writes} -> {slice_writes()}")
        FIGURES["vfio forms on 1.34"] = "left out, warned once, slices still"
        return

    wait_until("the vfio forms published",
               lambda: all(n + "-vfio" in published() for n in natives), timeout=90)
    ns = "vfio-passthrough"
    w.namespace(e.c, ns)
    w.create_claim(e.c, ns, "vm", w.claim_spec([w.request("gpu", "vfio." + GPU, [
        f'device.attributes["{GPU}"].nativeDriver == "nvidia"'])]))
    w.create_pod(e.c, ns, "virt-launcher", claims=["vm"])
    w.wait_running(e.c, ns, "virt-launcher")
    [res] = w.allocation(e.c, ns, "vm")
    form = res["device"]
    if not form.endswith("-vfio") or form[:-5] not in natives:
        raise ClusterError(f"the vfio class gave {res}")
    native = form[:-5]
    address = e.devices[native]["pciAddress"]
    driver = os.path.basename(os.readlink(agent_board_path(e, f"sys/bus/pci/devices/{address}/driver")))
    if driver != "vfio-pci":
        raise ClusterError(f"{address} is on {driver} while the VM has it")
    group = e.devices[native]["attributes"]["iommuGroup"]["int"]
    view = w.container_view(e.c, ns, "virt-launcher")
    if f"/dev/vfio/{group}" not in view["devices"] or "/dev/vfio/vfio" not in view["devices"]:
        raise ClusterError(f"no /dev/vfio/{group} and /dev/vfio/vfio in {view['devices']}")
    if any(p.startswith("/dev/nvidia") for p in view["devices"]):
        raise ClusterError(f"the VM's container got NVIDIA nodes: {view['devices']}")
    # the native form of that GPU is no longer allocatable
    w.create_claim(e.c, ns, "native", w.claim_spec([w.request("gpu", GPU, [
        f'device.attributes["resource.kubernetes.io"].pciBusID == "{address}"'])]))
    w.create_pod(e.c, ns, "app", claims=["native"])
    wait_until("the native claim unschedulable", lambda: unschedulable(e, ns, "app"), timeout=60)
    t = time.monotonic()
    w.delete(e.c, "pod", ns, "virt-launcher")
    w.delete(e.c, "resourceclaim", ns, "vm")
    w.wait_running(e.c, ns, "app", timeout=180)
    [res] = w.allocation(e.c, ns, "native")
    if res["device"] != native:
        raise ClusterError(f"the native claim got {res}, expected {native}")
    driver = os.path.basename(os.readlink(agent_board_path(e, f"sys/bus/pci/devices/{address}/driver")))
    if driver != "nvidia":
        raise ClusterError(f"{address} is on {driver} after the VM's claim was released")
    e.expect_container(ns, "app", [native])
    FIGURES["vfio passthrough: VM released to native pod running"] = f"{time.monotonic() - t:.1f}s"
    w.delete(e.c, "namespace", "", ns)
