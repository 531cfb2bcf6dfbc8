"""A/B table of bench_decode logs: blocks '==== <label> <form> round <r>' then 'decode' rows.
Usage: ab_table.py LOG FORM_A FORM_B [prefix]  -> per shape: mean synced/queued/b2b of A and B,
and B's change (queued, b2b) against A."""
import re, sys
from collections import defaultdict
log, fa, fb = sys.argv[1], sys.argv[2], sys.argv[3]
prefix = sys.argv[4] if len(sys.argv) > 4 else ''
data = defaultdict(lambda: defaultdict(list))  # shape -> form -> [(synced, queued, b2b)]
form = None
order = []
for line in open(log):
    m = re.match(r'^==== (.*) round (\d+)', line)
    if m:
        form = m.group(1)
        continue
    m = re.match(r'^decode\s+((?:\S+\s+)?\S+)\s+(B=\d+ L=\d+)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us', line)
    if m and form and form.startswith(prefix):
        key = f"{' '.join(m.group(1).split())} {m.group(2)}"
        if key not in order: order.append(key)
        data[key][form].append(tuple(float(m.group(i)) for i in (3, 4, 5)))
def mean(v, i): return sum(x[i] for x in v) / len(v)
print(f"| shape | {fa} synced / queued / b2b µs | {fb} synced / queued / b2b µs | queued | b2b |")
print("|---|---|---|---|---|")
for k in order:
    a, b = data[k].get(fa), data[k].get(fb)
    if not a or not b: continue
    qa, qb, ba, bb = mean(a, 1), mean(b, 1), mean(a, 2), mean(b, 2)
    print(f"| {k} | {mean(a,0):.2f} / {qa:.2f} / {ba:.2f} | {mean(b,0):.2f} / {qb:.2f} / {bb:.2f} | {100*(qb/qa-1):+.1f} % | {100*(bb/ba-1):+.1f} % |")
