#include "plan/manifest.hpp"

#include <algorithm>
#include <cerrno>
#include <set>
#include <system_error>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "devices/device_runtimes.hpp"
#include "plan/value_variants.hpp"

namespace bb {

std::string scalar_to_string(const Scalar& s) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else return fmt::format("{}", v);
      },
      s);
}

const char* attr_type_name(AttrType t) {
  static const char* names[] = {"int", "float", "bool", "string", "int_list", "float_list"};
  return names[static_cast<int>(t)];
}
const char* case_kind_name(CaseKind k) { return k == CaseKind::correctness ? "correctness" : "performance"; }

int Manifest::input_index(const std::string& name) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string Manifest::where(int line) const { return fmt::format("{}:{}", path.string(), line); }

namespace {

// Thrown only inside this file, turned into a Failure at load_manifest's boundary.
struct ManifestError {
  int line;
  std::string what;
};

int line_of(const YAML::Node& n) { return std::max(1, n.Mark().line + 1); }  // an empty document has no mark: line 1

[[noreturn]] void fail(const YAML::Node& n, const std::string& what) { throw ManifestError{line_of(n), what}; }

void check_keys(const YAML::Node& map, const char* where, std::initializer_list<const char*> allowed) {
  if (!map.IsMap()) fail(map, fmt::format("{}: expected a mapping", where));
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      fail(kv.first, fmt::format("unknown key '{}' in {}; expected one of: {}", key, where, fmt::join(names, ", ")));
    }
  }
}

std::string as_string(const YAML::Node& n, const char* what) {
  if (!n.IsScalar()) fail(n, fmt::format("{}: expected a string", what));
  return n.Scalar();
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string identifier(const YAML::Node& n, const char* what) {
  std::string s = as_string(n, what);
  if (!is_identifier(s)) fail(n, fmt::format("{}: '{}' is not a valid name (letters, digits, '_')", what, s));
  return s;
}

// YAML scalars are untyped text; decide int / float / bool / string the way YAML 1.2 core does.
Scalar to_scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return s;  // quoted
  if (s == "true" || s == "True" || s == "false" || s == "False") return s[0] == 't' || s[0] == 'T';
  {
    size_t used = 0;
    try {
      long long v = std::stoll(s, &used, 0);
      if (used == s.size()) return static_cast<int64_t>(v);
    } catch (...) {
    }
  }
  {
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && s.find_first_of("0123456789") != std::string::npos) return v;
    if (s == ".inf" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == ".nan" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return s;
}

double as_number(const YAML::Node& n, const char* what) {
  if (!n.IsScalar()) fail(n, fmt::format("{}: expected a number", what));
  Scalar s = to_scalar(n);
  if (auto* i = std::get_if<int64_t>(&s)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&s)) return *d;
  fail(n, fmt::format("{}: expected a number, got '{}'", what, n.Scalar()));
}

Sourced sourced(const YAML::Node& n, const char* what) {
  if (!n.IsScalar()) fail(n, fmt::format("{}: expected an expression (a number or a string)", what));
  return Sourced{n.Scalar(), line_of(n)};
}

std::vector<Sourced> shape_list(const YAML::Node& n, const char* what) {
  if (!n.IsSequence()) fail(n, fmt::format("{}: expected a list of dimensions, like [rows, 128]", what));
  std::vector<Sourced> dims;
  for (const auto& d : n) dims.push_back(sourced(d, what));
  return dims;
}

