// backendbench new-op NAME [--root DIR] [--devices cpu,cuda,hip] [--backward]: writes a new op's
// folder (a manifest, a reference, one implementation per device and a CMakeLists.txt that builds
// them against the installed package; with --backward, the backward pass of the reference and the
// C++ implementation). What it writes builds and passes as written. Never
// overwrites: an existing folder is an error.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands/commands.hpp"
#include "commands/new_op_templates.hpp"
#include "devices/device_runtimes.hpp"
#include "report/report_files.hpp"

namespace bb {

namespace {

std::string fill(std::string text, const std::string& op, const std::string& devices) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"@OP@", op}, {"@DEVICES@", devices}})
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) text.replace(at, key.size(), value);
  return text;
}

}  // namespace

int new_op_command(CLI::App& app, const CommandContext& ctx) {
  app.description("Writes a new op's folder: gen_input.yaml, a reference, one implementation per device and a CMakeLists.txt "
               "that builds them against the installed BackendBench (docs/adding-an-op.md)");
  std::string name, root = ".";
  std::vector<std::string> devices{std::string(kCpuDevice), "cuda"};
  app.add_option("NAME", name, "the op's name: lower case letters, digits and single underscores")->required();
  app.add_option("--root", root, "the folder to write NAME/ into (default: the current directory)");
  app.add_option("--devices", devices, "devices to write an implementation for (default: cpu,cuda)")
      ->delimiter(',')
      ->check(CLI::IsMember(device_kind_names()));
  std::string lang = "cpp";
  app.add_option("--lang", lang, "cpp: C++/CUDA/HIP plugins built with CMake (default); python: a Python reference, a PyTorch and (for "
                                 "cuda) a Triton implementation, run as they are")
      ->check(CLI::IsMember({"cpp", "python"}));
  bool backward = false;
  app.add_flag("--backward", backward, "the op's backward pass too: declared in the manifest, in the reference and the C++ implementation "
                                       "(--lang cpp)");
  if (auto status = parse_command(app, ctx)) return *status;
  if (backward && lang == "python") {
    fmt::print(stderr, "error: --backward writes C++ backwards (--lang cpp); Python backwards are not run yet (docs/MANIFEST.md, Backward)\n");
    return 2;
  }
  // A name is a C identifier (it is in the exported symbol) and a file stem; "__" would make
  // reported names (<op>__<impl>) ambiguous.
  if (!std::regex_match(name, std::regex("[a-z][a-z0-9_]*")) || name.find("__") != std::string::npos || name.back() == '_') {
    fmt::print(stderr, "error: '{}' is no op name: expected lower case letters, digits and single underscores, starting with a letter "
               "(the name is part of the exported symbol {}_kernel_impl)\n", name, name);
    return 2;
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  if (std::none_of(devices.begin(), devices.end(), [](const std::string& d) { return is_cpu(d); }))
    devices.insert(devices.begin(), std::string(kCpuDevice));  // the reference's

  const std::filesystem::path dir = std::filesystem::path(root) / name;
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    fmt::print(stderr, "error: {} exists: new-op never overwrites (choose another name or --root)\n", dir.string());
    return 2;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    fmt::print(stderr, "error: cannot create {}: {}\n", dir.string(), ec.message());
    return 2;
  }
  const std::string device_list = fmt::format("{}", fmt::join(devices, ", "));
  const auto wanted = [&](const char* runtime) { return std::find(devices.begin(), devices.end(), runtime) != devices.end(); };
  std::string cmake = templates::kCMakeHead;
  std::string manifest = templates::kManifest;
  if (backward) manifest.insert(manifest.find("tests:\n"), templates::kManifestBackward);
  std::vector<std::pair<std::string, std::string>> files{{"gen_input.yaml", manifest}};
  if (lang == "python") {
    files.emplace_back(name + "_reference.py", templates::kPyReference);
    files.emplace_back(name + "_torch.py", templates::kPyTorch);
  } else {
    files.emplace_back(name + "_reference.cpp", std::string(templates::kReference) + (backward ? templates::kReferenceBackward : ""));
    files.emplace_back(name + "_cpp.cpp", std::string(templates::kCpp) + (backward ? templates::kCppBackward : ""));
  }
  for (const auto& t : templates::kRuntimeTemplates) {
    if (!wanted(t.runtime)) continue;
    cmake += t.cmake;
    if (lang != "python") files.emplace_back(name + t.suffix, t.source);
    else if (t.python) files.emplace_back(name + t.python_suffix, t.python);
  }
  for (const auto& d : devices)
    if (!is_cpu(d) && std::none_of(std::begin(templates::kRuntimeTemplates), std::end(templates::kRuntimeTemplates),
                                   [&](const templates::RuntimeTemplate& t) { return d == t.runtime; }))
      fmt::print(stderr, "note: new-op has no template for {}: no implementation written for it\n", d);
  if (lang != "python") files.emplace_back("CMakeLists.txt", cmake);
  if (backward && devices.size() > 1)
    fmt::print(stderr, "note: --backward writes the C++ implementation's backward; the GPU ones have none (their bwd tests are SKIPPED "
               "until you add <op>_backward_impl: docs/PLUGIN_ABI.md)\n");
  for (const auto& [file, text] : files) {
    if (auto s = write_file_atomically(dir / file, fill(text, name, device_list)); !s) {
      fmt::print(stderr, "error: {}\n", s.error().message);
      return 2;
    }
    fmt::print("wrote {}\n", (dir / file).string());
  }
  if (lang == "python") {
    fmt::print("\nnext: run it (no build step; --custom-ops-root {0} if it is not in the root a run uses):\n"
               "  backendbench check {0}\n"
               "  backendbench --custom-ops-root {0} --ops {1}\n",
               root, name);
    return 0;
  }
  fmt::print("\nnext: build it out of tree and run it:\n"
             "  cmake -S {0} -B {0}/build && cmake --build {0}/build\n"
             "  backendbench --ops {1}\n",
             dir.string(), name);
  return 0;
}

}  // namespace bb
