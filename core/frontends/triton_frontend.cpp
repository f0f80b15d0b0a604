#include "core/frontends/triton_frontend.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/detail/plan_reader.hpp"
#include "core/error.hpp"
#include "core/file_confinement.hpp"
#include "core/file_io.hpp"
#include "core/network_confinement.hpp"
#include "core/sha256.hpp"
#include "core/worker_process.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

constexpr std::string_view plan_word = "blaster";
constexpr std::string_view plan_variable = "BLASTER_PLAN";

// Triton's names of the element types.
std::string_view triton_type(dtype type) {
  switch (type) {
    case dtype::f16:
      return "fp16";
    case dtype::bf16:
      return "bf16";
    case dtype::f32:
      return "fp32";
    case dtype::f64:
      return "fp64";
    case dtype::i32:
      return "i32";
    case dtype::i64:
      return "i64";
    case dtype::fp8_e4m3:
      return "fp8e4nv";
    case dtype::fp8_e5m2:
      return "fp8e5";
    case dtype::i8:
      return "i8";
  }
  return "?";
}

std::string signature_type(const kernel_argument& a) {
  return fmt::format("{}{}", a.pointer ? "*" : "", triton_type(a.type));
}

[[noreturn]] void fail_at(std::string_view source, std::string_view file, std::size_t offset,
                          std::string_view message) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  BLASTER_INPUT_ERROR("{}:{}:{}: {}", file, line, offset - line_start + 1, message);
}

// Where a Python string literal opening at `at` begins its text: past an r or R prefix and the
// triple quote; npos when none opens there.
std::size_t triple_quoted_text(std::string_view source, std::size_t at, std::string_view& quote) {
  if (at < source.size() && (source[at] == 'r' || source[at] == 'R')) ++at;
  for (std::string_view q : {std::string_view("\"\"\""), std::string_view("'''")}) {
    if (source.substr(at).starts_with(q)) {
      quote = q;
      return at + q.size();
    }
  }
  return std::string_view::npos;
}

// [begin, end) of the plan's JSON: the module docstring that begins with "blaster", or the string
// a top-level BLASTER_PLAN = is assigned.
std::pair<std::size_t, std::size_t> locate_plan(std::string_view source, std::string_view file) {
  std::size_t at = 0;
  while (at < source.size()) {  // blank lines and comments may precede the docstring
    if (source[at] == ' ' || source[at] == '\t' || source[at] == '\r' || source[at] == '\n') {
      ++at;
    } else if (source[at] == '#') {
      at = source.find('\n', at);
      if (at == std::string_view::npos) at = source.size();
    } else {
      break;
    }
  }
  std::string_view quote;
  std::size_t text = triple_quoted_text(source, at, quote);
  std::size_t begin = std::string_view::npos;
  if (text != std::string_view::npos && source.substr(text).starts_with(plan_word) &&
      (text + plan_word.size() == source.size() ||
       !detail::is_identifier_char(source[text + plan_word.size()]))) {
    begin = text + plan_word.size();
  }
  for (std::size_t line = 0; begin == std::string_view::npos && line < source.size();) {
    if (source.substr(line).starts_with(plan_variable) &&
        (line + plan_variable.size() < source.size() &&
         !detail::is_identifier_char(source[line + plan_variable.size()]))) {
      std::size_t i = line + plan_variable.size();
      while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) ++i;
      if (i < source.size() && source[i] == '=') {
        ++i;
        while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) ++i;
        begin = triple_quoted_text(source, i, quote);
        if (begin == std::string_view::npos) {
          fail_at(source, file, i,
                  "BLASTER_PLAN must be a triple-quoted string holding the plan's JSON");
        }
      }
    }
    const std::size_t next = source.find('\n', line);
    line = next == std::string_view::npos ? source.size() : next + 1;
  }
  if (begin == std::string_view::npos) {
    fail_at(source, file, 0,
            "no launch plan: a Triton candidate holds its plan in a module docstring that begins "
            "with \"\"\"blaster, or in a top-level BLASTER_PLAN = \"\"\"{...}\"\"\" string");
  }
  const std::size_t end = source.find(quote, begin);
  if (end == std::string_view::npos) fail_at(source, file, begin, "unterminated launch plan string");
  return {begin, end};
}

// The executable a name stands for: a path as it is, a bare name searched on PATH.
std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path == nullptr ? "/usr/local/bin:/usr/bin:/bin" : path;
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    const std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return {};
}

