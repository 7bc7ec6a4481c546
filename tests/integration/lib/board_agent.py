# SPDX-License-Identifier: Apache-2.0
"""`dralet run` on a simulated node, driven with `dralet ctl`, for the
integration tests that prepare claims through the driver's DRA socket.

What it starts: BoardAgent.start() runs one `dralet run` with the node given
(`--board FILE`, or `--sysfs-root/--dev-root/--proc-root` of a tree made with
`dralet board materialize`), a config file, and --store, --plugins-dir,
--registry-dir, --cdi-dir and --node-name under its temp dir; it waits for
<plugins>/<driver>/dra.sock. Its output goes to <tmp>/dralet.log.

Who owns what: a BoardAgent owns its temp dir (agent.tmp, made with
tempfile.mkdtemp: store/, plugins/, cdi/, registry/, boards/ where a --board
agent materializes its tree as its TMPDIR; the test may put its own files
there too) and the daemon process. stop() ends the daemon with SIGTERM and
fails the test unless it exits 0; close() kills a daemon still running and
removes the temp dir. Use it as `with BoardAgent(...) as agent:`, which
calls close() however the block ends.

How a test fails: fail() prints "FAIL: why" (with the tail of the daemon's
log when given one) and exits 1; skip() prints "SKIP: why" and exits 77,
which tests/run-tests.sh counts as failed (a test that cannot run is no
pass). A test may also just raise (assert): the with block then writes the
daemon's log tail to stderr before the exception ends the test (exit 1).
Run with /usr/bin/python3.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def fail(why, log=None):
    print("FAIL: " + why)
    if log and os.path.exists(log):
        with open(log) as f:
            print("---- dralet run ----\n" + f.read()[-4000:])
    sys.exit(1)


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def dralet_or_skip():
    """$DRALET, the dralet under test; skip() when it is not set."""
    dralet = os.environ.get("DRALET")
    if not dralet or not os.access(dralet, os.X_OK):
        skip("DRALET is not set")
    return dralet


def test_lib(name):
    """$BUILD/tests/lib/NAME.so (BUILD defaults to the repository's build/);
    fail() when it is not built."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    build = os.path.abspath(os.environ.get("BUILD", os.path.join(repo, "build")))
    path = os.path.join(build, "tests", "lib", name + ".so")
    if not os.path.exists(path):
        fail("%s is not built (make test-libs)" % path)
    return path


class BoardAgent:
    def __init__(self, dralet, driver, prefix, node="node-1"):
        """PREFIX names the temp dir (tempfile.mkdtemp's prefix)."""
        tmp = tempfile.mkdtemp(prefix=prefix)
        self.dralet, self.tmp, self.driver, self.node = dralet, tmp, driver, node
        self.log = os.path.join(tmp, "dralet.log")
        self.store = os.path.join(tmp, "store")
        self.plugins = os.path.join(tmp, "plugins")
        self.cdi = os.path.join(tmp, "cdi")
        self.registry = os.path.join(tmp, "registry")
        self.boards = os.path.join(tmp, "boards")
        self.sock = os.path.join(self.plugins, driver, "dra.sock")
        self.proc = None
        os.makedirs(os.path.join(self.store, "resourceclaims", "default"))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not issubclass(exc_type, SystemExit) and \
                os.path.exists(self.log):
            with open(self.log) as f:
                sys.stderr.write("---- dralet run ----\n" + f.read()[-6000:])
        self.close()
        return False

    def fail(self, why):
        fail(why, self.log)

    def write(self, name, text):
        """Writes TEXT to NAME in the agent's directory (a board, a config); its path."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def wait_until(self, cond, why, timeout=20):
        """Polls COND every 0.1 s; after TIMEOUT s fails with why() and the log."""
        deadline = time.time() + timeout
        while not cond():
            if time.time() > deadline:
                self.fail(why())
            time.sleep(0.1)

    def materialize(self, board):
        """`dralet board materialize BOARD <tmp>/node`: the tree, for
        start_tree(); the test fails when it cannot."""
        tree = os.path.join(self.tmp, "node")
        r = subprocess.run([self.dralet, "board", "materialize", "--quiet", board, tree],
                           capture_output=True, text=True)
        if r.returncode:
            fail("board materialize: " + r.stderr[-500:])
        return tree

    def start(self, node_args, config, env=None, timeout=60, wrapper=()):
        """Runs `WRAPPER dralet run NODE_ARGS --config CONFIG ...` with ENV
        (default: the test's) and waits for the DRA socket."""
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                list(wrapper) + [self.dralet, "run"] + node_args
                + ["--config", config, "--store", self.store, "--plugins-dir", self.plugins,
                   "--registry-dir", self.registry,
                   "--cdi-dir", self.cdi, "--node-name", self.node],
                stdout=out, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + timeout
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.time() > deadline:
                self.fail("the daemon did not open %s" % self.sock)
            time.sleep(0.1)

    def start_board(self, board, config, env=None):
        """start() with `--board BOARD`: the daemon materializes it under
        boards/ (its TMPDIR); returns that tree."""
        os.makedirs(self.boards)
        self.start(["--board", board], config,
                   dict(env if env is not None else os.environ, TMPDIR=self.boards))
        [tree] = glob.glob(os.path.join(self.boards, "dralet-board.*"))
        return tree

    def start_tree(self, tree, config, env=None, timeout=60, wrapper=()):
        """start() on a materialized tree: --sysfs-root/--dev-root/--proc-root."""
        self.start(["--sysfs-root", tree + "/sys", "--dev-root", tree + "/dev",
                    "--proc-root", tree + "/proc"], config, env, timeout, wrapper)

    def prepare(self, claim, ext=".yaml"):
        """Writes CLAIM to the store and runs `dralet ctl prepare`: (exit
        status, the claim's result). An answer without it fails the test."""
        path = os.path.join(self.store, "resourceclaims", "default",
                            claim["metadata"]["name"] + ext)
        with open(path, "w") as f:
            json.dump(claim, f)   # JSON is YAML
        r = subprocess.run([self.dralet, "ctl", "prepare", "--socket", self.sock,
                            "--claim", path], capture_output=True, text=True, timeout=60)
        try:
            return r.returncode, json.loads(r.stdout)["claims"][claim["metadata"]["uid"]]
        except (ValueError, KeyError):
            self.fail("ctl prepare: %d %s %s" % (r.returncode, r.stdout, r.stderr))

    def unprepare(self, claim):
        """`dralet ctl unprepare` of CLAIM; the test checks the result."""
        m = claim["metadata"]
        return subprocess.run([self.dralet, "ctl", "unprepare", "--socket", self.sock,
                               "--uid", m["uid"], "--namespace", m["namespace"],
                               "--name", m["name"]],
                              capture_output=True, text=True, timeout=60)

    def unprepare_ok(self, claim):
        """`dralet ctl unprepare` of CLAIM; a failure fails the test."""
        r = self.unprepare(claim)
        if r.returncode:
            self.fail("ctl unprepare %s: %s %s" % (claim["metadata"]["name"], r.stdout,
                                                    r.stderr))

    def cdi_edits(self, cdi_id):
        """The containerEdits of the CDI device CDI_ID (kind=name) in the
        specs written, None when no spec has it."""
        kind, name = cdi_id.split("=", 1)
        for s in glob.glob(os.path.join(self.cdi, "*.json")):
            with open(s) as f:
                spec = json.load(f)
            for d in spec.get("devices", []):
                if spec["kind"] == kind and d["name"] == name:
                    return d["containerEdits"]
        return None

    def cdi_nodes_env(self, cdi_ids):
        """The device node paths and environment the CDI devices CDI_IDS hand over."""
        nodes, env = [], []
        for i in cdi_ids:
            edits = self.cdi_edits(i) or {}
            nodes += [n["path"] for n in edits.get("deviceNodes", [])]
            env += edits.get("env", [])
        return nodes, env

    def published_devices(self):
        """The devices of the driver's slices in the store, as published."""
        out = []
        for f in glob.glob(os.path.join(self.store, "resourceslices", "*.json")):
            try:
                with open(f) as fh:
                    sl = json.load(fh)
            except FileNotFoundError:
                continue    # deleted since the listing
            if sl["spec"]["driver"] == self.driver:
                out += sl["spec"].get("devices", [])
        return out

    def published_device(self, device):
        """DEVICE as the driver's slices in the store publish it, or None."""
        for d in self.published_devices():
            if d["name"] == device:
                return d
        return None

    def published(self, device, key):
        """The string attribute KEY of the published DEVICE, or None."""
        d = self.published_device(device) or {}
        return d.get("attributes", {}).get(key, {}).get("string")

    def stop(self, timeout=30):
        """SIGTERM; the test fails unless the daemon exits 0 within TIMEOUT s."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=timeout)
        self.proc = None
        if rc != 0:
            self.fail("dralet run exited %d" % rc)

    def close(self):
        """Kills the daemon if it still runs; removes the temp dir."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
        self.proc = None
        shutil.rmtree(self.tmp, ignore_errors=True)