InitSpec parse_init(const YAML::Node& n) {
  static const std::pair<const char*, InitKind> kinds[] = {
      {"randn", InitKind::randn}, {"uniform", InitKind::uniform}, {"randint", InitKind::randint},
      {"ones", InitKind::ones},   {"zeros", InitKind::zeros},     {"arange", InitKind::arange},
      {"full", InitKind::full},   {"npy", InitKind::npy}};
  const char* expected =
      "expected an initialiser: randn, ones, zeros, arange, {randn: {mean, std}}, {uniform: {low, high}}, "
      "{randint: {low, high}}, {arange: {start, step}}, {full: VALUE}, {npy: FILE}";
  InitSpec spec;
  spec.line = line_of(n);
  std::string name;
  YAML::Node args;  // stays undefined-or-null when the initialiser has no arguments
  bool has_args = false;
  if (n.IsScalar()) {
    name = n.Scalar();
  } else if (n.IsMap() && n.size() == 1) {
    name = n.begin()->first.as<std::string>();
    args = n.begin()->second;
    has_args = !args.IsNull();
  } else {
    fail(n, expected);
  }
  bool found = false;
  for (const auto& [k, v] : kinds)
    if (name == k) spec.kind = v, found = true;
  if (!found) fail(n, fmt::format("unknown initialiser '{}'; {}", name, expected));

  // A bound: a number, or an expression resolved per case.
  auto bound = [&](const YAML::Node& v, const char* what, double& value, std::string& expr) {
    if (!v.IsScalar()) fail(v, fmt::format("{}: expected a number or an expression", what));
    const Scalar sc = to_scalar(v);
    if (auto* i = std::get_if<int64_t>(&sc)) value = static_cast<double>(*i);
    else if (auto* d = std::get_if<double>(&sc)) value = *d;
    else expr = v.Scalar();
  };
  auto two = [&](const char* first, const char* second, double d1, double d2) {
    spec.a = d1;
    spec.b = d2;
    if (!has_args) return;
    if (args.IsSequence() && args.size() == 2) {
      bound(args[0], first, spec.a, spec.a_expr);
      bound(args[1], second, spec.b, spec.b_expr);
      return;
    }
    check_keys(args, name.c_str(), {first, second});
    if (args[first]) bound(args[first], first, spec.a, spec.a_expr);
    if (args[second]) bound(args[second], second, spec.b, spec.b_expr);
  };

  switch (spec.kind) {
    case InitKind::randn: two("mean", "std", 0.0, 1.0); break;
    case InitKind::uniform:
      two("low", "high", 0.0, 1.0);
      if (spec.a_expr.empty() && spec.b_expr.empty() && !(spec.a < spec.b))
        fail(n, fmt::format("uniform: expected low < high, got [{}, {})", spec.a, spec.b));
      break;
    case InitKind::randint:
      two("low", "high", 0.0, 10.0);
      if (spec.a_expr.empty() && spec.b_expr.empty() && !(spec.a < spec.b))
        fail(n, fmt::format("randint: expected low < high, got [{}, {})", spec.a, spec.b));
      break;
    case InitKind::arange: two("start", "step", 0.0, 1.0); break;
    case InitKind::ones:
    case InitKind::zeros:
      if (has_args) fail(args, fmt::format("{} takes no arguments", name));
      break;
    case InitKind::full:
      if (!has_args) fail(n, "full: expected a value, like {full: 2.5}");
      if (args.IsMap()) {
        check_keys(args, "full", {"value"});
        if (!args["value"]) fail(args, "full: expected {value: V}");
        bound(args["value"], "full.value", spec.a, spec.a_expr);
      } else {
        bound(args, "full", spec.a, spec.a_expr);
      }
      break;
    case InitKind::npy:
      if (!has_args || !args.IsScalar()) fail(n, "npy: expected a file name, like {npy: data/x.npy}");
      spec.path = args.Scalar();
      // Confined to the op's folder: a manifest reads its own data, nothing else of the machine.
      if (const auto p = std::filesystem::path(spec.path).lexically_normal();
          spec.path.empty() || p.is_absolute() || p.has_root_name() || (!p.empty() && *p.begin() == ".."))
        fail(n, fmt::format("npy: '{}' leaves the op's folder; expected a path inside it, like data/x.npy", spec.path));
      break;
  }
  return spec;
}

