import re,collections,json,sys
def parse(fn):
    # returns {shape: {'old':(chunk,[q...],[b...]), 'new':...}}
    res=collections.defaultdict(dict); t=None; plan={}
    for line in open(fn):
        m=re.match(r'==== \S+ (old|new) round',line)
        if m: t=m.group(1); continue
        m=re.match(r'plan (\S+) B=(\d+) L=(\d+):.* chunk (\d+) items (\d+)',line)
        if m: plan[(m.group(1),int(m.group(2)),int(m.group(3)))]=int(m.group(4)); continue
        m=re.match(r'decode\S*\s+(\S+) e4m3kv B=(\d+) L=(\d+)\s.*queued ([\d.]+) us.*back-to-back ([\d.]+) us',line)
        if m:
            k=(m.group(1),int(m.group(2)),int(m.group(3)))
            e=res[k].setdefault(t,[plan[k],[],[]])
            e[1].append(float(m.group(4))); e[2].append(float(m.group(5)))
    out={}
    for k,v in res.items():
        out["%s:%d:%d"%k]={t:(c,sum(q)/len(q),sum(b)/len(b)) for t,(c,q,b) in v.items()}
    return out
json.dump({'ng':parse('docs/perf/logs/2026-12-01-s18-plan/call1/ab.log'),'g':parse('docs/perf/logs/2026-12-01-s18-plan/call1/graph.log')},open('/tmp/ev/meas.json','w'),indent=0)
