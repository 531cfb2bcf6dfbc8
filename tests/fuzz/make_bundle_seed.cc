// Writes a valid bundle of this build (two rows with made-up cubins, keys computed as the engine
// computes them) to argv[1]: the seed that lets fuzz_bundle reach past the manifest checks.
#include <flashjit/spec.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "src/cache/bundle.h"
#include "src/cache/cache_key.h"
#include "src/common/sha256.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_make_bundle_seed OUT.fjb [SIGN_KEY.pem]\n");
    return 2;
  }
  using namespace flashjit;
  const std::string scratch = std::string(argv[1]) + ".src.db";
  std::filesystem::remove(scratch);
  auto db = cache::KernelDb::Open(scratch, cache::KernelDb::Mode::kReadWrite);
  if (!db.ok()) return 1;
  for (int items : {1, 2}) {
    auto spec =
        VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"bf16","threads":32,"vec":8,"items":)" +
                              std::to_string(items) + "}");
    if (!spec.ok()) {
      std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
      return 1;
    }
    cache::KeyInputs in = cache::CurrentKeyInputs(*spec, "sm_90a");
    cache::CacheEntry e;
    e.key = cache::CacheKey(in);
    e.name = spec->name();
    e.op = spec->op();
    e.arch = "sm_90a";
    e.spec = spec->canonical_json();
    e.lib_version = in.lib_version;
    e.template_hash = in.template_hash;
    e.nvrtc_version = in.nvrtc_version;
    e.options = nlohmann::json(in.options).dump();
    e.cubin.assign(64 + items, static_cast<uint8_t>(items));
    e.cubin_sha256 = Sha256Hex(e.cubin.data(), e.cubin.size());
    e.cubin_size = static_cast<int64_t>(e.cubin.size());
    if (!(*db)->Put(e).ok()) return 1;
  }
  auto m = cache::ExportBundle(**db, "sm_90a", argv[1], argc > 2 ? argv[2] : "");
  db->reset();
  std::filesystem::remove(scratch);
  for (const char* s : {"-wal", "-shm"}) std::filesystem::remove(scratch + s);
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
    return 1;
  }
  return 0;
}
