#include "src/common/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace flashjit::log {
namespace {

Level ReadLevel() {
  const char* v = std::getenv("FLASHJIT_LOG_LEVEL");
  if (!v) return Level::kWarn;
  if (!std::strcmp(v, "error")) return Level::kError;
  if (!std::strcmp(v, "info")) return Level::kInfo;
  if (!std::strcmp(v, "debug")) return Level::kDebug;
  return Level::kWarn;
}

}  // namespace

bool Enabled(Level level) {
  static const Level kLevel = ReadLevel();
  return static_cast<int>(level) <= static_cast<int>(kLevel);
}

void Write(Level level, std::string_view message) {
  static const char* kNames[] = {"error", "warning", "info", "debug"};
  std::fprintf(stderr, "flashjit %s: %.*s\n", kNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace flashjit::log
