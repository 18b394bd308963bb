// TesseraBase.td - the tessera dialect, its type constraints, enums and op base classes.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_BASE_TD
#define TESSERA_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Tessera_Dialect : Dialect {
  let name = "tessera";
  let cppNamespace = "::mlir::tessera";
  let summary = "Tessera's graph-level dialect for transformer models";
  let description = [{
    The `tessera` dialect holds a whole ML model as a graph of value-semantic
    operations on ranked tensors. Dimensions may be dynamic (`?`). Ops follow
    ONNX semantics where ONNX defines them (numpy-style broadcasting for
    elementwise ops, MatMul/Gemm for `tessera.matmul`), so that the importer
    maps nodes one to one and later passes raise, fuse and lower them.

    Element types: `f32`, `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`, `i1`, `i8`,
    `i32`, `i64`.
  }];
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tessera_Float : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2],
                              "Tessera floating-point">;
def Tessera_Int : AnyTypeOf<[I8, I32, I64], "Tessera integer">;
def Tessera_ElementType : AnyTypeOf<[Tessera_Float, I1, Tessera_Int],
                                    "Tessera element type">;

def Tessera_Tensor : RankedTensorOf<[Tessera_ElementType]>;
def Tessera_FloatTensor : RankedTensorOf<[Tessera_Float]>;
def Tessera_IntOrFloatTensor : RankedTensorOf<[Tessera_Float, Tessera_Int]>;
def Tessera_BoolTensor : RankedTensorOf<[I1]>;
def Tessera_IndexTensor : RankedTensorOf<[I32, I64]>;
def Tessera_QuantizedTensor : RankedTensorOf<[I8, F8E4M3FN, F8E5M2]>;
def Tessera_WideFloatTensor : RankedTensorOf<[F32, F16, BF16]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tessera_CompareDirection : I32EnumAttr<"CompareDirection",
    "comparison predicate", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula", [
      I32EnumAttrCase<"erf", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_PadMode : I32EnumAttr<"PadMode",
    "what tessera.pad puts around a tensor", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
      I32EnumAttrCase<"edge", 2>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_ResizeMode : I32EnumAttr<"ResizeMode",
    "how tessera.resize interpolates", [
      I32EnumAttrCase<"nearest", 0>, I32EnumAttrCase<"linear", 1>,
      I32EnumAttrCase<"cubic", 2>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_ResizeCoordinateMode : I32EnumAttr<"ResizeCoordinateMode",
    "how tessera.resize maps an output coordinate into the input (ONNX's "
    "coordinate_transformation_mode)", [
      I32EnumAttrCase<"half_pixel", 0>,
      I32EnumAttrCase<"half_pixel_symmetric", 1>,
      I32EnumAttrCase<"pytorch_half_pixel", 2>,
      I32EnumAttrCase<"align_corners", 3>, I32EnumAttrCase<"asymmetric", 4>,
      I32EnumAttrCase<"tf_half_pixel_for_nn", 5>,
      I32EnumAttrCase<"tf_crop_and_resize", 6>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_ResizeNearestMode : I32EnumAttr<"ResizeNearestMode",
    "how nearest-neighbour tessera.resize rounds a coordinate", [
      I32EnumAttrCase<"round_prefer_floor", 0>,
      I32EnumAttrCase<"round_prefer_ceil", 1>, I32EnumAttrCase<"floor", 2>,
      I32EnumAttrCase<"ceil", 3>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how a scatter combines an update with the element it lands on", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
      I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
      I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::mlir::tessera";
}

def Tessera_FusionKind : I32EnumAttr<"FusionKind",
    "what a fusion region computes as one kernel", [
      I32EnumAttrCase<"elementwise", 0>, I32EnumAttrCase<"epilogue", 1>,
      I32EnumAttrCase<"reduction", 2>, I32EnumAttrCase<"attention", 3>]> {
  let cppNamespace = "::mlir::tessera";
}

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

// Verifies an op by running its shape inference with its location, so users
// see why a shape is wrong. Every op that infers its result type carries it
// next to InferTypeOpInterface (see Tessera_InferredResult).
def Tessera_InferredResultShape : NativeOpTrait<"InferredResultShape"> {
  let cppNamespace = "::mlir::tessera::OpTrait";
}

// Result type inference plus the verifier that reports its errors.
defvar Tessera_InferredResult = [
  DeclareOpInterfaceMethods<InferTypeOpInterface>, Tessera_InferredResultShape];

// Precision classes: how the precision passes treat an op (docs/Precision.md).
// Every op that computes or moves tensor data carries exactly one; the
// conversions (cast, quantize, dequantize) and the structure ops carry none.
//
// Computes in the narrow type it is given, accumulating wide (matmul, conv,
// attention's products): the ops a precision policy makes narrow.
def Tessera_ComputesNarrow : NativeOpTrait<"ComputesNarrow"> {
  let cppNamespace = "::mlir::tessera::OpTrait";
}
// Computes in the type of its inputs (most elementwise ops).
def Tessera_FollowsInputs : NativeOpTrait<"FollowsInputs"> {
  let cppNamespace = "::mlir::tessera::OpTrait";
}
// Keeps fp32 inside whatever its inputs are: reductions, softmax, norm
// statistics, and elementwise functions whose error grows with their
// argument (exp, log, pow, reciprocals).
def Tessera_ComputesWide : NativeOpTrait<"ComputesWide"> {
  let cppNamespace = "::mlir::tessera::OpTrait";
}
// Copies elements without arithmetic; any type passes through.
def Tessera_MovesData : NativeOpTrait<"MovesData"> {
  let cppNamespace = "::mlir::tessera::OpTrait";
}

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Tessera_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tessera_Dialect, mnemonic, traits>;

// A pure op on tensors; most of the dialect.
class Tessera_PureOp<string mnemonic, list<Trait> traits = []>
    : Tessera_Op<mnemonic, !listconcat([Pure], traits)>;

#endif // TESSERA_BASE_TD