// `variants: none | default | all | NAME | [NAME, ...]` (value_variants.hpp).
uint32_t parse_variants(const YAML::Node& n) {
  std::string text;
  if (n.IsScalar()) {
    text = n.Scalar();
  } else if (n.IsSequence()) {
    if (n.size() == 0) return 0;
    for (const auto& v : n) {
      if (!v.IsScalar()) fail(v, "variants: expected names of value variants");
      if (!text.empty()) text += ',';
      text += v.Scalar();
      if (v.Scalar() == "default" || v.Scalar() == "none" || v.Scalar() == "all")
        fail(v, fmt::format("variants: '{}' stands alone, not in a list", v.Scalar()));
    }
  } else {
    fail(n, "variants: expected none, default, all, a variant's name or a list of them");
  }
  auto set = parse_variant_set(text);
  if (!set) fail(n, "variants: " + set.error().message);
  return *set;
}

TensorSpec parse_tensor_spec(const YAML::Node& n, const char* where, bool with_name) {
  if (with_name) check_keys(n, where, {"name", "shape", "dtype", "init", "variants", "description"});
  else check_keys(n, where, {"shape", "dtype", "init", "variants"});
  TensorSpec t;
  t.line = line_of(n);
  if (n["shape"]) t.shape = shape_list(n["shape"], "shape");
  if (n["dtype"]) t.dtype = sourced(n["dtype"], "dtype");
  if (n["init"]) t.init = parse_init(n["init"]);
  if (n["variants"]) {
    t.variants = parse_variants(n["variants"]);
    t.variants_line = line_of(n["variants"]);
  }
  return t;
}

ToleranceTable parse_tolerances(const YAML::Node& n) {
  ToleranceTable table;
  if (!n.IsMap()) fail(n, "tolerances: expected a mapping of dtype to {atol, rtol}");
  for (const auto& kv : n) {
    const std::string name = kv.first.as<std::string>();
    auto dt = parse_dtype(name);
    if (!dt) fail(kv.first, fmt::format("tolerances: unknown dtype '{}'; expected one of: {}", name, dtype_names_list()));
    check_keys(kv.second, "a tolerance", {"atol", "rtol"});
    Tolerance tol{0.0, 0.0};
    if (kv.second["atol"]) tol.atol = as_number(kv.second["atol"], "atol");
    if (kv.second["rtol"]) tol.rtol = as_number(kv.second["rtol"], "rtol");
    if (tol.atol < 0 || tol.rtol < 0) fail(kv.second, "tolerances must be non-negative");
    table[*dt] = tol;
  }
  return table;
}

AttrType parse_attr_type(const YAML::Node& n) {
  static const std::pair<const char*, AttrType> types[] = {
      {"int", AttrType::int_},         {"float", AttrType::float_},         {"bool", AttrType::bool_},
      {"string", AttrType::string},    {"int_list", AttrType::int_list},    {"float_list", AttrType::float_list},
      {"list[int]", AttrType::int_list}, {"list[float]", AttrType::float_list}};
  std::string s = as_string(n, "type");
  for (const auto& [k, v] : types)
    if (s == k) return v;
  fail(n, fmt::format("unknown attribute type '{}'; expected int, float, bool, string, int_list or float_list", s));
}

// A literal attribute value of a declared type (defaults; no parameter references).
AttrValue literal_attr(const YAML::Node& n, AttrType type, const std::string& name) {
  auto scalar_of = [&](const YAML::Node& s, bool want_int) -> double {
    double v = as_number(s, name.c_str());
    if (want_int && !fits_int64(v)) fail(s, fmt::format("{}: expected an integer", name));
    return v;
  };
  switch (type) {
    case AttrType::int_: return static_cast<int64_t>(scalar_of(n, true));
    case AttrType::float_: return scalar_of(n, false);
    case AttrType::bool_: {
      Scalar s = n.IsScalar() ? to_scalar(n) : Scalar{std::string()};
      if (auto* b = std::get_if<bool>(&s)) return *b;
      fail(n, fmt::format("{}: expected true or false", name));
    }
    case AttrType::string: return as_string(n, name.c_str());
    case AttrType::int_list:
    case AttrType::float_list: {
      if (!n.IsSequence()) fail(n, fmt::format("{}: expected a list", name));
      if (type == AttrType::int_list) {
        std::vector<int64_t> v;
        for (const auto& e : n) v.push_back(static_cast<int64_t>(scalar_of(e, true)));
        return v;
      }
      std::vector<double> v;
      for (const auto& e : n) v.push_back(scalar_of(e, false));
      return v;
    }
  }
  fail(n, "bad attribute");
}

