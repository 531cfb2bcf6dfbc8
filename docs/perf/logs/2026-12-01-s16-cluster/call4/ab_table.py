"""Session 16, call 4: graph mode, wrappers sized for 4 waves of split items beyond the batch
(before, 35c1f8d's rule in build-s3) against 1 (fc44fc8, build-s4); queued µs, mean of the
rounds, and the plans. From sw/graph_{ab,short,grid}.log (tar xzf call4/sweeps.tgz -C sw)."""
import re, sys
cur, t, plan = None, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"==== graph (old|new) round", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"plan (\w+) B=(\d+) L=(\d+):.*chunk (\d+) .*cluster (\d+) merges (\d+) merge_kernel (\d+)", line)
    if m:
        plan[(m[1], int(m[2]), int(m[3]), cur)] = f"{m[4]}" + (f" c{m[5]}" if m[5] != "0" else "") + (" mk" if m[7] == "1" else "")
    m = re.match(r"decode_graph\s+(?:(\w+) )?(\w+) B=(\d+) L=(\d+)\s+[\d.]+ us.*queued ([\d.]+) us", line)
    if m:
        k = (m[1] or "grid", m[2], int(m[3]), int(m[4]))
        t.setdefault(k, {}).setdefault(cur, []).append(float(m[5]))
print("| config | kv | B | L | 4 waves (before) µs | 1 wave µs | change | plans: before / after |")
print("|---|---|---|---|---|---|---|---|")
for k, v in t.items():
    if "old" in v and "new" in v:
        a, b = (sum(v[g]) / len(v[g]) for g in ("old", "new"))
        p = " / ".join(plan.get((k[0], k[2], k[3], g), "") for g in ("old", "new"))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {a:.2f} | {b:.2f} | {100 * (b / a - 1):+.1f} % | {p} |")
