#!/bin/bash
# compile with line info and list spill instructions by source line: spills.sh FORM
cd /work/main
cmake --build build-sampling -j2 --target flashjit_cli >/dev/null 2>&1 || { echo BUILD FAIL; exit 1; }
export FLASHJIT_CACHE_DIR=/tmp/ss/cache FLASHJIT_ARCH=sm_90a FLASHJIT_LINE_INFO=1
rm -rf /tmp/ss/cache
f=$1; sed "s/\"form\":[0-9]*/\"form\":$f/" /tmp/ss/c8.json > /tmp/ss/x.json
build-sampling/flashjit compile --spec /tmp/ss/x.json 2>&1 | tail -1
python3 /tmp/ss/sass.py cf$f >/dev/null; /tmp/nvd/nvidia/cu13/bin/nvdisasm -g -c /tmp/ss/k.cubin > /tmp/ss/cf$f.sass 2>&1
python3 - $f <<'PY'
import re,sys
f=sys.argv[1]; cur=None; counts={}
for line in open(f'/tmp/ss/cf{f}.sass'):
    m=re.search(r'//## File "([^"]+)", line (\d+)', line)
    if m: cur=(m.group(1).split('/')[-1], int(m.group(2))); continue
    if re.search(r'\b(STL|LDL)', line):
        counts.setdefault(cur,[0,0])[0 if 'STL' in line else 1]+=1
tot=[0,0]
for k in sorted(counts, key=str):
    src=open('/work/main/templates/sampling/'+k[0]).read().split('\n')[k[1]-1].strip() if k[0].endswith('.cuh') and 'sampling' not in k[0][:0] else ''
    print('  ',k,counts[k], src[:70]); tot[0]+=counts[k][0]; tot[1]+=counts[k][1]
print('total STL/LDL', tot)
PY
