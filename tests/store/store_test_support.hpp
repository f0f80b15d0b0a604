#pragma once

// Helpers of the store acceptance tests: a private temporary home, SQL one-liners, and the
// checks that a store is whole.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <string_view>

#include "evidence/database.hpp"
#include "evidence/run_catalog.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"

namespace blaster::testing {

namespace fs = std::filesystem;

// A fresh folder under the temp directory, removed with the fixture.
class temp_folder {
 public:
  explicit temp_folder(std::string_view what) {
    static std::atomic<int> counter{0};
    path_ =
        fs::temp_directory_path() / (std::string("blaster-") + std::string(what) + "-" +
                                     std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~temp_folder() {
    std::error_code ignored;
    // Read-only objects and folders a test made read-only must not stop the cleanup.
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(path_, ignored);
  }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline std::string query_text(database& db, std::string_view sql) {
  statement query = db.prepare(sql);
  if (!query.step()) return "<no row>";
  return query.column_text(0);
}

inline std::int64_t query_int(database& db, std::string_view sql) {
  statement query = db.prepare(sql);
  EXPECT_TRUE(query.step()) << sql;
  return query.column_int64(0);
}

// The store is whole: SQLite's own check passes, no foreign key dangles, every file in the CAS
// hashes to its name (and no temp file is left once a store was opened), and every digest a row
// cites names an object the CAS holds, intact.
inline void expect_store_is_whole(store& s) {
  EXPECT_EQ(query_text(s.db(), "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query_text(s.db(), "PRAGMA foreign_key_check"), "<no row>");
  std::size_t objects = 0;
  for (const auto& entry : fs::recursive_directory_iterator(s.cas().root())) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    ASSERT_TRUE(is_sha256_hex(name)) << "not an object name: " << entry.path();
    EXPECT_EQ(entry.path().parent_path().filename().string(), name.substr(0, 2)) << entry.path();
    EXPECT_EQ(sha256_file_hex(entry.path()), name) << "object does not hash to its name";
    ++objects;
  }
  for (const object_citation& c : run_catalog(s).cited_objects(std::nullopt)) {
    EXPECT_TRUE(s.cas().contains(c.sha256))
        << c.table << " row " << c.row_id << " cites missing object " << c.column << " "
        << c.sha256;
  }
  ::testing::Test::RecordProperty("objects", static_cast<int>(objects));
}

}  // namespace blaster::testing
