#include "tasks/task_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json_reader.hpp"

namespace blaster {
namespace {

using json = nlohmann::ordered_json;

// The task file's reader: the shared checks, and the values only a task has.
class reader : public json_reader {
 public:
  using json_reader::json_reader;

  expression expr(const json& value, std::string_view where) const {
    if (value.is_number_integer())
      return expression::parse(std::to_string(value.get<std::int64_t>()));
    if (!value.is_string()) fail(where, "must be an integer or an expression string");
    try {
      return expression::parse(value.get<std::string>());
    } catch (const expression_error& e) {
      fail(where, e.what());
    }
  }

  // A value for a symbol of this type: integer types take non-negative integers only.
  double symbol_value(const json& value, dtype type, std::string_view where) const {
    if (!value.is_number()) fail(where, "must be a number");
    const double v = value.get<double>();
    if (!is_floating(type) && (v != std::floor(v) || v < 0)) {
      fail(where, "must be a non-negative integer");
    }
    return v;
  }

  dtype type(const json& object, std::string_view where, const char* key) const {
    const std::string name = text(object, where, key);
    if (auto t = parse_dtype(name)) return *t;
    fail(fmt::format("{}.{}", where, key),
         fmt::format("unknown type \"{}\" (known: f16, bf16, f32, f64, i32, i64)", name));
  }
};

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// An int_range bound: an integer, or an integer expression over the symbols ("C - 1").
void read_int_bound(const reader& r, const json& j, const std::string& where, const char* key,
                    double& value, std::optional<expression>& bound) {
  if (!j.contains(key)) r.fail(where, fmt::format("missing \"{}\"", key));
  const json& v = j[key];
  const std::string at = fmt::format("{}.{}", where, key);
  if (v.is_string()) {
    bound = r.expr(v, at);
    return;
  }
  if (!v.is_number() || v.get<double>() != std::floor(v.get<double>())) {
    r.fail(at, "must be an integer or an integer expression over the symbols, e.g. \"C - 1\"");
  }
  value = v.get<double>();
}

distribution read_distribution(const reader& r, const json& j, const std::string& where) {
  if (!j.is_object()) {
    r.fail(where, "must be an object such as {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}");
  }
  distribution d;
  d.kind = r.text(j, where, "dist");
  if (d.kind == "normal") {
    r.only_keys(j, where, {"dist", "mean", "std"});
    d.mean = r.number(j, where, "mean", 0.0);
    d.stddev = r.number(j, where, "std", 1.0);
    if (!std::isfinite(d.mean)) r.fail(where + ".mean", "must be finite");
    if (!(d.stddev >= 0 && std::isfinite(d.stddev))) {
      r.fail(where + ".std", "must be finite and not negative (a standard deviation)");
    }
  } else if (d.kind == "uniform") {
    r.only_keys(j, where, {"dist", "low", "high"});
    d.low = r.number(j, where, "low");
    d.high = r.number(j, where, "high");
    if (!(d.low < d.high)) r.fail(where, "\"low\" must be below \"high\"");
  } else if (d.kind == "int_range") {
    r.only_keys(j, where, {"dist", "low", "high"});
    read_int_bound(r, j, where, "low", d.low, d.low_bound);
    read_int_bound(r, j, where, "high", d.high, d.high_bound);
    // Bounds that depend on the case are checked once every case is known.
    if (!d.low_bound && !d.high_bound && d.low > d.high) {
      r.fail(where, "\"low\" must not be above \"high\"");
    }
  } else if (d.kind == "heavy_tailed") {
    r.only_keys(j, where, {"dist", "dof", "scale"});
    d.dof = r.number(j, where, "dof", 3.0);
    d.scale = r.number(j, where, "scale", 1.0);
    if (!(d.dof > 0)) r.fail(where, "\"dof\" must be positive");
    if (!(d.scale > 0 && std::isfinite(d.scale))) r.fail(where, "\"scale\" must be positive");
  } else {
    r.fail(where + ".dist", fmt::format("unknown distribution \"{}\" (known: normal, uniform, "
                                        "heavy_tailed, int_range)",
                                        d.kind));
  }
  return d;
}

}  // namespace

const task_case& task_spec::find_case(std::string_view case_name) const {
  for (const auto& c : cases) {
    if (c.name == case_name) return c;
  }
  std::vector<std::string> names;
  for (const auto& c : cases) names.push_back(c.name);
  BLASTER_INPUT_ERROR("task {} has no case \"{}\" (cases: {})", name, case_name,
                      fmt::join(names, ", "));
}

const symbol_spec* task_spec::find_symbol(std::string_view symbol) const {
  for (const auto& s : symbols) {
    if (s.name == symbol) return &s;
  }
  return nullptr;
}

const buffer_spec* task_spec::find_buffer(std::string_view buffer) const {
  for (const auto& b : buffers) {
    if (b.name == buffer) return &b;
  }
  return nullptr;
}

double task_spec::value(const task_case& c, std::string_view symbol) const {
  if (auto it = c.values.find(symbol); it != c.values.end()) return it->second;
  const symbol_spec* s = find_symbol(symbol);
  if (s == nullptr || !s->value) {
    BLASTER_INPUT_ERROR("task {}, case {}: symbol {} has no value", name, c.name, symbol);
  }
  return *s->value;
}

symbol_table task_spec::integer_symbols(const task_case& c) const {
  symbol_table table;
  for (const auto& s : symbols) {
    if (!is_floating(s.type)) table[s.name] = static_cast<std::int64_t>(value(c, s.name));
  }
  return table;
}

std::vector<std::int64_t> task_spec::shape(const buffer_spec& b, const task_case& c) const {
  const symbol_table table = integer_symbols(c);
  std::vector<std::int64_t> dims;
  for (const auto& e : b.shape) dims.push_back(e.evaluate(table));
  return dims;
}

std::int64_t task_spec::elements(const buffer_spec& b, const task_case& c) const {
  std::int64_t count = 1;
  for (std::int64_t d : shape(b, c)) {
    if (d < 0)
      BLASTER_INPUT_ERROR("task {}, case {}: buffer {} has a negative size", name, c.name, b.name);
    if (__builtin_mul_overflow(count, d, &count)) {
      BLASTER_INPUT_ERROR("task {}, case {}: buffer {} is too large", name, c.name, b.name);
    }
  }
  return count;
}

std::int64_t task_spec::buffer_bytes(const buffer_spec& b, const task_case& c) const {
  std::int64_t n = 0;
  if (__builtin_mul_overflow(elements(b, c), static_cast<std::int64_t>(size_of(b.type)), &n)) {
    BLASTER_INPUT_ERROR("task {}, case {}: buffer {} has more bytes than an int64 holds", name,
                        c.name, b.name);
  }
  return n;
}

void task_spec::check_fits(const task_case& c, std::uint64_t memory_bytes) const {
  std::uint64_t total = 0;
  for (const auto& b : buffers) total += static_cast<std::uint64_t>(buffer_bytes(b, c));
  if (total > memory_bytes) {
    BLASTER_INPUT_ERROR(
        "task {}, case {}: its buffers hold {} bytes, more than the device's {} bytes of memory; "
        "shrink the case or run it on a GPU with more memory",
        name, c.name, total, memory_bytes);
  }
}

distribution task_spec::input_distribution(const buffer_spec& b, const task_case& c) const {
  distribution d = b.init;
  if (auto it = c.init.find(b.name); it != c.init.end()) d = it->second;
  if (d.low_bound || d.high_bound) {
    const symbol_table table = integer_symbols(c);
    if (d.low_bound) d.low = static_cast<double>(d.low_bound->evaluate(table));
    if (d.high_bound) d.high = static_cast<double>(d.high_bound->evaluate(table));
    d.low_bound.reset();
    d.high_bound.reset();
  }
  return d;
}

std::string task_spec::describe(const task_case& c) const {
  std::vector<std::string> parts;
  for (const auto& s : symbols) {
    if (!is_floating(s.type)) parts.push_back(fmt::format("{}={}", s.name, value(c, s.name)));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

void check_task_name(std::string_view name) {
  const bool valid = !name.empty() && name.size() <= max_task_name_length &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
                     });
  if (!valid) {
    BLASTER_INPUT_ERROR(
        "\"{:.80}{}\" is not a task name; a task is a folder tasks/<name>/ whose name is 1 to {} "
        "letters, digits, _ or -",
        name, name.size() > 80 ? "..." : "", max_task_name_length);
  }
}

task_spec load_task(const std::filesystem::path& dir) {
  check_task_name(dir.lexically_normal().filename().string());
  const auto path = dir / "task.json";
  const std::string file = path.string();
  if (!std::filesystem::exists(path)) {
    std::vector<std::string> known;
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(dir.parent_path(), ignored)) {
      if (std::filesystem::exists(entry.path() / "task.json")) {
        known.push_back(entry.path().filename().string());
      }
    }
    std::sort(known.begin(), known.end());
    BLASTER_INPUT_ERROR(
        "{}: no such task file (known tasks: {}); a task is a folder "
        "tasks/<name>/ holding task.json, init.cu and reference.cpp",
        file, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")));
  }
  const reader r(file);
  const json j = r.parse(read_file(path));
  r.only_keys(j, "task",
              {"name", "title", "kernelbench", "reference", "symbols", "buffers", "tolerance",
               "roofline", "timing", "cases"});
  task_spec task;
  task.dir = dir;
  // The folder is the task's identity: it picks the baseline, the kernels and the name the
  // store records, so a file copied into another folder cannot pass for the task it came from.
  const std::string folder = dir.lexically_normal().filename().string();
  task.name = r.text(j, "task", "name");
  if (task.name != folder) {
    r.fail("task.name",
           fmt::format("\"{}\" is not the task's folder \"{}\"; a task is named by its folder, "
                       "so rename one to match the other",
                       task.name, folder));
  }
  task.title = r.text(j, "task", "title", task.name);
  task.reference = r.text(j, "task", "reference", task.name);

  if (!j.contains("symbols") || !j["symbols"].is_object()) r.fail("symbols", "must be an object");
  for (const auto& [name, s] : j["symbols"].items()) {
    const std::string where = "symbols." + name;
    if (!is_identifier(name)) {
      r.fail(where,
             "a symbol's name must be an identifier (letters, digits, _; not first a "
             "digit), so that expressions can refer to it");
    }
    r.only_keys(s, where, {"type", "value"});
    symbol_spec spec;
    spec.name = name;
    spec.type = r.type(s, where, "type");
    if (s.contains("value")) spec.value = r.symbol_value(s["value"], spec.type, where + ".value");
    task.symbols.push_back(spec);
  }

  if (!j.contains("buffers") || !j["buffers"].is_object()) r.fail("buffers", "must be an object");
  for (const auto& [name, b] : j["buffers"].items()) {
    const std::string where = "buffers." + name;
    r.only_keys(b, where, {"dtype", "shape", "role", "init"});
    buffer_spec spec;
    spec.name = name;
    spec.type = r.type(b, where, "dtype");
    if (!is_identifier(name)) {
      r.fail(where,
             "a buffer's name must be an identifier (letters, digits, _; not first a "
             "digit), so that plans and expressions can refer to it");
    }
    if (task.find_symbol(name) != nullptr) r.fail(where, "a buffer and a symbol share this name");
    if (!b.contains("shape") || !b["shape"].is_array() || b["shape"].empty()) {
      r.fail(where + ".shape", "must be a non-empty array of expressions");
    }
    for (std::size_t i = 0; i < b["shape"].size(); ++i) {
      spec.shape.push_back(r.expr(b["shape"][i], fmt::format("{}.shape[{}]", where, i)));
    }
    const std::string role = r.text(b, where, "role");
    if (role == "input") {
      spec.role = buffer_role::input;
      if (b.contains("init")) spec.init = read_distribution(r, b["init"], where + ".init");
    } else if (role == "output") {
      spec.role = buffer_role::output;
    } else {
      r.fail(where + ".role", fmt::format("\"{}\" is not a role (input or output)", role));
    }
    task.buffers.push_back(std::move(spec));
  }

  const json tol = j.value("tolerance", json::object());
  r.only_keys(tol, "tolerance", {"profile", "atol", "rtol"});
  task.tol = {.profile = r.text(tol, "tolerance", "profile", "custom"),
              .atol = r.number(tol, "tolerance", "atol"),
              .rtol = r.number(tol, "tolerance", "rtol")};
  if (!(task.tol.atol >= 0 && task.tol.rtol >= 0) || !std::isfinite(task.tol.atol) ||
      !std::isfinite(task.tol.rtol)) {
    r.fail("tolerance", "atol and rtol must be finite and >= 0");
  }

  const json roof = j.value("roofline", json::object());
  r.only_keys(roof, "roofline", {"bytes", "read_bytes", "write_bytes", "flops"});
  if (roof.contains("read_bytes") != roof.contains("write_bytes")) {
    r.fail("roofline", "\"read_bytes\" and \"write_bytes\" come together");
  }
  if (roof.contains("read_bytes")) {
    task.read_bytes = r.expr(roof["read_bytes"], "roofline.read_bytes");
    task.write_bytes = r.expr(roof["write_bytes"], "roofline.write_bytes");
    task.bytes = expression::parse(
        fmt::format("({}) + ({})", task.read_bytes->text(), task.write_bytes->text()));
    if (roof.contains("bytes")) {
      r.fail("roofline.bytes", "give either \"bytes\" or \"read_bytes\" and \"write_bytes\"");
    }
  } else if (roof.contains("bytes")) {
    task.bytes = r.expr(roof["bytes"], "roofline.bytes");
  } else {
    r.fail("roofline", "missing \"read_bytes\" and \"write_bytes\" (or their sum, \"bytes\")");
  }
  task.flops =
      roof.contains("flops") ? r.expr(roof["flops"], "roofline.flops") : expression::parse("0");

  if (j.contains("timing")) {
    r.only_keys(j["timing"], "timing", {"mode"});
    const std::string mode = r.text(j["timing"], "timing", "mode");
    if (mode != "hot" && mode != "cold" && mode != "graph") {
      r.fail("timing.mode", fmt::format("\"{}\" is not a timing mode (hot, cold or graph)", mode));
    }
    task.timing_mode = mode;
  }

  if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty()) {
    r.fail("cases", "must be a non-empty array");
  }
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    const json& c = j["cases"][i];
    const std::string where = fmt::format("cases[{}]", i);
    r.only_keys(c, where, {"name", "note", "canonical", "large", "symbols", "init"});
    task_case tc;
    tc.name = r.text(c, where, "name");
    tc.note = r.text(c, where, "note", "");
    for (const char* flag : {"canonical", "large"}) {
      if (c.contains(flag) && !c[flag].is_boolean()) {
        r.fail(fmt::format("{}.{}", where, flag), "must be true or false");
      }
    }
    tc.large = c.value("large", false);
    if (c.value("canonical", false)) {
      if (!task.canonical_case.empty()) r.fail(where, "only one case may be canonical");
      task.canonical_case = tc.name;
    }
    const json values = c.value("symbols", json::object());
    for (const auto& [symbol, value] : values.items()) {
      const symbol_spec* s = task.find_symbol(symbol);
      if (s == nullptr) r.fail(where + ".symbols", fmt::format("unknown symbol \"{}\"", symbol));
      tc.values[symbol] = r.symbol_value(value, s->type, where + ".symbols." + symbol);
    }
    if (c.contains("init")) {
      const json& init = c["init"];
      if (!init.is_object()) {
        r.fail(where + ".init",
               "must be an object from input buffer to distribution, such as {\"x\": "
               "{\"dist\": \"normal\", \"std\": 30}}");
      }
      for (const auto& [buffer, d] : init.items()) {
        const std::string at = fmt::format("{}.init.{}", where, buffer);
        const buffer_spec* b = task.find_buffer(buffer);
        if (b == nullptr || b->role != buffer_role::input) {
          std::vector<std::string> inputs;
          for (const auto& candidate : task.buffers) {
            if (candidate.role == buffer_role::input) inputs.push_back(candidate.name);
          }
          r.fail(at, fmt::format("{} \"{}\"; only inputs are drawn (inputs: {})",
                                 b == nullptr ? "unknown buffer" : "an output buffer", buffer,
                                 fmt::join(inputs, ", ")));
        }
        tc.init[buffer] = read_distribution(r, d, at);
      }
    }
    for (const auto& s : task.symbols) {
      if (!s.value && !tc.values.contains(s.name)) {
        r.fail(where, fmt::format("symbol {} has no value here and no default", s.name));
      }
    }
    for (const auto& other : task.cases) {
      if (other.name == tc.name) r.fail(where, fmt::format("a second case named \"{}\"", tc.name));
    }
    task.cases.push_back(std::move(tc));
  }
  if (task.canonical_case.empty()) task.canonical_case = task.cases.front().name;

  // Every expression must evaluate in every case now, not halfway through a run.
  for (std::size_t index = 0; index < task.cases.size(); ++index) {
    const task_case& c = task.cases[index];
    const symbol_table symbols = task.integer_symbols(c);
    auto check = [&](const expression& e, const std::string& where) {
      try {
        static_cast<void>(e.evaluate(symbols));
      } catch (const input_error& error) {
        r.fail(where, fmt::format("in case {}: {}", c.name, error.what()));
      }
    };
    std::int64_t case_bytes = 0;
    for (const auto& b : task.buffers) {
      for (std::size_t i = 0; i < b.shape.size(); ++i) {
        check(b.shape[i], fmt::format("buffers.{}.shape[{}]", b.name, i));
      }
      try {
        if (__builtin_add_overflow(case_bytes, task.buffer_bytes(b, c), &case_bytes)) {
          case_bytes = std::numeric_limits<std::int64_t>::max();
        }
      } catch (const input_error& error) {
        r.fail(fmt::format("buffers.{}.shape", b.name), error.what());
      }
    }
    // Sizes are bounded here, before anything is drawn or allocated, GPU or not.
    if (case_bytes > max_case_bytes) {
      r.fail(fmt::format("cases.{}", c.name),
             fmt::format("its buffers hold {} bytes, over the limit of {} GiB; shrink the case",
                         case_bytes, max_case_bytes >> 30));
    }
    if (!c.large && case_bytes > max_checked_case_bytes) {
      r.fail(fmt::format("cases.{}", c.name),
             fmt::format("its buffers hold {} bytes, over the {} GiB that a case checked on every "
                         "run may hold; mark it \"large\": true (checked only when timed) or "
                         "shrink it",
                         case_bytes, max_checked_case_bytes >> 30));
    }
    if (task.read_bytes) {
      check(*task.read_bytes, "roofline.read_bytes");
      check(*task.write_bytes, "roofline.write_bytes");
    }
    check(task.bytes, "roofline.bytes");
    check(task.flops, "roofline.flops");
    for (const auto& b : task.buffers) {
      if (b.role != buffer_role::input) continue;
      const std::string where = c.init.contains(b.name)
                                    ? fmt::format("cases[{}].init.{}", index, b.name)
                                    : fmt::format("buffers.{}.init", b.name);
      distribution d;
      try {
        d = task.input_distribution(b, c);
      } catch (const input_error& error) {
        r.fail(where, fmt::format("in case {}: {}", c.name, error.what()));
      }
      if (d.kind == "int_range" && d.low > d.high) {
        r.fail(where, fmt::format("in case {} ({}): \"low\" is {}, above \"high\" {}", c.name,
                                  task.describe(c), d.low, d.high));
      }
    }
  }
  return task;
}

task_spec load_task(const std::filesystem::path& root, std::string_view name) {
  check_task_name(name);
  return load_task(root / "tasks" / name);
}

}  // namespace blaster
