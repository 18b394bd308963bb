// TesseraElementwiseOps.td - elementwise tessera ops with numpy-style broadcasting.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef TESSERA_ELEMENTWISE_OPS_TD
#define TESSERA_ELEMENTWISE_OPS_TD

include "Tessera/IR/TesseraBase.td"

//===----------------------------------------------------------------------===//
// Binary arithmetic
//===----------------------------------------------------------------------===//

// Operands broadcast numpy-style (ONNX "multidirectional broadcasting"); the
// result shape is inferred from them and printed for readability.
class Tessera_BinaryOp<string mnemonic, string desc, list<Trait> traits = [],
                       Type operandType = Tessera_IntOrFloatTensor,
                       Trait precision = Tessera_FollowsInputs>
    : Tessera_PureOp<mnemonic, !listconcat(traits, [precision,
          SameOperandsAndResultElementType] # Tessera_InferredResult)> {
  let summary = "elementwise " # desc # " with broadcasting";
  let description = [{
    Computes `}] # desc # [{` elementwise. Operands of different shapes
    broadcast numpy-style: shapes align at the trailing dimension and a
    dimension of size 1 stretches to the other operand's size.
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Tessera_AddOp : Tessera_BinaryOp<"add", "addition", [Commutative]> {
  let hasCanonicalizeMethod = 1;
}
def Tessera_SubOp : Tessera_BinaryOp<"sub", "subtraction">;
def Tessera_MulOp : Tessera_BinaryOp<"mul", "multiplication", [Commutative]>;
def Tessera_DivOp : Tessera_BinaryOp<"div", "division">;
def Tessera_PowOp : Tessera_BinaryOp<"pow", "power (lhs raised to rhs)", [],
                                    Tessera_IntOrFloatTensor,
                                    Tessera_ComputesWide>;
def Tessera_MaxOp : Tessera_BinaryOp<"max", "maximum", [Commutative]>;
def Tessera_MinOp : Tessera_BinaryOp<"min", "minimum", [Commutative]>;

//===----------------------------------------------------------------------===//
// Comparison and logic
//===----------------------------------------------------------------------===//

def Tessera_CompareOp : Tessera_PureOp<"compare", [Tessera_FollowsInputs,
    SameOperandsElementType] # Tessera_InferredResult> {
  let summary = "elementwise comparison with broadcasting, producing i1";
  let description = [{
    Compares `lhs` and `rhs` elementwise with `direction` (`eq`, `ne`, `lt`,
    `le`, `gt`, `ge`) after numpy-style broadcasting. Covers ONNX Equal,
    Less, LessOrEqual, Greater and GreaterOrEqual.

    ```mlir
    %m = tessera.compare lt, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Tessera_CompareDirection:$direction,
                       Tessera_Tensor:$lhs, Tessera_Tensor:$rhs);
  let results = (outs Tessera_BoolTensor:$result);
  let assemblyFormat = [{
    $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)
    `->` type($result)
  }];
}

class Tessera_LogicalBinaryOp<string mnemonic, string desc>
    : Tessera_BinaryOp<mnemonic, desc, [Commutative], Tessera_BoolTensor>;

def Tessera_AndOp : Tessera_LogicalBinaryOp<"and", "logical and">;
def Tessera_OrOp : Tessera_LogicalBinaryOp<"or", "logical or">;
def Tessera_XorOp : Tessera_LogicalBinaryOp<"xor", "logical exclusive or">;

def Tessera_WhereOp : Tessera_PureOp<"where",
    [Tessera_FollowsInputs] # Tessera_InferredResult> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    Picks `on_true` where `condition` holds and `on_false` elsewhere, after
    broadcasting all three operands to a common shape (ONNX Where).
  }];
  let arguments = (ins Tessera_BoolTensor:$condition, Tessera_Tensor:$on_true,
                       Tessera_Tensor:$on_false);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

class Tessera_UnaryOp<string mnemonic, string desc, list<Trait> traits = [],
                      Type tensorType = Tessera_FloatTensor,
                      Trait precision = Tessera_FollowsInputs>
    : Tessera_PureOp<mnemonic, !listconcat(traits,
                                           [precision,
                                            SameOperandsAndResultType])> {
  let summary = "elementwise " # desc;
  let description = [{ Computes `}] # desc # [{` of each element. }];
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tessera_NegOp : Tessera_UnaryOp<"neg", "negation", [],
                                    Tessera_IntOrFloatTensor> {
  let hasFolder = 1;
}
def Tessera_AbsOp : Tessera_UnaryOp<"abs", "absolute value", [],
                                    Tessera_IntOrFloatTensor>;
def Tessera_ExpOp : Tessera_UnaryOp<"exp", "e raised to the element", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_LogOp : Tessera_UnaryOp<"log", "natural logarithm", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_SqrtOp : Tessera_UnaryOp<"sqrt", "square root">;
def Tessera_RsqrtOp : Tessera_UnaryOp<"rsqrt", "reciprocal square root", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_ReciprocalOp : Tessera_UnaryOp<"reciprocal", "reciprocal (1/x)", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_TanhOp : Tessera_UnaryOp<"tanh", "hyperbolic tangent">;
def Tessera_ErfOp : Tessera_UnaryOp<"erf", "Gauss error function">;
def Tessera_SigmoidOp : Tessera_UnaryOp<"sigmoid", "logistic sigmoid 1/(1+e^-x)">;
def Tessera_ReluOp : Tessera_UnaryOp<"relu", "rectified linear unit max(x, 0)",
                                     [], Tessera_IntOrFloatTensor>;
def Tessera_SiluOp : Tessera_UnaryOp<"silu", "SiLU (swish) x * sigmoid(x)">;
def Tessera_SinOp : Tessera_UnaryOp<"sin", "sine">;
def Tessera_CosOp : Tessera_UnaryOp<"cos", "cosine">;
def Tessera_TanOp : Tessera_UnaryOp<"tan", "tangent", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_AsinOp : Tessera_UnaryOp<"asin", "arcsine", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_AcosOp : Tessera_UnaryOp<"acos", "arccosine", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_AtanOp : Tessera_UnaryOp<"atan", "arctangent">;
def Tessera_SinhOp : Tessera_UnaryOp<"sinh", "hyperbolic sine", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_CoshOp : Tessera_UnaryOp<"cosh", "hyperbolic cosine", [],
    Tessera_FloatTensor, Tessera_ComputesWide>;
def Tessera_AsinhOp : Tessera_UnaryOp<"asinh", "inverse hyperbolic sine">;
def Tessera_AcoshOp : Tessera_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def Tessera_AtanhOp : Tessera_UnaryOp<"atanh", "inverse hyperbolic tangent">;
def Tessera_CeilOp : Tessera_UnaryOp<"ceil", "rounding up to an integer">;
def Tessera_FloorOp : Tessera_UnaryOp<"floor", "rounding down to an integer">;
def Tessera_RoundOp : Tessera_UnaryOp<"round", "rounding to the nearest integer, halves to even">;
def Tessera_NotOp : Tessera_UnaryOp<"not", "logical negation", [],
                                    Tessera_BoolTensor> {
  let hasFolder = 1;
}

def Tessera_GeluOp : Tessera_PureOp<"gelu", [Tessera_FollowsInputs,
                                             SameOperandsAndResultType]> {
  let summary = "elementwise GELU activation";
  let description = [{
    Gaussian error linear unit. `approximate = erf` (the default) computes
    `0.5 * x * (1 + erf(x / sqrt(2)))`; `approximate = tanh` computes
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

    ```mlir
    %y = tessera.gelu %x approximate = tanh : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Tessera_FloatTensor:$input,
                       DefaultValuedAttr<Tessera_GeluApproximation,
                           "::mlir::tessera::GeluApproximation::erf">:$approximate);
  let results = (outs Tessera_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate` `=` $approximate^)? attr-dict `:` type($input)
  }];
}

def Tessera_CastOp : Tessera_PureOp<"cast", [SameOperandsAndResultShape]> {
  let summary = "elementwise element-type conversion";
  let description = [{
    Converts each element to the result's element type (ONNX Cast). Floats
    round to nearest even; conversions to integers truncate toward zero;
    conversion to `i1` tests for non-zero. A conversion to an fp8 type
    saturates (a value past the largest finite one, an infinity included,
    becomes it) unless `saturate` is false (ONNX Cast's `saturate = 0`):
    then such a value becomes NaN in f8E4M3FN, which has no infinity, and
    an infinity in f8E5M2. `saturate` means nothing for other types.
  }];
  let arguments = (ins Tessera_Tensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Tessera_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

#endif // TESSERA_ELEMENTWISE_OPS_TD
