// No log that blaster prints or stores holds a byte of a host file: a file planted with a unique
// marker is included in every disguise the preprocessor accepts, and the marker appears in no
// log, no message, no cache entry and no object of the store. Unchecked, the same include puts
// it in NVRTC's log: the test would see a leak.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "benchmarking/runner/bench_runner.hpp"
#include "core/file_io.hpp"
#include "core/nvrtc_compiler.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

const fs::path source_root = BLASTER_SOURCE_DIR;

class HostFileLeak : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device entropy;
    marker_ = fmt::format("HOST_SECRET_{}_{:08x}{:08x}", ::getpid(), entropy(), entropy());
    dir_ = fs::temp_directory_path() / fmt::format("blaster-leak-{}-{}", ::getpid(), entropy());
    fs::create_directories(dir_ / "root" / "kernels" / "common");
    // Not C++: NVRTC quotes the line in its error log when it reads it.
    planted_ = dir_ / "planted_secret.h";
    std::ofstream(planted_) << marker_ << " is not C++;\n";
    // The same file where NVRTC looks for a quoted include: the working folder of the process.
    in_working_folder_ = fs::current_path() / fmt::format("planted_secret_{}.h", ::getpid());
    std::ofstream(in_working_folder_) << marker_ << " is not C++;\n";
    // Where thrust's macro-built include would look once "execution_policy" names a path.
    fs::create_directories(dir_ / "detail");
    std::ofstream(dir_ / "detail" / "execution_policy.h") << marker_ << " is not C++;\n";
    // A shared header that tries it from inside.
    std::ofstream(dir_ / "root" / "kernels" / "common" / "evil.cuh")
        << "#pragma once\n#include \"" << planted_.string() << "\"\n";
    fs::create_directories(dir_ / "root" / "tasks");
    fs::create_directory_symlink(source_root / "tasks" / "rmsnorm",
                                 dir_ / "root" / "tasks" / "rmsnorm");
  }
  void TearDown() override {
    fs::remove(in_working_folder_);
    fs::remove_all(dir_);
  }

  // A candidate for rmsnorm whose plan and kernel are init.cu's, with `preamble` before the
  // kernel, and optionally another kernel name or params in the plan.
  fs::path candidate(std::string_view name, const std::string& preamble,
                     const std::string& kernel = "\"rmsnorm_naive\"",
                     const std::string& params = "") const {
    std::string init = read_file(source_root / "tasks/rmsnorm/init.cu");
    init.replace(init.find("\"rmsnorm_naive\""), 15, kernel);
    if (!params.empty()) init.insert(init.find("  ]\n}") + 3, ",\n  \"params\": " + params);
    const std::size_t body = init.find("*/\n") + 3;
    init.insert(body, preamble + "\n");
    const fs::path file = dir_ / fmt::format("{}.cu", name);
    std::ofstream(file, std::ios::binary) << init;
    return file;
  }

  // Every file under the folder, as bytes.
  static std::vector<std::pair<fs::path, std::string>> files_under(const fs::path& folder) {
    std::vector<std::pair<fs::path, std::string>> out;
    for (const auto& entry : fs::recursive_directory_iterator(folder)) {
      if (entry.is_regular_file()) out.emplace_back(entry.path(), read_file(entry.path()));
    }
    return out;
  }

  // No include of a path: a macro that a toolkit header's macro-built include expands
  // (thrust's, which CUB reaches), pointed at the planted detail/execution_policy.h.
  [[nodiscard]] std::string hijacked_toolkit_include() const {
    return fmt::format("#define execution_policy {}\n#include <cub/block/block_reduce.cuh>\n",
                       hijacked_name());
  }

  // What "execution_policy" would have to expand to for thrust's include to name the planted file.
  [[nodiscard]] std::string hijacked_name() const {
    std::string climb;  // up to the root from wherever the toolkit really lies
    for (int i = 0; i < 32; ++i) climb += "../";
    return climb + (dir_ / "detail" / "execution_policy").relative_path().string();
  }

  std::string marker_;
  fs::path dir_;
  fs::path planted_;
  fs::path in_working_folder_;
};

