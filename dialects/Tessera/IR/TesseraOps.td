// TesseraOps.td - every op of the tessera dialect, grouped by family.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_OPS_TD
#define TESSERA_OPS_TD

include "Tessera/IR/TesseraBase.td"
include "Tessera/IR/TesseraElementwiseOps.td"
include "Tessera/IR/TesseraContractionOps.td"
include "Tessera/IR/TesseraReductionOps.td"
include "Tessera/IR/TesseraDataMovementOps.td"
include "Tessera/IR/TesseraIndexingOps.td"
include "Tessera/IR/TesseraPrecisionOps.td"
include "Tessera/IR/TesseraStructureOps.td"

#endif // TESSERA_OPS_TD
