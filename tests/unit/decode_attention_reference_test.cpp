// The decode attention task: its float64 reference on a paged cache worked out by hand, and its
// cases drawn into gate data with nothing for the gate's task-design checks to warn about.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "benchmarking/gate/gate_data.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

task_spec load_decode_attention() {
  return load_task(std::string(BLASTER_SOURCE_DIR) + "/tasks/decode_attention");
}

TEST(DecodeAttentionReference, PagedGroupedQueryHeadsOnValuesWorkedOutByHand) {
  // Three sequences, 4 query heads on 2 KV heads (heads 0 and 1 read KV head 0), blocks of 2
  // tokens, 3 physical blocks. Sequence 0 (3 tokens) lives in blocks 2 then 0, sequence 1 (one
  // token) in block 1, sequence 2 is empty. Rows no sequence uses hold 100: reading one shows.
  const task_spec task = load_decode_attention();
  const task_case c{.name = "hand",
                    .note = "",
                    .values = {{"B", 3},
                               {"QH", 4},
                               {"KH", 2},
                               {"D", 2},
                               {"BS", 2},
                               {"C", 3},
                               {"MAXB", 2},
                               {"NB", 3},
                               {"scale", 0.5}}};
  // [block][slot][kv head][d]
  const std::vector<double> k = {0,   -1,  0,   0,   100, 100, 100, 100, 3, 3, -3, 3,
                                 100, 100, 100, 100, 0,   0,   1,   -1,  2, 1, 1,  1};
  const std::vector<double> v = {1,   1,   4,   4,   100, 100, 100, 100, 7, -3, 0.5, 9,
                                 100, 100, 100, 100, 1,   0,   2,   0,   0, 1,  0,   -2};
  const std::vector<double> q = {1, 0, 0, 2, 2, 2, 0, 0,   // sequence 0, heads 0 to 3
                                 5, 5, 5, 5, 5, 5, 5, 5,   // sequence 1: one token, any query
                                 1, 1, 1, 1, 1, 1, 1, 1};  // sequence 2: no token
  const std::vector<double> block_table = {2, 0, 1, 2, 0, 0};
  const std::vector<double> seq_lens = {3, 1, 0};
  std::vector<double> out(24, -12345.0);
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  io.inputs.emplace("q", std::span<const double>(q));
  io.inputs.emplace("k_cache", std::span<const double>(k));
  io.inputs.emplace("v_cache", std::span<const double>(v));
  io.inputs.emplace("block_table", std::span<const double>(block_table));
  io.inputs.emplace("seq_lens", std::span<const double>(seq_lens));
  io.outputs.emplace("out", std::span<double>(out));
  find_reference(task.reference)(io);

  const double e = std::exp(1.0);
  const double e2 = e * e;
  // Head 0: scores 0.5 * q . k = (0, 1, 0) over values (1, 0), (0, 1), (1, 1).
  EXPECT_NEAR(out[0], 2.0 / (2.0 + e), 1e-15);
  EXPECT_NEAR(out[1], (e + 1.0) / (2.0 + e), 1e-15);
  // Head 1: scores (0, 1, -1).
  EXPECT_NEAR(out[2], (1.0 + 1.0 / e) / (1.0 + e + 1.0 / e), 1e-15);
  EXPECT_NEAR(out[3], (e + 1.0 / e) / (1.0 + e + 1.0 / e), 1e-15);
  // Head 2 reads KV head 1: scores (0, 2, 0) over values (2, 0), (0, -2), (4, 4).
  EXPECT_NEAR(out[4], 6.0 / (2.0 + e2), 1e-15);
  EXPECT_NEAR(out[5], (4.0 - 2.0 * e2) / (2.0 + e2), 1e-15);
  // Head 3's query is zero: every score 0, the plain mean.
  EXPECT_NEAR(out[6], 2.0, 1e-15);
  EXPECT_NEAR(out[7], 2.0 / 3.0, 1e-15);
  // One token: its value, whatever the score; then an empty sequence: zeros.
  EXPECT_EQ(std::vector<double>(out.begin() + 8, out.end()),
            (std::vector<double>{7, -3, 7, -3, 0.5, 9, 0.5, 9, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(DecodeAttentionTask, TablesFitTheContextAndTimedCasesAttendToAllOfIt) {
  const task_spec task = load_decode_attention();
  const buffer_spec& lengths = *task.find_buffer("seq_lens");
  for (const auto& c : task.cases) {
    SCOPED_TRACE(c.name);
    const double block_size = task.value(c, "BS");
    EXPECT_EQ(task.value(c, "MAXB"), std::ceil(task.value(c, "C") / block_size));
    EXPECT_GE(task.value(c, "NB"), task.value(c, "B") * task.value(c, "MAXB"));
    EXPECT_EQ(task.value(c, "D"), 128.0);
    // The roofline counts C tokens per sequence: exact where every sequence is that long.
    if (c.large) {
      const distribution d = task.input_distribution(lengths, c);
      EXPECT_EQ(d.low, task.value(c, "C"));
      EXPECT_EQ(d.high, task.value(c, "C"));
    }
  }
}

// Every case that is checked on every run, and every large case with its batch cut to one
// sequence and its cache to that sequence's blocks (the same context and heads, so the same
// spread of outputs; one case per such shape): drawn, computed, and nothing the gate warns
// about, at 32k context too.
TEST(DecodeAttentionTask, ItsCasesGiveTheGateNothingToWarnAbout) {
  task_spec task = load_decode_attention();
  std::set<std::pair<double, double>> shapes;  // (QH, C) of the large cases kept
  std::vector<task_case> cases;
  for (task_case c : task.cases) {
    if (c.large) {
      if (!shapes.emplace(task.value(c, "QH"), task.value(c, "C")).second) continue;
      c.large = false;
      c.values["B"] = 1;
      c.values["NB"] = c.values.at("MAXB");
    }
    cases.push_back(std::move(c));
  }
  task.cases = std::move(cases);
  ASSERT_EQ(shapes.size(), 5U) << "32k, 4k, 1k and 8k context, and 8k with 64 heads";
  const auto dir = std::filesystem::temp_directory_path() /
                   ("blaster-decode-attention-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    const gate_data data(task, find_reference(task.reference), gate_seeds(11), dir,
                         {task.canonical_case});
    EXPECT_EQ(data.checks().size(), 3 * task.cases.size());
    for (const auto& w : data.warnings()) ADD_FAILURE() << w;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blaster
