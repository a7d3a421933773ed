#include "protocol/case_json.hpp"

#include <cmath>
#include <limits>

namespace bb {

namespace {

using nlohmann::json;

json number(double v) {
  if (std::isfinite(v)) return v;
  return {{"nonfinite", std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"}};
}
double number_from(const json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.at("nonfinite").get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  throw json::other_error::create(501, "not a number: " + s, &j);
}

// A variant as [its alternative's index, its value]: a string is never read as a number.
json scalar(const Scalar& s) {
  const json v = std::visit([](const auto& x) -> json {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, double>) return number(x);
    else return x;
  }, s);
  return json::array({s.index(), v});
}
Scalar scalar_from(const json& j) {
  const auto& v = j.at(1);
  switch (j.at(0).get<int>()) {
    case 0: return v.get<int64_t>();
    case 1: return number_from(v);
    case 2: return v.get<bool>();
    case 3: return v.get<std::string>();
  }
  throw json::other_error::create(501, "not a scalar's kind", &j);
}
json attr(const AttrValue& a) {
  json v;
  if (const auto* d = std::get_if<double>(&a)) v = number(*d);
  else if (const auto* ds = std::get_if<std::vector<double>>(&a)) {
    v = json::array();
    for (double x : *ds) v.push_back(number(x));
  } else std::visit([&](const auto& x) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(x)>, double> && !std::is_same_v<std::decay_t<decltype(x)>, std::vector<double>>) v = x;
    }, a);
  return json::array({a.index(), v});
}
AttrValue attr_from(const json& j) {
  const auto& v = j.at(1);
  const int kind = j.at(0).get<int>();
  if (kind >= 0 && kind < 4) return std::visit([](auto x) -> AttrValue { return x; }, scalar_from(j));  // Scalar's kinds, in AttrValue's order
  switch (kind) {
    case 4: return v.get<std::vector<int64_t>>();
    case 5: {
      std::vector<double> out;
      for (const auto& x : v) out.push_back(number_from(x));
      return out;
    }
  }
  throw json::other_error::create(501, "not an attribute's kind", &j);
}

DType dtype_from(const json& j) {
  const auto d = parse_dtype(j.get<std::string>());
  if (!d) throw json::other_error::create(501, "not a dtype: " + j.get<std::string>(), &j);
  return *d;
}
std::vector<int64_t> shape_from(const json& j) {
  auto shape = j.get<std::vector<int64_t>>();
  for (int64_t d : shape)
    if (d < 0) throw json::other_error::create(501, "a negative dimension", &j);
  return shape;
}
template <typename Enum>
Enum enum_from(const json& j, Enum last) {
  const int v = j.get<int>();
  if (v < 0 || v > static_cast<int>(last)) throw json::other_error::create(501, "out of range", &j);
  return static_cast<Enum>(v);
}

json init(const InitSpec& s) {
  return {{"kind", static_cast<int>(s.kind)}, {"a", number(s.a)}, {"b", number(s.b)}, {"path", s.path}, {"line", s.line},
          {"a_expr", s.a_expr}, {"b_expr", s.b_expr}, {"twist", s.twist}, {"twist_log2", s.twist_log2}};
}
InitSpec init_from(const json& j) {
  InitSpec s;
  s.kind = enum_from(j.at("kind"), InitKind::npy);
  s.a = number_from(j.at("a"));
  s.b = number_from(j.at("b"));
  s.path = j.at("path").get<std::string>();
  s.line = j.at("line").get<int>();
  s.a_expr = j.at("a_expr").get<std::string>();
  s.b_expr = j.at("b_expr").get<std::string>();
  s.twist = j.at("twist").get<uint32_t>();
  s.twist_log2 = j.at("twist_log2").get<int32_t>();
  return s;
}

json input(const ConcreteTensor& t) {
  return {{"name", t.name}, {"shape", t.shape}, {"dtype", dtype_name(t.dtype)}, {"init", init(t.init)}, {"variants", t.variants}};
}
ConcreteTensor input_from(const json& j) {
  ConcreteTensor t;
  t.name = j.at("name").get<std::string>();
  t.shape = shape_from(j.at("shape"));
  t.dtype = dtype_from(j.at("dtype"));
  t.init = init_from(j.at("init"));
  t.variants = j.at("variants").get<uint32_t>();
  return t;
}

json output(const ConcreteOutput& o) {
  return {{"name", o.name}, {"shape", o.shape}, {"dtype", dtype_name(o.dtype)}, {"inplace_input", o.inplace_input},
          {"atol", number(o.tolerance.atol)}, {"rtol", number(o.tolerance.rtol)}, {"scale_atol", o.tolerance.scale_atol}};
}
ConcreteOutput output_from(const json& j, std::size_t inputs) {
  ConcreteOutput o;
  o.name = j.at("name").get<std::string>();
  o.shape = shape_from(j.at("shape"));
  o.dtype = dtype_from(j.at("dtype"));
  o.inplace_input = j.at("inplace_input").get<int>();
  if (o.inplace_input < -1 || o.inplace_input >= static_cast<int>(inputs)) throw json::other_error::create(501, "no such input to alias", &j);
  o.tolerance.atol = number_from(j.at("atol"));
  o.tolerance.rtol = number_from(j.at("rtol"));
  o.tolerance.scale_atol = j.at("scale_atol").get<bool>();
  return o;
}

json optional_number(const std::optional<double>& v) { return v ? number(*v) : json(); }
std::optional<double> optional_number_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  return number_from(j);
}

}  // namespace

json to_json(const ConcreteCase& c) {
  json j = {{"index", c.index}, {"id", c.id}, {"name", c.name}, {"variant", c.variant}, {"kind", static_cast<int>(c.kind)},
            {"mode", mode_name(c.mode)}, {"flops", optional_number(c.flops)}, {"bytes", optional_number(c.bytes)}, {"seed", c.seed}, {"devices", c.devices}};
  j["params"] = json::array();
  for (const auto& [name, v] : c.params) j["params"].push_back({name, scalar(v)});
  j["inputs"] = json::array();
  for (const auto& t : c.inputs) j["inputs"].push_back(input(t));
  j["outputs"] = json::array();
  for (const auto& o : c.outputs) j["outputs"].push_back(output(o));
  j["attrs"] = json::array();
  for (const auto& [name, v] : c.attrs) j["attrs"].push_back({name, attr(v)});
  return j;
}

ConcreteCase case_from_json(const json& j) {
  ConcreteCase c;
  c.index = j.at("index").get<int>();
  c.id = j.at("id").get<std::string>();
  c.name = j.at("name").get<std::string>();
  c.variant = j.at("variant").get<std::string>();
  c.kind = enum_from(j.at("kind"), CaseKind::performance);
  const auto mode = mode_named(j.at("mode").get<std::string>());
  if (!mode) throw json::other_error::create(501, "the case's mode is none of fwd, bwd", &j);
  c.mode = *mode;
  c.flops = optional_number_from(j.at("flops"));
  c.bytes = optional_number_from(j.at("bytes"));
  c.seed = j.at("seed").get<uint64_t>();
  c.devices = j.at("devices").get<std::vector<std::string>>();
  for (const auto& p : j.at("params")) c.params.emplace_back(p.at(0).get<std::string>(), scalar_from(p.at(1)));
  for (const auto& t : j.at("inputs")) c.inputs.push_back(input_from(t));
  for (const auto& o : j.at("outputs")) c.outputs.push_back(output_from(o, c.inputs.size()));
  for (const auto& a : j.at("attrs")) c.attrs.emplace_back(a.at(0).get<std::string>(), attr_from(a.at(1)));
  return c;
}

}  // namespace bb
