#include "evidence/bundle_verifier.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/evidence_bundle.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/sha256sums.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

enum class entry_kind { file, other };

// What the folder holds: plain files by relative path, and every other entry as a problem.
struct folder_listing {
  std::map<std::string, entry_kind> entries;
  std::vector<bundle_problem> problems;
};

// Walks without following links: a link is reported, never entered.
void walk(const fs::path& dir, const std::string& prefix, folder_listing& out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    out.problems.push_back({bundle_problem_kind::unreadable, prefix.empty() ? "." : prefix,
                            "cannot list the folder: " + ec.message(), "", ""});
    return;
  }
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const std::string relative = prefix.empty() ? name : prefix + "/" + name;
    std::error_code status_ec;
    const fs::file_status status = it->symlink_status(status_ec);
    if (status_ec) {
      out.problems.push_back({bundle_problem_kind::unreadable, relative,
                              "cannot stat: " + status_ec.message(), "", ""});
      out.entries[relative] = entry_kind::other;
    } else if (fs::is_symlink(status)) {
      std::error_code link_ec;
      const fs::path target = fs::read_symlink(it->path(), link_ec);
      out.problems.push_back({bundle_problem_kind::symlink, relative,
                              "a symbolic link (to " + target.string() +
                                  "); a bundle holds plain files only, and it is not followed",
                              "", ""});
      out.entries[relative] = entry_kind::other;
    } else if (fs::is_directory(status)) {
      walk(it->path(), relative, out);
    } else if (fs::is_regular_file(status)) {
      out.entries[relative] = entry_kind::file;
    } else {
      out.problems.push_back({bundle_problem_kind::not_a_file, relative,
                              "not a regular file (a FIFO, socket or device)", "", ""});
      out.entries[relative] = entry_kind::other;
    }
  }
  if (ec) {
    out.problems.push_back({bundle_problem_kind::unreadable, prefix.empty() ? "." : prefix,
                            "cannot list the folder: " + ec.message(), "", ""});
  }
}

// True when the path, or a folder above it, is an entry already reported (a link, say).
bool covered_by_reported_entry(const folder_listing& listing, std::string_view path) {
  for (;;) {
    const auto it = listing.entries.find(std::string(path));
    if (it != listing.entries.end() && it->second == entry_kind::other) return true;
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return false;
    path = path.substr(0, slash);
  }
}

bool is_top_level_control_file(const std::string& path) {
  return path == bundle_manifest_name || path == bundle_signature_name ||
         path == bundle_signer_name;
}

}  // namespace

std::string_view name_of(bundle_problem_kind kind) {
  switch (kind) {
    case bundle_problem_kind::missing:
      return "missing";
    case bundle_problem_kind::changed:
      return "changed";
    case bundle_problem_kind::extra:
      return "extra";
    case bundle_problem_kind::symlink:
      return "symlink";
    case bundle_problem_kind::not_a_file:
      return "not_a_file";
    case bundle_problem_kind::unreadable:
      return "unreadable";
    case bundle_problem_kind::too_large:
      return "too_large";
    case bundle_problem_kind::manifest:
      return "manifest";
    case bundle_problem_kind::signature:
      return "signature";
    case bundle_problem_kind::claim:
      return "claim";
  }
  return "unknown";
}

std::string_view name_of(signature_status status) {
  switch (status) {
    case signature_status::absent:
      return "absent";
    case signature_status::valid:
      return "valid";
    case signature_status::invalid:
      return "invalid";
    case signature_status::unchecked:
      return "unchecked";
    case signature_status::missing:
      return "missing";
  }
  return "unknown";
}

