# SPDX-License-Identifier: Apache-2.0
"""A one-node Kubernetes cluster for the e2e suite, built from upstream modules.

Everything runs inside a sandbox the suite makes for itself (sandbox.py): its
own network, mount and PID namespaces, so the cluster listens on addresses
nobody else sees, its mounts vanish with it, and every process it started
dies when it ends. Inside, the standard node paths (/var/lib/kubelet,
/var/run/cdi, /run/containerd, ...) are private directories under the run
directory, so dralet's own manifests work unchanged.

Components (one multi-call binary per Kubernetes version, see k8s/):
etcd, kube-apiserver (Node + RBAC authorization, NodeRestriction),
kube-controller-manager, kube-scheduler, kube-proxy, the kubelet, and
containerd 2 with Debian's runc, CNI bridge networking and CDI enabled.
"""

import json
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request

import pki
import sandbox

NODE = "dralet-e2e"
NODE_IP = "10.200.0.2"
SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/24"
PAUSE_IMAGE = "localhost/dralet-e2e/pause:1"
BUSYBOX_IMAGE = "localhost/dralet-e2e/busybox:1"

# The DRA gates each version needs for the scenarios (on by default where GA
# or beta-on; listed anyway so a version that dropped one says so loudly).
FEATURE_GATES = {
    "1.34": {"DRAAdminAccess": True, "DRADeviceTaints": True,
             "DRAResourceClaimDeviceStatus": True},
    "1.37": {"DRAAdminAccess": True, "DRADeviceTaints": True, "DRAConsumableCapacity": True},
}


# APIs a gate above needs: 1.34's alpha device taints come with DeviceTaintRule
# (resource.k8s.io/v1alpha3), whose informer the scheduler waits for.
RUNTIME_CONFIG = {
    "1.34": "resource.k8s.io/v1alpha3=true",
    "1.37": "",
}


class ClusterError(RuntimeError):
    pass


class Process:
    """A component process with its log file; stopped with SIGTERM, then SIGKILL."""

    def __init__(self, name, argv, log_dir, env=None):
        self.name, self.argv = name, argv
        self.log_path = os.path.join(log_dir, name + ".log")
        self.env = env
        self.proc = None
        self.starts = 0

    def start(self):
        self.starts += 1
        log = open(self.log_path, "ab")
        log.write(f"==== start {self.starts}: {' '.join(self.argv)}\n".encode())
        log.flush()
        self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=self.env,
                                     start_new_session=True)
        log.close()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if not self.running():
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def since_start(self):
        """The log written since the process last started."""
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return text[text.rfind("==== start"):]

    def tail(self, lines=40):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return ""


