//===- Recurrent.cpp - ONNX RNN, LSTM and GRU, unrolled over the sequence -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// An RNN, LSTM or GRU over a sequence of static length becomes its steps, one
// after the other: the input's projection for every step at once (one
// matmul of the whole sequence by W), then per step the hidden state's
// projection by R and the gates, elementwise. The first step starts from
// zero states unless initial ones are given (and then skips the products
// by zero). Each direction is unrolled in its own order; the outputs
// stack the steps (Y) and the last states (Y_h, Y_c) as ONNX lays them
// out.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

using namespace mlir;

namespace tessera::onnx_import {
namespace ts = mlir::tessera;

namespace {

/// Zero of the float type `element`.
Attribute floatZero(Type element) { return FloatAttr::get(element, 0.0); }

/// The parts of one LSTM or GRU node that every step reads.
struct Recurrence {
  GraphImporter &im;
  Type element;
  int64_t steps = 0, hidden = 0, gates = 0, directions = 1;
  bool reverseOnly = false;

  Value slice(Value x, int64_t axis, int64_t start, int64_t end) {
    Builder b(&im.context());
    return im.inferred<ts::SliceOp>(x, b.getDenseI64ArrayAttr({start}),
                                    b.getDenseI64ArrayAttr({end}),
                                    b.getDenseI64ArrayAttr({axis}),
                                    DenseI64ArrayAttr());
  }
  /// `x` without its leading unit dim, or with one put in front.
  Value dropFront(Value x) {
    RankedTensorType type = tensorType(x);
    return im.create<ts::ReshapeOp>(
        RankedTensorType::get(type.getShape().drop_front(), element), x,
        Value());
  }
  Value addFront(Value x) {
    RankedTensorType type = tensorType(x);
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, type.getShape());
    return im.create<ts::ReshapeOp>(RankedTensorType::get(shape, element), x,
                                    Value());
  }
  /// Gate `g` of `all` ([B, gates * H]): columns g * H to (g + 1) * H.
  Value gate(Value all, int64_t g) {
    return slice(all, -1, g * hidden, (g + 1) * hidden);
  }
  Value add(Value a, Value b) {
    return a && b ? im.inferred<ts::AddOp>(a, b) : Value();
  }
  Value mul(Value a, Value b) {
    return a && b ? im.inferred<ts::MulOp>(a, b) : Value();
  }
  Value sigmoid(Value x) { return x ? im.create<ts::SigmoidOp>(x) : x; }
  Value tanh(Value x) { return x ? im.create<ts::TanhOp>(x) : x; }
  /// h @ R^T ([B, H] x [gates * H, H]^T).
  Value project(Value h, Value r) {
    return h && r ? im.create<ts::MatmulOp>(
                        RankedTensorType::get(
                            {tensorType(h).getDimSize(0), gates * hidden},
                            element),
                        h, r, false, true, APFloat(1.0f))
                  : Value();
  }
};

/// Checks what the unrolled form supports; the sequence length, the hidden
/// size and the number of directions into `rec`.
LogicalResult checkRecurrence(GraphImporter &im, Recurrence &rec, Value x,
                              Value w, Value r, StringRef op,
                              ArrayRef<StringRef> defaults) {
  RankedTensorType xType = tensorType(x);
  if (xType.getRank() != 3 || tensorType(w).getRank() != 3 ||
      tensorType(r).getRank() != 3)
    return im.emitError() << "X, W and R must be 3-D";
  bool batchFirst = im.intAttr("layout", 0) != 0;
  int64_t steps = xType.getDimSize(batchFirst ? 1 : 0);
  if (ShapedType::isDynamic(steps))
    return im.emitError()
           << "needs a static sequence length (the " << op
           << " is unrolled over it at import), got a symbolic one";
  std::string direction = im.stringAttr("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return im.emitError() << "direction '" << direction
                          << "' is not one of forward, reverse, bidirectional";
  rec.directions = direction == "bidirectional" ? 2 : 1;
  rec.reverseOnly = direction == "reverse";
  rec.steps = steps;
  rec.hidden = im.intAttr("hidden_size", tensorType(r).getDimSize(2));
  if (!isa<FloatType>(xType.getElementType()))
    return im.emitError() << "X must be floating-point, got "
                          << xType.getElementType();
  if (steps < 1 || rec.hidden < 1)
    return im.emitError() << "needs at least one step and one hidden unit, "
                             "got "
                          << steps << " and " << rec.hidden;
  RankedTensorType wType = tensorType(w), rType = tensorType(r);
  if (!wType.hasStaticShape() || !rType.hasStaticShape() ||
      wType.getDimSize(0) != rec.directions ||
      wType.getDimSize(1) != rec.gates * rec.hidden ||
      !::tessera::dimsCompatible(xType.getDimSize(2), wType.getDimSize(2)) ||
      rType.getDimSize(0) != rec.directions ||
      rType.getDimSize(1) != rec.gates * rec.hidden ||
      rType.getDimSize(2) != rec.hidden)
    return im.emitError() << "W must be [" << rec.directions << ", "
                          << rec.gates * rec.hidden << ", input size] and R ["
                          << rec.directions << ", " << rec.gates * rec.hidden
                          << ", " << rec.hidden << "] for hidden size "
                          << rec.hidden;
  if (im.attr("clip"))
    return im.emitError() << "clip is not supported";
  if (const onnx::AttributeProto *given = im.attr("activations")) {
    for (int i = 0; i < given->strings_size(); ++i)
      if (!StringRef(given->strings(i))
               .equals_insensitive(defaults[i % defaults.size()]))
        return im.emitError()
               << "activation '" << given->strings(i)
               << "' is not supported (the defaults are)";
  }
  // B [D, 2 * gates * H]; initial states [D, batch, H].
  if (Value bias = im.optionalInput(3)) {
    RankedTensorType bType = tensorType(bias);
    if (bType.getRank() != 2 || bType.getDimSize(0) != rec.directions ||
        bType.getDimSize(1) != 2 * rec.gates * rec.hidden)
      return im.emitError() << "B must be [" << rec.directions << ", "
                            << 2 * rec.gates * rec.hidden << "]";
  }
  // Initial states are [D, batch, H], or [batch, D, H] with layout 1.
  for (int index : {5, 6}) {
    Value state = im.optionalInput(index);
    if (!state)
      continue;
    RankedTensorType sType = tensorType(state);
    int64_t directionsDim = batchFirst ? 1 : 0;
    if (sType.getRank() != 3 ||
        sType.getDimSize(directionsDim) != rec.directions ||
        !::tessera::dimsCompatible(sType.getDimSize(1 - directionsDim),
                                   xType.getDimSize(batchFirst ? 0 : 1)) ||
        sType.getDimSize(2) != rec.hidden)
      return im.emitError()
             << "initial states must be " << (batchFirst ? "[batch, " : "[")
             << rec.directions << (batchFirst ? ", " : ", batch, ")
             << rec.hidden << "]";
  }
  // Sequence lengths other than the whole sequence are not supported.
  if (Value lens = im.optionalInput(4)) {
    std::optional<SmallVector<int64_t>> known = im.constantInts(lens);
    if (!known || llvm::any_of(*known, [&](int64_t n) { return n != steps; }))
      return im.emitError() << "sequence_lens shorter than the sequence are "
                               "not supported";
  }
  return success();
}

/// X as [T, B, I] (layout 1 gives [B, T, I]); an initial state as
/// [D, B, H] (layout 1 gives [B, D, H]): the same swap of dims 0 and 1.
Value timeMajor(GraphImporter &im, Value x) {
  if (!x || im.intAttr("layout", 0) == 0)
    return x;
  return im.inferred<ts::TransposeOp>(x, ArrayRef<int64_t>{1, 0, 2});
}

/// Initial state input `index` (5: h, 6: c) as [D, B, H], or null when
/// absent.
Value initialState(GraphImporter &im, int index) {
  return timeMajor(im, im.optionalInput(index));
}

/// Stacks `perStep` ([B, H] each, in time order) into [T, 1, B, H], and the
/// directions' stacks into Y [T, D, B, H] ([B, T, D, H] with layout 1);
/// the last states into [D, B, H] ([B, D, H]).
LogicalResult setOutputs(GraphImporter &im, Recurrence &rec,
                         ArrayRef<SmallVector<Value>> perStep,
                         ArrayRef<SmallVector<Value>> last) {
  const onnx::NodeProto &node = im.node();
  bool batchFirst = im.intAttr("layout", 0) != 0;
  if (node.output_size() > 0 && !node.output(0).empty()) {
    SmallVector<Value> directions;
    for (const SmallVector<Value> &steps : perStep) {
      SmallVector<Value> stacked;
      for (Value h : steps)
        stacked.push_back(rec.addFront(rec.addFront(h)));
      directions.push_back(im.inferred<ts::ConcatOp>(stacked, int64_t(0)));
      if (!directions.back())
        return failure();
    }
    Value y = directions.size() == 1
                  ? directions.front()
                  : im.inferred<ts::ConcatOp>(directions, int64_t(1));
    if (y && batchFirst)
      y = im.inferred<ts::TransposeOp>(y, ArrayRef<int64_t>{2, 0, 1, 3});
    if (failed(im.setOutput(0, y)))
      return failure();
  }
  for (size_t k = 0; k < last.size(); ++k) {
    int index = static_cast<int>(k) + 1;
    if (node.output_size() <= index || node.output(index).empty())
      continue;
    SmallVector<Value> states;
    for (Value s : last[k])
      states.push_back(rec.addFront(s));
    Value state = states.size() == 1
                      ? states.front()
                      : im.inferred<ts::ConcatOp>(states, int64_t(0));
    if (state && batchFirst)
      state = im.inferred<ts::TransposeOp>(state, ArrayRef<int64_t>{1, 0, 2});
    if (failed(im.setOutput(index, state)))
      return failure();
  }
  return success();
}

/// Per direction d: W[d] and R[d] ([gates * H, ...]), the bias halves
/// Wb[d] and Rb[d] ([gates * H], null when B is absent) and the initial
/// state `initial`[d] ([B, H], null when absent).
struct Direction {
  Value w, r, wb, rb;
  SmallVector<Value> initial;
};

FailureOr<Direction> direction(GraphImporter &im, Recurrence &rec, Value w,
                               Value r, Value bias,
                               ArrayRef<Value> initialStates, int64_t d) {
  Direction dir;
  dir.w = rec.dropFront(rec.slice(w, 0, d, d + 1));
  dir.r = rec.dropFront(rec.slice(r, 0, d, d + 1));
  if (bias) {
    Value both = rec.dropFront(rec.slice(bias, 0, d, d + 1));
    dir.wb = rec.slice(both, 0, 0, rec.gates * rec.hidden);
    dir.rb = rec.slice(both, 0, rec.gates * rec.hidden,
                       2 * rec.gates * rec.hidden);
  }
  for (Value initial : initialStates)
    dir.initial.push_back(
        initial ? rec.dropFront(rec.slice(initial, 0, d, d + 1)) : Value());
  if (!dir.w || !dir.r || (bias && (!dir.wb || !dir.rb)))
    return failure();
  return dir;
}

/// The input's projection for every step, X W^T + Wb ([T, B, gates * H]),
/// plus `extra` (Rb, folded in where the equations allow).
Value projectInput(GraphImporter &im, Recurrence &rec, Value x, Value w,
                   Value extra) {
  RankedTensorType xType = tensorType(x);
  Value xw = im.create<ts::MatmulOp>(
      RankedTensorType::get({xType.getDimSize(0), xType.getDimSize(1),
                             rec.gates * rec.hidden},
                            rec.element),
      x, w, false, true, APFloat(1.0f));
  return extra ? rec.add(xw, extra) : xw;
}

/// The node's X (time-major), W, R and B, once `rec` (its gates set) is
/// checked for `op`; failure with the diagnostic.
struct Operands {
  Value x, w, r, bias;
};
FailureOr<Operands> begin(GraphImporter &im, Recurrence &rec, StringRef op,
                          ArrayRef<StringRef> defaults) {
  Value x = im.input(0), w = im.input(1), r = im.input(2);
  if (!x || !w || !r)
    return failure();
  rec.element = elementType(x);
  if (failed(checkRecurrence(im, rec, x, w, r, op, defaults)))
    return failure();
  x = timeMajor(im, x);
  if (!x)
    return failure();
  return Operands{x, w, r, im.optionalInput(3)};
}

/// Fills `outputs` with the hidden states of direction `d` in time order,
/// each from `step`,
/// which gets the input's projection at that step ([B, gates * H]),
/// updates the state it carries and returns the new hidden state (null on
/// failure). The reverse direction runs from the last step to the first.
LogicalResult unroll(Recurrence &rec, int64_t d, Value inputs,
                     SmallVector<Value> &outputs,
                     function_ref<Value(Value)> step) {
  bool backwards = rec.reverseOnly || d == 1;
  outputs.assign(rec.steps, Value());
  for (int64_t s = 0; s < rec.steps; ++s) {
    int64_t t = backwards ? rec.steps - 1 - s : s;
    Value all = rec.dropFront(rec.slice(inputs, 0, t, t + 1));
    Value h = all ? step(all) : Value();
    if (!h)
      return failure();
    outputs[t] = h;
  }
  return success();
}

LogicalResult convertLSTM(GraphImporter &im, const onnx::NodeProto &) {
  Recurrence rec{im, Type()};
  rec.gates = 4;
  FailureOr<Operands> in = begin(im, rec, "LSTM", {"Sigmoid", "Tanh", "Tanh"});
  if (failed(in))
    return failure();
  if (im.intAttr("input_forget", 0) != 0)
    return im.emitError() << "input_forget is not supported";
  auto [x, w, r, bias] = *in;
  Value h0 = initialState(im, 5), c0 = initialState(im, 6);
  Value peepholes = im.optionalInput(7);
  if (peepholes && (tensorType(peepholes).getRank() != 2 ||
                    tensorType(peepholes).getDimSize(0) != rec.directions ||
                    tensorType(peepholes).getDimSize(1) != 3 * rec.hidden))
    return im.emitError() << "P must be [" << rec.directions << ", "
                          << 3 * rec.hidden << "]";
  SmallVector<SmallVector<Value>> perStep(rec.directions);
  SmallVector<SmallVector<Value>> last(2);
  for (int64_t d = 0; d < rec.directions; ++d) {
    FailureOr<Direction> dir =
        direction(im, rec, w, r, bias, {h0, c0}, d);
    if (failed(dir))
      return failure();
    Value pi, po, pf;
    if (peepholes) {
      Value p = rec.dropFront(rec.slice(peepholes, 0, d, d + 1));
      pi = rec.slice(p, 0, 0, rec.hidden);
      po = rec.slice(p, 0, rec.hidden, 2 * rec.hidden);
      pf = rec.slice(p, 0, 2 * rec.hidden, 3 * rec.hidden);
    }
    Value inputs = projectInput(im, rec, x, dir->w,
                                dir->wb ? rec.add(dir->wb, dir->rb) : Value());
    Value h = dir->initial[0], c = dir->initial[1];
    if (failed(unroll(rec, d, inputs, perStep[d], [&](Value all) -> Value {
          if (h)
            all = rec.add(all, rec.project(h, dir->r));
          if (!all)
            return {};
          // ONNX's gate order: input, output, forget, cell.
          Value i = rec.gate(all, 0), o = rec.gate(all, 1),
                f = rec.gate(all, 2), g = rec.gate(all, 3);
          if (c && pi) {
            i = rec.add(i, rec.mul(pi, c));
            f = rec.add(f, rec.mul(pf, c));
          }
          Value next = rec.mul(rec.sigmoid(i), rec.tanh(g));
          if (c)
            next = rec.add(rec.mul(rec.sigmoid(f), c), next);
          if (pi)
            o = rec.add(o, rec.mul(po, next));
          c = next;
          h = rec.mul(rec.sigmoid(o), rec.tanh(c));
          return h;
        })))
      return failure();
    last[0].push_back(h);
    last[1].push_back(c);
  }
  return setOutputs(im, rec, perStep, last);
}

LogicalResult convertGRU(GraphImporter &im, const onnx::NodeProto &) {
  Recurrence rec{im, Type()};
  rec.gates = 3;
  FailureOr<Operands> in = begin(im, rec, "GRU", {"Sigmoid", "Tanh"});
  if (failed(in))
    return failure();
  auto [x, w, r, bias] = *in;
  bool linearBeforeReset = im.intAttr("linear_before_reset", 0) != 0;
  Value h0 = initialState(im, 5);
  SmallVector<SmallVector<Value>> perStep(rec.directions);
  SmallVector<SmallVector<Value>> last(1);
  Value one = im.constantScalar(1.0, rec.element);
  for (int64_t d = 0; d < rec.directions; ++d) {
    FailureOr<Direction> dir = direction(im, rec, w, r, bias, {h0}, d);
    if (failed(dir))
      return failure();
    // Rb joins the update and reset gates' input projection; the hidden
    // gate's is applied with (or before) the reset.
    Value zrBias, rbh;
    if (dir->rb) {
      rbh = rec.gate(dir->rb, 2);
      Value zeros =
          im.create<ts::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
              RankedTensorType::get({rec.hidden}, rec.element),
              floatZero(rec.element))));
      zrBias = im.inferred<ts::ConcatOp>(
          ValueRange{rec.slice(dir->rb, 0, 0, 2 * rec.hidden), zeros},
          int64_t(0));
    }
    Value inputs = projectInput(
        im, rec, x, dir->w, dir->wb ? rec.add(dir->wb, zrBias) : Value());
    Value rh = rec.slice(dir->r, 0, 2 * rec.hidden, 3 * rec.hidden);
    Value h = dir->initial[0];
    if (failed(unroll(rec, d, inputs, perStep[d], [&](Value all) -> Value {
          // ONNX's gate order: update, reset, hidden.
          Value z = rec.gate(all, 0), reset = rec.gate(all, 1),
                candidate = rec.gate(all, 2);
          Value recurrent;
          if (h) {
            recurrent = rec.project(h, dir->r);
            z = rec.add(z, rec.gate(recurrent, 0));
            reset = rec.add(reset, rec.gate(recurrent, 1));
          }
          z = rec.sigmoid(z);
          reset = rec.sigmoid(reset);
          // linear_before_reset: r * (h Rh^T + Rbh); else (r * h) Rh^T +
          // Rbh.
          Value fromState;
          if (linearBeforeReset) {
            Value hr = h ? rec.gate(recurrent, 2) : Value();
            if (rbh)
              hr = hr ? rec.add(hr, rbh) : rbh;
            fromState = hr ? rec.mul(reset, hr) : Value();
          } else {
            if (h) {
              Value gated = rec.mul(reset, h);
              fromState =
                  gated ? im.create<ts::MatmulOp>(tensorType(gated), gated, rh,
                                                  false, true, APFloat(1.0f))
                        : Value();
            }
            if (rbh)
              fromState = fromState ? rec.add(fromState, rbh) : rbh;
          }
          if (fromState)
            candidate = rec.add(candidate, fromState);
          candidate = rec.tanh(candidate);
          // (1 - z) * candidate + z * h.
          Value next = rec.mul(im.inferred<ts::SubOp>(one, z), candidate);
          if (h)
            next = rec.add(next, rec.mul(z, h));
          h = next;
          return h;
        })))
      return failure();
    last[0].push_back(h);
  }
  return setOutputs(im, rec, perStep, last);
}

