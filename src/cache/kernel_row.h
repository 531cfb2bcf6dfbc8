// Internal to src/cache: the column list of the kernels table and reading one row.
#pragma once

#include "src/cache/kernel_db.h"
#include "src/cache/sqlite_util.h"

namespace flashjit::cache {

inline constexpr const char* kKernelColumns =
    "key, name, op, arch, spec, lib_version, template_hash, nvrtc_version, options, cubin, "
    "cubin_sha256, cubin_size, compile_ms, registers, spill_bytes, stack_bytes, static_smem, log, "
    "created_at, last_used, use_count";

// Reads a row selected with kKernelColumns (blob and log only when `with_blob`).
CacheEntry ReadKernelRow(const Statement& s, bool with_blob);

// True for the SQLite result codes that mean the file itself is damaged.
bool IsCorruptionCode(int rc);

}  // namespace flashjit::cache
