// Host -> device copies for ops' plans. An engine in dry run skips them: its "device" buffers
// are host memory or placeholders, and a dry run touches no device memory.
#pragma once

#include <cuda.h>
#include <flashjit/engine.h>
#include <flashjit/status.h>

#include <cstddef>

namespace flashjit::runtime {

// Enqueues a copy of `bytes` from host `src` to device `dst` on `stream` (src may be reused
// when this returns). Does nothing when the engine is in dry run.
Status CopyToDeviceAsync(const Engine& engine, void* dst, const void* src, size_t bytes,
                         CUstream stream);

// Multiprocessors of `device`; 132 (an H200) when the engine is in dry run.
Result<int> MultiprocessorCount(const Engine& engine, int device);

}  // namespace flashjit::runtime
