// The README's exit-code table, walked through the real binary: each bad input below must exit
// with its documented code, name what is wrong without a raw library message, and with --json
// print exactly one JSON object whose "error" says the same.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

struct outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("blaster-bad-input-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root" / "tasks");
    fs::create_directories(dir_ / "root" / "kernels");
    fs::copy(fs::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm", root() / "tasks" / "rmsnorm");
    fs::copy(fs::path(BLASTER_SOURCE_DIR) / "kernels" / "common", root() / "kernels" / "common");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path root() const { return dir_ / "root"; }
  fs::path task_json() const { return root() / "tasks" / "rmsnorm" / "task.json"; }

  // Replaces `from` in rmsnorm's task.json, which must hold it.
  void edit_task(const std::string& from, const std::string& to) const {
    std::string text = read_file(task_json());
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    write_file_atomically(task_json(), text);
  }

  // A candidate beside the task whose plan is rmsnorm's baseline plan, with `params` added.
  fs::path candidate(const std::string& name, const std::string& prefix,
                     const std::string& params = "") const {
    std::string text = read_file(root() / "tasks" / "rmsnorm" / "init.cu");
    if (!params.empty()) {
      const std::size_t at = text.find("  ]\n}");
      text.insert(at + 3, ",\n  \"params\": " + params);
    }
    const fs::path file = dir_ / name;
    write_file_atomically(file, prefix + text);
    return file;
  }

  // `env blaster ARGS` run from the fixture's root; --root and --home are the caller's to give.
  outcome run(const std::string& args, const std::string& env = "") const {
    const std::string command = fmt::format("cd '{}' && {} '{}' {} 2>'{}'", root().string(), env,
                                            BLASTER_BINARY, args, (dir_ / "stderr.txt").string());
    outcome result;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    std::array<char, 4096> chunk{};
    while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
      result.out.append(chunk.data(), n);
    }
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.err = read_file(dir_ / "stderr.txt");
    return result;
  }

  // Runs `args` with and without --json and checks the code, the message and the JSON error.
  void expect_error(const std::string& args, int code, const std::string& says,
                    const std::string& env = "") const {
    SCOPED_TRACE(args);
    const outcome plain = run(args, env);
    EXPECT_EQ(plain.exit_code, code) << plain.err << plain.out;
    const std::string text = plain.err + plain.out;
    EXPECT_NE(text.find(says), std::string::npos) << text;
    for (const char* raw : {"[json.exception", "terminate called", "what():", "filesystem error"}) {
      EXPECT_EQ(text.find(raw), std::string::npos) << raw << " in: " << text;
    }
    const outcome json = run(args + " --json", env);
    EXPECT_EQ(json.exit_code, code) << json.err;
    const auto j = nlohmann::json::parse(json.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << "not one JSON object: " << json.out;
    ASSERT_TRUE(j.contains("error")) << json.out;
    const auto& e = j.at("error");
    for (const char* key : {"code", "message", "file", "line", "hint"}) {
      EXPECT_TRUE(e.contains(key)) << key << " in " << json.out;
    }
    EXPECT_NE(e.at("message").get<std::string>().find(says), std::string::npos) << json.out;
    const char* names[] = {"", "failure", "bad_input", "no_gpu", "not_verified"};
    EXPECT_EQ(e.at("code"), names[code]) << json.out;
  }

  std::string root_flag() const { return fmt::format("--root '{}'", root().string()); }
  std::string home_flag() const { return fmt::format("--home '{}'", (dir_ / "home").string()); }
  std::string compile(const std::string& more = "") const {
    return fmt::format("{} {} compile --task rmsnorm {}", root_flag(), home_flag(), more);
  }

  fs::path dir_;
};

TEST_F(BadInput, AHomeThatIsNotAFolderIsBadInput) {
  write_file_atomically(dir_ / "file", "not a folder");
  for (const std::string command : {"runs", "show latest", "history --task rmsnorm"}) {
    expect_error(fmt::format("--home '{}' {}", (dir_ / "file").string(), command), 2,
                 "is not a folder");
    expect_error("--home /dev/null " + command, 2, "/dev/null");
  }
  expect_error(
      fmt::format("{} --home '{}' compile --task rmsnorm", root_flag(), (dir_ / "file").string()),
      2, "is not a folder");
}

