// Candidate frontends without a GPU or Triton: the interface, through a stand-in frontend whose
// PTX NVRTC compiles here and whose kernels take a scratch pointer the compiler asks for; the
// precompiled .ptx kind with its plan beside it; the Triton plan in a .py; a .py where Triton is
// missing; the extraction of a @triton.jit function from another file (python3 is on every
// machine that builds blaster); and a Triton candidate's compile-time code confined by the
// sandbox, run against a stand-in `triton` package on PYTHONPATH.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "../store/store_test_support.hpp"
#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "core/candidate_frontend.hpp"
#include "core/error.hpp"
#include "core/file_confinement.hpp"
#include "core/file_io.hpp"
#include "core/frontends/triton_frontend.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;

compile_limits sandbox() {
  compile_limits limits;
  limits.executable = BLASTER_BINARY;
  return limits;
}

class CandidateFrontend : public ::testing::Test {
 protected:
  fs::path write(const fs::path& name, const std::string& text) const {
    const fs::path file = dir_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

  testing::temp_folder folder_{"frontend-test"};
  const fs::path dir_ = folder_.path();
};

// rmsnorm's arguments, then the two pointers a Triton kernel of today takes after its own.
constexpr const char* scratch_kernel = R"py(
#include <cuda_fp16.h>
extern "C" __global__ void scaled(__half* out, const __half* x, int b, int c, int hw, float eps,
                                  void* global_scratch, void* profile_scratch) {}
)py";

std::string nvrtc_ptx(const std::string& source) {
  compile_request request;
  request.source = source;
  request.file_name = "stand_in.cu";
  const compile_output out = compile(request);
  EXPECT_TRUE(out.ok) << out.log;
  return out.ptx;
}

// A frontend of another language, as a test writes one: its "compiler" is NVRTC, whose PTX it
// hands on without a cubin, and it says what the plan cannot: a block of 96 threads, 512 bytes of
// dynamic shared memory, 64 bytes of scratch per block and an empty profiling scratch.
class stand_in_frontend final : public candidate_frontend {
 public:
  [[nodiscard]] candidate_kind kind() const override { return candidate_kind::ptx; }
  [[nodiscard]] frontend_plan read_plan(const fs::path& file, std::string_view source,
                                        const frontend_context& /*context*/) const override {
    frontend_plan out;
    out.plan = parse_triton_plan(source, file.string());
    return out;
  }
  [[nodiscard]] compile_request request(const variant_input& variant) const override {
    compile_request r;
    r.kind = kind();
    r.source = scratch_kernel;
    r.file_name = variant.file.filename().string();
    r.name_expressions = variant.kernels;
    return r;
  }
  [[nodiscard]] std::string key(const compile_request& request) const override {
    return request.source;
  }
  [[nodiscard]] compile_output compile(const compile_request& request,
                                       const compile_limits& /*limits*/) const override {
    compile_output out;
    out.ok = true;
    out.ptx = nvrtc_ptx(request.source);
    out.lowered_names[request.name_expressions.front()] = "scaled";
    frontend_kernel k;
    for (const std::size_t bytes : {8, 8, 4, 4, 4}) k.parameters.push_back({bytes, 's'});
    k.parameters[0].kind = k.parameters[1].kind = 'u';
    k.parameters.push_back({4, 'f'});
    k.parameters.push_back({8, 'u'});
    k.parameters.push_back({8, 'u'});
    k.block = std::array<unsigned, 3>{96, 1, 1};
    k.shared_bytes = 512;
    k.scratch = {{"global_scratch", 64, 16}, {"profile_scratch", 0, 1}};
    out.kernels[request.name_expressions.front()] = k;
    return out;
  }
};

constexpr const char* scaled_plan = R"py("""blaster
{"launch": [{"kernel": "scaled", "grid": "ceil_div(B*H*W, 96)",
             "args": ["out", "x", "B", "C", "H*W", "eps"]}]}
