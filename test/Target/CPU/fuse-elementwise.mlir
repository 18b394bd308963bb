// RUN: tessera-opt %s --split-input-file --tessera-cpu-fuse-elementwise | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// Two elementwise generics become one.
// CHECK-LABEL: func @chain
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // CHECK: linalg.generic
  // CHECK: math.exp
  // CHECK: arith.addf
  // CHECK-NOT: linalg.generic
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// An activation feeding a matmul stays its own loop nest: fused, it would
// run once per multiply-add.
// CHECK-LABEL: func @not_into_contraction
func.func @not_into_contraction(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
  // CHECK: math.erf
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
  // CHECK-NOT: math.erf
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.erf %v : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%acc : tensor<4x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A fused body holds at most 64 ops (fusing a long chain into one body
// would cost time quadratic in its length): of three generics of 31 ops
// each, two fuse (62 ops), the third stays apart (93 would be too many).
// CHECK-LABEL: func @capped
// CHECK: %[[F:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[F]] : tensor<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @capped(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p0 = math.exp %a : f32
    %p1 = math.exp %p0 : f32
    %p2 = math.exp %p1 : f32
    %p3 = math.exp %p2 : f32
    %p4 = math.exp %p3 : f32
    %p5 = math.exp %p4 : f32
    %p6 = math.exp %p5 : f32
    %p7 = math.exp %p6 : f32
    %p8 = math.exp %p7 : f32
    %p9 = math.exp %p8 : f32
    %p10 = math.exp %p9 : f32
    %p11 = math.exp %p10 : f32
    %p12 = math.exp %p11 : f32
    %p13 = math.exp %p12 : f32
    %p14 = math.exp %p13 : f32
    %p15 = math.exp %p14 : f32
    %p16 = math.exp %p15 : f32
    %p17 = math.exp %p16 : f32
    %p18 = math.exp %p17 : f32
    %p19 = math.exp %p18 : f32
    %p20 = math.exp %p19 : f32
    %p21 = math.exp %p20 : f32
    %p22 = math.exp %p21 : f32
    %p23 = math.exp %p22 : f32
    %p24 = math.exp %p23 : f32
    %p25 = math.exp %p24 : f32
    %p26 = math.exp %p25 : f32
    %p27 = math.exp %p26 : f32
    %p28 = math.exp %p27 : f32
    %p29 = math.exp %p28 : f32
    linalg.yield %p29 : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q0 = math.exp %a : f32
    %q1 = math.exp %q0 : f32
    %q2 = math.exp %q1 : f32
    %q3 = math.exp %q2 : f32
    %q4 = math.exp %q3 : f32
    %q5 = math.exp %q4 : f32
    %q6 = math.exp %q5 : f32
    %q7 = math.exp %q6 : f32
    %q8 = math.exp %q7 : f32
    %q9 = math.exp %q8 : f32
    %q10 = math.exp %q9 : f32
    %q11 = math.exp %q10 : f32
    %q12 = math.exp %q11 : f32
    %q13 = math.exp %q12 : f32
    %q14 = math.exp %q13 : f32
    %q15 = math.exp %q14 : f32
    %q16 = math.exp %q15 : f32
    %q17 = math.exp %q16 : f32
    %q18 = math.exp %q17 : f32
    %q19 = math.exp %q18 : f32
    %q20 = math.exp %q19 : f32
    %q21 = math.exp %q20 : f32
    %q22 = math.exp %q21 : f32
    %q23 = math.exp %q22 : f32
    %q24 = math.exp %q23 : f32
    %q25 = math.exp %q24 : f32
    %q26 = math.exp %q25 : f32
    %q27 = math.exp %q26 : f32
    %q28 = math.exp %q27 : f32
    %q29 = math.exp %q28 : f32
    linalg.yield %q29 : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%1 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r0 = math.exp %a : f32
    %r1 = math.exp %r0 : f32
    %r2 = math.exp %r1 : f32
    %r3 = math.exp %r2 : f32
    %r4 = math.exp %r3 : f32
    %r5 = math.exp %r4 : f32
    %r6 = math.exp %r5 : f32
    %r7 = math.exp %r6 : f32
    %r8 = math.exp %r7 : f32
    %r9 = math.exp %r8 : f32
    %r10 = math.exp %r9 : f32
    %r11 = math.exp %r10 : f32
    %r12 = math.exp %r11 : f32
    %r13 = math.exp %r12 : f32
    %r14 = math.exp %r13 : f32
    %r15 = math.exp %r14 : f32
    %r16 = math.exp %r15 : f32
    %r17 = math.exp %r16 : f32
    %r18 = math.exp %r17 : f32
    %r19 = math.exp %r18 : f32
    %r20 = math.exp %r19 : f32
    %r21 = math.exp %r20 : f32
    %r22 = math.exp %r21 : f32
    %r23 = math.exp %r22 : f32
    %r24 = math.exp %r23 : f32
    %r25 = math.exp %r24 : f32
    %r26 = math.exp %r25 : f32
    %r27 = math.exp %r26 : f32
    %r28 = math.exp %r27 : f32
    %r29 = math.exp %r28 : f32
    linalg.yield %r29 : f32
  } -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

#up = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A nearest upsampling (read through x floordiv 2) stays a copy of its own
// (the vectorizer takes it), before the add and after the exp: fused, the
// reads through the division would leave the add's loop nest scalar.
// CHECK-LABEL: func @not_upsampling
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: %[[UP:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[UP]], %arg1 : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: arith.addf
func.func @not_upsampling(%x: tensor<4x8xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e8 = tensor.empty() : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e8 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#up, #id2], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x16xf32>
  %2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%1, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}
