#include "evidence/evidence_bundle.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <regex>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/run_markdown.hpp"
#include "core/sha256.hpp"
#include "evidence/sha256sums.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

// Removes the half-written bundle unless it was renamed into place.
class partial_folder {
 public:
  explicit partial_folder(fs::path path) : path_(std::move(path)) {}
  ~partial_folder() {
    if (!released_) {
      std::error_code ignored;
      fs::remove_all(path_, ignored);
    }
  }
  partial_folder(const partial_folder&) = delete;
  partial_folder& operator=(const partial_folder&) = delete;
  const fs::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  fs::path path_;
  bool released_ = false;
};

// The hidden ".NAME.partial.PID" folders of writers that were killed: a live writer's is kept.
void remove_abandoned_partial_folders(const fs::path& parent) {
  static const std::regex partial_name(R"(^\..+\.partial\.([0-9]+)$)");
  std::error_code ec;
  for (auto it = fs::directory_iterator(parent, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, partial_name) || !it->is_directory(ec)) continue;
    const long pid = std::stol(m[1].str());
    if (pid > 0 && pid <= INT32_MAX &&
        (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) {
      continue;
    }
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

void check_destination(const fs::path& out) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(out, ec);
  if (status.type() == fs::file_type::not_found) {
    const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    if (!fs::is_directory(parent, ec)) {
      BLASTER_INPUT_ERROR("--out {}: the folder {} does not exist; create it first", out.string(),
                          parent.string());
    }
    return;
  }
  if (status.type() != fs::file_type::directory || !fs::is_empty(out, ec)) {
    BLASTER_INPUT_ERROR(
        "--out {}: exists and is not an empty folder; a bundle is never written "
        "over anything: pick a new folder",
        out.string());
  }
}

// The folder a bundle is written to: "run/" names the folder "run"; "." and ".." name folders
// that are already there.
fs::path written_at(const fs::path& out_flag) {
  fs::path out = out_flag.lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  return out;
}

// The label a human knows a row by: its variant where it has one.
std::string row_label(const nlohmann::json& records, const object_citation& c) {
  const auto it = records.find(c.table);
  if (it != records.end()) {
    for (const auto& row : *it) {
      if (row.value("id", std::int64_t{0}) != c.row_id) continue;
      if (row.contains("variant") && row["variant"].is_string()) {
        return fmt::format("{} {} {} ({})", c.table, c.row_id, c.column,
                           row["variant"].get<std::string>());
      }
    }
  }
  return fmt::format("{} {} {}", c.table, c.row_id, c.column);
}

}  // namespace

