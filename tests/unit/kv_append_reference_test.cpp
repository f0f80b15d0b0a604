// The in-place append's reference and its contract: the caches come back as drawn with the new
// rows at their slots; the gate draws an inout buffer as an input and checks it as an output.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "benchmarking/gate/gate_data.hpp"
#include "tasks/reference.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

const std::string tasks = std::string(BLASTER_SOURCE_DIR) + "/tasks/";

TEST(KvAppendReference, NewRowsLandInTheirSlotsAndTheRestIsKept) {
  // Two tokens of one head of two into a cache of three slots: token 0 to slot 2, token 1 to 0.
  const task_spec task = load_task(tasks + "kv_append");
  const task_case c{
      .name = "hand", .note = "", .values = {{"T", 2}, {"KH", 1}, {"D", 2}, {"BS", 1}, {"NB", 3}}};
  const std::vector<double> key = {1, 2, 3, 4};
  const std::vector<double> value = {-1, -2, -3, -4};
  const std::vector<double> slots = {2, 0};
  const std::vector<double> k_before = {10, 11, 12, 13, 14, 15};
  const std::vector<double> v_before = {20, 21, 22, 23, 24, 25};
  std::vector<double> k_after(6, -7.0);
  std::vector<double> v_after(6, -7.0);
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  io.inputs = {{"key", key},
               {"value", value},
               {"slot_mapping", slots},
               {"k_cache", k_before},
               {"v_cache", v_before}};
  io.outputs = {{"k_cache", k_after}, {"v_cache", v_after}};
  find_reference(task.reference)(io);
  EXPECT_EQ(k_after, (std::vector<double>{3, 4, 12, 13, 1, 2}));
  EXPECT_EQ(v_after, (std::vector<double>{-3, -4, 22, 23, -1, -2}));
}

TEST(KvAppendContract, TheCachesAreInoutAndTheSlotsDistinct) {
  const task_spec task = load_task(tasks + "kv_append");
  EXPECT_EQ(task.find_buffer("k_cache")->role, buffer_role::inout);
  EXPECT_EQ(task.find_buffer("v_cache")->role, buffer_role::inout);
  EXPECT_EQ(task.find_buffer("slot_mapping")->init.kind, "distinct");
  const auto dir =
      std::filesystem::temp_directory_path() / ("blaster-kv-append-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  task_spec small = task;
  // Every case but the two largest: no task-design warning on any.
  std::erase_if(small.cases,
                [](const task_case& c) { return c.name == "t8192" || c.name == "t1024"; });
  {
    const gate_data data(small, find_reference(small.reference), gate_seeds(3), dir, {"full"});
    for (const auto& w : data.warnings()) ADD_FAILURE() << w;
    for (const auto& check : data.checks()) {
      // Drawn like an input, checked like an output.
      auto named = [](const std::vector<buffer_slot>& slots, const std::string& name) {
        return std::count_if(slots.begin(), slots.end(),
                             [&](const buffer_slot& s) { return s.buffer == name; });
      };
      EXPECT_EQ(named(check.inputs, "k_cache"), 1);
      EXPECT_EQ(named(check.outputs, "k_cache"), 1);
      EXPECT_EQ(named(check.outputs, "key"), 0);
      EXPECT_EQ(check.outputs.size(), 2U);
    }
    EXPECT_EQ(data.checks().size(), 3 * small.cases.size());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blaster
