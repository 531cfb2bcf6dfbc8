#!/usr/bin/env python3
"""Session 13 lead: the q_smem A/B table from bench.log (rounds of FLASHJIT_DECODE_Q_SMEM=0 / auto).
Usage: ab.py bench.log"""
import re
import sys

rows, form = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"==== round (\d) q_smem (\S+)", line)
    if m:
        form = (int(m.group(1)), m.group(2))
        continue
    m = re.match(r"decode\s+(\S+) \S+ B=(\d+) L=(\d+)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us ([\d.]+) TB/s", line)
    if m and form:
        key = (m.group(1), int(m.group(2)), int(m.group(3)))
        rows.setdefault(key, {})[form] = tuple(float(m.group(i)) for i in (4, 5, 6))
print("| config | B | L | registers (=0): r1; r2 synced / queued / b2b µs | Q in shared memory: r1; r2 | queued Δ (mean) |")
print("|---|---|---|---|---|---|")
for (cfg, b, l), f in rows.items():
    def cell(q):
        return "; ".join("%.2f / %.2f / %.2f" % f[(r, q)] for r in (1, 2) if (r, q) in f)
    old = [f[(r, "0")][1] for r in (1, 2) if (r, "0") in f]
    new = [f[(r, "auto")][1] for r in (1, 2) if (r, "auto") in f]
    d = (sum(new) / len(new)) / (sum(old) / len(old)) - 1 if old and new else float("nan")
    print(f"| {cfg} | {b} | {l // 1024}k | {cell('0')} | {cell('auto')} | {d * 100:+.1f} % |")
