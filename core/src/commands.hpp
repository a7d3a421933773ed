// The subcommands beside a run: each reads its own arguments (argv[0] is "backendbench <name>")
// and returns the process's exit status.
#pragma once

namespace bb {

// backendbench compare BASE NEW [--threshold PCT] [--md FILE]: 0 no regression, 3 a
// regression, 2 unusable input.
int compare_main(int argc, char** argv);

// backendbench merge --log-dir OUT SHARD...: joins the shards of one sweep (result files or
// log dirs) into one run and writes every report; 0/1 as a run, 2 unusable input.
int merge_main(int argc, char** argv);

// backendbench resource-spec [--output FILE]: a CTest resource spec (JSON) with one `gpus`
// resource per device found, for `ctest --resource-spec-file`.
int resource_spec_main(int argc, char** argv, const char* worker_binary);

// backendbench check [ROOT] [--ops a,b]: validates manifests and libraries without running a
// kernel; 0 usable, 2 not.
int check_main(int argc, char** argv, const char* worker_binary);

// backendbench new-op NAME [--root DIR] [--devices cpu,cuda,hip]: writes NAME/ (manifest,
// reference, an implementation per device, CMakeLists.txt); 0 written, 2 refused.
int new_op_main(int argc, char** argv);

}  // namespace bb
