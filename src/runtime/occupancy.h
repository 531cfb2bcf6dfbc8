// How many blocks of a kernel one Hopper SM holds at once, from the kernel's resources: the
// CUDA occupancy rules, computed on the host with no driver call (so that plans made in a dry run,
// on a machine with no GPU, match the plans made on the GPU).
#pragma once

namespace flashjit::runtime {

// Blocks of `block_threads` threads, `registers` registers a thread and `smem_bytes` of shared
// memory (static + dynamic) that one sm_90 SM holds: 64 K registers (allocated per warp in units
// of 256), 2048 threads, 32 blocks, 228 KB of shared memory with 1 KB reserved per block. At
// least 1 (a kernel that launches at all runs one block an SM).
int ResidentBlocksPerSm(int registers, int block_threads, int smem_bytes);

}  // namespace flashjit::runtime
