#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/candidate/kernel_binding.hpp"
#include "core/compile_cache.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "tasks/drawn_cases.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;
constexpr const char* arch = "sm_90a";

// Candidates compile in the compile sandbox, a child process of the blaster binary.
compile_limits sandbox() {
  compile_limits limits;
  limits.executable = BLASTER_BINARY;
  return limits;
}
const fs::path common_headers = common_headers_folder(source_root);

// Whether the file's header expects the compile stage to refuse it (its includes, its size, its
// limits, its plan): tests/compile_limits_test.cpp checks those, and a bomb among them would
// take this test its whole deadline.
bool refused_before_compiling(const fs::path& file) {
  const std::string source = read_file(file);
  return source.find("// expect: compile_error\n") != std::string::npos ||
         source.find("// expect: plan_error\n") != std::string::npos;
}

// A fresh folder per test, removed afterwards.
class temp_folder {
 public:
  temp_folder() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("blaster-kernel-compile-" + std::to_string(::getpid()) +
                                         "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~temp_folder() { fs::remove_all(path_); }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The task a checked-in candidate belongs to, from where it lives.
std::string task_of(const fs::path& file) {
  const fs::path relative = fs::relative(file, source_root);
  const std::string top = relative.begin()->string();
  if (top == "tasks" || top == "kernels") return file.parent_path().filename().string();
  // tests/adversarial/ holds rmsnorm candidates, and in a folder per task those of other tasks.
  const std::string folder = file.parent_path().filename().string();
  return folder == "adversarial" ? "rmsnorm" : folder;
}

std::vector<fs::path> checked_in_candidates() {
  std::vector<fs::path> files;
  for (const char* folder : {"tasks", "kernels", "tests/adversarial"}) {
    for (const auto& entry : fs::recursive_directory_iterator(source_root / folder)) {
      if (entry.is_regular_file() && entry.path().extension() == ".cu") {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(KernelCompile, EveryCheckedInCandidateCompilesAndResolvesOnEveryCase) {
  const temp_folder home;
  store records(home.path());
  compile_cache cache(home.path() / "cache", records.cas());

  const auto files = checked_in_candidates();
  // The walk must find the known files, or this test would pass on an empty list.
  auto has = [&](const char* relative) {
    return std::find(files.begin(), files.end(), source_root / relative) != files.end();
  };
  EXPECT_TRUE(has("tasks/rmsnorm/init.cu"));
  EXPECT_TRUE(has("kernels/rmsnorm/rmsnorm_vec_regs.cu"));
  EXPECT_TRUE(has("tests/adversarial/no_sqrt.cu"));

  for (const auto& file : files) {
    if (refused_before_compiling(file)) continue;
    SCOPED_TRACE(file.string());
    const task_spec task = load_task(source_root / "tasks" / task_of(file));
    const candidate_file candidate = load_candidate(file, arch, &cache, sandbox(), common_headers);
    ASSERT_TRUE(candidate.plan.has_value()) << candidate.plan_error;
    ASSERT_FALSE(candidate.variants.empty());
    EXPECT_EQ(candidate.variants.size(), expand_params(*candidate.plan).size());
    for (const auto& v : candidate.variants) {
      SCOPED_TRACE(v.label);
      ASSERT_TRUE(v.compiled.ok) << v.compiled.log;
      EXPECT_FALSE(v.compiled.cubin.empty());
      EXPECT_FALSE(v.compiled.ptx.empty());
      ASSERT_EQ(v.kernels.size(), candidate.plan->launch.size());
      const std::set<std::string> distinct(v.kernels.begin(), v.kernels.end());
      for (const auto& kernel : v.kernels) {
        ASSERT_TRUE(v.compiled.lowered_names.contains(kernel)) << kernel;
        EXPECT_FALSE(v.compiled.lowered_names.at(kernel).empty()) << kernel;
      }
      // One ptxas report per distinct kernel the plan launches.
      ASSERT_EQ(v.resources.size(), distinct.size()) << v.compiled.log;
      for (const auto& r : v.resources) {
        EXPECT_GT(r.registers, 0) << r.lowered_name;
        EXPECT_GE(r.stack_bytes, 0) << r.lowered_name;
      }
      for (const auto& c : task.cases) {
        SCOPED_TRACE(c.name);
        try {
          const resolved_plan plan = resolve_plan(*candidate.plan, v, task, c);
          ASSERT_EQ(plan.launches.size(), candidate.plan->launch.size());
          for (const auto& launch : plan.launches) {
            EXPECT_EQ(launch.lowered, v.compiled.lowered_names.at(launch.kernel));
          }
        } catch (const input_error& e) {
          ADD_FAILURE() << e.what();
        }
      }
    }
  }
}

// Without Triton (CI has none), a checked-in Triton candidate is still held to its task: its plan
// parses, its arguments take their types from the task (one list for every launch, since the plan
// compiles one function), and every configuration resolves on every case, against a stand-in for
// what Triton reports of the kernel: the plan's arguments, then its two scratch pointers, and 32
// threads per warp. The cases are the task's and those three seeds draw from its ranges. GPU runs
// compile them for real.
TEST(KernelCompile, EveryCheckedInTritonPlanResolvesOnEveryCase) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(source_root / "kernels")) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_NE(
      std::find(files.begin(), files.end(), source_root / "kernels/softmax/softmax_triton.py"),
      files.end());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    task_spec task = load_task(source_root / "tasks" / task_of(file));
    for (std::uint64_t seed = 1; seed <= 3; ++seed) add_drawn_cases(task, seed);
    const candidate_file candidate = read_candidate(file, sandbox(), common_headers);
    ASSERT_TRUE(candidate.plan.has_value()) << candidate.plan_error << candidate.compile_error;
    EXPECT_EQ(candidate.kind, candidate_kind::triton);
    const auto types = plan_argument_types(*candidate.plan, task);
    for (const auto& step : types) EXPECT_EQ(step, types.front());
    frontend_kernel reported;
    for (const kernel_argument& a : types.front()) {
      const bool real = !a.pointer && (a.type == dtype::f32 || a.type == dtype::f64);
      const bool wide = a.pointer || a.type == dtype::i64 || a.type == dtype::f64;
      reported.parameters.push_back({wide ? 8U : 4U, real ? 'f' : a.pointer ? 'u' : 's'});
    }
    reported.parameters.push_back({8, 'u'});
    reported.parameters.push_back({8, 'u'});
    reported.scratch = {{"global_scratch", 0, 1}, {"profile_scratch", 0, 1}};
    for (const auto& params : expand_params(*candidate.plan)) {
      candidate_variant v;
      v.params = params;
      const unsigned warps = params.contains("num_warps")
                                 ? static_cast<unsigned>(std::stoul(params.at("num_warps")))
                                 : 4U;
      reported.block = std::array<unsigned, 3>{32 * warps, 1, 1};
      for (const auto& step : candidate.plan->launch) {
        v.kernels.push_back(instantiate_kernel_name(step.kernel, params));
        v.compiled.lowered_names[v.kernels.back()] = v.kernels.back();
        v.compiled.kernels[v.kernels.back()] = reported;
      }
      for (const auto& c : task.cases) {
        SCOPED_TRACE(c.name);
        try {
          const resolved_plan plan = resolve_plan(*candidate.plan, v, task, c);
          EXPECT_EQ(plan.launches.size(), candidate.plan->launch.size());
        } catch (const input_error& e) {
          ADD_FAILURE() << e.what();
        }
      }
    }
  }
}

TEST(KernelCompile, VariantsExpandWithTheLastParamFastest) {
  // "params": {"VEC": [4, 2], "BLOCK": [128, 256]}, in the values' own order.
  const candidate_file c = load_candidate(source_root / "kernels/rmsnorm/rmsnorm_vec_regs.cu", arch,
                                          nullptr, sandbox(), common_headers);
  std::vector<std::string> kernels;
  for (const auto& v : c.variants) kernels.push_back(v.kernels.at(0));
  EXPECT_EQ(kernels, (std::vector<std::string>{
                         "rmsnorm_vec_regs<4, 128, 64>", "rmsnorm_vec_regs<4, 256, 64>",
                         "rmsnorm_vec_regs<2, 128, 64>", "rmsnorm_vec_regs<2, 256, 64>"}));
}

TEST(KernelCompile, LabelsNameParamsInDeclarationOrder) {
  const candidate_file c = load_candidate(source_root / "kernels/rmsnorm/rmsnorm_vec_regs.cu", arch,
                                          nullptr, sandbox(), common_headers);
  std::vector<std::string> labels;
  for (const auto& v : c.variants) labels.push_back(v.label);
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "rmsnorm_vec_regs[VEC=4,BLOCK=128]", "rmsnorm_vec_regs[VEC=4,BLOCK=256]",
                        "rmsnorm_vec_regs[VEC=2,BLOCK=128]", "rmsnorm_vec_regs[VEC=2,BLOCK=256]"}));
}

