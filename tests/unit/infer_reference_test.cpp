// The float64 references of the inference suite's tasks, on values worked out by hand, through
// the real task.json files.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "benchmarking/gate/gate_data.hpp"
#include "core/dtype.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

using buffers = std::vector<std::pair<std::string, std::vector<double>>>;

// Runs the task's reference on one hand-made case; returns each output, filled with a value the
// reference must overwrite beforehand.
buffers run(const std::string& task_name, const std::map<std::string, double, std::less<>>& dims,
            const buffers& inputs,
            const std::vector<std::pair<std::string, std::size_t>>& outputs) {
  const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/" + task_name);
  const task_case c{.name = "hand", .note = "", .values = dims};
  buffers out;
  for (const auto& [name, size] : outputs)
    out.emplace_back(name, std::vector<double>(size, -12345.0));
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  for (const auto& [name, values] : inputs)
    io.inputs.emplace(name, std::span<const double>(values));
  for (auto& [name, values] : out) io.outputs.emplace(name, std::span<double>(values));
  find_reference(task.reference)(io);
  return out;
}

TEST(RmsNormReference, EachTokenIsScaledByItsOwnRootMeanSquareThenByTheWeight) {
  // Token 0: x = (3, 4), mean square 12.5; token 1: x = (0, 2), mean square 2.
  const auto out = run("rms_norm", {{"T", 2}, {"H", 2}},
                       {{"x", {3.0, 4.0, 0.0, 2.0}}, {"weight", {1.0, 0.5}}}, {{"out", 4}});
  const auto& o = out[0].second;
  const double eps = 1e-5;
  EXPECT_DOUBLE_EQ(o[0], 3.0 / std::sqrt(12.5 + eps));
  EXPECT_DOUBLE_EQ(o[1], 4.0 / std::sqrt(12.5 + eps) * 0.5);
  EXPECT_DOUBLE_EQ(o[2], 0.0);
  EXPECT_DOUBLE_EQ(o[3], 2.0 / std::sqrt(2.0 + eps) * 0.5);
}

TEST(RmsNormReference, OneElementComesOutAsTheWeightScaledByItsShareOfEps) {
  const auto out =
      run("rms_norm", {{"T", 1}, {"H", 1}}, {{"x", {-2.0}}, {"weight", {3.0}}}, {{"out", 1}});
  EXPECT_NEAR(out[0].second[0], -3.0, 1e-5);
  EXPECT_GT(out[0].second[0], -3.0) << "eps makes |out| a little less than the weight";
}

TEST(FusedAddRmsNormReference, TheSumIsAnOutputAndWhatIsNormalized) {
  // x + residual = (3, 4): the rms_norm case above, and the sum itself as residual_out.
  const auto out = run("fused_add_rms_norm", {{"T", 1}, {"H", 2}},
                       {{"x", {1.0, 6.0}}, {"residual", {2.0, -2.0}}, {"weight", {1.0, 0.5}}},
                       {{"out", 2}, {"residual_out", 2}});
  const double eps = 1e-5;
  EXPECT_DOUBLE_EQ(out[0].second[0], 3.0 / std::sqrt(12.5 + eps));
  EXPECT_DOUBLE_EQ(out[0].second[1], 4.0 / std::sqrt(12.5 + eps) * 0.5);
  EXPECT_EQ(out[1].second, (std::vector<double>{3.0, 4.0}));
}

TEST(SwigluReference, TheGateHalfGoesThroughSiluAndScalesTheUpHalf) {
  // Two tokens of I = 2: gates (0, 1) and (-1, 2), ups (5, 2) and (3, -1).
  const auto out = run("swiglu", {{"T", 2}, {"I", 2}},
                       {{"x", {0.0, 1.0, 5.0, 2.0, -1.0, 2.0, 3.0, -1.0}}}, {{"out", 4}});
  const auto& o = out[0].second;
  EXPECT_EQ(o[0], 0.0);
  EXPECT_NEAR(o[1], 0.7310585786300049 * 2.0, 1e-15);  // silu(1) = 1 / (1 + 1/e)
  EXPECT_NEAR(o[2], -0.2689414213699951 * 3.0, 1e-15);
  EXPECT_NEAR(o[3], 1.7615941559557649 * -1.0, 1e-15);  // silu(2) = 2 / (1 + e^-2)
}

