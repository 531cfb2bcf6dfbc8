import re,collections
def parse(path):
    d=collections.defaultdict(dict); cur=None
    for line in open(path):
        m=re.match(r'==== round (\d) form (\S+)',line)
        if m: cur=(m.group(1),m.group(2)); continue
        m=re.match(r'decode\s+(gemma2w?|custom) bf16 (B=\d+ L=\d+)\s+([\d.]+) us',line)
        if m and cur:
            q=float(re.search(r'queued ([\d.]+) us',line).group(1)); b=float(re.search(r'back-to-back ([\d.]+) us',line).group(1))
            d[(m.group(1),m.group(2))][cur]=(float(m.group(3)),q,b)
    return d
c1=parse('/tmp/ds1/bench.log'); c3=parse('/tmp/ds3/bench.log')
cud={}
for line in open('/tmp/ds1/torch.log'):
    m=re.match(r'cudnn:(\S+)\s+(gemma2w?) (B=\d+ L=\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)',line)
    if m:
        k=(m.group(2),m.group(3)); v=(float(m.group(4)),float(m.group(5)),float(m.group(6)))
        if k not in cud or v[1]<cud[k][1]: cud[k]=v
def mb(cfg,b,l):
    B=int(b); L=int(l); return B*L*8*256*2*2/1e6
print("| config | B | L | before: tanhf (s13 form), synced / queued / b2b µs, mean of 2 | after: SoftCap (s13 form) | after: split form | change, queued | cuDNN s / q / b2b µs (call 1) | after vs cuDNN, queued |")
print("|---|---|---|---|---|---|---|---|---|")
for k in c1:
    if k[0]=='custom': continue
    def mean(d,form):
        v=[d[k][(r,form)] for r in '12' if (r,form) in d.get(k,{})]
        return tuple(sum(x[i] for x in v)/len(v) for i in range(3)) if v else None
    b=mean(c1,'FLASHJIT_DECODE_D_SPLIT=0'); a=mean(c3,'FLASHJIT_DECODE_D_SPLIT=0'); s=mean(c3,'split')
    if not (a and b): continue
    B,L=re.match(r'B=(\d+) L=(\d+)',k[1]).groups()
    mbytes=int(B)*int(L)*8*256*4/1e6
    c=cud.get(k)
    f=lambda t:'%.2f / %.2f / %.2f'%t
    cs=f(c) if c else '—'; r='%.2f×'%(c[1]/a[1]) if c else '—'
    print(f"| {k[0]} | {B} | {int(L)//1024}k | {f(b)} | {f(a)} | {f(s)} | {100*(a[1]-b[1])/b[1]:+.1f} % | {cs} | {r} |")
