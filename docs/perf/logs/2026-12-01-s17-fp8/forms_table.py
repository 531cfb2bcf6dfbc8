import re,sys,collections
d=collections.defaultdict(list); t=None; forms=[]
for fn in sys.argv[1:]:
  for line in open(fn):
    m=re.match(r'==== .*? (\w+) round',line)
    if m:
        t=m.group(1)
        if t not in forms: forms.append(t)
        continue
    m=re.match(r'decode\s+(.*?B=\d+ L=\d+)\s+([\d.]+) us\s+([\d.]+) TB/s.*queued ([\d.]+) us ([\d.]+) TB/s \| back-to-back ([\d.]+) us',line)
    if m: d[(m.group(1).strip(),t)].append(float(m.group(4)))
keys=[]
for k,_ in d:
    if k not in keys: keys.append(k)
print(f"{'shape':30s} "+' '.join(f"{f:>9s}" for f in forms)+"  "+' '.join(f"{f+'/'+forms[0]:>9s}" for f in forms[1:]))
tot=collections.defaultdict(list)
for k in keys:
    v=[sum(d[(k,f)])/len(d[(k,f)]) if d[(k,f)] else float('nan') for f in forms]
    r=[100*(x/v[0]-1) for x in v[1:]]
    for f,x in zip(forms[1:],r): tot[f].append(x)
    print(f"{k:30s} "+' '.join(f"{x:9.2f}" for x in v)+"  "+' '.join(f"{x:+9.1f}" for x in r))
for f in forms[1:]: print(f, 'mean %', sum(tot[f])/len(tot[f]))
