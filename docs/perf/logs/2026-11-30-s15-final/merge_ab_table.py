"""Session 15 consolidated call: decode configurations under FLASHJIT_DECODE_MERGE=fused (session
14's plans) against the default (the merge kernel where the plan model takes it), queued µs, from
sw/merge_ab.log (tar xzf sweeps.tgz -C sw). Prints the shapes whose plan or time changed by > 1 %."""
import re, sys
f = sys.argv[1] if len(sys.argv) > 1 else "sw/merge_ab.log"
cur, t = None, {}
for line in open(f):
    m = re.match(r"==== merge (\w+)", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"decode\s+(\w+) \w+ B=(\d+) L=(\d+)\s+[\d.]+ us.*queued ([\d.]+) us", line)
    if m:
        t.setdefault((m[1], int(m[2]), int(m[3])), {})[cur] = float(m[4])
print("| config | B | L | fused (session 14 plans) µs | default µs | change |")
print("|---|---|---|---|---|---|")
for k, v in t.items():
    if "fused" in v and "auto" in v and abs(v["auto"] / v["fused"] - 1) > 0.01:
        print(f"| {k[0]} | {k[1]} | {k[2]} | {v['fused']:.2f} | {v['auto']:.2f} | {100 * (v['auto'] / v['fused'] - 1):+.1f} % |")
