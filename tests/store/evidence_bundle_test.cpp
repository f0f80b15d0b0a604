// Evidence bundles: exported from a recorded run, checked by blaster verify and by the real
// `sha256sum -c`, and every way of tampering with one is caught and named.
#include "evidence/evidence_bundle.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/sha256sums.hpp"
#include "recorded_run.hpp"
#include "store_test_support.hpp"

namespace blaster::testing {
namespace {

// Runs a shell command in `dir`; its exit code.
int run_in(const fs::path& dir, const std::string& command) {
  const int status =
      std::system(fmt::format("cd '{}' && {} >/dev/null 2>&1", dir.string(), command).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool have_program(const std::string& name) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", name).c_str()) == 0;
}

void overwrite(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class EvidenceBundle : public ::testing::Test {
 protected:
  EvidenceBundle() : scratch_("bundle"), records_(scratch_.path() / "home") {
    run_ = record_bench_run(records_);
  }

  fs::path export_run(const std::string& name, const ed25519_key* key = nullptr) {
    const fs::path out = scratch_.path() / name;
    export_bundle(records_, run_.run_id, out, key);
    return out;
  }

  // The problems as "kind path" lines, for messages and exact comparisons.
  static std::vector<std::string> problems(const bundle_verification& v) {
    std::vector<std::string> out;
    for (const auto& p : v.problems) out.push_back(fmt::format("{} {}", name_of(p.kind), p.path));
    return out;
  }

  static std::string first_object(const fs::path& bundle) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(bundle / "objects")) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return "objects/" + names.at(0);
  }

  temp_folder scratch_;
  store records_;
  recorded_run run_;
};

TEST_F(EvidenceBundle, ExportedRunVerifiesWithBlasterAndWithSha256sum) {
  const fs::path bundle = export_run("run");
  const bundle_verification v = verify_bundle(bundle, nullptr);
  EXPECT_TRUE(v.ok()) << fmt::format("{}", fmt::join(problems(v), "\n"));
  EXPECT_EQ(v.signature, signature_status::absent);
  EXPECT_EQ(v.files_matched, v.files_listed);

  // The manifest lists every file but itself, each with its real digest.
  const auto manifest = parse_sha256sums(read_file(bundle / "SHA256SUMS"));
  std::size_t files_on_disk = 0;
  for (const auto& e : fs::recursive_directory_iterator(bundle))
    files_on_disk += e.is_regular_file();
  EXPECT_EQ(manifest.size() + 1, files_on_disk);
  for (const auto& entry : manifest) {
    EXPECT_EQ(sha256_file_hex(bundle / entry.path), entry.sha256) << entry.path;
  }

  ASSERT_TRUE(have_program("sha256sum")) << "the acceptance test needs coreutils' sha256sum";
  EXPECT_EQ(run_in(bundle, "sha256sum -c --strict SHA256SUMS"), 0);
}

TEST_F(EvidenceBundle, HoldsTheReportTheRowsAndEveryCitedObject) {
  const fs::path bundle = export_run("run");
  // results.json is the report object itself, byte for byte.
  EXPECT_EQ(sha256_file_hex(bundle / "results.json"), run_.report_sha256);
  for (const auto& digest :
       {run_.init_source_sha256, run_.fast_cubin_sha256, run_.fast_samples_sha256}) {
    ASSERT_TRUE(fs::is_regular_file(bundle / "objects" / digest)) << digest;
    EXPECT_EQ(sha256_file_hex(bundle / "objects" / digest), digest);
  }
  for (const auto& c : run_catalog(records_).cited_objects(run_.run_id)) {
    if (c.sha256 == run_.report_sha256) continue;
    EXPECT_TRUE(fs::exists(bundle / "objects" / c.sha256)) << c.table << "." << c.column;
  }
  const auto rows = nlohmann::json::parse(read_file(bundle / "run.json"));
  EXPECT_EQ(rows.at("runs").at(0).at("id"), run_.run_id);
  EXPECT_EQ(rows.at("variant_results").size(), 3U);
  EXPECT_EQ(rows.at("measurements").size(), 1U);
  EXPECT_EQ(rows.at("device_fingerprints").at(0).at("name"), "NVIDIA H200");

  const std::string report = read_file(bundle / "report.md");
  for (const char* expected :
       {"# blaster run", "rmsnorm", "NVIDIA H200 (sm_90a, 132 SMs, driver 13.0)",
        "| candidate | status | time us | speedup | GB/s | % copy BW |",
        "| init * | passed | 125.03 | 1.00x | 2147.0 | 53.5% |",
        "| rmsnorm_fast[VEC=4] | passed | 70.77 | 1.77x | 3793.3 | 94.5% |",
        "| rmsnorm_broken | rejected | - | - | - | wrong_result |",
        "case odd: out[17] = 3.5, expected 1.25", "4000.0 GB/s", "sha256sum -c SHA256SUMS",
        run_.report_sha256.c_str()}) {
    EXPECT_NE(report.find(expected), std::string::npos) << expected << "\n" << report;
  }
}

TEST_F(EvidenceBundle, OneChangedByteFailsBothCheckers) {
  const fs::path bundle = export_run("run");
  const std::string object = first_object(bundle);
  fs::permissions(bundle / object, fs::perms::owner_write, fs::perm_options::add);
  std::string bytes = read_file(bundle / object);
  bytes[bytes.size() / 2] ^= 0x01;
  overwrite(bundle / object, bytes);

  const bundle_verification v = verify_bundle(bundle, nullptr);
  ASSERT_EQ(problems(v), std::vector<std::string>{"changed " + object});
  EXPECT_EQ(v.problems[0].expected_sha256, object.substr(8));
  EXPECT_EQ(v.problems[0].actual_sha256, sha256_hex(bytes));
  EXPECT_NE(run_in(bundle, "sha256sum -c --strict SHA256SUMS"), 0);
}

TEST_F(EvidenceBundle, MissingAndExtraFilesAreNamed) {
  const fs::path bundle = export_run("run");
  fs::remove(bundle / "report.md");
  overwrite(bundle / "notes.txt", "added later");
  overwrite(bundle / "objects" / "stray", "added later");
  const bundle_verification v = verify_bundle(bundle, nullptr);
  EXPECT_EQ(problems(v), (std::vector<std::string>{"extra notes.txt", "extra objects/stray",
                                                   "missing report.md"}));
}

TEST_F(EvidenceBundle, SymlinksAreReportedAndNeverFollowed) {
  const fs::path bundle = export_run("run");
  const fs::path outside = scratch_.path() / "outside.json";
  fs::copy_file(bundle / "results.json", outside);
  fs::remove(bundle / "results.json");
  // Same bytes, so following the link would have made it pass.
  fs::create_symlink(outside, bundle / "results.json");
  fs::create_symlink("/etc/passwd", bundle / "passwd");
  const bundle_verification v = verify_bundle(bundle, nullptr);
  EXPECT_EQ(problems(v), (std::vector<std::string>{"symlink passwd", "symlink results.json"}));

  // A linked folder hides everything under it: one problem, nothing read through it.
  const fs::path second = export_run("second");
  fs::rename(second / "objects", scratch_.path() / "objects-elsewhere");
  fs::create_directory_symlink(scratch_.path() / "objects-elsewhere", second / "objects");
  EXPECT_EQ(problems(verify_bundle(second, nullptr)), std::vector<std::string>{"symlink objects"});
}

TEST_F(EvidenceBundle, SpecialFilesAreReportedWithoutBlocking) {
  const fs::path bundle = export_run("run");
  ASSERT_EQ(::mkfifo((bundle / "pipe").c_str(), 0600), 0);
  EXPECT_EQ(problems(verify_bundle(bundle, nullptr)), std::vector<std::string>{"not_a_file pipe"});
}

TEST_F(EvidenceBundle, BadManifestsAreRejectedWithTheLine) {
  const fs::path bundle = export_run("run");
  const std::string good = read_file(bundle / "SHA256SUMS");
  const std::string digest = sha256_file_hex(bundle / "report.md");
  const struct {
    const char* what;
    std::string manifest;
    const char* message;
  } cases[] = {
      {"absolute path", good + digest + "  /etc/passwd\n",
       "line 13: '/etc/passwd': the path is absolute"},
      {"dot-dot", good + digest + "  ../outside\n", "'..'"},
      {"dot-dot inside", good + digest + "  objects/../../x\n", "'..'"},
      {"malformed line", good + "this is not a digest\n", "too short"},
      {"short digest", good + digest.substr(1) + "  report.md\n", "not a hex digit"},
      {"one space", good + digest + " report.md\n", "two spaces"},
      {"CRLF", digest + "  report.md\r\n", "CR"},
      {"duplicate", good + digest + "  report.md\n", "listed twice"},
      {"blank line", good + "\n", "blank line"},
      {"empty", "", "empty"},
      {"lists itself", good + digest + "  SHA256SUMS\n", "lists the manifest"},
  };
  for (const auto& c : cases) {
    overwrite(bundle / "SHA256SUMS", c.manifest);
    const bundle_verification v = verify_bundle(bundle, nullptr);
    ASSERT_FALSE(v.ok()) << c.what;
    EXPECT_EQ(name_of(v.problems.front().kind), "manifest") << c.what;
    bool found = false;
    for (const auto& p : v.problems) found |= p.detail.find(c.message) != std::string::npos;
    EXPECT_TRUE(found) << c.what << ": " << v.problems.front().detail;
  }
  // A bad line does not hide a changed file: both are reported.
  overwrite(bundle / "SHA256SUMS", good + "garbage\n");
  overwrite(bundle / "report.md", "# edited\n");
  EXPECT_EQ(problems(verify_bundle(bundle, nullptr)),
            (std::vector<std::string>{"manifest SHA256SUMS", "changed report.md"}));
  fs::remove(bundle / "SHA256SUMS");
  EXPECT_EQ(problems(verify_bundle(bundle, nullptr)),
            std::vector<std::string>{"manifest SHA256SUMS"});
}

TEST_F(EvidenceBundle, SignatureCatchesARewrittenManifest) {
  const ed25519_key key = ed25519_key::generate();
  const ed25519_key public_key = ed25519_key::from_public_pem(key.public_pem(), "test");
  const fs::path bundle = export_run("signed", &key);
  ASSERT_TRUE(fs::is_regular_file(bundle / "SHA256SUMS.sig"));

  bundle_verification v = verify_bundle(bundle, &public_key);
  EXPECT_TRUE(v.ok()) << fmt::format("{}", fmt::join(problems(v), "\n"));
  EXPECT_EQ(v.signature, signature_status::valid);
  EXPECT_EQ(v.signer_sha256, key.public_sha256());
  // Without a key a signed bundle does not verify, and the problem names the key to use,
  // unless the caller accepts the signature unchecked.
  v = verify_bundle(bundle, nullptr);
  EXPECT_EQ(problems(v), std::vector<std::string>{"signature SHA256SUMS.sig"});
  EXPECT_EQ(v.named_signer_sha256, key.public_sha256());
  ASSERT_FALSE(v.problems.empty());
  EXPECT_NE(v.problems[0].detail.find(key.public_sha256()), std::string::npos)
      << v.problems[0].detail;
  v = verify_bundle(bundle, nullptr, /*allow_unchecked_signature=*/true);
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.signature, signature_status::unchecked);

