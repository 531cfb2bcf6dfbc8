# Session 12, lead: does the slow figure of B=256 L=32k (queued in the full bench, b2b in
# queued_probe.sh) come with lower clocks or a throttle reason? nvidia-smi samples clocks, power
# and the active throttle reasons every 100 ms while the bench runs the shape twice.
S=build-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_throttle_reasons.active --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
smi=$!
for round in 1 2; do
  echo "== round $round $(date +%T.%N)"
  timeout 60 $S/flashjit_bench_decode --shapes 256x32768 2>&1 | grep "^decode"
  echo "== end $(date +%T.%N)"
done
kill $smi
# Per second: median SM clock, max power, the throttle reasons seen.
awk -F', ' 'NR>1 {split($1,a," "); s=substr(a[2],1,8); n[s]++; sm[s]=sm[s]" "$2; if ($4+0>pw[s]) pw[s]=$4+0; r[s]=r[s]" "$7} END {for (k in n) print k, "samples", n[k], "max power", pw[k], "sm", sm[k], "reasons", r[k]}' "$OUT/smi.csv" | sort | cut -c1-400
