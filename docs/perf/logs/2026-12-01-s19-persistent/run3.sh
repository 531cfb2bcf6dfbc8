# Session 19, call 4 (diagnostic): the raw stall metrics of call 3's Nsight Compute reports
# (carried in build-pack), fp8 B=64 L=1k / B=256 L=1k / B=256 L=16k and bf16 B=256 L=1k.
echo "$1" > "$OUT/commit.txt"
for r in fp8 bf16; do
  ncu --import build-pack/ncu-$r.ncu-rep --page raw --csv > $OUT/raw-$r.csv 2>&1
done
python3 - "$OUT" <<'PY'
import csv, sys
out = sys.argv[1]
for r in ("fp8", "bf16"):
    rows = list(csv.reader(open(f"{out}/raw-{r}.csv")))
    head = rows[0]
    data = [x for x in rows[2:] if len(x) == len(head)]
    keys = [i for i, h in enumerate(head) if "warp_issue_stalled" in h and h.endswith("per_warp_active.pct")
            or h in ("smsp__inst_executed.sum", "gpu__time_duration.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active")]
    print(r)
    for i in keys:
        vals = [x[i] for x in data]
        try:
            if max(float(v.replace(",", "")) for v in vals) < 1: continue
        except ValueError:
            pass
        print(f"  {head[i]:90s} " + "  ".join(vals))
PY
