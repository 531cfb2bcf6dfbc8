// How fast one CTA, one SM and the whole GPU read a paged KV cache when they do nothing else:
// the floor beside which decode's figures are read (docs/perf/decode.md, session 28). The bench
// streams decode's layout (bf16, 8 kv heads, D 128, pages of 16 keys: [page][K|V][16][8][128];
// a CTA reads one head's rows, 256 bytes each, 2 KB apart, in tiles of 64 keys of K and V =
// 32 KB, through a ring of shared memory swizzled as decode's) by
//   - cp.async, 16 bytes a thread a copy (decode's loader), 3 stages (2 CTAs an SM) or 6 (1);
//   - the tensor-memory accelerator: a 5-D tensor map of the cache, one copy a half row-block
//     (16 keys x 64 dims, 2 KB, 128-byte swizzle), 16 copies a tile, completed on an mbarrier.
// Rows: each form over 1, 8, 128, 132, 256 and 264 CTAs of 256 tiles (GB/s a busy SM, TB/s in
// all); cp.async over decode's grid shapes (the CTAs and tiles of their plans), with pages in
// order and through a page table in random order ("paged", as decode's bench lays them out);
// and paged with a chain of dependent FMAs after each tile (decode's per-tile compute stands in).
// Calls rotate over a 2.2 GB cache, so that no call reads what the previous ones left in the
// L2. The kernels are compiled here with NVRTC; a dry run compiles them and times nothing.
// --lone: only B=16 L=1k's plan of one CTA a request and kv head (128 CTAs of 16 tiles, session
// 29). FLASHJIT_SM_READ_STAMPS=DIR: rows marked for it write per-CTA stamps into DIR.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "src/compile/compiler.h"
#include "src/runtime/driver.h"
#include "src/runtime/kernel.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

constexpr int kTileBytes = 32768, kHeads = 8, kPageBytes = 65536, kTiles = 256;
constexpr int kMaxRecordCtas = 2048;

std::string Source() {
  return R"(
#define TILE 32768
struct __align__(64) TMap { unsigned long long v[16]; };
__device__ __forceinline__ unsigned Smem(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// A tile's 16 KB of K then 16 KB of V rows as decode keeps them: row r (0-63 K, 64-127 V) at
// r * 256, its 16-byte chunk c at (c ^ (r & 7)) * 16.
// With `records`, a CTA first reads its first logical page from records[blockIdx.x * 8] (a
// 32-byte record a CTA, as decode's work items): two dependent round trips before its first
// K/V copy, as decode's start-up has, instead of one. With `ahead` > 0, thread 0 also readies
// the start-up of CTA blockIdx.x + ahead, which runs about one CTA's life later: its record and,
// once that has arrived (after the first tile), its first page ids, into the L2 with an
// evict-last priority so that the streaming K/V do not push them out first.
__device__ __forceinline__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void PrefetchL2(const void* p) {
  asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p));
}
template <int S>
__device__ void CpAsyncRead(const char* __restrict__ base, const int* __restrict__ table,
                            const int* __restrict__ records, int ahead, int page0, int tiles,
                            int spin, unsigned long long* stamps, float* out) {
  extern __shared__ __align__(1024) char smem[];
  const int h = blockIdx.x % 8, t = threadIdx.x;
  if (stamps && t == 0) stamps[blockIdx.x * 4] = GlobalTimer();
  const bool ready_next = records && ahead > 0 && t == 0 && blockIdx.x + ahead < gridDim.x;
  int next_first = 0;
  if (ready_next) {
    PrefetchL2(records + (blockIdx.x + ahead) * 8);
    next_first = records[(blockIdx.x + ahead) * 8];
  }
  // The CTA's logical pages: page0 + (blockIdx.x / 8) * tiles * 4 on; with a table, each one's
  // place in the cache is read from it (random page order, as decode's bench lays out pages).
  const int first = page0 + (records ? records[blockIdx.x * 8] : (blockIdx.x / 8) * tiles * 4);
  const char* head = base + h * 256;
  auto issue = [&](int tile, int stage) {
    if (tile < tiles) {
      #pragma unroll
      for (int i = 0; i < 16; ++i) {
        const int r = t / 16 + 8 * i, c = t % 16, key = r % 64, kv = r / 64;
        const int logical = first + tile * 4 + key / 16;
        const int page = table ? table[logical] : logical;
        const char* src = head + static_cast<unsigned long long>(page) * 65536 + kv * 32768 +
                          (key % 16) * 2048 + c * 16;
        const unsigned dst = Smem(smem + stage * TILE + r * 256 + ((c ^ (r & 7)) * 16));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
      }
    }
    asm volatile("cp.async.commit_group;");
  };
  for (int s = 0; s < S - 1; ++s) issue(s, s);
  float acc = 0.f;
  for (int tile = 0; tile < tiles; ++tile) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 2));
    __syncthreads();
    if (stamps && t == 0 && tile == 0) stamps[blockIdx.x * 4 + 1] = GlobalTimer();
    issue(tile + S - 1, (tile + S - 1) % S);
    if (ready_next && tile == 1 && table) PrefetchL2(table + page0 + next_first);
    const float4 v = *reinterpret_cast<const float4*>(smem + (tile % S) * TILE + t * 256);
    // `spin` dependent multiply-adds a tile: a stand-in for decode's per-tile chain.
    float x = v.x;
    for (int i = 0; i < spin; ++i) x = fmaf(x, v.y, v.z);
    acc += x + v.w;
  }
  if (acc == 1.2345f) out[blockIdx.x] = acc;  // keeps the reads
  if (stamps && t == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    stamps[blockIdx.x * 4 + 2] = GlobalTimer();
    stamps[blockIdx.x * 4 + 3] = sm;
  }
}