"""
)py";

TEST_F(CandidateFrontend, StandInFrontendsKernelTakesItsBlockSharedMemoryAndScratch) {
  const stand_in_frontend frontend;
  const fs::path file = write("scaled.py", scaled_plan);
  const std::string source = read_file(file);
  const frontend_plan plan = frontend.read_plan(file, source, {});
  const task_spec task = load_task(source_root / "tasks/rmsnorm");
  candidate_variant v;
  v.candidate = "scaled";
  v.kernels = {"scaled"};
  const std::vector<std::vector<kernel_argument>> arguments;
  const compile_limits limits;
  const std::map<std::string, std::string> params;
  const std::string arch = "sm_90a";
  v.compiled = frontend.compile(frontend.request({.file = file,
                                                  .source = source,
                                                  .plan = plan,
                                                  .params = params,
                                                  .kernels = v.kernels,
                                                  .arch = arch,
                                                  .arguments = arguments,
                                                  .limits = limits}),
                                limits);
  ASSERT_TRUE(v.compiled.ok);
  EXPECT_TRUE(v.compiled.cubin.empty());
  EXPECT_EQ(&module_image(v.compiled), &v.compiled.ptx);  // the driver JITs the PTX

  const task_case& odd = task.find_case("odd");  // B=3, H=31, W=7: 651 positions, 7 blocks
  const resolved_plan resolved = resolve_plan(plan.plan, v, task, odd);
  ASSERT_EQ(resolved.launches.size(), 1U);
  const resolved_launch& launch = resolved.launches.front();
  EXPECT_EQ(launch.block, (std::array<unsigned, 3>{96, 1, 1}));
  EXPECT_EQ(launch.grid[0], 7U);
  EXPECT_EQ(launch.shared_bytes, 512U);
  ASSERT_EQ(launch.args.size(), 8U);
  EXPECT_EQ(launch.args[6].kind, arg_kind::pointer);
  EXPECT_EQ(launch.args[6].buffer, "launch1.global_scratch");
  EXPECT_EQ(launch.args[7].kind, arg_kind::pointer);
  EXPECT_EQ(launch.args[7].buffer, "");  // empty scratch: a null pointer
  ASSERT_EQ(resolved.scratch.size(), 1U);
  EXPECT_EQ(resolved.scratch.front().first, "launch1.global_scratch");
  EXPECT_EQ(resolved.scratch.front().second, 7 * 64);

  // The plan passing one argument fewer is held to the frontend's list and the PTX's.
  const fs::path short_file = write(
      "short.py", R"py("""blaster
{"launch": [{"kernel": "scaled", "grid": 1, "args": ["out", "x", "B", "C", "H*W"]}]}
"""
)py");
  const std::string short_source = read_file(short_file);
  const frontend_plan short_plan = frontend.read_plan(short_file, short_source, {});
  try {
    static_cast<void>(resolve_plan(short_plan.plan, v, task, odd));
    FAIL() << "a plan one argument short resolved";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("scaled takes 8 parameters; the plan passes 7"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CandidateFrontend, PrecompiledPtxIsTakenAsItIsWithThePlanBesideIt) {
  std::string ptx = nvrtc_ptx(scratch_kernel);
  const fs::path image = write("scaled.ptx", ptx);
  write("scaled.plan.json", R"py({"launch": [{"kernel": "scaled", "grid": 1, "block": 32,
  "args": ["out", "x", "B", "C", "H*W", "eps", "0", "0"]}]})py");
  const candidate_file f = load_candidate(image, "sm_90a", nullptr, sandbox());
  ASSERT_TRUE(f.plan) << f.plan_error << f.compile_error;
  EXPECT_EQ(f.kind, candidate_kind::ptx);
  ASSERT_EQ(f.headers.size(), 1U);
  EXPECT_EQ(f.headers.front().name, "scaled.plan.json");  // the plan is cited with the image
  ASSERT_EQ(f.variants.size(), 1U);
  const candidate_variant& v = f.variants.front();
  ASSERT_TRUE(v.compiled.ok) << v.compiled.log;
  EXPECT_EQ(v.compiled.ptx, ptx);
  EXPECT_EQ(module_image(v.compiled), ptx);
  // The PTX's parameters check the plan: the two trailing pointers are passed as 0s (i32) here,
  // which the PTX's 8-byte parameters refuse.
  const task_spec task = load_task(source_root / "tasks/rmsnorm");
  try {
    static_cast<void>(resolve_plan(*f.plan, v, task, task.find_case("odd")));
    FAIL() << "4-byte integers passed for 8-byte pointers";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("argument 7 (\"0\") is i32 (4 bytes)"),
              std::string::npos)
        << e.what();
  }

  // An entry the image lacks, no plan beside it, and params: each refused with its reason.
  write("other.ptx", ptx);
  write("other.plan.json", R"py({"launch": [{"kernel": "missing", "grid": 1, "block": 32}]})py");
  const candidate_file other = load_candidate(dir_ / "other.ptx", "sm_90a", nullptr, sandbox());
  ASSERT_EQ(other.variants.size(), 1U);
  EXPECT_FALSE(other.variants.front().compiled.ok);
  EXPECT_NE(other.variants.front().compiled.log.find("defines no kernel missing"),
            std::string::npos);
  write("alone.ptx", ptx);
  const candidate_file alone = read_candidate(dir_ / "alone.ptx", sandbox());
  EXPECT_NE(alone.plan_error.find("alone.plan.json"), std::string::npos) << alone.plan_error;
  write("tuned.ptx", ptx);
  write("tuned.plan.json", R"py({"launch": [{"kernel": "scaled", "grid": 1, "block": 32}],
  "params": {"V": [1, 2]}})py");
  const candidate_file tuned = read_candidate(dir_ / "tuned.ptx", sandbox());
  EXPECT_NE(tuned.plan_error.find("tuned.plan.json:2:3: a precompiled image has one configuration"),
            std::string::npos)
      << tuned.plan_error;
}

TEST_F(CandidateFrontend, TritonPlanIsReadFromTheDocstringOrBlasterPlan) {
  const launch_plan docstring = parse_triton_plan(
      "# a comment first\n\n\"\"\"blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": "
      "\"ceil_div(N, BLOCK)\", \"args\": [\"out\", \"N\"]}],\n \"params\": {\"BLOCK\": [64, 128], "
      "\"num_warps\": [4, 8]}}\n\"\"\"\nimport triton\n",
      "k.py");
  ASSERT_EQ(docstring.launch.size(), 1U);
  EXPECT_EQ(docstring.launch.front().kernel, "k");
  EXPECT_EQ(docstring.launch.front().where.line, 4);
  EXPECT_EQ(docstring.launch.front().args.size(), 2U);
  EXPECT_EQ(expand_params(docstring).size(), 4U);

  const launch_plan variable = parse_triton_plan(
      "import triton\n\nBLASTER_PLAN = r'''{\"launch\": [{\"kernel\": \"k\", \"grid\": 1}],\n"
      "\"source\": \"../engine/fused_moe.py::fused_moe_kernel\"}'''\n",
      "k.py");
  ASSERT_TRUE(variable.source);
  EXPECT_EQ(*variable.source, "../engine/fused_moe.py::fused_moe_kernel");
  EXPECT_EQ(variable.source_where.line, 4);

  auto error_of = [](const std::string& source) {
    try {
      static_cast<void>(parse_triton_plan(source, "k.py"));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("import triton\n").find("k.py:1:1: no launch plan"), std::string::npos);
  EXPECT_NE(error_of("\"\"\"blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": "
                     "128}]}\n\"\"\"\n")
                .find("k.py:2:40: a Triton kernel's \"block\" is what Triton compiles it for"),
            std::string::npos);
  EXPECT_NE(error_of("\"\"\"blaster\n{\"launch\": [{\"kernel\": \"a\", \"grid\": 1}, {\"kernel\": "
                     "\"b\", \"grid\": 1}]}\n\"\"\"\n")
                .find("a Triton plan launches one @triton.jit function (a)"),
            std::string::npos);
  EXPECT_NE(error_of("\"\"\"blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1}], "
                     "\"source\": \"fused_moe.py\"}\n\"\"\"\n")
                .find("\"source\" must name a function in another file as \"PATH::function\""),
            std::string::npos);
  EXPECT_NE(error_of("\"\"\"blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1}]}\n")
                .find("unterminated launch plan string"),
            std::string::npos);
  EXPECT_NE(error_of("\"\"\"blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1}], "
                     "\"params\": {\"num_warps\": [4, 6]}}\n\"\"\"\n")
                .find("k.py:2:42: num_warps is 6; it must be a power of two from 1 to 32"),
            std::string::npos);
  EXPECT_NE(error_of("\"\"\"blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1}], "
                     "\"params\": {\"num_stages\": [\"three\"]}}\n\"\"\"\n")
                .find("num_stages is three; it must be an integer from 1 to 16"),
            std::string::npos);
}

constexpr const char* rmsnorm_triton = R"py("""blaster
{"launch": [{"kernel": "rmsnorm_rows", "grid": "B*H*W",
             "args": ["out", "x", "B", "C", "H*W", "eps"]}],
 "params": {"BLOCK_C": [64], "num_warps": [2]}}
