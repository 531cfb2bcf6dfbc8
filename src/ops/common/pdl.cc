#include "src/ops/common/pdl.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "src/runtime/driver.h"

namespace flashjit::ops {

bool Sm90(const Engine& engine, int device) {
  auto sm90 = [](const std::string& arch) {  // "sm_90", "sm_90a", "sm_100", ...
    return arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 90;
  };
  if (!engine.config().arch.empty()) return sm90(engine.config().arch);
  if (engine.config().dry_run) return false;
  // Per device, queried once: ops ask on every call, and GetDeviceInfo's driver queries cost
  // microseconds of host time.
  constexpr int kMaxDevices = 64;
  static std::atomic<int> known[kMaxDevices];  // 0: not queried, 1: no, 2: yes
  const bool cacheable = device >= 0 && device < kMaxDevices;
  const int v = cacheable ? known[device].load(std::memory_order_relaxed) : 0;
  if (v) return v == 2;
  auto info = runtime::GetDeviceInfo(device);
  const bool ok = info.ok() && sm90(info->arch());
  if (cacheable && info.ok()) known[device].store(ok ? 2 : 1, std::memory_order_relaxed);
  return ok;
}

int ParsePdlKnob(const char* value) {
  if (value && std::strcmp(value, "1") == 0) return 1;
  if (value && std::strcmp(value, "0") == 0) return 0;
  return -1;
}

namespace {
std::atomic<int> g_pdl_test{-1};
}  // namespace

int PdlMode() {
  const int forced = g_pdl_test.load(std::memory_order_relaxed);
  if (forced >= 0) return forced;
  static const int kKnob = ParsePdlKnob(std::getenv("FLASHJIT_PDL"));
  return kKnob;
}

void SetPdlForTesting(int mode) { g_pdl_test.store(mode < 0 ? -1 : (mode ? 1 : 0)); }

bool UsePdl(const Engine& engine, int device, bool family_default) {
  const int mode = PdlMode();
  if (mode == 0 || (mode < 0 && !family_default)) return false;
  return Sm90(engine, device);
}

bool LayerOpPdl(const Engine& engine, int device) {
  return UsePdl(engine, device, kLayerOpPdlDefault);
}

}  // namespace flashjit::ops