// The values are never checked (the bench counts bytes moved), so a stage's generic reads are
// not fenced against the next fill's async-proxy writes, as a kernel that used them would be.
template <int S>
__device__ void TmaRead(const TMap& map, int page_base, int tiles, float* out) {
  extern __shared__ __align__(1024) char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: its boxes land on 1024-byte boundaries.
  char* smem = reinterpret_cast<char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  __shared__ __align__(8) unsigned long long bars[S];
  const int h = blockIdx.x % 8, chunk = blockIdx.x / 8, t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < S; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(Smem(&bars[s])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const unsigned long long map_addr = reinterpret_cast<unsigned long long>(&map);
  auto issue = [&](int tile, int stage) {
    if (t != 0 || tile >= tiles) return;
    const unsigned bar = Smem(&bars[stage]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TILE)
                 : "memory");
    const int page0 = page_base + (chunk * tiles + tile) * 4;
    #pragma unroll
    for (int p = 0; p < 4; ++p)
      #pragma unroll
      for (int kv = 0; kv < 2; ++kv)
        #pragma unroll
        for (int half = 0; half < 2; ++half) {
          const unsigned dst = Smem(smem + stage * TILE + ((kv * 4 + p) * 2 + half) * 2048);
          asm volatile(
              "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
              " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst), "l"(map_addr),
              "r"(half * 64), "r"(h), "r"(0), "r"(kv), "r"(page0 + p), "r"(bar)
              : "memory");
        }
  };
  for (int s = 0; s < S - 1; ++s) issue(s, s);
  float acc = 0.f;
  for (int tile = 0; tile < tiles; ++tile) {
    const unsigned bar = Smem(&bars[tile % S]), parity = (tile / S) & 1;
    asm volatile(
        "{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
        "@!p bra WAIT_%=;\n\t}" ::"r"(bar), "r"(parity) : "memory");
    __syncthreads();
    issue(tile + S - 1, (tile + S - 1) % S);
    const float4 v = *reinterpret_cast<const float4*>(smem + (tile % S) * TILE + t * 256);
    acc += v.x + v.w;
  }
  if (acc == 1.2345f) out[blockIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(128) cp3(const char* b, const int* pt, const int* rec, int ahead, int p0, int n, int spin, unsigned long long* st, float* o) { CpAsyncRead<3>(b, pt, rec, ahead, p0, n, spin, st, o); }
extern "C" __global__ void __launch_bounds__(128) cp6(const char* b, const int* pt, const int* rec, int ahead, int p0, int n, int spin, unsigned long long* st, float* o) { CpAsyncRead<6>(b, pt, rec, ahead, p0, n, spin, st, o); }
extern "C" __global__ void __launch_bounds__(128) tma3(const __grid_constant__ TMap m, int p0, int n, float* o) { TmaRead<3>(m, p0, n, o); }
extern "C" __global__ void __launch_bounds__(128) tma6(const __grid_constant__ TMap m, int p0, int n, float* o) { TmaRead<6>(m, p0, n, o); }
)";
}

