"""Session 28: decode's queued time beside the floor of a kernel that only reads the same bytes
(bench_sm_read, plain and paged) and cuDNN SDPA, from one device call's logs.
  python3 floor_table.py call4 > floor_table.md"""
import re
import sys

CALL = sys.argv[1] if len(sys.argv) > 1 else "call4"

def queued(path, pat):
    out = []
    for line in open(path):
        if re.search(pat, line):
            out.append(float(re.search(r"queued ([\d.]+) us", line).group(1)))
    return out

def cudnn(shape):
    best = None
    for line in open(f"{CALL}/torch.log"):
        f = line.split()
        if len(f) >= 9 and f[0].startswith("cudnn") and f"{f[1]} {f[2]}" == shape:
            best = min(best or 1e9, float(f[7]))  # queued us
    return best

rows = [  # decode shape, the read-only bench's CTAs x tiles, MB, target (us) and which
    ("B=16 L=1024", "256 CTAs x 8 tiles", 67.1, None, ""),
    ("B=16 L=4096", "256 CTAs x 32 tiles", 268.4, 65.0, "1.15x FI"),
    ("B=64 L=1024", "264 CTAs x 31 tiles", 268.4, 65.9, "1.15x FI"),
    ("B=16 L=16384", "256 CTAs x 128 tiles", 1073.7, 238.6, "4.5 TB/s"),
    ("B=64 L=4096", "264 CTAs x 124 tiles", 1073.7, 238.6, "4.5 TB/s"),
    ("B=256 L=1024", "264 CTAs x 124 tiles", 1073.7, 238.6, "4.5 TB/s"),
    # the same bytes in the CTAs decode's plans launch (1.94 and 7.76 waves; call 4 on)
    ("B=64 L=4096", "512 CTAs x 64 tiles", 1073.7, 238.6, "4.5 TB/s"),
    ("B=256 L=1024", "2048 CTAs x 16 tiles", 1073.7, 238.6, "4.5 TB/s"),
]
print("| decode shape (MB) | read-only kernel | plain µs | paged µs | decode µs | decode − paged | cuDNN µs | target µs |")
print("|---|---|---|---|---|---|---|---|")
for shape, ro, mb, target, what in rows:
    if not queued(f"{CALL}/sm_read.log", rf"cp\.async 3 stages, {ro} "):
        continue
    plain = queued(f"{CALL}/sm_read.log", rf"cp\.async 3 stages, {ro} ")
    paged = queued(f"{CALL}/sm_read.log", rf"cp\.async 3 stages paged, {ro} ")
    dec = queued(f"{CALL}/decode_1.log", rf"bf16 {shape} ") + queued(f"{CALL}/decode_2.log", rf"bf16 {shape} ")
    f = lambda v: " / ".join(f"{x:.2f}" for x in v)
    mean = lambda v: sum(v) / len(v)
    tgt = f"{target:.1f} ({what})" if target else "—"
    print(f"| {shape} ({mb:.0f}) | {ro} | {f(plain)} | {f(paged)} | {f(dec)} | "
          f"+{mean(dec) - mean(paged):.1f} | {cudnn(shape):.2f} | {tgt} |")
