# Triton kernels as BackendBench plugins, compiled ahead of time at build time.
#
#   backendbench_add_triton_plugin(<target>
#       OP <op>                    the op's name (its folder in the root)
#       SOURCES <files...>         the plugin's own code: BB_KERNEL_IMPL, tensors to arguments
#       KERNEL <file.py>           the Python file holding the @triton.jit kernel
#       NAME <function>            the kernel's name in it
#       GRID "<x>, <y>, <z>"       the launch grid, C expressions over the kernel's argument names
#       VARIANT <c-name> "<signature>" [VARIANT ...]
#                                  one compiled kernel per signature (Triton's syntax: "*fp32:16,
#                                  *fp32:16, i64, 1024": pointers, scalars, :16 divisibility hints,
#                                  constexpr values), each reachable from SOURCES through <c-name>.h
#                                  as <c-name>_load() and <c-name>_launch(stream, args...)
#       [NUM_WARPS <n>] [NUM_STAGES <n>]   defaults 4 and 3
#       [PLUGIN_NAME <stem>] [ROOT <dir>] [MANIFEST <file>])   as backendbench_add_plugin()
#
# Triton's own AOT compiler (python -m triton.tools.compile) writes C source embedding the
# kernel's cubin; cmake/backendbench_triton_aot.py gives it stable names and a load that
# returns errors. The plugin links the CUDA driver library. Triton compiles for the GPU of the
# machine that builds, so these plugins build only where Triton imports and finds a CUDA GPU:
# BACKENDBENCH_HAVE_TRITON says whether it did, BACKENDBENCH_TRITON_MISSING why not,
# BACKENDBENCH_TRITON_VERSION and BACKENDBENCH_TRITON_TARGET (e.g. cuda:90) what was found.
# BACKENDBENCH_TRITON_PYTHON picks the interpreter (default: python3 on PATH).

if(NOT BACKENDBENCH_TRITON_PYTHON)
  find_program(BACKENDBENCH_TRITON_PYTHON NAMES python3 python DOC "Python interpreter with Triton, for Triton plugins")
endif()
set(BACKENDBENCH_TRITON_AOT_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/backendbench_triton_aot.py")

set(BACKENDBENCH_HAVE_TRITON OFF)
set(BACKENDBENCH_TRITON_MISSING "")
if(NOT BACKENDBENCH_TRITON_PYTHON)
  set(BACKENDBENCH_TRITON_MISSING "no python3 on PATH")
elseif(NOT CMAKE_CUDA_COMPILER AND NOT BACKENDBENCH_HAVE_CUDA)
  set(BACKENDBENCH_TRITON_MISSING "no CUDA toolkit (Triton plugins link the CUDA driver library)")
else()
  execute_process(COMMAND "${BACKENDBENCH_TRITON_PYTHON}" "${BACKENDBENCH_TRITON_AOT_SCRIPT}" --probe
                  RESULT_VARIABLE triton_rc OUTPUT_VARIABLE triton_out ERROR_VARIABLE triton_err
                  OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 120)
  if(triton_rc EQUAL 0)
    list(GET triton_out 0 BACKENDBENCH_TRITON_VERSION)
    list(GET triton_out 1 BACKENDBENCH_TRITON_TARGET)
    set(BACKENDBENCH_HAVE_TRITON ON)
  elseif(triton_out)
    set(BACKENDBENCH_TRITON_MISSING "${triton_out}")
  else()
    set(BACKENDBENCH_TRITON_MISSING "${BACKENDBENCH_TRITON_PYTHON} ${BACKENDBENCH_TRITON_AOT_SCRIPT} --probe failed: ${triton_rc} ${triton_err}")
  endif()
endif()
if(BACKENDBENCH_HAVE_TRITON)
  enable_language(C)  # the generated sources are C (include this file at file scope, not in a function)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "BackendBench: Triton ${BACKENDBENCH_TRITON_VERSION} compiles Triton plugins for ${BACKENDBENCH_TRITON_TARGET}")
else()
  message(STATUS "BackendBench: Triton plugins are not built: ${BACKENDBENCH_TRITON_MISSING}")
endif()

function(backendbench_add_triton_plugin target)
  cmake_parse_arguments(ARG "" "OP;KERNEL;NAME;GRID;NUM_WARPS;NUM_STAGES;PLUGIN_NAME;ROOT;MANIFEST" "SOURCES;VARIANT" ${ARGN})
  foreach(required OP SOURCES KERNEL NAME GRID VARIANT)
    if(NOT ARG_${required})
      message(FATAL_ERROR "backendbench_add_triton_plugin(${target}): ${required} is required")
    endif()
  endforeach()
  if(NOT BACKENDBENCH_HAVE_TRITON)
    message(FATAL_ERROR "backendbench_add_triton_plugin(${target}): ${BACKENDBENCH_TRITON_MISSING} (test BACKENDBENCH_HAVE_TRITON first)")
  endif()
  list(LENGTH ARG_VARIANT n)
  math(EXPR odd "${n} % 2")
  if(odd)
    message(FATAL_ERROR "backendbench_add_triton_plugin(${target}): VARIANT takes a C name and a signature, e.g. VARIANT add_f32 \"*fp32:16, *fp32:16, i64, 1024\"")
  endif()
  if(NOT ARG_NUM_WARPS)
    set(ARG_NUM_WARPS 4)
  endif()
  if(NOT ARG_NUM_STAGES)
    set(ARG_NUM_STAGES 3)
  endif()
  get_filename_component(kernel "${ARG_KERNEL}" ABSOLUTE)
  set(gen_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_triton")
  set(generated "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET ARG_VARIANT ${i} cname)
    list(GET ARG_VARIANT ${j} signature)
    add_custom_command(
      OUTPUT "${gen_dir}/${cname}.c" "${gen_dir}/${cname}.h"
      COMMAND "${BACKENDBENCH_TRITON_PYTHON}" "${BACKENDBENCH_TRITON_AOT_SCRIPT}" --kernel "${kernel}" --name "${ARG_NAME}"
              --signature "${signature}" --grid "${ARG_GRID}" --num-warps ${ARG_NUM_WARPS} --num-stages ${ARG_NUM_STAGES}
              --out-name ${cname} --out-dir "${gen_dir}"
      DEPENDS "${kernel}" "${BACKENDBENCH_TRITON_AOT_SCRIPT}"
      COMMENT "Triton AOT: ${ARG_NAME} of ${ARG_KERNEL} as ${cname} (${signature})"
      VERBATIM)
    list(APPEND generated "${gen_dir}/${cname}.c" "${gen_dir}/${cname}.h")
  endforeach()

  set(extra "")
  foreach(k PLUGIN_NAME ROOT MANIFEST)
    if(ARG_${k})
      string(REPLACE "PLUGIN_NAME" "NAME" key ${k})
      list(APPEND extra ${key} "${ARG_${k}}")
    endif()
  endforeach()
  backendbench_add_plugin(${target} OP ${ARG_OP} SOURCES ${ARG_SOURCES} ${generated} LINK CUDA::cuda_driver ${extra})
  target_include_directories(${target} PRIVATE "${gen_dir}")
  # The generated C embeds the cubin as a byte array and ends its launch function without a
  # return where the grid is empty (the plugin never launches one): no warnings from it.
  set_source_files_properties(${generated} PROPERTIES COMPILE_OPTIONS "-w")
endfunction()
