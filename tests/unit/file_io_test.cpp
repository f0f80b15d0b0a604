// A write that fails part way (a full disk, a file size limit) surfaces as a blaster::error that
// names the file, and leaves neither a torn file nor a temp file behind.
#include "core/file_io.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "../store/store_test_support.hpp"
#include "core/cas_store.hpp"
#include "core/error.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using testing::temp_folder;

// ENOSPC cannot be produced portably without mounting a small file system; RLIMIT_FSIZE makes
// write() fail part way through (EFBIG) on any machine, through the same code path.
TEST(FileIo, FailedWriteNamesThePathAndLeavesNothing) {
  const temp_folder dir("file-io");
  const std::string big(1 << 20, 'x');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
    const rlimit limit{64 << 10, 64 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    try {
      write_file_atomically(dir.path() / "report.json", big);
      code = 11;
    } catch (const error& e) {
      const std::string message = e.what();
      if (message.find((dir.path() / "report.json").string()) == std::string::npos) code = 12;
      if (message.find("File too large") == std::string::npos) code = 13;
      if (code != 0) std::fprintf(stderr, "message: %s\n", e.what());
    }
    try {
      cas_store cas(dir.path() / "cas");
      static_cast<void>(cas.put(big));
      code = 14;
    } catch (const error& e) {
      if (std::string(e.what()).find((dir.path() / "cas").string()) == std::string::npos) {
        code = 15;
      }
    }
    std::fflush(stderr);
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "see the child's message on stderr";
  EXPECT_FALSE(fs::exists(dir.path() / "report.json"));
  EXPECT_FALSE(cas_store(dir.path() / "cas").contains(sha256_hex(big)));
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_FALSE(entry.is_regular_file()) << "left behind: " << entry.path();
  }
}

TEST(FileIo, UnwritableFolderSaysSo) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes through any permission bits";
  const temp_folder dir("file-io-ro");
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  try {
    write_file_atomically(dir.path() / "x", "bytes");
    ADD_FAILURE() << "wrote into a read-only folder";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("not writable"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
  }
  fs::permissions(dir.path(), fs::perms::owner_all);
}

}  // namespace
}  // namespace blaster