TEST_F(HostFileLeak, UncheckedTheIncludeLeaksTheFile) {
  // NVRTC in this process with no policy: what the sandbox and the policy stand between.
  compile_request request;
  request.file_name = "leak.cu";
  request.source = fmt::format("#include \"{}\"\n", planted_.string());
  EXPECT_NE(compile(request).log.find(marker_), std::string::npos);
  request.source = fmt::format("#include \"{}\"\n", in_working_folder_.filename().string());
  EXPECT_NE(compile(request).log.find(marker_), std::string::npos);
  request.source = hijacked_toolkit_include();
  EXPECT_NE(compile(request).log.find(marker_), std::string::npos);
  request.source = "#include <cub/block/block_reduce.cuh>\n";
  request.defines = {"execution_policy=" + hijacked_name()};
  EXPECT_NE(compile(request).log.find(marker_), std::string::npos);
}

TEST_F(HostFileLeak, NoDisguiseGetsAByteOfTheFileIntoALogMessageOrStore) {
  const std::string path = planted_.string();
  // The same file from the toolkit's include folder, through '..'.
  std::string climb;
  for (const auto& part : cuda_include_dirs().front().relative_path()) {
    static_cast<void>(part);
    climb += "../";
  }
  const std::vector<fs::path> disguises = {
      candidate("absolute", fmt::format("#include \"{}\"", path)),
      candidate("angled", fmt::format("#include <{}>", path)),
      candidate("dot_dot",
                fmt::format("#include <{}{}>", climb, planted_.relative_path().string())),
      candidate("working_folder",
                fmt::format("#include \"{}\"", in_working_folder_.filename().string())),
      candidate("macro", fmt::format("#define Q(x) #x\n#define S(x) Q(x)\n#include S({})", path)),
      candidate("digraph_splice", fmt::format("  %:/* c */inc\\\nlude \"{}\"", path)),
      candidate("comment_between", fmt::format("#/*\n*/include \"{}\"", path)),
      candidate("include_next", fmt::format("#include_next \"{}\"", path)),
      candidate("has_include", fmt::format("#if __has_include(\"{}\")\n#error yes\n#endif", path)),
      candidate("shared_header", "#include \"common/evil.cuh\""),
      candidate("toolkit_macro_include", hijacked_toolkit_include()),
      // The same through a param, which reaches NVRTC as -Dexecution_policy=...
      candidate("toolkit_macro_param", "#include <cub/block/block_reduce.cuh>", "\"rmsnorm_naive\"",
                fmt::format("{{\"execution_policy\": [\"{}\"]}}", hijacked_name())),
      candidate("line_directive", fmt::format("#line 1 \"{}\"\nint not_declared = nowhere;", path)),
      candidate("name_expression", "",
                fmt::format("\"rmsnorm_naive\\n#include \\\"{}\\\"\\n\"", path)),
      candidate("param_value", "", "\"rmsnorm_naive\"",
                fmt::format("{{\"X\": [\"1\\n#include \\\"{}\\\"\"]}}", path)),
  };

  bench_options options;
  options.root = dir_ / "root";
  options.task = "rmsnorm";
  options.skip_baseline = true;
  options.candidates = disguises;
  options.compile.executable = BLASTER_BINARY;
  const fs::path home = dir_ / "home";
  bench_report report;
  {
    store records(home);
    report = compile_task(options, records);
  }
  ASSERT_EQ(report.results.size(), disguises.size());
  for (const auto& r : report.results) {
    SCOPED_TRACE(r.file);
    EXPECT_EQ(r.status, "rejected");
    EXPECT_EQ(r.log.find(marker_), std::string::npos) << r.log;
    EXPECT_EQ(r.message.find(marker_), std::string::npos) << r.message;
  }
  // Nothing on disk either: compile cache entries, logs, sources, cubins.
  std::size_t files = 0;
  for (const auto& [file, bytes] : files_under(home)) {
    ++files;
    EXPECT_EQ(bytes.find(marker_), std::string::npos) << file;
  }
  EXPECT_GT(files, disguises.size());  // the sources are there, at least
}

}  // namespace
}  // namespace blaster