TEST_F(BadInput, ACasThatIsAFileOrADatabaseThatIsAFolderIsBadInput) {
  fs::create_directories(dir_ / "home");
  write_file_atomically(dir_ / "home" / "cas", "not a folder");
  expect_error(compile(), 2, "cas");
  expect_error(home_flag() + " runs", 2, "cas");
  fs::remove(dir_ / "home" / "cas");
  fs::create_directories(dir_ / "home" / "blaster.db");
  expect_error(compile(), 2, "blaster.db");
  expect_error(home_flag() + " runs", 2, "blaster.db");
}

TEST_F(BadInput, NanIsOutsideEveryRange) {
  for (const char* flag : {"--deadline", "--budget", "--max-noise", "--sample-ms", "--cooldown",
                           "--compile-timeout", "--compile-memory"}) {
    expect_error(fmt::format("{} {} bench --task rmsnorm {} nan", root_flag(), home_flag(), flag),
                 2, flag);
  }
  EXPECT_FALSE(fs::exists(dir_ / "home" / "blaster.db")) << "a refused flag ran the bench";
}

TEST_F(BadInput, TaskNamesStayInsideTheRoot) {
  expect_error(
      fmt::format("{} {} compile --task {}", root_flag(), home_flag(), std::string(300, 'a')), 2,
      "is not a task name");
  fs::create_directories(dir_ / "outside");
  fs::copy(root() / "tasks" / "rmsnorm", dir_ / "outside" / "rmsnorm");
  expect_error(fmt::format("{} {} compile --task ../../outside/rmsnorm", root_flag(), home_flag()),
               2, "is not a task name");
}

TEST_F(BadInput, TheFolderIsTheTasksName) {
  fs::copy(root() / "tasks" / "rmsnorm", root() / "tasks" / "copied");
  expect_error(fmt::format("{} {} compile --task copied", root_flag(), home_flag()), 2,
               "is not the task's folder \"copied\"");
}

TEST_F(BadInput, TaskFileMistakesNameTheirPlace) {
  edit_task("\"atol\": 0.005", "\"atol\": 1e999");
  expect_error(compile(), 2, "task.json:18:");
  edit_task("\"atol\": 1e999", "\"atol\": 0.005, \"atol\": 0.5");
  expect_error(compile(), 2, "duplicate key \"atol\"");
  edit_task("\"atol\": 0.005, \"atol\": 0.5", "\"atol\": 0.005");
  edit_task("\"std\": 1", "\"std\": -1");
  expect_error(compile(), 2, "init.std");
  edit_task("\"std\": -1", "\"std\": 1");
  edit_task("\"out\": {", "\"out put\": {");
  expect_error(compile(), 2, "must be an identifier");
}

TEST_F(BadInput, CandidatesThatAreNotCleanText) {
  expect_error(
      compile(fmt::format("--candidate '{}'", candidate("bom.cu", "\xEF\xBB\xBF").string())), 2,
      "byte-order mark");
  expect_error(compile(fmt::format("--candidate '{}'", candidate("ff.cu", "\n\n\xFF").string())), 2,
               "ff.cu:3:1: byte 0xFF is not UTF-8");
}

TEST_F(BadInput, AParamMayNotShadowATaskSymbol) {
  expect_error(
      compile(fmt::format("--candidate '{}'", candidate("shadow.cu", "", "{\"C\": [1]}").string())),
      2, "param \"C\" shadows the task's symbol");
}

