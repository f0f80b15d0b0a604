#include "portfolio/merge_source.hpp"

#include "portfolio/portfolio_report.hpp"

namespace blaster {

merge_source check_merge_source(const std::filesystem::path& path,
                                const merge_source_options& options) {
  merge_source source{
      .path = path, .kind = merge_source_kind_of(path), .verified = {}, .progress = {}};
  if (source.kind == merge_source_kind::bundle) {
    source.verified =
        verify_evidence_bundle(path, options.public_key, options.allow_unchecked_signature);
    require_verified(source.verified);
    source.progress = read_bundle_progress(path);
  } else {
    require_whole_home(path);
  }
  return source;
}

source_merge merge_checked_source(store& records, const merge_source& source) {
  switch (source.kind) {
    case merge_source_kind::home:
      return {merge_home(records, source.path), merge_portfolio_progress(records, source.path)};
    case merge_source_kind::bundle:
      return {merge_bundle(records, source.verified),
              merge_bundle_progress(records, source.path, source.progress)};
  }
  return {};
}

}  // namespace blaster
