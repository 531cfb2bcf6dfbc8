#!/usr/bin/env python3
"""Summarise an nsys timeline of bench_page --timeline: per GPU op (append kernel, driver copy),
its duration, the idle gap before it on the GPU, and the latency from its API call's start on the
CPU to its start on the GPU; split into isolated ops (GPU idle > 2 us before: the synced timing)
and back-to-back ones.
  nsys_gaps.py GPU_TRACE.csv API_TRACE.csv"""
import csv
import statistics
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def col(row, *keys):
    for k in row:
        for want in keys:
            if k.strip().lower().startswith(want.lower()):
                return row[k]
    raise KeyError(f"{keys} not in {list(row)}")


gpu = rows(sys.argv[1])
api = {col(r, "CorrId", "CorrID"): r for r in rows(sys.argv[2])}
ops = []
for r in gpu:
    name = col(r, "Name")
    if "append" in name.lower():
        kind = "append kernel"
    elif "memcpy" in name.lower() and ("dtod" in name.lower() or "device-to-device" in name.lower()):
        kind = "driver copy (DtoD)"
    else:
        kind = None
    start, dur = int(col(r, "Start")), int(col(r, "Duration"))
    ops.append((start, dur, kind, col(r, "CorrId", "CorrID")))
ops.sort()
groups = {}
prev_end = None
for start, dur, kind, corr in ops:
    gap = None if prev_end is None else start - prev_end
    prev_end = start + dur
    if kind is None or gap is None:
        continue
    a = api.get(corr)
    lat = start - int(col(a, "Start")) if a else None
    acall = int(col(a, "Duration")) if a else None
    aname = col(a, "Name") if a else "?"
    cls = "isolated (gap > 2 us)" if gap > 2000 else "back-to-back"
    groups.setdefault((kind, cls, aname), []).append((dur, gap, lat, acall))
print(f"{'op':22} {'class':22} {'api':22} {'n':>4} {'dur us':>8} {'gap us':>8} "
      f"{'api->gpu us':>11} {'api call us':>11}")
for (kind, cls, aname), v in sorted(groups.items()):
    med = lambda i: statistics.median(x[i] for x in v if x[i] is not None) / 1e3
    print(f"{kind:22} {cls:22} {aname[:22]:22} {len(v):4d} {med(0):8.2f} {med(1):8.2f} "
          f"{med(2):11.2f} {med(3):11.2f}")
