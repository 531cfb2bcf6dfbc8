// The flashjit command-line tool: shared helpers for its subcommands.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/status.h>

#include <memory>
#include <string>
#include <vector>

namespace flashjit::cli {

struct Args {
  std::vector<std::string> positional;
  // --name value / --flag; "" for flags without values.
  std::vector<std::pair<std::string, std::string>> options;

  bool Has(const std::string& name) const;
  std::string Get(const std::string& name, const std::string& fallback = "") const;
};

// Parses argv[first..]; options listed in `flags` take no value.
Result<Args> ParseArgs(int argc, char** argv, int first, const std::vector<std::string>& flags);

// An engine from the common options (--cache-dir, --arch, --no-cache).
Result<std::shared_ptr<Engine>> MakeEngine(const Args& args);

int Fail(const Status& s);  // prints to stderr, returns 1 (2 for bad usage)

int ShowConfig(const Args& args);
int Render(const Args& args);
int Compile(const Args& args);
int CacheCommand(const std::string& sub, const Args& args);
int BundleCommand(const std::string& sub, const Args& args);
int SpecOps(const Args& args);
int CacheBuildModel(const Args& args);

}  // namespace flashjit::cli
