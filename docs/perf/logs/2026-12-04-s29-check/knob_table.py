"""Median queued µs per plan knob and shape over the rounds of knobs.log ('== round R KNOBS'
headers, then bench_decode rows), and each knob's change against the default (X=0).
Usage: knob_table.py knobs.log"""
import re, sys, statistics as st
rows, knob = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^== round \d+ (.*)$", line)
    if m:
        knob = m.group(1).strip()
        continue
    m = re.match(r"^decode\s+bf16 B=(\d+) L=(\d+).*queued ([\d.]+) us", line)
    if m and knob:
        rows.setdefault(knob, {}).setdefault(f"B={m.group(1)} L={m.group(2)}", []).append(float(m.group(3)))
shapes = list(rows["X=0"])
print("| knob | " + " | ".join(shapes) + " |")
print("|---|" + "---|" * len(shapes))
base = {s: st.median(rows["X=0"][s]) for s in shapes}
for k, r in rows.items():
    cells = []
    for s in shapes:
        v = st.median(r[s])
        cells.append(f"{v:.2f}" if k == "X=0" else f"{v:.2f} ({100 * (v / base[s] - 1):+.1f} %)")
    print(f"| {'default' if k == 'X=0' else k.replace('FLASHJIT_DECODE_', '')} | " + " | ".join(cells) + " |")
