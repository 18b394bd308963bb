//===- Signature.cpp - a model's inputs and outputs as JSON ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Runtime/Invoke.h"

#include "llvm/Support/JSON.h"

using namespace tessera::runtime;
namespace json = llvm::json;

static json::Array tensorsToJSON(const std::vector<TensorSignature> &tensors) {
  json::Array array;
  for (const TensorSignature &t : tensors) {
    json::Array shape, params;
    for (int64_t d : t.shape)
      shape.push_back(d == kDynamic ? json::Value(nullptr) : json::Value(d));
    for (const std::string &p : t.dimParams)
      params.push_back(p);
    array.push_back(json::Object{{"name", t.name},
                                 {"type", elementTypeName(t.type)},
                                 {"shape", std::move(shape)},
                                 {"dim_params", std::move(params)}});
  }
  return array;
}

std::string tessera::runtime::signatureToJSON(const ModelSignature &sig) {
  json::Object root{{"entry", sig.entry},
                    {"inputs", tensorsToJSON(sig.inputs)},
                    {"outputs", tensorsToJSON(sig.outputs)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(root));
  return text;
}

static llvm::Error invalid(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "invalid model signature: " + what);
}

static llvm::Expected<std::vector<TensorSignature>>
tensorsFromJSON(const json::Array *array) {
  if (!array)
    return invalid("missing inputs or outputs");
  std::vector<TensorSignature> tensors;
  for (const json::Value &value : *array) {
    const json::Object *object = value.getAsObject();
    if (!object)
      return invalid("a tensor is not an object");
    TensorSignature t;
    if (auto name = object->getString("name"))
      t.name = name->str();
    auto type = object->getString("type");
    std::optional<ElementType> elementType =
        type ? tessera::parseElementType(*type) : std::nullopt;
    if (!elementType)
      return invalid("unknown element type");
    t.type = *elementType;
    const json::Array *shape = object->getArray("shape");
    const json::Array *params = object->getArray("dim_params");
    if (!shape || !params || shape->size() != params->size())
      return invalid("shape and dim_params must be arrays of one length");
    for (const json::Value &d : *shape) {
      if (d.getAsNull()) {
        t.shape.push_back(kDynamic);
      } else if (auto n = d.getAsInteger(); n && *n >= 0) {
        t.shape.push_back(*n);
      } else {
        return invalid("a dimension is neither null nor a size");
      }
    }
    for (const json::Value &p : *params)
      t.dimParams.push_back(p.getAsString().value_or("").str());
    tensors.push_back(std::move(t));
  }
  return tensors;
}

llvm::Expected<ModelSignature>
tessera::runtime::signatureFromJSON(llvm::StringRef text) {
  auto parsed = json::parse(text);
  if (!parsed)
    return invalid(llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return invalid("not an object");
  ModelSignature sig;
  if (auto entry = root->getString("entry"))
    sig.entry = entry->str();
  auto inputs = tensorsFromJSON(root->getArray("inputs"));
  if (!inputs)
    return inputs.takeError();
  auto outputs = tensorsFromJSON(root->getArray("outputs"));
  if (!outputs)
    return outputs.takeError();
  sig.inputs = std::move(*inputs);
  sig.outputs = std::move(*outputs);
  return sig;
}
