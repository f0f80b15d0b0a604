// The host side of the gate: seeds, reason codes, the worker protocol, the shared input and
// reference data, and the task-design guard. No GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "benchmarking/gate/correctness_gate.hpp"
#include "benchmarking/gate/detail/error_histogram.hpp"
#include "benchmarking/gate/reason_code.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "core/error.hpp"
#include "core/mapped_file.hpp"
#include "core/sha256.hpp"
#include "core/worker_process.hpp"
#include "tasks/input_generator.hpp"

namespace blaster {
namespace {

// A stand-in for the worker executable: a shell script at `script` that answers on fd 3 as the
// real worker does.
std::filesystem::path stand_in_worker(const std::filesystem::path& script,
                                      const std::string& text) {
  std::ofstream(script) << text;
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

// One gate evaluation by the one-shot worker `script`.
worker_answer gate_once(const std::filesystem::path& script, const std::filesystem::path& dir) {
  const worker_launcher launcher{
      .executable = script, .dir = dir, .visible = {}, .lane = 0, .kept = nullptr};
  worker_request request;
  request.phase = worker_phase::gate;
  return launcher.run(request, std::chrono::milliseconds(10'000));
}

TEST(GateSeeds, TwoFixedAndTheRunsOwn) {
  const auto a = gate_seeds(12345);
  const auto b = gate_seeds(67890);
  ASSERT_EQ(a.size(), 3U);
  EXPECT_EQ(a.back(), 12345U);
  EXPECT_EQ(b.back(), 67890U);
  // The fixed seeds make runs comparable; they are the same in every run and all distinct.
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[1], b[1]);
  EXPECT_EQ(std::set<std::uint64_t>(a.begin(), a.end()).size(), 3U);
}

TEST(ReasonCode, EveryCodeRoundTripsByName) {
  for (const char* name :
       {"compile_error", "plan_error", "launch_error", "crash", "timeout", "wrong_result",
        "nonfinite", "unwritten_output", "out_of_bounds_write", "input_modified",
        "nondeterministic", "stale_in_timing", "impossible_speed", "sanitizer_error"}) {
    const auto code = parse_reason_code(name);
    ASSERT_TRUE(code) << name;
    EXPECT_EQ(to_string(*code), name);
  }
  EXPECT_FALSE(parse_reason_code("cheated"));
}

TEST(ReasonCode, StickyCudaErrorsAreCrashesOthersLaunchErrors) {
  EXPECT_EQ(reason_for_cuda_error(CUDA_ERROR_ILLEGAL_ADDRESS), reason_code::crash);
  EXPECT_EQ(reason_for_cuda_error(CUDA_ERROR_LAUNCH_FAILED), reason_code::crash);  // __trap()
  EXPECT_EQ(reason_for_cuda_error(CUDA_ERROR_MISALIGNED_ADDRESS), reason_code::crash);
  EXPECT_EQ(reason_for_cuda_error(CUDA_ERROR_INVALID_VALUE), reason_code::launch_error);
  EXPECT_EQ(reason_for_cuda_error(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), reason_code::launch_error);
}

TEST(ReasonCode, AWorkerKilledAtItsDeadlineTimedOutAnyOtherEndIsACrash) {
  worker_outcome outcome;
  outcome.how = worker_outcome::ending::timed_out;
  EXPECT_EQ(reason_for_worker_ending(outcome), reason_code::timeout);
  outcome.how = worker_outcome::ending::signaled;
  outcome.signal = 11;
  EXPECT_EQ(reason_for_worker_ending(outcome), reason_code::crash);
  outcome.how = worker_outcome::ending::exited;
  outcome.exit_code = 1;
  EXPECT_EQ(reason_for_worker_ending(outcome), reason_code::crash);
}

TEST(ReasonCode, OnlyAStopSentFromOutsideIsNoVerdictOnTheCandidate) {
  worker_outcome outcome;
  outcome.how = worker_outcome::ending::signaled;
  for (const int outside : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    outcome.signal = outside;
    EXPECT_TRUE(stopped_from_outside(outcome)) << outside;
  }
  // A fault and an abort are the candidate's; so is a SIGKILL, whose sender is unknown.
  for (const int own : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGKILL}) {
    outcome.signal = own;
    EXPECT_FALSE(stopped_from_outside(outcome)) << own;
  }
  outcome.how = worker_outcome::ending::exited;
  outcome.exit_code = 0;
  outcome.signal = SIGTERM;  // left over: an exit is no signal
  EXPECT_FALSE(stopped_from_outside(outcome));
  outcome.how = worker_outcome::ending::timed_out;
  EXPECT_FALSE(stopped_from_outside(outcome));
}

TEST(ErrorHistogram, QuantilesAreTightUpperBounds) {
  error_histogram h;
  // 1000 errors: 1e-3 .. 1 in equal steps.
  for (int i = 1; i <= 1000; ++i) h.add(i / 1000.0);
  EXPECT_EQ(h.count(), 1000);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = q;  // the q-quantile of i/1000 is q
    const double bound = h.quantile(q);
    EXPECT_GE(bound, exact) << q;
    EXPECT_LE(bound, exact * (1.0 + 1.0 / error_histogram::sub_bins) * 1.0001) << q;
  }
}

TEST(ErrorHistogram, ZerosNonFiniteAndMerging) {
  error_histogram a;
  error_histogram b;
  for (int i = 0; i < 98; ++i) a.add(0.0);
  b.add(INFINITY);
  b.add(INFINITY);
  a.merge(b);
  EXPECT_EQ(a.count(), 100);
  EXPECT_LE(a.quantile(0.5), 1e-9);
  EXPECT_LE(a.quantile(0.98), 1e-9);
  EXPECT_TRUE(std::isinf(a.quantile(0.99)));
  EXPECT_EQ(error_histogram().quantile(0.5), 0.0);
}

TEST(GateProtocol, RequestsRoundTripThroughJson) {
  worker_request r;
  r.phase = worker_phase::time;
  r.root = "/r";
  r.home = "/h";
  r.task = "rmsnorm";
  r.candidate_file = "/r/kernels/rmsnorm/k.cu";
  r.source_sha256 = std::string(64, 'a');
  r.variant = "k[VEC=4]";
  r.arch = "sm_90a";
  r.checks = {{"odd", 7, true, {{"x", 0, 100, std::string(64, 'b')}}, {{"out", 4096, 100, ""}}}};
  r.inputs_file = "/tmp/in";
  r.outputs_file = "/tmp/out";
  r.determinism_runs = 5;
  r.canary_pattern = 0xDEADBEEF;
  r.canary_bytes = 8192;
  r.poison_seed = 0x123456789ABCDEF0ULL;
  r.guard_bytes = std::size_t{32} << 20U;
  r.timed_check = 0;
  r.timing.max_samples = 17;
  r.timing.mode = timing_mode::graph;
  r.timing.target_sample_ms = 2.5;
  r.outputs_base = 8192;
  r.other_draws_sha256 = {{1, {std::string(64, 'c')}}, {2, {std::string(64, 'd')}}};
  r.spot_seed = 99;
  r.counted_runs = 2;
  const worker_request back = worker_request_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.phase, worker_phase::time);
  EXPECT_EQ(back.checks.at(0).outputs.at(0).offset, 4096U);
  EXPECT_EQ(back.canary_pattern, 0xDEADBEEFU);
  EXPECT_EQ(back.poison_seed, 0x123456789ABCDEF0ULL);
  EXPECT_EQ(back.guard_bytes, std::size_t{32} << 20U);
  EXPECT_EQ(back.timing.max_samples, 17);
  EXPECT_EQ(back.timing.mode, timing_mode::graph);
  EXPECT_EQ(back.counted_runs, 2);
  EXPECT_EQ(back.other_draws_sha256, r.other_draws_sha256);
}

TEST(GateProtocol, ProbeResultsRoundTripThroughJson) {
  cuda::device_properties d;
  d.name = "NVIDIA H200";
  d.uuid = "u";
  d.compute_major = 9;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.l2_bytes = 62914560;
  d.total_memory_bytes = 150120071168ULL;
  d.driver_version = 13000;
  const auto back = device_properties_from_json(nlohmann::json::parse(to_json(d).dump()));
  EXPECT_EQ(to_json(back), to_json(d));
  EXPECT_EQ(back.arch(), "sm_90a");
  EXPECT_EQ(back.total_memory_bytes, d.total_memory_bytes);
  const bandwidth_ceiling c{.bytes_per_second = 3.97e12,
                            .bytes_moved = 1 << 30,
                            .time_us = 540.5,
                            .config = "grid 264 x 256",
                            .spread = 0.012};
  EXPECT_EQ(to_json(bandwidth_ceiling_from_json(to_json(c))), to_json(c));
  memory_ceilings ceilings{
      .copy = c, .read = c, .write = c, .l2 = c, .peak_bytes_per_second = 4.9e12};
  ceilings.read.bytes_per_second = 4.4e12;
  ceilings.l2.config = "in the L2";
  EXPECT_EQ(to_json(memory_ceilings_from_json(to_json(ceilings))), to_json(ceilings));
  launch_floors f;
  f.us[timing_mode::hot] = 3.8;
  f.us[timing_mode::cold] = 2.7;
  f.us[timing_mode::graph] = 0.5;
  EXPECT_EQ(to_json(launch_floors_from_json(to_json(f))), to_json(f));
  const matrix_rate m{.flops_per_second = 6.1e14, .time_us = 812.5, .config = "mma.sync"};
  EXPECT_EQ(to_json(matrix_rate_from_json(to_json(m))), to_json(m));
}

// Reports recorded before a timing mode existed have no floor for it: it reads as not measured.
TEST(GateProtocol, AFloorOfAModeTheReportLacksIsNotMeasured) {
  const launch_floors f = launch_floors_from_json({{"hot_us", 3.8}});
  EXPECT_DOUBLE_EQ(f.us[timing_mode::hot], 3.8);
  EXPECT_DOUBLE_EQ(f.us[timing_mode::graph], 0.0);
}

TEST(GateProtocol, RotationTravelsWithTheTimingOptions) {
  timing_options o;
  o.rotate_buffers = true;
  EXPECT_TRUE(timing_options_from_json(to_json(o)).rotate_buffers);
  o.rotate_buffers = false;
  EXPECT_FALSE(timing_options_from_json(to_json(o)).rotate_buffers);
}

// A stand-in worker that is stopped by a signal midway through a check: a fault is the
// candidate's crash, a stop sent from outside stops the run and blames no candidate.
TEST(WorkerLauncher, AStopSentFromOutsideStopsTheRunAndAFaultIsACrash) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("blaster-launcher-stop-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto stopped_by = [&](const std::string& signal) {
    const std::string text = fmt::format(
        "#!/bin/sh\n"
        "echo '{{\"step\":\"run 1\",\"check\":2,\"ms\":1}}' >&3\n"
        "kill -{} $$\n"
        "sleep 5\n",
        signal);
    return gate_once(stand_in_worker(dir / ("worker-" + signal + ".sh"), text), dir);
  };
  const worker_answer segv = stopped_by("SEGV");
  EXPECT_FALSE(segv.result.has_value());
  EXPECT_EQ(segv.ended, reason_code::crash);
  EXPECT_NE(segv.why.find("during run 1 of check 2"), std::string::npos) << segv.why;
  for (const char* outside : {"TERM", "INT", "HUP"}) {
    try {
      static_cast<void>(stopped_by(outside));
      ADD_FAILURE() << "SIG" << outside << " was taken for the candidate's doing";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find("a stop sent from outside blaster"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("during run 1 of check 2"), std::string::npos)
          << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

// A stand-in worker: a script that answers on fd 3 as the real one does, with the steps it
// took and when, so that the parent's account of where the time went can be checked.
TEST(WorkerLauncher, AccountsTheWallTimeToTheWorkersSteps) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("blaster-launcher-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const worker_answer answer =
      gate_once(stand_in_worker(dir / "worker.sh",
                                "#!/bin/sh\n"
                                "echo '{\"step\":\"context\",\"ms\":1}' >&3\n"
                                "echo '{\"step\":\"load\",\"ms\":301}' >&3\n"
                                "echo '{\"step\":\"run 1\",\"check\":0,\"ms\":320}' >&3\n"
                                "echo '{\"step\":\"inspect\",\"check\":0,\"ms\":340}' >&3\n"
                                "echo '{\"step\":\"run 2\",\"check\":1,\"ms\":350}' >&3\n"
                                "echo '{\"result\":{\"checks\":[]},\"ms\":380}' >&3\n"),
                dir);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(answer.result.has_value()) << answer.why;
  EXPECT_DOUBLE_EQ(answer.profile.at("start"), 1.0);
  EXPECT_DOUBLE_EQ(answer.profile.at("context"), 300.0);
  EXPECT_DOUBLE_EQ(answer.profile.at("load"), 19.0);
  EXPECT_DOUBLE_EQ(answer.profile.at("run"), 20.0 + 30.0);  // both runs
  EXPECT_DOUBLE_EQ(answer.profile.at("inspect"), 10.0);
  EXPECT_GE(answer.profile.at("process"), 0.0);
}

// A stand-in kept worker: one process answers request after request of the gate and the timing,
// each on its own lines; after a failure, or an answer that says it is leaving, it is stopped, and
// the next request starts another. The other phases still get a process of their own.
TEST(WorkerLauncher, AKeptWorkerServesGateAndTimingUntilAFailureOrItsLeaving) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("blaster-kept-launcher-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // --serve: request paths on stdin, each answered in turn; a variant named "fails" is answered
  // with a failure; one named "heap" with an answer that says the worker leaves, which it does
  // a moment later, as a real one takes a while to end. A request file as argument: a one-shot
  // worker.
  const auto script = stand_in_worker(dir / "worker.sh", R"(#!/bin/sh
[ "$2" = --serve ] || { echo '{"result":{"checks":[]},"ms":1}' >&3; exit 0; }
while read path; do
  if grep -q '"variant":"fails"' "$path"; then
    echo '{"result":{"checks":[],"failure":{"reason":"crash","message":"x"}},"ms":1}' >&3
  elif grep -q '"variant":"heap"' "$path"; then
    echo '{"result":{"checks":[],"leaving":true},"ms":1}' >&3
    sleep 0.3
    exit 0
  else
    echo '{"result":{"checks":[]},"ms":1}' >&3
  fi
done
)");
  persistent_worker kept(kept_worker_argv(script));
  const worker_launcher launcher{
      .executable = script, .dir = dir, .visible = {}, .lane = 0, .kept = &kept};
  worker_request request;
  auto run = [&](worker_phase phase, const std::string& variant) {
    request.phase = phase;
    request.variant = variant;
    return launcher.run(request, std::chrono::milliseconds(10'000));
  };
  for (const auto phase : {worker_phase::gate, worker_phase::time, worker_phase::gate}) {
    const worker_answer answer = run(phase, "k");
    ASSERT_TRUE(answer.result.has_value()) << answer.why;
    EXPECT_FALSE(answer.result->failure.has_value());
  }
  EXPECT_EQ(kept.started(), 1);
  EXPECT_TRUE(run(worker_phase::profile, "k").result.has_value());
  EXPECT_EQ(kept.started(), 1) << "the counters are taken in a process of their own";
  const worker_answer failed = run(worker_phase::time, "fails");
  ASSERT_TRUE(failed.result.has_value()) << failed.why;
  EXPECT_TRUE(failed.result->failure.has_value());
  EXPECT_FALSE(kept.running()) << "a worker that failed is not asked again";
  EXPECT_TRUE(run(worker_phase::gate, "k").result.has_value());
  EXPECT_EQ(kept.started(), 2);
  const worker_answer leaving = run(worker_phase::gate, "heap");
  ASSERT_TRUE(leaving.result.has_value()) << leaving.why;
  EXPECT_TRUE(leaving.result->leaving);
  EXPECT_FALSE(kept.running()) << "a worker that said it leaves is not asked again";
  const worker_answer next = run(worker_phase::time, "k");
  EXPECT_TRUE(next.result.has_value()) << next.why;
  EXPECT_EQ(kept.started(), 3);
  std::filesystem::remove_all(dir);
}

class GateData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("blaster-gate-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    task_ = load_task(std::filesystem::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm");
    // Two small cases stand in for the task's, which include a 67-million-element one.
    task_case a;
    a.name = "a";
    a.values = {{"B", 2}, {"C", 5}, {"H", 3}, {"W", 7}};
    task_case b;
    b.name = "b";
    b.values = {{"B", 1}, {"C", 17}, {"H", 1}, {"W", 1}};
    task_.cases = {a, b};
    task_.canonical_case = "b";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A case marked large (KernelBench's current size), small here: checked only where timed.
  void add_large_case(const std::string& name) {
    task_case large;
    large.name = name;
    large.large = true;
    large.values = {{"B", 1}, {"C", 3}, {"H", 4}, {"W", 5}};
    task_.cases.push_back(large);
  }

  std::filesystem::path dir_;
  task_spec task_;
};

TEST_F(GateData, OneCheckPerCaseAndSeedWithTheReferenceOfItsOwnInputs) {
  const auto seeds = gate_seeds(42);
  const gate_data data(task_, find_reference("rmsnorm"), seeds, dir_);
  ASSERT_EQ(data.checks().size(), 6U);
  // The canonical case with the run's own seed is the one timed.
  const gate_check& timed = data.checks().at(data.timed_check());
  EXPECT_EQ(timed.case_name, "b");
  EXPECT_EQ(timed.seed, 42U);
  // Determinism is checked once per case, on its first seed.
  EXPECT_TRUE(data.checks()[0].repeat);
  EXPECT_FALSE(data.checks()[1].repeat);

  // The inputs file holds what generate_input draws, and the expected output is the reference
  // of exactly those values.
  const gate_check& check = data.checks()[1];  // case a, second seed
  const buffer_spec& x = *task_.find_buffer("x");
  const host_tensor drawn = generate_input(x, 2 * 5 * 3 * 7, derive_seed(check.seed, "a", "x"));
  const mapped_file inputs = mapped_file::open(data.inputs_file(), mapped_file::access::read_only);
  const auto stored = inputs.slice(check.inputs[0].offset, check.inputs[0].bytes);
  ASSERT_EQ(stored.size(), drawn.bytes.size());
  EXPECT_TRUE(std::equal(stored.begin(), stored.end(), drawn.bytes.begin()));
  const auto expected = data.expected(1, 0);
  ASSERT_EQ(expected.size(), 210U);
  // Position (b=0, p=0): channels at stride H*W = 21.
  double sum = 0.0;
  for (int c = 0; c < 5; ++c) sum += drawn.values[c * 21] * drawn.values[c * 21];
  EXPECT_NEAR(expected[0], drawn.values[0] / std::sqrt(sum / 5 + 1e-5), 1e-12);
  // Slots do not overlap.
  EXPECT_GE(data.checks()[1].inputs[0].offset,
            data.checks()[0].inputs[0].offset + data.checks()[0].inputs[0].bytes);
  EXPECT_TRUE(data.warnings().empty());
}

TEST_F(GateData, WarnsWhenAConstantOutputWouldPass) {
  task_.tol.atol = 10.0;  // every rmsnorm output is within 10 of zero
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(1), dir_);
  ASSERT_FALSE(data.warnings().empty());
  EXPECT_NE(data.warnings()[0].find("constant output could pass"), std::string::npos)
      << data.warnings()[0];
}

TEST_F(GateData, ALargeCaseIsCheckedOnlyWhenTimedOnTwoDraws) {
  add_large_case("big");
  const auto seeds = gate_seeds(42);
  {
    const gate_data data(task_, find_reference("rmsnorm"), seeds, dir_);
    EXPECT_EQ(data.checks().size(), 6U);  // a and b, three seeds each; big left out
    for (const auto& check : data.checks()) EXPECT_NE(check.case_name, "big");
  }
  const gate_data data(task_, find_reference("rmsnorm"), seeds, dir_, {"big"});
  ASSERT_EQ(data.checks().size(), 8U);
  const gate_check& timed = data.checks().at(data.timed_check());
  EXPECT_EQ(timed.case_name, "big");
  EXPECT_EQ(timed.seed, 42U);
  EXPECT_FALSE(timed.repeat);  // determinism is checked on the small cases
  // And one draw it is not timed on, with the fixed seed before the run's: the timing's
  // launches there must give what the gate's did.
  const gate_check& other = data.checks().at(data.timed_check() - 1);
  EXPECT_EQ(other.case_name, "big");
  EXPECT_EQ(other.seed, seeds[1]);
  EXPECT_FALSE(other.repeat);
  EXPECT_EQ(data.other_draws_sha256("big").size(), 1U);
}

TEST_F(GateData, OneDataServesEveryCaseASeriesTimes) {
  add_large_case("big");
  gate_data data(task_, find_reference("rmsnorm"), gate_seeds(42), dir_, {"a", "big"});
  ASSERT_EQ(data.checks().size(), 8U);  // the large case is in, on two draws: the series times it
  EXPECT_EQ(data.timed_cases(), (std::vector<std::string>{"a", "big"}));
  EXPECT_EQ(data.checks().at(data.timed_check()).case_name, "a");  // the first until told
  data.time("big");
  EXPECT_EQ(data.checks().at(data.timed_check()).case_name, "big");
  for (const char* name : {"a", "big"}) {
    const gate_check& timed = data.checks().at(data.timed_check(name));
    EXPECT_EQ(timed.case_name, name);
    EXPECT_EQ(timed.seed, 42U);  // the run's own seed
  }
  // A case the data was not prepared for, and one the task lacks, are harness errors.
  EXPECT_THROW(data.time("b"), std::exception);
  EXPECT_THROW(gate_data(task_, find_reference("rmsnorm"), gate_seeds(1), dir_, {"nope"}),
               std::exception);
}

TEST_F(GateData, KeepsTheTimedOutputsAsTheLastGateLeftThem) {
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(7), dir_);
  const gate_check& timed = data.checks().at(data.timed_check());
  const buffer_slot& slot = timed.outputs.at(0);
  {
    mapped_file outputs = mapped_file::open(data.outputs_file(), mapped_file::access::read_write);
    auto bytes = outputs.slice(slot.offset, slot.bytes);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 7 + 1);
  }
  const auto kept = dir_ / "kept.bin";
  const std::size_t base = data.keep_timed_outputs(kept, "b");
  EXPECT_EQ(base, slot.offset);
  const mapped_file saved = mapped_file::open(kept, mapped_file::access::read_only);
  const auto bytes = saved.slice(slot.offset - base, slot.bytes);
  const auto original = data.produced(data.timed_check(), 0);
  ASSERT_EQ(bytes.size(), original.size());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), original.begin()));
  EXPECT_EQ(bytes[1], static_cast<std::byte>(8));
}

