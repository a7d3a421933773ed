#include "plan/cases.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/did_you_mean.hpp"
#include "plan/expr.hpp"
#include "plan/value_variants.hpp"
#include "run/tolerance.hpp"

namespace bb {

int64_t ConcreteTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}
int64_t ConcreteOutput::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ConcreteCase::shapes() const {
  std::string out;
  for (const auto& t : inputs)
    out += fmt::format("{}{}: {} {}", out.empty() ? "" : ", ", t.name, t.shape.empty() ? std::string("[]") : fmt::format("{}", fmt::join(t.shape, "x")),
                       dtype_name(t.dtype));
  return out;
}

std::vector<DType> ConcreteCase::dtypes() const {
  std::vector<DType> out;
  auto add = [&](DType t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  for (const auto& t : inputs) add(t.dtype);
  for (const auto& o : outputs) add(o.dtype);
  return out;
}

uint64_t mix_seed(uint64_t seed, std::string_view salt) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : salt) {
    h ^= c;
    h *= 1099511628211ull;
  }
  uint64_t z = seed + 0x9e3779b97f4a7c15ull + h;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

// Names visible to a case's expressions: its parameters and the tensors resolved so far.
class CaseEnv : public ExprEnv {
 public:
  explicit CaseEnv(const std::vector<std::pair<std::string, Scalar>>& params) : params_(params) {}

  void add_tensor(const std::string& name, const std::vector<int64_t>& shape, DType dtype) {
    tensors_.push_back({name, shape, dtype});
  }

  const Scalar* param(std::string_view name) const {
    for (const auto& [k, v] : params_)
      if (k == name) return &v;
    return nullptr;
  }