"""
import triton
import triton.language as tl


@triton.jit
def rmsnorm_rows(out_ptr, x_ptr, b, c, hw, eps, BLOCK_C: tl.constexpr):
    pass
)py";

TEST_F(CandidateFrontend, TritonCandidateWithoutTritonIsACompileErrorNamingTheFlag) {
  const fs::path file = write("rmsnorm_triton.py", rmsnorm_triton);
  const task_spec task = load_task(source_root / "tasks/rmsnorm");
  compile_limits limits = sandbox();
  limits.python = dir_ / "no-such-python";
  const candidate_file f = load_candidate(file, "sm_90a", nullptr, limits, {}, &task);
  ASSERT_TRUE(f.plan) << f.plan_error << f.compile_error;
  ASSERT_EQ(f.variants.size(), 1U);
  const compile_output& out = f.variants.front().compiled;
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.refusal.find("Triton is not installed"), std::string::npos) << out.refusal;
  EXPECT_NE(out.refusal.find("--python PATH"), std::string::npos) << out.refusal;
  EXPECT_NE(out.refusal.find(file.string()), std::string::npos) << out.refusal;

  // The machine's python3 where it has no triton: the same error, with Python's reason.
  const triton_interpreter& machine = find_triton("python3", sandbox());
  if (machine.executable.empty()) GTEST_SKIP() << "no python3 on PATH: " << machine.error;
  if (machine.error.empty()) GTEST_SKIP() << "this machine's python3 has triton " << machine.version;
  const candidate_file g = load_candidate(file, "sm_90a", nullptr, sandbox(), {}, &task);
  ASSERT_EQ(g.variants.size(), 1U);
  EXPECT_FALSE(g.variants.front().compiled.ok);
  EXPECT_NE(g.variants.front().compiled.refusal.find("No module named 'triton'"),
            std::string::npos)
      << g.variants.front().compiled.refusal;
  EXPECT_NE(g.variants.front().compiled.refusal.find("--python PATH"), std::string::npos);
}

// A root holding rmsnorm, its .cu candidate, and a Triton candidate beside it in kernels/rmsnorm/.
fs::path root_with_a_triton_candidate(const fs::path& dir) {
  const fs::path root = dir / "root";
  fs::create_directories(root / "tasks");
  fs::create_directories(root / "kernels" / "rmsnorm");
  fs::copy(source_root / "tasks" / "rmsnorm", root / "tasks" / "rmsnorm");
  fs::copy_file(source_root / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu",
                root / "kernels" / "rmsnorm" / "rmsnorm_vec_regs.cu");
  std::ofstream(root / "kernels" / "rmsnorm" / "rmsnorm_triton.py") << rmsnorm_triton;
  return root;
}

// Where Triton is missing, a scan of the task's folder leaves its Triton file out, in one line
// that names the file and --python, and its .cu candidates compile as on any machine; the same
// file named on its own is still a compile_error.
TEST_F(CandidateFrontend, ATaskFolderScanLeavesOutTritonFilesWhereTritonIsMissing) {
  const fs::path root = root_with_a_triton_candidate(dir_);
  const fs::path triton_file = root / "kernels" / "rmsnorm" / "rmsnorm_triton.py";
  compile_limits limits = sandbox();
  limits.python = dir_ / "no-such-python";

  const task_candidates found = discover_candidates(root, "rmsnorm", {}, limits);
  EXPECT_EQ(found.files, (std::vector<fs::path>{root / "tasks/rmsnorm/init.cu",
                                                root / "kernels/rmsnorm/rmsnorm_vec_regs.cu"}));
  ASSERT_EQ(found.left_out.size(), 1U);
  EXPECT_EQ(found.left_out[0].files, std::vector<fs::path>{triton_file});
  const std::string line = describe(found.left_out[0], root);
  EXPECT_EQ(
      line.rfind("kernels/rmsnorm/rmsnorm_triton.py left out: Triton is not installed for ", 0), 0U)
      << line;
  EXPECT_NE(line.find("--python PATH"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;

  bench_options options;
  options.root = root;
  options.task = "rmsnorm";
  options.compile = limits;
  store records(dir_ / "home");
  const bench_report report = compile_task(options, records);
  ASSERT_EQ(report.results.size(), 5U);  // init, and rmsnorm_vec_regs' four configurations
  for (const auto& r : report.results) {
    EXPECT_EQ(r.status, "compiled") << r.label << ": " << r.message << r.log;
    EXPECT_EQ(fs::path(r.file).extension(), ".cu") << r.file;
  }
  EXPECT_EQ(report.left_out, std::vector<std::string>{line});
  EXPECT_EQ(bench_report_from_json(to_json(report)).left_out, report.left_out);

  // Named on its own, the file is taken: a compile_error that says why and names the flag.
  EXPECT_EQ(discover_candidates(root, "rmsnorm", {triton_file}, limits).files,
            (std::vector<fs::path>{root / "tasks/rmsnorm/init.cu", triton_file}));
  options.candidates = {triton_file};
  options.skip_baseline = true;
  const bench_report named = compile_task(options, records);
  ASSERT_EQ(named.results.size(), 1U);
  EXPECT_EQ(named.results[0].reason, reason_code::compile_error);
  EXPECT_NE(named.results[0].message.find("--python PATH"), std::string::npos)
      << named.results[0].message;
  EXPECT_TRUE(named.left_out.empty());

  // A folder of .cu files alone leaves nothing out.
  fs::remove(triton_file);
  EXPECT_TRUE(discover_candidates(root, "rmsnorm", {}, limits).left_out.empty());
}

TEST(TritonKey, CoversTritonsVersionTheConstexprsTheOptionsAndTheArch) {
  compile_request base;
  base.kind = candidate_kind::triton;
  base.source = "import triton\n";
  base.file_name = "k.py";
  base.arch = "sm_90a";
  base.triton.function = "k";
  base.triton.version = "3.6.0";
  base.triton.arguments = {{true, dtype::f16}, {false, dtype::i32}};
  base.triton.constexprs = {{"BLOCK", "128"}};
  const candidate_frontend& triton = frontend_for(candidate_kind::triton);
  const std::string key = triton.key(base);
  EXPECT_EQ(triton.key(base), key);
  auto differs = [&](const std::function<void(compile_request&)>& change) {
    compile_request other = base;
    change(other);
    return triton.key(other) != key;
  };
  EXPECT_TRUE(differs([](compile_request& r) { r.triton.version = "3.5.1"; }));
  EXPECT_TRUE(differs([](compile_request& r) { r.triton.constexprs["BLOCK"] = "256"; }));
  EXPECT_TRUE(differs([](compile_request& r) { r.triton.num_warps = 8; }));
  EXPECT_TRUE(differs([](compile_request& r) { r.triton.num_stages = 2; }));
  EXPECT_TRUE(differs([](compile_request& r) { r.arch = "sm_100a"; }));
  EXPECT_TRUE(differs([](compile_request& r) { r.triton.arguments[1].type = dtype::i64; }));
  EXPECT_TRUE(differs([](compile_request& r) { r.source += "# more\n"; }));
  // Where the interpreter is found does not change what it compiles.
  EXPECT_FALSE(differs([](compile_request& r) { r.triton.readable = {"/opt/python"}; }));
}

constexpr const char* engine_file = R"py(# An engine's kernels, as its authors wrote them.
import functools

import torch
from vllm.triton_utils import triton_helpers
import triton
import triton.language as tl
from triton.language.extra import libdevice

PAD: tl.constexpr = tl.constexpr(16)
SCALE = 2
TABLE = make_table()


def host_helper(x):
    return torch.zeros(x)


@triton.jit
def write_zeros(ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(ptr + offsets, tl.zeros([BLOCK], dtype=tl.float32), mask=offsets < n)


@triton.jit
def unrelated_kernel(ptr):
    pass


@triton.heuristics({"EVEN": lambda args: args["n"] % 16 == 0})
@triton.jit(do_not_specialize=["n"])
def moe_kernel(ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    def offsets_of(block):
        return tl.arange(0, block) * SCALE

    if n == 0:
        write_zeros(ptr, n, BLOCK)
    x = tl.load(ptr + offsets_of(BLOCK) + PAD)
    host_helper(x)


def not_a_kernel(ptr):
    pass
)py";

TEST_F(CandidateFrontend, ExtractsAKernelWithItsDecoratorsAndTheJitFunctionsItCalls) {
  const fs::path file = write("engine/fused.py", engine_file);
  const triton_interpreter& machine = find_triton("python3", sandbox());
  if (machine.executable.empty()) GTEST_SKIP() << "no python3 on PATH: " << machine.error;
  const std::string module = extract_triton_function(file, "moe_kernel", sandbox());
  // Both decorators, the nested helper inside the kernel, the @triton.jit helper it calls and
  // the literal constants it reads; the file's triton imports and ours.
  for (const char* kept :
       {"@triton.heuristics({\"EVEN\": lambda args: args[\"n\"] % 16 == 0})\n"
        "@triton.jit(do_not_specialize=[\"n\"])\ndef moe_kernel(",
        "    def offsets_of(block):\n", "@triton.jit\ndef write_zeros(ptr, n, BLOCK: tl.constexpr):",
        "PAD: tl.constexpr = tl.constexpr(16)\n", "SCALE = 2\n",
        "from triton.language.extra import libdevice\n", "import triton.language as tl\n"}) {
    EXPECT_NE(module.find(kept), std::string::npos) << kept << "\n---\n" << module;
  }
  // Nothing it does not use, and nothing that would import the engine or run its code.
  for (const char* left : {"unrelated_kernel", "def host_helper", "not_a_kernel", "TABLE",
                           "import torch", "vllm", "import functools"}) {
    EXPECT_EQ(module.find(left), std::string::npos) << left << "\n---\n" << module;
  }
  // The helper comes before the kernel, as in the file.
  EXPECT_LT(module.find("def write_zeros"), module.find("def moe_kernel"));

  auto error_of = [&](const fs::path& path, const std::string& name) {
    try {
      static_cast<void>(extract_triton_function(path, name, sandbox()));
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string missing = error_of(file, "fused_moe_kernel");
  EXPECT_NE(missing.find("fused.py has no top-level function fused_moe_kernel; its @triton.jit "
                         "functions: moe_kernel, unrelated_kernel, write_zeros"),
            std::string::npos)
      << missing;
  EXPECT_NE(error_of(file, "not_a_kernel").find("not_a_kernel in fused.py is not a @triton.jit"),
            std::string::npos);
  EXPECT_NE(error_of(dir_ / "engine/absent.py", "k").find("no such file"), std::string::npos);
  const fs::path broken = write("engine/broken.py", "def (:\n");
  EXPECT_NE(error_of(broken, "k").find("SyntaxError"), std::string::npos);
}

TEST_F(CandidateFrontend, APlanNamingAnotherFilesFunctionCitesTheExtractedBytes) {
  const triton_interpreter& machine = find_triton("python3", sandbox());
  if (machine.executable.empty()) GTEST_SKIP() << "no python3 on PATH: " << machine.error;
  write("engine/fused.py", engine_file);
  const fs::path file = write("kernels/moe_engine.py", R"py("""blaster
{"launch": [{"kernel": "moe_kernel", "grid": 1, "args": ["out", "B"]}],
 "source": "../engine/fused.py::moe_kernel", "params": {"BLOCK": [16], "EVEN": [0]}}
