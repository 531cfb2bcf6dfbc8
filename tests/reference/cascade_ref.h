// Double-precision reference for the attention-state merges.
#pragma once

#include <cstdint>
#include <vector>

namespace flashjit::ref {

// rows x n states: v [rows, n, d], s [rows, n] (base-2 log-sum-exps). Per row,
// s_out = log2(sum_i 2^s_i) and v_out = sum_i 2^(s_i - s_out) v_i; a row of only -inf states
// (or no states) gives v_out = 0, s_out = -inf; a NaN or +inf s_i gives NaN.
void MergeStates(const std::vector<double>& v, const std::vector<double>& s, int64_t rows, int n,
                 int64_t d, std::vector<double>* v_out, std::vector<double>* s_out);

}  // namespace flashjit::ref
