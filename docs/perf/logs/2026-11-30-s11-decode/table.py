#!/usr/bin/env python3
"""Summarises bench.log of a session-11 decode call: per form (the first word of the ==== section:
A, B, C, ...; stamps sections skipped) and shape, synced / queued / b2b µs of each run and their
mean, and the mean's difference to form B (the plain form) per figure."""
import re
import sys
from collections import defaultdict

data = defaultdict(lambda: defaultdict(list))  # form -> shape -> [(synced, queued, b2b)]
form = None
for line in open(sys.argv[1]):
    m = re.match(r"==== (\S+)", line)
    if m:
        form = m.group(1) if len(m.group(1)) <= 2 else None
        continue
    m = re.match(r"decode\s+(\S+ B=\d+ L=\d+)\s+([\d.]+) us.*?queued ([\d.]+) us.*?back-to-back ([\d.]+) us", line)
    if m and form:
        data[form][m.group(1)].append(tuple(float(x) for x in m.group(2, 3, 4)))
base = sys.argv[2] if len(sys.argv) > 2 else "B"
forms = sorted(data)
shapes = []
for f in forms:
    for s in data[f]:
        if s not in shapes:
            shapes.append(s)
mean = lambda v, i: sum(x[i] for x in v) / len(v)
for s in shapes:
    b, l = re.search(r"B=(\d+) L=(\d+)", s).groups()
    mb = int(b) * int(l) * 8 * 128 * 2 * 2 * (0.5 if s.startswith("e4m3") else 1)
    print(f"## {s} ({mb / 1e6:.1f} MB)")
    ref = data[base].get(s)
    for f in forms:
        v = data[f].get(s)
        if not v:
            continue
        runs = "  ".join(f"{x[0]:.2f}/{x[1]:.2f}/{x[2]:.2f}" for x in v)
        d = ""
        if ref and f != base:
            d = "  vs " + base + ": " + "/".join(f"{mean(v, i) - mean(ref, i):+.2f}" for i in range(3))
        print(f"  {f}: mean {mean(v, 0):.2f}/{mean(v, 1):.2f}/{mean(v, 2):.2f} "
              f"({mb / mean(v, 1) / 1e6:.3f} TB/s queued)  runs {runs}{d}")
