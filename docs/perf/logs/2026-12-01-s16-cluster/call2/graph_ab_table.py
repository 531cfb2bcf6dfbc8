"""Session 16, call 2: graph mode, FLASHJIT_DECODE_GRAPH_CLUSTER=0 against the default rule (35c1f8d); queued us, mean of 2 rounds. From sw/graph_ab.log or sw/graph_short.log (tar xzf sweeps.tgz -C sw)."""
import re, sys
f = sys.argv[1]
cur, t, plan = None, {}, {}
for line in open(f):
    m = re.match(r"==== graph cluster (\d+) round", line)
    if m: cur = int(m.group(1)); continue
    m = re.match(r"plan (\w+) B=(\d+) L=(\d+):.*chunk (\d+) .*cluster (\d+) merges (\d+) merge_kernel (\d+)", line)
    if m: plan[(m[1], int(m[2]), int(m[3]), cur)] = (int(m[4]), int(m[5]), int(m[7]))
    m = re.match(r"decode_graph\s+(\w+) \w+ B=(\d+) L=(\d+)\s+[\d.]+ us.*queued ([\d.]+) us", line)
    if m: t.setdefault((m[1], int(m[2]), int(m[3])), {}).setdefault(cur, []).append(float(m[4]))
fp = lambda p: f"{p[0]}" + (f" c{p[1]}" if p[1] else "") + (" mk" if p[2] else "")
print("| config | B | L | none µs | default µs | change | plans: none / default |")
print("|---|---|---|---|---|---|---|")
for k, v in t.items():
    if 0 in v and 2 in v:
        a, b = (sum(v[g]) / len(v[g]) for g in (0, 2))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {a:.2f} | {b:.2f} | {100*(b/a-1):+.1f} % | {fp(plan.get(k+(0,),(0,0,0)))} / {fp(plan.get(k+(2,),(0,0,0)))} |")
