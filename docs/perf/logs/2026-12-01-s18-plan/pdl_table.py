# Session 18 call 5: fp8 forms A (lone 0.8, PDL rule) / B (A, PDL off) / C (lone 0.75) / D (C, PDL
# off): queued and b2b us per shape (mean of rounds), each plan's CTAs and tiles.
# usage: pdl_table.py pdl.log
import re, sys, collections, math
d = collections.defaultdict(lambda: collections.defaultdict(list)); t = None; plan = {}
for line in open(sys.argv[1]):
    m = re.match(r'==== \S+ (\w) round', line)
    if m: t = m.group(1); continue
    m = re.match(r'plan (\S+) B=(\d+) L=(\d+):.* chunk (\d+) items (\d+) ctas (\d+).* tiles/cta (\d+)', line)
    if m: plan[(t, m.group(1), m.group(2), m.group(3))] = (int(m.group(6)), int(m.group(7))); continue
    m = re.match(r'decode\S*\s+(\S+) e4m3kv B=(\d+) L=(\d+)\s.*queued ([\d.]+) us.*back-to-back ([\d.]+) us', line)
    if m: d[(m.group(1), m.group(2), m.group(3))][t].append((float(m.group(4)), float(m.group(5))))
avg = lambda v, i: sum(x[i] for x in v) / len(v)
print(f"{'shape':22s} {'plan A':>10s} {'plan C':>10s} | {'A q':>8s} {'B q':>8s} {'C q':>8s} {'D q':>8s} | {'A b2b':>8s} {'B b2b':>8s} {'C b2b':>8s} {'D b2b':>8s}")
for k, v in d.items():
    if not all(x in v for x in 'ABCD'): continue
    pa, pc = plan.get(('A',) + k), plan.get(('C',) + k)
    q = [avg(v[x], 0) for x in 'ABCD']; b = [avg(v[x], 1) for x in 'ABCD']
    print(f"{' '.join(k):22s} {str(pa):>10s} {str(pc):>10s} | " + " ".join(f"{x:8.2f}" for x in q) + " | " + " ".join(f"{x:8.2f}" for x in b))