RawAttr raw_attr(const YAML::Node& n) {
  RawAttr r;
  r.line = line_of(n);
  if (n.IsSequence()) {
    r.is_list = true;
    for (const auto& e : n) {
      if (!e.IsScalar()) fail(e, "attribute list elements must be scalars");
      r.items.push_back(to_scalar(e));
    }
  } else if (n.IsScalar()) {
    r.items.push_back(to_scalar(n));
  } else {
    fail(n, "attribute value: expected a scalar or a list of scalars");
  }
  return r;
}

CaseSpec parse_case(const YAML::Node& n, CaseKind kind, size_t index, const Manifest& m) {
  check_keys(n, "a test case",
             {"name", "params", "inputs", "outputs", "attributes", "tolerances", "flops", "bytes", "description", "devices", "variants"});
  CaseSpec c;
  c.kind = kind;
  c.line = line_of(n);
  c.name = n["name"] ? identifier(n["name"], "case name") : fmt::format("case{}", index);
  if (n["params"]) {
    const YAML::Node& p = n["params"];
    if (!p.IsMap()) fail(p, "params: expected a mapping of parameter name to a list of values");
    for (const auto& kv : p) {
      std::string pname = identifier(kv.first, "parameter name");
      std::vector<Scalar> values;
      if (kv.second.IsSequence()) {
        if (kv.second.size() == 0) fail(kv.second, fmt::format("parameter '{}': expected at least one value", pname));
        for (const auto& v : kv.second) {
          if (!v.IsScalar()) fail(v, fmt::format("parameter '{}': values must be scalars", pname));
          values.push_back(to_scalar(v));
        }
      } else if (kv.second.IsScalar()) {
        values.push_back(to_scalar(kv.second));
      } else {
        fail(kv.second, fmt::format("parameter '{}': expected a value or a list of values", pname));
      }
      c.params.emplace_back(pname, std::move(values));
    }
  }
  if (n["inputs"]) {
    const YAML::Node& in = n["inputs"];
    if (!in.IsMap()) fail(in, "inputs: expected a mapping of input name to {shape, dtype, init}");
    for (const auto& kv : in) {
      std::string iname = kv.first.as<std::string>();
      if (m.input_index(iname) < 0) {
        std::vector<std::string> names;
        for (const auto& i : m.inputs) names.push_back(i.name);
        fail(kv.first, fmt::format("case input '{}' is not declared; the op's inputs are: {}", iname, fmt::join(names, ", ")));
      }
      c.inputs[iname] = parse_tensor_spec(kv.second, "a case input", false);
    }
  }
  if (n["outputs"]) {  // a case's own output shapes and dtypes (outputs that follow no input)
    const YAML::Node& out = n["outputs"];
    if (!out.IsMap()) fail(out, "outputs: expected a mapping of output name to {shape, dtype}");
    for (const auto& kv : out) {
      std::string oname = kv.first.as<std::string>();
      auto o = std::find_if(m.outputs.begin(), m.outputs.end(), [&](const OutputSpec& s) { return s.name == oname; });
      if (o == m.outputs.end()) {
        std::vector<std::string> names;
        for (const auto& s : m.outputs) names.push_back(s.name);
        fail(kv.first, fmt::format("case output '{}' is not declared; the op's outputs are: {}", oname, fmt::join(names, ", ")));
      }
      if (o->inplace) fail(kv.first, fmt::format("output '{}' is in place: it takes its input's shape and dtype", oname));
      check_keys(kv.second, "a case output", {"shape", "dtype"});
      c.outputs[oname] = parse_tensor_spec(kv.second, "a case output", false);
    }
  }
  if (n["attributes"]) {
    const YAML::Node& at = n["attributes"];
    if (!at.IsMap()) fail(at, "attributes: expected a mapping of attribute name to value");
    for (const auto& kv : at) {
      std::string aname = kv.first.as<std::string>();
      bool declared = std::any_of(m.attributes.begin(), m.attributes.end(), [&](const AttrSpec& a) { return a.name == aname; });
      if (!declared) fail(kv.first, fmt::format("attribute '{}' is not declared under the op's attributes", aname));
      c.attrs.emplace_back(aname, raw_attr(kv.second));
    }
  }
  if (n["tolerances"]) c.tolerances = parse_tolerances(n["tolerances"]);
  if (n["variants"]) c.variants = parse_variants(n["variants"]);
  if (n["flops"]) c.flops = sourced(n["flops"], "flops");
  if (n["bytes"]) c.bytes = sourced(n["bytes"], "bytes");
  if (n["devices"]) {
    // Only implementations on these devices run the case (sizes meant for a GPU, say).
    const YAML::Node& d = n["devices"];
    if (!d.IsSequence() || d.size() == 0) fail(d, fmt::format("devices: expected a list of some of the op's devices ({})", fmt::join(m.devices, ", ")));
    for (const auto& v : d) {
      if (!v.IsScalar()) fail(v, "devices: expected device names");
      const std::string dev = v.as<std::string>();
      if (std::find(m.devices.begin(), m.devices.end(), dev) == m.devices.end())
        fail(v, fmt::format("case device '{}' is not among the op's devices ({})", dev, fmt::join(m.devices, ", ")));
      c.devices.push_back(dev);
    }
  }
  return c;
}

