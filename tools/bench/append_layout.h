// The paged-KV append layout the benches time: `batch` requests each appending nnz / batch tokens
// after 100 existing ones, pages in a shuffled (fixed-seed) order. Host vectors, FlashInfer's
// convention: batch_indices / positions per token, kv_indptr [batch + 1], kv_indices, last
// page lengths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace flashjit::bench {

struct AppendLayout {
  std::vector<int32_t> batch_indices, positions, kv_indptr{0}, kv_indices, last_page_len;
  int64_t pages = 0;
};

inline AppendLayout MakeAppendLayout(int64_t nnz, int64_t batch, int64_t page) {
  AppendLayout l;
  const int64_t per = nnz / batch, old = 100;
  l.batch_indices.resize(nnz);
  l.positions.resize(nnz);
  for (int64_t t = 0; t < nnz; ++t) {
    l.batch_indices[t] = static_cast<int32_t>(t / per);
    l.positions[t] = static_cast<int32_t>(old + t % per);
  }
  for (int64_t b = 0; b < batch; ++b) {
    l.kv_indptr.push_back(static_cast<int32_t>(l.kv_indptr.back() + (old + per + page - 1) / page));
    l.last_page_len.push_back(static_cast<int32_t>((old + per - 1) % page + 1));
  }
  l.pages = l.kv_indptr.back();
  l.kv_indices.resize(l.pages);
  for (int64_t i = 0; i < l.pages; ++i) l.kv_indices[i] = static_cast<int32_t>(i);
  std::shuffle(l.kv_indices.begin(), l.kv_indices.end(), std::mt19937(7));
  return l;
}

}  // namespace flashjit::bench
