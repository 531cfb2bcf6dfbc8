#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "tools/cli/cli.h"

namespace flashjit::cli {

bool Args::Has(const std::string& name) const {
  return std::any_of(options.begin(), options.end(), [&](auto& o) { return o.first == name; });
}

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  for (auto& o : options)
    if (o.first == name) return o.second;
  return fallback;
}

Result<Args> ParseArgs(int argc, char** argv, int first, const std::vector<std::string>& flags) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s.size() > 1 && s[0] == '-') {
      std::string name = s.substr(s[1] == '-' ? 2 : 1);
      if (auto eq = name.find('='); eq != std::string::npos) {
        a.options.push_back({name.substr(0, eq), name.substr(eq + 1)});
      } else if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
        a.options.push_back({name, ""});
      } else if (i + 1 < argc) {
        a.options.push_back({name, argv[++i]});
      } else {
        return Status::InvalidArgument(fmt::format("option {} needs a value", s));
      }
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

Result<std::shared_ptr<Engine>> MakeEngine(const Args& args) {
  EngineOptions o;
  o.cache_dir = args.Get("cache-dir");
  o.arch = args.Get("arch");
  o.disable_cache = args.Has("no-cache");
  return Engine::Create(o);
}

int Fail(const Status& s) {
  std::fprintf(stderr, "flashjit: %s\n", s.ToString().c_str());
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace flashjit::cli
