// flashjit bundle export|import|inspect|keygen.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/cli/cli.h"
#include "tools/cli/kernel_table.h"

namespace flashjit::cli {
namespace {

// Every --trust-key value (the option may be given several times).
std::vector<std::string> TrustKeys(const Args& args) {
  std::vector<std::string> keys;
  for (const auto& [name, value] : args.options)
    if (name == "trust-key") keys.push_back(value);
  return keys;
}

int Inspect(const Args& args) {
  if (args.positional.empty())
    return Fail(Status::InvalidArgument("bundle inspect FILE: FILE missing"));
  auto info = InspectBundle(args.positional[0], {TrustKeys(args), args.Has("require-signed")});
  if (!info.ok()) return Fail(info.status());
  if (args.Has("json")) {
    nlohmann::json j = {{"path", info->path},
                        {"format", info->format},
                        {"lib_version", info->lib_version},
                        {"template_hash", info->template_hash},
                        {"nvrtc_version", info->nvrtc_version},
                        {"arch", info->arch},
                        {"count", info->count},
                        {"content_hash", info->content_hash},
                        {"signer", info->signer},
                        {"signature", info->signature},
                        {"ok", info->check.ok()},
                        {"check", info->check.ToString()}};
    for (auto& k : info->kernels) j["kernels"].push_back(KernelJson(k));
    // Bundles come from elsewhere: bytes that are not UTF-8 are replaced, not thrown on.
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print(
        "bundle {}\n  format {}  flashjit {}  NVRTC {}  arch {}\n  templates {}\n"
        "  {} kernels, content {}\n  signature: {}\n  check: {}\n",
        info->path, info->format, info->lib_version, info->nvrtc_version, info->arch,
        info->template_hash, info->count, info->content_hash, info->signature,
        info->check.ToString());
    PrintKernels(info->kernels);
  }
  return info->check.ok() ? 0 : 1;
}

int Keygen(const Args& args) {
  std::string out = args.Get("out");
  if (out.empty())
    return Fail(Status::InvalidArgument(
        "bundle keygen --out NAME: writes NAME.pem (private, mode 0600) and NAME.pub.pem"));
  auto id = GenerateBundleSigningKey(out + ".pem", out + ".pub.pem");
  if (!id.ok()) return Fail(id.status());
  fmt::print(
      "wrote {0}.pem (private: keep it secret) and {0}.pub.pem (give to --trust-key / "
      "FLASHJIT_TRUSTED_KEYS); key id {1}\n",
      out, *id);
  return 0;
}

}  // namespace

int BundleCommand(const std::string& sub, const Args& args) {
  if (sub == "inspect") return Inspect(args);
  if (sub == "keygen") return Keygen(args);
  if (sub != "export" && sub != "import")
    return Fail(Status::InvalidArgument(fmt::format(
        "unknown bundle subcommand '{}'; allowed: export, import, inspect, keygen", sub)));
  EngineOptions o;
  o.cache_dir = args.Get("cache-dir");
  o.arch = args.Get("arch");
  o.trusted_bundle_keys = TrustKeys(args);
  o.require_signed_bundles = args.Has("require-signed");
  auto engine = Engine::Create(o);
  if (!engine.ok()) return Fail(engine.status());
  if (sub == "export") {
    std::string arch = args.Get("arch"), out = args.Get("out");
    if (arch.empty() || out.empty())
      return Fail(Status::InvalidArgument(
          "bundle export needs --arch A and --out FILE (and optionally --sign-key KEY.pem)"));
    auto info = (*engine)->ExportBundle(arch, out, args.Get("sign-key"));
    if (!info.ok()) return Fail(info.status());
    fmt::print("wrote {}: {} kernels for {}, content {}, {}\n", out, info->count, arch,
               info->content_hash, info->signature);
    return 0;
  }
  if (args.positional.empty())
    return Fail(Status::InvalidArgument("bundle import FILE: FILE missing"));
  auto n = (*engine)->ImportBundle(args.positional[0], args.Get("arch"));
  if (!n.ok()) return Fail(n.status());
  fmt::print("imported {} new kernels into {}\n", *n, (*engine)->config().cache_path);
  return 0;
}

}  // namespace flashjit::cli
