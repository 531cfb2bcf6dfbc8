#include "src/codegen/embedded_templates.h"
#include "src/common/sha256.h"

namespace flashjit::codegen {

const std::string& TemplateSetHash() {
  static const std::string kHash = [] {
    Sha256 h;
    for (const EmbeddedTemplate& t : EmbeddedTemplates()) {
      // Length-prefix each part so that moving text between files changes the hash.
      std::string header = std::to_string(t.path.size()) + ":" + std::string(t.path) + ":" +
                           std::to_string(t.text.size()) + ":";
      h.Update(header);
      h.Update(t.text);
    }
    h.Update("render-code:");
    h.Update(RenderCodeHash());
    Sha256Digest d = h.Finish();
    return ToHex(d.data(), d.size());
  }();
  return kHash;
}

}  // namespace flashjit::codegen