// The op's name, description, seed, devices, baseline and reference.
void parse_header(const YAML::Node& root, const std::string& expected_op, Manifest& m) {
  m.op = expected_op;
  if (root["op"]) {
    m.op = identifier(root["op"], "op");
    if (!expected_op.empty() && m.op != expected_op)
      fail(root["op"], fmt::format("op is '{}' but the folder is '{}'; expected them to match", m.op, expected_op));
  }
  if (m.op.empty()) fail(root, "expected 'op: NAME'");
  if (root["description"]) m.description = as_string(root["description"], "description");
  if (root["seed"]) {
    double s = as_number(root["seed"], "seed");
    if (s < 0 || !fits_int64(s)) fail(root["seed"], "seed: expected a non-negative integer (below 2^63)");
    m.seed = static_cast<uint64_t>(s);
  }
  if (root["devices"]) {
    const YAML::Node& d = root["devices"];
    m.devices.clear();
    auto add = [&](const YAML::Node& e) {
      std::string dev = as_string(e, "device");
      if (!is_device_kind(dev)) fail(e, fmt::format("unknown device '{}'; expected {}", dev, device_kind_choices()));
      m.devices.push_back(dev);
    };
    if (d.IsSequence()) for (const auto& e : d) add(e);
    else add(d);
    if (m.devices.empty()) fail(d, "devices: expected at least one of cpu, cuda, hip");
  }
  if (const auto& b = root["baseline"]) {
    m.baseline_line = line_of(b);
    if (b.IsMap()) {
      for (const auto& kv : b) {
        const std::string dev = as_string(kv.first, "baseline device");
        if (std::find(m.devices.begin(), m.devices.end(), dev) == m.devices.end())
          fail(kv.first, fmt::format("baseline for device '{}', which is not among the op's devices ({})", dev, fmt::join(m.devices, ", ")));
        m.baselines.emplace_back(dev, as_string(kv.second, "baseline"));
      }
      if (m.baselines.empty()) fail(b, "baseline: expected a name, or a map of device to name ({cuda: myop_cuda_naive})");
    } else {
      m.baseline = as_string(b, "baseline");
    }
  }

  if (const auto& r = root["reference"]) {
    m.reference_line = line_of(r);
    m.reference = as_string(r, "reference");
    if (m.reference.empty() || m.reference.find_first_of("/\\") != std::string::npos || m.reference == "." || m.reference == "..")
      fail(r, fmt::format("reference: '{}' is not a file name; expected the file name or stem of a library in the op's folder "
                          "(myop_reference.so or myop_reference)", m.reference));
  }
}

