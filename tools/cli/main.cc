// flashjit: prewarm, inspect and ship the kernel cache; render and compile single variants.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/cli/cli.h"

namespace {

constexpr const char* kUsage = R"(usage: flashjit <command> [options]

  show-config [--json]                       library, NVRTC, CUDA, driver, GPUs, cache, bundles
  spec-ops [--json]                          the ops and spec fields this build knows
  render --spec FILE                         print the translation unit of one spec
  compile --spec FILE [--arch A] [--force]   compile one spec (into the cache), print resources
  cache build --manifest FILE [--arch A] [-j N]
                                             compile every variant a manifest lists
  cache build --model CONFIG.json [--arch A] compile every variant one decode step of a model
                                             launches (Hugging Face config.json; no GPU needed)
  cache ls [--json]                          list cached kernels
  cache verify [--repair]                    check every row's SHA-256 and the database
  cache gc --max-bytes N                     evict least recently used kernels down to N bytes
  cache prune                                remove kernels this build can never serve (other
                                             library / template / NVRTC versions)
  cache clear                                remove every cached kernel
  bundle export --arch A --out FILE [--sign-key KEY.pem]
                                             write the cache's kernels for A to a bundle
  bundle import FILE [--arch A] [--trust-key PUB.pem]... [--require-signed]
                                             check a bundle and copy it into the cache
  bundle inspect FILE [--json] [--trust-key PUB.pem]... [--require-signed]
                                             print and check a bundle's manifest and signature
  bundle keygen --out NAME                   new Ed25519 signing key: NAME.pem, NAME.pub.pem

common options: --cache-dir DIR (default $FLASHJIT_CACHE_DIR or ~/.cache/flashjit)
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace flashjit::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> flags = {"json",     "force", "repair",
                                          "no-cache", "quiet", "require-signed"};
  auto sub_args = [&](int first) { return ParseArgs(argc, argv, first, flags); };
  if (cmd == "cache" || cmd == "bundle") {
    if (argc < 3) {
      std::fprintf(stderr, "flashjit %s: missing subcommand\n%s", cmd.c_str(), kUsage);
      return 2;
    }
    auto args = sub_args(3);
    if (!args.ok()) return Fail(args.status());
    return cmd == "cache" ? CacheCommand(argv[2], *args) : BundleCommand(argv[2], *args);
  }
  auto args = sub_args(2);
  if (!args.ok()) return Fail(args.status());
  if (cmd == "show-config") return ShowConfig(*args);
  if (cmd == "spec-ops") return SpecOps(*args);
  if (cmd == "render") return Render(*args);
  if (cmd == "compile") return Compile(*args);
  std::fprintf(stderr, "flashjit: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
