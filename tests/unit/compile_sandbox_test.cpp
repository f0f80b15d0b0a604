// The compile sandbox: NVRTC in a child process of the blaster binary, under a deadline and an
// address-space cap. A template bomb ends as a refusal within its limit, with the child's peak
// memory under the cap; a cache hit starts no child; a refusal is never cached; the log is
// bounded; variants compile side by side, at most one child per hardware thread.
#include "core/compile_sandbox.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "benchmarking/candidate/candidate.hpp"
#include "core/compile_cache.hpp"
#include "core/error.hpp"
#include "core/file_confinement.hpp"
#include "core/file_io.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;
constexpr std::uint64_t gib = std::uint64_t{1} << 30;

compile_limits limits_with(std::chrono::milliseconds timeout, std::uint64_t memory_bytes) {
  compile_limits limits;
  limits.executable = BLASTER_BINARY;
  limits.timeout = timeout;
  limits.memory_bytes = memory_bytes;
  return limits;
}

compile_request request_of(std::string source, std::vector<std::string> names) {
  compile_request r;
  r.file_name = "bomb.cu";
  r.source = std::move(source);
  r.name_expressions = std::move(names);
  return r;
}

// Compile time without end at little memory: 2^DEPTH constexpr evaluations, each just under
// NVRTC's limit for one evaluation (tests/adversarial/constexpr_time_bomb.cu).
std::string time_bomb(int depth, std::string_view salt = "0") {
  return fmt::format(R"(
__host__ __device__ constexpr unsigned long long spin(unsigned long long n, unsigned long long s) {{
  for (unsigned long long i = 0; i < n; ++i) s += i ^ (s >> 3);
  return s;
}}
template <int D, unsigned long long I> struct burn {{
  static constexpr unsigned long long value = burn<D - 1, 2 * I>::value ^ burn<D - 1, 2 * I + 1>::value;
}};
template <unsigned long long I> struct burn<0, I> {{
  static constexpr unsigned long long value = spin(400000, I + {});
}};
extern "C" __global__ void k(unsigned long long* out) {{ out[0] = burn<{}, 0>::value; }}
)",
                     salt, depth);
}

// Memory without end: a binary tree of 2^40 distinct instantiations, every one kept
// (tests/adversarial/template_memory_bomb.cu).
constexpr std::string_view memory_bomb = R"(
template <int D, unsigned long long I> struct tree {
  static constexpr unsigned long long value = tree<D - 1, 2 * I>::value + tree<D - 1, 2 * I + 1>::value;
};
template <unsigned long long I> struct tree<0, I> { static constexpr unsigned long long value = I; };
extern "C" __global__ void k(unsigned long long* out) { out[0] = tree<40, 0>::value; }
)";

constexpr std::string_view small_kernel =
    "#include <cuda_fp16.h>\n"
    "template <int N>\n"
    "__global__ void scale(__half* out, const __half* in) {\n"
    "  out[threadIdx.x] = __float2half(__half2float(in[threadIdx.x]) * N);\n"
    "}\n";

class temp_home {
 public:
  temp_home() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("blaster-compile-sandbox-" + std::to_string(::getpid()) +
                                         "-" + std::to_string(counter++));
    fs::remove_all(path_);
    records_.emplace(path_);
    cache_.emplace(path_ / "cache", records_->cas());
  }
  ~temp_home() {
    cache_.reset();
    records_.reset();
    fs::remove_all(path_);
  }
  temp_home(const temp_home&) = delete;
  temp_home& operator=(const temp_home&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }
  [[nodiscard]] compile_cache& cache() { return *cache_; }
  [[nodiscard]] fs::path entry_of(const std::string& key) const {
    return path_ / "cache" / key.substr(0, 2) / (key + ".json");
  }

 private:
  fs::path path_;
  std::optional<store> records_;
  std::optional<compile_cache> cache_;
};