// implementations: what the manifest declares of some of them (preconditions, dtypes).
void parse_implementations(const YAML::Node& root, Manifest& m) {
  if (const auto& im = root["implementations"]) {
    if (!im.IsMap()) fail(im, "implementations: expected a map of implementation name to {preconditions: [...], dtypes: [...]}");
    for (const auto& kv : im) {
      ImplDeclaration d;
      d.line = line_of(kv.first);
      d.name = as_string(kv.first, "implementation name");
      const YAML::Node& body = kv.second;
      if (!body.IsMap()) fail(body, fmt::format("implementations: {}: expected {{preconditions: [...], dtypes: [...]}}", d.name));
      check_keys(body, "an implementation's declaration", {"preconditions", "dtypes"});
      auto list = [&](const YAML::Node& n, const char* what, auto add) {
        if (!n) return;
        if (n.IsScalar()) return add(n);
        if (!n.IsSequence()) fail(n, fmt::format("implementations: {}: {}: expected a list", d.name, what));
        for (const auto& e : n) add(e);
      };
      list(body["preconditions"], "preconditions", [&](const YAML::Node& e) {
        d.preconditions.push_back({as_string(e, "precondition"), line_of(e)});
      });
      list(body["dtypes"], "dtypes", [&](const YAML::Node& e) {
        std::string t = as_string(e, "dtype");
        const auto colon = t.find(':');
        if (!parse_dtype(colon == std::string::npos ? t : t.substr(colon + 1)))
          fail(e, fmt::format("implementations: {}: unknown dtype '{}'; expected one of: {} (or TENSOR:DTYPE)", d.name, t, dtype_names_list()));
        d.dtypes.push_back(std::move(t));
      });
      m.implementations.push_back(std::move(d));
    }
  }
}

// inputs, then attributes: each name once, among inputs, attributes and outputs (`names`).
void parse_inputs(const YAML::Node& root, std::set<std::string>& names, Manifest& m) {
  if (!root["inputs"] || !root["inputs"].IsSequence() || root["inputs"].size() == 0)
    fail(root["inputs"] ? root["inputs"] : root, "expected 'inputs:' with a list of at least one tensor ({name: x, ...})");
  for (const auto& n : root["inputs"]) {
    InputSpec in;
    in.line = line_of(n);
    if (n.IsScalar()) {
      in.name = identifier(n, "input name");
    } else {
      if (!n.IsMap() || !n["name"]) fail(n, "an input: expected {name: NAME, shape: [...], dtype: ..., init: ...}");
      in.name = identifier(n["name"], "input name");
      in.defaults = parse_tensor_spec(n, "an input", true);
    }
    if (!names.insert(in.name).second) fail(n, fmt::format("input '{}' is declared twice", in.name));
    m.inputs.push_back(std::move(in));
  }
}

void parse_attributes(const YAML::Node& root, std::set<std::string>& names, Manifest& m) {
  if (root["attributes"]) {
    const YAML::Node& at = root["attributes"];
    if (!at.IsSequence()) fail(at, "attributes: expected a list of {name, type, default}");
    for (const auto& n : at) {
      check_keys(n, "an attribute", {"name", "type", "default", "description"});
      AttrSpec a;
      a.line = line_of(n);
      if (!n["name"]) fail(n, "an attribute: expected 'name'");
      a.name = identifier(n["name"], "attribute name");
      if (!n["type"]) fail(n, fmt::format("attribute '{}': expected 'type' (int, float, bool, string, int_list, float_list)", a.name));
      a.type = parse_attr_type(n["type"]);
      if (n["default"]) a.default_value = literal_attr(n["default"], a.type, a.name);
      if (!names.insert(a.name).second) fail(n, fmt::format("name '{}' is declared twice", a.name));
      m.attributes.push_back(std::move(a));
    }
  }
}