TEST(KernelCompile, DiscoverPutsTheBaselineFirst) {
  const auto files = discover_candidates(source_root, "rmsnorm", {}, sandbox()).files;
  ASSERT_GE(files.size(), 2u);
  EXPECT_EQ(files.front(), source_root / "tasks/rmsnorm/init.cu");
  EXPECT_NE(
      std::find(files.begin(), files.end(), source_root / "kernels/rmsnorm/rmsnorm_vec_regs.cu"),
      files.end());

  // A folder stands for its .cu files in name order; the baseline still comes first.
  const auto given =
      discover_candidates(source_root, "rmsnorm", {source_root / "tests/adversarial"}, sandbox())
          .files;
  ASSERT_GE(given.size(), 4u);
  EXPECT_EQ(given[0], source_root / "tasks/rmsnorm/init.cu");
  EXPECT_TRUE(std::is_sorted(given.begin() + 1, given.end()));
  for (const char* name : {"nan_output.cu", "no_sqrt.cu", "skips_last_position.cu"}) {
    EXPECT_NE(std::find(given.begin(), given.end(), source_root / "tests/adversarial" / name),
              given.end())
        << name;
  }
  for (const auto& file : given) EXPECT_EQ(file.extension(), ".cu") << file;

  // A single file is taken as given, after the baseline.
  const fs::path one = source_root / "kernels/rmsnorm/rmsnorm_vec_regs.cu";
  EXPECT_EQ(discover_candidates(source_root, "rmsnorm", {one}, sandbox()).files,
            (std::vector<fs::path>{source_root / "tasks/rmsnorm/init.cu", one}));

  EXPECT_THROW(discover_candidates(source_root, "rmsnorm", {source_root / "no/such.cu"}, sandbox()),
               input_error);
  EXPECT_THROW(discover_candidates(source_root, "no_such_task", {}, sandbox()), input_error);
}

