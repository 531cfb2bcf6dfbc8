// Programmatic dependent launch (PDL, sm_90+): the one rule that says whether a launch takes
// runtime::LaunchConfig::programmatic. Its kernel must run GridDependencyWait
// (templates/common/pdl.cuh) before it reads anything an earlier kernel of the stream may write
// or writes anything such a kernel may still read.
#pragma once

#include <flashjit/engine.h>

namespace flashjit::ops {

// Whether `device` (or the engine's configured target arch, e.g. a dry run's) is sm_90 or later:
// thread-block clusters and PDL. A dry run without an arch: false.
bool Sm90(const Engine& engine, int device);

// FLASHJIT_PDL's value: "1" -> 1 (on), "0" -> 0 (off), anything else or unset -> -1 (each
// family's default).
int ParsePdlKnob(const char* value);
// The engine-wide PDL mode: SetPdlForTesting's if set, else FLASHJIT_PDL (read once).
int PdlMode();
// Tests: 1 / 0 force PDL on / off for every family from now on; < 0 restores the knob.
void SetPdlForTesting(int mode);

// Whether a launch on `device` takes PDL: never below sm_90; else PdlMode() where it is 0 or 1;
// else `family_default` (the family's measured default for this launch).
bool UsePdl(const Engine& engine, int device, bool family_default);

// The layer ops' default: on (measured on the H200, session 9: see docs/perf/layer_ops.md).
inline constexpr bool kLayerOpPdlDefault = true;
// Whether a layer-op launch takes PDL. The layer ops' default (norm, RoPE, gated activations, the
// paged-KV append and its batch-indices helper): see docs/perf/layer_ops.md, session 9.
bool LayerOpPdl(const Engine& engine, int device);

}  // namespace flashjit::ops
