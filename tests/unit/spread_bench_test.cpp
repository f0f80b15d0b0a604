// A bench spread over two GPUs, without a GPU: stand-in workers (a Python script) list two GPUs,
// compute relu's outputs in the gate as a correct kernel would, and time each variant at a rate
// set per variant, on a second GPU half again as slow as the first. The gates must spread over
// both GPUs, the screening must rank each candidate against the baseline of its own GPU, and every
// session that a verdict compares must run on the first GPU. On one GPU, as without --gpus, the
// first session screens.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "benchmarking/worker/worker_result.hpp"
#include "core/parallel_for.hpp"
#include "evidence/database.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The stand-in: `worker.py __worker REQUEST`. Its answers come from the files beside it:
// devices.json, probe-<GPU>.json and timing.json, a timing whose median it sets to the variant's
// time (times.json) times its GPU's slowness (slowness.json).
constexpr const char* stand_in = R"(#!/usr/bin/env python3
import array, json, os, pathlib, sys, time
here = pathlib.Path(__file__).parent
request = json.loads(pathlib.Path(sys.argv[2]).read_text())
gpu = os.environ.get("CUDA_VISIBLE_DEVICES") or "0"  # unpinned: this process's GPU 0
out = os.fdopen(3, "w")
def answer(result):
    result.setdefault("checks", [])
    out.write(json.dumps({"result": result, "ms": 1}) + "\n")
phase = request["phase"]
if phase == "devices":
    answer(json.loads((here / "devices.json").read_text()))
elif phase == "probe":
    answer(json.loads((here / f"probe-{gpu}.json").read_text()))
elif phase == "gate":
    time.sleep(0.05)  # long enough that both GPUs take variants
    inputs = open(request["inputs_file"], "rb")
    outputs = open(request["outputs_file"], "r+b")
    checks = []
    for k, check in enumerate(request["checks"]):
        x, o = check["inputs"][0], check["outputs"][0]
        inputs.seek(x["offset"])
        values = array.array("H", inputs.read(x["bytes"]))
        relu = array.array("H", (0 if v & 0x8000 else v for v in values))
        outputs.seek(request["outputs_base"] + o["offset"])
        outputs.write(relu.tobytes())
        checks.append({"check": k, "case": check["case"], "seed": check["seed"],
                       "runs": 5 if check["repeat"] else 1, "canaries": [], "inputs": []})
    outputs.close()
    answer({"checks": checks})
elif phase == "time":
    timing = json.loads((here / "timing.json").read_text())
    us = json.loads((here / "times.json").read_text())[request["variant"]]
    us *= json.loads((here / "slowness.json").read_text())[gpu]
    timing["samples"]["median_us"] = us
    timing["samples"]["sample_us"] = [us] * 10
    answer({"timing": timing})
elif phase == "profile":
    answer({"profile": {"source": "stand-in", "chip": "gh100", "passes": 1, "case": "canonical",
                        "kernels": [], "missing": []}})
else:
    answer({"failure": {"reason": "crash", "message": "no " + phase}})
)";

class SpreadBench : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blaster-spread-bench-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("BLASTER_LOCK_DIR", dir_.c_str(), 1);
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    json listed = json::array();
    for (const auto& [gpu, uuid] : {std::pair{"0", "GPU-aa"}, std::pair{"1", "GPU-bb"}}) {
      device_probe p;
      p.device.name = "NVIDIA H200";
      p.device.uuid = uuid;
      p.device.compute_major = 9;
      p.device.sm_count = 132;
      p.device.l2_bytes = 60 << 20;
      p.device.total_memory_bytes = 150'000'000'000;
      bandwidth_ceiling c{.bytes_per_second = 4.0e12,
                          .bytes_moved = 1 << 30,
                          .time_us = 268.0,
                          .config = "stand-in",
                          .spread = 0.0};
      p.memory = {.copy = c, .read = c, .write = c, .l2 = c, .peak_bytes_per_second = 4.8e12};
      p.memory.l2.bytes_per_second = 10e12;
      p.matrix = {.flops_per_second = 6e14, .time_us = 200.0, .config = "stand-in"};
      for (const auto& mode : timing_modes()) p.floors.us[mode.mode] = 1.0;
      write(std::string("probe-") + gpu, {{"probe", to_json(p)}});
      listed.push_back(to_json(p.device));
    }
    write("devices", {{"devices", listed}});
    timing_answer t;
    t.samples.mode = timing_mode::graph;
    t.samples.taken = 10;
    write("timing", {{"samples", to_json(t.samples)}, {"checks", to_json(t.checks)}});
    write("slowness", {{"0", 1.0}, {"1", 1.5}});
    script_ = dir_ / "worker.py";
    std::ofstream(script_) << stand_in;
    fs::permissions(script_, fs::perms::owner_all);
  }
  void TearDown() override {
    ::unsetenv("BLASTER_LOCK_DIR");
    fs::remove_all(dir_);
  }

  void write(const std::string& name, const json& j) const {
    std::ofstream(dir_ / (name + ".json")) << j.dump() << '\n';
  }

  // relu_vec's six configurations, the fastest BLOCK=256,UNROLL=4 at 40 us, the baseline 100 us.
  json relu_vec_times() const {
    json times = {{"init", 100.0}};
    double us = 70.0;
    for (const char* block : {"128", "256"}) {
      for (const char* unroll : {"1", "2", "4"}) {
        times[fmt::format("relu_vec[BLOCK={},UNROLL={}]", block, unroll)] = us;
        us -= 6.0;
      }
    }
    write("times", times);
    return times;
  }

  bench_options relu_vec(const gpu_choice& gpus) const {
    bench_options options;
    options.root = BLASTER_SOURCE_DIR;
    options.task = "relu";
    options.candidates = {fs::path(BLASTER_SOURCE_DIR) / "kernels" / "relu" / "relu_vec.cu"};
    options.use_tuned = false;
    options.gpus = gpus;
    options.sessions = 2;
    options.confirm_best = 1;
    options.cooldown_s = 0.0;
    options.worker_executable = script_;
    options.compile.executable = BLASTER_BINARY;  // NVRTC runs in the real sandbox
    options.command = "spread bench test";
    return options;
  }

  fs::path dir_;
  fs::path script_;
};

