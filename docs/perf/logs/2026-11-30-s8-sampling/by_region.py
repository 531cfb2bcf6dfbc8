"""Warp samples and stall reasons by code region (file, line range) from the same inputs as
stall_table.py. Usage: by_region.py SASS.csv NVDISASM.txt"""
import csv, re, sys, collections
sys.path.insert(0, '/tmp/s8an')
def linemap(path):
    m, cur = {}, None
    for line in open(path):
        a = re.match(r'\s*//## File "([^"]+)", line (\d+)', line)
        if a:
            cur = (a.group(1).split('/')[-1], int(a.group(2))); continue
        b = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+', line)
        if b and cur: m[int(b.group(1), 16)] = cur
    return m
REGIONS = [  # (name, file, first line, last line)
    ('TopPScanDigit (digit 0; digits 2-3 where no warp scan)', 'top_p_scan.cuh', 1, 134),
    ('TopPScanDigitWarp (digits 2-3)', 'top_p_scan.cuh', 135, 999),
    ('cluster barriers (barrier.cluster arrive/wait)', 'cluster_sm90.cuh', 1, 999),
    ('pass 1 / digit fills (top_p_candidates.cuh 60-170)', 'top_p_candidates.cuh', 60, 170),
    ('digit-0 merge (top_p_candidates.cuh 171-230)', 'top_p_candidates.cuh', 171, 230),
    ('pass 2 (top_p_candidates.cuh 260-380)', 'top_p_candidates.cuh', 260, 380),
    ('exchange + after (top_p_candidates.cuh 381-520)', 'top_p_candidates.cuh', 381, 520),
    ('row_source.cuh (loads, weight bits)', 'row_source.cuh', 1, 999),
    ('top_p_state.cuh (window, candidate walkers)', 'top_p_state.cuh', 1, 999),
    ('radix_select.cuh (BinMass, OwnBinMasses)', 'radix_select.cuh', 1, 999),
    ('block.cuh (block reductions, ForEachVec)', 'block.cuh', 1, 999),
    ('draws (top_p_pick.cuh, pick.cuh, philox.cuh)', ('top_p_pick.cuh', 'pick.cuh', 'philox.cuh'), 1, 999),
    ('sampling.cuh (the kernel body)', 'sampling.cuh', 1, 999),
]
def region(loc):
    f, l = loc
    for name, rf, a, b in REGIONS:
        if (f == rf or (isinstance(rf, tuple) and f in rf)) and a <= l <= b:
            return name
    return 'other'
lm = linemap(sys.argv[2])
rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[1], rows[2:]
idx = {h: i for i, h in enumerate(hdr)}
base = int(data[0][0], 16)
stalls = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
samp, reasons, ins = collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter()
for r in data:
    loc = lm.get(int(r[0], 16) - base, ('?', 0))
    g = region(loc)
    samp[g] += int(float(r[idx['Warp Stall Sampling (All Samples)']] or 0))
    ins[g] += 1
    for h in stalls: reasons[g][h] += float(r[idx[h]] or 0)
T = sum(samp.values())
print(f'{sys.argv[1]}: {T} warp samples; region: share of samples, SASS instructions in it, top stall reasons')
for g, v in samp.most_common():
    top = ', '.join(f'{k[6:]} {c / v * 100:.0f}%' for k, c in reasons[g].most_common(5) if c > 0) if v else ''
    print(f'  {g:58s} {v / T * 100:5.1f}%  {ins[g]:6d}  ({top})')
