# Session 18: the shapes whose fp8 plan the final model (98d503c) changes against s13, with call 1's
# A/B (s13 / the lone-0.75 model, two rounds, same call) and call 2's final tree, queued and b2b us.
# usage: final_table.py CALL1_LOG CALL2_LOG PLANS_FINAL  (stream or graph logs alike)
import re, sys, collections
def parse(fn, labelled=True):
    res = collections.defaultdict(lambda: collections.defaultdict(list)); t = 'final'; plan = {}
    for line in open(fn):
        m = re.match(r'==== \S+ (old|new) round', line)
        if m: t = m.group(1); continue
        m = re.match(r'plan (\S+) B=(\d+) L=(\d+):.* chunk (\d+) items (\d+) ctas (\d+)', line)
        if m: plan[(t, m.group(1), int(m.group(2)), int(m.group(3)))] = (int(m.group(4)), int(m.group(6))); continue
        m = re.match(r'decode\S*\s+(\S+) e4m3kv B=(\d+) L=(\d+)\s.*queued ([\d.]+) us.*back-to-back ([\d.]+) us', line)
        if m:
            k = (m.group(1), int(m.group(2)), int(m.group(3)))
            res[k][t].append((float(m.group(4)), float(m.group(5))))
    return res, plan
c1, p1 = parse(sys.argv[1]); c2, p2 = parse(sys.argv[2])
avg = lambda v, i: sum(x[i] for x in v) / len(v)
print("| config | B | L | s13 plan (chunk, CTAs) | final plan | call 1 s13 queued / b2b | call 2 final queued / b2b | change queued / b2b |")
print("|---|---|---|---|---|---|---|---|")
for k in c1:
    if ('old',) + k not in p1 or ('final',) + k not in p2 or not c2[k]['final']: continue
    po, pf = p1[('old',) + k], p2[('final',) + k]
    if po == pf: continue
    oq, ob = avg(c1[k]['old'], 0), avg(c1[k]['old'], 1)
    fq, fb = avg(c2[k]['final'], 0), avg(c2[k]['final'], 1)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {po[0]}, {po[1]} | {pf[0]}, {pf[1]} | {oq:.2f} / {ob:.2f} | {fq:.2f} / {fb:.2f} | {100*(fq/oq-1):+.1f} % / {100*(fb/ob-1):+.1f} % |")
