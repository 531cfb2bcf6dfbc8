# ctest -R install_consumer: installs the build tree into a temporary prefix, builds
# tests/consumer against it with find_package(flashjit), runs both programs, then checks the
# pkg-config file by compiling consumer.c with it.
# Inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR, C_COMPILER.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/flashjit/flashjit.h include/flashjit/engine.h bin/flashjit
          share/flashjit/schema.sql lib/cmake/flashjit/flashjitConfig.cmake
          lib/cmake/flashjit/flashjitConfigVersion.cmake lib/pkgconfig/flashjit.pc
          lib/python/flashjit/__init__.py)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer_c)
run(${WORK_DIR}/build/consumer_cxx)
run(${prefix}/bin/flashjit spec-ops)
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs flashjit OUTPUT_VARIABLE flags
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config flashjit failed")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${C_COMPILER} -std=c99 ${SOURCE_DIR}/tests/consumer/consumer.c ${flags}
      -Wl,-rpath,${prefix}/lib -o ${WORK_DIR}/consumer_pkgconfig)
  run(${WORK_DIR}/consumer_pkgconfig)
else()
  message(STATUS "pkg-config not found: skipped the pkg-config check")
endif()