// An output: its name, its own tolerance, and its shape and dtype (an input's, in place or like one,
// or its own).
OutputSpec parse_output(const YAML::Node& n, std::set<std::string>& names, const Manifest& m) {
  check_keys(n, "an output", {"name", "shape", "dtype", "inplace", "description", "tolerance", "tolerances"});
  OutputSpec o;
  o.line = line_of(n);
  // Its own tolerance: {atol, rtol} for any dtype, or a table per dtype as the op's.
  if (const auto& t = n["tolerance"]) {
    check_keys(t, "an output's tolerance", {"atol", "rtol"});
    Tolerance tol{0.0, 0.0};
    if (t["atol"]) tol.atol = as_number(t["atol"], "atol");
    if (t["rtol"]) tol.rtol = as_number(t["rtol"], "rtol");
    if (tol.atol < 0 || tol.rtol < 0) fail(t, "tolerances must be non-negative");
    o.tolerance = tol;
  }
  if (n["tolerances"]) o.tolerances = parse_tolerances(n["tolerances"]);
  if (!n["name"]) fail(n, "an output: expected 'name'");
  o.name = identifier(n["name"], "output name");
  if (!names.insert(o.name).second) fail(n, fmt::format("name '{}' is declared twice", o.name));
  if (n["inplace"]) {
    std::string target = as_string(n["inplace"], "inplace");
    if (m.input_index(target) < 0) fail(n["inplace"], fmt::format("inplace: '{}' is not an input", target));
    o.inplace = target;
    if (n["shape"] || n["dtype"]) fail(n, "an in-place output takes its input's shape and dtype; remove shape/dtype");
    o.shape_like = target;
    o.dtype = Sourced{target, o.line};
  } else {
    if (!n["shape"]) fail(n, fmt::format("output '{}': expected 'shape' (an input name, or a list like [x.0, w.1])", o.name));
    const YAML::Node& s = n["shape"];
    if (s.IsScalar()) {
      std::string like = s.Scalar();
      if (m.input_index(like) < 0) fail(s, fmt::format("output '{}': shape '{}' is not an input; expected an input name or a list", o.name, like));
      o.shape_like = like;
    } else {
      o.shape = shape_list(s, "output shape");
    }
    if (n["dtype"]) {
      o.dtype = sourced(n["dtype"], "output dtype");
    } else if (o.shape_like) {
      o.dtype = Sourced{*o.shape_like, o.line};
    } else {
      o.dtype = Sourced{m.inputs[0].name, o.line};
    }
  }
  return o;
}

// tests: correctness and performance cases, each name once per kind.
void parse_tests(const YAML::Node& root, Manifest& m) {
  if (!root["tests"]) fail(root, "expected 'tests:' with 'correctness:' and/or 'performance:' lists of cases");
  const YAML::Node& tests = root["tests"];
  check_keys(tests, "tests", {"correctness", "performance"});
  for (CaseKind kind : {CaseKind::correctness, CaseKind::performance}) {
    const YAML::Node& list = tests[case_kind_name(kind)];
    if (!list) continue;
    if (!list.IsSequence()) fail(list, fmt::format("tests.{}: expected a list of cases", case_kind_name(kind)));
    std::set<std::string> case_names;
    size_t i = 0;
    for (const auto& n : list) {
      CaseSpec c = parse_case(n, kind, i++, m);
      if (!case_names.insert(c.name).second) fail(n, fmt::format("case name '{}' is used twice in tests.{}", c.name, case_kind_name(kind)));
      m.cases.push_back(std::move(c));
    }
  }
  if (m.cases.empty()) fail(tests, "tests: expected at least one case");
}

