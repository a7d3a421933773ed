# HIP builds with hipcc, driven directly (Debian's HIP 5.2 is no full CMake HIP toolchain).
#
#   backendbench_hip_library(<target> OUTPUT <file.so> SOURCES <files...>
#                            [INCLUDES <dirs...>] [DEPENDS <files...>] [LIBS <flags...>])
#   backendbench_add_hip_plugin(<target> OP <op> NAME <stem> SOURCES <files...> [ROOT <dir>] [MANIFEST <file>])
#
# Kernels are built for BACKENDBENCH_HIP_ARCHS: gfx90a and gfx942 where hipcc accepts gfx942,
# else gfx90a and gfx940 (clang 15, in Debian's HIP 5.2, predates gfx942).
find_program(HIPCC_EXECUTABLE hipcc)
# The plugin headers: the source tree's in BackendBench's build, the installed ones from the
# package config (which sets this first).
if(NOT BACKENDBENCH_PLUGIN_INCLUDE_DIR)
  set(BACKENDBENCH_PLUGIN_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../core/include")
endif()

# The architectures, asked of hipcc when the first HIP library is declared (a project that builds
# no HIP hears nothing of HIP).
function(backendbench_hip_archs)
  if(DEFINED BACKENDBENCH_HIP_ARCHS)
    return()
  endif()
  set(probe_src "${CMAKE_BINARY_DIR}/CMakeFiles/hip_arch_probe.hip")
  file(WRITE "${probe_src}" "__global__ void k() {}\n")
  execute_process(COMMAND "${HIPCC_EXECUTABLE}" --offload-arch=gfx942 -c "${probe_src}" -o "${probe_src}.o"
                  RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(probe_rc EQUAL 0)
    set(BACKENDBENCH_HIP_ARCHS "gfx90a;gfx942" CACHE STRING "AMD GPU architectures for HIP kernels")
  else()
    set(BACKENDBENCH_HIP_ARCHS "gfx90a;gfx940" CACHE STRING "AMD GPU architectures for HIP kernels")
    message(STATUS "BackendBench: ${HIPCC_EXECUTABLE} does not accept gfx942; HIP kernels target gfx90a and gfx940")
  endif()
endfunction()

function(backendbench_hip_library target)
  cmake_parse_arguments(ARG "" "OUTPUT" "SOURCES;INCLUDES;DEPENDS;LIBS;EXPORTS" ${ARGN})
  backendbench_hip_archs()
  get_target_property(dlpack_inc dlpack::dlpack INTERFACE_INCLUDE_DIRECTORIES)
  set(flags -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -Wno-unused-command-line-argument)
  if(ARG_EXPORTS)  # the symbols the library exports; the rest local
    list(JOIN ARG_EXPORTS ";\n    " globals)
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${target}.exports" "{\n  global:\n    ${globals};\n  local:\n    *;\n};\n")
    list(APPEND flags "-Wl,--version-script=${CMAKE_CURRENT_BINARY_DIR}/${target}.exports")
    list(APPEND ARG_DEPENDS "${CMAKE_CURRENT_BINARY_DIR}/${target}.exports")
  endif()
  foreach(arch IN LISTS BACKENDBENCH_HIP_ARCHS)
    list(APPEND flags --offload-arch=${arch})
  endforeach()
  set(incs "")
  foreach(d IN LISTS ARG_INCLUDES dlpack_inc)
    if(d)
      list(APPEND incs "-I${d}")
    endif()
  endforeach()
  list(APPEND incs "-I${BACKENDBENCH_PLUGIN_INCLUDE_DIR}")
  set(srcs "")
  foreach(s IN LISTS ARG_SOURCES)
    get_filename_component(abs "${s}" ABSOLUTE)
    list(APPEND srcs "${abs}")
  endforeach()
  get_filename_component(out_dir "${ARG_OUTPUT}" DIRECTORY)
  add_custom_command(
    OUTPUT "${ARG_OUTPUT}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}"
    COMMAND "${HIPCC_EXECUTABLE}" ${flags} ${incs} -x hip ${srcs} -o "${ARG_OUTPUT}" ${ARG_LIBS}
    DEPENDS ${srcs} ${ARG_DEPENDS}
    COMMENT "hipcc ${target} (${BACKENDBENCH_HIP_ARCHS})"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${ARG_OUTPUT}")
endfunction()

function(backendbench_add_hip_plugin target)
  cmake_parse_arguments(ARG "" "OP;NAME;ROOT;MANIFEST" "SOURCES;DEPENDS" ${ARGN})
  _backendbench_op_dir(out_dir "${ARG_ROOT}" "${ARG_OP}")  # BackendBenchPlugin.cmake
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  # In BackendBench's own tree, the shipped CUDA sources build for HIP through the shim headers
  # (custom_ops/common/hip_shim); elsewhere a HIP source includes <hip/hip_runtime.h> itself.
  set(shim_headers "")
  set(shim_includes "")
  if(BACKENDBENCH_HIP_SHIM_DIR)
    file(GLOB shim_headers "${BACKENDBENCH_HIP_SHIM_DIR}/../*.cuh" "${BACKENDBENCH_HIP_SHIM_DIR}/*.h")
    set(shim_includes "${BACKENDBENCH_HIP_SHIM_DIR}")
  endif()
  file(GLOB local_headers "${CMAKE_CURRENT_SOURCE_DIR}/*.cuh" "${CMAKE_CURRENT_SOURCE_DIR}/*.h" "${CMAKE_CURRENT_SOURCE_DIR}/*.hpp")
  backendbench_hip_library(${target} OUTPUT "${out_dir}/${ARG_NAME}${CMAKE_SHARED_MODULE_SUFFIX}"
                           SOURCES ${ARG_SOURCES} INCLUDES ${shim_includes}
                           DEPENDS ${shim_headers} ${local_headers} ${ARG_DEPENDS}
                           EXPORTS ${ARG_OP}_kernel_impl ${ARG_OP}_reference backendbench_plugin_info)
  _backendbench_link_manifest("${out_dir}" "${ARG_MANIFEST}")  # a link, as backendbench_add_plugin's
endfunction()