TEST_F(BadInput, SizesAreBoundedBeforeAnyAllocation) {
  // A scratch buffer of 10^18 bytes, refused at its place in the plan.
  std::string text = read_file(root() / "tasks" / "rmsnorm" / "init.cu");
  text.insert(text.find("  ]\n}") + 3, ",\n  \"scratch\": {\"huge\": \"1000000000000000000\"}");
  write_file_atomically(dir_ / "huge.cu", text);
  expect_error(compile(fmt::format("--candidate '{}'", (dir_ / "huge.cu").string())), 2,
               "huge.cu:7:24: scratch \"huge\" has 1000000000000000000 bytes");
  // 10,000 params combinations: refused before any compiles, naming the flag.
  std::string values = "[0";
  for (int i = 1; i < 100; ++i) values += fmt::format(", {}", i);
  values += "]";
  const fs::path many = candidate("many.cu", "", fmt::format("{{\"P\": {0}, \"Q\": {0}}}", values));
  expect_error(compile(fmt::format("--candidate '{}'", many.string())), 2, "--max-variants");
}

TEST_F(BadInput, ALongCompileOfManyVariantsShowsProgress) {
  std::string values = "[0";
  for (int i = 1; i < 24; ++i) values += fmt::format(", {}", i);
  values += "]";
  const fs::path file = candidate("variants.cu", "", fmt::format("{{\"UNUSED\": {}}}", values));
  const outcome r = run(compile(fmt::format("--candidate '{}'", file.string())));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("variants.cu: compiled "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" of 24 variants in "), std::string::npos) << r.err;
}

TEST_F(BadInput, VerifyHashesNoFileOverItsLimit) {
  // A terabyte that costs its maker nothing: a sparse file, listed in SHA256SUMS.
  fs::create_directories(dir_ / "bundle");
  write_file_atomically(dir_ / "bundle" / "small.txt", "twelve bytes");
  { std::ofstream(dir_ / "bundle" / "huge.bin").put('\0'); }
  fs::resize_file(dir_ / "bundle" / "huge.bin", std::uintmax_t{1} << 40);
  write_file_atomically(
      dir_ / "bundle" / "SHA256SUMS",
      std::string(64, '0') + "  huge.bin\n" + sha256_hex("twelve bytes") + "  small.txt\n");
  const std::string verify = fmt::format("{} verify '{}'", home_flag(), (dir_ / "bundle").string());
  expect_error(verify, 4, "do not trust this bundle");
  const outcome r = run(verify + " --json");
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("problems").size(), 1U) << r.out;
  EXPECT_EQ(j.at("problems")[0].at("problem"), "too_large");
  EXPECT_EQ(j.at("problems")[0].at("path"), "huge.bin");
  EXPECT_EQ(j.at("files_matched"), 1);
  // The limit is the user's to set.
  fs::remove(dir_ / "bundle" / "huge.bin");
  write_file_atomically(dir_ / "bundle" / "SHA256SUMS",
                        sha256_hex("twelve bytes") + "  small.txt\n");
  EXPECT_EQ(run(verify + " --max-file-bytes 11").exit_code, 4);
  EXPECT_EQ(run(verify + " --max-file-bytes 12").exit_code, 0);
}

TEST_F(BadInput, CompilingAnEmptyFolderIsBadInput) {
  fs::create_directories(dir_ / "empty");
  expect_error(compile(fmt::format("--candidate '{}'", (dir_ / "empty").string())), 2,
               "no candidate files (.cu, .py, .ptx, .cubin) in this folder");
}

TEST_F(BadInput, AnEmptyCudaHomeIsNotSilentlyReplaced) {
  fs::create_directories(dir_ / "no-toolkit");
  expect_error(compile(), 2, "no CUDA toolkit there",
               fmt::format("CUDA_HOME='{}'", (dir_ / "no-toolkit").string()));
}

TEST_F(BadInput, UnknownFlagsRunsAndFoldersAreBadInput) {
  expect_error(home_flag() + " runs --no-such-flag", 2, "--no-such-flag");
  expect_error(home_flag() + " show 12", 2, "no blaster store");
  expect_error(fmt::format("{} verify '{}'", home_flag(), (dir_ / "missing").string()), 2,
               "missing");
}