std::string python_name(const compile_limits& limits) {
  return limits.python.empty() ? "python3" : limits.python.string();
}

// The driver in one mode under the compile limits, outside the sandbox: its one answer line.
json run_driver(const std::string& executable, const std::vector<std::string>& arguments,
                const compile_limits& limits, std::string& error) {
  std::vector<std::string> argv = {executable, "-B", "-c", std::string(triton_driver_text())};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  worker_limits caps;
  caps.address_space_bytes = limits.memory_bytes;
  const worker_outcome outcome = run_worker(argv, limits.timeout, {}, caps);
  if (!outcome.clean_exit() || outcome.messages.empty()) {
    error = fmt::format("{} {}", executable,
                        outcome.how == worker_outcome::ending::not_started ? "could not start: " +
                                                                                 outcome.error
                                                                           : outcome.describe());
    return {};
  }
  const json answer = json::parse(outcome.messages.back(), nullptr, false);
  if (!answer.is_object()) error = fmt::format("{} answered what is not JSON", executable);
  return answer;
}

std::string refusal_for(const triton_interpreter& interpreter) {
  return fmt::format(
      "Triton is not installed for {} ({}); install triton for it, or name an interpreter that "
      "has it with --python PATH",
      interpreter.name, interpreter.error);
}

int capability_of(const std::string& arch) {
  std::string digits;
  for (const char c : arch) {
    if (c >= '0' && c <= '9') digits += c;
  }
  return digits.empty() ? 90 : std::stoi(digits);
}

void write_text(const std::filesystem::path& file, std::string_view text) {
  write_file_atomically(file, std::string(text), 0600);
}

}  // namespace

launch_plan parse_triton_plan(std::string_view source, std::string_view file_name) {
  const auto [begin, end] = locate_plan(source, file_name);
  launch_plan plan =
      parse_launch_plan_json(source, file_name, begin, end, plan_dialect::triton);
  // Triton's options, checked before anything compiles: a value it would refuse is the plan's
  // error, at the plan's params.
  for (const auto& [name, values] : plan.params) {
    const bool warps = name == "num_warps";
    if (!warps && name != "num_stages") continue;
    for (const auto& value : values) {
      int n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      const bool fits = ec == std::errc() && end == value.data() + value.size() &&
                        (warps ? n >= 1 && n <= 32 && (n & (n - 1)) == 0 : n >= 1 && n <= 16);
      if (!fits) {
        BLASTER_INPUT_ERROR("{}:{}:{}: {} is {}; it must be {}", file_name, plan.params_where.line,
                            plan.params_where.column, name, value,
                            warps ? "a power of two from 1 to 32" : "an integer from 1 to 16");
      }
    }
  }
  // One image per variant: the plan's launches share one function.
  for (const auto& step : plan.launch) {
    if (step.kernel != plan.launch.front().kernel) {
      BLASTER_INPUT_ERROR("{}:{}:{}: a Triton plan launches one @triton.jit function ({}); {} "
                          "would need a module of its own",
                          file_name, step.where.line, step.where.column,
                          plan.launch.front().kernel, step.kernel);
    }
  }
  return plan;
}

const triton_interpreter& find_triton(const std::string& python, const compile_limits& limits) {
  static std::mutex mutex;
  static std::map<std::string, triton_interpreter> found;
  const std::lock_guard lock(mutex);
  if (auto it = found.find(python); it != found.end()) return it->second;
  triton_interpreter out;
  out.name = python;
  const std::string executable = find_executable(python);
  if (executable.empty()) {
    out.error = python.find('/') == std::string::npos
                    ? fmt::format("no {} on PATH", python)
                    : fmt::format("{} is not an executable file", python);
    return found.emplace(python, out).first->second;
  }
  const json answer = run_driver(executable, {"probe"}, limits, out.error);
  if (out.error.empty()) {
    out.executable = answer.value("executable", "");
    out.readable = answer.value("readable", std::vector<std::string>{});
    if (answer.contains("triton")) {
      out.version = answer.at("triton").get<std::string>();
    } else {
      out.error = answer.value("error", "no triton module");
    }
  }
  return found.emplace(python, out).first->second;
}

