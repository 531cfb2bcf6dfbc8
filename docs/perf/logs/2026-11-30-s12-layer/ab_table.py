#!/usr/bin/env python3
"""Session 12 layer A/B: mean and range over the rounds of each row of a bench --ab log.
usage: ab_table.py bench_norm_ab.log [bench_page_ab.log ...]"""
import re, sys, statistics as st
from collections import OrderedDict
rows = OrderedDict()
for fn in sys.argv[1:]:
    for line in open(fn):
        m = re.match(r'(\S+)\s+(.*?)\s+([\d.]+) us\s+[\d.]+ TB/s.*?  (.*)$', line.rstrip())
        if not m: continue
        name, shape, us, note = m.groups()
        q = re.search(r'queued ([\d.]+) us', note); b = re.search(r'(?:b2b|back-to-back) ([\d.]+) us', note)
        desc = re.sub(r'\s*\|.*|\s+b2b.*', '', note)
        shape = re.sub(r' rep \d+', '', shape)
        key = (name, shape, desc)
        rows.setdefault(key, []).append((float(us), float(q.group(1)) if q else 0, float(b.group(1)) if b else 0))
print('| op | shape | form | n | synced µs | queued µs (min–max) | b2b µs |')
print('|---|---|---|---|---|---|---|')
for (name, shape, desc), v in rows.items():
    s = [x[0] for x in v]; q = [x[1] for x in v]; b = [x[2] for x in v]
    print(f'| {name} | {shape} | {desc} | {len(v)} | {st.mean(s):.2f} | {st.mean(q):.2f} ({min(q):.2f}–{max(q):.2f}) | {st.mean(b):.2f} |')
