// JSON forms of the engine's result structs, shared by the C ABI's engine and cache calls.
#pragma once

#include <flashjit/engine.h>

#include <nlohmann/json.hpp>

namespace flashjit::capi {

nlohmann::json KernelInfoJson(const KernelInfo& k);
nlohmann::json CachedKernelJson(const CachedKernel& k);
nlohmann::json BundleInfoJson(const BundleInfo& b);

}  // namespace flashjit::capi
