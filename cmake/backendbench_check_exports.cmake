# cmake -DLIBRARY=<file> -DOP=<op> -DNM=<nm> -P backendbench_check_exports.cmake
#
# Run after a plugin is linked (backendbench_add_plugin): fails the build where the library
# exports neither <op>_kernel_impl nor <op>_reference, naming what it does export of that kind
# (a misspelt op in BB_KERNEL_IMPL builds fine otherwise, and the run then says only that the
# symbol is missing).
if(NOT NM)
  return()  # no nm here: the run says what is missing instead
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  return()  # an nm that cannot read it: the run says what is missing instead
endif()
if(symbols MATCHES "[ \t](${OP}_kernel_impl|${OP}_reference)\n")
  return()
endif()
string(REGEX MATCHALL "[A-Za-z0-9_]+_(kernel_impl|reference)\n" found "${symbols}")
string(REPLACE "\n" "" found "${found}")
string(REPLACE ";" ", " found "${found}")
if(found)
  set(found "; it exports ${found} (the op's name misspelt in BB_KERNEL_IMPL?)")
else()
  set(found "; it exports no <op>_kernel_impl or <op>_reference at all (no BB_KERNEL_IMPL or BB_REFERENCE?)")
endif()
message(FATAL_ERROR "${LIBRARY}: exports neither ${OP}_kernel_impl nor ${OP}_reference, so backendbench would not run it${found}")
