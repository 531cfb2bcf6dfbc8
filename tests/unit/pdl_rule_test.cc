// The programmatic-dependent-launch rule (src/ops/common/pdl.h): the knob, the test override,
// the arch check and decode's own knob on top of it.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "src/ops/common/pdl.h"
#include "src/ops/decode/decode_common.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

std::shared_ptr<Engine> DryEngine(const std::string& arch) {
  EngineOptions o;
  o.read_environment = false;
  o.arch = arch;
  o.dry_run = true;
  o.disable_cache = true;
  auto e = Engine::Create(o);
  INFO(arch << ": " << e.status().ToString());
  REQUIRE(e.ok());
  return *e;
}

struct Restore {
  ~Restore() {
    ops::SetPdlForTesting(-1);
    ops::SetDecodePdlForTesting(-1);
  }
};

TEST_CASE("pdl rule: FLASHJIT_PDL values", "[pdl]") {
  CHECK(ops::ParsePdlKnob(nullptr) == -1);
  CHECK(ops::ParsePdlKnob("") == -1);
  CHECK(ops::ParsePdlKnob("1") == 1);
  CHECK(ops::ParsePdlKnob("0") == 0);
  CHECK(ops::ParsePdlKnob("on") == -1);
  CHECK(ops::ParsePdlKnob("10") == -1);
}

TEST_CASE("pdl rule: knob off / on / unset, by arch", "[pdl]") {
  Restore restore;
  auto sm90 = DryEngine("sm_90a"), sm100 = DryEngine("sm_100a"), sm80 = DryEngine("sm_80");
  CHECK(ops::Sm90(*sm90, 0));
  CHECK(ops::Sm90(*sm100, 0));
  CHECK_FALSE(ops::Sm90(*sm80, 0));

  ops::SetPdlForTesting(1);  // forced on: every sm_90+ launch, whatever the family default
  CHECK(ops::PdlMode() == 1);
  CHECK(ops::UsePdl(*sm90, 0, false));
  CHECK(ops::UsePdl(*sm100, 0, false));
  CHECK_FALSE(ops::UsePdl(*sm80, 0, true));  // never below sm_90
  CHECK(ops::LayerOpPdl(*sm90, 0));
  CHECK(ops::DecodePdl(*sm90, 0, int64_t{1} << 20));  // decode's default would say no
  CHECK_FALSE(ops::DecodePdl(*sm80, 0, 16));

  ops::SetPdlForTesting(0);  // forced off: no family takes it
  CHECK(ops::PdlMode() == 0);
  CHECK_FALSE(ops::UsePdl(*sm90, 0, true));
  CHECK_FALSE(ops::LayerOpPdl(*sm90, 0));
  CHECK_FALSE(ops::DecodePdl(*sm90, 0, 16));
  ops::SetDecodePdlForTesting(1);  // decode's own knob wins over the engine-wide one
  CHECK(ops::DecodePdl(*sm90, 0, int64_t{1} << 20));
  CHECK_FALSE(ops::DecodePdl(*sm80, 0, 16));
  ops::SetDecodePdlForTesting(-1);

  ops::SetPdlForTesting(-1);  // the knob: when FLASHJIT_PDL is unset, each family's default
  if (std::getenv("FLASHJIT_PDL") == nullptr) {
    CHECK(ops::PdlMode() == -1);
    CHECK(ops::UsePdl(*sm90, 0, true));
    CHECK_FALSE(ops::UsePdl(*sm90, 0, false));
    CHECK(ops::LayerOpPdl(*sm90, 0) == ops::kLayerOpPdlDefault);
    CHECK_FALSE(ops::LayerOpPdl(*sm80, 0));
    if (std::getenv("FLASHJIT_DECODE_PDL") == nullptr) {
      CHECK(ops::DecodePdl(*sm90, 0, ops::kDecodePdlMaxKeys));
      CHECK_FALSE(ops::DecodePdl(*sm90, 0, ops::kDecodePdlMaxKeys + 1));
      CHECK_FALSE(ops::DecodePdl(*sm80, 0, 16));
    }
  }
}

}  // namespace
}  // namespace flashjit
