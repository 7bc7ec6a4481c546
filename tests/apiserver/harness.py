# SPDX-License-Identifier: Apache-2.0
"""Helpers for tests that run dralet against the test apiserver."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apiserver import ApiServer  # noqa: E402,F401
import validate  # noqa: E402


def skip(why):
    print('SKIP: ' + why)
    sys.exit(77)


def run_tests(tests, tmp, args=(), only=()):
    """Runs each test function with @args (only those named in @only, when given),
    prints ok/FAIL lines, removes @tmp and returns the exit status."""
    import shutil
    import traceback
    failed = 0
    for t in tests:
        if only and t.__name__ not in only:
            continue
        start = time.monotonic()
        try:
            t(*args)
            print('ok   %s (%.1fs)' % (t.__name__, time.monotonic() - start), flush=True)
        except Exception as e:  # noqa: BLE001
            failed += 1
            traceback.print_exc()
            print('FAIL %s: %s' % (t.__name__, e), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


def module_tests(namespace):
    """The test_* functions of a module's globals(), by name."""
    return [v for k, v in sorted(namespace.items()) if k.startswith('test_')]


def dralet_path():
    path = os.environ.get('DRALET')
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(os.path.dirname(os.path.dirname(here)), 'build', 'dralet')
    if not os.access(path, os.X_OK):
        skip('no dralet binary (set DRALET)')
    return path


def devices_doc(spec):
    """spec: {driver: n or [names]} -> devices file document."""
    devs = []
    for driver, what in spec.items():
        names = what if isinstance(what, list) else ['dev-%04d' % i for i in range(what)]
        for n in names:
            devs.append({'driver': driver, 'name': n, 'backend': 'test',
                         'attributes': {'model': {'string': 'Model ' + n},
                                        'index': {'int': names.index(n)},
                                        'resource.kubernetes.io/pcieRoot': {'string': 'pci0000:00'},
                                        'firmware': {'version': '1.2.3'}},
                         'capacity': {'memory': {'value': '16Gi'}}})
    return {'devices': devs}


def write_devices(path, spec=None, doc=None):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(doc if doc is not None else devices_doc(spec), f)
    os.replace(tmp, path)


def wait_for(cond, timeout, interval=0.01, what='condition'):
    start = time.monotonic()
    while True:
        if cond():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError('timed out after %.1fs waiting for %s' % (timeout, what))
        time.sleep(interval)


def pool_state(srv, node, driver):
    """(ok, why, generation, slices) for one driver's pool on the server."""
    slices = srv.slices(node, driver)
    if not slices:
        return False, 'no slices', None, slices
    gens = {s['spec']['pool']['generation'] for s in slices}
    if len(gens) != 1:
        return False, 'mixed generations %s' % sorted(gens), None, slices
    count = {s['spec']['pool']['resourceSliceCount'] for s in slices}
    if count != {len(slices)}:
        return False, 'resourceSliceCount %s for %d slices' % (count, len(slices)), None, slices
    return True, '', gens.pop(), slices


def pool_devices(slices):
    names = [d['name'] for s in slices for d in s['spec'].get('devices', [])]
    return names


def converged(srv, node, expected):
    """expected: {driver: [device names]} (sorted). True when the server holds exactly that."""
    for driver, names in expected.items():
        ok, why, gen, slices = pool_state(srv, node, driver)
        if not names:
            if slices:
                return False
            continue
        if not ok:
            return False
        got = pool_devices(sorted(slices, key=lambda s: s['spec']['devices'][0]['name']))
        if got != names:
            return False
        if any(len(s['spec']['devices']) > 128 for s in slices):
            return False
    return True


def check_schema(slices):
    for s in slices:
        errs = validate.slice_errors(s)
        assert not errs, 'invalid slice %s: %s' % (s['metadata'].get('name'), errs)


class Dralet:
    """dralet slices --publish --follow against a test apiserver."""

    def __init__(self, srv, devices, node='node-1', kubeconfig=None, extra=(), env=None,
                 follow=True, verbosity=4):
        self.srv = srv
        self.logpath = tempfile.mktemp(prefix='dralet-publish-', suffix='.log')
        args = [dralet_path(), 'slices', '--node-name', node, '--publish', '--v', str(verbosity)]
        if devices:   # else extra names the input (--board FILE, roots)
            args += ['--devices', devices]
        if kubeconfig is not False:
            args += ['--kubeconfig', kubeconfig or srv.kubeconfig]
        if follow:
            args.append('--follow')
        self.args = args + list(extra)
        self.env = dict(os.environ, **(env or {}))
        self.proc = None

    def start(self):
        self.logf = open(self.logpath, 'w')
        self.proc = subprocess.Popen(self.args, stdout=self.logf, stderr=subprocess.STDOUT,
                                     env=self.env)
        return self

    def run(self, timeout=30):
        self.start()
        try:
            return self.proc.wait(timeout)
        finally:
            self.logf.close()

    def reload(self):
        self.proc.send_signal(signal.SIGHUP)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
            self.logf.close()
            return rc
        return self.proc.returncode if self.proc else None

    def log(self):
        with open(self.logpath) as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None