// The timing checks its launches on the case's other draws against digests of what the gate
// gave there: one per output of each other draw, none of the timed draw or of other cases.
TEST_F(GateData, DigestsWhatTheGateGaveOnTheTimedCasesOtherDraws) {
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(7), dir_);
  {
    mapped_file outputs = mapped_file::open(data.outputs_file(), mapped_file::access::read_write);
    for (std::size_t k = 0; k < data.checks().size(); ++k) {
      const buffer_slot& slot = data.checks()[k].outputs.at(0);
      auto bytes = outputs.slice(slot.offset, slot.bytes);
      std::fill(bytes.begin(), bytes.end(), static_cast<std::byte>(k + 1));
    }
  }
  const auto digests = data.other_draws_sha256("b");
  ASSERT_EQ(digests.size(), 2U);  // b's three draws, less the timed one
  for (const auto& [k, sha256] : digests) {
    EXPECT_EQ(data.checks()[k].case_name, "b");
    EXPECT_NE(k, data.timed_check());
    ASSERT_EQ(sha256.size(), 1U);
    EXPECT_EQ(sha256[0], piecewise_sha256_hex(data.produced(k, 0)));
  }
  EXPECT_NE(digests.begin()->second, digests.rbegin()->second);
}

TEST_F(GateData, EachLaneHasOutputsOfItsOwn) {
  // Two GPUs gate side by side: each writes its own file, and each variant's timed outputs are
  // kept from the file of the GPU that gated it.
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(7), dir_, {}, 2);
  ASSERT_EQ(data.lanes(), 2U);
  EXPECT_NE(data.outputs_file(0), data.outputs_file(1));
  const buffer_slot& slot = data.checks().at(data.timed_check()).outputs.at(0);
  for (std::size_t lane = 0; lane < 2; ++lane) {
    mapped_file outputs =
        mapped_file::open(data.outputs_file(lane), mapped_file::access::read_write);
    auto bytes = outputs.slice(slot.offset, slot.bytes);
    std::fill(bytes.begin(), bytes.end(), static_cast<std::byte>(lane == 0 ? 0x11 : 0x22));
  }
  EXPECT_EQ(data.produced(data.timed_check(), 0, 0)[0], static_cast<std::byte>(0x11));
  EXPECT_EQ(data.produced(data.timed_check(), 0, 1)[0], static_cast<std::byte>(0x22));
  const auto kept = dir_ / "kept.bin";
  const std::size_t base = data.keep_timed_outputs(kept, "b", 1);
  const mapped_file saved = mapped_file::open(kept, mapped_file::access::read_only);
  EXPECT_EQ(saved.slice(slot.offset - base, 1)[0], static_cast<std::byte>(0x22));
  // A gate's request writes to its lane's file.
  worker_request request;
  EXPECT_EQ(with_data(request, data, worker_phase::gate, 1).outputs_file, data.outputs_file(1));
  EXPECT_EQ(with_data(request, data, worker_phase::gate).outputs_file, data.outputs_file(0));
}

