#include "core/cas_store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

constexpr const char* hello_digest =
    "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

class CasStore : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("blaster-cas-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write_file(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
    ASSERT_TRUE(out.good()) << path;
  }

  // Replaces an object's bytes in place, as disk rot or a stray editor would.
  static void corrupt(const fs::path& path, const std::string& bytes) {
    fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
    write_file(path, bytes);
  }

  fs::path root_;
};

TEST_F(CasStore, RoundTripsBytesUnderTheirDigest) {
  cas_store cas(root_);
  EXPECT_EQ(cas.put("hello"), hello_digest);
  EXPECT_TRUE(cas.contains(hello_digest));
  EXPECT_EQ(cas.get(hello_digest), "hello");

  const std::string binary("\0\x01\xff\n\r tail", 10);
  const std::string digest = cas.put(binary);
  EXPECT_EQ(digest, sha256_hex(binary));
  EXPECT_EQ(cas.get(digest), binary);

  const std::string empty_digest = cas.put("");
  EXPECT_EQ(cas.get(empty_digest), "");
}

TEST_F(CasStore, AbsentObjectIsNulloptNotAnError) {
  cas_store cas(root_);
  EXPECT_FALSE(cas.contains(hello_digest));
  EXPECT_EQ(cas.get(hello_digest), std::nullopt);
}

TEST_F(CasStore, ObjectsLiveUnderTheirFirstTwoHexDigits) {
  cas_store cas(root_);
  const std::string digest = cas.put("hello");
  const fs::path expected = root_ / "2c" / hello_digest;
  EXPECT_EQ(cas.path_of(digest), expected);
  ASSERT_TRUE(fs::is_regular_file(expected));
  EXPECT_EQ(fs::file_size(expected), 5u);
  // Nothing else is left in the object's folder: the temp file was renamed, not copied.
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "2c"), fs::directory_iterator{}), 1);
}

TEST_F(CasStore, PuttingExistingBytesDoesNotRewriteTheObject) {
  cas_store cas(root_);
  cas.put("hello");
  const fs::path path = cas.path_of(hello_digest);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);

  EXPECT_EQ(cas.put("hello"), hello_digest);
  EXPECT_EQ(cas_store(root_).put("hello"), hello_digest);

  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  // A rewrite goes through a new temp file, hence a new inode.
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

TEST_F(CasStore, CorruptedObjectIsDetectedOnGet) {
  cas_store cas(root_);
  cas.put("hello");
  const fs::path path = cas.path_of(hello_digest);
  corrupt(path, "jello");

  try {
    (void)cas.get(hello_digest);
    FAIL() << "a corrupted object was returned as good";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  // Without verification the bytes come back as they are, for forensics.
  EXPECT_EQ(cas.get(hello_digest, /*verify=*/false), "jello");
}

TEST_F(CasStore, ConstructionRemovesLeftoversOfInterruptedWrites) {
  {
    cas_store cas(root_);
    cas.put("hello");
  }
  // pid_max is at most 2^22, so this writer cannot be alive.
  const fs::path dead_writer = root_ / "2c" / (std::string(hello_digest) + ".tmp.99999999.Ab12Cd");
  const fs::path unnamed_writer = root_ / "ab" / "something.tmp.junk";
  const fs::path live_writer = root_ / "ab" / ("x.tmp." + std::to_string(::getpid()) + ".Zz9Yy8");
  const fs::path unrelated = root_ / "ab" / "notes.txt";
  write_file(dead_writer, "partial");
  write_file(unnamed_writer, "partial");
  write_file(live_writer, "in flight");
  write_file(unrelated, "keep");

  cas_store cas(root_);
  EXPECT_FALSE(fs::exists(dead_writer));
  EXPECT_FALSE(fs::exists(unnamed_writer));
  EXPECT_TRUE(fs::exists(live_writer)) << "a live writer's temp file was removed";
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_EQ(cas.get(hello_digest), "hello");
}

TEST_F(CasStore, RejectsMalformedDigests) {
  cas_store cas(root_);
  cas.put("hello");
  std::string upper(hello_digest);
  upper[0] = 'C';
  const std::vector<std::string> bad = {"",
                                        "2c",
                                        std::string(hello_digest).substr(1),
                                        std::string(hello_digest) + "0",
                                        upper,
                                        "../" + std::string(hello_digest).substr(3),
                                        std::string(63, 'a') + "g"};
  for (const std::string& digest : bad) {
    EXPECT_THROW((void)cas.path_of(digest), input_error) << digest;
    EXPECT_THROW((void)cas.contains(digest), input_error) << digest;
    EXPECT_THROW((void)cas.get(digest), input_error) << digest;
  }
}

TEST_F(CasStore, ObjectsAreReadOnly) {
  cas_store cas(root_);
  const fs::path path = cas.path_of(cas.put("hello"));
  const fs::perms read_only =
      fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
  EXPECT_EQ(fs::status(path).permissions(), read_only);
  if (::geteuid() != 0) {  // root writes through any mode bits
    EXPECT_FALSE(std::ofstream(path, std::ios::app).is_open());
  }
}

TEST_F(CasStore, ConcurrentPutsOfTheSameBytesAgree) {
  cas_store cas(root_);
  const std::string payload(1 << 20, 'x');
  std::vector<std::thread> writers;
  std::vector<std::string> digests(8);
  for (std::size_t i = 0; i < digests.size(); ++i) {
    writers.emplace_back([&, i] {
      try {
        digests[i] = cas_store(root_).put(payload);
      } catch (const std::exception& e) {
        digests[i] = e.what();
      }
    });
  }
  for (auto& writer : writers) writer.join();
  for (const auto& digest : digests) EXPECT_EQ(digest, sha256_hex(payload));
  EXPECT_EQ(cas.get(digests[0]), payload);
  const fs::path folder = cas.path_of(digests[0]).parent_path();
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator{}), 1);
}

}  // namespace
}  // namespace blaster
