//===- PrecisionReportPage.h - the accuracy report as an HTML page --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_DRIVER_PRECISIONREPORTPAGE_H
#define TESSERA_DRIVER_PRECISIONREPORTPAGE_H

#include "llvm/Support/JSON.h"

#include <string>

namespace tessera {

/// The report `--precision-report` writes (format
/// "tessera-precision-report") as one self-contained HTML page: the
/// regions in the report's order (worst local error first) with their
/// errors and bars scaled to the worst relative L2.
std::string precisionReportPage(const llvm::json::Object &report);

} // namespace tessera

#endif // TESSERA_DRIVER_PRECISIONREPORTPAGE_H