bundle_written write_bundle(const fs::path& out_flag,
                            const std::function<void(const fs::path&)>& fill,
                            const ed25519_key* signing_key) {
  fs::path out = written_at(out_flag);
  if (out.empty() || out.filename() == "." || out.filename() == "..") {
    BLASTER_INPUT_ERROR("--out {}: name a new folder for the bundle", out_flag.string());
  }
  if (signing_key != nullptr && !signing_key->has_private()) {
    BLASTER_INPUT_ERROR("signing needs a private key (PREFIX.key), not a public one");
  }
  check_destination(out);

  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  remove_abandoned_partial_folders(parent);
  partial_folder partial(parent /
                         fmt::format(".{}.partial.{}", out.filename().string(), ::getpid()));
  std::error_code ec;
  fs::remove_all(partial.path(), ec);
  fs::create_directories(partial.path(), ec);
  if (ec) BLASTER_THROW("cannot create {}: {}", partial.path().string(), ec.message());
  fill(partial.path());

  std::vector<sha256sums_entry> manifest;
  for (const auto& entry : fs::recursive_directory_iterator(partial.path())) {
    if (!entry.is_regular_file()) continue;
    manifest.push_back({.sha256 = sha256_file_hex(entry.path()),
                        .path = fs::relative(entry.path(), partial.path()).generic_string()});
  }
  std::sort(manifest.begin(), manifest.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  const std::string manifest_text = format_sha256sums(manifest);
  write_file_atomically(partial.path() / bundle_manifest_name, manifest_text);
  if (signing_key != nullptr) {
    write_file_atomically(partial.path() / bundle_signature_name, signing_key->sign(manifest_text));
    write_file_atomically(partial.path() / bundle_signer_name,
                          fmt::format("ed25519 {}\n", signing_key->public_sha256()));
  }
  fsync_folder(partial.path());
  // Over an empty folder too: rename(2) replaces an empty directory.
  if (::rename(partial.path().c_str(), out.c_str()) != 0) {
    BLASTER_THROW("rename({}, {}) failed: {}", partial.path().string(), out.string(),
                  std::strerror(errno));
  }
  partial.release();
  fsync_folder(parent);
  return {.dir = out, .manifest = std::move(manifest)};
}

bundle_export export_bundle(store& records, std::int64_t run_id, const fs::path& out,
                            const ed25519_key* signing_key, bool allow_incomplete,
                            const fs::path& shared_objects) {
  const run_catalog catalog(records);
  const std::optional<run_record> run = catalog.find_run(run_id);
  if (!run) {
    BLASTER_INPUT_ERROR("no run {} in {}; blaster runs lists the runs recorded there", run_id,
                        records.home().string());
  }
  // A bundle of a run that never finished would verify like a complete one.
  if (!allow_incomplete && (run->status == "running" || run->status == "interrupted")) {
    BLASTER_INPUT_ERROR(
        "run {} is {}: its record is incomplete; pass --allow-incomplete to export it anyway "
        "(the bundle's run.json then says {})",
        run_id, run->status, run->status);
  }
  bundle_export result;
  result.run_id = run_id;
  const bundle_written written = write_bundle(
      out,
      [&](const fs::path& folder) {
        const nlohmann::json rows = catalog.records_of(run_id);
        // Every object the rows cite, once, in digest order; the report is results.json
        // instead. Read from the rows run.json holds, as verify reads them.
        std::map<std::string, bundle_object> objects;
        for (const object_citation& c : objects_cited_in(rows)) {
          if (c.table == "runs" && c.column == "report_sha256") continue;
          bundle_object& o = objects[c.sha256];
          o.sha256 = c.sha256;
          o.cited_by.push_back(row_label(rows, c));
        }

        // Files by path, each with its bytes.
        std::map<std::string, std::string> files;
        auto fetch = [&](const std::string& digest, std::string_view cited_by) {
          std::optional<std::string> bytes = records.cas().get(digest, /*verify=*/true);
          if (!bytes) {
            BLASTER_THROW("the store {} lacks object {}, cited by {}; the store is damaged",
                          records.home().string(), digest, cited_by);
          }
          return std::move(*bytes);
        };
        nlohmann::json report;  // null without a report
        if (!run->report_sha256.empty()) {
          std::string bytes = fetch(run->report_sha256, "runs.report_sha256");
          report = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
          if (report.is_discarded()) report = nullptr;
          files["results.json"] = std::move(bytes);
        } else {
          files["results.json"] = rows.dump(1) + "\n";
        }
        std::error_code ec;
        const fs::path objects_folder =
            shared_objects.empty() ? folder / "objects" : shared_objects;
        fs::create_directories(objects_folder, ec);
        if (ec) BLASTER_THROW("cannot create {}: {}", objects_folder.string(), ec.message());
        for (auto& [digest, o] : objects) {
          // Another run of the enclosing bundle may have written it: the same name, the same bytes.
          if (!shared_objects.empty() && fs::exists(objects_folder / digest, ec)) {
            o.size_bytes = fs::file_size(objects_folder / digest, ec);
            continue;
          }
          std::string bytes = fetch(digest, o.cited_by.front());
          o.size_bytes = bytes.size();
          write_file_atomically(objects_folder / digest, bytes);
          result.total_bytes += bytes.size();
        }
        // Where report.md sends a reader from the run's folder: "../../objects/" in a portfolio.
        std::string objects_path = "objects/";
        if (!shared_objects.empty()) {
          const fs::path from_run =
              shared_objects.lexically_normal().lexically_relative(written_at(out));
          objects_path = from_run.generic_string() + "/";
        }
        std::vector<bundle_object> object_list;
        for (auto& [digest, o] : objects) object_list.push_back(std::move(o));
        files["run.json"] = rows.dump(1) + "\n";
        const std::vector<stored_result> results = catalog.results_of(run_id);
        const std::vector<metric_definition> metrics = catalog.metric_definitions();
        files["report.md"] = render_run_markdown({.records = rows,
                                                  .results = results,
                                                  .metrics = metrics,
                                                  .report = report,
                                                  .objects = object_list,
                                                  .objects_folder = objects_path,
                                                  .is_signed = signing_key != nullptr});
        result.objects = object_list.size();
        for (const auto& [path, bytes] : files) {
          write_file_atomically(folder / path, bytes);
          result.total_bytes += bytes.size();
        }
      },
      signing_key);
  result.dir = written.dir;
  for (const auto& entry : written.manifest) result.files.push_back(entry.path);
  if (signing_key != nullptr) result.signer_sha256 = signing_key->public_sha256();
  return result;
}

}  // namespace blaster