bundle_verification verify_bundle(const fs::path& dir, const ed25519_key* public_key,
                                  bool allow_unchecked_signature, std::uint64_t max_file_bytes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    BLASTER_INPUT_ERROR("{}: not a folder; give the folder that holds the bundle's SHA256SUMS",
                        dir.string());
  }
  bundle_verification result;
  result.dir = dir;
  if (public_key != nullptr) result.signer_sha256 = public_key->public_sha256();

  folder_listing listing;
  walk(dir, "", listing);
  auto& problems = result.problems;
  problems = std::move(listing.problems);
  const std::string manifest_name(bundle_manifest_name);
  const std::string signature_name(bundle_signature_name);
  auto is_file = [&](const std::string& path) {
    const auto it = listing.entries.find(path);
    return it != listing.entries.end() && it->second == entry_kind::file;
  };
  // Reads a file the walk found plain; a failure is a problem, not an exception.
  auto read_listed = [&](const std::string& path) -> std::optional<std::string> {
    try {
      return read_file_if_exists(dir / path);
    } catch (const std::exception& e) {
      problems.push_back({bundle_problem_kind::unreadable, path, e.what(), "", ""});
      return std::nullopt;
    }
  };

  std::optional<std::string> manifest_text;
  std::vector<sha256sums_entry> manifest;
  std::set<std::string> listed;
  if (is_file(manifest_name)) {
    manifest_text = read_listed(manifest_name);
  } else if (!listing.entries.contains(manifest_name)) {
    problems.push_back({bundle_problem_kind::manifest, manifest_name,
                        "no SHA256SUMS: nothing says what this folder should hold", "", ""});
  }
  if (manifest_text) {
    // Each bad line is a problem; the good lines are still checked, so that one bad line
    // cannot hide a changed file.
    sha256sums_lines lines = read_sha256sums_lines(*manifest_text);
    for (const auto& bad : lines.bad_lines) {
      problems.push_back({bundle_problem_kind::manifest, manifest_name,
                          fmt::format("line {}: {}", bad.line, bad.why), "", ""});
    }
    manifest = std::move(lines.entries);
  }
  result.files_listed = manifest.size();
  for (const auto& entry : manifest) {
    listed.insert(entry.path);
    if (is_top_level_control_file(entry.path)) {
      problems.push_back({bundle_problem_kind::manifest, entry.path,
                          "SHA256SUMS lists the manifest or its signature, which it cannot hash",
                          "", ""});
      continue;
    }
    if (!is_file(entry.path)) {
      if (!covered_by_reported_entry(listing, entry.path)) {
        problems.push_back({bundle_problem_kind::missing, entry.path,
                            "listed in SHA256SUMS but not a file in the bundle", entry.sha256, ""});
      }
      continue;
    }
    std::error_code size_ec;
    const std::uintmax_t size = fs::file_size(dir / entry.path, size_ec);
    if (!size_ec && size > max_file_bytes) {
      problems.push_back({bundle_problem_kind::too_large, entry.path,
                          fmt::format("{} bytes, over the {} bytes verify hashes; "
                                      "--max-file-bytes N raises the limit",
                                      size, max_file_bytes),
                          entry.sha256, ""});
      continue;
    }
    std::string actual;
    try {
      actual = sha256_file_hex(dir / entry.path);
    } catch (const std::exception& e) {
      problems.push_back({bundle_problem_kind::unreadable, entry.path, e.what(), "", ""});
      continue;
    }
    if (actual != entry.sha256) {
      problems.push_back({bundle_problem_kind::changed, entry.path,
                          "its bytes do not hash to the digest SHA256SUMS lists", entry.sha256,
                          actual});
    } else {
      ++result.files_matched;
    }
  }
  if (!manifest.empty()) {  // Without a manifest, nothing is extra: everything is unlisted.
    for (const auto& [path, kind] : listing.entries) {
      if (kind != entry_kind::file || listed.contains(path) || is_top_level_control_file(path)) {
        continue;
      }
      problems.push_back(
          {bundle_problem_kind::extra, path, "in the bundle but not listed in SHA256SUMS", "", ""});
    }
  }

  // The fingerprint the bundle says signed it; trusted only as far as the signature is checked.
  if (is_file(std::string(bundle_signer_name))) {
    const std::optional<std::string> text = read_listed(std::string(bundle_signer_name));
    static const std::regex form("^ed25519 ([0-9a-f]{64})\n?$");
    std::smatch m;
    if (text && std::regex_match(*text, m, form)) result.named_signer_sha256 = m[1].str();
  }
  const std::string named_key =
      result.named_signer_sha256.empty() ? "" : " by key " + result.named_signer_sha256;
  if (is_file(signature_name)) {
    const std::optional<std::string> signature = read_listed(signature_name);
    if (signature && signature->size() != 64) {
      result.signature = signature_status::invalid;
      problems.push_back({bundle_problem_kind::signature, signature_name,
                          fmt::format("{} bytes; an Ed25519 signature is 64", signature->size()),
                          "", ""});
    } else if (signature && public_key == nullptr) {
      result.signature = signature_status::unchecked;
      // A signature nobody checks proves nothing; passing over it has to be asked for.
      if (!allow_unchecked_signature) {
        problems.push_back(
            {bundle_problem_kind::signature, signature_name,
             fmt::format("the bundle is signed{} and the signature was not checked; pass "
                         "--pubkey KEY.pub with the signer's public key, or "
                         "--allow-unchecked-signature to accept the files without it",
                         named_key),
             "", ""});
      }
    } else if (signature && manifest_text) {
      if (public_key->verify(*manifest_text, *signature)) {
        result.signature = signature_status::valid;
      } else {
        result.signature = signature_status::invalid;
        problems.push_back(
            {bundle_problem_kind::signature, signature_name,
             !result.named_signer_sha256.empty() &&
                     result.named_signer_sha256 != result.signer_sha256
                 ? fmt::format("signed by key {}, not by the given key {}; check it with that "
                               "key's .pub",
                               result.named_signer_sha256, result.signer_sha256)
                 : fmt::format("not a signature of SHA256SUMS by the key {}", result.signer_sha256),
             "", ""});
      }
    } else if (signature) {
      result.signature = signature_status::invalid;
      problems.push_back({bundle_problem_kind::signature, signature_name,
                          "there is no readable SHA256SUMS for it to sign", "", ""});
    }
  } else if (public_key != nullptr) {
    result.signature = signature_status::missing;
    if (!listing.entries.contains(signature_name)) {
      problems.push_back({bundle_problem_kind::signature, signature_name,
                          "a public key was given but the bundle is not signed", "", ""});
    }
  }
  std::stable_sort(
      problems.begin(), problems.end(),
      [](const bundle_problem& a, const bundle_problem& b) { return a.path < b.path; });
  return result;
}

