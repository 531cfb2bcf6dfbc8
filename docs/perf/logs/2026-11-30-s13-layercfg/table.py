#!/usr/bin/env python3
"""Tables of the --models call: flashjit (the benches' .tsv rows) beside PyTorch (torch_models.log),
joined on (op, shape). Usage: table.py DIR [--flags]. Prints markdown; --flags lists the cells that
are below PyTorch (queued), below 3.5 TB/s queued at >= 256 MB moved, or small-size latencies."""
import glob
import re
import sys

d = sys.argv[1]
rows = {}
for f in glob.glob(f"{d}/*.tsv"):
    for line in open(f):
        p = line.rstrip("\n").split("\t")
        if len(p) < 6 or not ("model" in p[5] or p[0] == "device_copy"):
            continue
        note = p[5]
        q = re.search(r"queued ([\d.]+) us", note)
        b = re.search(r"back-to-back ([\d.]+) us", note)
        form = re.match(r"model (v\d+ t\d+ r\d+ i\d+)", note)
        rows[(p[0], p[1])] = dict(synced=float(p[2]), queued=float(q.group(1)) if q else 0,
                                  b2b=float(b.group(1)) if b else 0,
                                  form=form.group(1) if form else "")
torch = {}
for line in open(f"{d}/torch_models.log"):
    m = re.match(r"torch (\S+)\s+(.+?)\s+([\d.]+) us\s+[\d.]+ TB/s \| queued ([\d.]+) us", line)
    if m:
        torch[(m.group(1), m.group(2).strip())] = (float(m.group(3)), float(m.group(4)))


def moved(op, shape):
    """Bytes that must move, as the benches count them."""
    if op in ("rmsnorm", "gemma_rmsnorm", "fused_add_rmsnorm", "layernorm"):
        t, h = map(int, re.match(r"bf16 (\d+)x(\d+)", shape).groups())
        return (4 if op == "fused_add_rmsnorm" else 2) * t * h * 2 + h * (8 if op == "layernorm" else 2)
    if op == "qk_rmsnorm":
        t, hh, dd = map(int, re.match(r"bf16 (\d+)x(\d+)x(\d+)", shape).groups())
        return 2 * t * hh * dd * 2 + dd * 2
    if op in ("silu_and_mul", "gelu_tanh_and_mul"):
        t, dd = map(int, re.match(r"bf16 (\d+)x\(2\*(\d+)\)", shape).groups())
        return t * dd * 6
    if op.startswith("rope"):
        n, hq, hk, dd, rot = map(int, re.match(r"bf16 nnz (\d+) h (\d+)/(\d+) d (\d+) rot (\d+)",
                                               shape).groups())
        return 2 * n * (hq + hk) * dd * 2 + n * 4 + (n * rot * 4 if "cache" in op else 0)
    if op == "append_paged_kv":
        dt, n, h, dd = re.match(r"(\S+) nnz (\d+) reqs \d+ h (\d+) d (\d+)", shape).groups()
        n, h, dd = int(n), int(h), int(dd)
        return 2 * n * h * dd * 2 + 2 * n * h * dd * (1 if "e4m3" in dt else 2) + 8 * n
    return 0


def cell(op, shape, big):
    r = rows.get((op, shape))
    if not r:
        return "—"
    mb = moved(op, shape)
    t = torch.get((op, shape))
    if big:
        s = f"{mb / r['queued'] / 1e6:.2f}"
        if t:
            s += f" ({t[1] / r['queued']:.1f}×)"
        return s
    s = f"{r['queued']:.1f}"
    if t:
        s += f" ({t[1] / r['queued']:.1f}×)"
    return s


def flags():
    launch = rows.get(("device_copy", "launch reference (256 B)"))
    out = []
    for (op, shape), r in sorted(rows.items()):
        if op == "device_copy":
            continue
        mb = moved(op, shape)
        t = torch.get((op, shape))
        why = []
        if t and t[1] < r["queued"]:
            why.append(f"below torch queued ({t[1]:.2f} < {r['queued']:.2f} us)")
        if t and t[0] < r["synced"]:
            why.append(f"below torch synced ({t[0]:.2f} < {r['synced']:.2f} us)")
        tbs = mb / r["queued"] / 1e6
        if mb >= 256e6 and tbs < 3.5:
            why.append(f"{tbs:.2f} TB/s queued at {mb / 1e6:.0f} MB")
        if mb < 2e6 and launch and r["queued"] > launch["queued"] + 2.5:
            why.append(f"small-size latency {r['queued']:.2f} us queued (launch ref "
                       f"{launch['queued']:.2f})")
        if why:
            out.append(f"{op:<20} {shape:<44} s/q/b {r['synced']:.2f}/{r['queued']:.2f}/"
                       f"{r['b2b']:.2f} {tbs:.2f} TB/s {r['form']}: " + "; ".join(why))
    return out


if "--flags" in sys.argv:
    print("\n".join(flags()))
    sys.exit()
if "--dump" in sys.argv:  # every row: op, shape, synced, queued, b2b, TB/s queued, torch s/q
    for (op, shape), r in sorted(rows.items()):
        mb = moved(op, shape)
        t = torch.get((op, shape), (0, 0))
        print(f"{op}\t{shape}\t{r['synced']:.2f}\t{r['queued']:.2f}\t{r['b2b']:.2f}\t"
              f"{mb / r['queued'] / 1e6 if r['queued'] else 0:.2f}\t{t[0]:.2f}\t{t[1]:.2f}\t{r['form']}")
    sys.exit()
