//===- CAPIError.h - the C APIs' per-thread last error --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The message tessera_last_error() returns, shared by the runtime's and the
// compiler's C API (both are built into libtessera_compiler.so).
//
//===----------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_CAPIERROR_H
#define TESSERA_RUNTIME_CAPIERROR_H

#include <string>

namespace tessera::capi {

/// Sets this thread's last error.
void setLastError(std::string message);
/// Clears this thread's last error (a call succeeded).
void clearLastError();

} // namespace tessera::capi

#endif // TESSERA_RUNTIME_CAPIERROR_H
