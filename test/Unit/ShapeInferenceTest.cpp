//===- ShapeInferenceTest.cpp - unit tests of the shared shape rules ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tessera/Support/ShapeInference.h"

#include <gtest/gtest.h>

using namespace tessera;

namespace {

constexpr int64_t D = kDynamicDim;

Shape broadcastOk(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  auto result = broadcastShapes(a, b);
  EXPECT_TRUE(static_cast<bool>(result));
  if (!result) {
    llvm::consumeError(result.takeError());
    return {};
  }
  return *result;
}

std::string broadcastError(llvm::ArrayRef<int64_t> a,
                           llvm::ArrayRef<int64_t> b) {
  auto result = broadcastShapes(a, b);
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

TEST(Broadcast, EqualShapes) {
  EXPECT_EQ(broadcastOk({2, 3}, {2, 3}), (Shape{2, 3}));
}

TEST(Broadcast, TrailingAlignmentAndOnes) {
  EXPECT_EQ(broadcastOk({8, 1, 6, 1}, {7, 1, 5}), (Shape{8, 7, 6, 5}));
  EXPECT_EQ(broadcastOk({}, {4, 5}), (Shape{4, 5}));
  EXPECT_EQ(broadcastOk({3}, {}), (Shape{3}));
}

TEST(Broadcast, ZeroSizedDimension) {
  EXPECT_EQ(broadcastOk({0, 3}, {1, 3}), (Shape{0, 3}));
  EXPECT_NE(broadcastError({0}, {2}), "");
}

TEST(Broadcast, DynamicDims) {
  // Unknown against N > 1 must be N at run time; against 1 it stays unknown.
  EXPECT_EQ(broadcastOk({D, 4}, {3, 4}), (Shape{3, 4}));
  EXPECT_EQ(broadcastOk({D, 4}, {1, 4}), (Shape{D, 4}));
  EXPECT_EQ(broadcastOk({D}, {D}), (Shape{D}));
  EXPECT_EQ(broadcastOk({2, D}, {D, 1}), (Shape{2, D}));
}

TEST(Broadcast, IncompatibleNamesBothShapes) {
  EXPECT_EQ(broadcastError({2, 3}, {4}),
            "shapes [2, 3] and [4] do not broadcast (dimension 3 vs 4)");
}

TEST(Broadcast, Unidirectional) {
  EXPECT_TRUE(isBroadcastableTo({1, 768}, {128, 768}));
  EXPECT_TRUE(isBroadcastableTo({768}, {2, 128, 768}));
  EXPECT_TRUE(isBroadcastableTo({D}, {5}));
  EXPECT_FALSE(isBroadcastableTo({2, 768}, {128, 768}));
  EXPECT_FALSE(isBroadcastableTo({1, 1, 1}, {1, 1}));
}

TEST(Axis, Normalize) {
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(0, 3), 0);
  EXPECT_EQ(normalizeAxis(-3, 3), 0);
  EXPECT_EQ(normalizeAxis(3, 3), std::nullopt);
  EXPECT_EQ(normalizeAxis(-4, 3), std::nullopt);
  EXPECT_EQ(normalizeAxis(0, 0), std::nullopt);
}

Shape matmulOk(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
               bool ta = false, bool tb = false) {
  auto result = inferMatmulShape(a, b, ta, tb);
  EXPECT_TRUE(static_cast<bool>(result));
  if (!result) {
    llvm::consumeError(result.takeError());
    return {};
  }
  return *result;
}

TEST(Matmul, PlainAndBatched) {
  EXPECT_EQ(matmulOk({4, 8}, {8, 16}), (Shape{4, 16}));
  EXPECT_EQ(matmulOk({2, 1, 4, 8}, {3, 8, 16}), (Shape{2, 3, 4, 16}));
  EXPECT_EQ(matmulOk({D, 128, 64}, {64, 32}), (Shape{D, 128, 32}));
}

TEST(Matmul, Vectors) {
  EXPECT_EQ(matmulOk({8}, {8, 16}), (Shape{16}));
  EXPECT_EQ(matmulOk({4, 8}, {8}), (Shape{4}));
  EXPECT_EQ(matmulOk({8}, {8}), (Shape{}));
  EXPECT_EQ(matmulOk({5, 4, 8}, {8}), (Shape{5, 4}));
}

TEST(Matmul, Transposes) {
  EXPECT_EQ(matmulOk({8, 4}, {16, 8}, true, true), (Shape{4, 16}));
  EXPECT_EQ(matmulOk({2, 128, 64}, {2, 128, 64}, false, true),
            (Shape{2, 128, 128}));
}

TEST(Matmul, Errors) {
  auto mismatch = inferMatmulShape({4, 8}, {7, 16}, false, false);
  ASSERT_FALSE(static_cast<bool>(mismatch));
  EXPECT_EQ(llvm::toString(mismatch.takeError()),
            "contracting dimensions differ: lhs [4, 8] has 8, rhs [7, 16] has 7");
  auto scalar = inferMatmulShape({}, {4}, false, false);
  ASSERT_FALSE(static_cast<bool>(scalar));
  llvm::consumeError(scalar.takeError());
  auto transposedVector = inferMatmulShape({4}, {4, 2}, true, false);
  ASSERT_FALSE(static_cast<bool>(transposedVector));
  llvm::consumeError(transposedVector.takeError());
}

TEST(Slice, OnnxClamping) {
  EXPECT_EQ(sliceDimSize(10, 0, 5, 1), 5);
  EXPECT_EQ(sliceDimSize(10, -3, INT64_MAX, 1), 3);
  EXPECT_EQ(sliceDimSize(10, 0, 10, 3), 4);
  EXPECT_EQ(sliceDimSize(10, 20, 30, 1), 0);
  EXPECT_EQ(sliceDimSize(10, -100, 2, 1), 2);
  // Backwards: starts clamp to [0, dim - 1], ends to [-1, dim - 1].
  EXPECT_EQ(sliceDimSize(10, -1, INT64_MIN, -1), 10);
  EXPECT_EQ(sliceDimSize(10, 9, 0, -2), 5);
  EXPECT_EQ(sliceDimSize(10, 100, -100, -3), 4);
  EXPECT_EQ(sliceDimSize(10, 5, 1, INT64_MIN), 1);
  EXPECT_EQ(sliceDimSize(0, 0, 1, 1), 0);
  EXPECT_EQ(sliceDimSize(D, 0, 1, 1), D);
}

TEST(Conv, OutputSize) {
  EXPECT_EQ(convOutputSize(224, 16, 16, 0, 0, 1), 14);
  EXPECT_EQ(convOutputSize(7, 3, 1, 1, 1, 1), 7);
  EXPECT_EQ(convOutputSize(7, 3, 2, 0, 0, 2), 2);
  EXPECT_EQ(convOutputSize(2, 3, 1, 0, 0, 1), 0);
  EXPECT_EQ(convOutputSize(D, 3, 1, 0, 0, 1), D);
  // Values that would overflow mean the window cannot fit.
  EXPECT_EQ(convOutputSize(8, 3, 1, 0, 0, INT64_MAX), 0);
  EXPECT_EQ(convOutputSize(8, 3, 1, INT64_MAX, 1, 1), 0);
}

TEST(Shape, ElementCountAndFormat) {
  EXPECT_EQ(staticElementCount({2, 3, 4}), 24);
  EXPECT_EQ(staticElementCount({}), 1);
  EXPECT_EQ(staticElementCount({2, D}), std::nullopt);
  EXPECT_EQ(staticElementCount({INT64_MAX, 2}), std::nullopt);
  EXPECT_EQ(formatShape({2, D, 4}), "[2, ?, 4]");
  EXPECT_EQ(formatShape({}), "[]");
}

} // namespace
