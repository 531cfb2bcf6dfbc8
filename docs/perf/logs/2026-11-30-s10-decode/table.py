#!/usr/bin/env python3
"""Summarises bench.log of a session-10 decode call: per mode (the ==== section's name without
its run number) and shape, the mean over runs of synced / queued / back-to-back µs."""
import re
import sys
from collections import defaultdict

data = defaultdict(lambda: defaultdict(list))  # mode -> shape -> [(synced, queued, b2b)]
mode = None
for line in open(sys.argv[1]):
    m = re.match(r"==== (.*?)(?: \(run \d\))? \(\d", line)
    if m:
        mode = m.group(1)
        continue
    m = re.match(r"decode\s+(\S+ B=\d+ L=\d+)\s+([\d.]+) us.*?queued ([\d.]+) us.*?back-to-back ([\d.]+) us", line)
    if m and mode:
        data[mode][m.group(1)].append(tuple(float(x) for x in m.group(2, 3, 4)))
modes = list(data)
shapes = []
for md in modes:
    for s in data[md]:
        if s not in shapes:
            shapes.append(s)
mean = lambda v, i: sum(x[i] for x in v) / len(v)
for s in shapes:
    b, l = re.search(r"B=(\d+) L=(\d+)", s).groups()
    mb = int(b) * int(l) * 8 * 128 * 2 * 2 * (0.5 if s.startswith("e4m3") else 1)
    row = [s]
    for md in modes:
        v = data[md].get(s)
        if not v:
            continue
        row.append(f"{md}: {mean(v,0):.2f}/{mean(v,1):.2f}/{mean(v,2):.2f} "
                   f"({mb/mean(v,1)/1e6:.3f} q TB/s; n={len(v)})")
    print(" | ".join(row))
