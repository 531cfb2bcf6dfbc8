# The A/B table of call 1: synced / queued / b2b per row and shape, and each top-p row against the default. Usage: table.py [bench logs]
import re,sys,collections
rows=collections.OrderedDict()
for run,f in enumerate(sys.argv[1:] or ['call1-bench_top_p1.log','call1-bench_top_p2.log']):
    for l in open(f):
        m=re.match(r'sampling\s+(\S+) (B=\d+ V=\d+ std\d)\s+([\d.]+) us.*queued ([\d.]+) us.*back-to-back ([\d.]+) us',l)
        if not m: continue
        rows.setdefault((m.group(2),m.group(1)),[]).append((float(m.group(3)),float(m.group(4)),float(m.group(5))))
shapes=[]
for (s,n) in rows:
    if s not in shapes: shapes.append(s)
names=['top_p0.9','top_p0.9_form','top_p0.9_push','top_p0.9_nocache','top_p0.9_form_nocache','top_p0.9_push_nocache','top_k50_top_p0.9_joint','top_k50_top_p0.9_kfirst']
for s in shapes:
    print('##',s)
    base=rows.get((s,'top_p0.9'))
    for n in names:
        v=rows.get((s,n))
        if not v: continue
        txt=', '.join(f'{a:.2f} / {q:.2f} / {b:.2f}' for a,q,b in v)
        d=' '.join(f'{v[i][2]-base[i][2]:+.2f}' for i in range(len(v))) if n.startswith('top_p') else ''
        dq=' '.join(f'{v[i][1]-base[i][1]:+.2f}' for i in range(len(v))) if n.startswith('top_p') else ''
        print(f'  {n:26s} {txt}   b2b vs default {d}  queued {dq}')
