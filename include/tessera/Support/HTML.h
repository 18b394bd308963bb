//===- HTML.h - text for Tessera's HTML reports ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_SUPPORT_HTML_H
#define TESSERA_SUPPORT_HTML_H

#include <string>
#include <string_view>

namespace tessera {

/// `text` with HTML's special characters (& < > ") escaped, for the
/// simulator's run report and the precision report's page.
std::string escapeHTML(std::string_view text);

} // namespace tessera

#endif // TESSERA_SUPPORT_HTML_H