// The README's other codes: 1 the machine failed, 3 no GPU, 4 the bundle does not hold.
TEST_F(BadInput, EveryDocumentedExitCodeComesWithItsJsonError) {
  // A disk that takes no more bytes: the file size limit, whose signal blaster ignores.
  expect_error(compile(), 1, "the file size limit (ulimit -f)", "ulimit -f 8 &&");
  fs::remove_all(dir_ / "home");
  // Without a GPU, bench compiles, records, and says that the rest needs one.
  if (nlohmann::json::parse(run(home_flag() + " doctor --json").out).at("gpu").is_null()) {
    expect_error(fmt::format("{} {} bench --task rmsnorm", root_flag(), home_flag()), 3,
                 "need a GPU");
  }
  fs::create_directories(dir_ / "bundle");
  write_file_atomically(dir_ / "bundle" / "SHA256SUMS", std::string(64, '0') + "  gone.txt\n");
  expect_error(fmt::format("{} verify '{}'", home_flag(), (dir_ / "bundle").string()), 4,
               "do not trust this bundle");
}

// Under a file size limit each command that writes says which file and what to do, exit 1, and
// leaves no bundle behind, torn or whole: SIGXFSZ ended bench, export, merge and trajectories
// export with no word.
TEST_F(BadInput, UnderAFileSizeLimitEveryWriterSaysSoAndLeavesNothingTorn) {
  const std::string blaster = fmt::format("{} {}", root_flag(), home_flag());
  expect_error(blaster + " bench --task rmsnorm", 1, "the file size limit (ulimit -f)",
               "ulimit -f 8 &&");
  // A home with a bench run and an optimize session, written without the limit; the bench
  // compiles rmsnorm's candidates too, whose objects pass 32 KiB.
  fs::copy(fs::path(BLASTER_SOURCE_DIR) / "kernels" / "rmsnorm", root() / "kernels" / "rmsnorm");
  run(blaster + " bench --task rmsnorm");
  const auto bench_run = nlohmann::json::parse(run(blaster + " runs --json").out).at(0).at("id");
  write_file_atomically(dir_ / "broken.cu",
                        "/* blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1, "
                        "\"block\": 32, \"args\": [\"out\"]}]}\n*/\n"
                        "__global__ void k(float* out) { out[0] = x; }\n");
  write_file_atomically(dir_ / "proposer.sh",
                        fmt::format("read line\npython3 -c 'import json; print(json.dumps("
                                    "{{\"source\": open(\"{}\").read()}}))'\nread line\n"
                                    "echo '{{\"stop\": true}}'\n",
                                    (dir_ / "broken.cu").string()));
  ASSERT_EQ(run(fmt::format("{} optimize --task rmsnorm --steps 1 --proposer 'sh {}'", blaster,
                            (dir_ / "proposer.sh").string()))
                .exit_code,
            0);
  const std::vector<std::pair<std::string, std::string>> writers = {
      // The bench run: the bundle's write fails, past the database's (32 KiB of shared memory).
      {fmt::format("export {} --out", bench_run.dump()), "ulimit -f 64 &&"},
      {"trajectories export --run latest --out", "ulimit -f 8 &&"}};
  for (const auto& [command, limit] : writers) {
    const fs::path out = dir_ / "out";
    expect_error(fmt::format("{} {} '{}'", blaster, command, out.string()), 1,
                 "the file size limit (ulimit -f) was reached: raise it", limit);
    for (const auto& entry : fs::directory_iterator(dir_)) {
      EXPECT_EQ(entry.path().filename().string().find("out"), std::string::npos)
          << command << " left " << entry.path();
    }
    fs::remove_all(out);
  }
  expect_error(fmt::format("{} --home '{}' merge '{}'", root_flag(), (dir_ / "merged").string(),
                           (dir_ / "home").string()),
               1, "blaster.db: cannot write the database: File too large", "ulimit -f 64 &&");
}

TEST_F(BadInput, DoctorNeedsNoGpu) {
  const outcome r = run(home_flag() + " doctor --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("gpu"));
}

}  // namespace
}  // namespace blaster