  // Someone else's key: the problem says which key signed.
  const ed25519_key stranger = ed25519_key::generate();
  v = verify_bundle(bundle, &stranger);
  EXPECT_EQ(v.signature, signature_status::invalid);
  EXPECT_EQ(problems(v), std::vector<std::string>{"signature SHA256SUMS.sig"});
  ASSERT_FALSE(v.problems.empty());
  EXPECT_NE(v.problems[0].detail.find(fmt::format("signed by key {}, not by the given key {}",
                                                  key.public_sha256(), stranger.public_sha256())),
            std::string::npos)
      << v.problems[0].detail;

  // A forger edits report.md and lists its new digest: the hashes agree, the signature does not.
  overwrite(bundle / "report.md", "# all candidates 10x faster\n");
  auto manifest = parse_sha256sums(read_file(bundle / "SHA256SUMS"));
  for (auto& e : manifest) {
    if (e.path == "report.md") e.sha256 = sha256_file_hex(bundle / "report.md");
  }
  overwrite(bundle / "SHA256SUMS", format_sha256sums(manifest));
  EXPECT_EQ(run_in(bundle, "sha256sum -c --strict SHA256SUMS"), 0) << "the forgery is consistent";
  v = verify_bundle(bundle, &public_key);
  EXPECT_EQ(v.signature, signature_status::invalid);
  EXPECT_EQ(problems(v), std::vector<std::string>{"signature SHA256SUMS.sig"});

