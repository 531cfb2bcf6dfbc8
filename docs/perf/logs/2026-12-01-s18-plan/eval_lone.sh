#!/bin/bash
# Session 18 (after call 1): the plans of a lone-tile price LONE and merge floor FLOOR, scored against
# call 1's measured s13 ("old") and 0.75 ("new") plans: mean and worst change against s13. Needs the
# temporary env knobs TMP_LONE / TMP_FLOOR that batch_decode.cc had during that evaluation (not
# committed), /tmp/diffshapes.txt = shapes.txt, /tmp/gdiffshapes.txt = graph_shapes.txt, and
# /tmp/ev/meas.json from eval_parse_call1.py (after extracting call1/logs.tgz).
# usage: eval.sh LONE FLOOR -> prints score
cd /work/main
S=$(paste -sd, /tmp/diffshapes.txt); G=$(paste -sd, /tmp/gdiffshapes.txt)
CF="--kv e4m3 --configs base,tp8,tp4,qwen7b,mha,d64,page1,page64 --lengths 512,1024,2048,4096,16384,32768"
TMP_LONE=$1 TMP_FLOOR=$2 FLASHJIT_CACHE_DIR=/tmp/pc build/tools/bench/flashjit_bench_decode --dry-run --plan $CF --shapes $S | grep ^plan > /tmp/ev/p_ng.txt
TMP_LONE=$1 TMP_FLOOR=$2 FLASHJIT_CACHE_DIR=/tmp/pc build/tools/bench/flashjit_bench_decode --dry-run --graph --plan $CF --shapes $G | grep ^plan > /tmp/ev/p_g.txt
python3 - "$1" "$2" "$3" <<'PY'
import json,re,sys
d=json.load(open('/tmp/ev/meas.json'))
verbose=len(sys.argv)>3 and sys.argv[3]=='v'
def plans(fn):
    p={}
    for line in open(fn):
        m=re.match(r'plan (\S+) B=(\d+) L=(\d+):.* chunk (\d+)',line)
        p["%s:%s:%s"%(m.group(1),m.group(2),m.group(3))]=int(m.group(4))
    return p
out=[]
for mode,fn in (('ng','/tmp/ev/p_ng.txt'),('g','/tmp/ev/p_g.txt')):
    p=plans(fn); tot={'q':[0,0,0],'b':[0,0,0]}; other=0
    for k,v in d[mode].items():
        c=p[k]
        pick=[t for t in ('old','new') if v[t][0]==c]
        if not pick: other+=1; pick=None
        for i,mt in ((1,'q'),(2,'b')):
            best=v['old'][i]
            val = v[pick[0]][i] if pick else max(v['old'][i],v['new'][i])
            tot[mt][0]+=val/best; tot[mt][1]+=1; tot[mt][2]=max(tot[mt][2],val/best)
            if verbose and pick and val>best*1.02: print(mode,mt,k,pick[0],f"{val:.2f} vs {best:.2f}")
    out.append(f"{mode}: q mean {100*(tot['q'][0]/tot['q'][1]-1):.2f}% max {100*(tot['q'][2]-1):.1f}% b mean {100*(tot['b'][0]/tot['b'][1]-1):.2f}% max {100*(tot['b'][2]-1):.1f}% other {other}")
print(sys.argv[1],sys.argv[2],' | '.join(out))
PY
