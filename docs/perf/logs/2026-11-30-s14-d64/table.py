# D 64 stage A/B table from call5's bench.log (d64.tgz): queued µs per round, change of the mean.
import re, sys, collections
d = collections.defaultdict(dict); cur = None
for line in open(sys.argv[1]):
    m = re.match(r'==== round (\d) (\w+)', line)
    if m: cur = (m.group(1), m.group(2)); continue
    m = re.match(r'decode\s+(d64 bf16 B=\d+ L=\d+)\s+([\d.]+) us', line)
    if m and cur: d[m.group(1)][cur] = float(re.search(r'queued ([\d.]+) us', line).group(1))
print("| shape | 4 stages (3 CTAs/SM), queued µs r1; r2 | 3 stages (4 CTAs/SM) | 2 stages (5 CTAs/SM) | 3 vs 4 | 2 vs 4 |")
print("|---|---|---|---|---|---|")
for k, v in d.items():
    q = lambda st: [v[(r, st)] for r in '12']
    a, b, c = q('stages4'), q('stages3'), q('stages2')
    ma, mb, mc = sum(a) / 2, sum(b) / 2, sum(c) / 2
    print(f"| {k[4:]} | {a[0]:.2f}; {a[1]:.2f} | {b[0]:.2f}; {b[1]:.2f} | {c[0]:.2f}; {c[1]:.2f} | {100*(mb-ma)/ma:+.1f} % | {100*(mc-ma)/ma:+.1f} % |")
