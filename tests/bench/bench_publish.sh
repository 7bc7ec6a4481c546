#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Publishing benchmark: >1,000 functions to the test apiserver on loopback; publish time and
# requests, republish time after a kubelet-style wipe. Prints a table (tests/apiserver/bench_publish.py).
# Then the agent's memory once it has published boards/synthetic-1k.yaml: `dralet run` with the
# file store and against the test apiserver, VmRSS and VmHWM a few seconds after start
# (BENCH_RSS=0 skips it).
set -eu
: "${DRALET:?set DRALET to the dralet binary}"
cd "$(dirname "$0")/../.."
/usr/bin/python3 tests/apiserver/bench_publish.py
[ "${BENCH_RSS:-1}" = 0 ] && exit 0
exec /usr/bin/python3 - <<'EOF'
import os, shutil, signal, subprocess, sys, tempfile, time
sys.path.insert(0, 'tests/apiserver')
from apiserver import ApiServer
import harness

BOARD, NODE, SETTLE = 'boards/synthetic-1k.yaml', 'node-1', 4.0


def status(pid):
    out = {}
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            key, _, value = line.partition(':')
            if key in ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile'):
                out[key] = int(value.split()[0]) / 1024
    return out


def agent(tmp, store_args):
    dirs = {d: os.path.join(tmp, d) for d in ('registry', 'plugins', 'cdi')}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    args = [harness.dralet_path(), 'run', '--board', BOARD, '--node-name', NODE,
            '--registry-dir', dirs['registry'], '--plugins-dir', dirs['plugins'],
            '--cdi-dir', dirs['cdi']] + store_args
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(tmp, 'agent.log'), 'w'))
    try:
        time.sleep(SETTLE)
        if proc.poll() is not None:
            sys.exit('the agent stopped; see ' + os.path.join(tmp, 'agent.log'))
        return status(proc.pid)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


tmp = tempfile.mkdtemp(prefix='dralet-bench-rss-')
try:
    rows = [('file store', agent(os.path.join(tmp, 'file'), ['--store', os.path.join(tmp, 'store')]))]
    srv = ApiServer(os.path.join(tmp, 'srv'), bookmark_interval=30).start()
    try:
        rows.append(('apiserver', agent(os.path.join(tmp, 'api'), ['--kubeconfig', srv.kubeconfig])))
        slices = len(srv.slices(NODE))
    finally:
        srv.stop()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print('agent memory after publishing %s (%d slices), %.0f s after start:' % (BOARD, slices, SETTLE))
print('%-12s %9s %9s %9s %9s' % ('', 'VmRSS', 'VmHWM', 'anon', 'file'))
for label, s in rows:
    print('%-12s %6.1f MiB %6.1f MiB %6.1f MiB %6.1f MiB' % (label, s['VmRSS'], s['VmHWM'],
                                                      s['RssAnon'], s['RssFile']))
print('(file: shared libraries mapped; with the apiserver that is libcurl, OpenSSL, GnuTLS)')
EOF
