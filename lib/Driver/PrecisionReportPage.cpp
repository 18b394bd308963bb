//===- PrecisionReportPage.cpp - the accuracy report as an HTML page ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The per-op accuracy report (`--precision-report`) as one self-contained
// HTML page beside its JSON: the regions worst first, each error with a
// bar scaled to the worst one, so that the ops that cost the accuracy
// stand out without a tool.
//
//===----------------------------------------------------------------------===//
#include "PrecisionReportPage.h"
#include "tessera/Support/HTML.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace {

double number(const json::Object *errors, StringRef key) {
  if (!errors)
    return 0.0;
  return errors->getNumber(key).value_or(0.0);
}

} // namespace

std::string tessera::precisionReportPage(const json::Object &report) {
  const json::Array *regions = report.getArray("regions");
  // The worst local and accumulated relative L2, for the bars' scale.
  double worst = 0.0;
  if (regions)
    for (const json::Value &region : *regions)
      if (const json::Object *r = region.getAsObject())
        for (StringRef kind : {"local", "accumulated"})
          worst = std::max(worst, number(r->getObject(kind), "relative_l2"));
  std::string page;
  raw_string_ostream os(page);
  StringRef policy = report.getString("policy").value_or("");
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
     << "<title>Tessera accuracy report: " << escapeHTML(policy) << "</title>\n"
     << "<style>body{font-family:sans-serif;margin:2em}"
        "table{border-collapse:collapse}"
        "td,th{padding:3px 8px;border-bottom:1px solid #ddd;"
        "text-align:right;font-variant-numeric:tabular-nums}"
        "td.node{text-align:left;font-family:monospace}"
        ".bar{display:inline-block;height:10px;background:#c0392b}"
        "</style></head><body>\n"
     << "<h1>Accuracy report: " << escapeHTML(policy) << "</h1>\n<p>"
     << report.getInteger("samples").value_or(0)
     << " samples. Each op against the fp32 program (those kept fp32 too): "
        "<b>local</b>, the op fed exact inputs (its own error); "
        "<b>accumulated</b>, in the narrowed program (what it carries from "
        "the ops before it). Worst "
        "local relative L2 first; bars are relative L2 against the worst "
        "("
     << formatv("{0:e3}", worst) << ").</p>\n"
     << "<table><tr><th>#</th><th>ONNX node</th><th>op</th>"
        "<th>precision</th><th>input amax</th><th>input scale</th>"
        "<th>saturated %</th><th>flushed %</th>"
        "<th>local rel. L2</th><th></th>"
        "<th>local cosine</th><th>worst channel rel. L2</th>"
        "<th>max abs error</th><th>accumulated rel. L2</th><th></th>"
        "<th>accumulated cosine</th></tr>\n";
  auto bar = [&](double value) {
    int width = worst > 0.0 ? static_cast<int>(120.0 * value / worst) : 0;
    return formatv("<td><span class=\"bar\" style=\"width:{0}px\"></span>"
                   "</td>",
                   width)
        .str();
  };
  int rank = 0;
  if (regions)
    for (const json::Value &region : *regions) {
      const json::Object *r = region.getAsObject();
      if (!r)
        continue;
      const json::Object *local = r->getObject("local");
      const json::Object *accumulated = r->getObject("accumulated");
      std::optional<double> amax = r->getNumber("lhs_amax");
      auto percent = [&](StringRef field) {
        std::optional<double> value = r->getNumber(field);
        return value ? formatv("{0:g3}", *value).str() : std::string("-");
      };
      // The input's scale: a number, or "current" (computed each run).
      std::string scale = "-";
      if (std::optional<double> value = r->getNumber("lhs_scale"))
        scale = formatv("{0:g4}", *value).str();
      else if (std::optional<StringRef> text = r->getString("lhs_scale"))
        scale = escapeHTML(*text);
      os << "<tr><td>" << ++rank << "</td><td class=\"node\">"
         << escapeHTML(r->getString("node").value_or("")) << "</td><td>"
         << escapeHTML(r->getString("op").value_or("")) << "</td><td>"
         << escapeHTML(r->getString("precision").value_or("")) << "</td><td>"
         << (amax ? formatv("{0:g4}", *amax).str() : std::string("-"))
         << "</td><td>" << scale << "</td><td>" << percent("saturated_percent")
         << "</td><td>" << percent("flushed_percent") << "</td><td>"
         << formatv("{0:e3}", number(local, "relative_l2")) << "</td>"
         << bar(number(local, "relative_l2")) << "<td>"
         << formatv("{0:f6}", number(local, "cosine")) << "</td><td>"
         << formatv("{0:e3}", number(local, "max_channel_relative_l2"))
         << "</td><td>" << formatv("{0:e3}", number(local, "max_abs_error"))
         << "</td>";
      if (accumulated)
        os << "<td>" << formatv("{0:e3}", number(accumulated, "relative_l2"))
           << "</td>" << bar(number(accumulated, "relative_l2")) << "<td>"
           << formatv("{0:f6}", number(accumulated, "cosine")) << "</td>";
      else
        os << "<td>-</td><td></td><td>-</td>";
      os << "</tr>\n";
    }
  os << "</table>\n</body></html>\n";
  return page;
}
