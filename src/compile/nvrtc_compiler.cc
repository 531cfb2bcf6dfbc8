#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "src/codegen/embedded_templates.h"
#include "src/compile/compiler.h"

namespace flashjit::compile {
namespace {

class Program {
 public:
  ~Program() {
    if (prog_) nvrtcDestroyProgram(&prog_);
  }
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::string ProgramLog(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> SupportedArchs() {
  int n = 0;
  std::vector<std::string> out;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS) return out;
  std::vector<int> archs(n);
  nvrtcGetSupportedArchs(archs.data());
  for (int a : archs) {
    if (a < 80) continue;
    out.push_back(fmt::format("sm_{}", a));
    if (a >= 90) out.push_back(fmt::format("sm_{}a", a));
  }
  return out;
}

Status ValidateArch(const std::string& arch) {
  std::vector<std::string> all = SupportedArchs();
  if (std::find(all.begin(), all.end(), arch) != all.end()) return Status::Ok();
  std::string allowed;
  for (auto& a : all) allowed += (allowed.empty() ? "" : ", ") + a;
  return Status::InvalidArgument(fmt::format("arch '{}' is not supported; allowed (NVRTC {}): {}",
                                             arch, NvrtcVersion(), allowed));
}

const std::vector<std::string>& KeyedOptions() {
  // FLASHJIT_LINE_INFO=1 (read once per process): source-line tables in every cubin, for
  // profilers (ncu's source view); the option is keyed, so such cubins never mix with the rest.
  static const std::vector<std::string> kOptions = [] {
    std::vector<std::string> o = {
        "--std=c++17",
        "--device-as-default-execution-space",
        "--ptxas-options=-v",
        "-DFLASHJIT_NVRTC=1",
    };
    const char* v = std::getenv("FLASHJIT_LINE_INFO");
    const std::string line_info = v ? v : "";
    if (line_info == "1" || line_info == "true" || line_info == "yes")
      o.push_back("--generate-line-info");
    return o;
  }();
  return kOptions;
}

Result<CompileResult> Compile(const CompileRequest& req, const std::string& cuda_include_dir) {
  FLASHJIT_RETURN_IF_ERROR(ValidateArch(req.arch));
  // Every embedded template is offered to NVRTC as a header; NUL-terminated copies are needed.
  const auto& templates = codegen::EmbeddedTemplates();
  std::vector<std::string> texts, names;
  for (const auto& t : templates) {
    texts.emplace_back(t.text);
    names.emplace_back(t.path);
  }
  std::vector<const char*> header_texts, header_names;
  for (size_t i = 0; i < texts.size(); ++i) {
    header_texts.push_back(texts[i].c_str());
    header_names.push_back(names[i].c_str());
  }

  auto t0 = std::chrono::steady_clock::now();
  Program prog;
  const std::string file_name = req.name + ".cu";
  nvrtcResult r = nvrtcCreateProgram(prog.out(), req.source.c_str(), file_name.c_str(),
                                     static_cast<int>(header_texts.size()), header_texts.data(),
                                     header_names.data());
  if (r != NVRTC_SUCCESS)
    return Status::CompileError(fmt::format("nvrtcCreateProgram for {} (key {}): {}", req.name,
                                            req.key, nvrtcGetErrorString(r)));

  std::vector<std::string> opts = KeyedOptions();
  opts.push_back("--gpu-architecture=" + req.arch);
  opts.push_back("-I" + cuda_include_dir);
  opts.push_back("-I" + cuda_include_dir + "/cccl");
  std::vector<const char*> copts;
  for (auto& o : opts) copts.push_back(o.c_str());

  r = nvrtcCompileProgram(prog.get(), static_cast<int>(copts.size()), copts.data());
  std::string log = ProgramLog(prog.get());
  if (r != NVRTC_SUCCESS)
    return Status::CompileError(fmt::format("NVRTC failed to compile {} for {} (key {}): {}\n{}",
                                            req.name, req.arch, req.key, nvrtcGetErrorString(r),
                                            log));
  size_t cubin_size = 0;
  if (nvrtcGetCUBINSize(prog.get(), &cubin_size) != NVRTC_SUCCESS || cubin_size == 0)
    return Status::CompileError(
        fmt::format("NVRTC produced no cubin for {} (key {}):\n{}", req.name, req.key, log));
  CompileResult out;
  out.cubin.resize(cubin_size);
  nvrtcGetCUBIN(prog.get(), reinterpret_cast<char*>(out.cubin.data()));
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.log = std::move(log);
  ParsePtxasReport(out.log, &out);
  return out;
}

void ParsePtxasReport(const std::string& log, CompileResult* out) {
  // Several entry points may be reported: keep the maximum of each resource.
  auto max_of = [&](const std::regex& re, int* field, bool sum_two) {
    for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
         ++it) {
      int v = std::stoi((*it)[1]);
      if (sum_two) v += std::stoi((*it)[2]);
      *field = std::max(*field, v);
    }
  };
  max_of(std::regex(R"(Used (\d+) registers)"), &out->registers, false);
  max_of(std::regex(R"((\d+) bytes stack frame)"), &out->stack_bytes, false);
  max_of(std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"), &out->spill_bytes,
         true);
  max_of(std::regex(R"((\d+) bytes smem)"), &out->static_smem_bytes, false);
  if (out->registers >= 0 && out->static_smem_bytes < 0) out->static_smem_bytes = 0;
  // Per entry: ptxas names the entry, then reports its registers (and smem) on a later line.
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kUsed(R"(Used (\d+) registers(?:.*?(\d+) bytes smem)?)");
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      out->entries.push_back({m[1].str(), -1, -1});
    } else if (!out->entries.empty() && out->entries.back().registers < 0 &&
               std::regex_search(line, m, kUsed)) {
      out->entries.back().registers = std::stoi(m[1]);
      out->entries.back().static_smem_bytes = m[2].matched ? std::stoi(m[2]) : 0;
    }
  }
}

const CompileResult::Entry* CompileResult::entry(const std::string& name) const {
  for (const Entry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace flashjit::compile
