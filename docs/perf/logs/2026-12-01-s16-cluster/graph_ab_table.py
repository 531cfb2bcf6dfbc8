"""Session 16's consolidated call: decode configurations in graph mode (bench_decode --graph: each
input copy's Run() captured once, the timed call its cuGraphLaunch) under
FLASHJIT_DECODE_GRAPH_CLUSTER=0 (no clusters: session 15's graph plans), 2 (the default) and 8;
queued µs, mean of the rounds, and each knob's plan (cluster size / merge kernel). From
sw/graph_ab.log or sw/graph_short.log (tar xzf sweeps.tgz -C sw)."""
import re, sys
f = sys.argv[1] if len(sys.argv) > 1 else "sw/graph_ab.log"
cur, t, plan = None, {}, {}
for line in open(f):
    m = re.match(r"==== graph cluster (\d+) round", line)
    if m:
        cur = int(m.group(1))
        continue
    m = re.match(r"plan (\w+) B=(\d+) L=(\d+):.*chunk (\d+) .*cluster (\d+) merges (\d+) merge_kernel (\d+)", line)
    if m:
        plan[(m[1], int(m[2]), int(m[3]), cur)] = (int(m[4]), int(m[5]), int(m[7]))
    m = re.match(r"decode_graph\s+(\w+) \w+ B=(\d+) L=(\d+)\s+[\d.]+ us.*queued ([\d.]+) us", line)
    if m:
        t.setdefault((m[1], int(m[2]), int(m[3])), {}).setdefault(cur, []).append(float(m[4]))
def fmt_plan(p):
    chunk, cl, mk = p
    return f"{chunk}" + (f" c{cl}" if cl else "") + (" mk" if mk else "")
print("| config | B | L | none µs | 2 (default) µs | change | 8 µs | change | plans: none / 2 / 8 (chunk, cN cluster, mk merge kernel) |")
print("|---|---|---|---|---|---|---|---|---|")
for k, v in t.items():
    if all(g in v for g in (0, 2, 8)):
        a, b, c = (sum(v[g]) / len(v[g]) for g in (0, 2, 8))
        ps = " / ".join(fmt_plan(plan.get(k + (g,), (0, 0, 0))) for g in (0, 2, 8))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {a:.2f} | {b:.2f} | {100 * (b / a - 1):+.1f} % | "
              f"{c:.2f} | {100 * (c / a - 1):+.1f} % | {ps} |")
