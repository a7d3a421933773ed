# backendbench_add_tests(
#     [ROOT <dir>]                a custom-ops root; default ${BACKENDBENCH_ROOT} (this build's),
#                                 else the installed one (<prefix>/share/backendbench/custom_ops)
#     [BINARY <path|target>]      the backendbench to run; default the `backendbench` target, else
#                                 the installed one beside this file, else the one on PATH
#     [PREFIX <name>]             test names are <prefix>.<op>__<impl>; default "backendbench"
#     [OPS <op...>]               only these ops; default every <root>/<op>/gen_input.yaml
#     [IMPLS <name...>]           only these implementations (<op>__<name> or <name>)
#     [GPU_MATCH <regex>]         an implementation whose name matches runs on a GPU; default
#                                 "cuda|hip|triton"
#     [GPU_IMPLS <name...>]       more GPU implementations, by name
#     [ARGS <arg...>]             more backendbench arguments (e.g. --correctness-only)
#     [LABELS <label...>]         ctest labels of every test ("gpu" is added to GPU tests)
#     [LAUNCHER <cmd...>]         a command that runs backendbench (e.g. env, numactl, srun)
#     [ENVIRONMENT <VAR=value...>]
#     [TIMEOUT <seconds>]         per test; default 600
#     [SKIP_RETURN_CODE <n>])     default 77
#
# Registers one ctest test per op x implementation of a custom-ops root. Each runs
#   backendbench --custom-ops-root ROOT --ops OP --impls OP__IMPL --no-log -q --skip-exit-code 77
# and ctest reports it Passed (exit 0), Failed (anything else) or Skipped (77: every test of
# the implementation was SKIPPED, e.g. a CUDA implementation on a machine without a GPU).
#
# GPU tests declare RESOURCE_GROUPS "gpus:1": `ctest -j N --resource-spec-file spec.json`
# (`backendbench resource-spec --output spec.json` writes the spec) gives each one GPU of its
# own, and backendbench reads that GPU (CTEST_RESOURCE_GROUP_0_GPUS) as its --devices.
#
# The implementations are found when ctest runs, not when CMake configures: a TEST_INCLUDE_FILES
# script globs <root>/<op>/*.so and the Python implementations (*.py naming <op>_kernel_impl)
# then. So a root that this build has yet to build works (its
# libraries exist by the time ctest runs), an installed root works, and a library dropped into
# an op's folder is a new test at the next ctest, without reconfiguring. <op>_reference.* is the
# op's reference, not a test (for an op named with a trailing '_', <op without it>_reference.*).
# Any other library in the folder is taken for an implementation.

# The functions below keep these policies wherever they are called, ctest's script mode
# included (there every policy is OLD unless set, and IN_LIST is CMP0057).
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)

# This file: the generated scripts include it again to find the implementations.
set(_BACKENDBENCH_TESTS_MODULE "${CMAKE_CURRENT_LIST_FILE}")

