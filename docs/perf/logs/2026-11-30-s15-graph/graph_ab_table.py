"""Session 15, second consolidated call: decode configurations in graph mode (bench_decode --graph:
each input copy's Run() captured once, the timed call its cuGraphLaunch) under
FLASHJIT_DECODE_MERGE=fused (no merge kernel: session 14's graph plans) and the default; queued
µs, and whether the default wrapper launches the merge kernel and the plan takes it. From
sw/graph_ab.log (tar xzf sweeps.tgz -C sw)."""
import re, sys
f = sys.argv[1] if len(sys.argv) > 1 else "sw/graph_ab.log"
cur, t, plan = None, {}, {}
for line in open(f):
    m = re.match(r"==== graph merge (\w+)", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"plan (\w+) B=(\d+) L=(\d+):.*merges (\d+) merge_kernel (\d+)", line)
    if m and cur == "auto":
        plan[(m[1], int(m[2]), int(m[3]))] = (int(m[4]), int(m[5]))
    m = re.match(r"decode_graph\s+(\w+) \w+ B=(\d+) L=(\d+)\s+[\d.]+ us.*queued ([\d.]+) us", line)
    if m:
        t.setdefault((m[1], int(m[2]), int(m[3])), {})[cur] = float(m[4])
print("| config | B | L | fused µs | default µs | change | default plan: merges / merge kernel |")
print("|---|---|---|---|---|---|---|")
for k, v in t.items():
    if "fused" in v and "auto" in v:
        p = plan.get(k, (0, 0))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {v['fused']:.2f} | {v['auto']:.2f} | "
              f"{100 * (v['auto'] / v['fused'] - 1):+.1f} % | {p[0]} / {p[1]} |")
