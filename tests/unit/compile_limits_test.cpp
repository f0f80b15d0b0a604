// The limits a candidate meets before anything compiles: the size of its source (refused from
// its size, unread), the launches of its plan and the combinations of its params, each with a
// message that names the file, the limit, the value found and the flag that raises it; and the
// verdicts the compile stage gives the adversarial kernels of tests/adversarial/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "../store/store_test_support.hpp"
#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "core/file_io.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;

compile_limits sandbox() {
  compile_limits limits;
  limits.executable = BLASTER_BINARY;
  return limits;
}

class CompileLimits : public ::testing::Test {
 protected:
  fs::path write(std::string_view name, const std::string& text) const {
    const fs::path file = dir_ / name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

  // An honest one-launch candidate for rmsnorm, padded with a comment to `bytes` in all.
  static std::string candidate_of_size(std::size_t bytes) {
    std::string text = read_file(source_root / "tasks/rmsnorm/init.cu");
    text += "// padding\n";
    text.append(bytes - text.size() - 1, '/');
    text += '\n';
    return text;
  }

  // A plan of `steps` launches of init.cu's kernel.
  static std::string plan_with_launches(int steps) {
    std::string launches;
    for (int i = 0; i < steps; ++i) {
      launches += fmt::format(
          "{}    {{\"kernel\": \"rmsnorm_naive\", \"grid\": 1, \"block\": 32, "
          "\"args\": [\"out\", \"x\", \"B\", \"C\", \"H*W\", \"eps\"]}}",
          i == 0 ? "" : ",\n");
    }
    const std::string init = read_file(source_root / "tasks/rmsnorm/init.cu");
    return "/* blaster\n{\n  \"launch\": [\n" + launches + "\n  ]\n}\n*/\n" +
           init.substr(init.find("*/\n") + 3);
  }

  testing::temp_folder folder_{"compile-limits"};
  const fs::path dir_ = folder_.path();
};

TEST_F(CompileLimits, ASourceOverTheLimitIsACompileErrorNamingTheFlag) {
  const fs::path over = write("over.cu", candidate_of_size((1U << 20) + 1));
  const candidate_file c = load_candidate(over, "sm_90a", nullptr, sandbox(), {});
  EXPECT_EQ(c.compile_error, fmt::format("{}: the source is 1048577 bytes, over the limit of "
                                         "1048576 bytes; --max-source-bytes raises the limit",
                                         over.string()));
  EXPECT_FALSE(c.plan.has_value());
  EXPECT_TRUE(c.variants.empty());
  EXPECT_TRUE(c.source.empty());
  EXPECT_TRUE(c.sources_sha256.empty());

  // At the limit it compiles; above it, so it does once the flag raises the limit.
  const fs::path at = write("at.cu", candidate_of_size(1U << 20));
  const candidate_file at_limit = load_candidate(at, "sm_90a", nullptr, sandbox(), {});
  EXPECT_TRUE(at_limit.compile_error.empty()) << at_limit.compile_error;
  ASSERT_EQ(at_limit.variants.size(), 1U);
  EXPECT_TRUE(at_limit.variants[0].compiled.ok) << at_limit.variants[0].compiled.log;
  compile_limits raised = sandbox();
  raised.max_source_bytes = 2U << 20;
  const candidate_file over_raised = load_candidate(over, "sm_90a", nullptr, raised, {});
  ASSERT_EQ(over_raised.variants.size(), 1U) << over_raised.compile_error;
  EXPECT_TRUE(over_raised.variants[0].compiled.ok);
}

TEST_F(CompileLimits, AHugeSourceIsRefusedUnread) {
  // 64 GiB that the disk does not hold (a sparse file): reading it would take minutes and
  // memory this machine lacks; its size alone refuses it.
  const fs::path huge = dir_ / "huge.cu";
  std::ofstream(huge) << "/* blaster\n";
  fs::resize_file(huge, std::uint64_t{64} << 30);
  const auto started = std::chrono::steady_clock::now();
  const candidate_file c = load_candidate(huge, "sm_90a", nullptr, sandbox(), {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(c.compile_error.find("the source is 68719476736 bytes, over the limit of 1048576"),
            std::string::npos)
      << c.compile_error;
  EXPECT_LT(seconds, 1.0);
}

TEST_F(CompileLimits, APlanOfMoreLaunchesThanTheLimitIsAPlanError) {
  const fs::path file = write("launches.cu", plan_with_launches(65));
  const candidate_file c = load_candidate(file, "sm_90a", nullptr, sandbox(), {});
  // Line 68 holds the 65th launch; its kernel name starts at column 17.
  EXPECT_EQ(c.plan_error, fmt::format("{}:68:17: the plan has 65 launches, over the limit of 64; "
                                      "--max-launches raises the limit",
                                      file.string()));
  EXPECT_FALSE(c.plan.has_value());
  EXPECT_TRUE(c.variants.empty());  // nothing compiled

  const candidate_file within =
      load_candidate(write("ok.cu", plan_with_launches(64)), "sm_90a", nullptr, sandbox(), {});
  EXPECT_TRUE(within.plan_error.empty()) << within.plan_error;
  compile_limits raised = sandbox();
  raised.max_launches = 65;
  EXPECT_TRUE(load_candidate(file, "sm_90a", nullptr, raised, {}).plan_error.empty());
}

TEST_F(CompileLimits, MoreParamsCombinationsThanTheLimitIsAPlanError) {
  std::string source = read_file(source_root / "tests/adversarial/too_many_variants.cu");
  const fs::path file = write("variants.cu", source);
  const candidate_file c = load_candidate(file, "sm_90a", nullptr, sandbox(), {});
  EXPECT_EQ(c.plan_error,
            fmt::format("{}:7:3: \"params\" expand to 272 combinations (UNROLL 16 x SALT 17), "
                        "over the limit of 256; --max-variants raises the limit",
                        file.string()));
  EXPECT_TRUE(c.variants.empty());

  compile_limits lowered = sandbox();
  lowered.max_variants = 3;
  const candidate_file four = load_candidate(source_root / "kernels/rmsnorm/rmsnorm_vec_regs.cu",
                                             "sm_90a", nullptr, lowered, {});
  EXPECT_NE(four.plan_error.find("expand to 4 combinations (VEC 2 x BLOCK 2), over the limit "
                                 "of 3; --max-variants"),
            std::string::npos)
      << four.plan_error;
}

TEST_F(CompileLimits, KernelNamesAndParamValuesAreOneLine) {
  // A JSON escape puts a new-line into the name expression NVRTC would read: a plan error.
  const std::string init = read_file(source_root / "tasks/rmsnorm/init.cu");
  std::string injected = init;
  injected.replace(injected.find("\"rmsnorm_naive\""), 15,
                   "\"rmsnorm_naive\\n#include \\\"/etc/passwd\\\"\\n\"");
  const candidate_file c =
      load_candidate(write("name.cu", injected), "sm_90a", nullptr, sandbox(), {});
  EXPECT_NE(c.plan_error.find(":4:16: \"kernel\" holds a control character"), std::string::npos)
      << c.plan_error;
  EXPECT_TRUE(c.variants.empty());
}

// The verdicts a header names, "// expect: reason|reason".
std::set<std::string> expected_verdicts(const fs::path& file) {
  static const std::regex expect(R"(// expect: ([a-z_|]+))");
  std::smatch m;
  const std::string source = read_file(file);
  if (!std::regex_search(source, m, expect)) return {};
  std::set<std::string> out;
  std::stringstream list(m[1].str());
  for (std::string item; std::getline(list, item, '|');) out.insert(item);
  return out;
}

TEST_F(CompileLimits, EveryAdversarialKernelRefusedBeforeTheGateGetsItsVerdictWithoutAGpu) {
  // The memory bomb among them would grow without end.
  if (!address_space_caps_apply) GTEST_SKIP() << "an AddressSanitizer build caps no address space";
  // Refused by the device's own limits, which only a GPU knows: tests/gpu/adversarial_test.cpp.
  const std::set<std::string> decided_on_the_device = {"shared_beyond_device.cu"};
  // Refused from the compiled symbols' names: the module they were read from is on record.
  const std::set<std::string> decided_from_the_module = {
      "named_like_l2_sweep.cu", "namespaced_sweep_name.cu", "helper_named_like_check.cu"};
  std::map<fs::path, std::string> expected;
  for (const auto& entry : fs::directory_iterator(source_root / "tests" / "adversarial")) {
    const auto verdicts = expected_verdicts(entry.path());
    if (verdicts.size() != 1) continue;
    const std::string verdict = *verdicts.begin();
    if (verdict != "compile_error" && verdict != "plan_error") continue;
    if (decided_on_the_device.contains(entry.path().filename().string())) continue;
    expected[entry.path()] = verdict;
  }
  // Host files in four disguises and more, two bombs, a plan too long, params too many and
  // kernels named like the harness's in three disguises.
  ASSERT_GE(expected.size(), 13U);

  bench_options options;
  options.root = source_root;
  options.task = "rmsnorm";
  options.skip_baseline = true;
  for (const auto& [file, verdict] : expected) options.candidates.push_back(file);
  // Short limits keep the bombs short: the memory bomb meets 1 GiB in seconds, the time bomb
  // the 8 s deadline.
  options.compile = sandbox();
  options.compile.timeout = std::chrono::seconds(8);
  options.compile.memory_bytes = std::uint64_t{1} << 30;
  const auto started = std::chrono::steady_clock::now();
  store records(dir_ / "home");
  const bench_report report = compile_task(options, records);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::set<fs::path> seen;
  for (const auto& r : report.results) {
    SCOPED_TRACE(r.file);
    ASSERT_TRUE(expected.contains(r.file));
    seen.insert(r.file);
    EXPECT_EQ(std::string(to_string(r.reason)), expected.at(r.file)) << r.message;
    EXPECT_EQ(r.status, "rejected");
    EXPECT_EQ(r.message.rfind(r.file, 0), 0U) << r.message;  // names the file first
    const std::string name = fs::path(r.file).filename().string();
    EXPECT_EQ(r.cubin_sha256.empty(), !decided_from_the_module.contains(name));
    if (decided_from_the_module.contains(name)) {
      EXPECT_NE(r.message.find("the prefix \"blaster_\" is kept for the harness's own kernels"),
                std::string::npos)
          << r.message;
    }
    if (name.find("bomb") != std::string::npos) {
      EXPECT_TRUE(r.message.find("--compile-timeout") != std::string::npos ||
                  r.message.find("--compile-memory") != std::string::npos)
          << r.message;
    }
  }
  EXPECT_EQ(seen.size(), expected.size());
  // Both bombs run side by side within the deadline, whatever else compiles.
  EXPECT_LT(seconds, 30.0);
}

}  // namespace
}  // namespace blaster