function(backendbench_add_tests)
  cmake_parse_arguments(ARG "" "ROOT;BINARY;PREFIX;GPU_MATCH;TIMEOUT;SKIP_RETURN_CODE"
                        "OPS;IMPLS;GPU_IMPLS;ARGS;LABELS;LAUNCHER;ENVIRONMENT" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "backendbench_add_tests: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(prefix_dir "${_BACKENDBENCH_TESTS_MODULE}" DIRECTORY)
  get_filename_component(prefix_dir "${prefix_dir}/../../.." ABSOLUTE)  # <prefix>/lib/cmake/BackendBench

  if(NOT ARG_ROOT)
    if(BACKENDBENCH_ROOT)
      set(ARG_ROOT "${BACKENDBENCH_ROOT}")
    elseif(EXISTS "${prefix_dir}/share/backendbench/custom_ops")
      set(ARG_ROOT "${prefix_dir}/share/backendbench/custom_ops")
    else()
      message(FATAL_ERROR "backendbench_add_tests: ROOT is required (no BACKENDBENCH_ROOT, no installed root)")
    endif()
  endif()
  get_filename_component(ARG_ROOT "${ARG_ROOT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")

  if(NOT ARG_BINARY)
    if(TARGET backendbench)
      set(ARG_BINARY backendbench)
    elseif(EXISTS "${prefix_dir}/bin/backendbench")
      set(ARG_BINARY "${prefix_dir}/bin/backendbench")
    else()
      find_program(BACKENDBENCH_EXECUTABLE backendbench)
      if(NOT BACKENDBENCH_EXECUTABLE)
        message(FATAL_ERROR "backendbench_add_tests: BINARY is required (no backendbench target, none installed, none on PATH)")
      endif()
      set(ARG_BINARY "${BACKENDBENCH_EXECUTABLE}")
    endif()
  endif()
  if(TARGET "${ARG_BINARY}")
    set(ARG_BINARY "$<TARGET_FILE:${ARG_BINARY}>")
  endif()

  if(NOT ARG_PREFIX)
    set(ARG_PREFIX backendbench)
  endif()
  if(NOT DEFINED ARG_GPU_MATCH)
    set(ARG_GPU_MATCH "cuda|hip|triton")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  if(NOT ARG_SKIP_RETURN_CODE)
    set(ARG_SKIP_RETURN_CODE 77)
  endif()

  # The call that the ctest-time script makes, every value a bracket argument.
  set(call "_backendbench_register_tests(\n")
  foreach(key ROOT BINARY PREFIX GPU_MATCH TIMEOUT SKIP_RETURN_CODE)
    string(APPEND call "  ${key} [==[${ARG_${key}}]==]\n")
  endforeach()
  string(APPEND call "  CMAKE_COMMAND [==[${CMAKE_COMMAND}]==]\n")
  foreach(key OPS IMPLS GPU_IMPLS ARGS LABELS LAUNCHER ENVIRONMENT)
    if(ARG_${key})
      string(APPEND call "  ${key}")
      foreach(v IN LISTS ARG_${key})
        string(APPEND call " [==[${v}]==]")
      endforeach()
      string(APPEND call "\n")
    endif()
  endforeach()
  string(APPEND call ")\n")
  string(CONCAT content "# Generated by backendbench_add_tests: registers the tests of ${ARG_ROOT} when ctest runs.\n"
                "include([==[${_BACKENDBENCH_TESTS_MODULE}]==])\n${call}")

  string(MAKE_C_IDENTIFIER "${ARG_PREFIX}" id)
  set(base "${CMAKE_CURRENT_BINARY_DIR}/backendbench_tests_${id}")
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(multi_config)
    file(GENERATE OUTPUT "${base}-$<CONFIG>.cmake" CONTENT "${content}")
    file(WRITE "${base}.cmake" "include(\"${base}-\${CTEST_CONFIGURATION_TYPE}.cmake\" OPTIONAL)\n")
  else()
    file(GENERATE OUTPUT "${base}-all.cmake" CONTENT "${content}")
    file(WRITE "${base}.cmake" "include(\"${base}-all.cmake\")\n")
  endif()
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${base}.cmake")
endfunction()

# Runs in ctest (script mode): globs the root and registers the tests.
function(_backendbench_register_tests)
  cmake_parse_arguments(ARG "" "ROOT;BINARY;PREFIX;GPU_MATCH;TIMEOUT;SKIP_RETURN_CODE;CMAKE_COMMAND"
                        "OPS;IMPLS;GPU_IMPLS;ARGS;LABELS;LAUNCHER;ENVIRONMENT" ${ARGN})

  # A root that cannot be used is one failing test that says why, not silently no tests.
  set(problem "")
  if(NOT IS_DIRECTORY "${ARG_ROOT}")
    set(problem "custom-ops root ${ARG_ROOT} does not exist (not built yet?)")
  endif()
  set(ops ${ARG_OPS})
  if(NOT problem AND NOT ops)
    # gen_input.yaml, or a BackendBench-py folder's gen_input.py.
    file(GLOB manifests LIST_DIRECTORIES false RELATIVE "${ARG_ROOT}" "${ARG_ROOT}/*/gen_input.yaml" "${ARG_ROOT}/*/gen_input.py")
    foreach(m IN LISTS manifests)
      get_filename_component(op "${m}" DIRECTORY)
      list(APPEND ops "${op}")
    endforeach()
    list(REMOVE_DUPLICATES ops)
    list(SORT ops)
    if(NOT ops)
      set(problem "custom-ops root ${ARG_ROOT} has no <op>/gen_input.yaml")
    endif()
  endif()
  if(problem)
    add_test("${ARG_PREFIX}.ROOT" "${ARG_CMAKE_COMMAND}" -E echo "backendbench_add_tests: ${problem}")
    set_tests_properties("${ARG_PREFIX}.ROOT" PROPERTIES FAIL_REGULAR_EXPRESSION "." LABELS "${ARG_LABELS}")
    return()
  endif()

  foreach(op IN LISTS ops)
    file(GLOB libraries LIST_DIRECTORIES false "${ARG_ROOT}/${op}/*.so" "${ARG_ROOT}/${op}/*.dylib" "${ARG_ROOT}/${op}/*.dll")
    # Python implementations, as the run finds them (discovery.cpp): a .py whose text names
    # <op>_kernel_impl, not gen_input.py nor a private module (_name.py).
    file(GLOB python_files LIST_DIRECTORIES false "${ARG_ROOT}/${op}/*.py")
    foreach(py IN LISTS python_files)
      get_filename_component(n "${py}" NAME)
      if(n STREQUAL "gen_input.py" OR n MATCHES "^_")
        continue()
      endif()
      file(STRINGS "${py}" names REGEX "${op}_kernel_impl")
      if(names)
        list(APPEND libraries "${py}")
      endif()
    endforeach()
    list(SORT libraries)
    foreach(lib IN LISTS libraries)
      get_filename_component(impl "${lib}" NAME_WLE)
      # An in-place op's name ends in '_' (inplace_rmsnorm_): its reference is
      # inplace_rmsnorm_reference, as a library stem may not hold '__'.
      string(REGEX REPLACE "_+$" "" op_stem "${op}")
      if(impl STREQUAL "${op}_reference" OR impl STREQUAL "${op_stem}_reference")
        continue()
      endif()
      if(ARG_IMPLS AND NOT impl IN_LIST ARG_IMPLS AND NOT "${op}__${impl}" IN_LIST ARG_IMPLS)
        continue()
      endif()
      set(name "${ARG_PREFIX}.${op}__${impl}")
      add_test("${name}" ${ARG_LAUNCHER} "${ARG_BINARY}" --custom-ops-root "${ARG_ROOT}" --ops "${op}"
               --impls "${op}__${impl}" --no-log -q --skip-exit-code "${ARG_SKIP_RETURN_CODE}" ${ARG_ARGS})
      set(labels ${ARG_LABELS})
      set(gpu OFF)
      if((NOT ARG_GPU_MATCH STREQUAL "" AND impl MATCHES "${ARG_GPU_MATCH}") OR impl IN_LIST ARG_GPU_IMPLS
         OR "${op}__${impl}" IN_LIST ARG_GPU_IMPLS)
        set(gpu ON)
        list(APPEND labels gpu)
      endif()
      set_tests_properties("${name}" PROPERTIES SKIP_RETURN_CODE "${ARG_SKIP_RETURN_CODE}" TIMEOUT "${ARG_TIMEOUT}")
      if(labels)
        set_tests_properties("${name}" PROPERTIES LABELS "${labels}")
      endif()
      if(ARG_ENVIRONMENT)
        set_tests_properties("${name}" PROPERTIES ENVIRONMENT "${ARG_ENVIRONMENT}")
      endif()
      if(gpu)
        set_tests_properties("${name}" PROPERTIES RESOURCE_GROUPS "gpus:1")
      endif()
    endforeach()
  endforeach()
endfunction()

cmake_policy(POP)