  // A truncated signature is wrong even with no key to check it.
  const fs::path other = export_run("truncated", &key);
  overwrite(other / "SHA256SUMS.sig", read_file(other / "SHA256SUMS.sig").substr(0, 10));
  EXPECT_EQ(problems(verify_bundle(other, nullptr, /*allow_unchecked_signature=*/true)),
            std::vector<std::string>{"signature SHA256SUMS.sig"});
}

TEST_F(EvidenceBundle, PublicKeyGivenButBundleUnsignedFails) {
  const fs::path bundle = export_run("unsigned");
  const ed25519_key key = ed25519_key::generate();
  const bundle_verification v = verify_bundle(bundle, &key);
  EXPECT_EQ(v.signature, signature_status::missing);
  EXPECT_EQ(problems(v), std::vector<std::string>{"signature SHA256SUMS.sig"});
}

TEST_F(EvidenceBundle, OpensslChecksTheSignatureWithoutBlaster) {
  if (!have_program("openssl")) GTEST_SKIP() << "no openssl command on this machine";
  const ed25519_key key = ed25519_key::generate();
  const fs::path bundle = export_run("signed", &key);
  write_file_atomically(scratch_.path() / "key.pub", key.public_pem());
  const std::string check = fmt::format(
      "openssl pkeyutl -verify -pubin -inkey '{}' -rawin -in SHA256SUMS -sigfile SHA256SUMS.sig",
      (scratch_.path() / "key.pub").string());
  EXPECT_EQ(run_in(bundle, check), 0);
  overwrite(bundle / "SHA256SUMS", read_file(bundle / "SHA256SUMS") + "\n");
  EXPECT_NE(run_in(bundle, check), 0);
}

TEST_F(EvidenceBundle, ExportNeverWritesOverAnything) {
  const fs::path taken = scratch_.path() / "taken";
  fs::create_directories(taken);
  overwrite(taken / "keep.txt", "mine");
  EXPECT_THROW(export_bundle(records_, run_.run_id, taken, nullptr), input_error);
  EXPECT_EQ(read_file(taken / "keep.txt"), "mine");
  EXPECT_EQ(std::distance(fs::directory_iterator(taken), fs::directory_iterator{}), 1);
  overwrite(scratch_.path() / "file", "x");
  EXPECT_THROW(export_bundle(records_, run_.run_id, scratch_.path() / "file", nullptr),
               input_error);
  EXPECT_THROW(export_bundle(records_, run_.run_id, scratch_.path() / "no" / "parent", nullptr),
               input_error);
  EXPECT_THROW(export_bundle(records_, 9999, scratch_.path() / "unknown", nullptr), input_error);
  EXPECT_THROW(export_bundle(records_, run_.run_id, ".", nullptr), input_error);
  EXPECT_THROW(export_bundle(records_, run_.run_id, scratch_.path() / "..", nullptr), input_error);
  // A trailing slash names the same folder.
  export_bundle(records_, run_.run_id, scratch_.path().string() + "/slash/", nullptr);
  EXPECT_TRUE(verify_bundle(scratch_.path() / "slash", nullptr).ok());
  // An empty folder is fine: the bundle takes its place.
  fs::create_directories(scratch_.path() / "empty");
  export_bundle(records_, run_.run_id, scratch_.path() / "empty", nullptr);
  EXPECT_TRUE(verify_bundle(scratch_.path() / "empty", nullptr).ok());
}

TEST_F(EvidenceBundle, DamagedStoreFailsTheExportAndLeavesNothing) {
  const fs::path object = records_.cas().path_of(run_.fast_cubin_sha256);
  fs::permissions(object, fs::perms::owner_write, fs::perm_options::add);
  overwrite(object, "rotted");
  try {
    export_run("rotted");
    FAIL() << "exported a bundle from a damaged store";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(run_.fast_cubin_sha256), std::string::npos) << e.what();
  }
  fs::remove(object);
  try {
    export_run("missing");
    FAIL() << "exported a bundle with an object missing";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(run_.fast_cubin_sha256), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }
  // Neither the bundle nor a half-written one is left.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(scratch_.path())) {
    left.push_back(e.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"home"});
}

