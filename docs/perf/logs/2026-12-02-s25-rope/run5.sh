# Session 25, call 5: the whole GPU suite on the final kernels (e74837c's stage; JIT disabled, no
# compile allowed, one process per case, 8 at a time), since call 3's consolidated run had
# 3a352eb's. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s25; rm -rf $L; mkdir -p $L
$N/flashjit_gpu_tests --list-test-names-only | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 400 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
echo "cases listed: $(wc -l < $L/cases.txt)"
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; echo "passed: $(grep -c '^exit 0' $L/cases_exit.txt)"
grep -h "^All tests passed" $L/case_*.log | sed 's/.*(\([0-9]*\) assertions.*/\1/' | awk '{s+=$1} END {print "assertions:", s}'
grep -h "^engine:" $L/case_*.log | awk '{c+=$2} END {print "NVRTC compiles:", c}'
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
