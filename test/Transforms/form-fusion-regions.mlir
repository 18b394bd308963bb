// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-form-fusion-regions="report=%t.json summary=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// RUN: tessera-opt %s --tessera-form-fusion-regions="dot=%t.dot" -o /dev/null
// RUN: FileCheck %s --input-file=%t.dot --check-prefix=DOT
// RUN: not tessera-opt %s --tessera-form-fusion-regions="target=nowhere" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tessera-opt %s --tessera-form-fusion-regions="report=%t.missing/dir/r.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNWRITABLE

// TARGET: error: no fusion target named 'nowhere'
// UNWRITABLE: error: cannot write the fusion report

// A matmul with its bias and GELU: one epilogue region yielding the GELU.
// CHECK-LABEL: func @epilogue
// CHECK: %[[F:.*]] = tessera.fusion epilogue {
// CHECK-NEXT: tessera.matmul
// CHECK-NEXT: tessera.add
// CHECK-NEXT: %[[G:.*]] = tessera.gelu
// CHECK-NEXT: tessera.yield %[[G]] : tensor<16x64xf32>
// CHECK-NEXT: } : tensor<16x64xf32>
// CHECK-NEXT: return %[[F]]
// SUMMARY: fusion (cpu) in @epilogue: 3 kernels before, 1 after, 1 regions
// SUMMARY-NEXT: region 1: epilogue [tessera.matmul, tessera.add, tessera.gelu]; saves 16384 bytes
// DOT: digraph tessera {
// DOT: subgraph "cluster_epilogue" {
// DOT: f0_n0 [style=filled, fillcolor="#dbeafe", label="fusion epilogue\ntessera.matmul\ntessera.add\ntessera.gelu"];
// DOT: f0_arg0 -> f0_n0;
// DOT: f0_arg1 -> f0_n0;
// DOT: f0_arg2 -> f0_n0;
// DOT: subgraph "cluster_epilogue_limits" {
func.func @epilogue(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %0 = tessera.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %1 = tessera.add %0, %b : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %2 = tessera.gelu %1 : tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}

// -----

