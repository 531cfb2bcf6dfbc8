import re,sys,collections
cur=None; rows=collections.OrderedDict()
for line in open(sys.argv[1]):
    m=re.match(r'==== round (\d+) (\w+) (\w+)',line)
    if m: cur=m.group(2); continue
    m=re.match(r'(decode|single_decode)\s+(.*?)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us',line)
    if m:
        key=(m.group(1)[0]+' '+m.group(2).strip())
        rows.setdefault(key,{}).setdefault(cur,[]).append(float(m.group(4)))
def mean(x): return sum(x)/len(x)
for k,v in rows.items():
    if all(t in v for t in ('old','new','newfused')):
        o=mean(v['old']); n=mean(v['new']); f=mean(v['newfused'])
        flag = '  <<<' if abs(n/o-1)>0.03 else ''
        print(f'{k:40s} old {o:8.2f} new {n:8.2f} ({100*(n/o-1):+6.1f}%) newfused {f:8.2f} ({100*(f/o-1):+6.1f}%){flag}')
