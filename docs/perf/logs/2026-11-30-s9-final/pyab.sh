stage=build-stage
export FLASHJIT_CACHE_DIR="$PWD/$stage/gpu-cache" FLASHJIT_LIBRARY="$PWD/$stage/libflashjit.so"
export FLASHJIT_C_OVERHEAD="$PWD/$stage/flashjit_c_overhead" PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$PWD/$stage${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for i in 1 2; do
  for p in default 0; do
    echo "==== python overhead, FLASHJIT_PDL=$p (run $i)"
    if [ $p = default ]; then timeout 60 python3 tools/bench/python_overhead.py; else FLASHJIT_PDL=0 timeout 60 python3 tools/bench/python_overhead.py; fi | grep -v '^{'
  done
done 2>&1 | tee $OUT/pyab.log | grep -E "^====|rope|append|single|top_k_top_p_sampling_from_probs  |rmsnorm  "
