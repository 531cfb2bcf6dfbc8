-- flashjit kernel cache, schema version 1 (PRAGMA user_version).
-- One row per compiled variant. The key is the SHA-256 of everything that can change the binary.
CREATE TABLE IF NOT EXISTS kernels (
  key            TEXT PRIMARY KEY,      -- hex SHA-256 (see src/cache/cache_key.cc)
  name           TEXT NOT NULL,         -- readable variant name
  op             TEXT NOT NULL,
  arch           TEXT NOT NULL,         -- sm_90, sm_90a, ...
  spec           TEXT NOT NULL,         -- canonical spec JSON
  lib_version    TEXT NOT NULL,
  template_hash  TEXT NOT NULL,
  nvrtc_version  TEXT NOT NULL,
  options        TEXT NOT NULL,         -- JSON array of keyed NVRTC options
  cubin          BLOB NOT NULL,
  cubin_sha256   TEXT NOT NULL,         -- checked on every read
  cubin_size     INTEGER NOT NULL,
  compile_ms     REAL NOT NULL,
  registers      INTEGER NOT NULL,
  spill_bytes    INTEGER NOT NULL,
  stack_bytes    INTEGER NOT NULL,
  static_smem    INTEGER NOT NULL,
  log            TEXT NOT NULL,
  created_at     INTEGER NOT NULL,      -- unix seconds
  last_used      INTEGER NOT NULL,
  use_count      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS kernels_last_used ON kernels(last_used);
-- Key/value facts about the file: for bundles, the manifest (library version, arch, CUDA
-- version, count, content hash, signature).
CREATE TABLE IF NOT EXISTS meta (
  k TEXT PRIMARY KEY,
  v TEXT NOT NULL
);
