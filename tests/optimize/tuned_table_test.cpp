#include "benchmarking/tuned/tuned_table.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/launch_plan.hpp"
#include "temp_home.hpp"

namespace blaster {
namespace {

using key_pairs = std::vector<std::pair<std::string, std::string>>;

TEST(TunedTable, FileNamesAreKeyValuePairsWithBracketedCommas) {
  const key_pairs key = {{"E", "8"},
                         {"N", "14336"},
                         {"device_name", device_name_key("NVIDIA H200")},
                         {"dtype", "fp8_w8a8"},
                         {"block_shape", "[128, 128]"}};
  const std::string name = tuned_file_name(key);
  EXPECT_EQ(name, "E=8,N=14336,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json");
  EXPECT_EQ(parse_tuned_file_name(name), key);
  EXPECT_THROW(parse_tuned_file_name("E=8,N.json"), input_error);
  EXPECT_THROW(parse_tuned_file_name("E=8,block_shape=[128.json"), input_error);
  EXPECT_THROW(parse_tuned_file_name("E=8.txt"), input_error);
  EXPECT_THROW(static_cast<void>(tuned_file_name({{"dir/x", "1"}})), error);
}

// A table as an engine ships it: sizes as keys, the compiler's version beside them.
TEST(TunedTable, AnEnginesTableReadsAndPicksTheNearestSize) {
  const testing::temp_home home("tuned-engine");
  const auto file = home.path() / "E=8,N=14336,device_name=NVIDIA_H200.json";
  write_file_atomically(file, R"({
  "1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "num_warps": 4, "num_stages": 3},
  "4": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "num_warps": 4, "num_stages": 4},
  "2": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "num_warps": 4, "num_stages": 3},
  "4096": {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "num_warps": 8, "num_stages": 3},
  "triton_version": "3.1.0"
})");
  const tuned_table t = read_tuned_table(file);
  EXPECT_EQ(t.key_value("device_name"), "NVIDIA_H200");
  EXPECT_EQ(t.about.at("triton_version"), "3.1.0");
  ASSERT_EQ(t.entries.size(), 4U);
  EXPECT_EQ(t.entries[1].size, 2);  // ascending, whatever the file's order
  EXPECT_EQ(t.entries[0].params.at("BLOCK_SIZE_N"), "32");
  EXPECT_FALSE(t.entries[0].time_us);
  EXPECT_EQ(t.nearest(0)->size, 1);
  EXPECT_EQ(t.nearest(3)->size, 2) << "equally near 2 and 4: the smaller";
  EXPECT_EQ(t.nearest(2050)->size, 4) << "halfway between 4 and 4096: the smaller";
  EXPECT_EQ(t.nearest(2051)->size, 4096);
  EXPECT_EQ(t.nearest(100000)->size, 4096);
  EXPECT_EQ(tuned_table{}.nearest(1), nullptr);
}

TEST(TunedTable, BlastersTableKeepsItsMeasurementsThroughAWriteAndARead) {
  const testing::temp_home home("tuned-round-trip");
  tuned_table t;
  t.key = {{"hidden", "4096"},
           {"device_name", "NVIDIA_H200"},
           {"dtype", "bf16"},
           {"nvrtc", "13.0"},
           {"driver", "13000"}};
  t.about = {{"candidate", "rmsnorm_vec_regs.cu"}, {"evidence_sha256", "ab12"}};
  t.entries = {{.size = 1,
                .params = {{"VEC", "4"}, {"BLOCK", "32"}, {"LAYOUT", "rows"}, {"TAG", "007"}},
                .time_us = 2.5,
                .interval_us = std::make_pair(2.4, 2.6),
                .default_time_us = 3.75,
                .run_id = 4000001},
               {.size = 8192, .params = {{"VEC", "8"}, {"BLOCK", "256"}, {"LAYOUT", "rows"}}}};
  const auto path = write_tuned_table(home.path() / "tuned", t);
  EXPECT_EQ(path.filename(),
            "hidden=4096,device_name=NVIDIA_H200,dtype=bf16,nvrtc=13.0,driver=13000.json");
  // Numbers as numbers, so that an engine's loader takes the table as it takes its own.
  EXPECT_NE(read_file(path).find("\"VEC\": 4"), std::string::npos) << read_file(path);
  const tuned_table back = read_tuned_table(path);
  EXPECT_EQ(back.key, t.key);
  EXPECT_EQ(back.about, t.about);
  ASSERT_EQ(back.entries.size(), 2U);
  EXPECT_EQ(back.entries[0].params, t.entries[0].params);
  EXPECT_EQ(back.entries[0].time_us, 2.5);
  EXPECT_EQ(back.entries[0].interval_us, std::make_pair(2.4, 2.6));
  EXPECT_EQ(back.entries[0].default_time_us, 3.75);
  EXPECT_EQ(back.entries[0].run_id, 4000001);
  EXPECT_FALSE(back.entries[1].run_id);
  EXPECT_EQ(back.entries[1].params.at("BLOCK"), "256");
  EXPECT_FALSE(back.entries[1].time_us);

  tuned_table clash = t;
  clash.entries[0].params["time_us"] = "1";
  EXPECT_THROW(static_cast<void>(write_tuned_table(home.path(), clash)), error);
  clash = t;
  clash.entries[0].params["run_id"] = "1";
  EXPECT_THROW(static_cast<void>(write_tuned_table(home.path(), clash)), error);
}

