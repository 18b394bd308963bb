// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions="bf16-dot-product int8-dot-product" | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions | FileCheck %s --check-prefix=OFF
// OFF-NOT: x86vector.avx512.dot
// OFF-NOT: vpdpbusd

// bf16 operands into an f32 accumulator: the rhs panel (48 columns) is
// transposed into pairs of rows at run time, [32, 96]; each 8-row tile is
// a loop over the 32 pairs of k carrying 8 x 3 f32 vectors, one
// vdpbf16ps per row and 16 columns; the lhs is read in place (no packing)
// as one 32-bit lane per row, broadcast.
// CHECK-LABEL: func @pairs_at_run_time
// CHECK-NOT: linalg.transpose ins(%{{.*}} : tensor<2x8x64xbf16>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<32x2x48xbf16>) outs(%{{.*}} : tensor<32x48x2xbf16>) permutation = [0, 2, 1]
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<32x48x2xbf16> into tensor<32x96xbf16>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c1{{.*}} iter_args(
// CHECK: vector.transfer_read %{{.*}} : tensor<32x96xbf16>, vector<32xbf16>
// CHECK: vector.transfer_read %{{.*}} : tensor<8x64xbf16>, vector<2xbf16>
// CHECK-NEXT: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-NEXT: vector.broadcast %{{.*}} : vector<1xi32> to vector<16xi32>
// CHECK-NEXT: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK-NEXT: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-23: x86vector.avx512.dot
// CHECK: scf.yield
// CHECK-NOT: arith.extf
// CHECK: return
#na = affine_map<(d0, d1, d2) -> (d0, d1)>
#nb = affine_map<(d0, d1, d2) -> (d1, d2)>
#nc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @pairs_at_run_time(%x: tensor<16x64xbf16>, %w: tensor<64x96xbf16>, %acc: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %0 = linalg.generic {indexing_maps = [#na, #nb, #nc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xbf16>, tensor<64x96xbf16>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0 : tensor<16x96xf32>
}

// -----

