#!/usr/bin/env python3
"""Round 2's A/B table: synced / queued / b2b us per row and run. Usage: table.py bench1.log bench2.log"""
import re, sys
rows = ['top_p0.9', 'top_p0.9_push', 'top_p0.9_lean', 'top_p0.9_ends', 'top_p0.9_endsclear',
        'top_k50_top_p0.9_joint']
pat = re.compile(r'^sampling\s+(\S+) (B=\d+ V=\d+ std\d)\s+([0-9.]+) us.*queued ([0-9.]+) us.*back-to-back ([0-9.]+) us')
data = {}
for run, path in enumerate(sys.argv[1:]):
    for line in open(path):
        m = pat.match(line)
        if m and m.group(1) in rows:
            data.setdefault((m.group(2), m.group(1)), []).append(tuple(float(x) for x in m.group(3, 4, 5)))
shapes = []
for (shape, _) in data:
    if shape not in shapes: shapes.append(shape)
print('| shape | ' + ' | '.join(r.replace('top_p0.9', 'p') for r in rows) + ' |')
for shape in shapes:
    cells = []
    for r in rows:
        v = data.get((shape, r), [])
        cells.append(', '.join(f'{a:.2f} / {b:.2f} / {c:.2f}' for a, b, c in v))
    print(f'| {shape} | ' + ' | '.join(cells) + ' |')
print()
print('b2b and queued against 14 (push), per run:')
for shape in shapes:
    base = data.get((shape, 'top_p0.9_push'))
    if not base: continue
    out = []
    for r in ['top_p0.9', 'top_p0.9_lean', 'top_p0.9_ends', 'top_p0.9_endsclear']:
        v = data.get((shape, r), [])
        out.append(r.replace('top_p0.9', 'p') + ' ' + ', '.join(f'{x[2]-b[2]:+.2f} ({x[1]-b[1]:+.2f})' for x, b in zip(v, base)))
    print(shape, ' | '.join(out))
