#!/usr/bin/env python3
"""Session 13 deccfg: the configuration table from bench.log (bench_decode --configs rows and
torch_decode.py --configs rows of one call). Usage: table.py bench.log [round-marker]
Flags: q<0.9 (queued below 0.9x cuDNN queued), <3.8 (below 3.8 TB/s queued at >= 1 GB of KV),
count (queued above bytes / 4.5 TB/s + 10 us by more than 10 %)."""
import re
import sys

path = sys.argv[1]
marker = sys.argv[2] if len(sys.argv) > 2 else "bench round 1"
ours, cud = {}, {}
section = ""
import gzip
for line in (gzip.open(path, "rt") if path.endswith(".gz") else open(path)):
    if line.startswith("===="):
        section = line
        continue
    m = re.match(r"decode\s+(\S+) (\S+) B=(\d+) L=(\d+)\s+([\d.]+) us\s+([\d.]+) TB/s.*queued ([\d.]+) us ([\d.]+) TB/s \| back-to-back ([\d.]+) us ([\d.]+) TB/s", line)
    if m and marker in section:
        cfg, dt, b, l = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        us, tb = float(m.group(5)), float(m.group(6))
        ours[(cfg, b, l)] = (us, float(m.group(7)), float(m.group(9)), us * tb * 1e6)
        continue
    m = re.match(r"cudnn:(\S+)\s+(\S+) B=(\d+) L=(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)", line)
    if m:
        key = (m.group(2), int(m.group(3)), int(m.group(4)))
        s, bb, q = float(m.group(5)), float(m.group(6)), float(m.group(7))
        old = cud.get(key)
        cud[key] = (s, q, bb) if old is None else (min(old[0], s), min(old[1], q), min(old[2], bb))
print("| config | B | L | KV MB | synced µs | queued µs (TB/s) | b2b µs | cuDNN s / q / b2b µs | vs cuDNN q (s / b2b) | count µs | flags |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
flags_all = []
for (cfg, b, l), (s, q, bb, byt) in ours.items():
    c = cud.get((cfg, b, l))
    tbq = byt / q / 1e6
    count = byt / 4.5e6 + 10
    flags = []
    if c and c[1] / q < 0.9:
        flags.append(f"q {c[1] / q:.2f}x")
    if byt >= 1e9 and tbq < 3.8:
        flags.append(f"{tbq:.2f} TB/s")
    if q > 1.1 * count:
        flags.append(f"count +{100 * (q / count - 1):.0f}%")
    cs = f"{c[0]:.1f} / {c[1]:.1f} / {c[2]:.1f}" if c else "—"
    ratio = f"{c[1] / q:.2f}× ({c[0] / s:.2f}× / {c[2] / bb:.2f}×)" if c else "—"
    print(f"| {cfg} | {b} | {l // 1024}k | {byt / 1e6:.0f} | {s:.2f} | {q:.2f} ({tbq:.3f}) | {bb:.2f} | {cs} | {ratio} | {count:.1f} | {', '.join(flags)} |")
