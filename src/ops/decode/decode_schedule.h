// The split-KV schedule of a decode batch: which keys each CTA reads, and which partial
// results the merge kernel combines. Pure host code (tested on the CPU).
#pragma once

#include <cstdint>
#include <vector>

#include "attention/decode_params.cuh"

namespace flashjit::ops {

struct DecodeRequest {
  int32_t page_begin = 0;  // offset of the first page id in kv_indices
  int32_t kv_len = 0;
  int32_t kv_start = 0;  // first key any query can see (sliding window), <= kv_len
};

struct DecodeScheduleLimits {
  int ctas_per_item = 1;  // kv heads x query tiles: CTAs launched per work item
  int slots = 264;        // CTAs the GPU runs at once (SMs x CTAs per SM)
  int max_items = 1 << 30;
  int sms = 132;  // multiprocessors
  // Time of a tile for a CTA alone on its SM (at most `sms` CTAs), relative to one that shares
  // its SM with the others `slots` allows. 1: no difference is modelled.
  double lone_tile_cost = 1.0;
};

struct DecodeSchedule {
  int32_t chunk = 0;                            // keys per work item at most
  std::vector<attention::DecodeWorkItem> work;  // longest first
  std::vector<attention::DecodeMergeItem> merge;
  int32_t num_partials = 0;
};

// Keys per work item (a multiple of 64) that minimises the modelled time: waves of CTAs times
// the tiles each reads (at lone_tile_cost each when no SM holds two) plus a fixed cost per CTA,
// plus the merge when anything splits.
// Never more than limits.max_items work items.
int32_t ChooseDecodeChunk(const std::vector<DecodeRequest>& requests,
                          const DecodeScheduleLimits& limits);

DecodeSchedule BuildDecodeSchedule(const std::vector<DecodeRequest>& requests,
                                   const DecodeScheduleLimits& limits);

// Work items a plan may produce for up to `max_batch` requests (the workspace capacity).
int32_t DecodeMaxItems(int32_t max_batch, const DecodeScheduleLimits& limits);

}  // namespace flashjit::ops
