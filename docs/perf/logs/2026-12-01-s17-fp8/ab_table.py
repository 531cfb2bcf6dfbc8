import re,sys,collections
def parse(fn):
    d=collections.defaultdict(list); t=None
    for line in open(fn):
        m=re.match(r'==== (?:\S+ )*?(old|new) round',line)
        if m: t=m.group(1); continue
        m=re.match(r'decode\s+(.*?B=\d+ L=\d+)\s+([\d.]+) us\s+([\d.]+) TB/s.*queued ([\d.]+) us ([\d.]+) TB/s \| back-to-back ([\d.]+) us',line)
        if m: d[(m.group(1).strip(),t)].append((float(m.group(2)),float(m.group(4)),float(m.group(5)),float(m.group(6))))
    return d
d=parse(sys.argv[1])
keys=[]
for k,t in d:
    if k not in keys: keys.append(k)
print(f"{'shape':34s} {'old q us':>9s} {'new q us':>9s} {'chg%':>6s} {'old TB/s':>8s} {'new TB/s':>8s} | b2b old/new")
for k in keys:
    o=d.get((k,'old'),[]); n=d.get((k,'new'),[])
    if not o or not n: continue
    mo=sum(x[1] for x in o)/len(o); mn=sum(x[1] for x in n)/len(n)
    to=sum(x[2] for x in o)/len(o); tn=sum(x[2] for x in n)/len(n)
    bo=sum(x[3] for x in o)/len(o); bn=sum(x[3] for x in n)/len(n)
    print(f"{k:34s} {mo:9.2f} {mn:9.2f} {100*(mn/mo-1):+6.1f} {to:8.3f} {tn:8.3f} | {bo:.2f}/{bn:.2f}")