TEST(CompileSandbox, ItsOutputIsTheOutputOfNvrtcInProcess) {
  const compile_request request = request_of(std::string(small_kernel), {"scale<3>"});
  const compile_output here = compile(request);
  const compile_output there =
      compile_sandboxed(request, limits_with(std::chrono::seconds(60), 4 * gib));
  ASSERT_TRUE(here.ok) << here.log;
  ASSERT_TRUE(there.ok) << there.log << there.refusal;
  EXPECT_TRUE(there.refusal.empty());
  // The cubin and PTX name the working folder (.file, line tables), which differs from this
  // process's; from one sandboxed compile to the next they are the same bytes.
  const compile_output again =
      compile_sandboxed(request, limits_with(std::chrono::seconds(60), 4 * gib));
  EXPECT_EQ(again.cubin, there.cubin);
  EXPECT_EQ(again.ptx, there.ptx);
  EXPECT_EQ(there.ptx.find(fs::current_path().string()), std::string::npos);
  // The same log but for the time ptxas took.
  auto without_times = [](const std::string& log) {
    return std::regex_replace(log, std::regex("Compile time = [0-9.]+ ms"), "");
  };
  EXPECT_EQ(without_times(there.log), without_times(here.log));
  EXPECT_EQ(there.lowered_names, here.lowered_names);
  EXPECT_EQ(there.key, here.key);
  EXPECT_EQ(there.sources_sha256, here.sources_sha256);
  EXPECT_GT(there.peak_memory_bytes, 0U);
  EXPECT_LT(there.peak_memory_bytes, 4 * gib);
}

TEST(CompileSandbox, ATemplateBombEndsAtTheDeadline) {
  // About twenty minutes of work at flat memory; the deadline is 5 s.
  const compile_limits limits = limits_with(std::chrono::seconds(5), 4 * gib);
  const auto started = std::chrono::steady_clock::now();
  const compile_output out = compile_sandboxed(request_of(time_bomb(14), {"k"}), limits);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.cubin.empty());
  EXPECT_NE(out.refusal.find("the compile deadline of 5 s"), std::string::npos) << out.refusal;
  EXPECT_NE(out.refusal.find("--compile-timeout"), std::string::npos) << out.refusal;
  EXPECT_NE(out.log.find(out.refusal), std::string::npos) << out.log;
  EXPECT_GE(wall_s, 5.0);
  EXPECT_LT(wall_s, 8.0);
  EXPECT_LT(out.peak_memory_bytes, limits.memory_bytes);
  RecordProperty("wall_s", fmt::format("{:.2f}", wall_s));
  RecordProperty("peak_mib", static_cast<int>(out.peak_memory_bytes >> 20));
  std::printf("time bomb: stopped after %.2f s at a peak of %llu MiB\n", wall_s,
              static_cast<unsigned long long>(out.peak_memory_bytes >> 20));
}

TEST(CompileSandbox, ATemplateBombEndsAtTheMemoryCapAndStaysUnderIt) {
  if (!address_space_caps_apply) GTEST_SKIP() << "an AddressSanitizer build caps no address space";
  // Unchecked, it grows by hundreds of MB a second for as long as it may; the cap is 1 GiB and
  // the deadline far away, so only the cap can stop it in time.
  const compile_limits limits = limits_with(std::chrono::seconds(60), gib);
  const auto started = std::chrono::steady_clock::now();
  const compile_output out = compile_sandboxed(request_of(std::string(memory_bomb), {"k"}), limits);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.refusal.find("ran out of memory under the compile memory cap of 1 GiB"),
            std::string::npos)
      << out.refusal;
  EXPECT_NE(out.refusal.find("--compile-memory"), std::string::npos) << out.refusal;
  EXPECT_LE(out.peak_memory_bytes, limits.memory_bytes);
  EXPECT_GT(out.peak_memory_bytes, limits.memory_bytes / 2);  // it did grow to the cap
  EXPECT_LT(wall_s, 30.0);
  RecordProperty("wall_s", fmt::format("{:.2f}", wall_s));
  RecordProperty("peak_mib", static_cast<int>(out.peak_memory_bytes >> 20));
  std::printf("memory bomb: stopped after %.2f s at a peak of %llu MiB (cap %llu MiB)\n", wall_s,
              static_cast<unsigned long long>(out.peak_memory_bytes >> 20),
              static_cast<unsigned long long>(limits.memory_bytes >> 20));
}

