// Files mapped to hand data to worker processes.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/mapped_file.hpp"

namespace blaster {
namespace {

// A created file holds its blocks before anything is stored into it: a sparse one would turn a
// full disk into a SIGBUS at the first store instead of an error at creation.
TEST(MappedFile, CreatedFilesReserveTheirBlocks) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("blaster-mapped-" + std::to_string(::getpid()) + ".bin");
  constexpr std::size_t bytes = std::size_t{8} << 20U;
  {
    const mapped_file file = mapped_file::create(path, bytes);
    ASSERT_EQ(file.bytes().size(), bytes);
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_GE(static_cast<std::size_t>(info.st_blocks) * 512U, bytes);
    std::fill(file.bytes().begin(), file.bytes().end(), std::byte{0x5A});
  }
  const mapped_file again = mapped_file::open(path, mapped_file::access::read_only);
  EXPECT_EQ(again.bytes()[bytes - 1], std::byte{0x5A});
  std::filesystem::remove(path);
}

TEST(MappedFile, AnEmptyFileMapsToNothing) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("blaster-mapped-empty-" + std::to_string(::getpid()) + ".bin");
  const mapped_file file = mapped_file::create(path, 0);
  EXPECT_TRUE(file.bytes().empty());
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace blaster
