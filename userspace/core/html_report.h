// SPDX-License-Identifier: Apache-2.0
// The page of `fakegpu-trace run --html FILE`: one self-contained HTML file (no network, no
// external script or style) that a person opens after a CI run: the verdict, memory over time
// per device (every process's line and the device total) and per process, the out-of-memory
// failures, the processes' books, the top leaks and each process's API calls by library. The
// data (the run's JSON summary and the timeline's samples) is embedded as JSON; the page's
// script draws SVG charts from it.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace fgtrace {

// summary: the document `run` prints (render_summary); series: Timeline::series().
void write_html_report(std::ostream& out, const nlohmann::json& summary, const nlohmann::json& series);

// JSON text made safe inside <script type="application/json">: "</" (which would end the
// element) and U+2028/U+2029 written as escapes.
std::string json_for_script(const nlohmann::json& doc);

}  // namespace fgtrace
