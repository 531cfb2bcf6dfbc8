# ctest fixture: an empty scratch directory for the C ABI test, so that a second run starts from
# the same state as the first (caches and bundles of an earlier run would change its counts).
if(NOT DIR)
  message(FATAL_ERROR "reset_scratch.cmake: pass -DDIR=<directory>")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
