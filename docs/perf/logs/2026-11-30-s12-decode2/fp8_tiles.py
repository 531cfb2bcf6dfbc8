"""Session 12 round 2: time per tile of each CTA by its chunk's position in its request (fp8
stamps of call 1; B=64 L=32k: three chunks a request, B=16 L=4k: two), and the most CTAs that
ran at once on an SM. Usage (in call1/): python3 ../fp8_tiles.py stamps-fp8-D.txt.gz ..."""
import collections
import gzip
import statistics as st
import sys

H = 8
for f in sys.argv[1:]:
    for shape, chunks in (("B=64 L=32768", 3), ("B=16 L=4096", 2)):
        g = collections.defaultdict(list)
        ev = collections.defaultdict(list)
        for line in gzip.open(f, "rt"):
            w = line.split()
            if " ".join(w[1:3]) != shape or w[4] != "alone":
                continue
            cta, sm, tiles, t0, end = int(w[6]), int(w[8]), int(w[10]), float(w[12]), float(w[15])
            g[(cta // H) % chunks].append((end - t0) / tiles)
            ev[sm] += [(t0, 1), (end, -1)]
        conc = collections.Counter()
        for e in ev.values():
            c = m = 0
            for _, d in sorted(e):
                c += d
                m = max(m, c)
            conc[m] += 1
        print(f, shape, "us a tile by chunk:", {k: round(st.mean(v), 3) for k, v in sorted(g.items())},
              "SMs by most concurrent CTAs:", dict(conc))
