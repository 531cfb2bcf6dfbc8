# flashjit_pc_paths(LIBDIR INCLUDEDIR INSTALL_PREFIX OUT_PREFIX OUT_LIBDIR OUT_INCLUDEDIR)
# The prefix, libdir and includedir lines of flashjit.pc for any CMAKE_INSTALL_LIBDIR and
# CMAKE_INSTALL_INCLUDEDIR. The file is installed into <LIBDIR>/pkgconfig; when LIBDIR is
# relative the prefix is ${pcfiledir} followed by one ".." per component of <LIBDIR>/pkgconfig
# (lib -> ../.., lib/x86_64-linux-gnu -> ../../..), so the installed tree stays relocatable
# (cmake --install --prefix, copying the tree). An absolute LIBDIR pins every path (the file
# then cannot be relocated with the tree). Used by CMakeLists.txt and tests/consumer.
function(flashjit_pc_paths libdir includedir install_prefix out_prefix out_libdir out_includedir)
  if(IS_ABSOLUTE "${libdir}")
    cmake_path(NORMAL_PATH libdir)
    set(prefix "${install_prefix}")
    set(lib "${libdir}")
  else()
    # Count the components of <libdir>/pkgconfig after normalisation ("lib/./x/" -> 2 + 1).
    set(pcdir "${libdir}/pkgconfig")
    cmake_path(NORMAL_PATH pcdir)
    string(REGEX REPLACE "/+$" "" pcdir "${pcdir}")
    if(pcdir MATCHES "(^|/)\\.\\.(/|$)")
      message(FATAL_ERROR "flashjit.pc: CMAKE_INSTALL_LIBDIR '${libdir}' leaves the prefix")
    endif()
    string(REPLACE "/" ";" parts "${pcdir}")
    set(prefix "\${pcfiledir}")
    foreach(p IN LISTS parts)
      string(APPEND prefix "/..")
    endforeach()
    string(REGEX REPLACE "/pkgconfig$" "" lib "${pcdir}")
    set(lib "\${prefix}/${lib}")
  endif()
  if(IS_ABSOLUTE "${includedir}")
    set(inc "${includedir}")
  elseif(IS_ABSOLUTE "${libdir}")
    set(inc "${install_prefix}/${includedir}")
  else()
    set(inc "\${prefix}/${includedir}")
  endif()
  set(${out_prefix} "${prefix}" PARENT_SCOPE)
  set(${out_libdir} "${lib}" PARENT_SCOPE)
  set(${out_includedir} "${inc}" PARENT_SCOPE)
endfunction()
