// Double-precision references for the sampling ops, written from the definitions (a full
// sort is fine here). Filters keep every weight >= the threshold (ties kept), as the ops do.
#pragma once

#include <cstdint>
#include <vector>

namespace flashjit::ref {

enum class Filter { kNone, kTopK, kTopP, kMinP, kJoint, kTopKFirst };

// Weights of a probability row: NaN, inf and negative values count as 0.
std::vector<double> SanitizeProbs(const std::vector<float>& probs);

// softmax(logits / temperature) in double; NaN/+inf logits weigh 0, all -inf gives all 0.
std::vector<double> Softmax(const std::vector<double>& logits, double temperature);

// The threshold weight of a filter over `w` (weights >= it are kept).
// min_p uses float(max * min_p), as the kernel does.
double FilterThreshold(const std::vector<double>& w, Filter filter, int k, double p, float min_p);

// The filtered and renormalised distribution (all 0 when nothing has mass).
std::vector<double> FilteredDistribution(const std::vector<double>& w, Filter filter, int k,
                                         double p, float min_p);

// top-k mask over logits: kept logits unchanged, others (and NaN) -inf.
std::vector<double> TopKMaskLogits(const std::vector<double>& logits, int k);

// Pearson chi-square of `counts` against `expected` probabilities over `draws` draws, over the
// bins with expected > 0; *impossible receives the draws that landed where expected == 0.
double ChiSquare(const std::vector<int64_t>& counts, const std::vector<double>& expected,
                 int64_t draws, int* dof, int64_t* impossible);

}  // namespace flashjit::ref
