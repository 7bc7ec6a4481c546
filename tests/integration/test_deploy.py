#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""deploy/: every manifest parses; DeviceClasses validate against the strict schema in
../shared/schemas and the API rules; the DaemonSet, RBAC, ServiceAccount and
ValidatingAdmissionPolicy have the structure kubernetes-api.md 3.3 asks for. The Helm chart
(deploy/helm/dralet, rendered by helm_render.py) passes the same checks and renders the same
objects as the plain manifests."""
import glob
import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, 'tests', 'apiserver'))
sys.path.insert(0, HERE)
import validate  # noqa: E402

DRIVERS = ['gpu.dralet.dev', 'fpga.dralet.dev', 'net.dralet.dev', 'sriov.dralet.dev',
           'accel.dralet.dev']


def load_all():
    docs = []
    for path in sorted(glob.glob(os.path.join(TOP, 'deploy', '*.yaml'))):
        with open(path) as f:
            for d in yaml.safe_load_all(f):
                if d is not None:
                    docs.append((os.path.basename(path), d))
    return docs


def by_kind(docs, kind):
    return [d for _, d in docs if d['kind'] == kind]


def load_chart(values_override=None):
    import helm_render
    chart = os.path.join(TOP, 'deploy', 'helm', 'dralet')
    with open(os.path.join(chart, 'values.yaml')) as f:
        values = yaml.safe_load(f)
    with open(os.path.join(chart, 'Chart.yaml')) as f:
        meta = yaml.safe_load(f)
    assert meta['apiVersion'] == 'v2' and meta['name'] == 'dralet'
    values.update(values_override or {})
    docs = []
    for path in sorted(glob.glob(os.path.join(chart, 'templates', '*.yaml'))):
        with open(path) as f:
            text = helm_render.render(f.read(), values, 'dralet', meta)
        for d in yaml.safe_load_all(text):
            if d is not None:
                docs.append(('helm/' + os.path.basename(path), d))
    return docs


def main():
    if not os.path.exists(validate.schema_path('DeviceClass')):
        print('SKIP: no ../shared/schemas')
        return 77
    plain = load_all()
    assert plain, 'no manifests in deploy/'
    check(plain)
    chart = load_chart()
    check(chart)

    def key(d):
        return (d['kind'], d['metadata']['name'])
    same = {key(d): d for _, d in plain if d['kind'] not in ('Namespace', 'ConfigMap')}
    rendered = {key(d): d for _, d in chart if d['kind'] != 'ConfigMap'}
    assert same == rendered, 'the chart and deploy/*.yaml differ: %s' % sorted(
        set(k for k in same if same[k] != rendered.get(k)) | (set(rendered) - set(same)))
    # switches: no admission policy, other device classes
    chart = load_chart({'validatingAdmissionPolicy': {'enabled': False},
                        'deviceClasses': [{'name': 'gpu.dralet.dev',
                                           'expression': "device.driver == 'gpu.dralet.dev'"}]})
    kinds = [d['kind'] for _, d in chart]
    assert 'ValidatingAdmissionPolicy' not in kinds and kinds.count('DeviceClass') == 1, kinds
    print('deploy: %d manifests and the Helm chart checked' % len(plain))
    return 0


def check(docs):
    for f, d in docs:
        for k in ('apiVersion', 'kind', 'metadata'):
            assert k in d, '%s: %s lacks %s' % (f, d.get('kind'), k)
        assert validate.dns_subdomain(d['metadata'].get('name')), (f, d['metadata'])
        if d['kind'] not in ('Namespace', 'ClusterRole', 'ClusterRoleBinding', 'DeviceClass',
                             'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'):
            assert d['metadata'].get('namespace') == 'dralet', (f, d['kind'])

    # DeviceClasses: the strict schema and the API rules; one named after each default
    # driver, the others "<kind>.<driver>", each selecting its driver's devices first
    classes = by_kind(docs, 'DeviceClass')
    names = [c['metadata']['name'] for c in classes]
    for c in classes:
        name = c['metadata']['name']
        assert c['apiVersion'] == 'resource.k8s.io/v1'
        errs = validate.device_class_errors(c)
        assert not errs, (name, errs)
        [driver] = [d for d in DRIVERS if name == d or name.endswith('.' + d)]
        expr = c['spec']['selectors'][0]['cel']['expression']
        assert expr == "device.driver == '%s'" % driver or \
            expr.startswith("device.driver == '%s' && " % driver), (name, expr)
    assert set(DRIVERS) <= set(names) and len(set(names)) == len(names), names
    ext = [c['spec']['extendedResourceName'] for c in classes
           if 'extendedResourceName' in c['spec']]
    assert len(set(ext)) == len(ext) and ext, ext
    for e in ext:
        assert validate.extended_resource_name(e) and e.startswith('dralet.dev/'), e
    # every class a shipped example or a doc names is shipped
    used = set()
    for path in glob.glob(os.path.join(TOP, 'deploy', 'examples', '*', '*.yaml')) + \
            glob.glob(os.path.join(TOP, 'docs', '*.md')) + [os.path.join(TOP, 'README.md')]:
        with open(path) as f:
            used |= set(re.findall(r'deviceClassName: *([a-z0-9.-]+)', f.read()))
    assert used and used <= set(names), sorted(used - set(names))
    check_classes_on_boards(classes)
    check_rest(docs)


def cel_matches(expr, device):
    """Evaluates the CEL subset the shipped classes use (==, in, &&, ||, !, attribute
    access) on a device of `dralet discover -o json`, by turning it into Python."""
    py = expr.replace('&&', ' and ').replace('||', ' or ')
    py = re.sub(r'!(?!=)', ' not ', py)
    py = py.replace('device.driver', 'D').replace('device.attributes', 'A')
    attrs = {}
    for k, v in device['attributes'].items():
        attrs[k if '/' in k else device['driver'] + '/' + k] = list(v.values())[0]

    class Domain:
        def __init__(self, domain):
            self.domain = domain

        def __getattr__(self, name):
            if self.domain + '/' + name not in attrs:
                raise KeyError('no attribute %s/%s' % (self.domain, name))
            return attrs[self.domain + '/' + name]

    class Attributes:
        def __getitem__(self, domain):
            return Domain(domain)
    return eval(py, {'__builtins__': {}}, {'D': device['driver'], 'A': Attributes()})  # noqa: S307


def check_classes_on_boards(classes):
    """On every golden board: each device falls in its driver's class and in exactly one
    finer class of its driver (where the driver has finer classes); the GPU class holds
    only whole GPUs, never a display-only card, a MIG device or a GPU on vfio-pci."""
    by_name = {c['metadata']['name']: c['spec']['selectors'][0]['cel']['expression']
               for c in classes}
    finer = {d: [n for n in by_name if n.endswith('.' + d)] for d in DRIVERS}
    seen_display = seen_mig = seen_vfio = 0
    for path in sorted(glob.glob(os.path.join(TOP, 'tests', 'golden', '*.json'))):
        with open(path) as f:
            devices = json.load(f)['devices']
        for dev in devices:
            where = '%s %s' % (os.path.basename(path), dev['name'])
            match = [n for n, e in by_name.items() if cel_matches(e, dev)]
            kind = dev['attributes']['type']['string']
            if dev['driver'] == 'gpu.dralet.dev':
                whole = kind in ('gpu', 'amdgpu')
                assert ('gpu.dralet.dev' in match) == whole, (where, kind, match)
                seen_display += kind == 'display'
                seen_mig += kind == 'mig'
                seen_vfio += kind == 'vfio'
                assert ('vfio.gpu.dralet.dev' in match) == (kind == 'vfio'), (where, match)
                assert whole or len([n for n in match if n in finer['gpu.dralet.dev']]) == 1, \
                    (where, kind, match)
            else:
                assert dev['driver'] in match, (where, match)
            if dev['driver'] == 'net.dralet.dev':
                assert ('rdma.net.dralet.dev' in match) == (kind == 'rdma'), (where, match)
                is_vf = dev['attributes']['isVF']['bool']
                assert ('vf.net.dralet.dev' in match) == is_vf, (where, match)
    assert seen_display and seen_mig and seen_vfio, \
        'the goldens hold no display card, MIG device or GPU on vfio-pci'
    check_accel_vfio_form(by_name)


def check_accel_vfio_form(by_name):
    """An accelerator's vfio form (option vfio, off on the goldens: tests/unit/
    test_accel_vfio_form.c) falls in vfio.accel.dralet.dev only, never in the
    accel class a container's claim or extended resource uses; its native form
    the other way round."""
    for kind, want in (('vfio', 'vfio.accel.dralet.dev'), ('accel', 'accel.dralet.dev')):
        dev = {'driver': 'accel.dralet.dev', 'attributes': {'type': {'string': kind}}}
        match = [n for n, e in by_name.items() if cel_matches(e, dev)]
        assert match == [want], (kind, match)


def check_rest(docs):

    # ServiceAccount, RBAC
    sa = by_kind(docs, 'ServiceAccount')
    assert len(sa) == 1 and sa[0]['metadata']['name'] == 'dralet'
    role = by_kind(docs, 'ClusterRole')[0]
    rules = {(tuple(r['apiGroups']), tuple(r['resources'])): sorted(r['verbs'])
             for r in role['rules']}
    assert rules == {
        (('resource.k8s.io',), ('resourceclaims',)): ['get'],
        (('',), ('nodes',)): ['get'],
        (('resource.k8s.io',), ('resourceslices',)): sorted(
            ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
        # Events: created, and a repeat's count patched (docs/operations.md, "Events");
        # core/v1 only, nothing of events.k8s.io, never update or delete
        (('',), ('events',)): ['create', 'patch'],
        # claim device status, and its granular check from 1.36 (kubernetes-after-1.34.md)
        (('resource.k8s.io',), ('resourceclaims/status',)): ['patch', 'update'],
        (('resource.k8s.io',), ('resourceclaims/driver',)): ['associated-node:patch',
                                                              'associated-node:update'],
    }, rules
    granular = [r for r in role['rules'] if r['resources'] == ['resourceclaims/driver']][0]
    assert sorted(granular['resourceNames']) == sorted(
        ['gpu.dralet.dev', 'net.dralet.dev', 'sriov.dralet.dev', 'fpga.dralet.dev',
         'accel.dralet.dev']), granular
    binding = by_kind(docs, 'ClusterRoleBinding')[0]
    assert binding['roleRef'] == {'apiGroup': 'rbac.authorization.k8s.io',
                                  'kind': 'ClusterRole', 'name': role['metadata']['name']}
    assert binding['subjects'] == [{'kind': 'ServiceAccount', 'name': 'dralet',
                                    'namespace': 'dralet'}]

    # ValidatingAdmissionPolicy + binding: own node's slices only
    vap = by_kind(docs, 'ValidatingAdmissionPolicy')[0]
    assert vap['apiVersion'] == 'admissionregistration.k8s.io/v1'
    rule = vap['spec']['matchConstraints']['resourceRules'][0]
    assert rule['resources'] == ['resourceslices'] and rule['apiGroups'] == ['resource.k8s.io']
    assert sorted(rule['operations']) == ['CREATE', 'DELETE', 'UPDATE']
    assert set(rule['apiVersions']) >= {'v1', 'v1beta1', 'v1beta2'}
    assert 'system:serviceaccount:dralet:dralet' in vap['spec']['matchConditions'][0]['expression']
    text = yaml.safe_dump(vap)
    assert "authentication.kubernetes.io/node-name" in text and 'oldObject' in text
    for v in vap['spec']['validations']:
        assert isinstance(v['expression'], str) and v['expression'].strip()
        # balanced parentheses and quotes: a cheap syntax check without a CEL compiler
        assert v['expression'].count('(') == v['expression'].count(')')
        assert v['expression'].count("'") % 2 == 0
    vb = by_kind(docs, 'ValidatingAdmissionPolicyBinding')[0]
    assert vb['spec']['policyName'] == vap['metadata']['name']
    assert vb['spec']['validationActions'] == ['Deny']

    # DaemonSet
    ds = by_kind(docs, 'DaemonSet')[0]
    assert ds['apiVersion'] == 'apps/v1'
    spec = ds['spec']
    assert spec['selector']['matchLabels'].items() <= spec['template']['metadata']['labels'].items()
    assert spec['updateStrategy']['type'] == 'RollingUpdate'
    # a surge pod beside the old one needs its own sockets: --pod-uid $(POD_UID)
    assert spec['updateStrategy']['rollingUpdate'] == {'maxSurge': 1, 'maxUnavailable': 0}
    pod = spec['template']['spec']
    assert pod['hostNetwork'] is True and pod['hostPID'] is True
    assert pod['dnsPolicy'] == 'ClusterFirstWithHostNet'
    assert pod['serviceAccountName'] == 'dralet'
    assert pod['priorityClassName'] == 'system-node-critical'
    host = {v['name']: v['hostPath']['path'] for v in pod['volumes'] if 'hostPath' in v}
    assert sorted(host.values()) == ['/', '/var/lib/dralet/bitstreams', '/var/lib/kubelet/plugins',
                                     '/var/lib/kubelet/plugins_registry', '/var/run/cdi'], host
    # the host's root, read-only at /host: the nvidia backend's driverRoot (the shipped
    # configuration below points it there)
    [root] = [n for n, path in host.items() if path == '/']
    del host[root]
    # the FPGA bitstream store (docs/fpga.md): created when missing, read-only inside
    store = [v for v in pod['volumes'] if v.get('hostPath', {}).get('path') ==
             '/var/lib/dralet/bitstreams']
    assert store[0]['hostPath']['type'] == 'DirectoryOrCreate', store
    for c in pod['containers']:
        res = c['resources']
        for k in ('cpu', 'memory'):
            assert k in res['requests'] and k in res['limits'], res
        mounts = {m['name']: m['mountPath'] for m in c['volumeMounts']}
        for name, path in host.items():
            assert mounts.get(name) == path, (name, mounts)   # same paths inside
        [bits] = [m for m in c['volumeMounts'] if m['name'] == store[0]['name']]
        assert bits.get('readOnly') is True, bits   # prepare only reads images
        [hr] = [m for m in c['volumeMounts'] if m['name'] == root]
        assert hr['mountPath'] == '/host' and hr.get('readOnly') is True, hr
        env = {e['name']: e for e in c['env']}
        assert env['NODE_NAME']['valueFrom']['fieldRef']['fieldPath'] == 'spec.nodeName'
        assert c['args'][0] == 'run'
        uid = c['args'].index('--pod-uid')
        assert c['args'][uid + 1] == '$(POD_UID)'
        assert env['POD_UID']['valueFrom']['fieldRef']['fieldPath'] == 'metadata.uid'
        # the probes ask the agent's own endpoint, on the port it serves
        addr = c['args'][c['args'].index('--metrics-address') + 1]
        port = int(addr.rsplit(':', 1)[1])
        # with hostNetwork a declared port is a hostPort: the surge pod could not schedule
        assert 'ports' not in c, c['ports']
        for probe, path in (('startupProbe', '/healthz'), ('livenessProbe', '/healthz'),
                            ('readinessProbe', '/readyz')):
            assert c[probe]['httpGet'] == {'path': path, 'port': port}, (probe, c.get(probe))
        # every variable set is one something reads (the args, the agent itself, or
        # GnuTLS, which libcurl's dependencies load: off, docs/performance.md "Memory")
        assert set(env) == {'NODE_NAME', 'POD_UID', 'GNUTLS_NO_IMPLICIT_INIT'}, sorted(env)
        assert env['GNUTLS_NO_IMPLICIT_INIT'] == {'name': 'GNUTLS_NO_IMPLICIT_INIT',
                                                  'value': '1'}, env
    cm_names = {d['metadata']['name'] for d in by_kind(docs, 'ConfigMap')}
    for v in pod['volumes']:
        if 'configMap' in v:
            assert v['configMap']['name'] in cm_names
    # the shipped configuration reads the NVIDIA driver's files where the host's root is
    cm = [d for d in by_kind(docs, 'ConfigMap') if d['metadata']['name'] == 'dralet-config'][0]
    shipped = yaml.safe_load(cm['data']['config.yaml'])
    assert shipped['backends']['nvidia']['options'] == {'driverRoot': hr['mountPath']}, shipped
    # the shipped configuration is one the agent accepts
    dralet = os.environ.get('DRALET')
    if dralet:
        import subprocess
        import tempfile
        cm = [d for d in by_kind(docs, 'ConfigMap') if d['metadata']['name'] == 'dralet-config'][0]
        with tempfile.TemporaryDirectory() as tmp:
            cfg, devs = os.path.join(tmp, 'config.yaml'), os.path.join(tmp, 'devices.yaml')
            with open(cfg, 'w') as f:
                f.write(cm['data']['config.yaml'])
            with open(devs, 'w') as f:
                f.write('devices: []\n')
            out = subprocess.run([dralet, 'slices', '--devices', devs, '--config', cfg,
                                  '--node-name', 'n'], capture_output=True, text=True)
            assert out.returncode == 0, out.stderr


if __name__ == '__main__':
    sys.exit(main())
