// How many blocks of a kernel fit on the device at once, for grid-stride ("persistent") kernels
// of the layer ops. Computed from the kernel's registers and static shared memory and the
// device's SM count (queried once per device); no driver call, no device memory touched.
#pragma once

#include <cstdint>

#include "src/runtime/kernel.h"

namespace flashjit::ops {

// The grid for `work` equal units when each block takes units g, g + grid, ...: at most one
// wave of resident blocks, and every block gets the same number of units (±1). Returns `work`
// (capped to 2^31 - 1) for kernels that are not loaded (dry run) or when the query fails.
// `dynamic_smem`: the launch's dynamic shared memory per block (bytes).
uint32_t ResidentGrid(const runtime::Kernel& kernel, int entry, int block_threads, int64_t work,
                      int dynamic_smem = 0);

}  // namespace flashjit::ops
