"""Session 12 round 2: what a CTA's end correlates with, in round 1's stamps (form D: partner,
co-resident CTA, TPC neighbour, SM / TPC / SM-id-block shares of the variance), and how balanced
the pairs of form S are. Run from docs/perf/logs/2026-11-30-s12-decode:
  python3 ../2026-11-30-s12-decode2/stamp_corr.py call1/stamps-D.txt.gz call2/stamps-D.txt.gz
  python3 ../2026-11-30-s12-decode2/stamp_corr.py --pairs call2/stamps-S.txt.gz"""
import gzip
import statistics as st
import sys

H = 8  # kv heads: blockIdx = item * H + head; the two chunks of a request are items 2r, 2r + 1


def load(f, shape, mode):
    d = {}
    for line in gzip.open(f, "rt"):
        w = line.split()
        if " ".join(w[1:3]) != shape or w[4] != mode:
            continue
        d[int(w[6])] = (int(w[8]), int(w[10]), float(w[15]))  # sm, tiles, end (us)
    return d


def corr(a, b):
    ma, mb = st.mean(a), st.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return num / (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5


def eta2(d, key):
    g = {}
    for sm, _, e in d.values():
        g.setdefault(key(sm), []).append(e)
    allv = [e for _, _, e in d.values()]
    m = st.mean(allv)
    ssb = sum(len(v) * (st.mean(v) - m) ** 2 for v in g.values())
    return ssb / sum((x - m) ** 2 for x in allv)


def correlations(f, shape, mode, d):
    pa, pb = [], []
    for c, (_, _, e) in d.items():
        item, h = divmod(c, H)
        if item % 2 == 0:
            pa.append(e)
            pb.append(d[(item + 1) * H + h][2])
    bysm = {}
    for c, (sm, _, e) in d.items():
        bysm.setdefault(sm, []).append(e)
    ca = [v[0] for v in bysm.values() if len(v) == 2]
    cb = [v[1] for v in bysm.values() if len(v) == 2]
    smm = {sm: st.mean(v) for sm, v in bysm.items()}
    ta = [smm[s] for s in smm if s % 2 == 0 and s + 1 in smm]
    tb = [smm[s + 1] for s in smm if s % 2 == 0 and s + 1 in smm]
    ends = [e for _, _, e in d.values()]
    pm = [(x + y) / 2 for x, y in zip(pa, pb)]
    print(f"{f} {shape} {mode}: sd {st.pstdev(ends):.2f}, partner r {corr(pa, pb):.2f}, "
          f"co-resident r {corr(ca, cb):.2f}, TPC r {corr(ta, tb):.2f}; eta2 SM "
          f"{eta2(d, lambda s: s):.2f} TPC {eta2(d, lambda s: s // 2):.2f} SM/16 "
          f"{eta2(d, lambda s: s // 16):.2f}; max end {max(ends):.1f}, max pair mean "
          f"{max(pm):.1f}, sd pair means {st.pstdev(pm):.2f}")


def pairs(f, shape, mode, d):
    res = []
    for c, (_, t, e) in d.items():
        item, h = divmod(c, H)
        if item % 2 == 0:
            _, t2, e2 = d[(item + 1) * H + h]
            res.append((max(e, e2), (t + t2) / (t / e + t2 / e2), abs(e - e2)))
    print(f"{f} {shape} {mode}: last end {max(r[0] for r in res):.1f}, last pair if balanced "
          f"{max(r[1] for r in res):.1f}, pair |d end| median {st.median(r[2] for r in res):.1f} "
          f"max {max(r[2] for r in res):.1f}, mean end {st.mean(e for _, _, e in d.values()):.2f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    fn = correlations
    if args and args[0] == "--pairs":
        fn, args = pairs, args[1:]
    for f in args:
        for shape in ("B=16 L=32768", "B=16 L=16384"):
            for mode in ("alone", "b2b"):
                d = load(f, shape, mode)
                if d:
                    fn(f, shape, mode, d)
