# Session 18 call 3: queued / b2b us of the fp8 forms a / b / c per shape (mean of rounds), and
# b, c against a. usage: forms_table.py forms.log
import re, sys, collections
d = collections.defaultdict(lambda: collections.defaultdict(list)); t = None; plan = {}
for line in open(sys.argv[1]):
    m = re.match(r'==== \S+ (\w) round', line)
    if m: t = m.group(1); continue
    m = re.match(r'plan (\S+) B=(\d+) L=(\d+):.* slots (\d+) stages (\d+) chunk (\d+) items (\d+) ctas (\d+)', line)
    if m: plan[(t, m.group(1), m.group(2), m.group(3))] = f"{m.group(6)}/{m.group(8)}"; continue
    m = re.match(r'decode\S*\s+(\S+) e4m3kv B=(\d+) L=(\d+)\s.*queued ([\d.]+) us ([\d.]+) TB/s.*back-to-back ([\d.]+) us', line)
    if m: d[(m.group(1), m.group(2), m.group(3))][t].append((float(m.group(4)), float(m.group(5)), float(m.group(6))))
avg = lambda v, i: sum(x[i] for x in v) / len(v)
print(f"{'shape':24s} {'a q':>8s} {'b q':>8s} {'c q':>8s} {'b/a':>7s} {'c/a':>7s} | {'a b2b':>8s} {'b b2b':>8s} {'c b2b':>8s} | a TB/s | plans a b c (chunk/CTAs)")
rb, rc = [], []
for k, v in d.items():
    if not all(x in v for x in 'abc'): continue
    aq, bq, cq = (avg(v[x], 0) for x in 'abc'); ab, bb, cb = (avg(v[x], 2) for x in 'abc')
    rb.append(bq / aq); rc.append(cq / aq)
    print(f"{' '.join(k):24s} {aq:8.2f} {bq:8.2f} {cq:8.2f} {100*(bq/aq-1):+6.1f}% {100*(cq/aq-1):+6.1f}% | {ab:8.2f} {bb:8.2f} {cb:8.2f} | {avg(v['a'],1):.3f} | {plan.get(('a',)+k)} {plan.get(('b',)+k)} {plan.get(('c',)+k)}")
if rb:
    g = lambda r: 100 * (pow(__import__('math').prod(r), 1 / len(r)) - 1)
    print(f"geomean b/a {g(rb):+.1f} %, c/a {g(rc):+.1f} % over {len(rb)} shapes")