TEST(RopeReference, EachTokenTurnsItsPairsByTheCacheRowOfItsPosition) {
  // D = 4: pairs (0, 2) and (1, 3). Position 1's row turns the first pair by 90 degrees and the
  // second by -45 (cos 0.5, sin -0.5, unnormalized); position 0's row is the identity.
  const auto out = run("rope", {{"T", 2}, {"QH", 1}, {"KH", 1}, {"D", 4}, {"P", 2}},
                       {{"positions", {1.0, 0.0}},
                        {"q", {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}},
                        {"k", {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0}},
                        {"cos_sin", {1.0, 1.0, 0.0, 0.0, 0.0, 0.5, 1.0, -0.5}}},
                       {{"q_out", 8}, {"k_out", 8}});
  EXPECT_EQ(out[0].second, (std::vector<double>{-3.0, 3.0, 1.0, 1.0, 5.0, 6.0, 7.0, 8.0}));
  EXPECT_EQ(out[1].second, (std::vector<double>{0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0}));
}

TEST(GemvReference, EachOutputIsItsWeightRowDottedWithTheToken) {
  // Two tokens of K = 3 against three weight rows.
  const auto out = run("gemv", {{"M", 2}, {"N", 3}, {"K", 3}},
                       {{"x", {1.0, 2.0, 3.0, -1.0, 0.0, 0.5}},
                        {"w", {1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 2.0, -1.0, 4.0}}},
                       {{"y", 6}});
  EXPECT_EQ(out[0].second, (std::vector<double>{1.0, 5.0, 12.0, -1.0, 0.5, 0.0}));
}

TEST(MoeRouteReference, TopTwoWithTiesToTheLowerIndexRenormalizedAndGroupedByExpert) {
  // Four experts. Token 0 ties at 2 between experts 1 and 3, token 2 ties everywhere: the lower
  // index goes first. Token 1's two are 3 and 1 apart: weights 1 / (1 + e^-2) and the rest.
  const auto out = run("moe_route", {{"T", 3}, {"E", 4}},
                       {{"logits", {0.0, 2.0, 1.0, 2.0, 3.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0}}},
                       {{"weights", 6}, {"experts", 6}, {"order", 6}, {"offsets", 5}});
  const auto& w = out[0].second;
  EXPECT_DOUBLE_EQ(w[0], 0.5);
  EXPECT_DOUBLE_EQ(w[1], 0.5);
  EXPECT_NEAR(w[2], 0.8807970779778823, 1e-15);
  EXPECT_NEAR(w[3], 0.11920292202211755, 1e-15);
  EXPECT_DOUBLE_EQ(w[4], 0.5);
  EXPECT_EQ(out[1].second, (std::vector<double>{1, 3, 0, 3, 0, 1}));
  // Slots 2 and 4 chose expert 0, slots 0 and 5 expert 1, nobody expert 2, slots 1 and 3 expert 3.
  EXPECT_EQ(out[2].second, (std::vector<double>{2, 4, 0, 5, 1, 3}));
  EXPECT_EQ(out[3].second, (std::vector<double>{0, 2, 4, 4, 6}));
}

TEST(LogitsTopkReference, HighestFirstAndTiesInIdOrder) {
  const auto out = run("logits_topk", {{"T", 2}, {"V", 5}, {"K", 3}},
                       {{"logits", {1.0, 3.0, 3.0, 0.0, 2.0, -1.0, -2.0, -1.0, -1.0, 5.0}}},
                       {{"values", 6}, {"ids", 6}});
  EXPECT_EQ(out[0].second, (std::vector<double>{3.0, 3.0, 2.0, 5.0, -1.0, -1.0}));
  EXPECT_EQ(out[1].second, (std::vector<double>{1.0, 2.0, 4.0, 4.0, 0.0, 2.0}));
}

