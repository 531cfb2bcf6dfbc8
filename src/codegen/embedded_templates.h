// The device templates under templates/, embedded into the library at build time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flashjit::codegen {

struct EmbeddedTemplate {
  std::string_view path;  // relative to templates/, e.g. "norm/rmsnorm.cuh"
  std::string_view text;
};

// Sorted by path. Defined in the generated templates_embedded.cc.
const std::vector<EmbeddedTemplate>& EmbeddedTemplates();

// SHA-256 (hex) over every path and text: part of every cache key.
const std::string& TemplateSetHash();

}  // namespace flashjit::codegen