// Candidates for rmsnorm written to a temp folder: most wrong in one way, the last two showing
// how params reach NVRTC.
class TempCandidate : public ::testing::Test {
 protected:
  void SetUp() override { task_ = load_task(source_root / "tasks/rmsnorm"); }

  // A plan of one step; `step` holds the members after "kernel".
  static std::string plan(std::string_view kernel, std::string_view step,
                          std::string_view rest = "") {
    return "/* blaster\n{\n  \"launch\": [\n    {\"kernel\": \"" + std::string(kernel) + "\", " +
           std::string(step) + "}\n  ]" + std::string(rest) + "\n}\n*/\n";
  }

  static constexpr std::string_view good_step =
      R"p("grid": "ceil_div(B*H*W, 256)", "block": 256, )p"
      R"p("args": ["out", "x", "B", "C", "H*W", "eps"])p";

  static constexpr std::string_view kernel_k =
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void k(__half* out, const __half* x, int b, int c, int plane,\n"
      "                              float eps) {\n"
      "  if (threadIdx.x == 0) out[0] = x[0];\n"
      "}\n";

  fs::path write(std::string_view name, const std::string& text) const {
    const fs::path file = folder_.path() / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    EXPECT_TRUE(out.good());
    return file;
  }

  // The candidate's one variant, which must have compiled.
  static const candidate_variant& compiled(const candidate_file& c) {
    EXPECT_TRUE(c.plan_error.empty()) << c.plan_error;
    EXPECT_EQ(c.variants.size(), 1u);
    EXPECT_TRUE(c.variants.at(0).compiled.ok) << c.variants.at(0).compiled.log;
    return c.variants.at(0);
  }

  // The input_error resolve_plan throws for the case.
  std::string resolve_error(const candidate_file& c, std::string_view case_name) const {
    try {
      static_cast<void>(resolve_plan(*c.plan, compiled(c), task_, task_.find_case(case_name)));
    } catch (const input_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "resolve_plan accepted " << c.file << " for case " << case_name;
    return {};
  }

  temp_folder folder_;
  task_spec task_;
};

TEST_F(TempCandidate, CompileErrorIsAVerdictWithTheLine) {
  // The plan takes lines 1-7, so the error is on line 10; NVRTC reports it as "bad.cu(10)".
  const std::string text = plan("k", good_step) +
                           "#include <cuda_fp16.h>\n"                         // line 8
                           "extern \"C\" __global__ void k(__half* out) {\n"  // line 9
                           "  out[0] = not_declared_anywhere;\n"              // line 10
                           "}\n";
  const fs::path file = write("bad.cu", text);
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  EXPECT_TRUE(c.plan_error.empty()) << c.plan_error;
  ASSERT_EQ(c.variants.size(), 1u);
  const compile_output& out = c.variants[0].compiled;
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.cubin.empty());
  EXPECT_NE(out.log.find("bad.cu(10)"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("not_declared_anywhere"), std::string::npos) << out.log;
  EXPECT_TRUE(c.variants[0].resources.empty());
}

TEST_F(TempCandidate, PlanNamesAKernelTheFileLacks) {
  const fs::path file = write("missing.cu", plan("not_here", good_step) + std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  ASSERT_EQ(c.variants.size(), 1u);
  EXPECT_FALSE(c.variants[0].compiled.ok);
  EXPECT_NE(c.variants[0].compiled.log.find("not_here"), std::string::npos)
      << c.variants[0].compiled.log;
}

TEST_F(TempCandidate, ArgumentCountDiffersFromTheKernel) {
  // Five arguments for six parameters; the error points at the kernel name, line 4 column 17.
  const fs::path file = write(
      "count.cu", plan("k", R"p("grid": 1, "block": 32, "args": ["out", "x", "B", "C", "H*W"])p") +
                      std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const std::string message = resolve_error(c, "canonical");
  EXPECT_NE(message.find(file.string() + ":4:17:"), std::string::npos) << message;
  EXPECT_NE(message.find("takes 6 parameters"), std::string::npos) << message;
  EXPECT_NE(message.find("passes 5"), std::string::npos) << message;
}

TEST_F(TempCandidate, IntegerWhereTheKernelTakesAFloat) {
  // Same count, same size, wrong kind: B (i32) lands in the float eps parameter.
  const fs::path file =
      write("kind.cu",
            plan("k", R"p("grid": 1, "block": 32, "args": ["out", "x", "B", "C", "H*W", "B"])p") +
                std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const std::string message = resolve_error(c, "canonical");
  EXPECT_NE(message.find(file.string() + ":"), std::string::npos) << message;
  EXPECT_NE(message.find("argument 6"), std::string::npos) << message;
  EXPECT_NE(message.find("floating point"), std::string::npos) << message;
}

TEST_F(TempCandidate, FloatSymbolInsideAnExpression) {
  const fs::path file = write(
      "eps.cu",
      plan("k", R"p("grid": 1, "block": 32, "args": ["out", "x", "B", "C", "H*W", "eps*2"])p") +
          std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const std::string message = resolve_error(c, "single");
  EXPECT_NE(message.find(file.string() + ":"), std::string::npos) << message;
  EXPECT_NE(message.find("eps is a floating-point symbol"), std::string::npos) << message;
}

TEST_F(TempCandidate, I32ArgumentThatOverflowsOnTheCanonicalCase) {
  // 16*64*256*256*1000 is about 6.7e10: fine as an expression, too large for an int parameter.
  const fs::path file = write(
      "overflow.cu",
      plan("k",
           R"p("grid": 1, "block": 32, "args": ["out", "x", "B", "C", "B*C*H*W*1000", "eps"])p") +
          std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const std::string message = resolve_error(c, "canonical");
  EXPECT_NE(message.find("67108864000"), std::string::npos) << message;
  EXPECT_NE(message.find("does not fit in i32"), std::string::npos) << message;
  // The single case fits, so the plan itself is not refused.
  EXPECT_NO_THROW(
      static_cast<void>(resolve_plan(*c.plan, compiled(c), task_, task_.find_case("single"))));
}

TEST_F(TempCandidate, GridOfZeroForTheSingleCase) {
  // Rounding down: 1 position / 256 is 0 blocks, which would launch nothing.
  const fs::path file = write(
      "grid.cu",
      plan("k",
           R"p("grid": "B*H*W/256", "block": 256, "args": ["out", "x", "B", "C", "H*W", "eps"])p") +
          std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const std::string message = resolve_error(c, "single");
  EXPECT_NE(message.find("grid dimension x is 0 for case single"), std::string::npos) << message;
  EXPECT_NO_THROW(
      static_cast<void>(resolve_plan(*c.plan, compiled(c), task_, task_.find_case("canonical"))));
}

TEST_F(TempCandidate, BlockOf2048) {
  const fs::path file = write(
      "block.cu",
      plan("k", R"p("grid": 1, "block": 2048, "args": ["out", "x", "B", "C", "H*W", "eps"])p") +
          std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const std::string message = resolve_error(c, "canonical");
  EXPECT_NE(message.find("block dimension x is 2048"), std::string::npos) << message;
}

TEST_F(TempCandidate, ClusterAndCooperativeResolveAndTheGridMustFillWholeClusters) {
  const fs::path file = write(
      "cluster.cu",
      plan(
          "k",
          R"p("grid": "ceil_div(B*H*W, 256)", "block": 256, "args": ["out", "x", "B", "C", "H*W", "eps"])p",
          R"p(, "cluster": [2, 1, 1], "cooperative": true, "max_dynamic_shared_bytes": 100000)p") +
          std::string(kernel_k));
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  // canonical: 16*256*256 / 256 = 4096 blocks, whole clusters of 2.
  const resolved_plan canonical =
      resolve_plan(*c.plan, compiled(c), task_, task_.find_case("canonical"));
  EXPECT_EQ(canonical.cluster, (std::array<unsigned, 3>{2, 1, 1}));
  EXPECT_TRUE(canonical.cooperative);
  EXPECT_EQ(canonical.max_dynamic_shared_bytes, 100000U);
  // odd: ceil(3*31*7 / 256) = 3 blocks, which no cluster of 2 divides.
  const std::string message = resolve_error(c, "odd");
  EXPECT_NE(message.find("grid dimension x is 3 for case odd"), std::string::npos) << message;
  EXPECT_NE(message.find("not a multiple of the cluster's 2"), std::string::npos) << message;
  EXPECT_EQ(message.rfind(file.string() + ":4:30: ", 0), 0U) << message;  // at the grid

  const fs::path big = write("big_cluster.cu", plan("k", good_step, R"p(, "cluster": [4, 4, 1])p") +
                                                   std::string(kernel_k));
  const std::string too_big =
      resolve_error(load_candidate(big, arch, nullptr, sandbox(), common_headers), "canonical");
  EXPECT_NE(too_big.find("a cluster of 16 blocks; at most 8 are portable"), std::string::npos)
      << too_big;
}

TEST_F(TempCandidate, ParamInTheKernelNameIsATemplateArgument) {
  const std::string text =
      plan("k<VEC>", good_step, ",\n  \"params\": {\"VEC\": [2, 4]}") +
      "#include <cuda_fp16.h>\n"
      "template <int VEC>\n"
      "__global__ void k(__half* out, const __half* x, int b, int c, int plane, float eps) {\n"
      "  if (threadIdx.x < VEC) out[threadIdx.x] = x[threadIdx.x];\n"
      "}\n";
  const fs::path file = write("templated.cu", text);
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  ASSERT_EQ(c.variants.size(), 2u) << c.plan_error;
  const std::vector<std::string> values = {"2", "4"};
  for (std::size_t i = 0; i < 2; ++i) {
    const candidate_variant& v = c.variants[i];
    ASSERT_TRUE(v.compiled.ok) << v.compiled.log;
    EXPECT_EQ(v.candidate, "templated");
    EXPECT_EQ(v.label, "templated[VEC=" + values[i] + "]");
    EXPECT_EQ(v.params, (std::map<std::string, std::string>{{"VEC", values[i]}}));
    EXPECT_EQ(v.kernels, std::vector<std::string>{"k<" + values[i] + ">"});
    EXPECT_EQ(v.compiled.lowered_names.at("k<" + values[i] + ">"),
              "_Z1kILi" + values[i] + "EEvP6__halfPKS0_iiif");
    // A template argument is not also a define.
    for (const auto& option : v.compiled.options) {
      EXPECT_EQ(option.find("-DVEC"), std::string::npos) << option;
    }
    ASSERT_EQ(v.resources.size(), 1u);
    EXPECT_GT(v.resources[0].registers, 0);
    EXPECT_NO_THROW(
        static_cast<void>(resolve_plan(*c.plan, v, task_, task_.find_case("canonical"))));
  }
  // Two instantiations, two binaries.
  EXPECT_NE(c.variants[0].compiled.key, c.variants[1].compiled.key);
}

TEST_F(TempCandidate, ParamOutsideTheKernelNameIsADefine) {
  // The static_assert fails to compile unless -DTILE=8 reached NVRTC.
  const std::string text = plan("k", good_step, ",\n  \"params\": {\"TILE\": [8]}") +
                           "static_assert(TILE == 8, \"TILE is not defined\");\n" +
                           std::string(kernel_k);
  const fs::path file = write("defined.cu", text);
  const candidate_file c = load_candidate(file, arch, nullptr, sandbox(), common_headers);
  const candidate_variant& v = compiled(c);
  EXPECT_EQ(v.label, "defined[TILE=8]");
  EXPECT_EQ(v.kernels, std::vector<std::string>{"k"});
  EXPECT_NE(std::find(v.compiled.options.begin(), v.compiled.options.end(), "-DTILE=8"),
            v.compiled.options.end());
}

}  // namespace
}  // namespace blaster