// `backward:` after the inputs and outputs it names.
void parse_backward(const YAML::Node& n, Manifest& m) {
  check_keys(n, "backward", {"differentiable", "tolerances", "modes"});
  BackwardSpec b;
  b.line = line_of(n);
  const YAML::Node& d = n["differentiable"];
  if (!d || !d.IsSequence() || d.size() == 0) fail(d ? d : n, "backward: expected 'differentiable:' with a list of at least one input");
  std::set<std::string> seen;
  for (const auto& e : d) {
    const std::string name = as_string(e, "backward: differentiable");
    if (m.input_index(name) < 0) fail(e, fmt::format("backward: differentiable: '{}' is not an input", name));
    if (!seen.insert(name).second) fail(e, fmt::format("backward: differentiable: '{}' is listed twice", name));
  }
  for (const auto& in : m.inputs)  // the manifest's order: the gradients' order in the backward's call
    if (seen.count(in.name)) b.differentiable.push_back(in.name);
  std::set<std::string> names;
  for (const auto& in : m.inputs) {
    names.insert(in.name);
    // A backward's call has its forward's inputs, then the gradients grad_<output>: no input may look like one.
    if (in.name.rfind("grad_", 0) == 0) fail(n, fmt::format("backward: input '{}' begins with grad_, the backward's gradients' prefix; rename it", in.name));
  }
  for (const auto& a : m.attributes) names.insert(a.name);
  for (const auto& o : m.outputs) {
    names.insert(o.name);
    if (o.inplace) fail(n, fmt::format("backward: output '{}' is written in place; an op with an in-place output has no backward here", o.name));
  }
  // The backward's own tensors are grad_<output> and grad_<input>: no declared name may be one.
  for (const auto& o : m.outputs)
    if (names.count("grad_" + o.name)) fail(n, fmt::format("backward: 'grad_{}' (the gradient of output '{}') is a declared name already", o.name, o.name));
  for (const auto& x : b.differentiable)
    if (names.count("grad_" + x)) fail(n, fmt::format("backward: 'grad_{}' (the gradient of input '{}') is a declared name already", x, x));
  if (n["tolerances"]) b.tolerances = parse_tolerances(n["tolerances"]);
  if (const YAML::Node& modes = n["modes"]) {
    std::string text;
    if (modes.IsSequence())
      for (const auto& e : modes) text += (text.empty() ? "" : ",") + as_string(e, "backward: modes");
    else
      text = as_string(modes, "backward: modes");
    auto parsed = parse_modes(text);
    if (!parsed) fail(modes, "backward: modes: " + parsed.error().message);
    b.modes = std::move(*parsed);
  }
  m.backward = std::move(b);
}

Manifest parse(const YAML::Node& root, const std::filesystem::path& file, const std::string& expected_op) {
  Manifest m;
  m.path = file;
  if (!root.IsMap()) fail(root, "expected a mapping at the top level (op, inputs, outputs, tests, ...)");
  check_keys(root, "the manifest",
             {"op", "description", "seed", "devices", "baseline", "reference", "inputs", "attributes", "outputs", "tolerances",
              "flops", "bytes", "tests", "implementations", "backward"});
  parse_header(root, expected_op, m);
  parse_implementations(root, m);
  std::set<std::string> names;
  parse_inputs(root, names, m);
  parse_attributes(root, names, m);
  if (!root["outputs"] || !root["outputs"].IsSequence() || root["outputs"].size() == 0)
    fail(root["outputs"] ? root["outputs"] : root, "expected 'outputs:' with a list of at least one tensor");
  for (const auto& n : root["outputs"]) m.outputs.push_back(parse_output(n, names, m));
  if (root["tolerances"]) m.tolerances = parse_tolerances(root["tolerances"]);
  if (root["flops"]) m.flops = sourced(root["flops"], "flops");
  if (root["bytes"]) m.bytes = sourced(root["bytes"], "bytes");
  if (root["backward"]) parse_backward(root["backward"], m);
  parse_tests(root, m);
  return m;
}

}  // namespace

Expected<Manifest> load_manifest(const std::filesystem::path& file, const std::string& expected_op) {
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int err = errno;  // what open(2) said
    return make_error(fmt::format("{}: cannot read the manifest{}", file.string(), err ? ": " + std::generic_category().message(err) : ""));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str(), file, expected_op);
}

Expected<Manifest> parse_manifest(const std::string& text, const std::filesystem::path& file, const std::string& expected_op) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return make_error(fmt::format("{}:{}:{}: invalid YAML: {}", file.string(), e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  try {
    return parse(root, file, expected_op);
  } catch (const ManifestError& e) {
    return make_error(fmt::format("{}:{}: {}", file.string(), e.line, e.what));
  } catch (const YAML::Exception& e) {
    return make_error(fmt::format("{}:{}: {}", file.string(), e.mark.line + 1, e.msg));
  } catch (const std::exception& e) {  // what yaml-cpp or a conversion throws besides (never a crash)
    return make_error(fmt::format("{}: unreadable manifest: {}", file.string(), e.what()));
  }
}

}  // namespace bb
