//===- Report.cpp - a one-page HTML report of a simulated run -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Sim/Simulator.h"
#include "tessera/Support/HTML.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tessera::sim;

namespace {

/// Adds the overlap of [start, end) with each bucket, times `weight` per
/// cycle, to `sums`.
void spread(std::vector<double> &sums, double bucketCycles, int64_t start,
            int64_t end, double weight) {
  if (end <= start)
    return;
  int first = static_cast<int>(double(start) / bucketCycles);
  int last = std::min<int>(static_cast<int>(double(end - 1) / bucketCycles),
                           static_cast<int>(sums.size()) - 1);
  for (int b = first; b <= last; ++b) {
    double lo = std::max(double(start), b * bucketCycles);
    double hi = std::min(double(end), (b + 1) * bucketCycles);
    if (hi > lo)
      sums[b] += (hi - lo) * weight;
  }
}

} // namespace

std::string tessera::sim::reportToHTML(const SimStats &stats,
                                       const AcceleratorConfig &config,
                                       const std::string &title, int buckets) {
  buckets = std::max(1, buckets);
  double cells = double(config.array.rows) * config.array.cols;
  double bucketCycles =
      std::max(1.0, double(std::max<int64_t>(stats.cycles, 1)) / buckets);
  // Per bucket: the array's utilization (MACs spread over each matmul's
  // cycles) and each unit's busy fraction.
  std::vector<double> array(buckets, 0.0);
  std::array<std::vector<double>, 4> busy;
  for (auto &b : busy)
    b.assign(buckets, 0.0);
  for (const TraceEvent &e : stats.trace) {
    int64_t length = std::max<int64_t>(e.end - e.start, 1);
    spread(busy[static_cast<int>(e.queue)], bucketCycles, e.start, e.end, 1.0);
    if (e.macs)
      spread(array, bucketCycles, e.start, e.end,
             double(e.macs) / double(length) / cells);
  }
  // Pipelined matmuls overlap: the array is at most fully busy.
  for (auto &unit : busy)
    for (double &fraction : unit)
      fraction = std::min(fraction, 1.0);

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
     << tessera::escapeHTML(title) << "</title>\n<style>body{font-family:sans-serif;"
     << "margin:2em;max-width:60em}table{border-collapse:collapse}"
     << "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
     << "th{background:#eee}</style></head><body>\n";
  os << "<h1>" << tessera::escapeHTML(title) << "</h1>\n";
  os << "<p>Accelerator <b>" << tessera::escapeHTML(config.name)
     << "</b>: " << config.array.rows << " x " << config.array.cols
     << " array, " << llvm::format("%.2f", config.clockGHz) << " GHz.</p>\n";
  os << "<h2>Totals</h2>\n<table>\n";
  auto row = [&](const char *name, const std::string &value) {
    os << "<tr><th>" << name << "</th><td>" << value << "</td></tr>\n";
  };
  auto number = [](double v, const char *fmt) {
    std::string s;
    llvm::raw_string_ostream o(s);
    o << llvm::format(fmt, v);
    return s;
  };
  row("cycles", std::to_string(stats.cycles));
  row("time", number(stats.seconds * 1e6, "%.3f us"));
  row("array utilization", number(100 * stats.arrayUtilization, "%.1f%%"));
  row("matrix unit utilization",
      number(100 * stats.matrixUtilization, "%.1f%%"));
  row("MACs", std::to_string(stats.macs));
  row("SRAM bytes", std::to_string(stats.sramBytes));
  row("DRAM bytes", std::to_string(stats.dramBytes));
  row("energy", number(stats.energyPJ / 1e6, "%.3f uJ"));
  os << "</table>\n<h2>Units</h2>\n<table>\n<tr><th>unit</th>"
     << "<th>instructions</th><th>busy cycles</th><th>busy</th>"
     << "<th>waiting for a dependency</th><th>waiting for memory</th></tr>\n";
  for (int q = 0; q < 4; ++q) {
    const UnitStats &u = stats.units[q];
    os << "<tr><th>" << queueName(Queue(q)) << "</th><td>" << u.instructions
       << "</td><td>" << u.busy << "</td><td>"
       << number(stats.cycles ? 100.0 * u.busy / stats.cycles : 0, "%.1f%%")
       << "</td><td>" << u.waitDependency << "</td><td>" << u.waitMemory
       << "</td></tr>\n";
  }
  os << "</table>\n";

  // The plot: x = time, y = fraction (0..1).
  const int width = 800, height = 240, left = 40, top = 10;
  const char *colors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b"};
  os << "<h2>Utilization over time</h2>\n<svg xmlns=\"http://www.w3.org/"
     << "2000/svg\" width=\"" << width + left + 10 << "\" height=\""
     << height + top + 40 << "\">\n";
  os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width
     << "\" height=\"" << height << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    int y = top + height - height * tick / 4;
    os << "<text x=\"2\" y=\"" << y + 4 << "\" font-size=\"10\">" << tick * 25
       << "%</text>\n";
  }
  auto polyline = [&](const std::vector<double> &values, double scale,
                      const char *color, const char *dash) {
    os << "<polyline fill=\"none\" stroke=\"" << color
       << "\" stroke-width=\"1.5\"" << dash << " points=\"";
    for (int b = 0; b < buckets; ++b) {
      double v = std::clamp(values[b] * scale, 0.0, 1.0);
      double x0 = left + double(width) * b / buckets;
      double x1 = left + double(width) * (b + 1) / buckets;
      double y = top + height - v * height;
      os << llvm::format("%.1f,%.1f %.1f,%.1f ", x0, y, x1, y);
    }
    os << "\"/>\n";
  };
  polyline(array, 1.0 / bucketCycles, "#d62728", "");
  for (int q = 0; q < 4; ++q)
    polyline(busy[q], 1.0 / bucketCycles, colors[q],
             " stroke-dasharray=\"4 3\"");
  os << "<text x=\"" << left << "\" y=\"" << top + height + 16
     << "\" font-size=\"11\">0</text><text x=\"" << left + width - 80
     << "\" y=\"" << top + height + 16 << "\" font-size=\"11\">" << stats.cycles
     << " cycles</text>\n";
  int x = left;
  auto legend = [&](const char *color, const std::string &name) {
    os << "<rect x=\"" << x << "\" y=\"" << top + height + 24
       << "\" width=\"10\" height=\"10\" fill=\"" << color << "\"/><text x=\""
       << x + 14 << "\" y=\"" << top + height + 33 << "\" font-size=\"11\">"
       << tessera::escapeHTML(name) << "</text>\n";
    x += 150;
  };
  legend("#d62728", "array utilization");
  for (int q = 0; q < 4; ++q)
    legend(colors[q], std::string(queueName(Queue(q))) + " busy");
  os << "</svg>\n<p>The array line is the MACs of each interval over its "
     << "cycles times the array's cells; the dashed lines the fraction of "
     << "each interval a unit was busy.</p>\n</body></html>\n";
  return text;
}
