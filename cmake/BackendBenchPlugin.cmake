# backendbench_add_plugin(<target>
#     OP <op>                   the op's name (its folder in the root)
#     SOURCES <files...>        the plugin's sources
#     [NAME <stem>]             file stem; default <target>. The library is <root>/<op>/<stem>.so
#     [ROOT <dir>]              the custom-ops root to build into; default ${BACKENDBENCH_ROOT}
#     [MANIFEST <file>]         the op's gen_input.yaml (or gen_input.py); default the one beside
#                               the caller
#     [LINK <targets...>]       extra libraries to link
#     [NO_EXPORT_CHECK])        build it even where it exports no entry point for its op (a
#                               fixture of a library the run must refuse)
#
# Builds a plugin library into its op's folder of a built custom-ops root, next to a link to
# the op's manifest in the source folder (and to any data/ folder beside it, for .npy
# initialisers): an edited manifest is what the next run reads, without a rebuild (where links
# cannot be made, a copy, refreshed at the next build). A library that
# exports neither <op>_kernel_impl nor <op>_reference fails the build, naming what it exports.
# A plugin is timed: built optimised. A project that names no build type gets Release (at
# find_package(BackendBench), or where this file is included); backendbench_add_plugin warns
# when a plugin is built without optimisation.
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type (BackendBench: Release unless set, plugins are timed)" FORCE)
  message(STATUS "BackendBench: no CMAKE_BUILD_TYPE given: Release (plugins are timed; -DCMAKE_BUILD_TYPE=... for another)")
endif()

set(_backendbench_plugin_cmake_dir "${CMAKE_CURRENT_LIST_DIR}")

function(backendbench_add_plugin target)
  cmake_parse_arguments(ARG "NO_EXPORT_CHECK" "OP;NAME;ROOT;MANIFEST" "SOURCES;LINK" ${ARGN})
  if(NOT ARG_OP)
    message(FATAL_ERROR "backendbench_add_plugin(${target}): OP is required")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "backendbench_add_plugin(${target}): SOURCES is required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  _backendbench_op_dir(out_dir "${ARG_ROOT}" "${ARG_OP}")
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "${ARG_NAME}"
    LIBRARY_OUTPUT_DIRECTORY "$<1:${out_dir}>"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PRIVATE BackendBench::plugin ${ARG_LINK})
  if(NOT WIN32 AND NOT APPLE)
    # Every symbol resolved at link time: a typo fails the build, not the run.
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
    # Exported: the entry points and the info record, nothing else, whatever the language (the
    # visibility presets do not reach what nvcc generates, nor code linked in statically).
    set(exports "${CMAKE_CURRENT_BINARY_DIR}/${target}.exports")
    # Every *_kernel_impl and *_reference stays visible too, so that one misspelt is seen (below);
    # and the backward pass's, *_backward_impl (*_backward_reference is a *_reference).
    file(WRITE "${exports}" "{\n  global:\n    ${ARG_OP}_kernel_impl;\n    ${ARG_OP}_reference;\n    *_kernel_impl;\n    *_reference;\n"
                            "    *_backward_impl;\n"
                            "    backendbench_plugin_info;\n  local:\n    *;\n};\n")
    target_link_options(${target} PRIVATE "-Wl,--version-script=${exports}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${exports}")
    # A plugin that exports no entry point for its op fails the build, naming what it exports.
    if(NOT ARG_NO_EXPORT_CHECK)
      add_custom_command(TARGET ${target} POST_BUILD
                       COMMAND "${CMAKE_COMMAND}" "-DLIBRARY=$<TARGET_FILE:${target}>" "-DOP=${ARG_OP}" "-DNM=${CMAKE_NM}"
                               -P "${_backendbench_plugin_cmake_dir}/backendbench_check_exports.cmake"
                       VERBATIM)
    endif()
  endif()
  # Timed code built without optimisation times the compiler, not the kernel.
  string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
  if(build_type STREQUAL "DEBUG" OR CMAKE_CXX_FLAGS MATCHES "-O0" OR CMAKE_CUDA_FLAGS MATCHES "-O0")
    message(WARNING "BackendBench: ${target} (${ARG_OP}/${ARG_NAME}) is built without optimisation (CMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}): "
                    "its timings will not be the kernel's; build with -DCMAKE_BUILD_TYPE=Release")
  endif()

  _backendbench_link_manifest("${out_dir}" "${ARG_MANIFEST}")
endfunction()

