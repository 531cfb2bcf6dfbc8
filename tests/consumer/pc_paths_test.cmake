# ctest -R pkgconfig_paths: flashjit.pc resolves to the right directories for several
# CMAKE_INSTALL_LIBDIR / CMAKE_INSTALL_INCLUDEDIR values, also after the tree is moved.
# Inputs: SOURCE_DIR, WORK_DIR, PKG_CONFIG (may be empty: then only the generated text is checked).
cmake_minimum_required(VERSION 3.25)  # quoted if() arguments are strings
include(${SOURCE_DIR}/cmake/flashjit_pc.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
set(PROJECT_VERSION 0.0.0)
# libdir | includedir | expected libdir below the (moved) prefix, or absolute | same for include
set(cases
  "lib|include|lib|include"
  "lib64|include|lib64|include"
  "lib/x86_64-linux-gnu|include|lib/x86_64-linux-gnu|include"
  "./lib//deep/|inc/sub|lib/deep|inc/sub"
  "/opt/fj/lib|include|/opt/fj/lib|/opt/fj-prefix/include"
  "lib|/opt/fj/include|lib|/opt/fj/include")
set(n 0)
foreach(c IN LISTS cases)
  math(EXPR n "${n} + 1")
  string(REPLACE "|" ";" f "${c}")
  list(GET f 0 libdir)
  list(GET f 1 incdir)
  list(GET f 2 want_lib)
  list(GET f 3 want_inc)
  flashjit_pc_paths("${libdir}" "${incdir}" "/opt/fj-prefix" FLASHJIT_PC_PREFIX FLASHJIT_PC_LIBDIR
                    FLASHJIT_PC_INCLUDEDIR)
  # Install at one prefix, then move the tree: a relocatable file must follow it.
  set(root ${WORK_DIR}/case${n}/moved)
  if(IS_ABSOLUTE "${libdir}")
    set(pcdir ${WORK_DIR}/case${n}/abs/pkgconfig)  # stands in for the absolute libdir
  else()
    set(pcdir ${root}/${libdir}/pkgconfig)
  endif()
  configure_file(${SOURCE_DIR}/cmake/flashjit.pc.in ${pcdir}/flashjit.pc @ONLY)
  if(NOT IS_ABSOLUTE "${want_lib}")
    set(want_lib ${root}/${want_lib})
  endif()
  if(NOT IS_ABSOLUTE "${want_inc}")
    set(want_inc ${root}/${want_inc})
  endif()
  # Resolve the file's variables as pkg-config does (${pcfiledir}, then ${prefix}, ...),
  # and with pkg-config itself when it is installed.
  set(pc_prefix "")
  file(STRINGS ${pcdir}/flashjit.pc lines REGEX "^(prefix|libdir|includedir)=")
  foreach(l IN LISTS lines)
    string(REGEX MATCH "^([a-z]+)=(.*)$" _ "${l}")
    set(v "${CMAKE_MATCH_2}")
    string(REPLACE "\${pcfiledir}" "${pcdir}" v "${v}")
    string(REPLACE "\${prefix}" "${pc_prefix}" v "${v}")
    set(pc_${CMAKE_MATCH_1} "${v}")
  endforeach()
  set(got_libdir_emulated "${pc_libdir}")
  set(got_includedir_emulated "${pc_includedir}")
  foreach(var libdir includedir)
    set(sources emulated)
    if(PKG_CONFIG)
      set(ENV{PKG_CONFIG_PATH} "${pcdir}")
      execute_process(COMMAND ${PKG_CONFIG} --variable=${var} flashjit
                      RESULT_VARIABLE rc OUTPUT_VARIABLE got_${var}_pkgconfig
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_VARIABLE err)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "case ${c}: pkg-config --variable=${var} failed: ${err}")
      endif()
      list(APPEND sources pkgconfig)
    endif()
    if(var STREQUAL "libdir")
      set(want ${want_lib})
    else()
      set(want ${want_inc})
    endif()
    foreach(src IN LISTS sources)
      set(got "${got_${var}_${src}}")
      if(want MATCHES "^/opt/")
        set(got_norm "${got}")
        set(want_norm "${want}")
      else()
        # ".." stays in the text: compare normalised paths.
        cmake_path(NORMAL_PATH got OUTPUT_VARIABLE got_norm)
        cmake_path(NORMAL_PATH want OUTPUT_VARIABLE want_norm)
      endif()
      string(REGEX REPLACE "/+$" "" got_norm "${got_norm}")
      string(REGEX REPLACE "/+$" "" want_norm "${want_norm}")
      if(NOT got_norm STREQUAL want_norm)
        message(FATAL_ERROR "case '${c}' (${src}): ${var} is '${got}' = ${got_norm}, want "
                            "${want_norm}\n${pcdir}/flashjit.pc")
      endif()
    endforeach()
  endforeach()
endforeach()
unset(ENV{PKG_CONFIG_PATH})
message(STATUS "flashjit.pc: ${n} libdir/includedir layouts resolve correctly")
