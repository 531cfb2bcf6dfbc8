# The forms of call 2 (session 12): "name chunk shapes [extra bench args]"; chunk 0 = the cost
# model's choice. D = pair stealing off (the session-11 kernels and plans), S = on (the tree's
# default); X8 / X4 = on, with chunks of 8192 / 4096 forced (two pairs a request).
ALL=1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384,256x32768,e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
FORMS=(
  "D 0 $ALL --steal 0"
  "S 0 $ALL --steal 1"
  "X8 8192 16x32768 --steal 1"
  "X4 4096 16x16384,16x32768 --steal 1"
)
STAMPS=(
  "D 0 1x32768,16x16384,16x32768 --steal 0"
  "S 0 1x32768,16x16384,16x32768 --steal 1"
)
