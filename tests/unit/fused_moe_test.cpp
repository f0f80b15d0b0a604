// The fused_moe task: its float64 reference on values worked out by hand and against a plain
// loop, its contract (Mixtral's shape at the engines' batch sizes, each token's experts
// distinct), and the Triton candidate's plan, whose scratch and grid must hold the longest
// padded list of sorted slots at every block size.
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/gate/gate_data.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/frontends/triton_frontend.hpp"
#include "tasks/drawn_cases.hpp"
#include "tasks/input_generator.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

const std::string root = BLASTER_SOURCE_DIR;

// C for one hand-made case, every element first set to NaN so that one the reference leaves
// alone shows.
std::vector<double> reference_c(const task_spec& task, const task_case& c,
                                const std::vector<double>& a, const std::vector<double>& w,
                                const std::vector<double>& ids) {
  std::vector<double> out(static_cast<std::size_t>(task.elements(*task.find_buffer("C"), c)),
                          std::numeric_limits<double>::quiet_NaN());
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  io.inputs = {{"A", a}, {"W", w}, {"topk_ids", ids}};
  io.outputs = {{"C", out}};
  find_reference(task.reference)(io);
  return out;
}

TEST(FusedMoeReference, EachSlotIsItsTokenAgainstItsExpertsRows) {
  // Two tokens of K=2, three experts of 2N=2 rows each, two experts per token.
  const task_spec task = load_task(root, "fused_moe");
  const task_case c{
      .name = "hand", .note = "", .values = {{"E", 3}, {"N", 1}, {"K", 2}, {"TOPK", 2}, {"M", 2}}};
  const std::vector<double> a = {1, 2,              // token 0
                                 3, -1};            // token 1
  const std::vector<double> w = {1,   0,   0,  1,   // expert 0: rows (1, 0), (0, 1)
                                 2,   1,   1,  -1,  // expert 1
                                 0.5, 0.5, -1, 3};  // expert 2
  const std::vector<double> ids = {2, 0,            // token 0: experts 2 and 0
                                   1, 2};           // token 1: experts 1 and 2
  EXPECT_EQ(reference_c(task, c, a, w, ids), (std::vector<double>{1.5, 5,    // token 0 by expert 2
                                                                  1, 2,      // token 0 by expert 0
                                                                  5, 4,      // token 1 by expert 1
                                                                  1, -6}));  // token 1 by expert 2
}

TEST(FusedMoeReference, TilesAndBlocksOfKAddUpToThePlainSum) {
  // 140 rows (two tiles of 128), K = 1030 (two blocks of 1024), 7 tokens (a step of 4 and one
  // of 3), top-3 of 5 experts with expert 4 unused: small integers, so every sum is exact in
  // any order.
  const task_spec task = load_task(root, "fused_moe");
  const std::int64_t experts = 5;
  const std::int64_t rows = 140;
  const std::int64_t depth = 1030;
  const std::int64_t tokens = 7;
  const std::int64_t topk = 3;
  const task_case c{
      .name = "hand",
      .note = "",
      .values = {{"E", experts}, {"N", rows / 2}, {"K", depth}, {"TOPK", topk}, {"M", tokens}}};
  std::uint32_t state = 12345;
  auto small = [&] {
    state = state * 1664525U + 1013904223U;
    return static_cast<double>(static_cast<int>(state >> 29U) - 3);  // -3 .. 4
  };
  std::vector<double> a(static_cast<std::size_t>(tokens * depth));
  std::vector<double> w(static_cast<std::size_t>(experts * rows * depth));
  for (double& v : a) v = small();
  for (double& v : w) v = small();
  const std::vector<double> ids = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 0, 2, 3, 2, 1, 0, 3, 1, 2, 0, 3};
  const std::vector<double> out = reference_c(task, c, a, w, ids);
  for (std::int64_t s = 0; s < tokens * topk; ++s) {
    const auto e = static_cast<std::int64_t>(ids[static_cast<std::size_t>(s)]);
    for (std::int64_t n = 0; n < rows; ++n) {
      double sum = 0.0;
      for (std::int64_t k = 0; k < depth; ++k) {
        sum += a[static_cast<std::size_t>(s / topk * depth + k)] *
               w[static_cast<std::size_t>((e * rows + n) * depth + k)];
      }
      ASSERT_EQ(out[static_cast<std::size_t>(s * rows + n)], sum) << "slot " << s << " row " << n;
    }
  }
}

