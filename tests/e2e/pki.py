# SPDX-License-Identifier: Apache-2.0
"""The e2e cluster's certificates, made locally with the openssl command.

One CA signs every serving and client certificate; client identities follow
the names the Node and RBAC authorizers expect (system:node:<node> in
system:nodes, system:kube-controller-manager, ...).
"""

import os
import subprocess

# user -> (common name, organization or None)
CLIENTS = {
    "admin": ("dralet-e2e-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", None),
    "scheduler": ("system:kube-scheduler", None),
    "kube-proxy": ("system:kube-proxy", None),
    "apiserver-kubelet": ("kube-apiserver-kubelet-client", "system:masters"),
}


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


class Pki:
    def __init__(self, directory, node, node_ip, service_cidr):
        self.dir = directory
        self.node, self.node_ip = node, node_ip
        # the first address of the service range is the kubernetes Service
        base = service_cidr.split("/")[0].split(".")
        self.service_ip = ".".join(base[:3] + [str(int(base[3]) + 1)])
        self.ca_cert = self.file("ca.crt")
        self.ca_key = self.file("ca.key")
        self.sa_key = self.file("sa.key")
        self.sa_pub = self.file("sa.pub")
        self.apiserver = (self.file("apiserver.crt"), self.file("apiserver.key"))
        self.kubelet_serving = (self.file("kubelet.crt"), self.file("kubelet.key"))
        self.client = {}

    def file(self, name):
        return os.path.join(self.dir, name)

    def key(self, path):
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-out", path)

    def sign(self, name, subject, ext):
        key, csr, crt = (self.file(name + s) for s in (".key", ".csr", ".crt"))
        extfile = self.file(name + ".ext")
        self.key(key)
        openssl("req", "-new", "-key", key, "-subj", subject, "-out", csr)
        with open(extfile, "w") as f:
            f.write(ext)
        openssl("x509", "-req", "-in", csr, "-CA", self.ca_cert, "-CAkey", self.ca_key,
                "-CAcreateserial", "-days", "7", "-sha256", "-extfile", extfile, "-out", crt)
        return crt, key

    def create(self):
        os.makedirs(self.dir, exist_ok=True)
        self.key(self.ca_key)
        openssl("req", "-x509", "-new", "-key", self.ca_key, "-subj", "/CN=dralet-e2e-ca",
                "-days", "7", "-sha256", "-out", self.ca_cert)
        self.key(self.sa_key)
        openssl("pkey", "-in", self.sa_key, "-pubout", "-out", self.sa_pub)

        server = "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n" \
                 "extendedKeyUsage=serverAuth\n"
        client = "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n" \
                 "extendedKeyUsage=clientAuth\n"
        names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 "kubernetes.default.svc.cluster.local", "localhost"]
        san = ",".join([f"DNS:{n}" for n in names] +
                       [f"IP:{ip}" for ip in ("127.0.0.1", self.node_ip, self.service_ip)])
        self.sign("apiserver", "/CN=kube-apiserver", server + f"subjectAltName={san}\n")
        self.sign("kubelet", f"/CN={self.node}",
                  server + f"subjectAltName=DNS:{self.node},IP:{self.node_ip}\n")
        for user, (cn, org) in CLIENTS.items():
            subject = f"/CN={cn}" + (f"/O={org}" if org else "")
            self.client[user] = self.sign("client-" + user, subject, client)
        self.client["kubelet"] = self.sign("client-kubelet",
                                           f"/CN=system:node:{self.node}/O=system:nodes", client)
