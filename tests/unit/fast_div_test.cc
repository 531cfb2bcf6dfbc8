// FastDiv (templates/common/fast_div.cuh, host and device): n / d by a multiply and a shift must
// equal the integer division for every n < 2^31 and every divisor the kernels use it for.
#include "common/fast_div.cuh"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

namespace flashjit {
namespace {

TEST_CASE("FastDiv equals integer division below 2^31", "[fast_div]") {
  std::mt19937_64 rng(std::random_device{}());  // fresh n and divisors each run
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 1024; ++d) divisors.push_back(d);
  for (int k = 11; k <= 31; ++k) {  // around every power of two above
    const uint32_t p = 1u << k;
    for (uint32_t d : {p - 1, p, p + 1}) divisors.push_back(d);
  }
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + static_cast<uint32_t>(rng() % 0x7fffffffu));
  const uint32_t top = 0x7fffffffu;
  for (uint32_t d : divisors) {
    const FastDivisor f = MakeFastDivisor(d);
    REQUIRE(f.divisor == d);
    // The edges where a rounding error would show first: multiples of d and their neighbours,
    // the top of the range, and random n.
    std::vector<uint32_t> ns = {0, 1, top, top - 1, d - 1, d};
    for (uint64_t q : {uint64_t{1}, uint64_t{2}, uint64_t{top} / d, uint64_t{top} / d - 1}) {
      const uint64_t m = q * d;
      for (uint64_t n : {m - 1, m, m + 1})
        if (n <= top) ns.push_back(static_cast<uint32_t>(n));
    }
    for (int i = 0; i < 64; ++i) ns.push_back(static_cast<uint32_t>(rng() & top));
    for (uint32_t n : ns) {
      INFO("n " << n << " d " << d);
      REQUIRE(FastDiv(n, f) == n / d);
    }
  }
}

}  // namespace
}  // namespace flashjit
