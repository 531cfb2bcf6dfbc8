#!/usr/bin/env python3
"""Per form and shape: each run's synced / queued / b2b us and the mean, and the difference of
each form's mean to form D's (session 12 call 2). Usage: table.py call2/bench.log"""
import collections
import sys

runs = collections.defaultdict(list)  # (form, shape) -> [(synced, queued, b2b)]
form = None
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("==== "):
        form = f[1] if len(f) > 3 and f[2] == "round" else None
    elif line.startswith("decode ") and form:
        runs[(form, f"{f[1]} {f[2]} {f[3]}")].append((float(f[4]), float(f[-10]), float(f[-4])))
shapes = list(dict.fromkeys(s for _, s in runs))
forms = list(dict.fromkeys(fm for fm, _ in runs))
mean = lambda v: [sum(x[i] for x in v) / len(v) for i in range(3)]
print("| shape | form | runs: queued µs | mean synced / queued / b2b µs | Δ to D synced / queued / b2b |")
print("|---|---|---|---|---|")
for s in shapes:
    base = mean(runs[("D", s)]) if ("D", s) in runs else None
    for fm in forms:
        if (fm, s) not in runs:
            continue
        m = mean(runs[(fm, s)])
        q = " / ".join(f"{x[1]:.2f}" for x in runs[(fm, s)])
        d = " / ".join(f"{a - b:+.2f}" for a, b in zip(m, base)) if base and fm != "D" else ""
        print(f"| {s} | {fm} | {q} | {m[0]:.2f} / {m[1]:.2f} / {m[2]:.2f} | {d} |")
