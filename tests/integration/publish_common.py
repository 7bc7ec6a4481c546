# SPDX-License-Identifier: Apache-2.0
"""What the tests of dralet publishing to the test apiserver share
(test_publish_apiserver*.py): the node, the drivers, a scratch directory per
test process, and small helpers."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'apiserver'))
from harness import ApiServer  # noqa: E402

NODE = 'node-1'
GPU, NET = 'gpu.dralet.dev', 'net.dralet.dev'
TMP = tempfile.mkdtemp(prefix='dralet-publish-')


def names(n, prefix='dev-'):
    return ['%s%04d' % (prefix, i) for i in range(n)]


def server(**kw):
    return ApiServer(tempfile.mkdtemp(dir=TMP), **kw).start()


def writes(counts):
    return sum(counts.get(k, 0) for k in ('create', 'update', 'delete'))


def streaming_lists(srv, after=0):
    """The streaming lists (watches with sendInitialEvents) served since @after."""
    with srv.state.lock:
        return [e for e in srv.state.log
                if e['t'] > after and e['method'] == 'GET' and e['status'] == 200
                and 'sendInitialEvents=true' in e['path']]
