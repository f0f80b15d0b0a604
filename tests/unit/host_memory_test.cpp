#include "benchmarking/worker/detail/worker_context.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace blaster::worker {
namespace {

namespace fs = std::filesystem;
using role = host_memory::role;
using access = mapped_file::access;

class HostMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blaster-host-memory-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
  static std::string text_of(const mapped_file& f) {
    return {reinterpret_cast<const char*>(f.bytes().data()), f.bytes().size()};
  }

  fs::path dir_;
};

// [page faults] that reading one byte of every page of a mapping took.
long faults_to_touch(const mapped_file& f) {
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  unsigned sum = 0;
  for (std::size_t i = 0; i < f.bytes().size(); i += 4096) {
    sum += static_cast<unsigned>(static_cast<const volatile std::byte&>(f.bytes()[i]));
  }
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  static_cast<void>(sum);
  return after.ru_minflt - before.ru_minflt;
}

TEST_F(HostMemory, TheSameFileKeepsItsMappingAndSeesWhatWasWrittenSince) {
  host_memory memory;
  const fs::path path = write("outputs.bin", std::string(1 << 20, 'a'));
  ASSERT_GT(faults_to_touch(memory.map(role::outputs, path, access::read_only)), 0)
      << "a fresh mapping's pages should cost faults at their first touch";
  std::fstream(path, std::ios::binary | std::ios::in | std::ios::out) << "wxyz";
  const mapped_file& again = memory.map(role::outputs, path, access::read_only);
  EXPECT_EQ(faults_to_touch(again), 0) << "the mapping was made again";
  EXPECT_EQ(text_of(again).substr(0, 5), "wxyza");
}

TEST_F(HostMemory, AFileReplacedResizedOrAskedInAnotherModeIsMappedAgain) {
  host_memory memory;
  const fs::path path = write("inputs.bin", "abcd");
  EXPECT_EQ(text_of(memory.map(role::inputs, path, access::read_only)), "abcd");

  // A new file under the old name: the old mapping still shows the removed one.
  fs::remove(path);
  write("inputs.bin", "efgh");
  EXPECT_EQ(text_of(memory.map(role::inputs, path, access::read_only)), "efgh");

  // The same file, longer: the old mapping would end before its last bytes.
  std::ofstream(path, std::ios::binary | std::ios::app) << "ijkl";
  EXPECT_EQ(text_of(memory.map(role::inputs, path, access::read_only)), "efghijkl");

  const mapped_file& writable = memory.map(role::inputs, path, access::read_write);
  std::memcpy(writable.bytes().data(), "E", 1);
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "Efghijkl");
}

TEST_F(HostMemory, EachRoleKeepsItsOwnFile) {
  host_memory memory;
  const mapped_file& inputs = memory.map(role::inputs, write("a.bin", "aaaa"), access::read_only);
  const mapped_file& outputs = memory.map(role::outputs, write("b.bin", "bbbb"), access::read_only);
  EXPECT_EQ(text_of(inputs), "aaaa");
  EXPECT_EQ(text_of(outputs), "bbbb");
}

TEST_F(HostMemory, AMissingFileIsAnErrorThatNamesIt) {
  host_memory memory;
  try {
    static_cast<void>(memory.map(role::inputs, dir_ / "gone.bin", access::read_only));
    FAIL() << "mapped a file that does not exist";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("gone.bin"), std::string::npos) << e.what();
  }
}

TEST_F(HostMemory, ScratchGrowsAndKeepsItsMemory) {
  host_memory memory;
  const auto small = memory.scratch(16);
  EXPECT_EQ(small.size(), 16U);
  const auto large = memory.scratch(1 << 20);
  EXPECT_EQ(large.size(), 1U << 20);
  EXPECT_EQ(memory.scratch(16).data(), large.data()) << "a smaller request reallocated";
}

}  // namespace
}  // namespace blaster::worker