  std::optional<double> variable(std::string_view name) const override {
    if (const Scalar* s = param(name)) {
      if (auto* i = std::get_if<int64_t>(s)) return static_cast<double>(*i);
      if (auto* d = std::get_if<double>(s)) return *d;
      if (auto* b = std::get_if<bool>(s)) return *b ? 1.0 : 0.0;
      return std::nullopt;
    }
    size_t dot = name.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const Tensor* t = tensor(name.substr(0, dot));
    if (!t) return std::nullopt;
    std::string idx(name.substr(dot + 1));
    char* end = nullptr;
    long d = std::strtol(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0') return std::nullopt;
    long rank = static_cast<long>(t->shape.size());
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return std::nullopt;
    return static_cast<double>(t->shape[static_cast<size_t>(d)]);
  }

  std::optional<double> tensor_function(std::string_view fn, std::string_view arg) const override {
    if (const Tensor* t = tensor(arg)) {
      if (fn == "sizeof") return static_cast<double>(dtype_size(t->dtype));
      int64_t n = 1;
      for (int64_t d : t->shape) n *= d;
      return static_cast<double>(n);
    }
    if (fn != "sizeof") return std::nullopt;
    if (auto dt = resolve_dtype_name(arg)) return static_cast<double>(dtype_size(*dt));
    return std::nullopt;
  }

  std::optional<DType> tensor_dtype(std::string_view name) const {
    if (const Tensor* t = tensor(name)) return t->dtype;
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> tensor_shape(std::string_view name) const {
    if (const Tensor* t = tensor(name)) return t->shape;
    return std::nullopt;
  }

  // A dtype name, or a parameter whose value is one.
  std::optional<DType> resolve_dtype_name(std::string_view text) const {
    if (const Scalar* s = param(text))
      if (auto* str = std::get_if<std::string>(s)) return parse_dtype(*str);
    return parse_dtype(text);
  }

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    DType dtype;
  };
  const Tensor* tensor(std::string_view name) const {
    for (const auto& t : tensors_)
      if (t.name == name) return &t;
    return nullptr;
  }
  const std::vector<std::pair<std::string, Scalar>>& params_;
  std::vector<Tensor> tensors_;
};

Expected<std::vector<int64_t>> eval_shape(const Manifest& m, const std::vector<Sourced>& dims, const CaseEnv& env,
                                          const std::string& what) {
  std::vector<int64_t> shape;
  for (const auto& d : dims) {
    auto v = evaluate_dimension(d.text, env);
    if (!v) return make_error(fmt::format("{}: {}: {}", m.where(d.line), what, v.error().message));
    shape.push_back(*v);
  }
  return shape;
}

Expected<AttrValue> resolve_attr(const Manifest& m, const AttrSpec& spec, const RawAttr& raw, const CaseEnv& env) {
  auto where = m.where(raw.line);
  auto number = [&](const Scalar& s, bool integral) -> Expected<double> {
    double v = 0;
    if (auto* i = std::get_if<int64_t>(&s)) v = static_cast<double>(*i);
    else if (auto* d = std::get_if<double>(&s)) v = *d;
    else if (auto* b = std::get_if<bool>(&s)) return make_error(fmt::format("{}: attribute '{}': expected a number, got {}", where, spec.name, *b));
    else {
      auto e = evaluate(std::get<std::string>(s), env);
      if (!e) return make_error(fmt::format("{}: attribute '{}': {}", where, spec.name, e.error().message));
      v = *e;
    }
    if (integral && !fits_int64(v)) return make_error(fmt::format("{}: attribute '{}': expected an integer, got {}", where, spec.name, v));
    return v;
  };
  const bool list_type = spec.type == AttrType::int_list || spec.type == AttrType::float_list;
  if (list_type != raw.is_list)
    return make_error(fmt::format("{}: attribute '{}' is of type {}; expected {}", where, spec.name, attr_type_name(spec.type),
                                  list_type ? "a list" : "a single value"));
  switch (spec.type) {
    case AttrType::int_: {
      auto v = number(raw.items[0], true);
      if (!v) return v.error();
      return AttrValue{static_cast<int64_t>(*v)};
    }
    case AttrType::float_: {
      auto v = number(raw.items[0], false);
      if (!v) return v.error();
      return AttrValue{*v};
    }
    case AttrType::bool_: {
      const Scalar* s = &raw.items[0];
      if (auto* str = std::get_if<std::string>(s))
        if (const Scalar* p = env.param(*str)) s = p;
      if (auto* b = std::get_if<bool>(s)) return AttrValue{*b};
      return make_error(fmt::format("{}: attribute '{}': expected true, false or a bool parameter", where, spec.name));
    }
    case AttrType::string: {
      const Scalar* s = &raw.items[0];
      if (auto* str = std::get_if<std::string>(s))
        if (const Scalar* p = env.param(*str)) s = p;
      return AttrValue{scalar_to_string(*s)};
    }
    case AttrType::int_list: {
      std::vector<int64_t> out;
      for (const auto& s : raw.items) {
        auto v = number(s, true);
        if (!v) return v.error();
        out.push_back(static_cast<int64_t>(*v));
      }
      return AttrValue{out};
    }
    case AttrType::float_list: {
      std::vector<double> out;
      for (const auto& s : raw.items) {
        auto v = number(s, false);
        if (!v) return v.error();
        out.push_back(*v);
      }
      return AttrValue{out};
    }
  }
  return make_error("unreachable");
}

InitSpec default_init(DType t) {
  InitSpec s;
  if (t == DType::bool_) s = {InitKind::randint, 0, 2, {}, 0, {}, {}};
  else if (t == DType::uint8) s = {InitKind::randint, 0, 256, {}, 0, {}, {}};
  else if (!is_floating(t)) s = {InitKind::randint, -100, 100, {}, 0, {}, {}};
  return s;
}

// An initialiser's bounds that are expressions, evaluated for this case (its parameters and the
// inputs before this one), then checked as the manifest checks literal ones.
Status resolve_bounds(const Manifest& m, InitSpec& init, const CaseEnv& env, const std::string& input) {
  auto resolve = [&](std::string& expr, double& value) -> Status {
    if (expr.empty()) return Ok{};
    auto v = evaluate(expr, env);
    if (!v) return make_error(fmt::format("{}: the initialiser of input '{}': {}", m.where(init.line), input, v.error().message));
    if (!std::isfinite(*v))
      return make_error(fmt::format("{}: the initialiser of input '{}': '{}' is {}, expected a finite number", m.where(init.line), input, expr, *v));
    value = *v;
    expr.clear();
    return Ok{};
  };
  if (auto s = resolve(init.a_expr, init.a); !s) return s;
  if (auto s = resolve(init.b_expr, init.b); !s) return s;
  if ((init.kind == InitKind::uniform || init.kind == InitKind::randint) && !(init.a < init.b))
    return make_error(fmt::format("{}: the initialiser of input '{}': expected low < high, got [{}, {})", m.where(init.line), input,
                                  init.a, init.b));
  if (init.kind == InitKind::randn && init.b < 0)
    return make_error(fmt::format("{}: the initialiser of input '{}': std {} is negative", m.where(init.line), input, init.b));
  return Ok{};
}

// The value variants input `in` gets in a case of `spec`: its own `variants:` (the case's
// override, else the op's), else the default set where it is floating and drawn at random;
// then at most the case's `variants:`. A pinned variant an input cannot take is an error.
Expected<uint32_t> input_variants(const Manifest& m, const CaseSpec& spec, const InputSpec& in, const TensorSpec* over,
                                  const ConcreteTensor& t) {
  const TensorSpec* pinned = over && over->variants ? over : in.defaults.variants ? &in.defaults : nullptr;
  uint32_t set = 0;
  if (pinned) {
    set = *pinned->variants;
    if (set != 0 && t.init.kind == InitKind::npy)
      return make_error(fmt::format("{}: input '{}' is read from a file: it gets no value variants; expected variants: none",
                                    m.where(pinned->variants_line), in.name));
    if ((set & ~variant_bit(ValueVariant::zeros)) != 0 && !is_floating(t.dtype))
      return make_error(fmt::format("{}: input '{}' is {}: of the value variants it can take only zeros", m.where(pinned->variants_line),
                                    in.name, dtype_name(t.dtype)));
  } else if (is_floating(t.dtype) && (t.init.kind == InitKind::randn || t.init.kind == InitKind::uniform)) {
    set = default_variants();
  }
  if (spec.variants) set &= *spec.variants;
  return set;
}

// Why `text` (a tensor's dtype: a dtype's name or a parameter's) is no dtype here, for `what`
// ("input 'x'"): a parameter whose value is none names the parameter, its value, the case and
// the nearest dtype (a typo in a sweep's list is found where it was made).
std::string dtype_error(const Manifest& m, const Sourced& dtype, const CaseEnv& env, const CaseSpec& spec, const std::string& what,
                        const std::string& expected) {
  std::vector<std::string> names;
  for (DType t : all_dtypes()) names.push_back(dtype_name(t));
  if (const Scalar* p = env.param(dtype.text)) {
    const std::string value = scalar_to_string(*p);
    return fmt::format("{}: dtype of {}: parameter '{}' of case '{}' is '{}' here, no dtype{}; expected one of: {}", m.where(spec.line), what,
                       dtype.text, spec.name, value, did_you_mean(value, names), dtype_names_list());
  }
  return fmt::format("{}: dtype '{}' of {}{}: expected {}", m.where(dtype.line), dtype.text, what, did_you_mean(dtype.text, names), expected);
}

// One input of the case: the case's own shape, dtype and initialiser where it gives them, else
// the manifest's, evaluated in the case's parameters and the tensors before it.
Expected<ConcreteTensor> build_input(const Manifest& m, const CaseSpec& spec, const InputSpec& in, const CaseEnv& env) {
  const TensorSpec* over = nullptr;
  if (auto it = spec.inputs.find(in.name); it != spec.inputs.end()) over = &it->second;
  const auto& shape = over && over->shape ? over->shape : in.defaults.shape;
  const auto& dtype = over && over->dtype ? over->dtype : in.defaults.dtype;
  const auto& init = over && over->init ? over->init : in.defaults.init;
  if (!shape)
    return make_error(fmt::format("{}: case '{}' gives no shape for input '{}'; expected inputs: {{{}: {{shape: [...]}}}}",
                                  m.where(spec.line), spec.name, in.name, in.name));
  ConcreteTensor t;
  t.name = in.name;
  auto s = eval_shape(m, *shape, env, fmt::format("shape of input '{}'", in.name));
  if (!s) return s.error();
  t.shape = *s;
  if (dtype) {
    auto dt = env.resolve_dtype_name(dtype->text);
    if (!dt)
      return make_error(dtype_error(m, *dtype, env, spec, fmt::format("input '{}'", in.name),
                                    fmt::format("a dtype ({}) or a parameter holding one", dtype_names_list())));
    t.dtype = *dt;
  }
  t.init = init ? *init : default_init(t.dtype);
  if (t.init.kind == InitKind::npy && t.init.path.empty())
    return make_error(fmt::format("{}: npy initialiser needs a file", m.where(t.init.line)));
  if (auto v = input_variants(m, spec, in, over, t); !v) return v.error();
  else t.variants = *v;
  if (auto r = resolve_bounds(m, t.init, env, in.name); !r) return r.error();
  return t;
}

// One output: its shape (the case's, an input's, or the manifest's), dtype and tolerance.
Expected<ConcreteOutput> build_output(const Manifest& m, const CaseSpec& spec, const OutputSpec& out, const CaseEnv& env) {
  ConcreteOutput o;
  o.name = out.name;
  if (out.inplace) o.inplace_input = m.input_index(*out.inplace);
  const auto own = spec.outputs.find(out.name);
  const TensorSpec* over = own == spec.outputs.end() ? nullptr : &own->second;
  if (over && over->shape) {
    auto s = eval_shape(m, *over->shape, env, fmt::format("shape of output '{}'", out.name));
    if (!s) return s.error();
    o.shape = *s;
  } else if (out.shape_like) {
    o.shape = *env.tensor_shape(*out.shape_like);
  } else {
    auto s = eval_shape(m, out.shape, env, fmt::format("shape of output '{}'", out.name));
    if (!s) return s.error();
    o.shape = *s;
  }
  const Sourced& dtype = over && over->dtype ? *over->dtype : out.dtype;
  if (auto dt = env.tensor_dtype(dtype.text)) {
    o.dtype = *dt;
  } else if (auto named = env.resolve_dtype_name(dtype.text)) {
    o.dtype = *named;
  } else {
    return make_error(dtype_error(m, dtype, env, spec, fmt::format("output '{}'", out.name),
                                  "an input name, a dtype or a parameter holding one"));
  }
  o.tolerance = resolve_tolerance(o.dtype, out, m.tolerances, spec.tolerances);
  return o;
}

// The attributes: the case's values, else the manifest's defaults.
Status build_attributes(const Manifest& m, const CaseSpec& spec, const CaseEnv& env, ConcreteCase& c) {
  for (const auto& a : m.attributes) {
    auto it = std::find_if(spec.attrs.begin(), spec.attrs.end(), [&](const auto& kv) { return kv.first == a.name; });
    if (it != spec.attrs.end()) {
      auto v = resolve_attr(m, a, it->second, env);
      if (!v) return v.error();
      c.attrs.emplace_back(a.name, *v);
    } else if (a.default_value) {
      c.attrs.emplace_back(a.name, *a.default_value);
    } else {
      return make_error(fmt::format("{}: attribute '{}' has no default and case '{}' (line {}) gives no value",
                                    m.where(a.line), a.name, spec.name, spec.line));
    }
  }
  return Ok{};
}

// The work the roofline reads: the case's own flops and bytes, else the op's.
Status build_work(const Manifest& m, const CaseSpec& spec, const CaseEnv& env, ConcreteCase& c) {
  auto work = [&](const std::optional<Sourced>& own, const std::optional<Sourced>& op_level, const char* what)
      -> Expected<std::optional<double>> {
    const auto& src = own ? own : op_level;
    if (!src) return std::optional<double>{};
    auto v = evaluate(src->text, env);
    if (!v) return make_error(fmt::format("{}: {}: {}", m.where(src->line), what, v.error().message));
    return std::optional<double>{*v};
  };
  auto f = work(spec.flops, m.flops, "flops");
  if (!f) return f.error();
  c.flops = *f;
  auto b = work(spec.bytes, m.bytes, "bytes");
  if (!b) return b.error();
  c.bytes = *b;
  return Ok{};
}

Expected<ConcreteCase> build_case(const Manifest& m, const CaseSpec& spec, std::vector<std::pair<std::string, Scalar>> point) {
  ConcreteCase c;
  c.name = spec.name;
  c.kind = spec.kind;
  c.devices = spec.devices;
  c.params = std::move(point);
  c.id = fmt::format("{}/{}", case_kind_name(spec.kind), spec.name);
  if (!c.params.empty()) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : c.params) kv.push_back(k + "=" + scalar_to_string(v));
    c.id += fmt::format("[{}]", fmt::join(kv, ","));
  }
  c.seed = mix_seed(m.seed, c.id);
  CaseEnv env(c.params);
  for (const auto& in : m.inputs) {
    auto t = build_input(m, spec, in, env);
    if (!t) return t.error();
    env.add_tensor(t->name, t->shape, t->dtype);
    c.inputs.push_back(std::move(*t));
  }
  for (const auto& out : m.outputs) {
    auto o = build_output(m, spec, out, env);
    if (!o) return o.error();
    env.add_tensor(o->name, o->shape, o->dtype);
    c.outputs.push_back(std::move(*o));
  }
  if (auto s = build_attributes(m, spec, env, c); !s) return s.error();
  if (auto s = build_work(m, spec, env, c); !s) return s.error();
  return c;
}

}  // namespace