TEST(FusedMoeReference, AnIdThatIsNoExpertIsRefused) {
  const task_spec task = load_task(root, "fused_moe");
  const task_case c{
      .name = "hand", .note = "", .values = {{"E", 2}, {"N", 1}, {"K", 1}, {"TOPK", 1}, {"M", 2}}};
  EXPECT_THROW(static_cast<void>(reference_c(task, c, {1, 1}, {1, 1, 1, 1}, {0, 2})), input_error);
  EXPECT_THROW(static_cast<void>(reference_c(task, c, {1, 1}, {1, 1, 1, 1}, {-1, 0})), input_error);
}

TEST(FusedMoeTask, ServesMixtralsShapeAtTheEnginesBatchSizes) {
  const task_spec task = load_task(root, "fused_moe");
  EXPECT_EQ(task.canonical_case, "m256");
  for (const auto& [name, tokens] : std::vector<std::pair<std::string, double>>{
           {"m1", 1}, {"m16", 16}, {"m256", 256}, {"m1024", 1024}, {"m4096", 4096}}) {
    SCOPED_TRACE(name);
    const task_case& c = task.find_case(name);
    EXPECT_EQ(task.describe(c), fmt::format("E=8 N=14336 K=4096 TOPK=2 M={}", tokens));
    // 1.9 GB of weights: checked when timed, as decode attention's served cases are.
    EXPECT_TRUE(c.large);
    EXPECT_EQ(task.buffer_bytes(*task.find_buffer("W"), c), std::int64_t{8} * 28672 * 4096 * 2);
  }
  // Every case but the largest would fit the limit of a case checked on every run.
  const task_case& most = task.find_case("m4096");
  std::int64_t bytes = 0;
  for (const auto& b : task.buffers) bytes += task.buffer_bytes(b, most);
  EXPECT_GT(bytes, max_checked_case_bytes);
  // The cases checked on every run: odd sizes, idle experts, one expert, one token.
  std::set<std::string> checked;
  for (const auto& c : task.cases) {
    if (!c.large) checked.insert(c.name);
  }
  EXPECT_EQ(checked, (std::set<std::string>{"mid", "single", "odd", "tails", "idle_experts",
                                            "two_experts", "one_expert"}));
  const task_case& odd = task.find_case("odd");
  EXPECT_NE(static_cast<std::int64_t>(task.value(odd, "K")) % 8, 0);
  EXPECT_NE(2 * static_cast<std::int64_t>(task.value(odd, "N")) % 16, 0);
  EXPECT_EQ(task.data_dtype(), "bf16");
}

// Each token's experts, as every case and the cases drawn from three seeds draw them: distinct,
// within the experts, and within the case's own range where it narrows it.
TEST(FusedMoeTask, EveryDrawGivesEachTokenDistinctExperts) {
  task_spec task = load_task(root, "fused_moe");
  for (std::uint64_t seed = 1; seed <= 3; ++seed) add_drawn_cases(task, seed);
  const buffer_spec& ids = *task.find_buffer("topk_ids");
  for (const auto& c : task.cases) {
    SCOPED_TRACE(c.name);
    const distribution d = task.input_distribution(ids, c);
    const auto topk = static_cast<std::int64_t>(task.value(c, "TOPK"));
    const auto tokens = static_cast<std::int64_t>(task.value(c, "M"));
    const host_tensor drawn = generate_input(task, ids, c, derive_seed(7, c.name, "topk_ids"));
    ASSERT_EQ(static_cast<std::int64_t>(drawn.values.size()), tokens * topk);
    std::set<double> used;
    for (std::int64_t m = 0; m < tokens; ++m) {
      std::set<double> row;
      for (std::int64_t j = 0; j < topk; ++j) {
        const double e = drawn.values[static_cast<std::size_t>(m * topk + j)];
        EXPECT_GE(e, d.low);
        EXPECT_LE(e, d.high);
        EXPECT_LT(e, task.value(c, "E"));
        row.insert(e);
        used.insert(e);
      }
      EXPECT_EQ(static_cast<std::int64_t>(row.size()), topk) << "token " << m;
    }
    if (c.name == "idle_experts") {
      EXPECT_EQ(used, (std::set<double>{2, 3, 4, 5, 6}));
    } else if (c.name == "two_experts") {
      EXPECT_EQ(used, (std::set<double>{3, 4}));
    } else if (c.name == "one_expert") {
      EXPECT_EQ(used, (std::set<double>{5}));
    }
  }
}

