// SetDecodePageSize (templates/attention/decode_params.cuh): the decode loader's steps between a
// thread's rows, 4 << i keys apart, must be whole pages plus tokens within a page, for every page
// size the API accepts (1 .. 2^20) and the contiguous cache's one page of 2^31 tokens; and
// walking rows by them must land where a division would (the loader's Step: one wrap at most).
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "attention/decode_params.cuh"

namespace flashjit {
namespace {

TEST_CASE("decode page steps: rows 4 << i apart as pages and tokens", "[decode]") {
  std::mt19937 rng(20);
  std::vector<uint32_t> sizes = {1,  2,  3,  4,  5,  7,  8,    12,       16,      24,
                                 31, 32, 33, 48, 64, 80, 1000, 1u << 20, 1u << 31};
  for (int i = 0; i < 50; ++i) sizes.push_back(1 + rng() % (1u << 20));
  for (uint32_t ps : sizes) {
    attention::DecodeParams p{};
    attention::SetDecodePageSize(p, ps);
    CHECK(p.page_size.divisor == ps);
    for (int i = 0; i < 4; ++i) {
      INFO("page size " << ps << ", rows " << (4 << i) << " apart");
      CHECK(uint64_t{p.page_row_pages[i]} * ps + p.page_row_tokens[i] == (4u << i));
      CHECK(p.page_row_tokens[i] < ps);
      // Walk 64 rows from random starts as the loader does; compare with division.
      for (int trial = 0; trial < 20; ++trial) {
        const uint32_t tok0 = rng() % (ps == (1u << 31) ? (1u << 30) : 1u << 24);
        uint32_t page = tok0 / ps, in = tok0 % ps;
        for (int r = 1; r < 64; ++r) {
          page += p.page_row_pages[i];
          in += p.page_row_tokens[i];
          if (in >= ps) {
            in -= ps;
            ++page;
          }
          const uint64_t tok = uint64_t{tok0} + uint64_t(r) * (4u << i);
          REQUIRE(page == tok / ps);
          REQUIRE(in == tok % ps);
        }
      }
    }
  }
}

}  // namespace
}  // namespace flashjit
