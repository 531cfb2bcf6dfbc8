#!/usr/bin/env python3
"""Markdown rows of a call's bench.log form (default A) beside cuDNN's best form per figure from
the same log (torch_decode.py lines: synced, b2b, queued) and FlashInfer's TB/s."""
import re
import sys
from collections import defaultdict

log, form = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "A"
ours = defaultdict(list)
cud = defaultdict(lambda: [1e30, 1e30, 1e30])  # synced, queued, b2b
cur = None
for line in open(log):
    m = re.match(r"==== (\S+)", line)
    if m:
        cur = m.group(1)
        continue
    m = re.match(r"decode\s+bf16 B=(\d+) L=(\d+)\s+([\d.]+) us.*?queued ([\d.]+) us.*?back-to-back ([\d.]+) us", line)
    if m and cur == form:
        ours[(int(m.group(1)), int(m.group(2)))].append([float(m.group(i)) for i in (3, 4, 5)])
    m = re.match(r"cudnn:\S+\s+B=(\d+) L=(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)", line)
    if m:
        k = (int(m.group(1)), int(m.group(2)))
        s, b, q = float(m.group(3)), float(m.group(4)), float(m.group(5))
        cud[k] = [min(cud[k][0], s), min(cud[k][1], q), min(cud[k][2], b)]
fi = {(16, 1024): 2.18, (16, 4096): 3.59, (64, 1024): 3.54, (64, 4096): 4.26, (256, 1024): 4.09,
      (1, 1024): 0.30, (16, 32768): 4.41, (64, 32768): 4.50, (256, 32768): 4.55}
print("| B | L | synced µs (TB/s) | queued µs (TB/s) | b2b µs (TB/s) | cuDNN synced / queued / b2b µs | vs cuDNN synced / queued / b2b | FlashInfer TB/s |")
print("|---|---|---|---|---|---|---|---|")
for (b, l), v in sorted(ours.items()):
    mb = b * l * 8 * 128 * 2 * 2 / 1e6  # MB; TB/s = MB / us
    m = [sum(x[i] for x in v) / len(v) for i in range(3)]
    c = cud.get((b, l))
    cs = " / ".join(f"{x:.1f}" for x in c) if c else "—"
    r = " / ".join(f"{c[i] / m[i]:.2f}×" for i in range(3)) if c else "—"
    print(f"| {b} | {l // 1024}k | {m[0]:.2f} ({mb / m[0]:.3f}) | {m[1]:.2f} ({mb / m[1]:.3f}) | "
          f"{m[2]:.2f} ({mb / m[2]:.3f}) | {cs} | {r} | {fi.get((b, l), '—')} |")
