#include "tests/reference/sampling_ref.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace flashjit::ref {
namespace {

// The largest value v of `w` with mass(w >= v, w >= floor) >= p * mass(w >= floor).
double TopPThreshold(const std::vector<double>& w, double p, double floor) {
  std::vector<double> s;
  for (double x : w)
    if (x >= floor && x > 0) s.push_back(x);
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end(), std::greater<double>());
  double total = 0;
  for (double x : s) total += x;
  double cum = 0;
  for (double x : s) {
    cum += x;
    if (cum >= p * total) return x;
  }
  return s.back();
}

double KthLargest(const std::vector<double>& w, int k) {
  std::vector<double> s = w;
  std::sort(s.begin(), s.end(), std::greater<double>());
  return s[std::min<size_t>(k, s.size()) - 1];
}

}  // namespace

std::vector<double> SanitizeProbs(const std::vector<float>& probs) {
  std::vector<double> w(probs.size());
  for (size_t i = 0; i < probs.size(); ++i)
    w[i] = std::isfinite(probs[i]) && probs[i] >= 0 ? probs[i] : 0.0;
  return w;
}

std::vector<double> Softmax(const std::vector<double>& logits, double temperature) {
  double mx = -std::numeric_limits<double>::infinity();
  for (double x : logits)
    if (!std::isnan(x) && x != std::numeric_limits<double>::infinity()) mx = std::max(mx, x);
  std::vector<double> out(logits.size(), 0.0);
  if (mx == -std::numeric_limits<double>::infinity()) return out;
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double x = logits[i];
    if (std::isnan(x) || std::isinf(x)) continue;
    out[i] = std::exp((x - mx) / temperature);
    sum += out[i];
  }
  for (double& x : out) x /= sum;
  return out;
}

double FilterThreshold(const std::vector<double>& w, Filter filter, int k, double p, float min_p) {
  switch (filter) {
    case Filter::kNone:
      return 0;
    case Filter::kTopK:
      return KthLargest(w, k);
    case Filter::kTopP:
      return TopPThreshold(w, p, 0);
    case Filter::kMinP: {
      const float mx = static_cast<float>(*std::max_element(w.begin(), w.end()));
      return std::min(mx * min_p, mx);
    }
    case Filter::kJoint:
      return std::max(KthLargest(w, k), TopPThreshold(w, p, 0));
    case Filter::kTopKFirst: {
      const double tk = KthLargest(w, k);
      return std::max(tk, TopPThreshold(w, p, tk));
    }
  }
  return 0;
}

std::vector<double> FilteredDistribution(const std::vector<double>& w, Filter filter, int k,
                                         double p, float min_p) {
  const double t = FilterThreshold(w, filter, k, p, min_p);
  std::vector<double> out(w.size(), 0.0);
  double sum = 0;
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i] >= t && w[i] > 0) sum += (out[i] = w[i]);
  if (sum > 0)
    for (double& x : out) x /= sum;
  return out;
}

std::vector<double> TopKMaskLogits(const std::vector<double>& logits, int k) {
  std::vector<double> clean;
  for (double x : logits)
    clean.push_back(std::isnan(x) ? -std::numeric_limits<double>::infinity() : x);
  std::vector<double> s = clean;
  std::sort(s.begin(), s.end(), std::greater<double>());
  const double t = s[k - 1];
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    out[i] = !std::isnan(logits[i]) && clean[i] >= t ? clean[i]
                                                     : -std::numeric_limits<double>::infinity();
  return out;
}

double ChiSquare(const std::vector<int64_t>& counts, const std::vector<double>& expected,
                 int64_t draws, int* dof, int64_t* impossible) {
  double chi2 = 0;
  int bins = 0;
  *impossible = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] > 0) {
      const double e = expected[i] * draws;
      chi2 += (counts[i] - e) * (counts[i] - e) / e;
      ++bins;
    } else {
      *impossible += counts[i];
    }
  }
  *dof = std::max(bins - 1, 1);
  return chi2;
}

}  // namespace flashjit::ref
