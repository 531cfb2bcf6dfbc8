"""Where a one-wave plan's end spread comes from: per-CTA stamps (bench_decode --stamps FILE) of
one shape's 'alone' call. Prints the spread of the CTAs' ends and of their streaming times (end
minus first tile landed), the slowest and fastest CTAs with their SMs, the correlation of the
ends of the two CTAs that share an SM, and the mean / max end per 12 SM ids.
Usage: zcat stamps.txt.gz | stamps_spread.py 'bf16 B=16 L=4096 nhd alone'"""
import collections, math, statistics as st, sys

tag = sys.argv[1]
d = []
for line in sys.stdin:
    if tag not in line:
        continue
    r = line.split()
    t = r.index("t")
    entry, issued, landed, end = map(float, r[t + 1:t + 5])
    d.append((int(r[r.index("cta") + 1]), int(r[r.index("sm") + 1]), landed, end))
ends = sorted(x[3] for x in d)
n = len(ends)
print(f"{n} CTAs; end min {ends[0]:.1f} p10 {ends[n // 10]:.1f} median {st.median(ends):.1f} "
      f"p90 {ends[9 * n // 10]:.1f} max {ends[-1]:.1f} mean {st.mean(ends):.1f} µs")
stream = sorted((x[3] - x[2], x[1], x[0]) for x in d)
print(f"streaming (end - landed) min {stream[0][0]:.1f} median {st.median(s[0] for s in stream):.1f}"
      f" max {stream[-1][0]:.1f} µs")
print("slowest (µs, sm, cta):", [(round(a, 1), b, c) for a, b, c in stream[-8:]])
print("fastest (µs, sm, cta):", [(round(a, 1), b, c) for a, b, c in stream[:8]])
by_sm = collections.defaultdict(list)
for x in d:
    by_sm[x[1]].append(x[3])
pairs = [v for v in by_sm.values() if len(v) == 2]
if len(pairs) > 2:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ma, mb = st.mean(a), st.mean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    var = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    print(f"ends of the two CTAs of an SM: correlation {cov / var:.2f} over {len(pairs)} SMs")
for g in range(0, 132, 12):
    v = [max(by_sm[s]) for s in range(g, g + 12) if s in by_sm]
    if v:
        print(f"SMs {g}-{g + 11}: last end mean {st.mean(v):.1f}, max {max(v):.1f} µs")
