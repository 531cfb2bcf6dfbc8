# Session 14 lead, call 5: D 64 at 4 / 3 / 2 stages (3 / 4 / 5 CTAs an SM), the few-kv-head B=1
# shapes with stamps, on build/ (a fresh cache of only these kernels).
set -e
S=build-d64-stage; C=$PWD/$S-cache; B=build/tools/bench/flashjit_bench_decode
rm -rf $S $C; mkdir -p $S build-pack
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
for st in 4 3 2; do FLASHJIT_DECODE_STAGES=$st $B --dry-run --configs d64 > /dev/null; done
$B --dry-run --configs tp8,tp4,qwen7b --shapes 1x4096,1x16384 --stamps /tmp/st.txt > /dev/null
$B --dry-run --configs gemma2 > /dev/null
cp -a $B build/libflashjit.so* $S/
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
rm -f build-pack/*.tar.gz && tar czf build-pack/d64.tar.gz $S && du -sh build-pack/d64.tar.gz
