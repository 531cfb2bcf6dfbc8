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

// SHA-256 (hex) over the C++ sources that turn a spec into a translation unit (the renderer,
// the spec code and every op family's variant body and entry points), taken at build time.
// Defined in the generated templates_embedded.cc.
std::string_view RenderCodeHash();

// SHA-256 (hex) over every template's path and text and RenderCodeHash(): part of every cache
// key, so a kernel is looked up again whenever anything that shapes its source has changed.
const std::string& TemplateSetHash();

}  // namespace flashjit::codegen
