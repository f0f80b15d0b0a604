// The memory's keys: a GPU's model as the memory names it, and steps that a store of the
// previous schema holds, which migrate with the model of the GPU their judging run names and the
// bound their diagnosis begins with.
#include <gtest/gtest.h>

#include "evidence/database.hpp"
#include "evidence/store.hpp"
#include "evidence/store_schema.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/temp_home.hpp"

namespace blaster {
namespace {

TEST(GpuModel, DropsTheVendorAndTheMemoryWordsAndKeepsWhatTellsCardsApart) {
  EXPECT_EQ(gpu_model("NVIDIA H200"), "H200");
  EXPECT_EQ(gpu_model("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(gpu_model("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(gpu_model("NVIDIA A100-SXM4-80GB"), "A100-SXM4");
  EXPECT_EQ(gpu_model("NVIDIA GeForce RTX 4090"), "GeForce RTX 4090");
  EXPECT_EQ(gpu_model("H100"), "H100");  // a model is its own model
  EXPECT_EQ(gpu_model(""), "");
}

TEST(OptimizationMemory, StepsOfTheStoreBeforeMigrateWithTheirGpuAndBound) {
  const testing::temp_home home("memory-v8");
  const std::string digest(64, 'a');
  {
    // What a blaster of schema version 8 wrote: an optimize run, the bench run that judged its
    // steps on an H100, a passing step with its diagnosis and a rejected one.
    database old(home.path() / "blaster.db");
    old.migrate(store_schema().first(8));
    old.exec(
        "INSERT INTO runs(id, started_at, command, task, status, device_json) VALUES "
        "(1, '2026-01-01T00:00:00.000Z', 'blaster optimize --task rmsnorm', 'rmsnorm', "
        "'completed', NULL), "
        "(2, '2026-01-01T00:00:01.000Z', 'blaster bench --task rmsnorm', 'rmsnorm', 'completed', "
        "'{\"name\":\"NVIDIA H100 80GB HBM3\",\"nvrtc\":\"13.0\"}')");
    old.exec(
        "INSERT INTO optimize_steps(run_id, step, task, status, reason, time_us, reward, "
        "diagnosis, at_s, elapsed_s, bench_run_id, hypothesis) VALUES "
        "(1, 1, 'rmsnorm', 'ok', NULL, 50.0, 1.9, 'bandwidth-bound (DRAM at 80% of peak)', 1.0, "
        "1.0, 2, 'vectorize'), "
        "(1, 2, 'rmsnorm', 'wrongresult', 'wrong_result', NULL, 0, NULL, 2.0, 1.0, 2, 'skip'), "
        "(1, 3, 'rmsnorm', 'ok', NULL, 60.0, 1.5, NULL, 3.0, 1.0, 2, 'no counters')");
    ASSERT_EQ(old.user_version(), 8);
  }
  store records(home.path());
  const auto steps = optimization_memory(records).steps_of(1);
  ASSERT_EQ(steps.size(), 3U);
  EXPECT_EQ(steps[0].hypothesis, "vectorize");
  EXPECT_EQ(steps[0].gpu, "H100");
  EXPECT_EQ(steps[0].bound, "bandwidth-bound");
  EXPECT_EQ(steps[0].improved_bound, "") << "never recorded: not made up";
  EXPECT_EQ(steps[1].gpu, "H100");
  EXPECT_EQ(steps[1].bound, "") << "a rejected step was never timed";
  EXPECT_EQ(steps[2].bound, "unknown");
  const auto entries = optimization_memory(records).recall(
      {.task = "rmsnorm", .tag = std::nullopt, .exclude_run = std::nullopt, .limit = 10});
  ASSERT_EQ(entries.size(), 3U);
  const nlohmann::json j = to_json(entries[0]);
  EXPECT_EQ(j.at("gpu"), "H100");
  EXPECT_EQ(j.at("bound"), "bandwidth-bound");
  EXPECT_EQ(j.at("improved_bound"), "");
}

}  // namespace
}  // namespace blaster
