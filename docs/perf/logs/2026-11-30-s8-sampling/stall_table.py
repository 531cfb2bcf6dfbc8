"""Per-source-line warp-stall table from ncu's SASS source page (--page source --csv
--print-source sass) and nvdisasm --print-line-info of the same cubin (the addresses are offsets
from the kernel's first instruction). Usage: stall_table.py SASS.csv NVDISASM.txt > table.txt"""
import csv, re, sys, collections

def linemap(path):
    m, cur = {}, None
    for line in open(path):
        a = re.match(r'\s*//## File "([^"]+)", line (\d+)', line)
        if a:
            cur = (a.group(1).split('/')[-1], int(a.group(2)))
            continue
        b = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', line)
        if b and cur:
            words = [w for w in b.group(2).split() if not w.startswith('@')]
            m[int(b.group(1), 16)] = (cur, words[0] if words else '')
    return m

csv_path, sass_path = sys.argv[1], sys.argv[2]
lm = linemap(sass_path)
rows = list(csv.reader(open(csv_path)))
hdr, data = rows[1], rows[2:]
idx = {h: i for i, h in enumerate(hdr)}
base = int(data[0][0], 16)
stalls = [h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
samples, byline, tot = collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter()
executed = collections.Counter()
mism = 0
for r in data:
    off = int(r[0], 16) - base
    loc, op = lm.get(off, (('?', 0), ''))
    text = r[1].strip().split()
    first = text[0] if text else ''
    if first.startswith('@'):
        first = text[1] if len(text) > 1 else ''
    if op and first and op.split('.')[0] != first.split('.')[0]:
        mism += 1
    s = int(float(r[idx['Warp Stall Sampling (All Samples)']] or 0))
    samples[loc] += s
    executed[loc] += int(float(r[idx['Instructions Executed']] or 0))
    for h in stalls:
        v = float(r[idx[h]] or 0)
        tot[h] += v
        byline[loc][h] += v
T = sum(samples.values())
print(f'{csv_path}: {len(data)} instructions, {T} warp samples (every 32 cycles), '
      f'{mism} address/opcode mismatches against {sass_path}')
print('by stall reason: ' + ', '.join(f'{k[6:]} {v / T * 100:.1f}%' for k, v in tot.most_common(12)))
byfile = collections.Counter()
for (f, l), v in samples.items():
    byfile[f] += v
print('by file: ' + ', '.join(f'{k} {v / T * 100:.1f}%' for k, v in byfile.most_common(12)))
print('by line (file:line, share of samples, warp instructions executed, top stall reasons):')
for loc, v in samples.most_common(80):
    if v == 0:
        break
    top = ', '.join(f'{k[6:]} {c / v * 100:.0f}%' for k, c in byline[loc].most_common(4) if c > 0)
    print(f'  {loc[0]}:{loc[1]:<5} {v / T * 100:5.1f}%  {executed[loc]:>8}  ({top})')