std::string extract_triton_function(const std::filesystem::path& file, const std::string& function,
                                    const compile_limits& limits) {
  const triton_interpreter& python = find_triton(python_name(limits), limits);
  const std::string executable =
      python.executable.empty() ? find_executable(python.name) : python.executable;
  if (executable.empty()) {
    BLASTER_INPUT_ERROR("{}: taking {} from it needs python3: {}; name one with --python PATH",
                        file.string(), function, python.error);
  }
  if (!std::filesystem::is_regular_file(file)) {
    BLASTER_INPUT_ERROR("{}: no such file to take {} from", file.string(), function);
  }
  std::string error;
  const json answer = run_driver(executable, {"extract", file.string(), function}, limits, error);
  if (!error.empty()) BLASTER_INPUT_ERROR("{}: extracting {}: {}", file.string(), function, error);
  if (!answer.value("ok", false)) {
    BLASTER_INPUT_ERROR("{}: {}", file.string(), answer.value("error", "cannot be read"));
  }
  return answer.at("module").get<std::string>();
}

frontend_plan triton_frontend::read_plan(const std::filesystem::path& file, std::string_view source,
                                         const frontend_context& context) const {
  frontend_plan out;
  out.plan = parse_triton_plan(source, file.string());
  if (out.plan.source) {
    const std::string& named = *out.plan.source;
    const std::size_t separator = named.rfind("::");
    std::filesystem::path from = named.substr(0, separator);
    if (from.is_relative()) from = file.parent_path() / from;
    try {
      out.companions.push_back(
          {named, extract_triton_function(from, named.substr(separator + 2), context.limits)});
    } catch (const input_error& e) {
      BLASTER_INPUT_ERROR("{}:{}:{}: {}", file.string(), out.plan.source_where.line,
                          out.plan.source_where.column, e.what());
    }
  }
  return out;
}

std::string triton_frontend::unavailable(const compile_limits& limits) const {
  const triton_interpreter& python = find_triton(python_name(limits), limits);
  return python.error.empty() ? std::string() : refusal_for(python);
}

compile_request triton_frontend::request(const variant_input& variant) const {
  compile_request request;
  request.kind = candidate_kind::triton;
  request.arch = variant.arch;
  const launch_plan& plan = variant.plan.plan;
  if (plan.source) {
    const std::string& named = *plan.source;
    request.source = variant.plan.companions.front().content;
    request.file_name =
        std::filesystem::path(named.substr(0, named.rfind("::"))).filename().string();
  } else {
    request.source = std::string(variant.source);
    request.file_name = variant.file.filename().string();
  }
  request.name_expressions = {variant.kernels.front()};
  triton_options& t = request.triton;
  t.python = python_name(variant.limits);
  t.function = variant.kernels.front();
  if (!variant.arguments.empty()) t.arguments = variant.arguments.front();
  for (const auto& [name, value] : variant.params) {
    if (name == "num_warps") {
      t.num_warps = std::stoi(value);
    } else if (name == "num_stages") {
      t.num_stages = std::stoi(value);
    } else {
      t.constexprs[name] = value;
    }
  }
  return request;
}

std::string triton_frontend::key(const compile_request& request) const {
  const triton_options& t = request.triton;
  sha256_hasher hasher;
  auto field = [&](std::string_view value) {
    hasher.update(fmt::format("{}:", value.size()));
    hasher.update(value);
  };
  field("blaster-triton-v1");
  field(t.version.empty() ? find_triton(t.python, {}).version : t.version);
  field(request.arch);
  field(request.file_name);
  field(t.function);
  for (const auto& a : t.arguments) field(signature_type(a));
  field("constexprs");
  for (const auto& [name, value] : t.constexprs) {
    field(name);
    field(value);
  }
  field(std::to_string(t.num_warps));
  field(std::to_string(t.num_stages));
  field(request.source);
  field(triton_driver_text());
  return hasher.finish_hex();
}

compile_output triton_frontend::compile(const compile_request& request,
                                        const compile_limits& limits) const {
  const triton_interpreter& python = find_triton(request.triton.python, limits);
  if (!python.error.empty()) {
    compile_output out;
    out.key = key(request);
    out.sources_sha256 = sources_sha256(request);
    out.refusal = refusal_for(python);
    out.log = fmt::format("blaster: {}\n", out.refusal);
    return out;
  }
  compile_request probed = request;
  probed.triton.interpreter = python.executable;
  probed.triton.version = python.version;
  probed.triton.readable = python.readable;
  compile_output out = compile_sandboxed(probed, limits);
  out.toolchain = fmt::format("triton {}", python.version);
  return out;
}

