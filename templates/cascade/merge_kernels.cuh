// The `merge_state` family's entry: the pipelined form when the variant has stages, otherwise
// the one-round-trip form.
#pragma once

#include "cascade/merge_state.cuh"
#include "cascade/merge_state_pipelined.cuh"

namespace flashjit::cascade {

template <class V>
__device__ void merge_state(const MergeParams& p) {
  if constexpr (V::kStages > 0) {
    merge_state_pipelined<V>(p);
  } else {
    merge_state_registers<V>(p);
  }
}

}  // namespace flashjit::cascade
