"""Decode table of the consolidated call (session 10, reused in session 11): ours (bench.log) beside cuDNN (torch.log,
the faster of its two forms per column), synced / queued / b2b."""
import re
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "."
ours, cud = {}, {}
for line in open(f"{d}/bench.log"):
    m = re.match(r"decode\s+bf16 B=(\d+) L=(\d+)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us", line)
    if m:
        ours[(int(m[1]), int(m[2]))] = tuple(float(x) for x in m.group(3, 4, 5))
for line in open(f"{d}/torch.log"):
    m = re.match(r"cudnn:\S+\s+B=(\d+) L=(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)", line)
    if m:
        k = (int(m[1]), int(m[2]))
        s, b, q = (float(x) for x in m.group(3, 4, 5))
        old = cud.get(k, (1e9, 1e9, 1e9))
        cud[k] = (min(old[0], s), min(old[1], q), min(old[2], b))
fi = {(1, 1024): 0.30, (16, 1024): 2.18, (16, 4096): 3.59, (16, 32768): 4.41, (64, 1024): 3.54,
      (64, 4096): 4.26, (64, 32768): 4.50, (256, 1024): 4.09, (256, 32768): 4.55}
print("| B | L | synced µs (TB/s) | queued µs (TB/s) | b2b µs (TB/s) | cuDNN synced / queued / b2b µs "
      "| vs cuDNN synced / queued / b2b | FlashInfer TB/s | targets (queued) |")
print("|---|---|---|---|---|---|---|---|---|")
for (b, L), (s, q, bb) in sorted(ours.items()):
    kv = b * L * 8 * 128 * 2 * 2
    tb = lambda t: kv / t / 1e6
    c = cud.get((b, L))
    notes = []
    if (b, L) in fi:
        f = fi[(b, L)]
        notes.append(f"≥ FI {'met' if tb(q) >= f else 'not met'}")
        if f < 4:
            notes.append(f"1.15× FI ({1.15 * f:.2f}) {'met' if tb(q) >= 1.15 * f else 'not met'}")
    if b * L >= 256 * 1024:
        notes.append(f"≥ 4.5 {'met' if tb(q) >= 4.5 else 'not met'}")
    if b * L >= 16 * 1024 and c:
        notes.append(f"≥ 1.0× cuDNN {'met' if c[1] / q >= 1 else 'not met'} queued, "
                     f"{'met' if c[0] / s >= 1 else 'not met'} synced")
    cs = f"{c[0]:.1f} / {c[1]:.1f} / {c[2]:.1f}" if c else "—"
    rs = f"{c[0] / s:.2f}× / {c[1] / q:.2f}× / {c[2] / bb:.2f}×" if c else "—"
    print(f"| {b} | {L // 1024}k | {s:.2f} ({tb(s):.3f}) | {q:.2f} ({tb(q):.3f}) | {bb:.2f} ({tb(bb):.3f}) "
          f"| {cs} | {rs} | {fi.get((b, L), '—')} | {'; '.join(notes)} |")
