# The forms of session 12 round 2's call 1: "name lag shapes [extra bench args]". D = pair
# stealing off (session 11's kernels and plans), S1 = stealing forced wherever a plan pairs, claims
# answered one tile later (the tree's kernel before round 2), S2 = the same with claims answered
# two tiles later (FLASHJIT_DECODE_STEAL_LAG=2), F = answered one tile later, claims of one tile
# once at most 6 of the region's tiles are left (FLASHJIT_DECODE_STEAL_FINE=1; lag "1f"). The
# shapes are those whose plans pair chunks.
SH=1x16384,1x32768,16x16384,16x32768,e4m3:16x4096,e4m3:64x4096,e4m3:64x32768
FORMS=(
  "D 1 $SH --steal 0"
  "S1 1 $SH --steal 1"
  "S2 2 $SH --steal 1"
  "F 1f $SH --steal 1"
)
STAMPS=(
  "S1 1 1x32768,16x16384,16x32768 --steal 1"
  "S2 2 1x32768,16x16384,16x32768 --steal 1"
  "F 1f 1x32768,16x16384,16x32768 --steal 1"
  "fp8-D 1 e4m3:16x4096,e4m3:64x32768 --steal 0"
  "fp8-S1 1 e4m3:16x4096,e4m3:64x32768 --steal 1"
  "fp8-S2 2 e4m3:16x4096,e4m3:64x32768 --steal 1"
)
