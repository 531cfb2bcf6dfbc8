// Programmatic dependent launch (PDL, sm_90+). A kernel launched with the PDL attribute
// (runtime::LaunchConfig::programmatic) may start while the previous kernel of its stream is
// still running: its blocks are scheduled, and its prologue runs, under that kernel's tail.
//
// GridLaunchDependents lets the stream's next kernel, if launched with the attribute, start
// once every CTA of this grid has run it or exited. GridDependencyWait blocks until the
// previous kernel of the stream has finished and its writes are visible (it returns at once for
// a launch without the attribute). A kernel must not read anything an earlier kernel may write,
// nor write anything an earlier kernel may still read, before GridDependencyWait. Both are
// no-ops below sm_90.
#pragma once

#include "common/config.cuh"

namespace flashjit {

FLASHJIT_DEVICE void GridLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

FLASHJIT_DEVICE void GridDependencyWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace flashjit
