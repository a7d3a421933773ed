// What a run will do for one op: its cases, its implementations, which reference serves and
// which baseline times it. Libraries are probed through the executor, so one that crashes on
// load is reported, not fatal.
#pragma once

#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/cases.hpp"
#include "plan/discovery.hpp"
#include "plugin_library.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/workers/executor.hpp"

namespace bb {

struct Implementation {
  std::string name;  // "<op>__<stem>"
  std::string stem;
  std::filesystem::path library;
  PluginInfo info;
  // The device its tests run on (device_for), decided once in planning: "" when it runs on
  // none of the op's devices (its tests are SKIPPED).
  std::string device;
  std::string unavailable;  // why it cannot run on this machine (kPythonUnavailable): its tests are SKIPPED
  // A .py file that imports an installed package (a kernel library, imported once by its library
  // interpreter while other work runs: python_zygote.hpp): its jobs go after the others.
  bool imports_packages = false;
  bool has_backward = false;  // it exports <op>_backward_impl: its bwd tests run (else SKIPPED)
};

struct ReferenceChoice {
  enum class Kind { library, implementation, identity };
  Kind kind = Kind::identity;
  std::filesystem::path library;
  std::string name;  // what the report shows: "myop_reference", "myop__myop_cpp", "identity"
  PluginInfo info;
  // It has a backward (<op>_backward_reference; an implementation serving: its _backward_impl).
  bool has_backward = false;
  Target target(Mode mode = Mode::fwd) const;
};

struct Baseline {
  Target target;  // its forward; its backward is the same target's backward pass
  std::string name;
  PluginInfo info;
  std::string device;
  bool has_backward = false;  // bwd tests get speedups against it only then
};

struct LoadFailure {
  std::filesystem::path library;
  std::string error;
};

struct OpPlan {
  OpFolder folder;
  Manifest manifest;
  std::vector<ConcreteCase> cases;
  std::vector<Implementation> impls;  // scored, in sorted order, after --impls
  ReferenceChoice reference;
  // What speedups are measured against, one per device at most; none: no speedups (identity
  // reference, say). Each is timed on its device; only implementations there get speedups.
  std::vector<Baseline> baselines;
  std::string baseline_names() const;  // "myop_reference (cpu), myop__myop_cuda_naive (cuda)"
  std::vector<std::string> warnings;
  std::vector<LoadFailure> failures;  // libraries that could not be used
};

struct PlanOptions {
  double probe_timeout = 30.0;
  std::optional<uint64_t> seed;  // overrides the manifest's
  CaseExpansion expansion = default_expansion();  // --random-cases N, --variants (cases.hpp)
  // --mode: the passes every op is run in (mode.hpp); unset: what each op declares (its
  // backward's modes, else fwd).
  std::optional<std::vector<Mode>> modes;
  // --check-backwards: a BackendBench-py folder's op gets the backward that suite checks
  // (check_backwards.hpp); an op with a gen_input.yaml has what it declares.
  bool check_backwards = false;
  // Probe up to `parallel` libraries at once, each thread with an executor of its own.
  std::function<std::unique_ptr<Executor>()> make_executor;
  int parallel = 1;
  // --impls: a Python file none of these names is not imported at all (PyTorch takes seconds to
  // import) where it cannot matter: the folder has its reference, and the file names none.
  std::vector<std::string> selected;
  // Called once the sweep is known to import Python files (a generated manifest's gen_input.py,
  // or files --impls selects), their interpreter's packages found (before any of them is
  // probed): the run starts its warm interpreter (python_zygote.hpp).
  std::function<void()> python_found;
  // Called on a thread of its own, beside the plan and its survey, with the sweep's Python
  // implementations (not its references): the run starts their library interpreters
  // (python_zygote.hpp). SweepPlan::python_implementations waits for it.
  std::function<void(const std::vector<std::string>& files)> python_implementations;
  // The sweep's survey of its Python files (survey_sweep), waited for where called: their probe
  // replies by path. Unset: each folder surveys its own.
  std::function<const std::map<std::string, nlohmann::json>&()> surveyed;
  // The survey reads each Python file's text first and imports only those whose text does not
  // say for certain what they define (a run: a file that then fails to import is each of its
  // tests' ERROR, with the traceback). Unset: every file imported (`check`: it says which do not
  // import).
  bool read_python = false;
};

// Every Python file `folders` will import (those --impls names, and each reference, where it
// names any), surveyed at once: batches of files in workers side by side, each file imported in
// a child of its own beside the others. Their probe replies by path; a file that failed there is
// not among them (plan_op probes it again alone).
std::map<std::string, nlohmann::json> survey_sweep(const std::vector<OpFolder>& folders, Executor& executor, const PlanOptions& options);

// Errors are manifest errors (file:line: ...); library problems land in OpPlan::failures.
Expected<OpPlan> plan_op(const OpFolder& folder, Executor& executor, const PlanOptions& options);

// What a sweep takes from the command line: the root and its filters (--ops, --impls, --cases,
// --input-id), and the interpreter .py implementations import with (--python).
struct SweepSelection {
  std::filesystem::path root;
  std::vector<std::string> ops, impls, cases;
  std::vector<int> input_ids;
  std::string python;
};

struct UnusableOp {
  OpFolder folder;
  std::string error;  // why its manifest could not be used (file:line: ...)
};

struct SweepPlan {
  std::vector<OpPlan> ops;          // the usable ones, by name
  std::vector<UnusableOp> unusable;  // by name
  // An op or a library that could not be used (the run exits 2).
  bool any_unusable() const;
  // PlanOptions::python_implementations, called beside the plan (it waits for the warm
  // interpreter's imports, which nothing of the plan needs where the files' text says what they
  // define): the last copy of the plan waits for it.
  std::shared_future<void> python_implementations;
};

// The one planning of a sweep, for the run, --list and check: the root's ops, the selected
// ones (filter_ops), the Python site where a .py implementation or a generated manifest needs it
// (resolved before the first executor is made: its walls must see it), every op planned
// (plan_op, with executors from `make_executor`), implementation names made unique across the
// sweep (a second library whose name is taken is a failure of its op), then --impls, --cases
// and --input-id. Errors: no root, no ops, an unknown name, a --python that cannot be asked.
Expected<SweepPlan> plan_sweep(const SweepSelection& selection, const std::function<std::unique_ptr<Executor>()>& make_executor,
                               PlanOptions options);

// The device a library's function runs on for this op: the first of its info record's devices
// that the op lists (the op's first device when it has no record), or "" when none matches.
std::string device_for(const PluginInfo& info, const Manifest& m);

// Keeps the impls named in `names` ("myop__myop_cpp" or "myop_cpp"); an unknown name is an
// error that lists what exists.
// --cases and --input-id: only the cases a pattern (an exact case id, or a glob of ids:
// "correctness/*", "performance/large*") or an index (0-based, in the op's expanded order, as
// tritonbench's --input-id) selects; none of either: every case. A pattern or an index that
// selects no case of any op is an error that lists some ids.
Status filter_cases(std::vector<OpPlan>& plans, const std::vector<std::string>& patterns, const std::vector<int>& indices);

Status filter_impls(std::vector<OpPlan>& plans, const std::vector<std::string>& names);

// Keeps the ops named in `names`; an unknown name is an error that lists what exists.
Expected<std::vector<OpFolder>> filter_ops(std::vector<OpFolder> ops, const std::vector<std::string>& names);

}  // namespace bb
