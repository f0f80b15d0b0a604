// The table as exact JSON: each row an object keyed by the columns' tags, numbers unrounded.
#include <ostream>

#include <nlohmann/json.hpp>

#include "evidence/table_renderer.hpp"

namespace blaster {
namespace {

class json_renderer final : public table_renderer {
  void do_render(const result_table& t, std::ostream& out) const override {
    using json = nlohmann::json;
    json columns = json::array();
    for (const auto& c : t.columns) {
      columns.push_back({{"tag", c.metric.tag},
                         {"name", c.metric.name},
                         {"unit", c.metric.unit},
                         {"description", c.metric.description}});
    }
    json rows = json::array();
    for (const auto& row : t.rows) {
      json r = json::object();
      for (std::size_t i = 0; i < t.columns.size() && i < row.cells.size(); ++i) {
        const std::string tag(t.columns[i].metric.tag);
        if (const auto* number = std::get_if<double>(&row.cells[i])) {
          r[tag] = *number;
        } else if (const auto* text = std::get_if<std::string>(&row.cells[i])) {
          r[tag] = *text;
        } else {
          r[tag] = nullptr;
        }
      }
      if (!row.summary.empty()) r["summary"] = row.summary;
      if (!row.details.empty()) r["details"] = row.details;
      rows.push_back(std::move(r));
    }
    const json doc = {{"title", t.title},
                      {"preamble", t.preamble},
                      {"columns", columns},
                      {"rows", rows},
                      {"notes", t.notes}};
    out << doc.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  }
};

}  // namespace

std::unique_ptr<table_renderer> make_json_renderer() { return std::make_unique<json_renderer>(); }

}  // namespace blaster