// A worker's timing answer whose launches took `control_us` after the outputs got back what they
// held and `poisoned_us` on freshly poisoned outputs, 32 pairs, as one line for fd 3.
std::string timing_line(double control_us, double poisoned_us) {
  worker_result r;
  timing_answer t;
  t.samples.sample_us = {22.0, 22.0, 22.0};
  t.samples.median_us = 22.0;
  t.checks.poisoned = poisoned_launches{.source = "CUPTI kernel time",
                                        .control_us = std::vector<double>(32, control_us),
                                        .poisoned_us = std::vector<double>(32, poisoned_us),
                                        .hot_us = 29.0};
  r.timing = t;
  return nlohmann::json{{"result", to_json(r)}, {"ms", 1}}.dump();
}

// A kept stand-in whose launches on poisoned outputs come out slower than their control; a
// one-shot stand-in (a fresh process) answers with `fresh_line`.
std::filesystem::path dependence_worker(const std::filesystem::path& dir,
                                        const std::string& fresh_line) {
  return stand_in_worker(dir / "worker.sh",
                         fmt::format("#!/bin/sh\n"
                                     "[ \"$2\" = --serve ] || {{ echo '{}' >&3; exit 0; }}\n"
                                     "while read path; do echo '{}' >&3; done\n",
                                     fresh_line, timing_line(30.0, 37.0)));
}