TEST_F(SpreadBench, GatesSpreadScreeningRanksPerGpuAndVerdictsStayOnTheFirst) {
  const json times = relu_vec_times();
  store records(dir_ / "home");
  bench_options options = relu_vec(parse_gpu_choice("all"));
  options.profile = true;
  const bench_report report = run_bench(options, records);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  ASSERT_EQ(report.gpus.size(), 2U);
  EXPECT_EQ(report.device->uuid, "GPU-aa");
  ASSERT_EQ(report.results.size(), 7U);
  std::set<std::string> gated_on;
  for (const auto& r : report.results) {
    SCOPED_TRACE(r.label);
    ASSERT_EQ(r.status, "passed") << r.message;
    gated_on.insert(r.gated_on);
    // The counters of the confirmed ones only: a screened-out configuration is nobody's.
    EXPECT_EQ(r.profile.has_value(), !r.screened);
    if (r.screened) {
      EXPECT_EQ(r.session_medians_us.size(), 1U);
      // Its one session, on the GPU that screened it.
      const double slowness = r.timed_on == "GPU-bb" ? 1.5 : 1.0;
      EXPECT_DOUBLE_EQ(r.session_medians_us[0], times[r.label].get<double>() * slowness);
    } else {
      EXPECT_EQ(r.timed_on, "GPU-aa") << "a verdict's sessions are the first GPU's";
      EXPECT_EQ(r.session_medians_us, (std::vector<double>(2, times[r.label].get<double>())));
    }
  }
  EXPECT_EQ(gated_on, (std::set<std::string>{"GPU-aa", "GPU-bb"}));
  // The fastest candidate goes on wherever it was screened, the others are screened out.
  for (const auto& r : report.results) {
    EXPECT_EQ(r.screened, !r.baseline && r.label != "relu_vec[BLOCK=256,UNROLL=4]") << r.label;
  }
  const auto& best = report.results.back();
  ASSERT_EQ(best.label, "relu_vec[BLOCK=256,UNROLL=4]");
  ASSERT_TRUE(best.speedup);
  EXPECT_DOUBLE_EQ(*best.speedup, 100.0 / 40.0);
  ASSERT_TRUE(best.verdict);
}

// Without --gpus: one GPU gates everything, its first session screens, and the fastest goes on
// to a verdict over both sessions.
TEST_F(SpreadBench, OnOneGpuTheFirstSessionScreens) {
  const json times = relu_vec_times();
  store records(dir_ / "home");
  const bench_report report = run_bench(relu_vec(gpu_choice{}), records);
  ASSERT_TRUE(report.gpu) << report.gpu_unavailable;
  EXPECT_TRUE(report.gpus.empty());
  EXPECT_EQ(report.device->uuid, "GPU-aa");
  ASSERT_EQ(report.results.size(), 7U);
  for (const auto& r : report.results) {
    SCOPED_TRACE(r.label);
    ASSERT_EQ(r.status, "passed") << r.message;
    EXPECT_TRUE(r.gated_on.empty() && r.timed_on.empty()) << "one GPU: the device names it";
    EXPECT_EQ(r.screened, !r.baseline && r.label != "relu_vec[BLOCK=256,UNROLL=4]");
    EXPECT_EQ(r.session_medians_us.size(), r.screened ? 1U : 2U);
    EXPECT_DOUBLE_EQ(r.session_medians_us[0], times[r.label].get<double>());
  }
  EXPECT_EQ(report.aa_medians_us, (std::vector<double>(2, 100.0)));
  ASSERT_TRUE(report.results.back().verdict);
}

// A portfolio on two GPUs runs two benches at once, each recording through its own connection
// to the one home: both runs are there whole, each on its own GPU.
TEST_F(SpreadBench, TwoBenchesSideBySideRecordIntoOneHome) {
  relu_vec_times();
  { const store schema(dir_ / "home"); }  // made before the connections race to make it
  std::vector<bench_report> reports(2);
  on_every_lane(2, [&](std::size_t lane) {
    store records(dir_ / "home");
    reports[lane] = run_bench(
        relu_vec(gpu_choice{.all = false, .ordinals = {static_cast<int>(lane)}}), records);
  });
  store records(dir_ / "home");
  for (std::size_t lane = 0; lane < 2; ++lane) {
    SCOPED_TRACE(lane);
    const bench_report& r = reports[lane];
    ASSERT_TRUE(r.gpu) << r.gpu_unavailable;
    EXPECT_EQ(r.device->uuid, lane == 0 ? "GPU-aa" : "GPU-bb");
    statement run = records.db().prepare(
        "SELECT status, (SELECT count(*) FROM compilations WHERE run_id = ?1) FROM runs "
        "WHERE id = ?1");
    run.bind(1, r.run_id);
    ASSERT_TRUE(run.step());
    EXPECT_EQ(run.column_text(0), "completed");
    EXPECT_EQ(run.column_int64(1), 7);
  }
  EXPECT_NE(reports[0].run_id, reports[1].run_id);
}

}  // namespace
}  // namespace blaster