TEST(CompileSandbox, ACacheHitStartsNoChild) {
  temp_home home;
  const compile_request request = request_of(std::string(small_kernel), {"scale<2>"});
  const compile_output first = compile_sandboxed_cached(
      request, &home.cache(), limits_with(std::chrono::seconds(60), 4 * gib));
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);

  // No executable to start: a hit must not need one, a miss must say so.
  compile_limits nothing_to_run = limits_with(std::chrono::seconds(60), 4 * gib);
  nothing_to_run.executable = home.path() / "no-such-blaster";
  const compile_output hit = compile_sandboxed_cached(request, &home.cache(), nothing_to_run);
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.cubin, first.cubin);
  EXPECT_EQ(hit.sources_sha256, first.sources_sha256);
  compile_request other = request;
  other.name_expressions = {"scale<5>"};
  EXPECT_THROW(static_cast<void>(compile_sandboxed_cached(other, &home.cache(), nothing_to_run)),
               error);
}

TEST(CompileSandbox, ARefusalIsNeverCached) {
  temp_home home;
  const compile_request request = request_of(time_bomb(14), {"k"});
  const compile_limits limits = limits_with(std::chrono::seconds(2), 4 * gib);
  const compile_output first = compile_sandboxed_cached(request, &home.cache(), limits);
  ASSERT_FALSE(first.refusal.empty());
  // Under a longer deadline it might finish: nothing of the first attempt may answer for it.
  EXPECT_FALSE(fs::exists(home.entry_of(first.key)));
  const compile_output again = compile_sandboxed_cached(request, &home.cache(), limits);
  EXPECT_FALSE(again.cache_hit);
  EXPECT_FALSE(again.refusal.empty());
}

TEST(CompileSandbox, TheLogIsValidUtf8AndBounded) {
  // Invalid bytes become U+FFFD, valid ones stay.
  EXPECT_EQ(bounded_log("a\xFF"
                        "b \xC3\xA9 \xE2\x82"),
            "a\xEF\xBF\xBD"
            "b \xC3\xA9 \xEF\xBF\xBD\xEF\xBF\xBD");
  // A long log keeps its head and its tail (where ptxas reports resources) and says what it cut.
  std::string lines;
  for (int i = 0; lines.size() < 300 * 1024; ++i) lines += fmt::format("line {} of the log\n", i);
  const std::string bounded = bounded_log(lines);
  EXPECT_LE(bounded.size(), max_log_bytes);
  EXPECT_EQ(bounded.rfind("line 0 of the log\n", 0), 0U);
  EXPECT_TRUE(bounded.ends_with(lines.substr(lines.rfind("line "))));
  EXPECT_NE(bounded.find("bytes of the log cut here"), std::string::npos);

  // NVRTC's own log, from a source that warns thousands of times.
  std::string source = "extern \"C\" __global__ void k(float* out) { out[0] = 1.0f; }\n";
  for (int i = 0; i < 3000; ++i) {
    source += fmt::format("#warning warning number {} of a candidate that fills the log\n", i);
  }
  const compile_output out =
      compile_sandboxed(request_of(source, {"k"}), limits_with(std::chrono::seconds(60), 4 * gib));
  EXPECT_LE(out.log.size(), max_log_bytes);
  EXPECT_NE(out.log.find("bytes of the log cut here"), std::string::npos) << out.log.size();
  EXPECT_NE(out.log.find("warning number 0 "), std::string::npos);
}

TEST(CompileSandbox, NameExpressionsCannotStartDirectives) {
  // Refused before any child starts: a new-line in a name expression would let NVRTC read a
  // directive of the plan's making.
  compile_limits limits = limits_with(std::chrono::seconds(60), 4 * gib);
  limits.executable = "/no/such/blaster";
  const compile_output out = compile_sandboxed(
      request_of(std::string(small_kernel), {"scale<1>\n#include \"/etc/passwd\"\n"}), limits);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.refusal.find("control character"), std::string::npos) << out.refusal;
}

