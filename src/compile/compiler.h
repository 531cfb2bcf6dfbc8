// NVRTC: one rendered translation unit -> one cubin for one arch.
//
// Thread-safe: NVRTC programs are independent, so compiles may run in parallel.
#pragma once

#include <flashjit/status.h>

#include <cstdint>
#include <string>
#include <vector>

namespace flashjit::compile {

struct CompileRequest {
  std::string source;  // the rendered translation unit
  std::string name;    // readable variant name (file name inside NVRTC, logs)
  std::string arch;    // "sm_90a"
  std::string key;     // cache key, quoted in errors
};

struct CompileResult {
  std::vector<uint8_t> cubin;
  std::string log;  // NVRTC + ptxas log
  double compile_ms = 0;
  int registers = -1;    // -1 when ptxas did not report
  int spill_bytes = -1;  // spill stores + loads
  int stack_bytes = -1;
  int static_smem_bytes = -1;
  // Each entry point's own registers and static shared memory, in the order ptxas reports them
  // (the fields above hold the maximum over entries).
  struct Entry {
    std::string name;
    int registers = -1;
    int static_smem_bytes = -1;
  };
  std::vector<Entry> entries;
  // The entry named `name`; nullptr when ptxas did not report it.
  const Entry* entry(const std::string& name) const;
};

// The NVRTC version as "13.0".
std::string NvrtcVersion();

// Archs this NVRTC can target ("sm_90", "sm_90a", ...), ascending.
std::vector<std::string> SupportedArchs();

// "sm_90" and "sm_90a" style names NVRTC supports, sm_80 or newer; otherwise InvalidArgument
// listing what is allowed.
Status ValidateArch(const std::string& arch);

// Options given to NVRTC that change the binary, with no host paths (part of the cache key).
const std::vector<std::string>& KeyedOptions();

// REQUIRES: `cuda_include_dir` holds cuda_fp16.h (see FindCudaIncludeDir).
Result<CompileResult> Compile(const CompileRequest& request, const std::string& cuda_include_dir);

// Parses a ptxas -v report into `out`'s resource fields.
void ParsePtxasReport(const std::string& log, CompileResult* out);

// The CUDA include directory: `configured` if non-empty, else $CUDA_HOME/include,
// $CUDA_PATH/include, the build's toolkit, /usr/local/cuda/include. NotFound names each place
// looked at when none holds cuda_fp16.h.
Result<std::string> FindCudaIncludeDir(const std::string& configured);

}  // namespace flashjit::compile