// A constant rhs is packed in pairs at compile time: its one panel of 2
// pairs of rows of 16 columns is [1, 2, 32]; the loop slices it.
// CHECK-LABEL: func @pairs_at_compile_time
// CHECK: %[[FLAT:.*]] = arith.constant dense_resource<tessera_packed_rhs> : tensor<64xbf16>
// CHECK: %[[PANELS:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2]] output_shape [1, 2, 32]
// CHECK-NOT: linalg.transpose
// CHECK: tensor.extract_slice %[[PANELS]][%{{.*}}, 0, 0] [1, 2, 32] [1, 1, 1] : tensor<1x2x32xbf16> to tensor<2x32xbf16>
// CHECK: x86vector.avx512.dot
#ca = affine_map<(d0, d1, d2) -> (d0, d1)>
#cb = affine_map<(d0, d1, d2) -> (d1, d2)>
#cc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @pairs_at_compile_time(%x: tensor<8x4xbf16>, %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]> : tensor<4x16xbf16>
  %0 = linalg.generic {indexing_maps = [#ca, #cb, #cc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<8x4xbf16>, tensor<4x16xbf16>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Dynamic rows: the full 8-row tiles take the pairs; the partial tile
// after them reads the rhs as it is, a row at a time, each row a register
// tile of fp32 products of the widened operands.
// CHECK-LABEL: func @dynamic_rows
// CHECK: x86vector.avx512.dot
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 {{.*}} -> (tensor<1x32xf32>)
// CHECK: arith.extf %{{.*}} : vector<1x1x16xbf16> to vector<1x1x16xf32>
// CHECK: vector.contract
// CHECK-NOT: linalg.generic
// CHECK: return
#da = affine_map<(d0, d1, d2) -> (d0, d1)>
#db = affine_map<(d0, d1, d2) -> (d1, d2)>
#dc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @dynamic_rows(%x: tensor<?x64xbf16>, %w: tensor<64x32xbf16>, %acc: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %0 = linalg.generic {indexing_maps = [#da, #db, #dc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<?x64xbf16>, tensor<64x32xbf16>) outs(%acc : tensor<?x32xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// Must not fire: an odd k (63) has no whole pairs; the operands are
// extended next to each product as without the option.
// CHECK-LABEL: func @odd_k
// CHECK-NOT: x86vector.avx512.dot
// CHECK: arith.extf %{{.*}} : vector<1x1x16xbf16> to vector<1x1x16xf32>
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
#oa = affine_map<(d0, d1, d2) -> (d0, d1)>
#ob = affine_map<(d0, d1, d2) -> (d1, d2)>
#oc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @odd_k(%x: tensor<16x63xbf16>, %w: tensor<63x96xbf16>, %acc: tensor<16x96xf32>) -> tensor<16x96xf32> {
  %0 = linalg.generic {indexing_maps = [#oa, #ob, #oc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x63xbf16>, tensor<63x96xbf16>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0 : tensor<16x96xf32>
}

// -----

// Must not fire: f32 operands; fewer than 16 columns; a body that is not
// a product of the two operands (their difference).
// CHECK-LABEL: func @not_bf16_products
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
#fa = affine_map<(d0, d1, d2) -> (d0, d1)>
#fb = affine_map<(d0, d1, d2) -> (d1, d2)>
#fc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @not_bf16_products(%x: tensor<16x64xf32>, %w: tensor<64x96xf32>, %acc: tensor<16x96xf32>,
                             %xb: tensor<16x64xbf16>, %wn: tensor<64x8xbf16>, %accn: tensor<16x8xf32>,
                             %wb: tensor<64x96xbf16>) -> (tensor<16x96xf32>, tensor<16x8xf32>, tensor<16x96xf32>) {
  %0 = linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  %1 = linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xb, %wn : tensor<16x64xbf16>, tensor<64x8xbf16>) outs(%accn : tensor<16x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %2 = linalg.generic {indexing_maps = [#fa, #fb, #fc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xb, %wb : tensor<16x64xbf16>, tensor<64x96xbf16>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.subf %ae, %be : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0, %1, %2 : tensor<16x96xf32>, tensor<16x8xf32>, tensor<16x96xf32>
}

// -----

// i8 operands into an i32 accumulator on vpdpbusd: the rhs panel in
// groups of four rows, [16, 192]; 128 times each column's sum (the sum of
// vpdpbusd of 0x80 bytes by the panel, once per panel) is subtracted from
// the tile's sums, whose lhs bytes are read with their sign bit flipped.
// CHECK-LABEL: func @int8_groups
// CHECK: linalg.transpose ins(%{{.*}} : tensor<16x4x48xi8>) outs(%{{.*}} : tensor<16x48x4xi8>) permutation = [0, 2, 1]
// CHECK: tensor.collapse_shape %{{.*}} : tensor<16x48x4xi8> into tensor<16x192xi8>
// CHECK: %[[OFFSETS:.*]]:3 = scf.for
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.*}} : tensor<8x64xi8>, vector<4xi8>
// CHECK-NEXT: vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK-NEXT: arith.xori
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: vector.bitcast %{{.*}} : vector<16xi32> to vector<64xi8>
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: arith.subi %{{.*}}, %[[OFFSETS]]#0 : vector<16xi32>
// CHECK-NOT: arith.extsi
// CHECK: return
#ia = affine_map<(d0, d1, d2) -> (d0, d1)>
#ib = affine_map<(d0, d1, d2) -> (d1, d2)>
#ic = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @int8_groups(%x: tensor<16x64xi8>, %w: tensor<64x96xi8>, %acc: tensor<16x96xi32>) -> tensor<16x96xi32> {
  %0 = linalg.generic {indexing_maps = [#ia, #ib, #ic], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xi8>, tensor<64x96xi8>) outs(%acc : tensor<16x96xi32>) {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %p = arith.muli %ae, %be : i32
    %s = arith.addi %c, %p : i32
    linalg.yield %s : i32
  } -> tensor<16x96xi32>
  return %0 : tensor<16x96xi32>
}

// -----

// Must not fire: a k that 4 does not divide (66); an lhs zero-extended
// (unsigned bytes).
// CHECK-LABEL: func @int8_not_groups
// CHECK-NOT: vpdpbusd
// CHECK: arith.extsi
// CHECK-NOT: vpdpbusd
// CHECK: return
#ja = affine_map<(d0, d1, d2) -> (d0, d1)>
#jb = affine_map<(d0, d1, d2) -> (d1, d2)>
#jc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @int8_not_groups(%x: tensor<16x66xi8>, %w: tensor<66x96xi8>, %acc: tensor<16x96xi32>,
                           %xu: tensor<16x64xi8>, %wu: tensor<64x96xi8>) -> (tensor<16x96xi32>, tensor<16x96xi32>) {
  %0 = linalg.generic {indexing_maps = [#ja, #jb, #jc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x66xi8>, tensor<66x96xi8>) outs(%acc : tensor<16x96xi32>) {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %p = arith.muli %ae, %be : i32
    %s = arith.addi %c, %p : i32
    linalg.yield %s : i32
  } -> tensor<16x96xi32>
  %1 = linalg.generic {indexing_maps = [#ja, #jb, #jc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xu, %wu : tensor<16x64xi8>, tensor<64x96xi8>) outs(%acc : tensor<16x96xi32>) {
  ^bb0(%a: i8, %b: i8, %c: i32):
    %ae = arith.extui %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %p = arith.muli %ae, %be : i32
    %s = arith.addi %c, %p : i32
    linalg.yield %s : i32
  } -> tensor<16x96xi32>
  return %0, %1 : tensor<16x96xi32>, tensor<16x96xi32>
}
