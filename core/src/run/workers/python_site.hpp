// The Python installation whose packages .py implementations import: the interpreter named by
// --python, else `python3` on the PATH. The host asks it once, as a program (the host never
// loads Python), for its version and sys.path; the workers that embed Python take them from the
// environment (backendbench/detail/python_bridge.h: BB_PYTHON_ENV, BB_PYTHON_SITE_ENV).
#pragma once

#include <string>
#include <vector>

namespace bb {

struct PythonSite {
  std::string interpreter;        // as run ("" where none was found)
  bool named = false;             // by --python: its packages are used, or the error is the load's
  std::vector<std::string> path;  // its sys.path, entries that exist
  std::string error;              // why it could not be asked
};

// Asks `interpreter` (or python3 on the PATH where it is empty), once per process, and puts
// the answer in this process's environment for the workers it starts.
const PythonSite& resolve_python_site(const std::string& interpreter);

// The folders a worker embedding Python reads (for choosing its user): empty before
// resolve_python_site().
std::vector<std::string> python_site_dirs();
// The interpreter's own package folders (its sys.path entries that are absolute and exist),
// read-only in every worker's view (worker_walls.cpp walls_for): what the warm interpreter and
// every later worker import, the reference's included, is out of a worker's reach.
std::vector<std::string> python_package_dirs();
// Adds a folder to those (the generated manifests' folder, which the worker making them writes).
void note_python_dir(const std::string& dir);

}  // namespace bb