// Every error names the file and the entry, and says what belongs there.
TEST(TunedTable, AnEntryGoesInItsPlaceBySizeInPlaceOfOneOfTheSameSize) {
  tuned_table t;
  for (const std::int64_t size : {128, 1, 8192}) {
    t.put({.size = size,
           .params = {{"THREADS", "256"}},
           .time_us = 1.0,
           .interval_us = {},
           .default_time_us = {},
           .run_id = {}});
  }
  t.put({.size = 128,
         .params = {{"THREADS", "512"}},
         .time_us = 2.0,
         .interval_us = {},
         .default_time_us = {},
         .run_id = {}});
  ASSERT_EQ(t.entries.size(), 3U);
  EXPECT_EQ(t.entries[0].size, 1);
  EXPECT_EQ(t.entries[1].size, 128);
  EXPECT_EQ(t.entries[1].params.at("THREADS"), "512");
  EXPECT_EQ(t.entries[2].size, 8192);
}

TEST(TunedTable, AMalformedTableIsAnInputErrorThatNamesTheEntry) {
  const testing::temp_home home("tuned-bad");
  auto message_of = [&](const std::string& content) {
    const auto file = home.path() / "N=1,device_name=X.json";
    write_file_atomically(file, content);
    try {
      static_cast<void>(read_tuned_table(file));
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of(R"({"16": 4})").find("16: must be an object"), std::string::npos);
  EXPECT_NE(message_of(R"({"16": {"VEC": [4]}})").find("16.VEC"), std::string::npos);
  EXPECT_NE(message_of(R"({"16": {"time_us": "fast"}})").find("microseconds"), std::string::npos);
  EXPECT_NE(message_of(R"({"16": {"interval_us": [1]}})").find("[low, high]"), std::string::npos);
  EXPECT_NE(
      message_of(R"({"16": {"run_id": 1.5}})").find("16.run_id: must be the number of the run"),
      std::string::npos);
  EXPECT_NE(message_of(R"({"16": {}, "016": {}})").find("twice"), std::string::npos);
  EXPECT_NE(message_of(R"({"-4": {}})").find("neither a size"), std::string::npos);
  EXPECT_NE(message_of(R"([1, 2])").find("object of sizes"), std::string::npos);
  EXPECT_NE(message_of(R"({"16": {})").find("invalid JSON"), std::string::npos);
}

// Every table checked in under kernels/<task>/tuned/<candidate>/ reads, is its candidate's, and
// holds only configurations of that candidate's params: a table bench would otherwise refuse
// only on a GPU.
TEST(TunedTable, EveryCheckedInTableReadsAndHoldsItsCandidatesConfigurations) {
  namespace fs = std::filesystem;
  const fs::path kernels = fs::path(BLASTER_SOURCE_DIR) / "kernels";
  int tables = 0;
  for (const auto& file : fs::recursive_directory_iterator(kernels)) {
    if (file.path().extension() != ".json" ||
        file.path().parent_path().parent_path().filename() != "tuned") {
      continue;
    }
    SCOPED_TRACE(file.path().string());
    const tuned_table table = read_tuned_table(file.path());
    const fs::path candidate = file.path().parent_path().parent_path().parent_path() /
                               (file.path().parent_path().filename().string() + ".cu");
    ASSERT_EQ(table.about.at("candidate"), candidate.filename().string());
    const auto space =
        expand_params(parse_launch_plan(read_file(candidate), candidate.filename().string()));
    ASSERT_FALSE(table.entries.empty());
    for (const tuned_entry& e : table.entries) {
      EXPECT_NE(std::find(space.begin(), space.end(), e.params), space.end())
          << "the entry of " << e.size << " is no configuration of the candidate";
      ASSERT_TRUE(e.time_us.has_value());
      if (e.interval_us) {
        EXPECT_LE(e.interval_us->first, e.interval_us->second);
      }
    }
    ++tables;
  }
  EXPECT_GE(tables, 7) << "the tables of rms_norm, fused_add_rms_norm, rope and swiglu";
}

}  // namespace
}  // namespace blaster
