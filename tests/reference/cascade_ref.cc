#include "tests/reference/cascade_ref.h"

#include <cmath>
#include <limits>

namespace flashjit::ref {

void MergeStates(const std::vector<double>& v, const std::vector<double>& s, int64_t rows, int n,
                 int64_t d, std::vector<double>* v_out, std::vector<double>* s_out) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  v_out->assign(rows * d, 0.0);
  s_out->assign(rows, -inf);
  for (int64_t r = 0; r < rows; ++r) {
    const double* sr = &s[r * n];
    bool bad = false;
    double top = -inf;
    for (int i = 0; i < n; ++i) {
      bad |= std::isnan(sr[i]) || sr[i] == inf;
      if (sr[i] > top) top = sr[i];
    }
    double* out = &(*v_out)[r * d];
    if (bad) {
      for (int64_t c = 0; c < d; ++c) out[c] = nan;
      (*s_out)[r] = nan;
      continue;
    }
    if (top == -inf) continue;  // no keys anywhere: v = 0, s = -inf
    double total = 0;
    for (int i = 0; i < n; ++i) total += std::exp2(sr[i] - top);
    const double lse = top + std::log2(total);
    (*s_out)[r] = lse;
    for (int i = 0; i < n; ++i) {
      const double w = std::exp2(sr[i] - lse);
      const double* vi = &v[(r * n + i) * d];
      for (int64_t c = 0; c < d; ++c) out[c] += w * vi[c];
    }
  }
}

}  // namespace flashjit::ref