compile_output compile_triton_in_child(const compile_request& request,
                                       const std::filesystem::path& dir) {
  const triton_options& t = request.triton;
  compile_output out;
  const std::filesystem::path work = dir / "triton";
  std::filesystem::create_directory(work);
  json arguments = json::array();
  for (const auto& a : t.arguments) arguments.push_back(signature_type(a));
  const json driver_request = {{"module_name", request.file_name},
                               {"source", request.source},
                               {"function", t.function},
                               {"arguments", arguments},
                               {"constexprs", t.constexprs},
                               {"num_warps", t.num_warps},
                               {"num_stages", t.num_stages},
                               {"capability", capability_of(request.arch)}};
  write_text(work / "request.json", driver_request.dump());

  // What the interpreter may read and run: its own folders and the system's libraries; what it
  // may write: this compile's folder. No path of the project or the user's home is among them.
  std::vector<file_rule> rules;
  auto allow = [&](const std::filesystem::path& path, file_access access) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) rules.push_back({path, access});
  };
  for (const auto& path : t.readable) allow(path, file_access::read_execute);
  allow(t.interpreter, file_access::read_execute);
  for (const char* system : {"/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache"}) {
    allow(system, file_access::read_execute);
  }
  const char* ptxas = std::getenv("TRITON_PTXAS_PATH");
  if (ptxas != nullptr && *ptxas != '\0') allow(ptxas, file_access::read_execute);
  allow("/dev/null", file_access::read_write);
  allow("/dev/urandom", file_access::read);
  allow(dir, file_access::everything);

  // Few malloc arenas: each reserves address space that the compile memory cap counts, and
  // LLVM's threads would each get one.
  std::vector<std::string> environment = {
      "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1",
      "MALLOC_ARENA_MAX=2",
      "HOME=" + work.string(),            "TMPDIR=" + work.string(),
      "TRITON_HOME=" + work.string(),     "TRITON_CACHE_DIR=" + (work / "cache").string()};
  for (const char* passed : {"PYTHONPATH", "PYTHONHOME", "TRITON_PTXAS_PATH"}) {
    if (const char* value = std::getenv(passed); value != nullptr) {
      environment.push_back(fmt::format("{}={}", passed, value));
    }
  }
  const std::string request_path = (work / "request.json").string();
  std::vector<std::string> argv = {t.interpreter, "-B", "-c", std::string(triton_driver_text()),
                                   "compile", request_path};

  confine_files(rules);
  deny_new_sockets();
  const pid_t pid = ::fork();
  if (pid < 0) BLASTER_THROW("fork: {}", std::strerror(errno));
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDONLY);
    const int log = ::open((work / "driver.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    if (log >= 0) {
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    std::vector<char*> env;
    for (auto& e : environment) env.push_back(e.data());
    env.push_back(nullptr);
    ::execve(t.interpreter.c_str(), args.data(), env.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::optional<std::string> result = read_file_if_exists(work / "result.json");
  if (!result) {
    // Its standard error may quote triton's sources: only how it ended is told.
    out.log = WIFSIGNALED(status)
                  ? fmt::format("the Triton driver was killed by signal {} before it answered\n",
                                WTERMSIG(status))
                  : fmt::format("the Triton driver exited with status {} before it answered\n",
                                WEXITSTATUS(status));
    return out;
  }
  const json answer = json::parse(*result, nullptr, false);
  if (!answer.is_object()) {
    out.log = "the Triton driver answered what is not JSON\n";
    return out;
  }
  out.log = answer.value("log", "");
  if (!answer.value("ok", false)) return out;
  out.ptx = read_file(work / "kernel.ptx");
  out.cubin = read_file(work / "kernel.cubin");
  const auto name = answer.at("name").get<std::string>();
  out.lowered_names[t.function] = name;
  frontend_kernel k;
  for (const auto& a : t.arguments) {
    const std::size_t bytes = a.pointer ? 8 : size_of(a.type);
    k.parameters.push_back({bytes, a.pointer ? 'u' : (is_floating(a.type) ? 'f' : 's')});
  }
  for (const auto& s : answer.at("scratch")) {
    k.scratch.push_back({s.at("name").get<std::string>(), s.at("block_bytes").get<std::uint64_t>(),
                         s.at("align").get<std::uint64_t>()});
    k.parameters.push_back({8, 'u'});
  }
  k.block = std::array<unsigned, 3>{answer.at("num_warps").get<unsigned>() * 32, 1, 1};
  k.shared_bytes = answer.at("shared").get<unsigned>();
  out.kernels[t.function] = std::move(k);
  out.ok = true;
  return out;
}

}  // namespace blaster
