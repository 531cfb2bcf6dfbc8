// Builds VariantSpec objects from JSON values (the ops' typed specs go through here).
#pragma once

#include <flashjit/spec.h>

#include "src/spec/family.h"

namespace flashjit {

class SpecFactory {
 public:
  // Validates `spec` strictly and returns its canonical VariantSpec.
  static Result<VariantSpec> FromJsonValue(const spec::Json& spec);
};

}  // namespace flashjit
