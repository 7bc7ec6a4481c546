# SPDX-License-Identifier: Apache-2.0
"""dralet deployed on the e2e cluster from its own manifests (deploy/).

The image is the one `make image` builds, imported into the node's containerd
under the name the DaemonSet uses. Every manifest is applied as shipped; the
only local setting is the agent's configuration in the ConfigMap, which names
the simulated board the node "has" (simulatedBoard, docs/boards.md).
"""

import json
import os
import re

import yaml

from cluster import ClusterError, wait_until

NAMESPACE = "dralet"
MANIFESTS = ("namespace.yaml", "serviceaccount.yaml", "rbac.yaml",
             "validatingadmissionpolicy.yaml", "deviceclasses.yaml")
VERSION = "0.1.0"
IMAGE = "ghcr.io/dralet/dralet:" + VERSION


def image_archive(build):
    return os.path.join(build, "image", f"dralet-{VERSION}.oci.tar")


def configmap(root, config):
    """deploy/configmap.yaml with config.yaml replaced by @config (a dict)."""
    with open(os.path.join(root, "deploy", "configmap.yaml")) as f:
        cm = yaml.safe_load(f)
    cm["data"]["config.yaml"] = yaml.safe_dump(config, sort_keys=False)
    return json.dumps(cm)


def agent_pods(c):
    return c.get("pods", "-n", NAMESPACE, "-l", "app.kubernetes.io/name=dralet")["items"]


def pod_ready(pod):
    return any(cond["type"] == "Ready" and cond["status"] == "True"
               for cond in pod.get("status", {}).get("conditions", []))


def agent_logs(c):
    out = []
    for pod in agent_pods(c):
        r = c.kubectl("logs", "-n", NAMESPACE, pod["metadata"]["name"], "--tail", "60",
                      check=False)
        out.append(f"--- {pod['metadata']['name']} ({pod['status'].get('phase')})\n"
                   f"{r.stdout}{r.stderr}")
    return "\n".join(out) or "no dralet pod"


def save_logs(c):
    """Every dralet container's log (and the one before its last restart)
    into the run's logs/ directory, for the post-mortem."""
    for pod in agent_pods(c):
        name = pod["metadata"]["name"]
        for previous in (False, True):
            r = c.kubectl("logs", "-n", NAMESPACE, name, f"--previous={str(previous).lower()}",
                          "--timestamps", check=False)
            if r.returncode == 0:
                suffix = ".previous" if previous else ""
                with open(os.path.join(c.logs, f"dralet-{name}{suffix}.log"), "w") as f:
                    f.write(r.stdout)


def wait_agent_ready(c, timeout=180, not_uid=None):
    """Waits for one Ready dralet pod (other than @not_uid); returns it."""
    def ready():
        pods = [p for p in agent_pods(c)
                if p["metadata"]["uid"] != not_uid and pod_ready(p)
                and not p["metadata"].get("deletionTimestamp")]
        return pods[0] if len(pods) == 1 else None
    return wait_until("the dralet pod Ready", ready, timeout=timeout, interval=1,
                      detail=lambda: agent_logs(c))


def served_drivers(log):
    """The drivers an agent container's log says it serves the kubelet for
    (every enabled backend's, devices or not)."""
    return sorted(set(re.findall(r"kubelet: driver (\S+) serving", log)))


def agent_log(c, pod):
    return c.kubectl("logs", "-n", NAMESPACE, pod["metadata"]["name"])


def wait_registered(c, timeout=120):
    """Waits until the running agent container says every one of its drivers
    is registered with the kubelet (its log: "driver X: registered with the
    kubelet"). Its readiness probe (/readyz) says the same, except for a
    rolling update's new instance while the previous one still serves."""
    def registered():
        pods = [p for p in agent_pods(c) if pod_ready(p)
                and not p["metadata"].get("deletionTimestamp")]
        if len(pods) != 1:
            return False
        log = agent_log(c, pods[0])
        drivers = served_drivers(log)
        done = re.findall(r"driver (\S+): registered with the kubelet", log)
        return drivers and set(drivers) <= set(done)
    wait_until("every dralet driver registered with the kubelet", registered,
               timeout=timeout, interval=0.5, detail=lambda: agent_logs(c))


def slices(c, driver=None):
    items = c.get("resourceslices")["items"]
    return [s for s in items if driver is None or s["spec"]["driver"] == driver]


def published_devices(c):
    """{driver: sorted device names} over the node's slices."""
    out = {}
    for s in slices(c):
        out.setdefault(s["spec"]["driver"], []).extend(
            d["name"] for d in s["spec"].get("devices", []))
    return {k: sorted(v) for k, v in out.items()}


def wait_published(c, expected, timeout=120):
    """Waits until the slices carry exactly @expected ({driver: [names]})."""
    def done():
        return published_devices(c) == expected
    return wait_until("dralet's ResourceSlices", done, timeout=timeout, interval=1,
                      detail=lambda: f"published: { {k: len(v) for k, v in published_devices(c).items()} }, "
                      f"expected: { {k: len(v) for k, v in expected.items()} }\n" + agent_logs(c))


def deploy(c, build, root, config):
    """Imports the image and applies deploy/ with the agent configuration
    @config (a dict) in the ConfigMap; returns the Ready pod."""
    c.import_image(image_archive(build))
    for name in MANIFESTS:
        c.kubectl("apply", "-f", os.path.join(root, "deploy", name))
    c.apply(configmap(root, config))
    c.kubectl("apply", "-f", os.path.join(root, "deploy", "daemonset.yaml"))
    wait_registered(c)
    return wait_agent_ready(c)


def switch_board(c, root, config):
    """A new agent configuration (the node "gets" other hardware), rolled out
    as an operator does: new ConfigMap, then a rolling restart."""
    old = wait_agent_ready(c)
    save_logs(c)
    c.apply(configmap(root, config))
    # The kubelet hands a new pod the ConfigMap from its watch cache, which
    # may not have the update yet. The agent logs the board it got; a pod
    # with the previous configuration is restarted, as an operator would.
    # (Not seen so far: the 34-GPU agent CI showed after hgx-h100-mig had the
    # right board and a stale dynamic MIG mark, fixed in the nvidia backend.)
    want = f"simulated board {config['simulatedBoard']} in "
    for attempt in range(3):
        c.kubectl("rollout", "restart", "-n", NAMESPACE, "daemonset/dralet")
        c.kubectl("rollout", "status", "-n", NAMESPACE, "daemonset/dralet", "--timeout",
                  "180s", timeout=200)
        new = wait_agent_ready(c, not_uid=old["metadata"]["uid"])
        wait_registered(c)
        if "simulatedBoard" not in config or want in agent_log(c, new):
            return new
        old = new
    raise ClusterError(f"three rollouts and the agent still has not got the ConfigMap "
                       f"with {config.get('simulatedBoard')}")
