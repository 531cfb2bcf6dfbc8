"""Session 30: the median per row of one side's runs in an A/B bench log ('==== A' / '==== B'
headers), printed as bench rows (synced, queued, back-to-back), for decode_table.py.
Usage: ab_median.py ab.log A"""
import re, sys, statistics as st
side, rows = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"^==== ([AB])", line)
    if m:
        side = m.group(1)
        continue
    m = re.match(r"^(decode\S*\s+.*?)\s+([\d.]+) us .*queued ([\d.]+) us.*back-to-back ([\d.]+) us", line)
    if m and side == sys.argv[2]:
        rows.setdefault(m.group(1), []).append([float(m.group(i)) for i in (2, 3, 4)])
for key, xs in rows.items():
    s, q, b = (st.median(x[i] for x in xs) for i in range(3))
    print(f"{key}  {s:.2f} us | queued {q:.2f} us | back-to-back {b:.2f} us")