TEST_F(GateData, OutputDependenceSeenInAKeptWorkerIsTimedAgainInAFreshOneWhoseAnswerStands) {
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(3), dir_);
  const auto script = dependence_worker(dir_, timing_line(30.0, 30.0));
  persistent_worker kept(kept_worker_argv(script));
  const worker_launcher launcher{
      .executable = script, .dir = dir_, .visible = {}, .lane = 0, .kept = &kept};
  worker_request request;
  request.phase = worker_phase::time;
  const timing_outcome honest =
      run_timing(data, request, launcher, std::chrono::milliseconds(10'000));
  EXPECT_EQ(kept.started(), 1);
  EXPECT_EQ(honest.reason, reason_code::none) << honest.message;
  ASSERT_TRUE(honest.poisoned.has_value());
  EXPECT_DOUBLE_EQ(honest.poisoned->poisoned_us.front(), 30.0) << "the fresh worker's launches";
}

TEST_F(GateData, OutputDependenceSeenInAFreshWorkerTooIsStaleInTiming) {
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(3), dir_);
  const auto script = dependence_worker(dir_, timing_line(30.0, 41.0));
  persistent_worker kept(kept_worker_argv(script));
  worker_request request;
  request.phase = worker_phase::time;
  const worker_launcher with_kept{
      .executable = script, .dir = dir_, .visible = {}, .lane = 0, .kept = &kept};
  const timing_outcome cheat =
      run_timing(data, request, with_kept, std::chrono::milliseconds(10'000));
  EXPECT_EQ(cheat.reason, reason_code::stale_in_timing);
  EXPECT_NE(cheat.message.find("41.00 us"), std::string::npos) << cheat.message;
  // Without a kept worker there is no second opinion: bench's own fresh worker decides.
  const worker_launcher fresh{
      .executable = script, .dir = dir_, .visible = {}, .lane = 0, .kept = nullptr};
  EXPECT_EQ(run_timing(data, request, fresh, std::chrono::milliseconds(10'000)).reason,
            reason_code::stale_in_timing);
}

// A one-shot stand-in worker whose timing answer holds launches on the case's other draws.
std::filesystem::path unseen_worker(const std::filesystem::path& dir, const unseen_inputs& u) {
  worker_result r;
  timing_answer t;
  t.samples.sample_us = {22.0, 22.0, 22.0};
  t.samples.median_us = 22.0;
  t.checks.unseen = u;
  r.timing = t;
  return stand_in_worker(
      dir / "worker.sh",
      "#!/bin/sh\necho '" + nlohmann::json{{"result", to_json(r)}, {"ms", 1}}.dump() + "' >&3\n");
}

TEST_F(GateData, LaunchesOnTheCasesOtherDrawsMustGiveTheirOwnAnswersInTheirUsualTime) {
  const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(3), dir_);
  worker_request request;
  request.phase = worker_phase::time;
  auto timed = [&](const unseen_inputs& u) {
    const worker_launcher launcher{.executable = unseen_worker(dir_, u),
                                   .dir = dir_,
                                   .visible = {},
                                   .lane = 0,
                                   .kept = nullptr};
    return run_timing(data, request, launcher, std::chrono::milliseconds(10'000));
  };
  unseen_inputs even{.source = "CUPTI kernel time",
                     .seen_us = {6.0, 6.1, 6.0},
                     .unseen_us = {6.1, 6.0},
                     .differing = {}};
  const timing_outcome honest = timed(even);
  EXPECT_EQ(honest.reason, reason_code::none) << honest.message;
  ASSERT_TRUE(honest.unseen.has_value()) << "the launches go on record";
  EXPECT_EQ(honest.unseen->unseen_us, even.unseen_us);

  // The timed draw's answer where another draw's was due: kept by address or launch count.
  even.differing = {"out on the draw of seed 0x2"};
  const timing_outcome kept_answer = timed(even);
  EXPECT_EQ(kept_answer.reason, reason_code::stale_in_timing);
  EXPECT_NE(kept_answer.message.find("out on the draw of seed 0x2"), std::string::npos)
      << kept_answer.message;

  // Right answers, but slower on every draw it had not met: kept by value.
  const timing_outcome by_value =
      timed({.source = "CUPTI kernel time", .seen_us = {3.0, 3.1, 3.0}, .unseen_us = {9.0, 9.2}});
  EXPECT_EQ(by_value.reason, reason_code::stale_in_timing);
  EXPECT_NE(by_value.message.find("met the inputs before"), std::string::npos) << by_value.message;
  ASSERT_TRUE(by_value.unseen.has_value()) << "the launches that rejected it, on record";
}

TEST_F(GateData, RemovesItsFilesWhenDone) {
  std::filesystem::path inputs;
  {
    const gate_data data(task_, find_reference("rmsnorm"), gate_seeds(1), dir_);
    inputs = data.inputs_file();
    EXPECT_TRUE(std::filesystem::exists(inputs));
  }
  EXPECT_FALSE(std::filesystem::exists(inputs));
}

}  // namespace
}  // namespace blaster