"""
)py");
  const candidate_file f = read_candidate(file, sandbox());
  ASSERT_TRUE(f.plan) << f.plan_error << f.compile_error;
  ASSERT_EQ(f.headers.size(), 1U);
  EXPECT_EQ(f.headers.front().name, "../engine/fused.py::moe_kernel");
  EXPECT_NE(f.headers.front().content.find("def moe_kernel("), std::string::npos);
  // The digest covers the extracted bytes: another engine file is another candidate.
  const std::string before = f.sources_sha256;
  write("engine/fused.py", std::string(engine_file) + "\n# a later commit\n");
  EXPECT_EQ(read_candidate(file, sandbox()).sources_sha256, before);  // the comment is not taken
  std::string changed = engine_file;
  changed.replace(changed.find("SCALE = 2"), 9, "SCALE = 3");
  write("engine/fused.py", changed);
  EXPECT_NE(read_candidate(file, sandbox()).sources_sha256, before);

  const fs::path wrong = write("kernels/wrong.py", R"py("""blaster
{"launch": [{"kernel": "k", "grid": 1}], "source": "../engine/fused.py::absent"}
"""
)py");
  const candidate_file w = read_candidate(wrong, sandbox());
  EXPECT_FALSE(w.plan);
  EXPECT_NE(w.plan_error.find("wrong.py:2:53: "), std::string::npos) << w.plan_error;
  EXPECT_NE(w.plan_error.find("has no top-level function absent"), std::string::npos);
}

// A stand-in for triton's compile API: enough for the driver, and a compile that hands back the
// PTX the test put beside it, named as the kernel, with the signature it was given in a comment.
void write_fake_triton(const fs::path& root, const std::string& ptx) {
  fs::create_directories(root / "triton/backends");
  fs::create_directories(root / "triton/compiler");
  fs::create_directories(root / "triton/runtime");
  fs::create_directories(root / "triton/language");
  std::ofstream(root / "triton/__init__.py") << R"py(import os
from types import SimpleNamespace
__version__ = "0.0-stand-in"
from triton.runtime.jit import jit, JITFunction

def compile(source, target=None, options=None):
    with open(os.path.join(os.path.dirname(__file__), "kernel.ptx")) as f:
        ptx = f.read()
    signature = ",".join(v for v in source.signature.values() if v != "constexpr")
    ptx = "// signature: %s constexprs: %s\n" % (signature, source.constexprs) + ptx
    metadata = SimpleNamespace(name="scaled", shared=2 * source.constexprs["BLOCK_C"],
                               num_warps=options["num_warps"], global_scratch_size=32,
                               global_scratch_align=16, profile_scratch_size=0,
                               profile_scratch_align=1)
    return SimpleNamespace(asm={"ptx": ptx, "cubin": b""}, metadata=metadata)
)py";
  std::ofstream(root / "triton/backends/__init__.py") << "";
  std::ofstream(root / "triton/backends/compiler.py")
      << "class GPUTarget:\n    def __init__(self, backend, arch, warp_size):\n"
         "        self.arch = arch\n";
  std::ofstream(root / "triton/compiler/__init__.py")
      << "class ASTSource:\n    def __init__(self, fn, signature, constexprs=None):\n"
         "        self.fn, self.signature, self.constexprs = fn, signature, constexprs\n";
  std::ofstream(root / "triton/runtime/__init__.py") << "";
  std::ofstream(root / "triton/runtime/jit.py") << R"py(import inspect
from types import SimpleNamespace

class JITFunction:
    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        inspect.getsource(fn)  # as triton does: the source must be found
        self.params = [SimpleNamespace(name=p.name, is_constexpr="constexpr" in str(p.annotation),
                                       has_default=False)
                       for p in inspect.signature(fn).parameters.values()]

def jit(fn=None, **options):
    return JITFunction(fn) if fn is not None else (lambda f: JITFunction(f))
)py";
  std::ofstream(root / "triton/language/__init__.py") << "class constexpr:\n    pass\n";
  std::ofstream(root / "triton/kernel.ptx") << ptx;
}

// Sets PYTHONPATH for the test's life, and gives the interpreter a name of its own (a link), since
// what a probe found of a name is kept for the process.
class FakeTriton : public CandidateFrontend {
 protected:
  void SetUp() override {
    CandidateFrontend::SetUp();
    const triton_interpreter& machine = find_triton("python3", sandbox());
    if (machine.executable.empty()) GTEST_SKIP() << "no python3 on PATH: " << machine.error;
    write_fake_triton(dir_ / "site", nvrtc_ptx(scratch_kernel));
    const char* old = std::getenv("PYTHONPATH");
    if (old != nullptr) old_pythonpath_ = old;
    ::setenv("PYTHONPATH", (dir_ / "site").c_str(), 1);
    fs::create_symlink(machine.executable, dir_ / "python3");
    limits_ = sandbox();
    limits_.python = dir_ / "python3";
  }
  void TearDown() override {
    if (old_pythonpath_) {
      ::setenv("PYTHONPATH", old_pythonpath_->c_str(), 1);
    } else {
      ::unsetenv("PYTHONPATH");
    }
    CandidateFrontend::TearDown();
  }

  candidate_file load(const std::string& text) {
    const fs::path file = write("rmsnorm_triton.py", text);
    const task_spec task = load_task(source_root / "tasks/rmsnorm");
    return load_candidate(file, "sm_90a", nullptr, limits_, {}, &task);
  }

  compile_limits limits_;
  std::optional<std::string> old_pythonpath_;
};

TEST_F(FakeTriton, CompilesThroughTheDriverInTheSandbox) {
  const candidate_file f = load(rmsnorm_triton);
  ASSERT_TRUE(f.plan) << f.plan_error << f.compile_error;
  ASSERT_EQ(f.variants.size(), 1U);
  const candidate_variant& v = f.variants.front();
  ASSERT_TRUE(v.compiled.ok) << v.compiled.log << v.compiled.refusal;
  EXPECT_EQ(v.compiled.toolchain, "triton 0.0-stand-in");
  // The task typed the arguments; the params became the constexprs and options.
  EXPECT_NE(v.compiled.ptx.find("// signature: *fp16,*fp16,i32,i32,i32,fp32 constexprs: "
                                "{'BLOCK_C': 64}"),
            std::string::npos)
      << v.compiled.ptx.substr(0, 200);
  EXPECT_EQ(v.compiled.lowered_names.at("rmsnorm_rows"), "scaled");
  const frontend_kernel& k = v.compiled.kernels.at("rmsnorm_rows");
  EXPECT_EQ(k.block, (std::array<unsigned, 3>{64, 1, 1}));  // num_warps 2
  EXPECT_EQ(k.shared_bytes, 128U);
  ASSERT_EQ(k.scratch.size(), 2U);
  EXPECT_EQ(k.parameters.size(), 8U);

  const task_spec task = load_task(source_root / "tasks/rmsnorm");
  const task_case& odd = task.find_case("odd");
  const resolved_plan resolved = resolve_plan(*f.plan, v, task, odd);
  ASSERT_EQ(resolved.scratch.size(), 1U);
  EXPECT_EQ(resolved.scratch.front().second, 3 * 31 * 7 * 32);  // a block per row, 32 bytes each
  EXPECT_EQ(resolved.launches.front().args.size(), 8U);
}

// A kernel taken from another file compiles from the extracted module, and a run keeps those
// bytes in the CAS beside the candidate's own, as it keeps a .cu's headers.
TEST_F(FakeTriton, AKernelTakenFromAnotherFileIsCompiledAndKeptAsEvidence) {
  write("engine/rows.py", std::string("import torch\n") + rmsnorm_triton);
  const fs::path file = write("kernels/rows_engine.py", R"py("""blaster
{"launch": [{"kernel": "rmsnorm_rows", "grid": "B*H*W",
             "args": ["out", "x", "B", "C", "H*W", "eps"]}],
 "source": "../engine/rows.py::rmsnorm_rows", "params": {"BLOCK_C": [32], "num_warps": [1]}}
