// The timing modes: one row of traits each, read by everything that depends on the mode.
#include "core/timing_mode.hpp"

#include <gtest/gtest.h>

#include <set>

namespace blaster {
namespace {

TEST(TimingMode, EachModeHasItsRowItsNameAndItsHelp) {
  ASSERT_EQ(timing_modes().size(), timing_mode_count);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < timing_modes().size(); ++i) {
    const timing_mode_traits& t = timing_modes()[i];
    EXPECT_EQ(static_cast<std::size_t>(t.mode), i) << t.name << " is out of the enum's order";
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_EQ(parse_timing_mode(t.name), t.mode);
    EXPECT_EQ(to_string(t.mode), t.name);
    EXPECT_FALSE(t.help.empty()) << t.name;
    EXPECT_FALSE(t.clock.empty()) << t.name;
  }
  EXPECT_FALSE(parse_timing_mode("warm"));
  EXPECT_EQ(timing_mode_choices(), "hot, cold, graph or single");
}

// What keeps a timed number honest, mode by mode: a launch that meets outputs left by the last
// one is either checked there (every sample poisoned) or by the output-dependence check; a mode
// that flushes the L2 holds nothing there.
TEST(TimingMode, EveryModeChecksThatItsLaunchesDidTheWork) {
  for (const auto& t : timing_modes()) {
    EXPECT_TRUE(t.checks_every_sample || t.checks_output_dependence) << t.name;
    if (t.flushes_l2) {
      EXPECT_FALSE(t.may_hold_l2) << t.name;
    }
    // A single launch is timed by its own duration: events would add the launch's latency.
    if (!t.batches_launches) {
      EXPECT_TRUE(t.timed_by_device) << t.name;
    }
    // A graph replays a sample's launches.
    if (t.replays_graph) {
      EXPECT_TRUE(t.batches_launches) << t.name;
    }
    if (t.timed_by_device) {
      EXPECT_EQ(t.clock, "CUPTI kernel time") << t.name;
    }
  }
  EXPECT_TRUE(traits_of(timing_mode::single).checks_every_sample);
  EXPECT_FALSE(traits_of(timing_mode::single).flushes_l2);
  EXPECT_TRUE(traits_of(timing_mode::graph).replays_graph);
  EXPECT_FALSE(traits_of(timing_mode::hot).replays_graph);
}

}  // namespace
}  // namespace blaster