# backendbench_add_python(
#     OP <op>                   the op's name (its folder in the root)
#     SOURCES <files...>        Python implementations (<op>_kernel_impl), references
#                               (<op>_reference) and the modules they import
#     [ROOT <dir>]              the custom-ops root; default ${BACKENDBENCH_ROOT}
#     [MANIFEST <file>])        the op's gen_input.yaml (or gen_input.py); default the one beside
#                               the caller
#
# Puts Python files into their op's folder of a built custom-ops root as links to the sources
# (a copy where links cannot be made): nothing to build, and an edited file is what the next
# run imports. backendbench_add_tests() registers each implementation as a ctest test.
function(backendbench_add_python)
  cmake_parse_arguments(ARG "" "OP;ROOT;MANIFEST" "SOURCES" ${ARGN})
  if(NOT ARG_OP)
    message(FATAL_ERROR "backendbench_add_python: OP is required")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "backendbench_add_python(OP ${ARG_OP}): SOURCES is required")
  endif()
  _backendbench_op_dir(out_dir "${ARG_ROOT}" "${ARG_OP}")
  foreach(f IN LISTS ARG_SOURCES)
    get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${f}")
      message(FATAL_ERROR "backendbench_add_python(OP ${ARG_OP}): ${f} does not exist")
    endif()
    get_filename_component(n "${f}" NAME)
    _backendbench_link("${f}" "${out_dir}/${n}")
  endforeach()
  _backendbench_link_manifest("${out_dir}" "${ARG_MANIFEST}")
endfunction()

# <out>: the op's folder in <root>, or in ${BACKENDBENCH_ROOT} (this build's custom_ops unless set)
# where no root is given.
function(_backendbench_op_dir out root op)
  if(NOT root)
    set(root "${BACKENDBENCH_ROOT}")
    if(NOT root)
      set(root "${CMAKE_BINARY_DIR}/custom_ops")
    endif()
  endif()
  set(${out} "${root}/${op}" PARENT_SCOPE)
endfunction()

# <dest> made a symbolic link to <source> (a copy where the filesystem has no links; either
# replaces what was there).
function(_backendbench_link source dest)
  get_filename_component(dest_dir "${dest}" DIRECTORY)
  file(MAKE_DIRECTORY "${dest_dir}")
  if(IS_DIRECTORY "${dest}" AND NOT IS_SYMLINK "${dest}")
    file(REMOVE_RECURSE "${dest}")  # a copied data/ folder of an older build
  endif()
  file(CREATE_LINK "${source}" "${dest}" RESULT failed SYMBOLIC)
  if(failed)
    if(IS_DIRECTORY "${source}")
      file(COPY "${source}/" DESTINATION "${dest}")
    else()
      configure_file("${source}" "${dest}" COPYONLY)
    endif()
  endif()
endfunction()

# The op's manifest (given, else gen_input.yaml or gen_input.py beside the caller) and its data/
# folder linked into <out_dir>.
function(_backendbench_link_manifest out_dir manifest)
  if(NOT manifest)
    foreach(name gen_input.yaml gen_input.py)
      if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${name}")
        set(manifest "${CMAKE_CURRENT_SOURCE_DIR}/${name}")
        break()
      endif()
    endforeach()
  endif()
  if(NOT manifest)
    return()
  endif()
  get_filename_component(manifest "${manifest}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(name "${manifest}" NAME)
  if(NOT name MATCHES "^gen_input\\.(yaml|py)$")
    set(name gen_input.yaml)  # a manifest of another name is the op's gen_input.yaml in the root
  endif()
  _backendbench_link("${manifest}" "${out_dir}/${name}")
  get_filename_component(manifest_dir "${manifest}" DIRECTORY)
  if(IS_DIRECTORY "${manifest_dir}/data")
    _backendbench_link("${manifest_dir}/data" "${out_dir}/data")
  endif()
endfunction()

# backendbench_enable_cuda(): enables CUDA where nvcc is found (on PATH, CUDACXX, or
# /usr/local/cuda), finds the CUDA toolkit (link CUDA::cublas and its kin with
# backendbench_add_plugin's LINK) and sets BACKENDBENCH_HAVE_CUDA; elsewhere says so and leaves
# it off. For
# projects that build CUDA plugins: the kernels use the shared CUDA runtime, as the host's CUDA
# runtime plugin does, and are built for CMAKE_CUDA_ARCHITECTURES (80;90 unless set: never
# `native`, a build machine need not have a GPU). A macro: languages are enabled at file scope.
macro(backendbench_enable_cuda)
  if(NOT CMAKE_CUDA_COMPILER)
    include(CheckLanguage)
    if(NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
    endif()
    check_language(CUDA)
  endif()
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    if(NOT DEFINED CMAKE_CUDA_STANDARD)
      set(CMAKE_CUDA_STANDARD 17)
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    # CUDA's libraries as targets: CUDA::cublas, CUDA::cublasLt, CUDA::curand, ...
    find_package(CUDAToolkit REQUIRED)
    set(BACKENDBENCH_HAVE_CUDA ON)
  else()
    set(BACKENDBENCH_HAVE_CUDA OFF)
    message(STATUS "BackendBench: no CUDA compiler; CUDA plugins are not built")
  endif()
endmacro()
