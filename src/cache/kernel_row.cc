#include "src/cache/kernel_row.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "src/cache/cache_key.h"
#include "src/common/sha256.h"

namespace flashjit::cache {

CacheEntry ReadKernelRow(const Statement& s, bool with_blob) {
  CacheEntry e;
  e.key = s.Text(0);
  e.name = s.Text(1);
  e.op = s.Text(2);
  e.arch = s.Text(3);
  e.spec = s.Text(4);
  e.lib_version = s.Text(5);
  e.template_hash = s.Text(6);
  e.nvrtc_version = s.Text(7);
  e.options = s.Text(8);
  if (with_blob) e.cubin = s.Blob(9);
  e.cubin_sha256 = s.Text(10);
  e.cubin_size = s.Int(11);
  e.compile_ms = s.Real(12);
  e.registers = static_cast<int>(s.Int(13));
  e.spill_bytes = static_cast<int>(s.Int(14));
  e.stack_bytes = static_cast<int>(s.Int(15));
  e.static_smem = static_cast<int>(s.Int(16));
  if (with_blob) e.log = s.Text(17);
  e.created_at = s.Int(18);
  e.last_used = s.Int(19);
  e.use_count = s.Int(20);
  return e;
}

bool IsCorruptionCode(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

std::string RowProblem(const CacheEntry& e) {
  if (e.cubin.empty()) return "empty cubin";
  if (static_cast<int64_t>(e.cubin.size()) != e.cubin_size)
    return fmt::format("cubin is {} bytes, metadata says {}", e.cubin.size(), e.cubin_size);
  std::string actual = Sha256Hex(e.cubin.data(), e.cubin.size());
  if (actual != e.cubin_sha256)
    return fmt::format("cubin SHA-256 {} does not match the stored {}", actual, e.cubin_sha256);
  // The key must be the hash of what the row says it is: a row filed under another variant's
  // key (edited, or copied between rows) would otherwise load the wrong kernel.
  auto options = nlohmann::json::parse(e.options, nullptr, /*allow_exceptions=*/false);
  if (options.is_discarded() || !options.is_array())
    return fmt::format("options column is not a JSON array: {}", e.options.substr(0, 80));
  KeyInputs in;
  in.lib_version = e.lib_version;
  in.template_hash = e.template_hash;
  in.nvrtc_version = e.nvrtc_version;
  in.arch = e.arch;
  in.canonical_spec = e.spec;
  for (const auto& o : options) {
    if (!o.is_string()) return "options column holds a non-string";
    in.options.push_back(o.get<std::string>());
  }
  std::string expected;
  try {
    expected = CacheKey(in);  // serialises the row's text as JSON: strict UTF-8
  } catch (const nlohmann::json::exception&) {
    return "spec, arch or version columns are not valid UTF-8";
  }
  if (expected != e.key)
    return fmt::format("key {} is not the hash of the row's spec, arch and versions ({})", e.key,
                       expected);
  return "";
}

}  // namespace flashjit::cache
