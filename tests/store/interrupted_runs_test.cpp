// Nothing left half-done: a run whose process is gone is marked interrupted when the store is
// next opened and is not exported as complete, the hidden folders of killed exports are
// removed, and a database that lost its runs beside a CAS that holds objects is refused.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "evidence/evidence_bundle.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "store_test_support.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using testing::query_text;
using testing::temp_folder;

// A pid that no process has any more: a child's, after it exited and was reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// Begins a run in a child process that then exits without finishing it, as a killed bench does.
std::int64_t run_left_by_a_dead_process(const fs::path& home) {
  int channel[2];
  if (::pipe(channel) != 0) return 0;
  const pid_t pid = ::fork();
  if (pid == 0) {
    store s(home);
    const std::int64_t id = s.begin_run("blaster bench --task t", "t", "");
    const bool sent = ::write(channel[1], &id, sizeof id) == sizeof id;
    ::_exit(sent ? 0 : 1);
  }
  ::close(channel[1]);
  std::int64_t id = 0;
  if (::read(channel[0], &id, sizeof id) != sizeof id) id = 0;
  ::close(channel[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return id;
}

std::string status_of(store& s, std::int64_t run) {
  return query_text(s.db(), "SELECT status FROM runs WHERE id = " + std::to_string(run));
}

TEST(InterruptedRuns, ARunWhoseProcessIsGoneIsMarkedWhenTheStoreOpens) {
  temp_folder home("interrupted");
  const std::int64_t dead = run_left_by_a_dead_process(home.path());
  ASSERT_GT(dead, 0);
  store s(home.path());
  EXPECT_EQ(status_of(s, dead), "interrupted");
  EXPECT_NE(query_text(s.db(), "SELECT COALESCE(finished_at, 'null') FROM runs WHERE id = " +
                                   std::to_string(dead)),
            "null");
  // A run of a live process, this one, is left running by another opening of the store.
  const std::int64_t live = s.begin_run("blaster bench --task t", "t", "");
  store again(home.path());
  EXPECT_EQ(status_of(again, live), "running");
}

TEST(InterruptedRuns, ExportRefusesThemUnlessAsked) {
  temp_folder dir("interrupted-export");
  const std::int64_t run = run_left_by_a_dead_process(dir.path() / "home");
  ASSERT_GT(run, 0);
  store s(dir.path() / "home");
  try {
    export_bundle(s, run, dir.path() / "bundle", nullptr);
    ADD_FAILURE() << "an interrupted run was exported";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("--allow-incomplete"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "bundle"));
  export_bundle(s, run, dir.path() / "bundle", nullptr, /*allow_incomplete=*/true);
  const auto rows = nlohmann::json::parse(read_file(dir.path() / "bundle" / "run.json"));
  EXPECT_EQ(rows.at("runs").at(0).at("status"), "interrupted");
}

TEST(PartialFolders, ThoseOfKilledExportsAreRemovedByTheNextExport) {
  temp_folder dir("partial-folders");
  store s(dir.path() / "home");
  const std::int64_t run = s.begin_run("blaster bench --task t", "t", "");
  s.finish_run(run, "completed", "");
  const fs::path dead = dir.path() / fmt::format(".old.partial.{}", dead_pid());
  const fs::path live = dir.path() / fmt::format(".busy.partial.{}", ::getpid());
  fs::create_directories(dead / "objects");
  fs::create_directories(live);
  export_bundle(s, run, dir.path() / "bundle", nullptr);
  EXPECT_FALSE(fs::exists(dead)) << "a killed export's folder was left";
  EXPECT_TRUE(fs::exists(live)) << "a live export's folder was removed";
}

TEST(LostDatabase, IsRefusedWhileTheCasHoldsObjects) {
  temp_folder home("lost-database");
  {
    store s(home.path());
    s.cas().put("the source of an earlier run");
  }
  const fs::path db = home.path() / "blaster.db";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      store s(home.path());
      ADD_FAILURE() << "a lost database was silently re-created";
    } catch (const input_error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("blaster.db"), std::string::npos) << message;
      EXPECT_NE(message.find("restore blaster.db"), std::string::npos) << message;
    }
    // Emptied rather than removed, the file says the same.
    write_file_atomically(db, "");
  }
}

TEST(LostDatabase, AnEmptyCasIsANewStore) {
  temp_folder home("new-store");
  fs::create_directories(home.path() / "cas");
  store s(home.path());
  EXPECT_EQ(s.begin_run("blaster bench --task t", "t", ""), 1);
}

}  // namespace
}  // namespace blaster