TEST(FusedMoeTask, ItsSmallCasesGiveTheGateNothingToWarnAbout) {
  task_spec task = load_task(root, "fused_moe");
  // "mid" holds 34 MB of weights: its outputs spread as the others' do, at a cost a unit test
  // need not pay.
  std::erase_if(task.cases, [](const task_case& c) { return c.large || c.name == "mid"; });
  const auto dir =
      std::filesystem::temp_directory_path() / ("blaster-fused-moe-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    const gate_data data(task, find_reference(task.reference), gate_seeds(5), dir, {"odd"});
    EXPECT_EQ(data.checks().size(), 3 * task.cases.size());
    for (const auto& w : data.warnings()) ADD_FAILURE() << w;
  }
  std::filesystem::remove_all(dir);
}

// The plan sizes sorted_ids for M*TOPK slots and, for each expert a token reaches (at most
// min(E, M*TOPK)), a last block short by at most BLOCK_SIZE_M - 1; block_experts for a block of
// each BLOCK_SIZE_M of those, and the product's grid for every such block times the column
// tiles. Worked out here for two cases and two block sizes.
TEST(FusedMoeTritonPlan, ScratchAndGridHoldTheLongestPaddedList) {
  const task_spec task = load_task(root, "fused_moe");
  const std::string file = root + "/kernels/fused_moe/fused_moe_triton.py";
  const launch_plan plan = parse_triton_plan(read_file(file), file);
  ASSERT_EQ(plan.launch.size(), 2U);
  std::vector<std::string> keys;
  for (const auto& [name, values] : plan.params) keys.push_back(name);
  EXPECT_EQ(keys, (std::vector<std::string>{"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                            "GROUP_SIZE_M", "num_warps", "num_stages"}))
      << "the keys of the engines' tables";

  const auto types = plan_argument_types(plan, task);
  frontend_kernel reported;
  for (const kernel_argument& a : types.front()) {
    reported.parameters.push_back({a.pointer ? 8U : 4U, a.pointer ? 'u' : 's'});
  }
  reported.block = std::array<unsigned, 3>{128, 1, 1};
  struct expected {
    std::string case_name;
    std::string block_m;
    std::string block_n;
    std::int64_t ids;  // the longest padded list
    unsigned grid;     // blocks of it times column tiles
  };
  // m1: 2 slots, 2 experts: 2 + 2 * 15 = 32 ids, 2 blocks of 16, 28672 / 64 = 448 tiles.
  // m4096: 8192 slots, 8 experts: 8192 + 8 * 63 = 8696 ids, 136 blocks of 64, 224 tiles of 128.
  for (const expected& e :
       {expected{"m1", "16", "64", 32, 2 * 448}, expected{"m4096", "64", "128", 8696, 136 * 224}}) {
    SCOPED_TRACE(e.case_name);
    candidate_variant v;
    v.params = {{"BLOCK_SIZE_M", e.block_m}, {"BLOCK_SIZE_N", e.block_n}, {"BLOCK_SIZE_K", "64"},
                {"GROUP_SIZE_M", "1"},       {"num_warps", "4"},          {"num_stages", "3"}};
    for (const auto& step : plan.launch) {
      v.kernels.push_back(step.kernel);
      v.compiled.lowered_names[step.kernel] = step.kernel;
      v.compiled.kernels[step.kernel] = reported;
    }
    const resolved_plan resolved = resolve_plan(plan, v, task, task.find_case(e.case_name));
    const std::int64_t block_m = std::stoll(e.block_m);
    EXPECT_EQ(resolved.scratch, (std::vector<std::pair<std::string, std::int64_t>>{
                                    {"sorted_ids", e.ids * 4},
                                    {"block_experts", (e.ids + block_m - 1) / block_m * 4},
                                    {"padded_count", 4}}));
    ASSERT_EQ(resolved.launches.size(), 2U);
    EXPECT_EQ(resolved.launches[0].grid, (std::array<unsigned, 3>{1, 1, 1})) << "one program";
    EXPECT_EQ(resolved.launches[1].grid, (std::array<unsigned, 3>{e.grid, 1, 1}));
    // The stage and the longest list are the last two arguments.
    const auto& args = resolved.launches[1].args;
    EXPECT_EQ(args[args.size() - 2].integer, e.ids);
    EXPECT_EQ(resolved.launches[0].args.back().integer, 0);
    EXPECT_EQ(args.back().integer, 1);
  }
}

}  // namespace
}  // namespace blaster
