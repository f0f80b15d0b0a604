// A run's GPUs without a GPU: a stand-in worker lists two GPUs and answers each probe with the GPU
// its CUDA_VISIBLE_DEVICES shows it, so that choosing the lanes, showing each worker its GPU alone,
// probing them side by side and what the report says of them can be checked here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/runner/gpu_lanes.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

class GpuLanes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("blaster-gpu-lanes-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("BLASTER_LOCK_DIR", dir_.c_str(), 1);  // the GPUs' locks, this test's own
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    for (const auto& [visible, uuid] : {std::pair{"0", "GPU-aa"}, std::pair{"1", "GPU-bb"}}) {
      device_probe p;
      p.device.name = "NVIDIA H200";
      p.device.uuid = uuid;
      p.device.compute_major = 9;
      p.memory.copy.bytes_per_second = 4.0e12;
      answer(std::string("probe-") + visible, {{"probe", to_json(p)}});
      listed_.push_back(to_json(p.device));
    }
    answer("devices", {{"devices", listed_}});
    // One-shot: the request file is the third argument; the answer is the file named by its phase
    // (and, for the probe, the GPU the worker is shown).
    script_ = dir_ / "worker.sh";
    std::ofstream(script_) << "#!/bin/sh\n"
                              "dir=$(dirname \"$0\")\n"
                              "if grep -q '\"phase\":\"devices\"' \"$2\"; then\n"
                              "  cat \"$dir/devices.json\" >&3\n"
                              "elif [ -f \"$dir/probe-$CUDA_VISIBLE_DEVICES.json\" ]; then\n"
                              "  cat \"$dir/probe-$CUDA_VISIBLE_DEVICES.json\" >&3\n"
                              "else\n"
                              "  echo '{\"result\":{\"checks\":[],\"unavailable\":\"shown GPU "
                              "'\"$CUDA_VISIBLE_DEVICES\"'\"}}' >&3\n"
                              "fi\n";
    fs::permissions(script_, fs::perms::owner_all);
  }
  void TearDown() override {
    ::unsetenv("BLASTER_LOCK_DIR");
    fs::remove_all(dir_);
  }

  void answer(const std::string& name, nlohmann::json result) const {
    result["checks"] = nlohmann::json::array();
    std::ofstream(dir_ / (name + ".json"))
        << nlohmann::json{{"result", result}, {"ms", 1}}.dump() << '\n';
  }

  fs::path dir_;
  fs::path script_;
  nlohmann::json listed_ = nlohmann::json::array();
};

TEST_F(GpuLanes, EachGpuNamedIsALaneWhoseWorkersSeeItAlone) {
  warm_bench kept(/*keep=*/false);
  kept.scratch.emplace(1);
  const auto launchers = lane_launchers(parse_gpu_choice("1,0"), false, script_, kept);
  ASSERT_EQ(launchers.size(), 2U);
  EXPECT_EQ(launchers[0].visible, "1");
  EXPECT_EQ(launchers[0].lane, 0U);
  EXPECT_EQ(launchers[1].visible, "0");
  EXPECT_EQ(launchers[1].lane, 1U);
  probe_lanes(launchers, kept);
  bench_report report;
  apply_lanes(kept, report);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  // The first GPU named is the report's device: it times every session of a verdict.
  EXPECT_EQ(report.device->uuid, "GPU-bb");
  ASSERT_EQ(report.gpus.size(), 2U);
  EXPECT_EQ(report.gpus[1].uuid, "GPU-aa");
  EXPECT_EQ(lane_uuid(kept, 0), "GPU-bb");
  EXPECT_EQ(lane_uuid(kept, 1), "GPU-aa");
  // A later run of the series keeps its lanes and their probes.
  const auto again = lane_launchers(parse_gpu_choice("1,0"), false, script_, kept);
  EXPECT_EQ(again.size(), 2U);
  EXPECT_EQ(kept.lanes.size(), 2U);
}

TEST_F(GpuLanes, WithoutGpusOneLaneSeesWhatThisProcessSees) {
  for (const bool compile_only : {false, true}) {
    warm_bench kept(/*keep=*/false);
    kept.scratch.emplace(2);
    // Compile only looks for no GPU, whatever --gpus says.
    const auto launchers = lane_launchers(compile_only ? parse_gpu_choice("1") : gpu_choice{},
                                          compile_only, script_, kept);
    ASSERT_EQ(launchers.size(), 1U);
    EXPECT_TRUE(launchers[0].visible.empty());
    EXPECT_EQ(lane_uuid(kept, 0), "") << "one GPU: the report's device names it";
  }
}

TEST_F(GpuLanes, AGpuThatIsNotThereIsRefusedAndOneWithoutAProbeSaysWhich) {
  warm_bench missing(/*keep=*/false);
  missing.scratch.emplace(3);
  EXPECT_THROW(static_cast<void>(lane_launchers(parse_gpu_choice("0,2"), false, script_, missing)),
               input_error);
  // GPU 1 answers its probe with no GPU: the run has none, and says which one failed.
  fs::remove(dir_ / "probe-1.json");
  warm_bench kept(/*keep=*/false);
  kept.scratch.emplace(4);
  const auto launchers = lane_launchers(parse_gpu_choice("all"), false, script_, kept);
  probe_lanes(launchers, kept);
  bench_report report;
  apply_lanes(kept, report);
  EXPECT_FALSE(report.gpu);
  EXPECT_EQ(report.gpu_unavailable, "GPU 1: shown GPU 1");
}

TEST_F(GpuLanes, NoGpuToListIsOneLaneThatSaysWhy) {
  answer("devices", {{"unavailable", "no CUDA driver on this machine"}});
  warm_bench kept(/*keep=*/false);
  kept.scratch.emplace(5);
  const auto launchers = lane_launchers(parse_gpu_choice("all"), false, script_, kept);
  ASSERT_EQ(launchers.size(), 1U);
  bench_report report;
  apply_lanes(kept, report);
  EXPECT_FALSE(report.gpu);
  EXPECT_EQ(report.gpu_unavailable, "no CUDA driver on this machine");
  EXPECT_THROW(static_cast<void>(choose_gpus(parse_gpu_choice("all"), script_)),
               cuda::gpu_unavailable);
}

}  // namespace
}  // namespace blaster
