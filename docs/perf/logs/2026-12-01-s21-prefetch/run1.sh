# Session 21, call 1: the K/V copies with an L2 prefetch size (cp.async .L2::128B / .L2::256B,
# FLASHJIT_DECODE_L2_PREFETCH), against none (the default).
# 1. Every decode GPU case (8 processes, JIT disabled, no compile allowed), with the new cases
#    that force each size; memcheck on the small persistent prefetch case.
# 2. A/B/C in one process each, two rounds interleaved: the bf16 benchmark grid (16 shapes and
#    its 4 fp8 rows) with prefetch 0 / 128 / 256.
# 3. PyTorch's cuDNN SDPA on the benchmark grid, for the table.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s21; rm -rf $L; mkdir -p $L
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c | head -20 > $L/cases_summary.txt
echo "cases: $((SECONDS - start)) s"
# SASS of the bf16 D 128 kernel with each prefetch size: the LDGSTS forms.
python3 - "$N/gpu-cache" "$L" <<'PY'
import glob, sqlite3, sys
c = sqlite3.connect(glob.glob(sys.argv[1] + "/*.db")[0])
for pf in (0, 128, 256):
    r = c.execute("select cubin from kernels where name = ?", (f"decode_bf16_bf16_h128_s3_fix_pf{pf}",)).fetchone()
    if r: open(f"{sys.argv[2]}/pf{pf}.cubin", "wb").write(r[0])
PY
for pf in 0 128 256; do echo "pf$pf: $(cuobjdump --dump-sass $L/pf$pf.cubin | grep -o 'LDGSTS[.A-Z0-9_]*' | sort | uniq -c | tr '\n' ' ')"; done | tee $L/sass.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: persistent grid with an L2 prefetch size" > $L/memcheck.log 2>&1; echo "memcheck exit $?" | tee -a $L/memcheck.log
tail -3 $L/memcheck.log
echo "checks: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
for round in 1 2; do
  for pf in 0 128 256; do
    echo "==== grid pf$pf round $round ($(date +%T))" >> $L/grid.log
    FLASHJIT_DECODE_L2_PREFETCH=$pf timeout 100 $N/flashjit_bench_decode --plan >> $L/grid.log 2>&1; echo "exit $?" >> $L/grid.log
  done
  echo "round $round: $((SECONDS - start)) s"
  tar czf $OUT/logs.tgz -C $L .
done
timeout 150 python3 tools/bench/torch_decode.py > $L/torch_decode.log 2>&1; echo "torch exit $? at $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