"""
)py");
  bench_options options;
  options.root = source_root;
  options.task = "rmsnorm";
  options.skip_baseline = true;
  options.candidates = {file};
  options.compile = limits_;
  store records(dir_ / "home");
  const bench_report report = compile_task(options, records);
  ASSERT_EQ(report.results.size(), 1U);
  const variant_result& r = report.results[0];
  EXPECT_EQ(r.status, "compiled") << r.message << r.log;
  EXPECT_TRUE(records.cas().contains(r.source_sha256));
  EXPECT_TRUE(records.cas().contains(r.cubin_sha256));
  const candidate_file f = read_candidate(file, limits_);
  ASSERT_EQ(f.headers.size(), 1U);
  EXPECT_EQ(f.headers.front().content.find("torch"), std::string::npos);
  EXPECT_TRUE(records.cas().contains(sha256_hex(f.headers.front().content)));
  EXPECT_EQ(r.sources_sha256, f.sources_sha256);
}

// Where the interpreter has triton, the scan keeps the task folder's Triton file.
TEST_F(FakeTriton, ATaskFolderScanKeepsTritonFilesWhereTritonIsThere) {
  const fs::path root = root_with_a_triton_candidate(dir_);
  const task_candidates found = discover_candidates(root, "rmsnorm", {}, limits_);
  EXPECT_EQ(found.files, (std::vector<fs::path>{root / "tasks/rmsnorm/init.cu",
                                                root / "kernels/rmsnorm/rmsnorm_triton.py",
                                                root / "kernels/rmsnorm/rmsnorm_vec_regs.cu"}));
  EXPECT_TRUE(found.left_out.empty());
}

TEST_F(FakeTriton, CompileTimeCodeCannotReadOutsideTheSandbox) {
  if (!file_confinement_available()) GTEST_SKIP() << "this kernel has no Landlock";
  const fs::path secret_dir = fs::temp_directory_path() / fmt::format("blaster-secret-{}", ::getpid());
  fs::create_directories(secret_dir);
  std::ofstream(secret_dir / "token") << "hunter2-secret-bytes";
  std::string text = rmsnorm_triton;
  text += fmt::format("\nSTOLEN = open('{}').read()\n", (secret_dir / "token").string());
  const candidate_file f = load(text);
  fs::remove_all(secret_dir);
  ASSERT_EQ(f.variants.size(), 1U);
  const compile_output& out = f.variants.front().compiled;
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("PermissionError"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find("hunter2"), std::string::npos) << out.log;
  // The project's files are outside too.
  std::string project = rmsnorm_triton;
  project += fmt::format("\nSTOLEN = open('{}').read()\n",
                         (source_root / "tasks/rmsnorm/task.json").string());
  const candidate_file g = load(project);
  ASSERT_EQ(g.variants.size(), 1U);
  EXPECT_FALSE(g.variants.front().compiled.ok);
  EXPECT_NE(g.variants.front().compiled.log.find("Permission denied"), std::string::npos)
      << g.variants.front().compiled.log;
}

TEST_F(FakeTriton, CompileTimeCodeCannotOpenASocket) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  std::string text = rmsnorm_triton;
  text += fmt::format(
      "\nimport socket\nsocket.create_connection(('127.0.0.1', {}), timeout=5).sendall(b'x')\n",
      ntohs(address.sin_port));
  const candidate_file f = load(text);
  ASSERT_EQ(f.variants.size(), 1U);
  const compile_output& out = f.variants.front().compiled;
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("PermissionError"), std::string::npos) << out.log;
  EXPECT_LT(::accept(listener, nullptr, nullptr), 0);  // nothing connected
  ::close(listener);
}

}  // namespace
}  // namespace blaster
