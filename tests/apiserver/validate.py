# SPDX-License-Identifier: Apache-2.0
"""ResourceSlice validation like kube-apiserver 1.34: the strict JSON Schema in
../shared/schemas plus the 1.34 name rules and limits (kubernetes-api.md 1.5).
Returns a list of causes {reason, message, field}; empty means valid."""
import json
import os
import re
import subprocess

_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
_CIDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_SEMVER = re.compile(
    r'^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)'
    r'(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?'
    r'(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$')
_QUANTITY = re.compile(r'^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$')
_LABEL_NAME = re.compile(r'^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$')

MAX_DEVICES = 128
MAX_ATTRS_AND_CAPS = 32
MAX_VALUE = 64
MAX_TAINTS = 4


def shared_dir():
    """../shared relative to the repository root."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        top = subprocess.run(['git', 'rev-parse', '--show-toplevel'], cwd=here,
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        top = os.path.dirname(os.path.dirname(here))
    return os.path.join(os.path.dirname(top), 'shared')


def schema_path(kind):
    return os.path.join(shared_dir(), 'schemas', 'resource.k8s.io-v1-%s.json' % kind)


_validators = {}


def _skeleton(o):
    """The shape of @o: leaves replaced by a value of the same JSON type, equal shapes in
    arrays merged. The schemas use only type, properties, additionalProperties, required,
    items and $ref, so @o is valid exactly when its skeleton is, and the skeleton of a
    slice of 128 similar devices holds one device: validation gets 100 times cheaper."""
    if isinstance(o, dict):
        return {k: _skeleton(v) for k, v in o.items()}
    if isinstance(o, list):
        out, seen = [], set()
        for x in o:
            sk = _skeleton(x)
            key = json.dumps(sk, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(sk)
        return out
    if isinstance(o, bool):
        return False
    if isinstance(o, int):
        return 0
    if isinstance(o, float):
        return 0.5
    if isinstance(o, str):
        return ''
    return o


def schema_errors(obj, kind='ResourceSlice'):
    import jsonschema
    if kind not in _validators:
        with open(schema_path(kind)) as f:
            schema = json.load(f)
        keywords = set()

        def walk(x):
            if isinstance(x, dict):
                for k, v in x.items():
                    if k in ('properties', 'definitions'):
                        for vv in v.values():
                            walk(vv)
                    else:
                        keywords.add(k)
                        walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)
        walk(schema)
        structural = keywords <= {'$ref', '$schema', 'additionalProperties', 'format', 'items',
                                  'required', 'type'}
        _validators[kind] = (jsonschema.Draft7Validator(schema), structural)
    validator, structural = _validators[kind]
    if structural and validator.is_valid(_skeleton(obj)):
        return []
    out = []
    for e in validator.iter_errors(obj):
        field = '.'.join(str(p) for p in e.absolute_path)
        out.append({'reason': 'FieldValueInvalid', 'field': field or '<root>',
                    'message': 'schema: ' + e.message[:300]})
    return out


def dns_label(s):
    return isinstance(s, str) and len(s) <= 63 and bool(_LABEL.match(s))


def dns_subdomain(s, maxlen=253):
    return (isinstance(s, str) and 0 < len(s) <= maxlen and
            all(_LABEL.match(p) and len(p) <= 63 for p in s.split('.')))


def driver_name(s):
    return isinstance(s, str) and len(s) <= 63 and dns_subdomain(s.lower(), 63)


def pool_name(s):
    return isinstance(s, str) and 0 < len(s) <= 253 and all(dns_subdomain(p) for p in s.split('/'))


def qualified_name(s):
    if not isinstance(s, str):
        return False
    parts = s.split('/')
    if len(parts) == 1:
        return len(s) <= 32 and bool(_CIDENT.match(s))
    if len(parts) != 2:
        return False
    dom, ident = parts
    return driver_name(dom) and len(ident) <= 32 and bool(_CIDENT.match(ident))


_LABEL_NAME = re.compile(r'^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')


def extended_resource_name(s):
    """A pod's extended resource name (k8s.io/api core/v1 ResourceName; DeviceClassSpec's
    extendedResourceName has the same format): <DNS subdomain>/<name>, the name a label
    name of at most 63 characters, outside the kubernetes.io domain."""
    if not isinstance(s, str) or s.count('/') != 1:
        return False
    dom, name = s.split('/')
    return (dns_subdomain(dom) and not (dom == 'kubernetes.io' or dom.endswith('.kubernetes.io'))
            and len(name) <= 63 and bool(_LABEL_NAME.match(name)))


def quantity(s):
    return isinstance(s, (str, int)) and bool(_QUANTITY.match(str(s)))


def semver(s):
    return isinstance(s, str) and len(s) <= MAX_VALUE and bool(_SEMVER.match(s))


def taint_key(s):
    if not isinstance(s, str) or not s:
        return False
    if '/' in s:
        prefix, name = s.split('/', 1)
        if not dns_subdomain(prefix):
            return False
    else:
        name = s
    return len(name) <= 63 and bool(_LABEL_NAME.match(name))


def slice_errors(obj, old=None):
    """All causes why kube-apiserver 1.34 would refuse @obj (old: for updates)."""
    causes = schema_errors(obj)
    if causes:
        return causes

    def bad(field, message):
        causes.append({'reason': 'FieldValueInvalid', 'field': field, 'message': message})

    meta = obj.get('metadata', {})
    name = meta.get('name')
    if name is not None and not dns_subdomain(name):
        bad('metadata.name', 'Invalid value: %r: a DNS subdomain' % name)
    spec = obj.get('spec', {})
    if not driver_name(spec.get('driver')):
        bad('spec.driver', 'Invalid value: %r: a DNS subdomain of at most 63 characters'
            % spec.get('driver'))
    pool = spec.get('pool', {})
    if not pool_name(pool.get('name')):
        bad('spec.pool.name', 'Invalid value: %r' % pool.get('name'))
    if pool.get('generation', 0) < 0:
        bad('spec.pool.generation', 'must be greater than or equal to 0')
    if pool.get('resourceSliceCount', 0) <= 0:
        bad('spec.pool.resourceSliceCount', 'must be greater than zero')
    selected = [k for k in ('nodeName', 'nodeSelector', 'allNodes', 'perDeviceNodeSelection')
                if spec.get(k) not in (None, '', False)]
    if len(selected) != 1:
        bad('spec', 'exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
            '`perDeviceNodeSelection` is required')
    if 'nodeName' in spec and spec['nodeName'] and not dns_subdomain(spec['nodeName']):
        bad('spec.nodeName', 'Invalid value: %r' % spec['nodeName'])
    devices = spec.get('devices') or []
    if len(devices) > MAX_DEVICES:
        bad('spec.devices', 'Too many: %d: must have at most %d items' % (len(devices), MAX_DEVICES))
    seen = set()
    for i, d in enumerate(devices):
        f = 'spec.devices[%d]' % i
        if not dns_label(d.get('name')):
            bad(f + '.name', 'Invalid value: %r: a DNS label' % d.get('name'))
        if d.get('name') in seen:
            bad(f + '.name', 'Duplicate value: %r' % d.get('name'))
        seen.add(d.get('name'))
        attrs = d.get('attributes') or {}
        caps = d.get('capacity') or {}
        if len(attrs) + len(caps) > MAX_ATTRS_AND_CAPS:
            bad(f, 'Too many: %d: must have at most %d attributes and capacities combined'
                % (len(attrs) + len(caps), MAX_ATTRS_AND_CAPS))
        for k, v in attrs.items():
            af = '%s.attributes[%s]' % (f, k)
            if not qualified_name(k):
                bad(af, 'Invalid value: %r: a C identifier, optionally with a domain' % k)
            set_keys = [x for x in v if v[x] is not None]
            if len(set_keys) != 1:
                bad(af, 'exactly one value must be specified')
                continue
            kind = set_keys[0]
            if kind not in ('int', 'bool', 'string', 'version'):
                bad(af + '.' + kind, 'Unsupported value: list-typed attributes are not in 1.34')
            elif kind == 'string' and len(v[kind]) > MAX_VALUE:
                bad(af + '.string', 'Too long: may not be more than %d bytes' % MAX_VALUE)
            elif kind == 'version' and not semver(v[kind]):
                bad(af + '.version', 'Invalid value: %r: must be semantic version 2.0.0' % v[kind])
        for k, v in caps.items():
            cf = '%s.capacity[%s]' % (f, k)
            if not qualified_name(k):
                bad(cf, 'Invalid value: %r: a C identifier, optionally with a domain' % k)
            if not quantity(v.get('value')):
                bad(cf + '.value', 'Invalid value: %r: quantities must match the regular '
                    'expression' % v.get('value'))
        if d.get('nodeAllocatableResourceMappings'):
            bad(f + '.nodeAllocatableResourceMappings', 'Forbidden: not in 1.34')
        taints = d.get('taints') or []
        if len(taints) > MAX_TAINTS:
            bad(f + '.taints', 'Too many: %d: must have at most %d items' % (len(taints), MAX_TAINTS))
        for j, t in enumerate(taints):
            if not taint_key(t.get('key')):
                bad('%s.taints[%d].key' % (f, j), 'Invalid value: %r' % t.get('key'))
            if t.get('effect') not in ('NoSchedule', 'NoExecute'):
                bad('%s.taints[%d].effect' % (f, j), 'Unsupported value: %r' % t.get('effect'))
    if old is not None:
        ospec = old.get('spec', {})
        for k in ('driver', 'nodeName'):
            if ospec.get(k) != spec.get(k):
                bad('spec.' + k, 'Invalid value: field is immutable')
        if ospec.get('pool', {}).get('name') != pool.get('name'):
            bad('spec.pool.name', 'Invalid value: field is immutable')
    return causes


def device_class_errors(obj):
    causes = schema_errors(obj, 'DeviceClass')
    name = obj.get('metadata', {}).get('name')
    if not dns_subdomain(name):
        causes.append({'reason': 'FieldValueInvalid', 'field': 'metadata.name',
                       'message': 'Invalid value: %r' % name})
    sel = obj.get('spec', {}).get('selectors') or []
    if len(sel) > 32:
        causes.append({'reason': 'FieldValueTooMany', 'field': 'spec.selectors',
                       'message': 'at most 32'})
    for i, s in enumerate(sel):
        expr = s.get('cel', {}).get('expression', '')
        if not expr or len(expr) > 10240:
            causes.append({'reason': 'FieldValueInvalid',
                           'field': 'spec.selectors[%d].cel.expression' % i,
                           'message': 'must be 1 to 10240 characters'})
    return causes