// Advances an odometer over the sweep's values, last parameter fastest; false when done.
static bool advance(std::vector<size_t>& idx, const std::vector<std::pair<std::string, std::vector<Scalar>>>& params) {
  for (size_t k = idx.size(); k-- > 0;) {
    if (++idx[k] < params[k].second.size()) return true;
    idx[k] = 0;
  }
  return false;
}

namespace {
// A value of the sweep's range for one parameter, drawn with `rng` (splitmix64 state).
Scalar draw(const std::vector<Scalar>& values, uint64_t& rng) {
  auto next = [&] {
    rng += 0x9e3779b97f4a7c15ull;
    uint64_t z = rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const bool ints = std::all_of(values.begin(), values.end(), [](const Scalar& v) { return std::holds_alternative<int64_t>(v); });
  const bool reals = std::all_of(values.begin(), values.end(),
                                 [](const Scalar& v) { return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v); });
  auto as_double = [](const Scalar& v) { return std::holds_alternative<double>(v) ? std::get<double>(v) : static_cast<double>(std::get<int64_t>(v)); };
  if (ints) {
    int64_t lo = std::get<int64_t>(values.front()), hi = lo;
    for (const auto& v : values) lo = std::min(lo, std::get<int64_t>(v)), hi = std::max(hi, std::get<int64_t>(v));
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  if (reals) {
    double lo = as_double(values.front()), hi = lo;
    for (const auto& v : values) lo = std::min(lo, as_double(v)), hi = std::max(hi, as_double(v));
    return lo + (hi - lo) * static_cast<double>(next() >> 11) / 9007199254740992.0;
  }
  return values[next() % values.size()];
}
}  // namespace

Expected<std::vector<ConcreteCase>> expand_cases(const Manifest& m, const CaseExpansion& expansion) {
  const int random_cases = expansion.random_cases;
  std::vector<ConcreteCase> out;
  for (const auto& spec : m.cases) {
    std::vector<size_t> idx(spec.params.size(), 0);
    do {
      std::vector<std::pair<std::string, Scalar>> point;
      for (size_t i = 0; i < spec.params.size(); ++i) point.emplace_back(spec.params[i].first, spec.params[i].second[idx[i]]);
      auto c = build_case(m, spec, std::move(point));
      if (!c) return c.error();
      c->index = static_cast<int>(out.size());
      out.push_back(std::move(*c));
    } while (advance(idx, spec.params));
  }
  for (const auto& spec : m.cases) {
    if (spec.params.empty()) continue;
    for (int k = 0; k < random_cases; ++k) {
      uint64_t rng = mix_seed(m.seed, fmt::format("{}/{}~random{}", case_kind_name(spec.kind), spec.name, k));
      std::vector<std::pair<std::string, Scalar>> point;
      for (const auto& [name, values] : spec.params) point.emplace_back(name, draw(values, rng));
      CaseSpec random = spec;
      random.name = fmt::format("{}~random{}", spec.name, k);
      random.kind = CaseKind::correctness;  // checked, not timed
      auto c = build_case(m, random, std::move(point));
      if (!c) return c.error();
      c->index = static_cast<int>(out.size());
      out.push_back(std::move(*c));
    }
  }
  // Value variants, after every case of the manifest and every random one: their indices stay.
  const std::size_t made = out.size();
  for (std::size_t k = 0; k < made; ++k) {
    if (out[k].kind != CaseKind::correctness) continue;
    for (int v = 0; v < kValueVariantCount; ++v) {
      const auto variant = static_cast<ValueVariant>(v);
      if (!(expansion.variants & variant_bit(variant))) continue;
      const ConcreteCase& base = out[k];
      if (std::none_of(base.inputs.begin(), base.inputs.end(), [&](const ConcreteTensor& t) { return t.variants & variant_bit(variant); }))
        continue;
      ConcreteCase c = base;
      c.variant = variant_name(variant);
      c.name = base.name + "~" + c.variant;
      const std::size_t bracket = base.id.find('[');
      c.id = bracket == std::string::npos ? base.id + "~" + c.variant : base.id.substr(0, bracket) + "~" + c.variant + base.id.substr(bracket);
      for (auto& t : c.inputs)
        if (t.variants & variant_bit(variant)) t.init = vary_init(t.init, variant, t.dtype);
      // Inputs made huge scale every absolute error with them: atol grows with what is expected.
      for (auto& o : c.outputs) o.tolerance.scale_atol = true;
      c.index = static_cast<int>(out.size());
      out.push_back(std::move(c));  // its seed is the case's: the same draws underneath
    }
  }
  return out;
}

CaseExpansion default_expansion() { return CaseExpansion{0, default_variants()}; }

std::string expansion_key(const CaseExpansion& e) { return fmt::format("random {}, variants {}", e.random_cases, variant_set_text(e.variants)); }

Expected<bool> meets(const ConcreteCase& c, std::string_view condition) {
  CaseEnv env(c.params);
  for (const auto& t : c.inputs) env.add_tensor(t.name, t.shape, t.dtype);
  for (const auto& o : c.outputs)
    if (o.inplace_input < 0) env.add_tensor(o.name, o.shape, o.dtype);
  auto v = evaluate(condition, env);
  if (!v) return v.error();
  return *v != 0;
}

namespace {
enum class DTypeKind { floating, integer, boolean };
DTypeKind kind_of(DType t) {
  if (t == DType::bool_) return DTypeKind::boolean;
  return is_floating(t) ? DTypeKind::floating : DTypeKind::integer;
}
}  // namespace

std::string dtype_mismatch(const ConcreteCase& c, const std::vector<std::string>& dtypes) {
  if (dtypes.empty()) return "";
  auto check = [&](const std::string& name, DType t) -> std::string {
    // Entries naming this tensor decide alone; else the plain entries of its kind, if any.
    std::vector<std::string> own, of_kind;
    for (const auto& d : dtypes) {
      const auto colon = d.find(':');
      if (colon != std::string::npos) {
        if (d.substr(0, colon) == name) own.push_back(d.substr(colon + 1));
        continue;
      }
      if (auto parsed = parse_dtype(d); parsed && kind_of(*parsed) == kind_of(t)) of_kind.push_back(d);
    }
    const auto& allowed = own.empty() ? of_kind : own;
    if (allowed.empty()) return "";
    for (const auto& a : allowed)
      if (parse_dtype(a) == t) return "";
    return fmt::format("dtype {} of '{}' is not supported by the implementation (it supports {})", dtype_name(t), name,
                       fmt::join(dtypes, ", "));
  };
  for (const auto& t : c.inputs)
    if (auto why = check(t.name, t.dtype); !why.empty()) return why;
  for (const auto& o : c.outputs)
    if (auto why = check(o.name, o.dtype); !why.empty()) return why;
  return "";
}

}  // namespace bb
