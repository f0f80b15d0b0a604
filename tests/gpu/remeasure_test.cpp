// `blaster verify --remeasure` on a GPU: a bench's bundle judged again holds, and the same bundle
// with a candidate's time halved (its speedup doubled to match), its records rewritten to agree
// and signed again with another key, verifies file by file and fails on the fresh numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/run_blaster.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/evidence_bundle.hpp"
#include "evidence/signature.hpp"
#include "gpu/require_gpu.hpp"
#include "store/store_test_support.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path source_dir = [] {
  const char* root = std::getenv("BLASTER_ROOT");
  return fs::path(root != nullptr && *root != '\0' ? root : BLASTER_SOURCE_DIR);
}();

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class RemeasureGpu : public ::testing::Test {
 protected:
  testing::command_result run(const std::string& args) const {
    return testing::run_blaster(dir_, dir_ / "home",
                                fmt::format("--root '{}' {}", source_dir.string(), args),
                                dir_ / "stderr.txt");
  }

  testing::temp_folder folder_{"remeasure-gpu"};
  const fs::path dir_ = folder_.path();
};

// The bundle at `from` again at `to`, with every timed candidate's time divided by `factor` and
// its speedup multiplied by it, the run's records citing the edited report, SHA256SUMS listing
// what is there and signed with `key`: a forgery that every hash and the signature vouch for.
void forge(const fs::path& from, const fs::path& to, double factor, const ed25519_key& key) {
  json report = json::parse(read_file(from / "results.json"));
  for (json& r : report.at("results")) {
    if (r.value("baseline", false) || !r.contains("time_us") || r["time_us"].is_null()) continue;
    r["time_us"] = r["time_us"].get<double>() / factor;
    for (json& m : r.at("session_medians_us")) m = m.get<double>() / factor;
    if (r.contains("speedup") && r["speedup"].is_number()) {
      r["speedup"] = r["speedup"].get<double>() * factor;
    }
    if (r.contains("verdict") && r["verdict"].is_object()) {
      for (const char* k : {"speedup", "speedup_low", "speedup_high"}) {
        r["verdict"][k] = r["verdict"][k].get<double>() * factor;
      }
    }
  }
  const std::string old_digest = sha256_file_hex(from / "results.json");
  const std::string bytes = report.dump();
  const std::string digest = sha256_hex(bytes);
  std::string records = read_file(from / "run.json");
  for (std::size_t at = records.find(old_digest); at != std::string::npos;
       at = records.find(old_digest, at)) {
    records.replace(at, old_digest.size(), digest);
  }
  write_bundle(
      to,
      [&](const fs::path& folder) {
        fs::copy(from, folder, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
        for (const char* f : {"SHA256SUMS", "SHA256SUMS.sig", "SHA256SUMS.signer"}) {
          fs::remove(folder / f);
        }
        write_file_atomically(folder / "results.json", bytes);
        // Where the report is among the objects too, the edited one takes its place.
        if (fs::remove(folder / "objects" / old_digest)) {
          write_file_atomically(folder / "objects" / digest, bytes);
        }
        write_file_atomically(folder / "run.json", records);
      },
      &key);
}

TEST_F(RemeasureGpu, AnHonestBundleHoldsAndAHalvedTimeSignedByAnotherKeyDoesNot) {
  BLASTER_REQUIRE_GPU();
  const fs::path kernels = source_dir / "tests" / "gpu" / "kernels" / "rmsnorm";
  auto r = run(fmt::format("bench --task rmsnorm --candidate '{}' --candidate '{}' --sessions 3",
                           (kernels / "keeps_the_clock.cu").string(),
                           (kernels / "notes_its_answer.cu").string()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(run("keygen --out signer").exit_code, 0);
  ASSERT_EQ(run("keygen --out other").exit_code, 0);
  r = run("export latest --out bundle --sign signer.key");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = run("verify bundle --pubkey signer.pub --remeasure 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json honest = json::parse(r.out).at("remeasure");
  EXPECT_EQ(honest.at("claims").size(), 2U) << honest.dump(1);  // both candidates, each once
  for (const json& c : honest.at("claims")) {
    EXPECT_EQ(c.at("status"), "HOLDS") << c.dump(1);
    EXPECT_TRUE(c.contains("fresh_speedup")) << c.dump(1);
  }

  forge(dir_ / "bundle", dir_ / "forged", 2.0,
        ed25519_key::from_private_pem(read_file(dir_ / "other.key"), "other.key"));
  // The forgery's files and signature hold under its own key; the original key refuses it.
  r = run("verify forged --pubkey other.pub");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(run("verify forged --pubkey signer.pub").exit_code, 4);
  // Measured again, no claim holds.
  r = run("verify forged --pubkey other.pub --remeasure 3");
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "DOES NOT HOLD")) << r.out;
  EXPECT_FALSE(contains(r.out, "1. HOLDS")) << r.out;
  EXPECT_TRUE(contains(r.out, "excludes 1")) << r.out;
  EXPECT_TRUE(contains(r.out, "REMEASURE FAILED")) << r.out;
}

}  // namespace
}  // namespace blaster