TEST(EmbeddingGatherReference, EachTokenGetsItsIdsRow) {
  const auto out = run("embedding_gather", {{"T", 3}, {"V", 2}, {"H", 2}},
                       {{"ids", {1.0, 0.0, 1.0}}, {"table", {1.0, 2.0, 3.0, 4.0}}}, {{"out", 6}});
  EXPECT_EQ(out[0].second, (std::vector<double>{3.0, 4.0, 1.0, 2.0, 3.0, 4.0}));
}

// Each task, the symbol that counts its tokens, and the counts it must serve: prefills and
// decodes of 1 to 8192 tokens; decode's projection up to 16; logits, one row per sequence, for
// batches up to 1024.
struct served_task {
  std::string name;
  std::string tokens;
  std::vector<double> counts;
};
const std::vector<double> prefill = {1.0, 16.0, 128.0, 1024.0, 8192.0};
const std::vector<served_task> infer_tasks = {{"rms_norm", "T", prefill},
                                              {"fused_add_rms_norm", "T", prefill},
                                              {"swiglu", "T", prefill},
                                              {"rope", "T", prefill},
                                              {"gemv", "M", {1.0, 16.0}},
                                              {"moe_route", "T", prefill},
                                              {"logits_topk", "T", {1.0, 16.0, 128.0, 1024.0}},
                                              {"embedding_gather", "T", prefill},
                                              {"top_p_sample", "T", {1.0, 16.0, 128.0, 1024.0}}};

TEST(InferTasks, ServedShapesAndTheirDtypes) {
  for (const auto& served : infer_tasks) {
    SCOPED_TRACE(served.name);
    const task_spec task = load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/" + served.name);
    for (const auto& b : task.buffers) {
      // A sampler's random numbers are f32: bf16 would hold 256 of them in [0.5, 1).
      if (b.role == buffer_role::input && is_floating(b.type) && b.name != "u") {
        EXPECT_EQ(b.type, dtype::bf16) << b.name;
      }
    }
    std::vector<double> tokens;
    for (const auto& c : task.cases) tokens.push_back(c.values.at(served.tokens));
    for (const double t : served.counts) {
      EXPECT_NE(std::find(tokens.begin(), tokens.end(), t), tokens.end()) << t << " tokens";
    }
  }
}

// Inputs drawn and references computed for every case small enough for a unit test: nothing that
// the gate's task-design checks warn about (a constant output that would pass, a case too small
// to tell kernels apart).
TEST(InferTasks, TheirSmallCasesGiveTheGateNothingToWarnAbout) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("blaster-infer-tasks-" + std::to_string(::getpid()));
  // The elements of a case's largest buffer.
  auto largest = [](const task_case& c) {
    const auto& v = c.values;
    if (v.contains("QH"))
      return std::max(v.at("T") * (v.at("QH") + v.at("KH")), v.at("P")) * v.at("D");
    if (v.contains("K")) return std::max(v.at("M"), v.at("N")) * v.at("K");
    if (v.contains("I")) return v.at("T") * 2 * v.at("I");
    if (v.contains("V") && v.contains("H")) return std::max(v.at("T"), v.at("V")) * v.at("H");
    if (v.contains("V")) return v.at("T") * v.at("V");
    if (v.contains("H")) return v.at("T") * v.at("H");
    return v.at("T") * 8;  // moe_route: a token's 8 logits
  };
  for (const auto& served : infer_tasks) {
    SCOPED_TRACE(served.name);
    task_spec task = load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/" + served.name);
    std::erase_if(task.cases, [&](const task_case& c) { return largest(c) > 1.5e6; });
    ASSERT_GE(task.cases.size(), 2U);
    std::filesystem::create_directories(dir);
    const gate_data data(task, find_reference(task.reference), gate_seeds(11), dir,
                         {task.cases.front().name});
    EXPECT_EQ(data.checks().size(), 3 * task.cases.size());
    for (const auto& w : data.warnings()) ADD_FAILURE() << w;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blaster
