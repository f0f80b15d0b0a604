// The renderers of result tables: each format reads the same table.
#include "evidence/table_renderer.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

namespace blaster {
namespace {

result_table sample() {
  result_table t;
  t.title = "sample";
  t.preamble = {"before the table"};
  t.columns = {{.metric = {.tag = "variant", .name = "candidate"}, .width = 9, .left = true},
               {.metric = {.tag = "status", .name = "status"}, .width = 8, .left = true},
               {.metric = {.tag = "time_us", .name = "time us", .unit = "us", .format = "{:.2f}"},
                .width = 10},
               {.metric = {.tag = "note", .name = "note"}, .left = true}};
  t.rows.push_back({.cells = {"fast, \"v2\"", "passed", 70.123456, "ok"}});
  table_row rejected{.cells = {"cheat", "rejected"}, .summary = "wrong_result",
                     .details = {"case odd: 3 differ"}};
  rejected.cells.resize(t.columns.size());
  t.rows.push_back(rejected);
  t.notes = {"after the table"};
  return t;
}

std::string render(std::string_view format, const result_table& t) {
  std::ostringstream out;
  make_renderer(format)->render(t, out);
  return out.str();
}

TEST(TableRenderer, EveryFormatIsListedAndUnknownOnesAreNot) {
  for (const auto& f : output_formats()) EXPECT_NE(make_renderer(f.name), nullptr) << f.name;
  EXPECT_EQ(make_renderer("xml"), nullptr);
  EXPECT_EQ(output_format_choices(), "table, json, md or csv");
}

TEST(TableRenderer, TextAlignsColumnsAndShowsTheReasonOfARejection) {
  const std::string text = render("table", sample());
  EXPECT_NE(text.find("before the table\n\ncandidate"), std::string::npos) << text;
  EXPECT_NE(text.find("     70.12  ok"), std::string::npos) << text;
  EXPECT_NE(text.find("cheat       rejected  wrong_result\n    case odd: 3 differ"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nafter the table\n"), std::string::npos) << text;
}

TEST(TableRenderer, CsvQuotesFieldsAndKeepsNumbersExact) {
  const std::string csv = render("csv", sample());
  EXPECT_EQ(csv,
            "variant,status,time_us,note\r\n"
            "\"fast, \"\"v2\"\"\",passed,70.123456,ok\r\n"
            "cheat,rejected,,wrong_result\r\n");
}

TEST(TableRenderer, MarkdownAndJsonCarryEveryCell) {
  const std::string md = render("md", sample());
  EXPECT_NE(md.find("| candidate | status | time us | note |\n|---|---|---:|---|"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| cheat | rejected | - | wrong_result |"), std::string::npos) << md;
  const auto j = nlohmann::json::parse(render("json", sample()));
  EXPECT_EQ(j.at("rows").at(0).at("time_us"), 70.123456);
  EXPECT_TRUE(j.at("rows").at(1).at("time_us").is_null());
  EXPECT_EQ(j.at("rows").at(1).at("summary"), "wrong_result");
  EXPECT_EQ(j.at("columns").at(2).at("unit"), "us");
}

}  // namespace
}  // namespace blaster
