#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A small kube-apiserver for dralet's tests (Python standard library +
jsonschema). Serves, over HTTPS with a CA and server certificate it generates
(openssl CLI) and a bearer token (or a client certificate):

  GET    /api/v1/nodes/<name>
  POST   /api/v1/namespaces/<ns>/events              create a core/v1 Event (checked like the
                                                    real server's legacy validation, see k8s_event_errors)
  PATCH  /api/v1/namespaces/<ns>/events/<name>       merge patch of one (a repeat's count), checked again
  GET    /apis/resource.k8s.io/{v1,v1beta2}/namespaces/<ns>/resourceclaims/<name>
  PATCH  .../resourceclaims/<name>/status          server-side apply of status.devices (per
                                                    fieldManager, keyed like the real server)
  GET    /apis/resource.k8s.io/v1/resourceslices     list (fieldSelector, limit/continue)
  GET    ...resourceslices?watch=true               chunked watch stream from resourceVersion,
                                                    bookmarks, timeoutSeconds, 410 when compacted;
                                                    a streaming list with sendInitialEvents=true
                                                    (see watch_list_errors), counted as a 'watch'
  POST   /apis/resource.k8s.io/v1/resourceslices     create (generateName)
  GET/PUT/DELETE .../resourceslices/<name>           get, update (409 on a stale resourceVersion),
                                                    delete (uid/resourceVersion preconditions)
  DELETE .../resourceslices?fieldSelector=...        deletecollection (the kubelet's wipe)

Every written slice is validated (validate.py: the strict schema in ../shared and the 1.34
limits); a bad one gets 422 with causes like the real server. Alpha fields of disabled feature
gates are dropped silently, like the real server.

Faults (control endpoint or set_faults()): rate500, rate409 (updates, deletes), rate429 with
retryAfter, dropRate (connection closed without an answer), watchDropRate (a watch cut after a few
events), rate403 (Forbidden, as an apiserver that has not read its RBAC yet), watchCutAfter (every watch cut after that many events), initialCutAfter (every streaming list cut after that many initial events, before its end bookmark), initialHoldAfter (a streaming list paused there until the faults change), initialError (a streaming list answered by an ERROR event, as a server whose storage cannot stream lists), delayMs, hold (requests wait until the faults change), reject (422 for every write), verbs (which verbs the faults hit); an expiring
token: rotate_token() writes a new one, the old one gets 401. Tokens are opaque strings, or with
bound_node a JWT shaped like a pod's projected ServiceAccount token, whose claims name that node
and its uid (kubernetes.io.node; unsigned: the agent reads, never checks it).

Control interface: plain HTTP on a second loopback port:
  GET  /counts            request counters      POST /reset-counts
  POST /faults  {json}    fault settings        POST /wipe?node=N[&driver=D]  kubelet-style wipe
  POST /rotate-token      new token in the token file; the old one gets 401
  POST /claims {claim}    add a ResourceClaim   POST /nodes {node}
  GET  /events            the core/v1 Events created
  GET  /slices            all slices            POST /compact   old resourceVersions -> 410
  POST /end-watches       end every watch (ERROR 410 with ?expire=1)
  POST /gates {json}      feature gates         GET  /log       recent requests
  POST /watch-list {"enabled": false}  the WatchList gate (default on, as from 1.34): off, a
                          streaming list gets 422 like the real server's
  POST /version {"minor": "34"}  what GET /version answers (default: 404, like no version)
  POST /delete?name=N     delete one slice as somebody else
  POST /modify?name=N     change one slice as somebody else (adds a device attribute)

Use it as a module (ApiServer(...).start()) or run it: apiserver.py --dir DIR writes
DIR/ready.json ({"port", "controlPort", "kubeconfig", ...}) once it listens.
"""
import argparse
import base64
import copy
import datetime
import json
import os
import random
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402

NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789'
GATE_FIELDS = {
    'DRADeviceTaints': {'device': ['taints']},
    'DRAPartitionableDevices': {'spec': ['sharedCounters', 'perDeviceNodeSelection'],
                                'device': ['consumesCounters', 'nodeName', 'nodeSelector',
                                           'allNodes']},
    'DRADeviceBindingConditions': {'device': ['bindsToNode', 'bindingConditions',
                                              'bindingFailureConditions']},
    'DRAConsumableCapacity': {'device': ['allowMultipleAllocations']},
}


def clone(o):
    """A deep copy of a JSON document (several times faster than copy.deepcopy)."""
    return json.loads(json.dumps(o))


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def make_certs(d):
    """CA, server certificate (127.0.0.1, localhost) and a client certificate."""
    def run(*args):
        subprocess.run(['openssl'] + list(args), check=True, capture_output=True)
    ca_key, ca = os.path.join(d, 'ca.key'), os.path.join(d, 'ca.crt')
    ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']  # fast handshakes
    run('req', '-x509', *ec, '-nodes', '-keyout', ca_key, '-out', ca,
        '-days', '2', '-subj', '/CN=dralet-test-ca')
    ext = os.path.join(d, 'san.ext')
    with open(ext, 'w') as f:
        f.write('subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    for who, subj, extra in (('server', '/CN=localhost', ['-extfile', ext]),
                             ('client', '/CN=system:node:test/O=system:nodes', [])):
        key, csr, crt = (os.path.join(d, '%s.%s' % (who, x)) for x in ('key', 'csr', 'crt'))
        run('req', *ec, '-nodes', '-keyout', key, '-out', csr, '-subj', subj)
        run('x509', '-req', '-in', csr, '-CA', ca, '-CAkey', ca_key, '-CAcreateserial',
            '-out', crt, '-days', '2', *extra)
    return ca


class State:
    def __init__(self, server):
        self.server = server
        self.lock = threading.Condition()
        self.rv = 100
        self.slices = {}          # name -> object
        self.events = []          # (rv, type, object)
        self.compacted = 0        # events with rv <= compacted are gone
        self.nodes = {}
        self.k8s_events = []      # core/v1 Events created (not the watch events above)
        self.k8s_event_patches = 0  # PATCHes of them that succeeded
        self.status_owners = {}   # (ns, name) -> {status.devices key: field manager}
        self.status_applies = []  # every server-side apply of a claim status, in order
        self.claims = {}          # (version, ns, name) -> object
        self.gates = {g: False for g in GATE_FIELDS}
        self.watch_list = True    # the WatchList gate: streaming lists (sendInitialEvents)
        self.version = None       # "34": GET /version answers 1.34; None: 404 (unknown)
        self.faults = {}
        self.page_limit = 0       # > 0: list pages hold at most this many (as a server may)
        self.counts = {}
        self.log = []
        self.watch_generation = 0  # bumped to end all watches
        self.watch_expire = False
        self.rng = random.Random(int(os.environ.get('APISERVER_SEED', '1')))

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def emit(self, typ, obj):
        """Records an event, serialized once: every watcher sends the same text."""
        keys = {'metadata': {'name': obj['metadata'].get('name')},
                'spec': {'driver': obj['spec'].get('driver'),
                         'nodeName': obj['spec'].get('nodeName')}}
        self.events.append((int(obj['metadata']['resourceVersion']), typ, json.dumps(obj), keys))
        self.lock.notify_all()

    def count(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1

    def strip_gated(self, obj):
        spec = obj.get('spec', {})
        for gate, on in self.gates.items():
            if on:
                continue
            fields = GATE_FIELDS[gate]
            for k in fields.get('spec', []):
                spec.pop(k, None)
            for d in spec.get('devices') or []:
                for k in fields.get('device', []):
                    d.pop(k, None)
                if gate == 'DRAConsumableCapacity':
                    for c in (d.get('capacity') or {}).values():
                        c.pop('requestPolicy', None)
        if self.gates.get('DRADeviceTaints'):
            for d in spec.get('devices') or []:
                for t in d.get('taints') or []:
                    t.setdefault('timeAdded', now_rfc3339())

    def wipe(self, node, driver=None):
        """deletecollection by field selector, as the kubelet does at start."""
        gone = []
        for name, obj in list(self.slices.items()):
            spec = obj['spec']
            if spec.get('nodeName') == node and (driver is None or spec.get('driver') == driver):
                del self.slices[name]
                obj = clone(obj)
                obj['metadata']['resourceVersion'] = self.next_rv()
                self.emit('DELETED', obj)
                gone.append(obj)
        return gone


def status(code, reason, message, causes=None, name=None, kind='resourceslices'):
    st = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
          'message': message, 'reason': reason, 'code': code}
    details = {}
    if name:
        details.update({'name': name, 'group': 'resource.k8s.io' if kind != 'nodes' else '',
                        'kind': kind})
    if causes:
        details['causes'] = causes
    if details:
        st['details'] = details
    return st


def k8s_event_errors(ns, ev):
    """What the real server refuses in a core/v1 Event created with the legacy API
    (kubernetes pkg/apis/core/validation/events.go, legacyValidateEvent; version not pinned): a namespace that is not the
    path's, one other than "default" for an object without a namespace (a Node), an
    involvedObject.namespace other than the Event's, missing names; an update through core/v1
    gets the same checks and no others (ValidateEventUpdate: "No further validation for
    backwards compatibility"), so count, lastTimestamp and message may change;
    plus what dralet promises (kube/event.h): a type, a reason and a message of at most 1024
    bytes."""
    causes = []
    meta, ref = ev.get('metadata') or {}, ev.get('involvedObject') or {}

    def bad(field, message):
        causes.append({'reason': 'FieldValueInvalid', 'field': field, 'message': message})
    if ev.get('apiVersion') != 'v1' or ev.get('kind') != 'Event':
        bad('kind', 'not a v1 Event')
    if not meta.get('name'):
        bad('metadata.name', 'name is required')
    if meta.get('namespace', ns) != ns:
        bad('metadata.namespace', 'does not match the namespace of the request')
    if not ref.get('kind') or not ref.get('name'):
        bad('involvedObject', 'kind and name are required')
    if not ref.get('namespace') and ns != 'default':
        bad('involvedObject.namespace', 'does not match event.namespace')
    if ref.get('namespace') and ref['namespace'] != ns:
        bad('involvedObject.namespace', 'does not match event.namespace')
    if ev.get('type') not in ('Normal', 'Warning'):
        bad('type', 'must be Normal or Warning')
    if not ev.get('reason') or len(ev['reason']) > 128:
        bad('reason', 'required, at most 128 characters')
    if len((ev.get('message') or '').encode()) > 1024:
        bad('message', 'longer than 1024 bytes')
    return causes


def parse_selector(sel):
    out = []
    for part in (sel or '').split(','):
        if not part:
            continue
        if '!=' in part:
            k, v = part.split('!=', 1)
            out.append((k, v, False))
        else:
            k, v = part.split('==', 1) if '==' in part else part.split('=', 1)
            out.append((k, v, True))
    return out


def field(obj, key):
    cur = obj
    for p in key.split('.'):
        cur = cur.get(p) if isinstance(cur, dict) else None
    return '' if cur is None else str(cur)


def matches(obj, sel):
    return all((field(obj, k) == v) == eq for k, v, eq in sel)


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'test-apiserver/1'

    def log_message(self, fmt, *args):  # quiet; the control log has the requests
        pass

    def setup(self):
        # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's
        # algorithm and the client's delayed ACK add 40 ms to every answer.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    @property
    def st(self):
        return self.server.state

    def send_json(self, code, obj, headers=None):
        self.send_text(code, json.dumps(obj), headers)

    def send_text(self, code, text, headers=None):
        body = text.encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.record(code)

    def record(self, code):
        with self.st.lock:
            self.st.count('status_%d' % code)
            self.st.log.append({'method': self.command, 'path': self.path, 'status': code,
                                'ua': self.headers.get('User-Agent', ''),
                                't': time.monotonic(),
                                'start': getattr(self, 'started', time.monotonic())})
            del self.st.log[:-2000]

    def read_body(self):
        n = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(n) if n else b''
        self.raw_body = raw
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return 'invalid'

    def authorized(self):
        auth = self.headers.get('Authorization', '')
        if auth.startswith('Bearer ') and auth[7:] == self.server.token():
            return True
        if auth.startswith('Bearer '):
            with self.st.lock:
                self.st.count('bad_token')
        try:
            cert = self.connection.getpeercert()
        except (AttributeError, ValueError):
            cert = None
        return bool(cert)

    def fault(self, verb):
        """Injected faults; True when the request was answered (or dropped)."""
        f = self.st.faults
        if not f or verb not in f.get('verbs', ['get', 'list', 'watch', 'create', 'update',
                                                'delete', 'deletecollection']):
            return False
        if f.get('reject') and verb in ('create', 'update'):
            with self.st.lock:
                self.st.count('fault_422')
            self.invalid('', [{'reason': 'FieldValueInvalid', 'field': 'spec.devices[0].name',
                               'message': 'Invalid value: injected rejection'}])
            return True
        if f.get('hold'):
            # held until the faults change (set_faults); then served as usual
            with self.st.lock:
                self.st.lock.wait_for(lambda: self.st.faults is not f, timeout=300)
            return False
        rng = self.st.rng
        with self.st.lock:
            roll = rng.random()
            delay = f.get('delayMs', 0)
        if delay:
            time.sleep(delay / 1000.0)
        edges = [('drop', f.get('dropRate', 0)), ('500', f.get('rate500', 0)),
                 ('429', f.get('rate429', 0)), ('403', f.get('rate403', 0)),
                 ('409', f.get('rate409', 0) if verb in ('update', 'delete') else 0)]
        acc = 0.0
        for kind, rate in edges:
            acc += rate
            if roll < acc:
                with self.st.lock:
                    self.st.count('fault_' + kind)
                if kind == 'drop':
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    self.record(0)
                elif kind == '500':
                    self.send_json(500, status(500, 'InternalError', 'injected fault'))
                elif kind == '403':
                    self.send_json(403, status(403, 'Forbidden', 'injected: RBAC not read yet'))
                elif kind == '429':
                    self.send_json(429, status(429, 'TooManyRequests', 'injected throttle'),
                                   {'Retry-After': str(f.get('retryAfter', 1))})
                else:
                    self.send_json(409, status(409, 'Conflict', 'injected conflict: the object '
                                               'has been modified; please apply your changes '
                                               'to the latest version and try again'))
                return True
        return False

    # ---- routing ----

    def handle_any(self):
        self.started = time.monotonic()
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        parts = [p for p in url.path.split('/') if p]
        body = self.read_body() if self.command in ('POST', 'PUT', 'DELETE', 'PATCH') else None
        verb = self.verb(parts, q)
        with self.st.lock:
            self.st.count('total')
            self.st.count(verb)
        if not self.authorized():
            with self.st.lock:
                self.st.count('unauthorized')
            return self.send_json(401, status(401, 'Unauthorized', 'Unauthorized'))
        if self.fault(verb):
            return
        if parts[:3] == ['api', 'v1', 'nodes'] and len(parts) == 4 and self.command == 'GET':
            return self.get_node(parts[3])
        if parts == ['version'] and self.command == 'GET':
            with self.st.lock:
                minor = self.st.version
            if minor:
                return self.send_json(200, {'major': '1', 'minor': minor,
                                            'gitVersion': 'v1.%s.0' % minor.rstrip('+')})
        if (parts[:3] == ['api', 'v1', 'namespaces'] and len(parts) == 5 and parts[4] == 'events'
                and self.command == 'POST'):
            return self.create_k8s_event(parts[3], body)
        if (parts[:3] == ['api', 'v1', 'namespaces'] and len(parts) == 6 and parts[4] == 'events'
                and self.command == 'PATCH'):
            return self.patch_k8s_event(parts[3], parts[5], body)
        if parts[:2] == ['apis', 'resource.k8s.io'] and len(parts) >= 3:
            version, rest = parts[2], parts[3:]
            if len(rest) == 4 and rest[0] == 'namespaces' and rest[2] == 'resourceclaims':
                return self.get_claim(version, rest[1], rest[3])
            if (len(rest) == 5 and rest[0] == 'namespaces' and rest[2] == 'resourceclaims'
                    and rest[4] == 'status' and self.command == 'PATCH'):
                return self.apply_claim_status(version, rest[1], rest[3], q, body)
            if version == 'v1' and rest[:1] == ['resourceslices']:
                return self.slices(rest[1:], q, body)
        self.send_response(404)
        msg = b'404 page not found\n'
        self.send_header('Content-Type', 'text/plain; charset=utf-8')
        self.send_header('Content-Length', str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)
        self.record(404)

    def verb(self, parts, q):
        if parts[-1:] == ['events']:
            return 'createevent'
        if parts[-2:-1] == ['events']:
            return 'patchevent'
        if parts[-1:] == ['status']:
            return 'applystatus'
        if 'resourceslices' not in parts:
            return 'get'
        named = parts[-1] != 'resourceslices'
        return {('GET', False): 'watch' if q.get('watch') in ('true', '1') else 'list',
                ('GET', True): 'get', ('POST', False): 'create', ('PUT', True): 'update',
                ('DELETE', True): 'delete', ('DELETE', False): 'deletecollection'}.get(
                    (self.command, named), 'other')

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

    def get_node(self, name):
        with self.st.lock:
            node = self.st.nodes.get(name)
        if not node:
            return self.send_json(404, status(404, 'NotFound', 'nodes "%s" not found' % name,
                                              name=name, kind='nodes'))
        self.send_json(200, node)

    def create_k8s_event(self, ns, obj):
        if not isinstance(obj, dict):
            return self.send_json(400, status(400, 'BadRequest', 'body is not a JSON object'))
        causes = k8s_event_errors(ns, obj)
        if causes:
            return self.send_json(422, status(422, 'Invalid', 'Event is invalid', causes,
                                              kind='events'))
        with self.st.lock:
            name = obj['metadata']['name']
            if any(e['metadata']['name'] == name for e in self.st.k8s_events):
                return self.send_json(409, status(409, 'AlreadyExists',
                                                  'events "%s" already exists' % name,
                                                  name=name, kind='events'))
            obj['metadata'].update({'uid': str(uuid.uuid4()), 'resourceVersion': self.st.next_rv(),
                                    'creationTimestamp': now_rfc3339()})
            self.st.k8s_events.append(obj)
        self.send_json(201, obj)

    def patch_k8s_event(self, ns, name, patch):
        """A JSON merge patch (RFC 7386) of an Event, as client-go's recorder sends a
        repeat's count (it sends a strategic merge patch, which for these scalar
        fields is the same); the result is checked like a create."""
        ctype = self.headers.get('Content-Type', '')
        if ctype not in ('application/merge-patch+json', 'application/strategic-merge-patch+json'):
            return self.send_json(415, status(415, 'UnsupportedMediaType',
                                              'the body of the request was in an unknown format '
                                              '- accepted media types include: '
                                              'application/merge-patch+json, '
                                              'application/strategic-merge-patch+json (got %s)'
                                              % ctype))
        if not isinstance(patch, dict):
            return self.send_json(400, status(400, 'BadRequest', 'body is not a JSON object'))

        def merge(target, p):
            if not isinstance(p, dict):
                return p
            out = dict(target) if isinstance(target, dict) else {}
            for k, v in p.items():
                if v is None:
                    out.pop(k, None)
                else:
                    out[k] = merge(out.get(k), v)
            return out
        with self.st.lock:
            old = next((e for e in self.st.k8s_events if e['metadata']['name'] == name
                        and e['metadata'].get('namespace') == ns), None)
            if old is None:
                return self.send_json(404, status(404, 'NotFound', 'events "%s" not found' % name,
                                                  name=name, kind='events'))
            new = merge(old, patch)
            new['metadata'] = dict(old['metadata'])     # name, uid: not the patch's to change
            causes = k8s_event_errors(ns, new)
            if causes:
                return self.send_json(422, status(422, 'Invalid', 'Event is invalid', causes,
                                                  kind='events'))
            new['metadata']['resourceVersion'] = self.st.next_rv()
            self.st.k8s_events[self.st.k8s_events.index(old)] = new
            self.st.k8s_event_patches += 1
        self.send_json(200, new)

    def claim_not_found(self, name):
        return self.send_json(404, status(404, 'NotFound',
                                          'resourceclaims.resource.k8s.io "%s" not found' % name,
                                          name=name, kind='resourceclaims'))

    def get_claim(self, version, ns, name):
        if version == 'v1' and not self.server.serve_v1_claims:
            self.send_response(404)
            msg = b'404 page not found\n'
            self.send_header('Content-Type', 'text/plain; charset=utf-8')
            self.send_header('Content-Length', str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return self.record(404)
        with self.st.lock:
            claim = self.st.claims.get((ns, name))
        if not claim:
            return self.claim_not_found(name)
        claim = clone(claim)
        claim['apiVersion'] = 'resource.k8s.io/' + version
        self.send_json(200, claim)

    def apply_claim_status(self, version, ns, name, q, obj):
        """Server-side apply of a claim's status subresource, as far as dralet uses
        it: status.devices is a map list keyed by (driver, pool, device, shareID);
        the entries a field manager applied before and leaves out now are removed,
        the others' stay. Checked like the real server: apply-patch content type,
        a fieldManager, the object's kind and name, entries only for allocated
        devices, at most 8 conditions each."""
        ctype = self.headers.get('Content-Type', '')
        if ctype != 'application/apply-patch+yaml':
            return self.send_json(415, status(415, 'UnsupportedMediaType',
                                              'the body of the request was in an unknown '
                                              'format - accepted media types include: '
                                              'application/apply-patch+yaml (got %s)' % ctype))
        if b'\\/' in getattr(self, 'raw_body', b''):
            # JSON's "\/" is no YAML escape: the real server's YAML decoder refuses it
            return self.send_json(400, status(400, 'BadRequest', 'error decoding patch: error '
                                              'converting YAML to JSON: yaml: found unknown '
                                              'escape character'))
        manager = q.get('fieldManager')
        if not manager:
            return self.send_json(400, status(400, 'BadRequest',
                                              'PatchOptions.meta.k8s.io "" is invalid: '
                                              'fieldManager: Required value'))
        if not isinstance(obj, dict) or obj.get('kind') != 'ResourceClaim' or \
                obj.get('apiVersion') != 'resource.k8s.io/' + version or \
                obj.get('metadata', {}).get('name') != name or \
                obj.get('metadata', {}).get('namespace') not in (None, ns):
            return self.send_json(400, status(400, 'BadRequest', 'the apply object is not '
                                              'this ResourceClaim: %r' % (obj,)))
        devices = obj.get('status', {}).get('devices', [])
        key = lambda d: (d.get('driver'), d.get('pool'), d.get('device'), d.get('shareID'))
        with self.st.lock:
            claim = self.st.claims.get((ns, name))
            if not claim:
                return self.claim_not_found(name)
            results = claim.get('status', {}).get('allocation', {}).get('devices', {}).get(
                'results', [])
            allocated = {(r.get('driver'), r.get('pool'), r.get('device'), r.get('shareID'))
                         for r in results}
            causes = []
            for i, d in enumerate(devices):
                if key(d) not in allocated:
                    causes.append({'field': 'status.devices[%d]' % i, 'reason': 'FieldValueInvalid',
                                   'message': 'must be an allocated device in the claim'})
                if len(d.get('conditions', [])) > 8:
                    causes.append({'field': 'status.devices[%d].conditions' % i,
                                   'reason': 'FieldValueTooMany', 'message': 'must have at most 8 items'})
            if causes:
                return self.send_json(422, status(422, 'Invalid', 'ResourceClaim.resource.k8s.io '
                                                  '"%s" is invalid' % name, causes, name=name,
                                                  kind='resourceclaims'))
            owned = self.st.status_owners.setdefault((ns, name), {})
            mine = {key(d) for d in devices}
            kept = [d for d in claim.get('status', {}).get('devices', [])
                    if key(d) in mine or owned.get(key(d)) != manager]
            kept = [d for d in kept if key(d) not in mine] + devices
            for d in devices:
                owned[key(d)] = manager
            for k in [k for k, m in owned.items() if m == manager and k not in mine]:
                del owned[k]
            claim.setdefault('status', {})['devices'] = kept
            if not kept:
                del claim['status']['devices']
            claim['metadata']['resourceVersion'] = self.st.next_rv()
            self.st.status_applies.append({'claim': '%s/%s' % (ns, name), 'manager': manager,
                                           'devices': clone(devices)})
            answer = clone(claim)
        answer['apiVersion'] = 'resource.k8s.io/' + version
        self.send_json(200, answer)

    # ---- resourceslices ----

    def slices(self, rest, q, body):
        sel = parse_selector(q.get('fieldSelector'))
        if not rest:
            if self.command == 'GET' and q.get('watch') in ('true', '1'):
                return self.watch(sel, q)
            if self.command == 'GET':
                return self.list(sel, q)
            if self.command == 'POST':
                return self.create(body)
            if self.command == 'DELETE':
                return self.delete_collection(sel)
        elif len(rest) == 1:
            if self.command == 'GET':
                with self.st.lock:
                    obj = self.st.slices.get(rest[0])
                if not obj:
                    return self.not_found(rest[0])
                return self.send_json(200, obj)
            if self.command == 'PUT':
                return self.update(rest[0], body)
            if self.command == 'DELETE':
                return self.delete(rest[0], body)
        self.send_json(405, status(405, 'MethodNotAllowed', 'method not allowed'))

    def not_found(self, name):
        self.send_json(404, status(404, 'NotFound',
                                   'resourceslices.resource.k8s.io "%s" not found' % name,
                                   name=name))

    def invalid(self, name, causes):
        msg = 'ResourceSlice.resource.k8s.io "%s" is invalid: %s' % (
            name or '', '; '.join('%s: %s' % (c['field'], c['message']) for c in causes[:10]))
        self.send_json(422, status(422, 'Invalid', msg, causes=causes, name=name))

    def list(self, sel, q):
        limit = int(q.get('limit') or 0)
        start = q.get('continue')
        with self.st.lock:
            if self.st.page_limit:
                limit = min(limit or self.st.page_limit, self.st.page_limit)
            names = sorted(n for n, o in self.st.slices.items() if matches(o, sel))
            rv = str(self.st.rv)
            if start:
                after, rv = json.loads(base64.b64decode(start))
                names = [n for n in names if n > after]
            page = names[:limit] if limit else names
            meta = {'resourceVersion': rv}
            if limit and len(names) > limit:
                meta['continue'] = base64.b64encode(json.dumps([page[-1], rv]).encode()).decode()
            text = json.dumps({'kind': 'ResourceSliceList', 'apiVersion': 'resource.k8s.io/v1',
                               'metadata': meta, 'items': [self.st.slices[n] for n in page]})
        self.send_text(200, text)

    def chunk(self, data):
        self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
        self.wfile.flush()

    def send_event(self, typ, obj):
        text = obj if isinstance(obj, str) else json.dumps(obj)
        data = ('{"type": "%s", "object": %s}\n' % (typ, text)).encode()
        # Split some events over several chunks: clients must parse across them.
        if self.server.split_events and len(data) > 8 and self.st.rng.random() < 0.5:
            cut = self.st.rng.randrange(1, len(data) - 1)
            self.chunk(data[:cut])
            self.chunk(data[cut:])
        else:
            self.chunk(data)

    def watch_list_errors(self, q):
        """What the real server refuses in a watch's streaming-list options (k8s.io/apimachinery
        v0.37.2 pkg/apis/meta/internalversion/validation/validation.go, validateWatchOptions):
        sendInitialEvents needs resourceVersionMatch=NotOlderThan and the WatchList gate;
        resourceVersionMatch needs sendInitialEvents."""
        errs = []
        match = q.get('resourceVersionMatch', '')
        if 'sendInitialEvents' in q:
            if match != 'NotOlderThan':
                errs.append(('resourceVersionMatch', 'FieldValueForbidden', 'Forbidden: '
                             'sendInitialEvents requires setting resourceVersionMatch to '
                             'NotOlderThan'))
            with self.st.lock:
                gate = self.st.watch_list
            if not gate:
                errs.append(('sendInitialEvents', 'FieldValueForbidden', 'Forbidden: '
                             'sendInitialEvents is forbidden for watch unless the WatchList '
                             'feature gate is enabled'))
        if match:
            if 'sendInitialEvents' not in q:
                errs.append(('resourceVersionMatch', 'FieldValueForbidden', 'Forbidden: '
                             'resourceVersionMatch is forbidden for watch unless '
                             'sendInitialEvents is provided'))
            if match != 'NotOlderThan':
                errs.append(('resourceVersionMatch', 'FieldValueNotSupported',
                             'Unsupported value: "%s": supported values: "NotOlderThan"' % match))
        return errs

    def watch(self, sel, q):
        rv = q.get('resourceVersion')
        timeout = float(q.get('timeoutSeconds') or 1800)
        bookmarks = q.get('allowWatchBookmarks') in ('true', '1')
        errs = self.watch_list_errors(q)
        if errs:
            # errors.NewInvalid of ListOptions (k8s.io/apiserver pkg/endpoints/handlers/get.go)
            st = status(422, 'Invalid', 'ListOptions.meta.k8s.io "" is invalid: ' +
                        ', '.join('%s: %s' % (f, m) for f, _, m in errs),
                        causes=[{'reason': r, 'message': m, 'field': f} for f, r, m in errs])
            st['details'].update({'name': '', 'group': 'meta.k8s.io', 'kind': 'ListOptions'})
            return self.send_json(422, st)
        initial = q.get('sendInitialEvents') in ('true', '1')
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        self.record(200)
        deadline = time.monotonic() + timeout
        last_bookmark = time.monotonic()
        drop_after = None
        f = self.st.faults
        if f and self.st.rng.random() < f.get('watchDropRate', 0):
            drop_after = self.st.rng.randint(0, 3)
        if f and f.get('watchCutAfter'):
            drop_after = f['watchCutAfter'] - 1
        initial_cut = f.get('initialCutAfter') if f and initial else None
        initial_hold = f.get('initialHoldAfter') if f and initial else None
        n_initial = 0
        with self.st.lock:
            gen = self.st.watch_generation
            if initial and f and f.get('initialError'):
                # the watch cache's answer when etcd lacks progress notifications
                # (k8s.io/apiserver pkg/storage/cacher/cacher.go, Watch: newErrWatcher)
                pending = [('ERROR', status(500, 'InternalError', 'a watch stream was requested '
                                            'by the client but the required storage feature '
                                            'RequestWatchProgress is disabled'))]
                deadline = 0
                pos = len(self.st.events)
            elif initial:
                # a streaming list: the current state as ADDED events, then the bookmark that
                # ends them (metav1.InitialEventsAnnotationKey) at its revision, then the watch
                pending = [('ADDED', clone(o)) for n, o in sorted(self.st.slices.items())
                           if matches(o, sel)]
                n_initial = len(pending)
                if bookmarks:
                    pending.append(('BOOKMARK', {
                        'kind': 'ResourceSlice', 'apiVersion': 'resource.k8s.io/v1',
                        'metadata': {'resourceVersion': str(self.st.rv),
                                     'annotations': {'k8s.io/initial-events-end': 'true'}}}))
                pos = len(self.st.events)
            elif rv in (None, '', '0'):
                pending = [('ADDED', clone(o)) for n, o in sorted(self.st.slices.items())
                           if matches(o, sel)]
                pos = len(self.st.events)
            elif int(rv) < self.st.compacted:
                pending = [('ERROR', status(410, 'Expired', 'too old resource version: %s (%d)'
                                            % (rv, self.st.compacted)))]
                deadline = 0
                pos = len(self.st.events)
            else:
                pending = []
                pos = 0
                while pos < len(self.st.events) and self.st.events[pos][0] <= int(rv):
                    pos += 1
        sent = 0
        try:
            while True:
                for typ, obj in pending:
                    if initial_cut is not None and sent == initial_cut and sent <= n_initial:
                        with self.st.lock:
                            self.st.count('fault_initialcut')
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if initial_hold is not None and sent == initial_hold and sent <= n_initial:
                        with self.st.lock:
                            self.st.count('fault_initialhold')
                            self.st.lock.wait_for(lambda: self.st.faults is not f, timeout=300)
                    self.send_event(typ, obj)
                    sent += 1
                    if drop_after is not None and sent > drop_after:
                        with self.st.lock:
                            self.st.count('fault_watchdrop')
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                pending = []
                if time.monotonic() >= deadline:
                    break
                with self.st.lock:
                    if self.st.watch_generation != gen:
                        if self.st.watch_expire:
                            pending = [('ERROR', status(410, 'Expired', 'watch expired'))]
                            deadline = 0
                            continue
                        break
                    if pos >= len(self.st.events):
                        self.st.lock.wait(0.05)
                    while pos < len(self.st.events):
                        erv, typ, text, keys = self.st.events[pos]
                        pos += 1
                        if matches(keys, sel):
                            pending.append((typ, text))
                    cur_rv = self.st.rv
                if (bookmarks and not pending and
                        time.monotonic() - last_bookmark > self.server.bookmark_interval):
                    last_bookmark = time.monotonic()
                    pending = [('BOOKMARK', {'kind': 'ResourceSlice',
                                             'apiVersion': 'resource.k8s.io/v1',
                                             'metadata': {'resourceVersion': str(cur_rv)}})]
            self.wfile.write(b'0\r\n\r\n')
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def finish_object(self, obj, old=None):
        meta = obj.setdefault('metadata', {})
        meta['resourceVersion'] = self.st.next_rv()
        if old is None:
            meta['uid'] = str(uuid.uuid4())
            meta['creationTimestamp'] = now_rfc3339()
            meta['generation'] = 1
        else:
            meta['uid'] = old['metadata']['uid']
            meta['creationTimestamp'] = old['metadata']['creationTimestamp']
            meta['generation'] = old['metadata'].get('generation', 1) + (
                obj.get('spec') != old.get('spec'))

    def create(self, obj):
        if not isinstance(obj, dict):
            return self.send_json(400, status(400, 'BadRequest', 'body is not a JSON object'))
        meta = obj.setdefault('metadata', {})
        with self.st.lock:
            if not meta.get('name'):
                base = meta.get('generateName')
                if not base:
                    return self.invalid('', [{'reason': 'FieldValueRequired',
                                              'field': 'metadata.name',
                                              'message': 'name or generateName is required'}])
                while True:
                    name = base[:58] + ''.join(self.st.rng.choice(NAME_CHARS) for _ in range(5))
                    if name not in self.st.slices:
                        break
                meta['name'] = name
            name = meta['name']
            self.st.strip_gated(obj)
            causes = validate.slice_errors(obj)
            if causes:
                self.st.count('invalid')
                return self.invalid(name, causes)
            if name in self.st.slices:
                return self.send_json(409, status(409, 'AlreadyExists',
                                                  'resourceslices "%s" already exists' % name,
                                                  name=name))
            self.finish_object(obj)
            self.st.slices[name] = obj
            self.st.emit('ADDED', obj)
            out = self.st.events[-1][2]
        self.send_text(201, out)

    def update(self, name, obj):
        if not isinstance(obj, dict):
            return self.send_json(400, status(400, 'BadRequest', 'body is not a JSON object'))
        with self.st.lock:
            old = self.st.slices.get(name)
            if old is None:
                return self.not_found(name)
            meta = obj.get('metadata', {})
            if meta.get('name') != name:
                return self.send_json(400, status(400, 'BadRequest', 'name does not match'))
            if meta.get('resourceVersion') != old['metadata']['resourceVersion']:
                self.st.count('conflict')
                return self.send_json(409, status(
                    409, 'Conflict', 'Operation cannot be fulfilled on resourceslices.resource.'
                    'k8s.io "%s": the object has been modified; please apply your changes to '
                    'the latest version and try again' % name, name=name))
            self.st.strip_gated(obj)
            causes = validate.slice_errors(obj, old)
            if causes:
                self.st.count('invalid')
                return self.invalid(name, causes)
            self.finish_object(obj, old)
            self.st.slices[name] = obj
            self.st.emit('MODIFIED', obj)
            out = self.st.events[-1][2]
        self.send_text(200, out)

    def delete(self, name, opts):
        with self.st.lock:
            old = self.st.slices.get(name)
            if old is None:
                return self.not_found(name)
            pre = (opts or {}).get('preconditions') or {} if isinstance(opts, dict) else {}
            if ('uid' in pre and pre['uid'] != old['metadata']['uid']) or (
                    'resourceVersion' in pre and
                    pre['resourceVersion'] != old['metadata']['resourceVersion']):
                self.st.count('conflict')
                return self.send_json(409, status(
                    409, 'Conflict', 'Operation cannot be fulfilled on resourceslices.resource.'
                    'k8s.io "%s": Precondition failed' % name, name=name))
            del self.st.slices[name]
            gone = clone(old)
            gone['metadata']['resourceVersion'] = self.st.next_rv()
            self.st.emit('DELETED', gone)
        self.send_json(200, gone)

    def delete_collection(self, sel):
        with self.st.lock:
            node = [v for k, v, eq in sel if k == 'spec.nodeName' and eq]
            driver = [v for k, v, eq in sel if k == 'spec.driver' and eq]
            gone = self.st.wipe(node[0], driver[0] if driver else None) if node else []
        self.send_json(200, {'kind': 'ResourceSliceList', 'apiVersion': 'resource.k8s.io/v1',
                             'metadata': {}, 'items': gone})


class ControlHandler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def reply(self, obj, code=200):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        st = self.server.api.state
        path = urllib.parse.urlsplit(self.path).path
        with st.lock:
            if path == '/counts':
                return self.reply(dict(st.counts))
            if path == '/slices':
                return self.reply(clone(list(st.slices.values())))
            if path == '/log':
                return self.reply(list(st.log))
            if path == '/rv':
                return self.reply({'resourceVersion': st.rv})
            if path == '/events':
                return self.reply(clone(st.k8s_events))
        self.reply({'error': 'unknown'}, 404)

    def do_POST(self):
        api = self.server.api
        st = api.state
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        n = int(self.headers.get('Content-Length') or 0)
        body = json.loads(self.rfile.read(n)) if n else {}
        with st.lock:
            if url.path == '/reset-counts':
                st.counts = {}
                st.log = []
            elif url.path == '/faults':
                st.faults = body
                st.lock.notify_all()
            elif url.path == '/gates':
                st.gates.update(body)
            elif url.path == '/watch-list':
                st.watch_list = bool(body.get('enabled'))
            elif url.path == '/version':
                st.version = body.get('minor')
            elif url.path == '/wipe':
                gone = st.wipe(q['node'], q.get('driver'))
                return self.reply({'deleted': len(gone)})
            elif url.path == '/rotate-token':
                api.rotate_token()
            elif url.path == '/claims':
                st.claims[(body['metadata']['namespace'], body['metadata']['name'])] = body
            elif url.path == '/nodes':
                st.nodes[body['metadata']['name']] = body
            elif url.path == '/compact':
                st.compacted = st.rv + 1
            elif url.path == '/end-watches':
                st.watch_generation += 1
                st.watch_expire = q.get('expire') == '1'
                st.lock.notify_all()
            elif url.path == '/delete':
                obj = st.slices.pop(q['name'], None)
                if obj:
                    obj = clone(obj)
                    obj['metadata']['resourceVersion'] = st.next_rv()
                    st.emit('DELETED', obj)
            elif url.path == '/modify':
                obj = st.slices.get(q['name'])
                if obj:
                    obj['spec']['devices'][0].setdefault('attributes', {})['tampered'] = {
                        'bool': True}
                    obj['metadata']['resourceVersion'] = st.next_rv()
                    st.emit('MODIFIED', obj)
            else:
                return self.reply({'error': 'unknown'}, 404)
        self.reply({'ok': True})


class QuietServer(ThreadingHTTPServer):
    """Clients going away mid-answer (a cancelled watch, a dropped connection) are normal."""
    daemon_threads = True
    request_queue_size = 128   # the default 5 drops parallel connects for a second

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (OSError, ssl.SSLError)):
            return
        super().handle_error(request, client_address)


class ApiServer:
    """The test apiserver. dir: state directory (certificates, token, kubeconfigs)."""

    def __init__(self, dir, nodes=('node-1',), serve_v1_claims=True, bookmark_interval=1.0,
                 split_events=True, watch_list=True, bound_node=None):
        """watch_list: the WatchList gate (streaming lists); off, they get 422.
        bound_node: tokens are JWTs of a pod on that node (one of nodes, or another)."""
        self.dir = dir
        os.makedirs(dir, exist_ok=True)
        self.state = State(self)
        self.state.watch_list = watch_list
        self.serve_v1_claims = serve_v1_claims
        self.bookmark_interval = bookmark_interval
        self.split_events = split_events
        for n in nodes:
            self.state.nodes[n] = {'apiVersion': 'v1', 'kind': 'Node',
                                   'metadata': {'name': n, 'uid': str(uuid.uuid4()),
                                                'resourceVersion': '1'}}
        self.bound_node = bound_node
        self.token_file = os.path.join(dir, 'token')
        self._token = None
        self.rotate_token()
        self.ca = make_certs(dir)
        validate.schema_errors({}, 'ResourceSlice')  # compile the schema before the first write

    def token(self):
        return self._token

    def rotate_token(self):
        self._token = 'test-token-' + uuid.uuid4().hex
        if self.bound_node:
            node = self.state.nodes.get(self.bound_node, {'metadata': {'uid': 'uid-elsewhere'}})
            claims = {'sub': 'system:serviceaccount:dralet:dralet', 'jti': self._token,
                      'kubernetes.io': {'namespace': 'dralet',
                                        'node': {'name': self.bound_node,
                                                 'uid': node['metadata']['uid']},
                                        'pod': {'name': 'dralet-x', 'uid': str(uuid.uuid4())}}}
            self._token = '.'.join(base64.urlsafe_b64encode(json.dumps(part).encode())
                                   .decode().rstrip('=') for part in
                                   ({'alg': 'RS256', 'kid': 'test'}, claims, {'sig': 'none'}))
        tmp = self.token_file + '.tmp'
        with open(tmp, 'w') as f:
            f.write(self._token + '\n')
        os.replace(tmp, self.token_file)

    def start(self):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(self.dir, 'server.crt'),
                            os.path.join(self.dir, 'server.key'))
        ctx.load_verify_locations(self.ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
        self.httpd = QuietServer(('127.0.0.1', 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.state = self.state
        self.httpd.token = self.token
        self.httpd.serve_v1_claims = self.serve_v1_claims
        self.httpd.bookmark_interval = self.bookmark_interval
        self.httpd.split_events = self.split_events
        # handshakes in the connection threads, not one by one in the accepting thread
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True,
                                            do_handshake_on_connect=False)
        self.port = self.httpd.server_address[1]
        self.control = QuietServer(('127.0.0.1', 0), ControlHandler)
        self.control.daemon_threads = True
        self.control.api = self
        self.control_port = self.control.server_address[1]
        for srv in (self.httpd, self.control):
            threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.write_kubeconfigs()
        return self

    def stop(self):
        with self.state.lock:
            self.state.watch_generation += 1
            self.state.lock.notify_all()
        for srv in (self.httpd, self.control):
            srv.shutdown()
            srv.server_close()

    def write_kubeconfigs(self):
        server = 'https://127.0.0.1:%d' % self.port

        def kc(user):
            return {'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'test',
                    'contexts': [{'name': 'test', 'context': {'cluster': 'c', 'user': 'u'}}],
                    'clusters': [{'name': 'c', 'cluster': {'server': server,
                                                           'certificate-authority': 'ca.crt'}}],
                    'users': [{'name': 'u', 'user': user}]}
        self.kubeconfig = os.path.join(self.dir, 'kubeconfig')
        with open(self.kubeconfig, 'w') as f:
            json.dump(kc({'tokenFile': 'token'}), f)
        self.kubeconfig_cert = os.path.join(self.dir, 'kubeconfig-cert')
        with open(self.kubeconfig_cert, 'w') as f:
            json.dump(kc({'client-certificate': 'client.crt', 'client-key': 'client.key'}), f)

    # control helpers for in-process tests
    def counts(self):
        with self.state.lock:
            return dict(self.state.counts)

    def reset_counts(self):
        with self.state.lock:
            self.state.counts = {}
            self.state.log = []

    def slices(self, node=None, driver=None):
        with self.state.lock:
            return [clone(o) for o in self.state.slices.values()
                    if (node is None or o['spec'].get('nodeName') == node) and
                    (driver is None or o['spec'].get('driver') == driver)]

    def k8s_events(self):
        """The core/v1 Events created."""
        with self.state.lock:
            return clone(self.state.k8s_events)

    def set_faults(self, **faults):
        with self.state.lock:
            self.state.faults = faults
            self.state.lock.notify_all()

    def set_watch_list(self, enabled):
        """Turns the WatchList gate on or off (streaming lists served or refused with 422)."""
        with self.state.lock:
            self.state.watch_list = enabled

    def seed_slice(self, name, driver, node, pool=None, devices=('x-0',)):
        """Stores a slice as if someone else wrote it (another driver, an old instance,
        another node), with its ADDED event; returns a copy."""
        with self.state.lock:
            obj = {'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceSlice',
                   'metadata': {'name': name, 'uid': 'uid-' + name, 'generation': 1,
                                'resourceVersion': self.state.next_rv(),
                                'creationTimestamp': '2026-01-01T00:00:00Z'},
                   'spec': {'driver': driver, 'nodeName': node,
                            'pool': {'name': pool or node, 'generation': 1,
                                     'resourceSliceCount': 1},
                            'devices': [{'name': d} for d in devices]}}
            self.state.slices[name] = obj
            self.state.emit('ADDED', obj)
            return json.loads(json.dumps(obj))

    def expire_watches(self):
        """Ends every open watch with ERROR 410 Expired and forgets the history before now
        (a compaction): a watch from an older resourceVersion gets 410 too. Watches ended
        by a later end_watches() end cleanly again."""
        with self.state.lock:
            self.state.compacted = self.state.rv + 1
            self.state.watch_generation += 1
            self.state.watch_expire = True
            self.state.lock.notify_all()

    def end_watches(self):
        """Ends every open watch cleanly (the next ones see the current faults)."""
        with self.state.lock:
            self.state.watch_generation += 1
            self.state.watch_expire = False
            self.state.lock.notify_all()

    def wipe(self, node, driver=None):
        with self.state.lock:
            return len(self.state.wipe(node, driver))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dir', required=True)
    ap.add_argument('--node', action='append', default=[])
    ap.add_argument('--no-v1-claims', action='store_true')
    ap.add_argument('--bookmark-interval', type=float, default=1.0)
    ap.add_argument('--claims', help='load ResourceClaims from CLAIMS/<namespace>/<name>.json')
    a = ap.parse_args()
    srv = ApiServer(a.dir, nodes=a.node or ['node-1'], serve_v1_claims=not a.no_v1_claims,
                    bookmark_interval=a.bookmark_interval).start()
    if a.claims:
        for ns in sorted(os.listdir(a.claims)):
            for f in sorted(os.listdir(os.path.join(a.claims, ns))):
                with open(os.path.join(a.claims, ns, f)) as fh:
                    claim = json.load(fh)
                srv.state.claims[(claim['metadata']['namespace'], claim['metadata']['name'])] = claim
    ready = {'port': srv.port, 'controlPort': srv.control_port, 'kubeconfig': srv.kubeconfig,
             'kubeconfigCert': srv.kubeconfig_cert, 'ca': srv.ca, 'tokenFile': srv.token_file,
             'pid': os.getpid()}
    tmp = os.path.join(a.dir, 'ready.json.tmp')
    with open(tmp, 'w') as f:
        json.dump(ready, f)
    os.replace(tmp, os.path.join(a.dir, 'ready.json'))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
