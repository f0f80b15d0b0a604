#include "core/revision.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace blaster {
namespace {

// A build inside a git checkout names its commit; elsewhere it says it cannot.
TEST(SourceRevision, IsAFullCommitOrUnknown) {
  const std::string revision(source_revision());
  EXPECT_TRUE(std::regex_match(revision, std::regex("[0-9a-f]{40}(\\+dirty)?|unknown")))
      << revision;
}

}  // namespace
}  // namespace blaster
