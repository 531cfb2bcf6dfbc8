// Minimal logging to stderr. FLASHJIT_LOG_LEVEL = error|warn|info|debug (default warn).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace flashjit::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

bool Enabled(Level level);
void Write(Level level, std::string_view message);

template <class... Args>
void Warn(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kWarn)) Write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace flashjit::log
