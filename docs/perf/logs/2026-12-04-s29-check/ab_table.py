"""A/B table of bench_decode runs in one log: '==== A' / '==== B' headers, then the default
grid's rows. Per row (configuration text before the first figure): the median over each
side's runs of the queued figure (and synced, b2b), and B / A - 1. Usage: ab_table.py ab.log"""
import re, sys, statistics as st
runs = {"A": {}, "B": {}}
side = None
for line in open(sys.argv[1]):
    m = re.match(r"^==== ([AB])", line)
    if m:
        side = m.group(1)
        continue
    m = re.match(r"^(decode\S*\s+.*?)\s+([\d.]+) us .*queued ([\d.]+) us.*back-to-back ([\d.]+) us", line)
    if m and side:
        key = re.sub(r"\s+", " ", m.group(1)).strip()
        runs[side].setdefault(key, []).append(tuple(float(m.group(i)) for i in (2, 3, 4)))
print("| row | A synced / queued / b2b µs (median) | B synced / queued / b2b µs | B/A − 1 queued (each run) |")
print("|---|---|---|---|")
for key, a in runs["A"].items():
    b = runs["B"].get(key)
    if not b:
        continue
    med = lambda xs, i: st.median(x[i] for x in xs)
    d = med(b, 1) / med(a, 1) - 1
    each = " ".join(f"{x[1]:.2f}" for x in a) + " → " + " ".join(f"{x[1]:.2f}" for x in b)
    print(f"| {key} | {med(a,0):.2f} / {med(a,1):.2f} / {med(a,2):.2f} | {med(b,0):.2f} / {med(b,1):.2f} / {med(b,2):.2f} | {100*d:+.1f} % ({each}) |")
