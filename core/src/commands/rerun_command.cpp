#include "commands/rerun_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "devices/device_runtimes.hpp"

namespace bb {

std::string shell_quoted(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:+,@%") == std::string::npos;
  if (plain) return text;
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string rerun_command(const SessionOptions& o, const TestId& id) {
  std::error_code ec;
  const auto root = std::filesystem::absolute(o.root, ec);
  std::string line = fmt::format("{} --custom-ops-root {} --ops {} --impls {} --cases {}", shell_quoted(o.worker_binary.empty() ? "backendbench" : o.worker_binary),
                                 shell_quoted(root.string()), shell_quoted(id.op), shell_quoted(id.impl), shell_quoted(id.case_id));
  // A variant is a case of the run's value variants: that one asked for, the others left out.
  if (!id.variant.empty()) line += " --variants " + shell_quoted(id.variant);
  line += " --mode " + shell_quoted(id.mode);  // its pass alone, whatever the manifest's default (--cases names a case in every mode)
  if (!o.python.empty()) line += " --python " + shell_quoted(o.python);
  if (!is_cpu(id.device) && !id.device.empty()) line += fmt::format(" --devices {}", id.device_index);
  return line + " --no-isolate";
}

}  // namespace bb