def wait_until(what, check, timeout=120, interval=0.5, detail=None):
    """Calls check() until it returns something true; raises ClusterError on timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except Exception as e:  # the check's own failures are retried
            last = e
        time.sleep(interval)
    message = f"timed out after {timeout}s waiting for {what}"
    if last:
        message += f" (last error: {last})"
    if detail:
        message += "\n" + detail()
    raise ClusterError(message)


class Cluster:
    def __init__(self, version, bin_dir, runtime_dir, run_dir):
        self.version = version
        self.bin = os.path.join(bin_dir, "k8s")
        self.runtime_dir = runtime_dir
        self.dir = run_dir
        self.logs = os.path.join(run_dir, "logs")
        self.pki = None
        self.procs = {}
        self.gates = ",".join(f"{k}={str(v).lower()}"
                              for k, v in FEATURE_GATES[version].items())
        self.kubeconfig = os.path.join(run_dir, "admin.kubeconfig")
        self.cgroup_root = "/" + sandbox.cgroup_name(version)

    # ---- helpers -------------------------------------------------------

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def kubectl(self, *args, input=None, check=True, timeout=120):
        """Runs the real kubectl as cluster-admin; returns its stdout."""
        r = subprocess.run([self.bin, "kubectl", "--kubeconfig", self.kubeconfig, *args],
                           input=input, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)} failed ({r.returncode}):\n"
                               f"{r.stderr.strip()}")
        return r.stdout if check else r

    def get(self, *args):
        """kubectl get ... -o json, parsed."""
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def apply(self, manifest_text):
        return self.kubectl("apply", "-f", "-", input=manifest_text)

    def ctr(self, *args, check=True):
        r = subprocess.run([os.path.join(self.runtime_dir, "ctr"), "--address",
                            "/run/containerd/containerd.sock", "-n", "k8s.io", *args],
                           capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            raise ClusterError(f"ctr {' '.join(args)} failed: {r.stderr.strip()}")
        return r.stdout

    def component(self, name, argv, env=None):
        p = Process(name, argv, self.logs, env)
        self.procs[name] = p
        p.start()
        return p

    def alive(self, name):
        p = self.procs[name]
        if not p.running():
            raise ClusterError(f"{name} exited ({p.proc.returncode}):\n{p.tail()}")
        return True

    def https_ok(self, url, cert):
        ctx = ssl.create_default_context(cafile=self.pki.ca_cert)
        ctx.load_cert_chain(*cert)
        with urllib.request.urlopen(url, context=ctx, timeout=5) as r:
            return r.status == 200

    # ---- start ----------------------------------------------------------

    def start(self):
        for d in ("logs", "etcd", "containerd", "cni", "kubelet-pki"):
            os.makedirs(self.path(d), exist_ok=True)
        self.pki = pki.Pki(self.path("pki"), NODE, NODE_IP, SERVICE_CIDR)
        self.pki.create()
        self.write_kubeconfigs()
        self.start_etcd()
        self.start_apiserver()
        self.start_control_plane()
        self.start_containerd()
        self.start_kubelet()
        self.start_kube_proxy()

    def write_kubeconfigs(self):
        for user in ("admin", "controller-manager", "scheduler", "kubelet", "kube-proxy"):
            cert, key = self.pki.client[user]
            with open(self.path(f"{user}.kubeconfig"), "w") as f:
                f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://{NODE_IP}:6443
    certificate-authority: {self.pki.ca_cert}
users:
- name: {user}
  user:
    client-certificate: {cert}
    client-key: {key}
contexts:
- name: e2e
  context: {{cluster: e2e, user: {user}}}
current-context: e2e
""")

    def start_etcd(self):
        self.component("etcd", [
            self.bin, "etcd", "--name", "e2e", "--data-dir", self.path("etcd"),
            "--listen-client-urls", "http://127.0.0.1:2379",
            "--advertise-client-urls", "http://127.0.0.1:2379",
            "--listen-peer-urls", "http://127.0.0.1:2380",
            "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
            "--initial-cluster", "e2e=http://127.0.0.1:2380",
            "--unsafe-no-fsync", "--log-level", "warn"])

        def healthy():
            self.alive("etcd")
            with urllib.request.urlopen("http://127.0.0.1:2379/health", timeout=2) as r:
                return json.load(r).get("health") == "true"
        wait_until("etcd", healthy, timeout=60, detail=self.procs["etcd"].tail)

    def apiserver_argv(self):
        p = self.pki
        return [
            self.bin, "kube-apiserver",
            "--etcd-servers", "http://127.0.0.1:2379",
            "--bind-address", "0.0.0.0", "--secure-port", "6443",
            "--advertise-address", NODE_IP,
            "--tls-cert-file", p.apiserver[0], "--tls-private-key-file", p.apiserver[1],
            "--client-ca-file", p.ca_cert,
            "--kubelet-client-certificate", p.client["apiserver-kubelet"][0],
            "--kubelet-client-key", p.client["apiserver-kubelet"][1],
            "--kubelet-certificate-authority", p.ca_cert,
            "--kubelet-preferred-address-types", "InternalIP",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", p.sa_pub,
            "--service-account-signing-key-file", p.sa_key,
            "--service-cluster-ip-range", SERVICE_CIDR,
            "--authorization-mode", "Node,RBAC",
            "--enable-admission-plugins", "NodeRestriction",
            "--allow-privileged=true",
            "--feature-gates", self.gates,
            "--runtime-config", RUNTIME_CONFIG[self.version],
            "--cert-dir", self.path("apiserver"),
            "--profiling=false", "--v", "1"]

    def start_apiserver(self):
        self.component("kube-apiserver", self.apiserver_argv())
        self.wait_apiserver()

    def wait_apiserver(self, timeout=120):
        def ready():
            self.alive("kube-apiserver")
            return self.https_ok(f"https://{NODE_IP}:6443/readyz", self.pki.client["admin"])
        wait_until("kube-apiserver /readyz", ready, timeout=timeout,
                   detail=self.procs["kube-apiserver"].tail)

    def start_control_plane(self):
        p = self.pki
        kcm = self.path("controller-manager.kubeconfig")
        self.component("kube-controller-manager", [
            self.bin, "kube-controller-manager",
            "--kubeconfig", kcm, "--authentication-kubeconfig", kcm,
            "--authorization-kubeconfig", kcm,
            "--service-account-private-key-file", p.sa_key,
            "--root-ca-file", p.ca_cert,
            "--cluster-signing-cert-file", p.ca_cert,
            "--cluster-signing-key-file", p.ca_key,
            "--use-service-account-credentials=true",
            "--leader-elect=false", "--bind-address", "127.0.0.1",
            "--feature-gates", self.gates, "--v", "1"])
        sched = self.path("scheduler.kubeconfig")
        self.component("kube-scheduler", [
            self.bin, "kube-scheduler",
            "--kubeconfig", sched, "--authentication-kubeconfig", sched,
            "--authorization-kubeconfig", sched,
            "--leader-elect=false", "--bind-address", "127.0.0.1",
            "--feature-gates", self.gates, "--v", "1"])

        def service_account_ready():
            self.alive("kube-controller-manager")
            self.alive("kube-scheduler")
            sa = self.kubectl("get", "serviceaccount", "default", "-n", "default",
                              check=False)
            return sa.returncode == 0
        wait_until("the controller manager (default ServiceAccount)", service_account_ready,
                   timeout=120, detail=self.procs["kube-controller-manager"].tail)

    def start_containerd(self):
        cni = self.path("cni")
        with open(os.path.join(cni, "10-e2e.conflist"), "w") as f:
            json.dump({
                "cniVersion": "1.0.0", "name": "e2e",
                "plugins": [
                    {"type": "bridge", "bridge": "cni0", "isGateway": True,
                     "ipMasq": False, "hairpinMode": True,
                     "ipam": {"type": "host-local", "dataDir": self.path("cni-ipam"),
                              "ranges": [[{"subnet": POD_CIDR}]],
                              "routes": [{"dst": "0.0.0.0/0"}]}},
                    {"type": "portmap", "capabilities": {"portMappings": True}}]}, f)
        config = self.path("containerd.toml")
        with open(config, "w") as f:
            f.write(f"""version = 3
root = "{self.path('containerd')}"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "{PAUSE_IMAGE}"
[plugins.'io.containerd.cri.v1.runtime']
  # these machines deny CAP_SYS_RESOURCE: no oom_score_adj below our own
  restrict_oom_score_adj = true
  enable_cdi = true
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "{cni}"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = "/usr/sbin/runc"
      SystemdCgroup = false
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
""")
        env = dict(os.environ, PATH=self.runtime_dir + ":" + os.environ["PATH"])
        self.component("containerd", [os.path.join(self.runtime_dir, "containerd"),
                                      "--config", config, "--log-level", "warn"], env=env)

        def serving():
            self.alive("containerd")
            self.ctr("version")
            return True
        wait_until("containerd", serving, timeout=60, detail=self.procs["containerd"].tail)

    def import_image(self, archive):
        self.ctr("images", "import", "--all-platforms", archive)

    def kubelet_config(self):
        gates = "\n".join(f"  {k}: {str(v).lower()}"
                          for k, v in FEATURE_GATES[self.version].items())
        with open(self.path("resolv.conf"), "w") as f:
            f.write("nameserver 127.0.0.1\n")
        path = self.path("kubelet.yaml")
        with open(path, "w") as f:
            f.write(f"""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: true}}
  x509: {{clientCAFile: {self.pki.ca_cert}}}
authorization: {{mode: Webhook}}
tlsCertFile: {self.pki.kubelet_serving[0]}
tlsPrivateKeyFile: {self.pki.kubelet_serving[1]}
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: {self.cgroup_root}
failCgroupV1: false
failSwapOn: false
resolvConf: {self.path('resolv.conf')}
readOnlyPort: 0
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {{memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}}
featureGates:
{gates}
""")
        return path

    def start_kubelet(self):
        self.procs.pop("kubelet", None)
        self.component("kubelet", [
            self.bin, "kubelet", "--config", self.kubelet_config(),
            "--kubeconfig", self.path("kubelet.kubeconfig"),
            "--hostname-override", NODE, "--node-ip", NODE_IP, "--v", "2"])
        self.wait_node_ready()

    def wait_node_ready(self, timeout=180):
        def ready():
            self.alive("kubelet")
            node = self.get("node", NODE)
            return any(c["type"] == "Ready" and c["status"] == "True"
                       for c in node["status"].get("conditions", []))
        wait_until(f"node {NODE} Ready", ready, timeout=timeout, interval=1,
                   detail=self.procs["kubelet"].tail)

    def start_kube_proxy(self):
        self.component("kube-proxy", [
            self.bin, "kube-proxy", "--kubeconfig", self.path("kube-proxy.kubeconfig"),
            "--hostname-override", NODE, "--cluster-cidr", POD_CIDR,
            "--proxy-mode", "iptables", "--conntrack-max-per-core", "0",
            "--metrics-bind-address", "127.0.0.1:10249",
            "--healthz-bind-address", "127.0.0.1:10256", "--v", "1"])

        def programmed():
            self.alive("kube-proxy")
            with socket.create_connection(("10.96.0.1", 443), timeout=2):
                return True
        wait_until("kube-proxy (the kubernetes Service answers)", programmed, timeout=60,
                   detail=self.procs["kube-proxy"].tail)

    # ---- restarts and stop ---------------------------------------------

    def restart(self, name, sig=signal.SIGTERM):
        p = self.procs[name]
        p.stop(sig)
        p.start()

    def stop(self):
        for name in ("kube-proxy", "kubelet", "kube-scheduler", "kube-controller-manager",
                     "kube-apiserver", "containerd", "etcd"):
            if name in self.procs:
                self.procs[name].stop()
