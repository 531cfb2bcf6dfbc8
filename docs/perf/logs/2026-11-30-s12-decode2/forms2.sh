# The forms of session 12 round 2's call 2 (the tree with the claim forms reverted: the kernels
# and default rule of 815b0fc): D = pair stealing off, A = the default (auto: pairs at B=16
# L=16k/32k, the claims of 4545709). Six rounds, interleaved.
SH=16x16384,16x32768
FORMS=(
  "D 1 $SH --steal 0"
  "A 1 $SH --steal auto"
)
STAMPS=()
