// The demo's cases: one per op family, each self-checking against a CPU reference.
#pragma once

#include <flashjit/engine.h>

#include <functional>
#include <string>
#include <vector>

namespace flashjit::demo {

struct Outcome {
  bool ok = false;
  std::string detail;  // error metrics or the failure
};

struct Case {
  std::string name;
  std::function<Outcome(Engine&)> run;
};

std::vector<Case> AllCases();

}  // namespace flashjit::demo
