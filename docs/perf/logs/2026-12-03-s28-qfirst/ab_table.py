"""Session 28, call 10: A (the tree before) against B (the query's loads before the page ids),
queued µs, mean of the interleaved runs (A B B A A B) of call10/bench.log.
  python3 ab_table.py > ab_table.md"""
import collections
import re

d = collections.defaultdict(lambda: collections.defaultdict(list))
cur = None
for line in open("call10/bench.log"):
    m = re.match(r"==== (\w)", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"(decode|single_decode)\s+(\S+ (?:B=\d+ )?L=\d+)\s+([\d.]+) us.*queued ([\d.]+) us"
                 r".*back-to-back ([\d.]+) us", line)
    if m:
        d[f"{m.group(1)} {m.group(2)}"][cur].append([float(m.group(i)) for i in (3, 4, 5)])
print("| shape | A synced / queued / b2b µs | B synced / queued / b2b µs | B − A queued |")
print("|---|---|---|---|")
for shape, runs in d.items():
    a = [sum(x[i] for x in runs["A"]) / len(runs["A"]) for i in range(3)]
    b = [sum(x[i] for x in runs["B"]) / len(runs["B"]) for i in range(3)]
    print(f"| {shape} | {a[0]:.2f} / {a[1]:.2f} / {a[2]:.2f} | {b[0]:.2f} / {b[1]:.2f} / "
          f"{b[2]:.2f} | {b[1] - a[1]:+.2f} µs ({100 * (b[1] / a[1] - 1):+.1f} %) |")
