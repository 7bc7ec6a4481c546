#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""deploy/: every manifest parses; DeviceClasses validate against the strict schema in
../shared/schemas and the API rules; the DaemonSet, RBAC, ServiceAccount and
ValidatingAdmissionPolicy have the structure kubernetes-api.md 3.3 asks for. The Helm chart
(deploy/helm/dralet, rendered by helm_render.py) passes the same checks and renders the same
objects as the plain manifests."""
import glob
import os
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
                        'deviceClasses': ['gpu.dralet.dev']})
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

    # DeviceClasses: the strict schema and the API rules, one per default driver
    classes = by_kind(docs, 'DeviceClass')
    for c in classes:
        assert c['apiVersion'] == 'resource.k8s.io/v1'
        errs = validate.device_class_errors(c)
        assert not errs, (c['metadata']['name'], errs)
        expr = c['spec']['selectors'][0]['cel']['expression']
        assert expr == "device.driver == '%s'" % c['metadata']['name'], expr
    assert sorted(c['metadata']['name'] for c in classes) == sorted(DRIVERS)
    check_rest(docs)


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
        (('',), ('events',)): ['create'],	# the Events about the Node (docs/claims.md)
    }, rules
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
    assert sorted(host.values()) == ['/var/lib/kubelet/plugins',
                                     '/var/lib/kubelet/plugins_registry', '/var/run/cdi'], host
    for c in pod['containers']:
        res = c['resources']
        for k in ('cpu', 'memory'):
            assert k in res['requests'] and k in res['limits'], res
        mounts = {m['name']: m['mountPath'] for m in c['volumeMounts']}
        for name, path in host.items():
            assert mounts.get(name) == path, (name, mounts)   # same paths inside
        env = {e['name']: e for e in c['env']}
        assert env['NODE_NAME']['valueFrom']['fieldRef']['fieldPath'] == 'spec.nodeName'
        assert c['args'][0] == 'run'
        uid = c['args'].index('--pod-uid')
        assert c['args'][uid + 1] == '$(POD_UID)'
        assert env['POD_UID']['valueFrom']['fieldRef']['fieldPath'] == 'metadata.uid'
        # every variable set is one something reads (the args, or the agent itself)
        assert set(env) == {'NODE_NAME', 'POD_UID'}, sorted(env)
    cm_names = {d['metadata']['name'] for d in by_kind(docs, 'ConfigMap')}
    for v in pod['volumes']:
        if 'configMap' in v:
            assert v['configMap']['name'] in cm_names
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
