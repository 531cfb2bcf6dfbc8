"""Session 16, call 3: stream mode, FLASHJIT_DECODE_LAUNCH_CLUSTER unset (0) against 2 (plans
without a cluster merge launched in clusters of 2); queued µs, mean of the rounds. From
sw/stream_ab.log or sw/grid_ab.log (tar xzf sweeps.tgz -C sw)."""
import re, sys
f = sys.argv[1]
cur, t, plan = None, {}, {}
for line in open(f):
    m = re.match(r"==== launch cluster (\d+) round", line)
    if m: cur = int(m.group(1)); continue
    m = re.match(r"plan (\w+) B=(\d+) L=(\d+):.*chunk (\d+) items (\d+) ctas (\d+).*cluster (\d+) merges (\d+) merge_kernel (\d+) persistent (\d+)", line)
    if m: plan[(m[1], int(m[2]), int(m[3]))] = f"{m[4]}/{m[6]}" + (f" c{m[7]}" if m[7] != "0" else "") + (" mk" if m[9] == "1" else "") + (" pers" if m[10] == "1" else "")
    m = re.match(r"decode\s+(?:(\w+) )?(\w+) B=(\d+) L=(\d+)\s+[\d.]+ us.*queued ([\d.]+) us", line)
    if m: t.setdefault((m[1] or "grid", m[2], int(m[3]), int(m[4])), {}).setdefault(cur, []).append(float(m[5]))
print("| config | kv | B | L | unset µs | 2 µs | change | plan |")
print("|---|---|---|---|---|---|---|---|")
for k, v in t.items():
    if 0 in v and 2 in v:
        a, b = (sum(v[g]) / len(v[g]) for g in (0, 2))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {a:.2f} | {b:.2f} | {100*(b/a-1):+.1f} % | {plan.get((k[0], k[2], k[3]), '')} |")
