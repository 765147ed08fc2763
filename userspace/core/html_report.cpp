// SPDX-License-Identifier: Apache-2.0
#include "html_report.h"

namespace fgtrace {
namespace {

constexpr const char* kHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fakegpu-trace run report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d2430; background: #fbfbfd; }
h1 { font-size: 1.4em; margin: 0 0 .2em; } h2 { font-size: 1.1em; margin: 1.6em 0 .5em; }
.verdict { display: inline-block; padding: .15em .6em; border-radius: .3em; font-weight: 600; }
.ok { background: #d9f2df; color: #135c27; } .bad { background: #fbe0e0; color: #8a1c1c; }
table { border-collapse: collapse; margin: .3em 0; } th, td { padding: .2em .7em; text-align: right; }
th { border-bottom: 1px solid #c8ccd4; } td:first-child, th:first-child { text-align: left; }
tr:nth-child(even) td { background: #f1f2f6; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; background: #fff; border: 1px solid #dde0e6; border-radius: .4em; padding: .5em; }
figcaption { font-weight: 600; margin-bottom: .3em; }
svg.chart { width: 560px; height: 220px; } svg text { font-size: 11px; fill: #555; }
.legend span { display: inline-block; margin-right: 1em; font-size: 12px; }
.legend i { display: inline-block; width: .8em; height: .8em; margin-right: .3em; vertical-align: -1px; }
.muted { color: #6b7280; } pre { white-space: pre-wrap; font-size: 12px; }
</style></head><body>
<h1>fakegpu-trace run report</h1>
<div id="head"></div>
<h2>Memory over time, per device</h2><div class="charts" id="device-charts"></div>
<h2>Memory over time, per process</h2><div class="charts" id="process-charts"></div>
<h2>Out-of-memory failures</h2><div id="ooms"></div>
<h2>OOM forecast (each device at its highest risk)</h2><div id="forecast"></div>
<h2>Fragmentation (at the end)</h2><div id="fragmentation"></div>
<h2>Processes</h2><div id="processes"></div>
<h2>Top leaks</h2><div id="leaks"></div>
<h2>Calls by library</h2><div id="callers"></div>
<h2>Events</h2><div id="drops"></div>
)HTML";

constexpr const char* kScript = R"JS(
(function () {
  const summary = JSON.parse(document.getElementById("summary").textContent);
  const series = JSON.parse(document.getElementById("series").textContent);
  const colors = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svgEl = (tag, attrs) => {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  };
  const bytes = (n) => {
    if (n === null || n === undefined) return "-";  // not known (e.g. a capacity no refresh saw)
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
    return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
  };
  const duration = (ns) => {
    if (ns < 1e3) return ns.toFixed(0) + " ns";
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + " µs";
    if (ns < 1e9) return (ns / 1e6).toFixed(1) + " ms";
    return (ns / 1e9).toFixed(2) + " s";
  };
  const deviceName = (d) => (d < 0 ? "host pinned" : "GPU " + d);
  const comm = {};
  for (const p of summary.processes || []) comm[p.pid] = p.comm;
  const procName = (pid) => (comm[pid] || "?") + " (" + pid + ")";

  // A step chart of [[ms, bytes], ...] series; the SVG carries what it drew (data-series,
  // data-points) for whoever checks the page.
  function chart(title, lines) {
    const W = 560, H = 220, L = 70, R = 10, T = 10, B = 30;
    let tmax = 0, ymax = 0, npoints = 0;
    for (const s of lines) for (const [t, y] of s.points) { tmax = Math.max(tmax, t); ymax = Math.max(ymax, y); }
    tmax = tmax || 1; ymax = ymax || 1;
    const x = (t) => L + (W - L - R) * t / tmax, y = (v) => H - B - (H - T - B) * v / ymax;
    const svg = svgEl("svg", { class: "chart", viewBox: "0 0 " + W + " " + H });
    svg.appendChild(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" }));
    svg.appendChild(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" }));
    for (const f of [0, 0.5, 1]) {
      const t = svgEl("text", { x: L - 6, y: y(ymax * f) + 4, "text-anchor": "end" });
      t.textContent = bytes(ymax * f);
      svg.appendChild(t);
    }
    const end = svgEl("text", { x: W - R, y: H - 8, "text-anchor": "end" });
    end.textContent = tmax.toFixed(tmax < 10 ? 2 : 0) + " ms";
    svg.appendChild(end);
    const legend = el("div", { class: "legend" });
    lines.forEach((s, i) => {
      const color = s.color || colors[i % colors.length];
      let d = "";
      s.points.forEach(([t, v], k) => {
        d += k === 0 ? "M" + x(t).toFixed(1) + "," + y(v).toFixed(1) : "H" + x(t).toFixed(1) + "V" + y(v).toFixed(1);
      });
      if (s.points.length) d += "H" + x(tmax).toFixed(1);
      svg.appendChild(svgEl("path", { d: d, fill: "none", stroke: color, "stroke-width": s.width || 1.5,
                                      "data-label": s.label, "data-last": s.points.length ? s.points[s.points.length - 1][1] : 0 }));
      npoints += s.points.length;
      const item = el("span");
      item.appendChild(el("i", { style: "background:" + color }));
      item.appendChild(document.createTextNode(s.label));
      legend.appendChild(item);
    });
    svg.setAttribute("data-series", lines.length);
    svg.setAttribute("data-points", npoints);
    const fig = el("figure");
    fig.appendChild(el("figcaption", {}, title));
    fig.appendChild(svg);
    fig.appendChild(legend);
    return fig;
  }

  function table(headers, rows, rowAttrs) {
    const t = el("table"), tr = el("tr");
    headers.forEach((h) => tr.appendChild(el("th", {}, h)));
    t.appendChild(tr);
    rows.forEach((r, i) => {
      const row = el("tr", rowAttrs ? rowAttrs(i) : {});
      r.forEach((c) => row.appendChild(el("td", {}, String(c))));
      t.appendChild(row);
    });
    return t;
  }

  const v = summary.verdict || {};
  const head = document.getElementById("head");
  head.appendChild(el("span", { class: "verdict " + (v.status === "ok" ? "ok" : "bad") }, v.status || "?"));
  head.appendChild(el("p", {}, "command: " + (summary.command || []).join(" ") + " — exit status " +
                                summary.command_exit_status + ", " + (summary.duration_s || 0).toFixed(2) + " s"));
  for (const r of v.reasons || []) head.appendChild(el("p", { class: "muted" }, r));

  const devCharts = document.getElementById("device-charts");
  for (const dev of series.devices) {
    const lines = [{ label: "all processes", points: dev.points, color: "#111827", width: 2.5 }];
    for (const p of series.processes) if (p.device === dev.device) lines.push({ label: procName(p.pid), points: p.points });
    const fig = chart(deviceName(dev.device), lines);
    fig.querySelector("svg").id = "device-chart-" + dev.device;
    devCharts.appendChild(fig);
  }
  if (!series.devices.length) devCharts.appendChild(el("p", { class: "muted" }, "no allocation was traced"));
  const procCharts = document.getElementById("process-charts");
  const pids = [...new Set(series.processes.map((p) => p.pid))];
  for (const pid of pids) {
    const lines = series.processes.filter((p) => p.pid === pid).map((p) => ({ label: deviceName(p.device), points: p.points }));
    const fig = chart(procName(pid), lines);
    fig.querySelector("svg").id = "process-chart-" + pid;
    procCharts.appendChild(fig);
  }

  const ooms = document.getElementById("ooms");
  if (series.ooms.length)
    ooms.appendChild(table(["process", "device", "requested", "at"],
                           series.ooms.map((o) => [procName(o.pid), deviceName(o.device), bytes(o.bytes), o.ms.toFixed(1) + " ms"])));
  else ooms.appendChild(el("p", { class: "muted" }, "none"));

  // The analyses (the summary's "analysis"; absent with --no-analyses).
  const a = summary.analysis;
  const used = new Set(series.devices.map((d) => d.device));
  const forecast = document.getElementById("forecast");
  const worst = a ? (a.worst || []).filter((w) => used.has(w.device) || (w.forecast.risk && w.forecast.risk !== "low")) : [];
  const pct = (x) => (x === null || x === undefined ? "-" : x.toFixed(1) + " %");
  const eta = (x) => (x === null || x === undefined ? "-" : x < 120 ? x.toFixed(0) + " s" : (x / 60).toFixed(1) + " min");
  if (worst.length)
    forecast.appendChild(table(["device", "risk", "usage", "capacity", "growth", "full in", "confidence"],
        worst.map((w) => [deviceName(w.device), w.forecast.risk || "-", pct(w.forecast.usage_pct), bytes(w.forecast.capacity_bytes),
                          bytes(Math.max(0, w.forecast.growth_bytes_per_s)) + "/s", eta(w.forecast.eta_s),
                          (w.forecast.confidence || 0).toFixed(2)]),
        (i) => ({ "data-forecast-device": worst[i].device })));
  else forecast.appendChild(el("p", { class: "muted" }, a ? "no device was used" : "analyses were off (--no-analyses)"));
  const fragmentation = document.getElementById("fragmentation");
  const frag = a ? (a.devices || []).filter((d) => d.fragmentation) : [];
  if (frag.length)
    fragmentation.appendChild(table(["device", "free", "largest free extent", "free extents", "ratio", "process"],
        frag.map((d) => [deviceName(d.device), bytes(d.fragmentation.free_bytes), bytes(d.fragmentation.largest_free_bytes),
                         d.fragmentation.free_extents, d.fragmentation.ratio.toFixed(3), procName(d.fragmentation_pid)])));
  else fragmentation.appendChild(el("p", { class: "muted" }, "no live allocation at the end (nothing fragments an empty device)"));

  // Processes that touched a GPU API (a shell around the command has no books).
  const procs = (summary.processes || []).filter((p) => p.allocs || p.frees || p.failed_calls || p.peak_bytes || p.leaked_bytes);
  document.getElementById("processes").appendChild(table(
      ["process", "state", "peak", "leaked", "allocs", "frees", "failed"],
      procs.map((p) => [procName(p.pid), p.state, bytes(p.peak_bytes), bytes(p.leaked_bytes), p.allocs, p.frees, p.failed_calls]),
      (i) => ({ "data-pid": procs[i].pid })));

  const leaks = document.getElementById("leaks");
  const leaky = procs.filter((p) => p.leaked_bytes > 0).sort((a, b) => b.leaked_bytes - a.leaked_bytes).slice(0, 20);
  if (leaky.length)
    leaks.appendChild(table(["process", "leaked", "allocations", "devices"],
                            leaky.map((p) => [procName(p.pid), bytes(p.leaked_bytes), p.leaked_allocs,
                                              p.devices.filter((d) => d.leaked_bytes > 0).map((d) => deviceName(d.device)).join(", ")]),
                            (i) => ({ "data-leak-pid": leaky[i].pid })));
  else leaks.appendChild(el("p", { class: "muted" }, "none"));
  for (const s of (summary.leaked_stacks || []).slice(0, 10)) {
    leaks.appendChild(el("p", {}, procName(s.pid) + ": " + bytes(s.bytes) + " in " + s.allocs + " allocation(s)"));
    leaks.appendChild(el("pre", {}, s.frames.join("\n")));
  }

  // Each process's API calls by calling object (the file holding the call's return address),
  // the most calls first. time: the calls entry/return probes saw, from those timed.
  const callers = document.getElementById("callers");
  const byObject = [];
  for (const p of summary.processes || []) for (const c of p.callers || []) byObject.push([p.pid, c]);
  if (byObject.length) {
    callers.appendChild(el("p", { class: "muted" }, "object: the file holding each call's return address; " +
                                "time: in the calls the entry/return probes saw, from those timed (--latency-every)"));
    callers.appendChild(table(["process", "object", "calls", "errors", "allocated", "freed", "time"],
        byObject.map(([pid, c]) => [procName(pid), c.object, c.calls, c.errors, bytes(c.alloc_bytes), bytes(c.free_bytes),
                                    c.timed_calls ? duration(c.time_ns) : "-"]),
        (i) => ({ "data-caller-pid": byObject[i][0], "data-caller": byObject[i][1].object })));
  } else callers.appendChild(el("p", { class: "muted" }, "no API call was traced"));

  const d = summary.drops || {};
  document.getElementById("drops").appendChild(el("p", { class: d.events_lost ? "bad" : "muted" },
      (d.events || 0) + " events; " + (d.events_lost ? "events were lost: the charts may miss some" : "none lost")));
  document.body.setAttribute("data-rendered", "1");
})();
)JS";

}  // namespace

std::string json_for_script(const nlohmann::json& doc) {
  const std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (text.compare(i, 3, "\xE2\x80\xA8") == 0) {
      out += "\\u2028";
      i += 2;
    } else if (text.compare(i, 3, "\xE2\x80\xA9") == 0) {
      out += "\\u2029";
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

void write_html_report(std::ostream& out, const nlohmann::json& summary, const nlohmann::json& series) {
  out << kHead << "<script type=\"application/json\" id=\"summary\">" << json_for_script(summary)
      << "</script>\n<script type=\"application/json\" id=\"series\">" << json_for_script(series)
      << "</script>\n<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace fgtrace
