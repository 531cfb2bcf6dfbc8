import re,sys,collections
d=collections.defaultdict(dict)
cur=None
for line in open(sys.argv[1]):
    m=re.match(r'==== round (\d) (\w+) (\w+)',line)
    if m: cur=(m.group(1),m.group(2)); continue
    if not line.startswith('decode') or cur is None: continue
    m=re.match(r'(decode\S*)\s+(.*?)\s+([\d.]+) us\s',line)
    if not m: continue
    label=(m.group(1)+' '+m.group(2)).strip()
    label=re.sub(r'\s+',' ',label)
    q=re.search(r'queued ([\d.]+) us',line); b=re.search(r'back-to-back ([\d.]+) us',line)
    d[label][cur]=(float(m.group(3)), float(q.group(1)) if q else 0, float(b.group(1)) if b else 0)
print("| shape | old s/q/b r1; r2 | new s/q/b r1; r2 | queued mean change |")
print("|---|---|---|---|")
for k,v in d.items():
    try:
        o=[v[('1','old')],v[('2','old')]]; n=[v[('1','new')],v[('2','new')]]
    except KeyError: continue
    qo=(o[0][1]+o[1][1])/2; qn=(n[0][1]+n[1][1])/2
    f=lambda t:'%.2f / %.2f / %.2f'%t
    print(f"| {k} | {f(o[0])}; {f(o[1])} | {f(n[0])}; {f(n[1])} | {100*(qn-qo)/qo:+.1f} % |")
