#!/usr/bin/env python3
"""Replica of ChooseDecodeChunk (src/ops/decode/decode_schedule.cc) for the bench shapes
(32/8 heads, D 128, page 16, H200: 132 SMs), to list each shape's plan and the cost of the
alternatives. Usage: plan_model.py [imbalance]  (imbalance: the session-12 term, 0 = off)."""
import sys

TILE = 64


def cost_table(b, length, kv_bytes=2, imb=0.0, forced=None):
    sms = 132
    cpi = 8
    slots = sms * (2 if kv_bytes == 2 else 3)
    lone = 0.55 if kv_bytes == 2 else 1.0
    max_cluster = 8 if kv_bytes == 2 else 0
    per_wave_items = slots // cpi
    max_items = b + 4 * per_wave_items + 4
    max_tiles = max(1, (length + TILE - 1) // TILE)
    rows = []
    step = max(1, max_tiles // 1024)
    tiles = max_tiles
    while True:
        chunk = tiles * TILE
        n = max(1, (length + chunk - 1) // chunk)
        items = b * n
        if items > max_items:
            break
        ctas = items * cpi
        waves = (ctas + slots - 1) // slots
        split = items > b
        tile_cost = lone if ctas <= sms else 1.0
        cluster = n if (max_cluster >= 2 and chunk <= 2048 and 2 <= n <= max_cluster) else 0
        merge = 0.0 if not split else (0.5 if cluster else 2.0)
        c = waves * (tiles * tile_cost + 1) + merge
        if imb and waves == 1 and ctas > sms:
            c += imb * tiles
        rows.append((c, chunk, n, ctas, waves, cluster))
        if tiles == 1:
            break
        tiles -= step if tiles > step else 1
    best = None
    for r in rows:  # ties keep the larger chunk (rows run from the largest chunk down)
        if best is None or r[0] < best[0]:
            best = r
    return best, rows


if __name__ == "__main__":
    imb = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    shapes = [(b, l, 2) for b in (1, 16, 64, 256) for l in (1024, 4096, 16384, 32768)]
    shapes += [(16, 4096, 1), (64, 4096, 1), (64, 32768, 1), (256, 1024, 1)]
    for b, l, kb in shapes:
        best, rows = cost_table(b, l, kb, imb)
        alts = sorted(rows)[:4]
        print(f"{'bf16' if kb == 2 else 'e4m3'} B={b:<3} L={l:<6} chunk {best[1]:>6} x{best[2]:<3} "
              f"ctas {best[3]:>5} waves {best[4]} cluster {best[5]} cost {best[0]:.2f} | next: " +
              ", ".join(f"{r[1]}:{r[0]:.1f}" for r in alts[1:]))
