// Fuzzes bundle import: bytes -> file -> open -> CheckBundle (with and without a trusted key),
// InspectBundle, and ImportBundle into a scratch cache. Never a crash; a bundle that passes every
// check must hold only rows whose cubins and keys verify.
#include <flashjit/engine.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/cache/bundle.h"
#include "src/cache/kernel_db.h"

namespace {

struct Scratch {
  std::string dir, bundle, cache, key;
  std::unique_ptr<flashjit::cache::KernelDb> into;
  flashjit::cache::BundleTrustPolicy trusted;
  Scratch() {
    dir = (std::filesystem::temp_directory_path() / ("fj-fuzz-bundle-" + std::to_string(getpid())))
              .string();
    std::filesystem::create_directories(dir);
    bundle = dir + "/in.fjb";
    cache = dir + "/kernels.db";
    key = dir + "/k";
    std::filesystem::remove(key + ".pem");
    if (!flashjit::cache::GenerateKeyPair(key + ".pem", key + ".pub.pem").ok()) std::abort();
    auto p = flashjit::cache::MakeTrustPolicy({key + ".pub.pem"}, true);
    if (!p.ok()) std::abort();
    trusted = *p;
    auto db = flashjit::cache::KernelDb::Open(cache, flashjit::cache::KernelDb::Mode::kReadWrite);
    if (!db.ok()) std::abort();
    into = std::move(*db);
  }
  ~Scratch() {
    into.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Scratch* s = new Scratch();  // lives for the process; libFuzzer exits without cleanup
  {
    std::ofstream out(s->bundle, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  using flashjit::cache::KernelDb;
  auto db = KernelDb::Open(s->bundle, KernelDb::Mode::kImmutable);
  if (db.ok()) {
    auto m = flashjit::cache::CheckBundle(**db, "");
    if (m.ok()) {
      auto rows = (*db)->ListFull("");
      if (rows.ok() && static_cast<int64_t>(rows->size()) != m->count) std::abort();
    }
    (void)flashjit::cache::CheckBundle(**db, "sm_90a", s->trusted);
  }
  (void)flashjit::InspectBundle(s->bundle);
  auto n = flashjit::cache::ImportBundle(s->bundle, *s->into, "");
  if (n.ok() && *n > 0) {
    auto v = s->into->Verify(false);
    if (!v.ok() || v->bad_rows != 0) std::abort();  // an import let a bad row in
    (void)s->into->Clear();
  }
  return 0;
}