// The epilogue stops where a value has two users (the square reads the
// bias sum that is also returned), and a column-broadcast operand is not
// read in an epilogue (that matmul stays alone); both are reported, and
// the elementwise ops left over form a region of their own.
// CHECK-LABEL: func @epilogue_limits
// CHECK: tessera.fusion epilogue {
// CHECK-NEXT: tessera.matmul
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.yield
// CHECK: %[[M:.*]] = tessera.matmul
// CHECK: tessera.fusion elementwise {
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.mul %[[M]], %arg3 : tensor<16x64xf32>, tensor<16x1xf32>
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.yield
// SUMMARY: fusion (cpu) in @epilogue_limits: 6 kernels before, 3 after, 2 regions
// SUMMARY-DAG: not fused (epilogue): tessera.mul: producer has 2 users
// SUMMARY-DAG: not fused (epilogue): tessera.mul: broadcast not supported in epilogue
func.func @epilogue_limits(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>, %col: tensor<16x1xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %0 = tessera.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %1 = tessera.add %0, %b : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %2 = tessera.mul %1, %1 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  %3 = tessera.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %4 = tessera.mul %3, %col : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  %5 = tessera.add %4, %2 : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  return %5, %1 : tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// More elementwise ops than the accumulator registers leave room for: the
// ninth is not fused.
// CHECK-LABEL: func @register_budget
// CHECK: tessera.fusion epilogue
// CHECK-COUNT-8: tessera.relu
// CHECK: tessera.yield
// CHECK: tessera.relu
// SUMMARY: fusion (cpu) in @register_budget
// SUMMARY: not fused (epilogue): tessera.relu: exceeds register budget
func.func @register_budget(%x: tensor<8x32xf32>, %w: tensor<32x32xf32>) -> tensor<8x32xf32> {
  %0 = tessera.matmul %x, %w : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
  %1 = tessera.relu %0 : tensor<8x32xf32>
  %2 = tessera.relu %1 : tensor<8x32xf32>
  %3 = tessera.relu %2 : tensor<8x32xf32>
  %4 = tessera.relu %3 : tensor<8x32xf32>
  %5 = tessera.relu %4 : tensor<8x32xf32>
  %6 = tessera.relu %5 : tensor<8x32xf32>
  %7 = tessera.relu %6 : tensor<8x32xf32>
  %8 = tessera.relu %7 : tensor<8x32xf32>
  %9 = tessera.relu %8 : tensor<8x32xf32>
  return %9 : tensor<8x32xf32>
}

// -----

// A reduction with its elementwise prologue and epilogue; attention is a
// region of its own.
// CHECK-LABEL: func @reduction_and_attention
// CHECK: tessera.fusion reduction {
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.softmax
// CHECK-NEXT: tessera.exp
// CHECK-NEXT: tessera.yield
// CHECK: tessera.fusion attention {
// CHECK-NEXT: tessera.attention
// CHECK-NEXT: tessera.yield
// SUMMARY: fusion (cpu) in @reduction_and_attention: 4 kernels before, 2 after, 2 regions
// SUMMARY-DAG: attention [tessera.attention]; saves 8192 bytes
// SUMMARY-DAG: reduction [tessera.mul, tessera.softmax, tessera.exp]; saves 4096 bytes
func.func @reduction_and_attention(%x: tensor<4x64xf32>, %s: tensor<f32>, %q: tensor<2x16x8xf32>) -> (tensor<4x64xf32>, tensor<2x16x8xf32>) {
  %0 = tessera.mul %x, %s : tensor<4x64xf32>, tensor<f32> -> tensor<4x64xf32>
  %1 = tessera.softmax %0 : tensor<4x64xf32>
  %2 = tessera.exp %1 : tensor<4x64xf32>
  %3 = tessera.attention %q, %q, %q {causal} : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %2, %3 : tensor<4x64xf32>, tensor<2x16x8xf32>
}

// -----

// Elementwise chains join where a producer has only one user (an op may
// read it twice); a value with two users ends a chain, and a single op
// forms no region.
// CHECK-LABEL: func @elementwise
// CHECK: %[[A:.*]] = tessera.fusion elementwise {
// CHECK-NEXT: tessera.exp
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.neg
// CHECK-NEXT: tessera.yield
// CHECK: tessera.fusion elementwise {
// CHECK-NEXT: tessera.add %[[A]], %arg1
// CHECK-NEXT: tessera.mul %[[A]], %arg1
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.yield
// CHECK: tessera.abs %arg1
// CHECK-NOT: tessera.fusion
// SUMMARY: fusion (cpu) in @elementwise: 7 kernels before, 3 after, 2 regions
// SUMMARY-NEXT: region 1: elementwise [tessera.exp, tessera.mul, tessera.neg]; saves 512 bytes
// SUMMARY-NEXT: region 2: elementwise [tessera.add, tessera.mul, tessera.add]; saves 512 bytes
// SUMMARY-NEXT: not fused (elementwise): tessera.add: producer has 2 users
func.func @elementwise(%x: tensor<32xf32>, %y: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %0 = tessera.exp %x : tensor<32xf32>
  %sq = tessera.mul %0, %0 : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %1 = tessera.neg %sq : tensor<32xf32>
  %2 = tessera.add %1, %y : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %3 = tessera.mul %1, %y : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %4 = tessera.add %2, %3 : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %5 = tessera.abs %y : tensor<32xf32>
  return %4, %5 : tensor<32xf32>, tensor<32xf32>
}

// -----

// A cheap producer (one op whose inputs are in memory) read by two chains
// is computed again in each chain's region instead of ending them; one read
// by five consumers is not (past the target's limit of four).
// CHECK-LABEL: func @recompute
// CHECK: tessera.fusion elementwise {
// CHECK-NEXT: tessera.exp %arg0
// CHECK-NEXT: tessera.add
// CHECK-NEXT: tessera.sqrt
// CHECK: tessera.fusion elementwise {
// CHECK-NEXT: tessera.exp %arg0
// CHECK-NEXT: tessera.mul
// CHECK-NEXT: tessera.neg
// CHECK: %[[N:.*]] = tessera.neg %arg1
// CHECK-COUNT-5: tessera.abs %[[N]]
// SUMMARY: fusion (cpu) in @recompute: 11 kernels before, 8 after, 2 regions
// SUMMARY: recomputed (1 extra copy): tessera.exp
// SUMMARY-NEXT: not fused (elementwise): tessera.abs: producer has 5 users
// SUMMARY-NOT: not fused
// The report of the last function (the split input runs one at a time).
// JSON: "bytes_saved": 1024,
// JSON: "kernels_after": 8,
// JSON: "kernels_before": 11,
// JSON: "recomputed": [
// JSON-NEXT: {
// JSON-NEXT: "copies": 1,
// JSON-NEXT: "function": "recompute",
// JSON-NEXT: "node": "",
// JSON-NEXT: "op": "tessera.exp"
// JSON: "regions": [
// JSON: "kind": "elementwise",
// JSON: "rejected": [
// JSON: "op": "tessera.abs",
// JSON-NEXT: "reason": "producer has 5 users"
// JSON: "target": "cpu"
func.func @recompute(%x: tensor<32xf32>, %y: tensor<32xf32>, %z: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %0 = tessera.exp %x : tensor<32xf32>
  %1 = tessera.add %0, %y : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %2 = tessera.sqrt %1 : tensor<32xf32>
  %3 = tessera.mul %0, %z : tensor<32xf32>, tensor<32xf32> -> tensor<32xf32>
  %4 = tessera.neg %3 : tensor<32xf32>
  %n = tessera.neg %y : tensor<32xf32>
  %a1 = tessera.abs %n : tensor<32xf32>
  %a2 = tessera.abs %n : tensor<32xf32>
  %a3 = tessera.abs %n : tensor<32xf32>
  %a4 = tessera.abs %n : tensor<32xf32>
  %a5 = tessera.abs %n : tensor<32xf32>
  return %2, %4, %a1, %a2, %a3, %a4, %a5 : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
}
