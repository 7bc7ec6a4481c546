# SPDX-License-Identifier: Apache-2.0
"""A renderer for the small subset of Helm's template language the dralet chart uses, so
tests can check the rendered manifests without a helm binary:
  {{ .Values.a.b }}  {{ .Release.Namespace }}  {{ .Chart.AppVersion }}  {{ . }} {{ .field }} (in range)
  {{- toYaml .Values.x | nindent N }}  {{- if .Values.x }} ... {{- end }}
  {{- range .Values.list }} ... {{- end }}
'{{-' trims the whitespace before the action, '-}}' the whitespace after, as Helm does.
Anything else is an error, so the chart cannot drift beyond what is tested."""
import re

import yaml

TOKEN = re.compile(r'{{(-?)\s*(.*?)\s*(-?)}}', re.S)


def lookup(ctx, dot, path):
    if path == '.':
        return dot
    cur = dot   # the top level's dot is the context; inside range, the item (as in Helm)
    for part in path.lstrip('.').split('.'):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur


def value(ctx, dot, expr):
    m = re.fullmatch(r'toYaml (\S+) \| nindent (\d+)', expr)
    if m:
        v = lookup(ctx, dot, m.group(1))
        text = yaml.safe_dump(v, default_flow_style=False, sort_keys=False).rstrip('\n')
        if text in ('{}', '[]', 'null'):
            text = '{}' if not isinstance(v, list) else '[]'
        pad = ' ' * int(m.group(2))
        return '\n' + '\n'.join(pad + line for line in text.split('\n'))
    if re.fullmatch(r'\.[A-Za-z0-9_.]*', expr):
        v = lookup(ctx, dot, expr)
        if v is None:
            raise ValueError('undefined: ' + expr)
        return str(v).lower() if isinstance(v, bool) else str(v)
    raise ValueError('unsupported template action: ' + expr)


def parse(text):
    """-> list of ('text', s) / ('value', expr) / ('if'|'range', expr, body)."""
    pieces, pos = [], 0
    for m in TOKEN.finditer(text):
        pieces.append(['text', text[pos:m.start()]])
        pieces.append(['action', m.group(2), m.group(1) == '-', m.group(3) == '-'])
        pos = m.end()
    pieces.append(['text', text[pos:]])
    for i, p in enumerate(pieces):      # whitespace trimming
        if p[0] == 'action':
            if p[2]:
                pieces[i - 1][1] = pieces[i - 1][1].rstrip()
            if p[3]:
                pieces[i + 1][1] = pieces[i + 1][1].lstrip()
    root, stack = [], []
    cur = root
    for p in pieces:
        if p[0] == 'text':
            cur.append(('text', p[1]))
            continue
        expr = p[1]
        head = expr.split(' ', 1)
        if head[0] in ('if', 'range'):
            node = (head[0], head[1], [])
            cur.append(node)
            stack.append(cur)
            cur = node[2]
        elif expr == 'end':
            cur = stack.pop()
        else:
            cur.append(('value', expr))
    if stack:
        raise ValueError('unclosed block')
    return root


def run(nodes, ctx, dot):
    out = []
    for n in nodes:
        if n[0] == 'text':
            out.append(n[1])
        elif n[0] == 'value':
            out.append(value(ctx, dot, n[1]))
        elif n[0] == 'if':
            if lookup(ctx, dot, n[1]):
                out.append(run(n[2], ctx, dot))
        elif n[0] == 'range':
            for item in lookup(ctx, dot, n[1]) or []:
                out.append(run(n[2], ctx, item))
    return ''.join(out)


def render(template_text, values, namespace='dralet', chart=None):
    ctx = {'Values': values, 'Release': {'Namespace': namespace, 'Name': 'dralet'},
           'Chart': chart or {}}
    return run(parse(template_text), ctx, ctx)
