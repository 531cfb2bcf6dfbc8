#!/usr/bin/env python3
"""Session 13 deccfg call 2: the A/B table (two rounds per form) with cuDNN of the same call.
Usage: ab_table.py bench.log FORM_A FORM_B"""
import re
import sys

path, fa, fb = sys.argv[1:4]
rows, cud = {}, {}
form = rnd = None
for line in open(path):
    m = re.match(r"==== (\S+) round (\d)", line)
    if m:
        form, rnd = m.group(1), int(m.group(2))
        continue
    m = re.match(r"decode\s+(\S+) (\S+) B=(\d+) L=(\d+)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us", line)
    if m and form:
        key = (m.group(1), int(m.group(3)), int(m.group(4)))
        rows.setdefault(key, {}).setdefault(form, []).append(
            (float(m.group(5)), float(m.group(6)), float(m.group(7))))
        continue
    m = re.match(r"cudnn:(\S+)\s+(\S+) B=(\d+) L=(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)", line)
    if m:
        key = (m.group(2), int(m.group(3)), int(m.group(4)))
        s, bb, q = float(m.group(5)), float(m.group(6)), float(m.group(7))
        old = cud.get(key)
        cud[key] = (s, q, bb) if old is None else (min(old[0], s), min(old[1], q), min(old[2], bb))


def fmt(v):
    return " / ".join(f"{x:.2f}" for x in v)


print(f"| config | B | L | {fa} s / q / b2b µs (r1; r2) | {fb} s / q / b2b µs (r1; r2) | queued {fa} → {fb} | cuDNN s / q / b2b µs | {fb} vs cuDNN q |")
print("|---|---|---|---|---|---|---|---|")
for key, f in rows.items():
    if fa not in f or fb not in f:
        continue
    a, b = f[fa], f[fb]
    qa = sum(x[1] for x in a) / len(a)
    qb = sum(x[1] for x in b) / len(b)
    c = cud.get(key)
    cs = fmt(c) if c else "—"
    ratio = f"{c[1] / qb:.2f}×" if c else "—"
    print(f"| {key[0]} | {key[1]} | {key[2] // 1024}k | {fmt(a[0])}; {fmt(a[1])} | {fmt(b[0])}; {fmt(b[1])} | {qa:.1f} → {qb:.1f} ({100 * (qb / qa - 1):+.0f} %) | {cs} | {ratio} |")