const std::vector<std::string> kNames = {"cp3", "cp6", "tma3", "tma6"};

// Entry e's ring (3 or 6 stages), and for the TMA entries 1 KB to align it.
unsigned SmemBytes(int e) { return (e % 2 == 0 ? 3 : 6) * kTileBytes + (e >= 2 ? 1024 : 0); }

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

CUtensorMap CacheMap(void* base, uint64_t pages) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  auto encode = lib ? reinterpret_cast<EncodeTiled>(dlsym(lib, "cuTensorMapEncodeTiled")) : nullptr;
  if (encode == nullptr) throw std::runtime_error("cuTensorMapEncodeTiled not found");
  CUtensorMap map;
  const cuuint64_t dims[5] = {128, kHeads, 16, 2, pages};
  const cuuint64_t strides[4] = {256, 2048, 32768, kPageBytes};  // bytes, dims 1-4
  const cuuint32_t box[5] = {64, 1, 16, 1, 1}, unit[5] = {1, 1, 1, 1, 1};
  bench::CheckDriver(encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 5, base, dims, strides, box,
                            unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                     "cuTensorMapEncodeTiled");
  return map;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Setup(argc, argv);
  auto inc = compile::FindCudaIncludeDir("");
  if (!inc.ok()) throw std::runtime_error(inc.status().ToString());
  auto cubin = compile::Compile({Source(), "sm_read", "sm_90a", "bench"}, *inc);
  if (!cubin.ok()) throw std::runtime_error(cubin.status().ToString());
  if (bench::DryRun()) return 0;
  auto kernel = runtime::Kernel::Load(cubin->cubin, kNames, 0, "sm_read");
  if (!kernel.ok()) throw std::runtime_error(kernel.status().ToString());
  const runtime::Kernel& k = **kernel;
  auto d = *runtime::Driver();

  const int max_ctas = 264;
  const uint64_t pages = static_cast<uint64_t>(max_ctas / kHeads) * kTiles * 4;
  CUdeviceptr base = 0, sink = 0;
  bench::CheckDriver(d->cuMemAlloc(&base, pages * kPageBytes), "cuMemAlloc");
  bench::CheckDriver(d->cuMemsetD8(base, 0x3c, pages * kPageBytes), "cuMemsetD8");
  bench::CheckDriver(d->cuMemAlloc(&sink, max_ctas * sizeof(float)), "cuMemAlloc");
  CUtensorMap map = CacheMap(reinterpret_cast<void*>(base), pages);

  int sms = 0;
  CUdevice dev;
  bench::CheckDriver(d->cuDeviceGet(&dev, 0), "cuDeviceGet");
  bench::CheckDriver(d->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                     "attr");
  for (int e = 0; e < 4; ++e) {
    bench::CheckDriver(
        d->cuFuncSetAttribute(k.function(e), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              SmemBytes(e)),
        "cuFuncSetAttribute");
  }
  // A random order of the cache's pages (decode's bench places pages at random).
  std::vector<int> order(pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  CUdeviceptr table = 0;
  bench::CheckDriver(d->cuMemAlloc(&table, pages * sizeof(int)), "cuMemAlloc");
  bench::CheckDriver(d->cuMemcpyHtoD(table, order.data(), pages * sizeof(int)), "cuMemcpyHtoD");

  // Each CTA's record (its first logical page) for the rows that read one: 8 ints a CTA.
  std::vector<int> record_words(static_cast<size_t>(kMaxRecordCtas) * 8, 0);
  CUdeviceptr records = 0;
  bench::CheckDriver(d->cuMemAlloc(&records, record_words.size() * sizeof(int)), "cuMemAlloc");
  int records_tiles = -1;  // the tiles a CTA the records hold
  // One row: entry e over `ctas` CTAs of `tiles` tiles each; calls rotate over the cache so
  // that a call reads no page the previous calls left in the 60 MB L2.
  auto row = [&](int e, int ctas, int tiles, bool paged, const std::string& what, int spin = 0,
                 int with_records = 0,  // 0: none, 1: read, 2: read and ready one wave ahead
                 bool stamp = false) {
    const int stages = e % 2 == 0 ? 3 : 6;
    const uint64_t span = static_cast<uint64_t>((ctas + kHeads - 1) / kHeads) * tiles * 4;
    const uint64_t regions = std::max<uint64_t>(1, pages / span);
    if (with_records && ctas > kMaxRecordCtas)
      throw std::runtime_error(
          fmt::format("sm_read: {} CTAs read records; at most {}", ctas, kMaxRecordCtas));
    CUdeviceptr pt = paged ? table : 0, rec = with_records ? records : 0;
    if (with_records && records_tiles != tiles) {
      for (int c = 0; c < kMaxRecordCtas; ++c) record_words[c * 8] = (c / kHeads) * tiles * 4;
      bench::CheckDriver(
          d->cuMemcpyHtoD(records, record_words.data(), record_words.size() * sizeof(int)),
          "cuMemcpyHtoD");
      records_tiles = tiles;
    }
    int ahead = with_records == 2 ? 2 * sms : 0, page0 = 0;
    CUdeviceptr stamp_buf = 0;
    void* cp_args[] = {&base, &pt, &rec, &ahead, &page0, &tiles, &spin, &stamp_buf, &sink};
    void* tma_args[] = {&map, &page0, &tiles, &sink};
    auto launch = [&](int i) {
      page0 = static_cast<int>((static_cast<uint64_t>(i) % regions) * span);
      bench::CheckDriver(d->cuLaunchKernel(k.function(e), ctas, 1, 1, 128, 1, 1, SmemBytes(e),
                                           nullptr, e < 2 ? cp_args : tma_args, nullptr),
                         "cuLaunchKernel");
    };
    const bench::Timings tm = bench::TimeCall(launch, 20, 3);
    // FLASHJIT_SM_READ_STAMPS=DIR: one more call (after one on each other region) writes each
    // CTA's entry, first tile landed and end (%globaltimer, ns) and SM to DIR/stamps-<row>.txt.
    const char* stamp_dir = std::getenv("FLASHJIT_SM_READ_STAMPS");
    if (stamp_dir && stamp) {
      const size_t words = static_cast<size_t>(ctas) * 4;
      bench::CheckDriver(d->cuMemAlloc(&stamp_buf, words * 8), "cuMemAlloc");
      for (uint64_t i = 1; i < std::min<uint64_t>(regions, 8); ++i) launch(static_cast<int>(i));
      bench::CheckDriver(d->cuCtxSynchronize(), "sync");
      launch(0);
      bench::CheckDriver(d->cuCtxSynchronize(), "sync");
      std::vector<unsigned long long> h(words);
      bench::CheckDriver(d->cuMemcpyDtoH(h.data(), stamp_buf, words * 8), "cuMemcpyDtoH");
      bench::CheckDriver(d->cuMemFree(stamp_buf), "cuMemFree");
      stamp_buf = 0;
      const std::string path =
          fmt::format("{}/stamps-{}x{}{}-s{}{}.txt", stamp_dir, ctas, tiles, paged ? "-paged" : "",
                      stages, spin ? fmt::format("-spin{}", spin) : "");
      if (FILE* f = std::fopen(path.c_str(), "w")) {
        for (int c = 0; c < ctas; ++c)
          fmt::print(f, "cta {} sm {} entry {} first {} end {}\n", c, h[c * 4 + 3], h[c * 4],
                     h[c * 4 + 1], h[c * 4 + 2]);
        std::fclose(f);
      }
    }
    const double bytes = static_cast<double>(ctas) * tiles * kTileBytes;
    const int busy = std::min(ctas, sms);
    bench::Report("sm_read",
                  fmt::format("{} {} stages{}{}, {} CTAs x {} tiles{}{}",
                              e < 2 ? "cp.async" : "tma", stages, paged ? " paged" : "",
                              with_records == 1   ? " records"
                              : with_records == 2 ? " records ready ahead"
                                                  : "",
                              ctas, tiles, spin ? fmt::format(", {} FMAs a tile", spin) : "", what),
                  tm.alone, bytes, 0,
                  fmt::format("{} | {:.1f} GB/s a busy SM ({} SMs, queued)",
                              bench::TimingsNote(tm, bytes), bytes / tm.queued / 1e3 / busy, busy));
  };
  // --lone: only B=16 L=1k's default plan (one CTA a request and kv head: 128 CTAs of 16 tiles,
  // one an SM; session 29), three rounds, at 3 and 6 stages, paged, with and without a chain of
  // compute after each tile. Where a light kernel reads it near decode's time, decode's own
  // chain is not what holds that plan.
  bool lone = false;
  for (int i = 1; i < argc; ++i) lone = lone || !std::strcmp(argv[i], "--lone");
  if (lone) {
    for (int rep = 0; rep < 3; ++rep)
      for (int e : {0, 1})
        for (int spin : {0, 256, 512})
          row(e, 128, 16, true, fmt::format(" (round {})", rep + 1), spin, 0, rep == 0);
    return 0;
  }
  for (int rep = 0; rep < 2; ++rep) {
    const std::string round = fmt::format(" (round {})", rep + 1);
    // How fast a CTA and an SM can read, by copy form and depth.
    for (int e = 0; e < 4; ++e)
      for (int ctas : {1, 8, 128, 132, 256, 264})
        if (ctas <= sms * (e % 2 == 0 ? 2 : 1)) row(e, ctas, kTiles, false, round);
    // The floor of decode's grid shapes for a kernel that only reads: 256 CTAs (B=16, 8 kv
    // heads, 2 chunks) of 8 / 32 / 128 tiles = L 1k / 4k / 16k; 264 of 31 and 124 (B=64
    // L=1k and B=16 L=16k spread over every slot); decode's multi-wave plans of B=64 L=4k
    // (512 CTAs of 64 tiles) and B=256 L=1k (2048 of 16); decode's addressing (paged) and plain.
    for (bool paged : {false, true})
      for (auto [ctas, tiles] :
           {std::pair{256, 8}, {256, 32}, {264, 31}, {256, 128}, {264, 124}, {512, 64}, {2048, 16}})
        row(0, ctas, tiles, paged, round, 0, 0, rep == 0);
    // Does a per-tile chain of compute (dependent FMAs after each tile's wait) lower the rate
    // of a grid that fills every slot? A lone CTA gives each chain's cost a tile.
    for (int spin : {0, 256, 512, 1024, 2048})
      for (int ctas : {1, 264}) row(0, ctas, kTiles, true, round, spin);
    // A start-up of two dependent round trips (record, then page ids) against one, and the
    // next wave's start-up readied in the L2: decode's multi-wave plans (CTAs of 16 and 64
    // tiles) and a one-wave one.
    for (auto [ctas, tiles] : {std::pair{2048, 16}, {512, 64}, {256, 32}})
      for (int with_records : {0, 1, 2}) row(0, ctas, tiles, true, round, 0, with_records);
  }
  return 0;
}
