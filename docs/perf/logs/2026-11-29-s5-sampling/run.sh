#!/usr/bin/env bash
# Session 5 (sampling), one device call: the bench (full table with the A/B rows, then the top-p
# rows again) alone on the GPU, the PyTorch baselines, three ncu profiles of the new default
# top-p kernel (B = 1 and B = 64 flat: full set plus the SASS source page; B = 256 flat: launch,
# occupancy, warp states), then the whole [sampling] GPU suite beside memcheck (4096 draws) and
# racecheck. Logs in $OUT (at most 8 files come back: the ncu files travel in one ncu.tgz).
set -u
N=/tmp/s5-ncu; mkdir -p $N
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
L=$OUT/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
git log --oneline -1 >> $L
t() { echo "$(date +%T) $*" >> $L; }
t start
OUT= timeout 40 $S/flashjit_bench_sampling --no-sweep > $OUT/bench_sampling.log 2>&1
echo "bench exit $?" >> $OUT/bench_sampling.log; t bench
OUT= timeout 25 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/bench_ab_repeat.log 2>&1
echo "bench exit $?" >> $OUT/bench_ab_repeat.log; t ab-repeat
timeout 40 python3 tools/bench/torch_sampling.py > $OUT/torch_sampling.log 2>&1
echo "torch exit $?" >> $OUT/torch_sampling.log; t torch
for row in "B=1 V=128256 std1" "B=64 V=128256 std1"; do
  n=ncu-top_p-$(echo "$row" | cut -d' ' -f1 | tr -d '=')-flat
  OUT= timeout 35 ncu --set full --import-source no --clock-control none -k regex:flashjit_sampling -c 1 \
    -o $N/$n $S/flashjit_bench_sampling --only "top_p0.9 $row" --no-sweep > $N/$n.txt 2>&1
  echo "ncu exit $?" >> $N/$n.txt
  timeout 20 ncu -i $N/$n.ncu-rep --page details >> $N/$n.txt 2>&1
  timeout 20 ncu -i $N/$n.ncu-rep --page source --csv --print-source sass > $N/$n-sass.csv 2>&1
  t "$n"
done
OUT= timeout 25 ncu --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
  --clock-control none -k regex:flashjit_sampling -c 1 $S/flashjit_bench_sampling \
  --only "top_p0.9 B=256 V=128256 std1" --no-sweep > $N/ncu-top_p-B256-flat.txt 2>&1
echo "ncu exit $?" >> $N/ncu-top_p-B256-flat.txt; t ncu-B256
ls -la $N >> $L
tar czf $OUT/ncu.tgz -C $N . ; t tar
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 110 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/tests.log 2>&1 &
P1=$!
FLASHJIT_SAMPLING_DRAWS=4096 timeout 110 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "[sampling]" > $OUT/memcheck.log 2>&1 &
P2=$!
FLASHJIT_SAMPLING_DRAWS=256 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests \
  "bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs,top-k mask logits equals the reference exactly" > $OUT/racecheck.log 2>&1
echo "racecheck exit $?" >> $OUT/racecheck.log; t racecheck
wait $P1; echo "tests exit $?" >> $OUT/tests.log; t tests
wait $P2; echo "memcheck exit $?" >> $OUT/memcheck.log; t memcheck
for f in tests memcheck racecheck; do tail -n 4 $OUT/$f.log; done
grep -E 'top_p0.9' $OUT/bench_ab_repeat.log | head -80