std::vector<std::string> run_bundle_folders(const fs::path& bundle) {
  // Links are neither followed nor read (verify_bundle reports them).
  std::vector<std::string> runs;
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(bundle / "run.json", ec))) runs.emplace_back();
  for (auto it = fs::recursive_directory_iterator(bundle, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == "run.json" && it->is_regular_file(ec) && !it->is_symlink(ec) &&
        it.depth() > 0) {
      runs.push_back(fs::relative(it->path().parent_path(), bundle).generic_string());
    }
  }
  // Whatever the file system's order: a problem names the first run that cites the file.
  std::sort(runs.begin(), runs.end());
  return runs;
}

void check_run_records(bundle_verification& v, std::uint64_t max_file_bytes) {
  const std::vector<std::string> runs = run_bundle_folders(v.dir);
  std::error_code ec;
  // A file's digest, hashed once; nullopt where there is no plain file, and empty where it is
  // over the limit verify hashes (verify_bundle reports it).
  std::map<std::string, std::string> digests;
  auto digest_of = [&](const std::string& path) -> std::optional<std::string> {
    std::error_code status_ec;
    if (!fs::is_regular_file(fs::symlink_status(v.dir / path, status_ec))) return std::nullopt;
    if (const auto it = digests.find(path); it != digests.end()) return it->second;
    const std::uintmax_t size = fs::file_size(v.dir / path, status_ec);
    if (status_ec || size > max_file_bytes) return digests[path] = std::string();
    try {
      return digests[path] = sha256_file_hex(v.dir / path);
    } catch (const std::exception&) {
      return std::nullopt;  // unreadable: verify_bundle says so
    }
  };
  // A file the manifest check already found missing or changed is not reported twice.
  auto add = [&](bundle_problem p) {
    const bool known = std::any_of(v.problems.begin(), v.problems.end(),
                                   [&](const auto& q) { return q.path == p.path; });
    if (!known) v.problems.push_back(std::move(p));
  };
  for (const std::string& run : runs) {
    const std::string prefix = run.empty() ? "" : run + "/";
    const std::optional<std::string> text = read_file_if_exists(v.dir / (prefix + "run.json"));
    const nlohmann::json records =
        text ? nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false) : nlohmann::json();
    if (!records.is_object() || !records.contains("runs")) {
      add({bundle_problem_kind::claim, prefix + "run.json",
           "not a run's records: the rows of each table, as blaster export writes them", "", ""});
      continue;
    }
    const bool own_objects = fs::is_directory(fs::symlink_status(v.dir / (prefix + "objects"), ec));
    const std::vector<object_citation> cited = objects_cited_in(records);
    auto is_report = [](const object_citation& c) {
      return c.table == "runs" && c.column == "report_sha256";
    };
    // A run folder taken out of a portfolio's bundle: one problem, not one per object.
    const bool no_objects =
        run.empty() && !own_objects && !fs::exists(v.dir / "objects", ec) &&
        std::any_of(cited.begin(), cited.end(), [&](const auto& c) { return !is_report(c); });
    if (no_objects) {
      add({bundle_problem_kind::missing, "objects",
           "run.json cites objects and there is no objects/ folder; a run of a portfolio's "
           "bundle keeps them in the portfolio's objects/: verify the portfolio's folder",
           "", ""});
    }
    std::set<std::string> seen;
    for (const object_citation& c : cited) {
      const std::string cited_by =
          fmt::format("{}run.json ({} {} {})", prefix, c.table, c.row_id, c.column);
      // Never a path: "../../etc/passwd" would have verify read outside the bundle.
      if (!is_sha256_hex(c.sha256)) {
        add({bundle_problem_kind::claim, prefix + "run.json",
             fmt::format("{} cites '{}', which is not a SHA-256", cited_by, c.sha256.substr(0, 80)),
             "", ""});
        continue;
      }
      if (!seen.insert(c.sha256).second || (no_objects && !is_report(c))) continue;
      const std::string in_run = prefix + "objects/" + c.sha256;
      const std::string shared = "objects/" + c.sha256;
      std::string path = own_objects ? in_run : shared;
      std::optional<std::string> actual = digest_of(path);
      if (!actual && own_objects && !run.empty()) {
        path = shared;
        actual = digest_of(path);
      }
      // A bundle of one run keeps its report as results.json, not among its objects.
      if (!actual && is_report(c)) {
        path = prefix + "results.json";
        actual = digest_of(path);
        if (actual && !actual->empty() && *actual != c.sha256) {
          add({bundle_problem_kind::claim, path,
               fmt::format("not the report that {} cites", cited_by), c.sha256, *actual});
          continue;
        }
      }
      if (actual && actual->empty()) continue;
      if (!actual) {
        add({bundle_problem_kind::missing, path,
             fmt::format("cited by {} and not in the bundle", cited_by), c.sha256, ""});
      } else if (*actual != c.sha256) {
        add({bundle_problem_kind::changed, path,
             fmt::format("its bytes do not hash to its name, which {} cites", cited_by), c.sha256,
             *actual});
      }
    }
  }
  std::stable_sort(
      v.problems.begin(), v.problems.end(),
      [](const bundle_problem& a, const bundle_problem& b) { return a.path < b.path; });
}

}  // namespace blaster