LogicalResult convertRNN(GraphImporter &im, const onnx::NodeProto &) {
  Recurrence rec{im, Type()};
  rec.gates = 1;
  FailureOr<Operands> in = begin(im, rec, "RNN", {"Tanh"});
  if (failed(in))
    return failure();
  auto [x, w, r, bias] = *in;
  Value h0 = initialState(im, 5);
  SmallVector<SmallVector<Value>> perStep(rec.directions);
  SmallVector<SmallVector<Value>> last(1);
  for (int64_t d = 0; d < rec.directions; ++d) {
    FailureOr<Direction> dir = direction(im, rec, w, r, bias, {h0}, d);
    if (failed(dir))
      return failure();
    Value inputs = projectInput(im, rec, x, dir->w,
                                dir->wb ? rec.add(dir->wb, dir->rb) : Value());
    Value h = dir->initial[0];
    if (failed(unroll(rec, d, inputs, perStep[d], [&](Value all) -> Value {
          if (h)
            all = rec.add(all, rec.project(h, dir->r));
          h = rec.tanh(all);
          return h;
        })))
      return failure();
    last[0].push_back(h);
  }
  return setOutputs(im, rec, perStep, last);
}

} // namespace

void registerRecurrentConverters(ConverterRegistry &r) {
  r["RNN"] = convertRNN;
  r["LSTM"] = convertLSTM;
  r["GRU"] = convertGRU;
}

} // namespace tessera::onnx_import
