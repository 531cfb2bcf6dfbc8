#!/usr/bin/env python3
"""Per form and shape (session 12 round 2): each run's queued us, the mean synced / queued / b2b,
and the differences of the mean to forms S1 and D. Usage: table.py call1/bench.log"""
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
diff = lambda m, b: " / ".join(f"{x - y:+.2f}" for x, y in zip(m, b))
print("| shape | form | runs: queued µs | mean synced / queued / b2b µs | Δ to S1 | Δ to D |")
print("|---|---|---|---|---|---|")
for s in shapes:
    s1 = mean(runs[("S1", s)]) if ("S1", s) in runs else None
    d = mean(runs[("D", s)]) if ("D", s) in runs else None
    for fm in forms:
        if (fm, s) not in runs:
            continue
        m = mean(runs[(fm, s)])
        q = " / ".join(f"{x[1]:.2f}" for x in runs[(fm, s)])
        a = diff(m, s1) if s1 and fm not in ("S1", "D") else ""
        b = diff(m, d) if d and fm != "D" else ""
        print(f"| {s} | {fm} | {q} | {m[0]:.2f} / {m[1]:.2f} / {m[2]:.2f} | {a} | {b} |")