TEST(CompileSandbox, WhereTheKernelCanTheChildSeesNoHostFile) {
  if (!file_confinement_available()) {
    GTEST_SKIP() << "this kernel has no Landlock: the include policy alone keeps host files out";
  }
  // A probe that the policy cannot see: __has_include pasted together by a macro. Confined to
  // the toolkit's folders, the child finds nothing, though the file is there.
  const fs::path planted =
      fs::temp_directory_path() / fmt::format("blaster-planted-{}.h", ::getpid());
  std::ofstream(planted) << "int planted;\n";
  const std::string source = fmt::format(
      "#define CAT(a, b) a##b\n"
      "#if CAT(__has_, include)(\"{}\")\n"
      "#error the planted file is visible\n"
      "#endif\n"
      "extern \"C\" __global__ void k(float* out) {{ out[0] = 1.0f; }}\n",
      planted.string());
  // In this process, unconfined, the probe works: the file is there to be found.
  const compile_output unconfined = compile(request_of(source, {"k"}));
  const compile_output out =
      compile_sandboxed(request_of(source, {"k"}), limits_with(std::chrono::seconds(60), 4 * gib));
  fs::remove(planted);
  EXPECT_NE(unconfined.log.find("the planted file is visible"), std::string::npos)
      << unconfined.log;
  EXPECT_TRUE(out.ok) << out.log;
  EXPECT_EQ(out.log.find("visible"), std::string::npos) << out.log;
}

// An inference engine's norm kernel as it is written upstream: CUB's block and warp primitives.
constexpr std::string_view cub_kernel = R"(
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda_fp16.h>
extern "C" __global__ void k(const float* x, float* out, int n) {
  using block = cub::BlockReduce<float, 256>;
  using warp = cub::WarpReduce<float>;
  __shared__ typename block::TempStorage block_storage;
  __shared__ typename warp::TempStorage warp_storage[8];
  const float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
  const float sum = block(block_storage).Sum(v);
  const float lane = warp(warp_storage[threadIdx.x / 32]).Sum(v);
  if (threadIdx.x == 0) out[0] = sum + VEC * lane;
}
)";

TEST(CompileSandbox, CubBlockAndWarpPrimitivesCompileUnlessAParamRenamesWhatThrustNamesBy) {
  const compile_limits limits = limits_with(std::chrono::seconds(120), 4 * gib);
  compile_request honest = request_of(std::string(cub_kernel), {"k"});
  honest.defines = {"VEC=4"};
  const compile_output out = compile_sandboxed(honest, limits);
  EXPECT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(out.cubin.empty());
  // A param is a -D define: one named after what thrust builds a header's name from is refused in
  // the child, before NVRTC runs.
  compile_request renamed = honest;
  renamed.defines = {"VEC=4", "system=etc"};
  const compile_output refused = compile_sandboxed(renamed, limits);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.refusal.find("the define system (a param of the plan)"), std::string::npos)
      << refused.refusal;
  EXPECT_TRUE(refused.cubin.empty());
}

TEST(CompileSandbox, VariantsCompileSideBySideOnePerHardwareThread) {
  // 2 x hardware_concurrency variants, each a bomb that takes its whole 2 s deadline: at one
  // child per hardware thread they take two rounds, about 4 s; one after another they would
  // take 4 s per hardware thread, all at once 2 s.
  const unsigned threads = std::max(1U, std::thread::hardware_concurrency());
  std::string salts;
  for (unsigned i = 0; i < 2 * threads; ++i) salts += (i == 0 ? "" : ", ") + std::to_string(i);
  static std::atomic<int> counter{0};
  const fs::path folder =
      fs::temp_directory_path() / fmt::format("blaster-pool-{}-{}", ::getpid(), counter++);
  fs::create_directories(folder);
  const fs::path file = folder / "pool.cu";
  std::ofstream(file) << "/* blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, "
                         "\"args\": [\"out\"]}],\n \"params\": {\"SALT\": ["
                      << salts << "]}}\n*/\n"
                      << time_bomb(14, "SALT");
  const auto started = std::chrono::steady_clock::now();
  const candidate_file c =
      load_candidate(file, "sm_90a", nullptr, limits_with(std::chrono::seconds(2), 4 * gib), {});
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fs::remove_all(folder);
  ASSERT_EQ(c.variants.size(), 2 * threads) << c.plan_error << c.compile_error;
  for (const auto& v : c.variants) {
    EXPECT_NE(v.compiled.refusal.find("deadline of 2 s"), std::string::npos) << v.compiled.refusal;
    EXPECT_EQ(v.compiled.refusal.rfind(file.string() + ": ", 0), 0U) << v.compiled.refusal;
  }
  EXPECT_GE(wall_s, 3.9);
  EXPECT_LT(wall_s, 7.0);
}

}  // namespace
}  // namespace blaster
