import csv,sys,re,collections
f=sys.argv[1]; W=int(sys.argv[2]) if len(sys.argv)>2 else 100
rows=list(csv.reader(open(f)))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
S=ix['Warp Stall Sampling (All Samples)']; E=ix['Instructions Executed']
stalls=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
tot=sum(int(r[S] or 0) for r in data)
keys=['BAR.SYNC','BAR.RED','UCGABAR_ARV','UCGABAR_WAIT','ATOMS','RED','REDUX','VOTE','LDG','MATCH','LDS','STS','SHFL','EXIT','MEMBAR','DADD','DFMA','ERRBAR','BRA']
for s in range(0,len(data),W):
  seg=data[s:s+W]
  smp=sum(int(r[S] or 0) for r in seg)
  ex=sum(int(r[E] or 0) for r in seg)
  ops=collections.Counter()
  for r in seg:
    op=r[1].strip()
    op=re.sub(r'^@!?U?P\w+\s+','',op).split()[0] if op else ''
    base=op.split('.')[0]
    for k in keys:
      if op.startswith(k) and (k!='RED' or base=='RED'): ops[k]+=1
  st=collections.Counter()
  for r in seg:
    for h in stalls: st[h[6:]]+=int(r[ix[h]] or 0)
  print(f"{s:5d} smp {smp:5d} {100*smp/tot:5.1f}% ex {ex:8d} | {dict(ops)} | {st.most_common(3)}")
