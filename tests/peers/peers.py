# SPDX-License-Identifier: Apache-2.0
"""The peers' node plugins next to dralet on the e2e cluster's node.

Each runs as a host process inside the e2e sandbox (the node's namespaces, as
their DaemonSets' hostPath mounts and privileged containers give them), with
the objects of its own manifests applied unchanged but for the DaemonSet: the
ServiceAccount, RBAC, DeviceClass (and the example driver's admission policy),
and the settings its DaemonSet passes (environment, arguments). Its
credentials are a token of its own ServiceAccount bound to the Node, as the
kubelet's projected token for its pod would carry the node's name.
"""

import functools
import glob
import os
import subprocess

import yaml

from cluster import NODE, NODE_IP, Process, wait_until

@functools.cache
def modcache():
    go = os.environ.get("GO", "/usr/local/go/bin/go")
    return subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True,
                          check=True).stdout.strip()


def pinned(root, module_dir, module):
    """The version of @module tests/peers/@module_dir/go.mod pins."""
    with open(os.path.join(root, "tests", "peers", module_dir, "go.mod")) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0] == module:
                return parts[1]
    raise RuntimeError(f"tests/peers/{module_dir}/go.mod does not pin {module}")


def source(root, module_dir, module):
    return os.path.join(modcache(), f"{module}@{pinned(root, module_dir, module)}")


def token_kubeconfig(c, ns, sa, path):
    """A kubeconfig with a Node-bound token of ServiceAccount @ns/@sa."""
    token = c.kubectl("create", "token", sa, "-n", ns, "--duration", "6h",
                      "--bound-object-kind", "Node", "--bound-object-name", NODE).strip()
    with open(path, "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {{server: "https://{NODE_IP}:6443", certificate-authority: {c.pki.ca_cert}}}
users:
- name: {sa}
  user: {{token: {token}}}
contexts:
- name: e2e
  context: {{cluster: e2e, user: {sa}}}
current-context: e2e
""")
    return path


def apply_but_daemonset(c, docs):
    """Applies every manifest of @docs but the DaemonSet; returns the
    DaemonSet's first container (what the host process is started as)."""
    daemonset = None
    for d in docs:
        if d["kind"] == "DaemonSet":
            daemonset = d
        else:
            c.apply(yaml.safe_dump(d))
    return daemonset["spec"]["template"]["spec"]["containers"][0]


class Peer:
    """One peer: name (the table's column), driver, device class, the
    ServiceAccount's user name (the audit log's), and its process."""

    exe = None

    def __init__(self, c, build, root):
        self.c, self.build, self.root = c, build, root
        self.proc = None

    def pids(self):
        return [self.proc.proc.pid] if self.proc and self.proc.running() else []

    def published(self):
        items = self.c.get("resourceslices")["items"]
        return sum(len(s["spec"].get("devices", [])) for s in items
                   if s["spec"]["driver"] == self.driver)

    def wait_published(self, at_least):
        wait_until(f"{self.name}'s ResourceSlices ({at_least} devices)",
                   lambda: self.published() >= at_least, timeout=180, interval=1,
                   detail=lambda: self.proc.tail())


class ExampleDriver(Peer):
    name = "example driver"
    driver = "gpu.example.com"
    device_class = "gpu.example.com"
    namespace = "dra-example-driver"
    sa = "dra-example-driver-service-account"
    exe = "dra-example-kubeletplugin"

    def manifests(self, devices):
        chart = os.path.join(source(self.root, "example", "sigs.k8s.io/dra-example-driver"),
                             "deployments", "helm", "dra-example-driver")
        env = dict(os.environ, HELM_CACHE_HOME=self.c.path("helm"),
                   HELM_CONFIG_HOME=self.c.path("helm"), HELM_DATA_HOME=self.c.path("helm"))
        out = subprocess.run([os.path.join(self.c.runtime_dir, "helm"), "template",
                              "dra-example-driver", chart, "--namespace", self.namespace,
                              "--set", f"kubeletPlugin.numDevices={devices}"],
                             capture_output=True, text=True, check=True, env=env).stdout
        return [d for d in yaml.safe_load_all(out) if d]

    def start(self, devices):
        self.c.kubectl("create", "namespace", self.namespace)
        plugin = apply_but_daemonset(self.c, self.manifests(devices))
        env = dict(os.environ)
        for e in plugin["env"]:
            if "value" in e:
                env[e["name"]] = e["value"]
        env.update(NODE_NAME=NODE, NAMESPACE=self.namespace,
                   KUBECONFIG=token_kubeconfig(self.c, self.namespace, self.sa,
                                               self.c.path("example.kubeconfig")))
        argv = [os.path.join(self.build, "peers", self.exe)]
        self.proc = Process("dra-example-kubeletplugin", argv, self.c.logs, env)
        self.proc.start()
        self.wait_published(devices)


class Dranet(Peer):
    name = "DRANET"
    driver = "dra.net"
    device_class = "dranet"
    namespace = "kube-system"
    sa = "dranet"
    exe = "dranet"

    def start(self, devices):
        """@devices interfaces in the node's network namespace (the
        sandbox's own, which the benchmark created), then DRANET with its
        DaemonSet's arguments. The interfaces are macvlans on the sandbox's
        spare veth end: this kernel has no dummy driver (no module to load),
        and DRANET's default filter leaves veths out."""
        for i in range(devices):
            subprocess.run(["ip", "link", "add", f"bench{i}", "link", "e2e1", "type",
                            "macvlan", "mode", "bridge"], check=True)
            subprocess.run(["ip", "link", "set", f"bench{i}", "up"], check=True)
        src = source(self.root, "dranet", "github.com/google/dranet")
        with open(os.path.join(src, "install.yaml")) as f:
            plugin = apply_but_daemonset(self.c, [d for d in yaml.safe_load_all(f) if d])
        classes = glob.glob(os.path.join(src, "examples", "demo_nvidia_dranet",
                                         "deviceclass.yaml"))
        with open(classes[0]) as f:
            self.c.apply(f.read())
        args = [a.replace("$(NODE_NAME)", NODE) for a in plugin["args"][1:]]
        argv = [os.path.join(self.build, "peers", self.exe), *args,
                "--kubeconfig", token_kubeconfig(self.c, self.namespace, self.sa,
                                                 self.c.path("dranet.kubeconfig"))]
        self.proc = Process("dranet", argv, self.c.logs)
        self.proc.start()
        self.wait_published(devices)
