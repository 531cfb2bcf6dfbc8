"""The decode benchmark table: bench.log's bf16 'decode' rows beside torch_decode.log's cuDNN SDPA
(the faster of its two forms per figure), FlashInfer's figures from issue #3, and the targets
(judged on the queued figure). Usage: decode_table.py bench.log torch_decode.log"""
import re, sys
BYTES = lambda b, l: b * l * 8 * 128 * 2 * 2  # K + V, 8 kv heads, D 128, bf16
FI = {(1, 1024): 0.30, (16, 1024): 2.18, (16, 4096): 3.59, (16, 32768): 4.41, (64, 1024): 3.54,
      (64, 4096): 4.26, (64, 32768): 4.50, (256, 1024): 4.09, (256, 32768): 4.55}
ours = {}
for line in open(sys.argv[1]):
    m = re.match(r'^decode\s+bf16 B=(\d+) L=(\d+)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us', line)
    if m: ours[(int(m.group(1)), int(m.group(2)))] = tuple(float(m.group(i)) for i in (3, 4, 5))
cudnn = {}
for line in open(sys.argv[2]):
    m = re.match(r'^cudnn:\S+\s+B=(\d+) L=(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)', line)
    if m:
        k = (int(m.group(1)), int(m.group(2)))
        s, b2b, q = float(m.group(3)), float(m.group(4)), float(m.group(5))
        old = cudnn.get(k, (1e9, 1e9, 1e9))
        cudnn[k] = (min(old[0], s), min(old[1], q), min(old[2], b2b))
tb = lambda k, us: BYTES(*k) / us / 1e6
print("| B | L | synced µs (TB/s) | queued µs (TB/s) | b2b µs (TB/s) | cuDNN synced / queued / b2b µs | vs cuDNN synced / queued / b2b | FlashInfer TB/s | targets (queued) |")
print("|---|---|---|---|---|---|---|---|---|")
for k in sorted(ours):
    s, q, b = ours[k]
    c = cudnn.get(k)
    row = f"| {k[0]} | {k[1] // 1024}k | {s:.2f} ({tb(k, s):.3f}) | {q:.2f} ({tb(k, q):.3f}) | {b:.2f} ({tb(k, b):.3f}) | "
    if c:
        row += f"{c[0]:.1f} / {c[1]:.1f} / {c[2]:.1f} | {c[0]/s:.2f}× / {c[1]/q:.2f}× / {c[2]/b:.2f}× | "
    else:
        row += "— | — | "
    fi = FI.get(k)
    notes = []
    t = tb(k, q)
    if fi:
        notes.append("≥ FI " + ("met" if t >= fi else "not met"))
        if fi < 4.0: notes.append(f"1.15× FI ({1.15 * fi:.2f}) " + ("met" if t >= 1.15 * fi else "not met"))
    if k[0] * k[1] >= 256 * 1024: notes.append("≥ 4.5 " + ("met" if t >= 4.5 else "not met"))
    if c and k[0] * k[1] >= 16 * 1024: notes.append("≥ 1.0× cuDNN " + ("met" if c[1] / q >= 1.0 else "not met"))
    row += f"{fi if fi else '—'} | {'; '.join(notes)} |"
    print(row)