TEST_F(EvidenceBundle, RunWithoutAReportStillExportsWhenAsked) {
  const std::int64_t running = records_.begin_run("blaster bench --task rmsnorm", "rmsnorm", "");
  const fs::path out = scratch_.path() / "running";
  // Unfinished, it would verify as if complete: only an explicit request exports it.
  EXPECT_THROW(export_bundle(records_, running, out, nullptr), input_error);
  EXPECT_FALSE(fs::exists(out));
  export_bundle(records_, running, out, nullptr, /*allow_incomplete=*/true);
  EXPECT_TRUE(verify_bundle(out, nullptr).ok());
  const auto results = nlohmann::json::parse(read_file(out / "results.json"));
  EXPECT_EQ(results.at("runs").at(0).at("status"), "running");
  EXPECT_NE(read_file(out / "report.md").find("recorded no report"), std::string::npos);
}

TEST_F(EvidenceBundle, VerifyOfSomethingThatIsNotAFolderIsBadInput) {
  EXPECT_THROW(verify_bundle(scratch_.path() / "nowhere", nullptr), input_error);
  overwrite(scratch_.path() / "file", "x");
  EXPECT_THROW(verify_bundle(scratch_.path() / "file", nullptr), input_error);
}

// Rewrites the manifest as a forger would: `path` left out, or listed with its bytes'
// digest, so that every hash the manifest states holds.
void relist(const fs::path& bundle, const std::string& path, bool keep) {
  auto manifest = parse_sha256sums(read_file(bundle / "SHA256SUMS"));
  std::erase_if(manifest, [&](const auto& e) { return e.path == path; });
  if (keep) manifest.push_back({.sha256 = sha256_file_hex(bundle / path), .path = path});
  std::sort(manifest.begin(), manifest.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  overwrite(bundle / "SHA256SUMS", format_sha256sums(manifest));
}

// The checks `blaster verify` makes of every bundle (a portfolio's claims aside).
bundle_verification verify_all(const fs::path& bundle) {
  bundle_verification v = verify_bundle(bundle, nullptr);
  check_run_records(v);
  return v;
}

// The manifest only says that the files it lists are unchanged; run.json says which files there
// must be. A bundle that drops an object, forges one, or swaps its report, and rewrites
// SHA256SUMS to match, still fails.
TEST_F(EvidenceBundle, RunJsonHoldsTheBundleToEveryObjectItCites) {
  const fs::path dropped = export_run("dropped");
  const std::string object = "objects/" + run_.fast_cubin_sha256;
  fs::remove(dropped / object);
  relist(dropped, object, /*keep=*/false);
  EXPECT_TRUE(verify_bundle(dropped, nullptr).ok()) << "the manifest alone cannot tell";
  bundle_verification v = verify_all(dropped);
  ASSERT_EQ(problems(v), std::vector<std::string>{"missing " + object});
  EXPECT_NE(v.problems[0].detail.find("cubin_sha256"), std::string::npos) << v.problems[0].detail;

  const fs::path forged = export_run("forged");
  const std::string samples = "objects/" + run_.fast_samples_sha256;
  fs::permissions(forged / samples, fs::perms::owner_write, fs::perm_options::add);
  overwrite(forged / samples, "[1.0, 1.0, 1.0]");
  relist(forged, samples, /*keep=*/true);
  v = verify_all(forged);
  ASSERT_EQ(problems(v), std::vector<std::string>{"changed " + samples});
  EXPECT_EQ(v.problems[0].expected_sha256, run_.fast_samples_sha256);

  const fs::path swapped = export_run("swapped");
  fs::permissions(swapped / "results.json", fs::perms::owner_write, fs::perm_options::add);
  overwrite(swapped / "results.json", R"({"results": []})");
  relist(swapped, "results.json", /*keep=*/true);
  EXPECT_EQ(problems(verify_all(swapped)), std::vector<std::string>{"claim results.json"});

  const fs::path garbled = export_run("garbled");
  fs::permissions(garbled / "run.json", fs::perms::owner_write, fs::perm_options::add);
  overwrite(garbled / "run.json", "[]");
  relist(garbled, "run.json", /*keep=*/true);
  EXPECT_EQ(problems(verify_all(garbled)), std::vector<std::string>{"claim run.json"});

  // A digest that is a path is never followed out of the bundle.
  const fs::path escaping = export_run("escaping");
  auto rows = nlohmann::json::parse(read_file(escaping / "run.json"));
  rows["variant_results"][0]["cubin_sha256"] = "../../../../etc/passwd";
  fs::permissions(escaping / "run.json", fs::perms::owner_write, fs::perm_options::add);
  overwrite(escaping / "run.json", rows.dump(1));
  relist(escaping, "run.json", /*keep=*/true);
  v = verify_all(escaping);
  ASSERT_EQ(problems(v), std::vector<std::string>{"claim run.json"});
  EXPECT_NE(v.problems[0].detail.find("not a SHA-256"), std::string::npos) << v.problems[0].detail;

  EXPECT_TRUE(verify_all(export_run("intact")).ok());
}

// A bundle of several runs (a portfolio's) keeps one objects/ folder: an object two runs cite is
// there once, each run's folder holds its report, rows and report.md, and both checkers pass.
TEST_F(EvidenceBundle, RunsOfOneBundleShareOneObjectsFolder) {
  const recorded_run second = record_bench_run(records_);  // the same sources and cubins
  const fs::path bundle = scratch_.path() / "portfolio";
  static_cast<void>(write_bundle(
      bundle,
      [&](const fs::path& folder) {
        fs::create_directories(folder / "runs");
        for (const auto& [name, id] : {std::pair{"a", run_.run_id}, {"b", second.run_id}}) {
          export_bundle(records_, id, folder / "runs" / name, nullptr, false, folder / "objects");
        }
      },
      nullptr));
  for (const char* run : {"runs/a", "runs/b"}) {
    EXPECT_FALSE(fs::exists(bundle / run / "objects")) << run;
    std::vector<std::string> listed;
    for (const auto& e : parse_sha256sums(read_file(bundle / run / "SHA256SUMS")))
      listed.push_back(e.path);
    EXPECT_EQ(listed, (std::vector<std::string>{"report.md", "results.json", "run.json"})) << run;
    EXPECT_NE(read_file(bundle / run / "report.md").find("`../../objects/` holds each object"),
              std::string::npos);
  }
  std::set<std::string> cited;
  for (const std::int64_t id : {run_.run_id, second.run_id}) {
    for (const auto& c : run_catalog(records_).cited_objects(id)) {
      if (c.column != "report_sha256") cited.insert(c.sha256);
    }
  }
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(bundle / "objects"))
    present.insert(e.path().filename().string());
  EXPECT_EQ(present, cited);
  EXPECT_TRUE(verify_all(bundle).ok())
      << fmt::format("{}", fmt::join(problems(verify_all(bundle)), "\n"));
  EXPECT_EQ(run_in(bundle, "sha256sum -c --strict SHA256SUMS"), 0);
  // A run's folder alone lacks its objects, and says where they are.
  const bundle_verification alone = verify_all(bundle / "runs" / "a");
  ASSERT_EQ(problems(alone), std::vector<std::string>{"missing objects"});
  EXPECT_NE(alone.problems[0].detail.find("verify the portfolio's folder"), std::string::npos);

  const std::string object = "objects/" + second.fast_cubin_sha256;
  fs::remove(bundle / object);
  relist(bundle, object, /*keep=*/false);
  const bundle_verification v = verify_all(bundle);
  ASSERT_EQ(problems(v), std::vector<std::string>{"missing " + object});
  EXPECT_NE(v.problems[0].detail.find("runs/a/run.json"), std::string::npos)
      << v.problems[0].detail;
}

}  // namespace
}  // namespace blaster::testing
