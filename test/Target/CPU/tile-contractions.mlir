// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions | FileCheck %s
// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions=vector-bits=256 | FileCheck %s --check-prefix=AVX2
// RUN: not tessera-opt %s --split-input-file --tessera-cpu-tile-contractions=vector-bits=128 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: error: tessera-cpu-tile-contractions: vector-bits must be 512 (AVX-512) or 256 (AVX2), got 128
// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions=report-generic 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// Without report-generic, no remark.
// RUN: tessera-opt %s --split-input-file --tessera-cpu-tile-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

// With report-generic, each contraction left on a generic loop nest (and
// each convolution left direct) says why; the tiled ones say nothing.
// REPORT-NOT: remark
// REPORT: remark: contraction stays a generic loop nest (not the register-tiled kernel): its columns are dynamic
// REPORT-NOT: remark
// REPORT: remark: convolution stays a direct loop nest (not im2col and the register-tiled GEMM): dims other than its batch are dynamic
// REPORT-NOT: remark
// REPORT: remark: convolution stays a direct loop nest (not the register-tiled GEMM): conv_2d_ngchw_gfchw (grouped and dilated, or dynamic dims other than the batch)
// REPORT-NOT: remark
// REPORT: remark: contraction stays a generic loop nest (not the register-tiled kernel): one operand is a vector (a matrix times a vector that the GEMV kernel does not take: not f32, or the matrix not read along k)
// REPORT-NOT: remark
// REPORT: remark: contraction stays a generic loop nest (not the register-tiled kernel): one operand is a vector (a matrix times a vector that the GEMV kernel does not take: not f32, or the matrix not read along k)
// REPORT-NOT: remark

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// The lhs is packed into 8-row tiles ([M/8, K, 8]) before the loops;
// column panels of 48 run on threads (scf.forall), each reading its rhs
// slice where it is (two row tiles read it: too few for a contiguous copy
// to pay, see @tall); rows tile by 8 and k by 1 in inner loops, each tile
// reading its packed lhs tile, and the 8 x 48 tile's product becomes 24
// row-by-16-column vector contractions (row by row, so that one lhs
// broadcast is live at a time). The accumulator is not a fill: each tile
// reads it.
// CHECK-LABEL: func @matmul
func.func @matmul(%x: tensor<16x64xf32>, %w: tensor<64x96xf32>, %acc: tensor<16x96xf32>) -> tensor<16x96xf32> {
  // CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 64]
  // CHECK: %[[L:.*]] = linalg.transpose ins(%[[E]] : tensor<2x8x64xf32>) outs(%{{.*}} : tensor<2x64x8xf32>) permutation = [0, 2, 1]
  // CHECK: scf.forall (%{{.*}}) = (0) to (96) step (48)
  // CHECK-NOT: linalg.copy
  // CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %c8
  // CHECK: %[[T:.*]] = arith.divui %{{.*}}, %c8
  // CHECK: tensor.extract_slice %[[L]][%[[T]], %{{.*}}, 0] [1, 64, 8] [1, 1, 1] : tensor<2x64x8xf32> to tensor<64x8xf32>
  // CHECK-NOT: vector.transfer_write
  // CHECK: scf.for
  // CHECK-NOT: arith.extf
  // CHECK-COUNT-24: vector.contract {{.*}} : vector<1x1xf32>, vector<1x1x16xf32> into vector<1x16xf32>
  // CHECK-NOT: linalg.generic
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0 : tensor<16x96xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Taller than 256 rows (and a multiple of 256), with enough panels (8):
// blocks of 256 rows by 48 columns on threads, so that each block's lhs
// rows stay in the L2 cache while its panels stream past. Its 32 row tiles
// read each panel of the rhs from a contiguous copy. (With fewer panels
// the rows are blocked finer: @few_panels_tall.)
// CHECK-LABEL: func @tall
func.func @tall(%x: tensor<512x64xf32>, %w: tensor<64x384xf32>, %acc: tensor<512x384xf32>) -> tensor<512x384xf32> {
  // CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (512, 384) step (256, 48)
  // CHECK: %[[BUF:.*]] = tensor.empty() : tensor<64x48xf32>
  // CHECK: linalg.copy ins(%{{.*}} : tensor<64x48xf32>) outs(%[[BUF]] : tensor<64x48xf32>)
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
  // CHECK: vector.contract {{.*}} into vector<1x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<512x64xf32>, tensor<64x384xf32>) outs(%acc : tensor<512x384xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<512x384xf32>
  return %0 : tensor<512x384xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// An accumulator that starts as a fill used nowhere else: each 8 x 48 tile
// starts from the fill value in registers (vector writes the first reads
// fold to) and the fill of the whole result goes away.
// CHECK-LABEL: func @zero_start
// CHECK-NOT: linalg.fill
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<8x16xf32>
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[EMPTY:.*]])
// CHECK: scf.for
// CHECK: vector.transfer_write %[[Z]]
// CHECK: scf.for
// CHECK: vector.contract
func.func @zero_start(%x: tensor<16x64xf32>, %w: tensor<64x96xf32>) -> tensor<16x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x96xf32>) -> tensor<16x96xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0 : tensor<16x96xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Must not fire: a fill that something else reads too stays, and the
// tiles read it.
// CHECK-LABEL: func @shared_fill
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[F]])
// CHECK-NOT: vector.transfer_write %cst
// CHECK: vector.contract
func.func @shared_fill(%x: tensor<16x64xf32>, %w: tensor<64x96xf32>) -> (tensor<16x96xf32>, tensor<16x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x96xf32>) -> tensor<16x96xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0, %acc : tensor<16x96xf32>, tensor<16x96xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// An elementwise epilogue that reads the product element for element runs
// inside the panel loop, on each panel after its row tiles; the forall
// then produces the epilogue's result.
// CHECK-LABEL: func @epilogue
// CHECK: %[[F:.*]]:2 = scf.forall {{.*}} -> (tensor<16x96xf32>, tensor<16x96xf32>)
// CHECK: vector.contract
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x48xf32>, tensor<48xf32>)
// CHECK: math.tanh
// CHECK: scf.forall.in_parallel
// CHECK: return %[[F]]#1
func.func @epilogue(%x: tensor<16x64xf32>, %w: tensor<64x96xf32>, %acc: tensor<16x96xf32>, %b: tensor<96xf32>) -> tensor<16x96xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  %e = tensor.empty() : tensor<16x96xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %b : tensor<16x96xf32>, tensor<96xf32>) outs(%e : tensor<16x96xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<16x96xf32>
  return %1 : tensor<16x96xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// An epilogue of another element type (an 8-bit consumer's requantization:
// a scale, a rounding and the narrow result) also runs on each panel, and
// the forall produces the narrow result: the f32 product is not read again
// by a loop of its own.
// CHECK-LABEL: func @requantizing_epilogue
// CHECK: %[[F:.*]]:2 = scf.forall {{.*}} -> (tensor<16x96xf32>, tensor<16x96xbf16>)
// CHECK: vector.contract
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x48xf32>, tensor<f32>) outs(%{{.*}} : tensor<16x48xbf16>)
// CHECK: arith.truncf
// CHECK: scf.forall.in_parallel
// CHECK: return %[[F]]#1
func.func @requantizing_epilogue(%x: tensor<16x64xf32>, %w: tensor<64x96xf32>, %acc: tensor<16x96xf32>, %scale: tensor<f32>) -> tensor<16x96xbf16> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  %e = tensor.empty() : tensor<16x96xbf16>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %scale : tensor<16x96xf32>, tensor<f32>) outs(%e : tensor<16x96xbf16>) {
  ^bb0(%v: f32, %s: f32, %o: bf16):
    %q = arith.divf %v, %s : f32
    %r = arith.truncf %q : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<16x96xbf16>
  return %1 : tensor<16x96xbf16>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Must not fire: an epilogue that reads the product transposed, and one
// whose product is also returned, stay after the loops.
// CHECK-LABEL: func @epilogue_not_fused
// CHECK: %[[F1:.*]] = scf.forall
// CHECK-NOT: math.tanh
// CHECK: scf.forall.in_parallel
// CHECK: linalg.generic {{.*}} ins(%[[F1]] : tensor<96x96xf32>)
// CHECK: %[[F2:.*]] = scf.forall
// CHECK: scf.forall.in_parallel
// CHECK: linalg.generic {{.*}} ins(%[[F2]] : tensor<96x96xf32>)
func.func @epilogue_not_fused(%x: tensor<96x96xf32>, %w: tensor<96x96xf32>, %acc: tensor<96x96xf32>) -> (tensor<96x96xf32>, tensor<96x96xf32>, tensor<96x96xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<96x96xf32>, tensor<96x96xf32>) outs(%acc : tensor<96x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<96x96xf32>
  %e = tensor.empty() : tensor<96x96xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<96x96xf32>) outs(%e : tensor<96x96xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<96x96xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<96x96xf32>, tensor<96x96xf32>) outs(%acc : tensor<96x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<96x96xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<96x96xf32>) outs(%e : tensor<96x96xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<96x96xf32>
  return %1, %3, %2 : tensor<96x96xf32>, tensor<96x96xf32>, tensor<96x96xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Rows and columns the register tile does not divide are split off: 12
// rows into 8 and 4, 20 columns into 16 and 4; each part is tiled by what
// divides it (the 8-row parts read one lhs, packed once; the 4-row parts
// read it unpacked).
// CHECK-LABEL: func @ragged
// CHECK-COUNT-1: linalg.transpose
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%{{.*}}) = (0) to (16) step (16) shared_outs(%{{.*}}) -> (tensor<8x16xf32>)
// CHECK: vector.contract {{.*}} : vector<1x8xf32>, vector<1x16xf32> into vector<8x16xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (4) step (4) shared_outs(%{{.*}}) -> (tensor<8x4xf32>)
// CHECK: vector.contract {{.*}} : vector<1x8xf32>, vector<1x4xf32> into vector<8x4xf32>
// CHECK: tensor.extract_slice %arg0[8, 0] [4, 64] [1, 1]
// CHECK: scf.forall (%{{.*}}) = (0) to (16) step (16) shared_outs(%{{.*}}) -> (tensor<4x16xf32>)
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (4) step (4) shared_outs(%{{.*}}) -> (tensor<4x4xf32>)
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x4xf32> into vector<4x4xf32>
// CHECK-NOT: linalg.generic
func.func @ragged(%x: tensor<12x64xf32>, %w: tensor<64x20xf32>, %acc: tensor<12x20xf32>) -> tensor<12x20xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<12x64xf32>, tensor<64x20xf32>) outs(%acc : tensor<12x20xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<12x20xf32>
  return %0 : tensor<12x20xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Ragged rows with an epilogue (ViT's 197 tokens: 192 and 5): the epilogue
// splits with the product, so that each part runs its own part of it on
// each panel, and each part's tiles start from the fill in registers (no
// fill of the whole result, no loop over it after the panels).
// CHECK-LABEL: func @ragged_epilogue
// CHECK-NOT: linalg.fill
// CHECK: scf.forall {{.*}} -> (tensor<8x48xf32>, tensor<8x48xf32>)
// CHECK: vector.transfer_write %{{.*}} : vector<8x16xf32>, tensor<8x48xf32>
// CHECK: vector.contract
// CHECK: math.tanh
// CHECK: scf.forall.in_parallel
// CHECK: scf.forall {{.*}} -> (tensor<5x48xf32>, tensor<5x48xf32>)
// CHECK: vector.transfer_write %{{.*}} : vector<5x16xf32>, tensor<5x48xf32>
// CHECK: vector.contract
// CHECK: math.tanh
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK-NOT: math.tanh
// CHECK: return
func.func @ragged_epilogue(%x: tensor<13x64xf32>, %w: tensor<64x48xf32>, %bias: tensor<48xf32>) -> tensor<13x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<13x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<13x48xf32>) -> tensor<13x48xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<13x64xf32>, tensor<64x48xf32>) outs(%acc : tensor<13x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<13x48xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %bias : tensor<13x48xf32>, tensor<48xf32>) outs(%e : tensor<13x48xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<13x48xf32>
  return %1 : tensor<13x48xf32>
}

// -----

// A pointwise convolution's epilogue (a bias per filter and a residual
// over [N, F, H, W]) reads the GEMM's product [N, F, H*W] through an
// expand_shape: it runs on the product's dims instead (the residual
// collapsed the same way), so that it splits with the product's 50 pixels
// (48 and 2) and runs in the register tiles of each part; nothing reads
// the whole result after the panels. Must not fire in @conv_epilogue_kept:
// the residual is read transposed, so the epilogue stays a loop of its own;
// nor in @expanded_argument, whose elementwise op reads an expand_shape of
// an argument, not of a contraction's product (it keeps its 4-d loops).
// CHECK-LABEL: func @conv_ragged_epilogue
// CHECK: tensor.collapse_shape %arg3 {{\[}}[0], [1], [2, 3]] : tensor<1x16x5x10xf32> into tensor<1x16x50xf32>
// CHECK: scf.forall {{.*}} -> (tensor<1x16x48xf32>, tensor<1x16x48xf32>)
// CHECK: vector.contract
// CHECK: math.tanh
// CHECK: scf.forall {{.*}} -> (tensor<1x16x2xf32>, tensor<1x16x2xf32>)
// CHECK: vector.contract
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// CHECK-NOT: math.tanh
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 5, 10]
// CHECK: return
// CHECK-LABEL: func @expanded_argument
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x16x5x10xf32>)
// CHECK: math.tanh
// CHECK-LABEL: func @conv_epilogue_kept
// CHECK: vector.contract
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: math.tanh
func.func @conv_ragged_epilogue(%x: tensor<1x8x5x10xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>, %r: tensor<1x16x5x10xf32>) -> tensor<1x16x5x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x5x10xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x5x10xf32>) -> tensor<1x16x5x10xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x5x10xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x5x10xf32>) -> tensor<1x16x5x10xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %b, %r : tensor<1x16x5x10xf32>, tensor<16xf32>, tensor<1x16x5x10xf32>) outs(%e : tensor<1x16x5x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %res: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = math.tanh %s : f32
    %u = arith.addf %t, %res : f32
    linalg.yield %u : f32
  } -> tensor<1x16x5x10xf32>
  return %1 : tensor<1x16x5x10xf32>
}

func.func @expanded_argument(%p: tensor<1x16x50xf32>) -> tensor<1x16x5x10xf32> {
  %e = tensor.empty() : tensor<1x16x5x10xf32>
  %x = tensor.expand_shape %p [[0], [1], [2, 3]] output_shape [1, 16, 5, 10] : tensor<1x16x50xf32> into tensor<1x16x5x10xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x16x5x10xf32>) outs(%e : tensor<1x16x5x10xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<1x16x5x10xf32>
  return %1 : tensor<1x16x5x10xf32>
}

func.func @conv_epilogue_kept(%x: tensor<1x8x5x10xf32>, %w: tensor<16x8x1x1xf32>, %r: tensor<1x16x10x5xf32>) -> tensor<1x16x5x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x5x10xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x5x10xf32>) -> tensor<1x16x5x10xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x5x10xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x5x10xf32>) -> tensor<1x16x5x10xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, w, h)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %r : tensor<1x16x5x10xf32>, tensor<1x16x10x5xf32>) outs(%e : tensor<1x16x5x10xf32>) {
  ^bb0(%v: f32, %res: f32, %o: f32):
    %t = math.tanh %v : f32
    %u = arith.addf %t, %res : f32
    linalg.yield %u : f32
  } -> tensor<1x16x5x10xf32>
  return %1 : tensor<1x16x5x10xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Ragged rows without an epilogue: the parts fill their own tiles in
// registers and are inserted, in place, into the result's empty tensor
// (the fill of the whole result goes away).
// CHECK-LABEL: func @ragged_fill
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<13x48xf32>
// CHECK: %[[P1:.*]] = scf.forall {{.*}} -> (tensor<8x48xf32>)
// CHECK: %[[C1:.*]] = tensor.insert_slice %[[P1]] into %[[E]][0, 0] [8, 48]
// CHECK: tensor.extract_slice %[[C1]][8, 0] [5, 48]
// CHECK: %[[P2:.*]] = scf.forall {{.*}} -> (tensor<5x48xf32>)
// CHECK: %[[C2:.*]] = tensor.insert_slice %[[P2]] into %[[C1]][8, 0] [5, 48]
// CHECK: return %[[C2]]
func.func @ragged_fill(%x: tensor<13x64xf32>, %w: tensor<64x48xf32>) -> tensor<13x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<13x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<13x48xf32>) -> tensor<13x48xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<13x64xf32>, tensor<64x48xf32>) outs(%acc : tensor<13x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<13x48xf32>
  return %0 : tensor<13x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Ragged columns (48 and 16) of dynamic rows: the epilogue does not split
// (its slices' dynamic sizes are other values than the product's) and
// runs after the parts, which start from the fill in registers and are
// inserted in place into the result's empty tensor.
// CHECK-LABEL: func @dynamic_ragged_epilogue
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x64xf32>
// CHECK: %[[P1:.*]] = scf.forall {{.*}} -> (tensor<?x48xf32>)
// CHECK: %[[C1:.*]] = tensor.insert_slice %[[P1]] into %[[E]][0, 0]
// CHECK: %[[P2:.*]] = scf.forall {{.*}} -> (tensor<?x16xf32>)
// CHECK: %[[C2:.*]] = tensor.insert_slice %[[P2]] into %[[C1]][0, 48]
// CHECK: linalg.generic {{.*}} ins(%[[C2]], %{{.*}} : tensor<?x64xf32>, tensor<64xf32>)
func.func @dynamic_ragged_epilogue(%d: tensor<?x64xf32>, %w: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %d, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %bias : tensor<?x64xf32>, tensor<64xf32>) outs(%e : tensor<?x64xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  return %1 : tensor<?x64xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Must not fire: a fill that is also returned stays whole; the parts read
// their slices of it.
// CHECK-LABEL: func @ragged_shared_fill
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: tensor.extract_slice %[[F]][0, 0] [8, 48]
// CHECK: return %{{.*}}, %[[F]]
func.func @ragged_shared_fill(%x: tensor<13x64xf32>, %w: tensor<64x48xf32>) -> (tensor<13x48xf32>, tensor<13x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<13x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<13x48xf32>) -> tensor<13x48xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<13x64xf32>, tensor<64x48xf32>) outs(%acc : tensor<13x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<13x48xf32>
  return %0, %acc : tensor<13x48xf32>, tensor<13x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Dynamic rows (a symbolic batch or sequence folded into M): blocks of 256
// rows on threads with the column panels (the last block partial; with
// one panel, the rows alone were one block, on one thread); in a block,
// 8-row tiles while 8 rows remain (the row loop peeled, its full tiles
// static and vectorized), then the last rows (fewer than 8) as a loop of
// their own, one row at a time, each a 1 x 48 register tile (not a loop
// that adds into memory at every k step).
// CHECK-LABEL: func @dynamic_rows
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0
// CHECK: scf.forall (%[[I:.*]], %{{.*}}) = (0, 0) to (%[[M]], 48) step (256, 48)
// CHECK: %[[B:.*]] = affine.min #{{.*}}(%[[I]])[%[[M]]]
// CHECK: %[[FULL:.*]] = affine.apply #{{.*}}()[%c0, %[[B]], %c8]
// CHECK: scf.for %{{.*}} = %c0 to %[[FULL]] step %c8
// CHECK: tensor.extract_slice {{.*}} : tensor<?x64xf32> to tensor<8x64xf32>
// CHECK: vector.contract {{.*}} into vector<1x16xf32>
// CHECK: scf.for %{{.*}} = %[[FULL]] to %[[B]] step %c8
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: tensor.extract_slice {{.*}} : tensor<?x64xf32> to tensor<1x64xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 {{.*}} -> (tensor<1x48xf32>)
// CHECK: vector.contract {{.*}} : vector<1x1xf32>, vector<1x1x16xf32> into vector<1x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dynamic_rows(%d: tensor<?x64xf32>, %w: tensor<64x48xf32>, %dacc: tensor<?x48xf32>) -> tensor<?x48xf32> {
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %w : tensor<?x64xf32>, tensor<64x48xf32>) outs(%dacc : tensor<?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x48xf32>
  return %1 : tensor<?x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Dynamic rows from a fill (a symbolic batch): the full 8-row tiles start
// from the fill value in registers and the last, partial tile fills its
// own rows just before it runs; the whole result is not filled first.
// CHECK-LABEL: func @dynamic_rows_fill
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x48xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[E]])
// CHECK: vector.transfer_write %{{.*}} : vector<8x16xf32>, tensor<8x48xf32>
// CHECK: vector.contract
// CHECK: scf.for
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x48xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args(%{{.*}} = %[[F]])
func.func @dynamic_rows_fill(%d: tensor<?x64xf32>, %w: tensor<64x48xf32>) -> tensor<?x48xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %d, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%m) : tensor<?x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x48xf32>) -> tensor<?x48xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %w : tensor<?x64xf32>, tensor<64x48xf32>) outs(%acc : tensor<?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x48xf32>
  return %1 : tensor<?x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Must not fire: dynamic columns (or k) and elementwise loops are left
// alone.
// CHECK-LABEL: func @untouched
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.contract
// CHECK: linalg.generic
func.func @untouched(%d: tensor<16x64xf32>, %w: tensor<64x?xf32>, %dacc: tensor<16x?xf32>) -> tensor<16x?xf32> {
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %w : tensor<16x64xf32>, tensor<64x?xf32>) outs(%dacc : tensor<16x?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x?xf32>
  return %1 : tensor<16x?xf32>
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#e = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#f = affine_map<(d0, d1, d2) -> (d2)>

// A weight shared by every batch index ([S, 1, K] x [K, N], the
// sequence-first layout): the batch dim folds into the rows, so that one
// 8-row GEMM runs instead of eight 1-row ones; the epilogue folds with it
// (still fused into the panel loop) and the fill still starts each tile.
// CHECK-LABEL: func @seq_first
// CHECK-NOT: linalg.fill
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<8x1x64xf32> into tensor<8x64xf32>
// CHECK: %[[F:.*]]:2 = scf.forall (%{{.*}}) = (0) to (48) step (48) {{.*}} -> (tensor<8x48xf32>, tensor<8x48xf32>)
// CHECK-COUNT-24: vector.contract {{.*}} : vector<1x1xf32>, vector<1x1x16xf32> into vector<1x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x48xf32>, tensor<48xf32>)
// CHECK: tensor.expand_shape %[[F]]#1 {{\[}}[0, 1], [2]] output_shape [8, 1, 48] : tensor<8x48xf32> into tensor<8x1x48xf32>
func.func @seq_first(%x: tensor<8x1x64xf32>, %w: tensor<64x48xf32>, %bias: tensor<48xf32>) -> tensor<8x1x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1x48xf32>) -> tensor<8x1x48xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<8x1x64xf32>, tensor<64x48xf32>) outs(%acc : tensor<8x1x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<8x1x48xf32>
  %1 = linalg.generic {indexing_maps = [#e, #f, #e], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0, %bias : tensor<8x1x48xf32>, tensor<48xf32>) outs(%e : tensor<8x1x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x1x48xf32>
  return %1 : tensor<8x1x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#bb = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// Must not fold: an rhs that differs per batch index (a batched
// matmul). Two dynamic dims do fold (sequence and batch both symbolic);
// the product goes back to them through tensor.reshape.
// CHECK-LABEL: func @batch_not_folded
// CHECK-NOT: tensor.collapse_shape
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 48) step (1, 48)
// CHECK: tensor.collapse_shape %arg3 {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
// CHECK: scf.forall
// CHECK: tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?x48xf32>, tensor<3xindex>) -> tensor<?x?x48xf32>
func.func @batch_not_folded(%x: tensor<2x8x64xf32>, %w: tensor<2x64x48xf32>, %acc: tensor<2x8x48xf32>, %d: tensor<?x?x64xf32>, %v: tensor<64x48xf32>, %dacc: tensor<?x?x48xf32>) -> (tensor<2x8x48xf32>, tensor<?x?x48xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #bb, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2x8x64xf32>, tensor<2x64x48xf32>) outs(%acc : tensor<2x8x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<2x8x48xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%d, %v : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%dacc : tensor<?x?x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x?x48xf32>
  return %0, %1 : tensor<2x8x48xf32>, tensor<?x?x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A constant rhs is packed once, at compile time, into 48-column panels;
// each forall iteration slices its panel instead of copying. 64 columns
// split into 48 and a second contraction over the last 16, each with its
// own packed panels (panel 0 holds columns 0-47 of both rows: 47.0 is
// followed by 64.0; the second columns 48-63: 63.0 is followed by 112.0).
// The panels are one flat constant, viewed as [panels, K, 48]. For AVX2
// (vector-bits=256) the tile is 4 x 24 in 8-wide vectors: 24-column
// panels, 4-row lhs tiles.
// AVX2-LABEL: func @constant_rhs
// AVX2: tensor.expand_shape {{.*}} into tensor<2x2x24xf32>
// AVX2: scf.forall (%{{.*}}) = (0) to (48) step (24)
// AVX2: vector.contract {{.*}} into vector<1x8xf32>
// AVX2-NOT: vector.contract {{.*}} into vector<1x16xf32>
// AVX2: return
// CHECK-LABEL: func @constant_rhs
// CHECK-DAG: %[[F:.*]] = arith.constant dense_resource<[[BLOB:.*]]> : tensor<96xf32>
// CHECK-DAG: %[[F2:.*]] = arith.constant dense_resource<[[BLOB2:.*]]> : tensor<32xf32>
// CHECK-DAG: %[[Q:.*]] = tensor.expand_shape %[[F2]] {{.*}} into tensor<1x2x16xf32>
// CHECK-DAG: %[[P:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [1, 2, 48] : tensor<96xf32> into tensor<1x2x48xf32>
// CHECK: scf.forall (%[[J:.*]]) = (0) to (48) step (48)
// CHECK: %[[I:.*]] = arith.divui %[[J]], %c48
// CHECK: tensor.extract_slice %[[P]][%[[I]], 0, 0] [1, 2, 48] [1, 1, 1] : tensor<1x2x48xf32> to tensor<2x48xf32>
// CHECK-NOT: linalg.copy
// CHECK: vector.contract
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [16, 48]
// CHECK: scf.forall (%[[J2:.*]]) = (0) to (16) step (16)
// CHECK: tensor.extract_slice %[[Q]]
// CHECK-NOT: linalg.copy
// CHECK: vector.contract {{.*}} into vector<8x16xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 48] [16, 16]
// CHECK: [[BLOB]]: "0x40{{[0-9A-F]*}}00003C4200008042
// CHECK: [[BLOB2]]: "0x40{{[0-9A-F]*}}00007C420000E042
func.func @constant_rhs(%x: tensor<16x2xf32>, %acc: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]]> : tensor<2x64xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x64xf32>) outs(%acc : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#bb = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// A constant rhs shared by every batch iteration is packed at compile time
// too; one that differs per batch (a 3-d constant) is not: its 16 rows'
// tiles read it where it is.
// CHECK-LABEL: func @batched_constant_rhs
// CHECK: arith.constant dense_resource<{{.*}}> : tensor<96xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x48xf32>
// CHECK: scf.forall
// CHECK: tensor.extract_slice {{.*}} : tensor<1x2x48xf32> to tensor<2x48xf32>
// CHECK-NOT: linalg.copy
// CHECK: vector.contract
// CHECK: scf.forall
// CHECK-NOT: linalg.copy
// CHECK: vector.contract
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @batched_constant_rhs(%x: tensor<2x16x2xf32>, %acc: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>) {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]]> : tensor<2x64xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2x16x2xf32>, tensor<2x64xf32>) outs(%acc : tensor<2x16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  %wb = arith.constant dense<[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]], [[64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]]> : tensor<2x2x64xf32>
  %1 = linalg.generic {indexing_maps = [#a, #bb, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %wb : tensor<2x16x2xf32>, tensor<2x2x64xf32>) outs(%acc : tensor<2x16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  return %0, %1 : tensor<2x16x64xf32>, tensor<2x16x64xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A weight two contractions read is packed once (once per part of its
// split columns).
// CHECK-LABEL: func @shared_constant_rhs
// CHECK: arith.constant dense_resource<{{.*}}> : tensor<96xf32>
// CHECK: arith.constant dense_resource<{{.*}}> : tensor<32xf32>
// CHECK-NOT: dense_resource<
// CHECK: scf.forall
// CHECK-NOT: dense_resource<
// CHECK: scf.forall
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @shared_constant_rhs(%x: tensor<16x2xf32>, %acc: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]]> : tensor<2x64xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x64xf32>) outs(%acc : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x64xf32>) outs(%acc : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  return %0, %1 : tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// The transpose of a constant (a matmul with transpose_b) is packed at
// compile time too, read column-wise: the same panels as @constant_rhs.
// CHECK-LABEL: func @transposed_constant_rhs
// CHECK: %[[F:.*]] = arith.constant dense_resource<[[BLOB:.*]]> : tensor<96xf32>
// CHECK: %[[P:.*]] = tensor.expand_shape %[[F]]
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[P]]
// CHECK-NOT: linalg.copy
// CHECK: vector.contract
// CHECK: [[BLOB]]: "0x40{{[0-9A-F]*}}00003C4200008042
func.func @transposed_constant_rhs(%x: tensor<16x2xf32>, %acc: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %wt = arith.constant dense<[[0.0, 64.0], [1.0, 65.0], [2.0, 66.0], [3.0, 67.0], [4.0, 68.0], [5.0, 69.0], [6.0, 70.0], [7.0, 71.0], [8.0, 72.0], [9.0, 73.0], [10.0, 74.0], [11.0, 75.0], [12.0, 76.0], [13.0, 77.0], [14.0, 78.0], [15.0, 79.0], [16.0, 80.0], [17.0, 81.0], [18.0, 82.0], [19.0, 83.0], [20.0, 84.0], [21.0, 85.0], [22.0, 86.0], [23.0, 87.0], [24.0, 88.0], [25.0, 89.0], [26.0, 90.0], [27.0, 91.0], [28.0, 92.0], [29.0, 93.0], [30.0, 94.0], [31.0, 95.0], [32.0, 96.0], [33.0, 97.0], [34.0, 98.0], [35.0, 99.0], [36.0, 100.0], [37.0, 101.0], [38.0, 102.0], [39.0, 103.0], [40.0, 104.0], [41.0, 105.0], [42.0, 106.0], [43.0, 107.0], [44.0, 108.0], [45.0, 109.0], [46.0, 110.0], [47.0, 111.0], [48.0, 112.0], [49.0, 113.0], [50.0, 114.0], [51.0, 115.0], [52.0, 116.0], [53.0, 117.0], [54.0, 118.0], [55.0, 119.0], [56.0, 120.0], [57.0, 121.0], [58.0, 122.0], [59.0, 123.0], [60.0, 124.0], [61.0, 125.0], [62.0, 126.0], [63.0, 127.0]]> : tensor<64x2xf32>
  %e = tensor.empty() : tensor<2x64xf32>
  %w = linalg.transpose ins(%wt : tensor<64x2xf32>) outs(%e : tensor<2x64xf32>) permutation = [1, 0]
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x64xf32>) outs(%acc : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Contractions that read the same lhs (the query, key and value
// projections of one input) pack it once, where it is defined (here at
// the start of the function); another lhs is packed apart.
// CHECK-LABEL: func @shared_lhs
// CHECK-COUNT-2: linalg.transpose ins(%{{.*}} : tensor<2x8x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall
func.func @shared_lhs(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>, %w: tensor<64x96xf32>, %acc: tensor<16x96xf32>) -> (tensor<16x96xf32>, tensor<16x96xf32>, tensor<16x96xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%0 : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  %2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%y, %w : tensor<16x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<16x96xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x96xf32>
  return %0, %1, %2 : tensor<16x96xf32>, tensor<16x96xf32>, tensor<16x96xf32>
}

// -----

// A static convolution (here a ViT's patch embedding: 16 x 16 kernel,
// stride 16) becomes im2col and a GEMM of filters [F, C*KH*KW] by patches
// [C*KH*KW, OH*OW], tiled like any contraction (64 filter rows in 8-row
// tiles, 16 output pixels as one 16-column panel); the result is NCHW as
// it is. With a dynamic batch (a symbolic batch dim), a loop over the
// images runs the same static convolution on each, as im2col and a GEMM.
// A convolution with dynamic spatial dims that accumulates into values it
// is given (not a fill) is left alone.
// More taps than 7 x 7 are copied by one generic over the patches
// [N, C, KH, KW, OH, OW] (its reads affine in the loops).
// CHECK-LABEL: func @patchify
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<1x3x64x64xf32>) outs(%{{.*}} : tensor<1x3x16x16x4x4xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<1x3x16x16x4x4xf32> into tensor<1x768x16xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<64x3x16x16xf32> into tensor<64x768xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 16) step (1, 16)
// CHECK: vector.contract {{.*}} into vector<1x8x16xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 64, 4, 4]
// CHECK: %[[N:.*]] = tensor.dim %arg2, %c0
// CHECK: scf.for %[[I:[a-z0-9]+]] = %c0 to %[[N]] step %c1 iter_args(%[[ACC:[a-z0-9_]+]] = %arg3) -> (tensor<?x64x2x2xf32>)
// CHECK: %[[IMAGE:.*]] = tensor.extract_slice %arg2[%[[I]], 0, 0, 0] [1, 3, 32, 32] [1, 1, 1, 1] : tensor<?x3x32x32xf32> to tensor<1x3x32x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[IMAGE]] : tensor<1x3x32x32xf32>) outs(%{{.*}} : tensor<1x3x16x16x2x2xf32>)
// CHECK: vector.contract {{.*}} into vector<1x8x4xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0, 0, 0] [1, 64, 2, 2] [1, 1, 1, 1] : tensor<1x64x2x2xf32> into tensor<?x64x2x2xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%arg4, %arg1 : tensor<1x3x?x?xf32>, tensor<64x3x16x16xf32>)
func.func @patchify(%x: tensor<1x3x64x64xf32>, %w: tensor<64x3x16x16xf32>, %dx: tensor<?x3x32x32xf32>, %dacc: tensor<?x64x2x2xf32>, %sx: tensor<1x3x?x?xf32>, %sacc: tensor<1x64x?x?xf32>) -> (tensor<1x64x4x4xf32>, tensor<?x64x2x2xf32>, tensor<1x64x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<16> : tensor<2xi64>} ins(%x, %w : tensor<1x3x64x64xf32>, tensor<64x3x16x16xf32>) outs(%acc : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<16> : tensor<2xi64>} ins(%dx, %w : tensor<?x3x32x32xf32>, tensor<64x3x16x16xf32>) outs(%dacc : tensor<?x64x2x2xf32>) -> tensor<?x64x2x2xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<16> : tensor<2xi64>} ins(%sx, %w : tensor<1x3x?x?xf32>, tensor<64x3x16x16xf32>) outs(%sacc : tensor<1x64x?x?xf32>) -> tensor<1x64x?x?xf32>
  return %0, %1, %2 : tensor<1x64x4x4xf32>, tensor<?x64x2x2xf32>, tensor<1x64x?x?xf32>
}

// -----

// A static convolution whose pixels are not whole vectors (here 7 x 7)
// and whose filters are becomes the GEMM with the pixels as its rows:
// the tap copies' patches [N, C*KH*KW, P] read transposed, times the
// filters transposed to [C*KH*KW, F] (48 + 16 columns of whole vectors;
// 49 rows, the last tile partial), its bias and ReLU applied to the
// product [N, P, F] in the tiles, then transposed back to NCHW. With 24
// filters (not whole vectors), or 8 x 8 pixels (whole vectors), the
// filters stay the rows.
// CHECK-LABEL: func @pixel_rows
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 3, 16)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<1x16x3x3x7x7xf32> into tensor<1x144x49xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<64x144xf32>) outs(%{{.*}} : tensor<144x64xf32>) permutation = [1, 0]
// CHECK: scf.forall {{.*}} -> (tensor<1x48x48xf32>
// CHECK: vector.contract {{.*}} into vector<1x1x16xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x49x64xf32>) outs(%{{.*}} : tensor<1x64x49xf32>) permutation = [0, 2, 1]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 64, 7, 7]
// CHECK-NOT: linalg.transpose ins(%{{.*}} : tensor<1x49x24xf32>)
// CHECK: vector.contract {{.*}} into vector<1x8x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 64, 8, 8]
// CHECK: return
func.func @pixel_rows(%x: tensor<1x16x9x9xf32>, %w: tensor<64x16x3x3xf32>, %b: tensor<64xf32>, %w24: tensor<24x16x3x3xf32>, %x10: tensor<1x16x10x10xf32>) -> (tensor<1x64x7x7xf32>, tensor<1x24x7x7xf32>, tensor<1x64x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x7x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x9x9xf32>, tensor<64x16x3x3xf32>) outs(%acc : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : tensor<1x64x7x7xf32>, tensor<64xf32>) outs(%e : tensor<1x64x7x7xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x7x7xf32>
  %e24 = tensor.empty() : tensor<1x24x7x7xf32>
  %acc24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<1x24x7x7xf32>) -> tensor<1x24x7x7xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w24 : tensor<1x16x9x9xf32>, tensor<24x16x3x3xf32>) outs(%acc24 : tensor<1x24x7x7xf32>) -> tensor<1x24x7x7xf32>
  %e8 = tensor.empty() : tensor<1x64x8x8xf32>
  %acc8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x10, %w : tensor<1x16x10x10xf32>, tensor<64x16x3x3xf32>) outs(%acc8 : tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %r, %1, %2 : tensor<1x64x7x7xf32>, tensor<1x24x7x7xf32>, tensor<1x64x8x8xf32>
}

// -----

// Dynamic height and width (an OCR model's image). A pointwise
// convolution's output pixels are the GEMM's rows (dynamic rows take the
// register tiles): it reads the images as [N, C, P] transposed, with no
// copy, multiplies by the filters transposed to [C, F] and transposes the
// [N, P, F] product back to NCHW. A 3 x 3 one at stride 2 keeps the
// filters as the rows and the pixels as the columns, padded to whole
// panels of 48: im2col's patches [N, C, KH, KW, rows, OW] are copied in
// one parallel loop over the taps and channels (each iteration the
// image's strided slice of one channel, written to its slot [1, 1, 1, 1,
// OH, OW] as it is: a slot rank-reduced would be ambiguous at batch 1),
// with enough zero rows after the OH copied that the pixels fill Q whole
// panels, read as [N, C*KH*KW, Q, 48]; the product [N, F, Q, 48] loses its
// padding in a copy.
// CHECK-LABEL: func @dynamic_spatial
// CHECK: %[[IMAGES:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x8x?x?xf32> into tensor<1x8x?xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<16x8xf32>) outs(%{{.*}} : tensor<8x16xf32>) permutation = [1, 0]
// CHECK: vector.contract {{.*}} into vector<1x8x16xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x?x16xf32>) outs(%{{.*}} : tensor<1x16x?xf32>) permutation = [0, 2, 1]
// CHECK: tensor.reshape %{{.*}} : (tensor<1x16x?xf32>, tensor<4xindex>) -> tensor<1x16x?x?xf32>
// CHECK: %[[PANELS:.*]] = arith.ceildivui %{{.*}}, %c48 : index
// CHECK: %[[EXTRA:.*]] = arith.ceildivui %c47, %{{.*}} : index
// CHECK: %[[ROWS:.*]] = arith.addi %{{.*}}, %[[EXTRA]] : index
// CHECK: tensor.empty(%[[ROWS]], %{{.*}}) : tensor<1x8x3x3x?x?xf32>
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]], %[[C:.*]]) in (3, 3, 8) shared_outs(%[[P:.*]] = %{{.*}}) -> (tensor<1x8x3x3x?x?xf32>)
// CHECK: tensor.extract_slice %arg2[0, %[[C]], %[[I]], %[[J]]] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 2, 2] : tensor<1x8x?x?xf32> to tensor<1x1x?x?xf32>
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[P]][0, %[[C]], %[[I]], %[[J]], 0, 0] [1, 1, 1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1, 1, 1] : tensor<1x8x3x3x?x?xf32> to tensor<1x1x1x1x?x?xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x1x?x?xf32>) outs(%[[SLOT]] : tensor<1x1x1x1x?x?xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[P]][0, %[[C]], %[[I]], %[[J]], 0, 0]
// CHECK: %[[TAIL:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, %{{.*}}, 0] [1, 8, 3, 3, %[[EXTRA]], %{{.*}}]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[TAIL]] : tensor<1x8x3x3x?x?xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<1x8x3x3x?x?xf32> into tensor<1x72x?xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 72, %[[PANELS]], 48] : tensor<1x72x?xf32> into tensor<1x72x?x48xf32>
// CHECK: scf.forall ({{.*}}) = (0, 0, 0) to (1, %{{.*}}, 48) step (1, 1, 48) shared_outs(%{{.*}}) -> (tensor<1x16x?x48xf32>)
// CHECK: vector.contract {{.*}} into vector<1x1x1x16xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x16x?xf32>) outs(%{{.*}} : tensor<1x16x?xf32>)
// CHECK: tensor.reshape %{{.*}} : (tensor<1x16x?xf32>, tensor<4xindex>) -> tensor<1x16x?x?xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// REPORT-NOT: dynamic_spatial.mlir{{.*}}stays a direct loop nest
func.func @dynamic_spatial(%x: tensor<1x8x?x?xf32>, %w: tensor<16x8x1x1xf32>, %px: tensor<1x8x?x?xf32>, %w3: tensor<16x8x3x3xf32>, %h: index, %wd: index, %oh: index, %ow: index) -> (tensor<1x16x?x?xf32>, tensor<1x16x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%h, %wd) : tensor<1x16x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x?x?xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %e2 = tensor.empty(%oh, %ow) : tensor<1x16x?x?xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%px, %w3 : tensor<1x8x?x?xf32>, tensor<16x8x3x3xf32>) outs(%acc2 : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  return %0, %1 : tensor<1x16x?x?xf32>, tensor<1x16x?x?xf32>
}

// -----

// At stride 1 the taps are shifts of the flat input: over the input's
// grid (OH rows of the input's width, the last KW - 1 pixels of each row
// computed and dropped), tap (i, j) of pixel p reads the flat input at
// p + i * Win + j. No im2col: each panel of 48 pixels (in parallel over
// the images and panels) is nine GEMMs of its filters [F, C] and the flat
// input's slice [C, 48] from the panel's start plus the tap's shift,
// accumulated in turn, with the filters packed once, before the loop. The
// input's pad grows by enough rows that the last panel's slices stay
// inside each channel (here 49 / Win), or the input gets a pad of its own.
// The bias and ReLU run on each panel after the last tap; a scale per
// image (it reads the batch) does not, and runs on the result.
// CHECK-LABEL: func @dynamic_shifted
// CHECK: %[[SOURCE:.*]] = tensor.dim %arg0, %c3
// CHECK: %[[WIDTH:.*]] = affine.apply #{{.*}}()[%[[SOURCE]]]
// CHECK: %[[GRID:.*]] = arith.muli %{{.*}}, %[[WIDTH]] : index
// CHECK: %[[PANELS:.*]] = arith.ceildivui %[[GRID]], %c48 : index
// CHECK: %[[SAFE:.*]] = arith.maxui %[[WIDTH]], %c1 : index
// CHECK: %[[ROWS:.*]] = arith.ceildivui %c49, %[[SAFE]] : index
// CHECK: %[[HIGH:.*]] = arith.addi %[[ROWS]], %c1 : index
// CHECK: %[[TALL:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, %[[HIGH]], 1]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[TALL]] {{\[}}[0], [1], [2, 3]] : tensor<?x8x?x?xf32> into tensor<?x8x?xf32>
// CHECK: linalg.transpose ins(%arg1 : tensor<16x8x3x3xf32>) outs(%{{.*}} : tensor<3x3x16x8xf32>) permutation = [2, 3, 0, 1]
// CHECK-COUNT-9: linalg.transpose ins(%{{.*}} : tensor<2x8x8xf32>) outs(%{{.*}} : tensor<2x8x8xf32>) permutation = [0, 2, 1]
// CHECK: scf.forall (%[[N:.*]], %[[Q:.*]]) in (%{{.*}}, %[[PANELS]]) shared_outs(%{{.*}}) -> (tensor<?x16x?x48xf32>)
// CHECK: %[[START:.*]] = arith.muli %[[Q]], %c48 : index
// CHECK: tensor.extract_slice %[[FLAT]][%[[N]], 0, %[[START]]] [1, 8, 48] [1, 1, 1] : tensor<?x8x?xf32> to tensor<1x8x48xf32>
// CHECK: vector.contract
// CHECK: %[[SHIFT:.*]] = arith.addi %[[START]], %c1 : index
// CHECK: tensor.extract_slice %[[FLAT]][%[[N]], 0, %[[SHIFT]]] [1, 8, 48] [1, 1, 1] : tensor<?x8x?xf32> to tensor<1x8x48xf32>
// CHECK: vector.contract
// CHECK: arith.maximumf
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[N]], 0, %[[Q]], 0] [1, 16, 1, 48] [1, 1, 1, 1] : tensor<1x16x1x48xf32> into tensor<?x16x?x48xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<?x16x?xf32>) outs(%{{.*}} : tensor<?x16x?xf32>)
// CHECK: tensor.reshape %{{.*}} : (tensor<?x16x?xf32>, tensor<4xindex>) -> tensor<?x16x?x?xf32>
// CHECK: linalg.copy ins(%{{.*}} : tensor<?x16x?x?xf32>) outs(%{{.*}} : tensor<?x16x?x?xf32>)
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, %{{.*}}, 0]
// CHECK: scf.forall
// CHECK-NOT: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: scf.forall.in_parallel
// CHECK: tensor.reshape
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg3 : tensor<?x16x?x?xf32>, tensor<?x16x1x1xf32>)
// CHECK-NOT: linalg.conv_2d_nchw_fchw
#sid = affine_map<(n, f, h, w) -> (n, f, h, w)>
#sch = affine_map<(n, f, h, w) -> (f)>
#simg = affine_map<(n, f, h, w) -> (n, f, 0, 0)>
func.func @dynamic_shifted(%x: tensor<?x8x?x?xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>, %s: tensor<?x16x1x1xf32>, %n: index, %h: index, %wd: index) -> (tensor<?x16x?x?xf32>, tensor<?x16x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x8x?x?xf32> to tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %wd) : tensor<?x16x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<?x8x?x?xf32>, tensor<16x8x3x3xf32>) outs(%acc : tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  %1 = linalg.generic {indexing_maps = [#sid, #sch, #sid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : tensor<?x16x?x?xf32>, tensor<16xf32>) outs(%e : tensor<?x16x?x?xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %sum = arith.addf %v, %c : f32
    %r = arith.maximumf %sum, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x16x?x?xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x8x?x?xf32>, tensor<16x8x3x3xf32>) outs(%acc : tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  %3 = linalg.generic {indexing_maps = [#sid, #simg, #sid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %s : tensor<?x16x?x?xf32>, tensor<?x16x1x1xf32>) outs(%e : tensor<?x16x?x?xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %p = arith.mulf %v, %c : f32
    linalg.yield %p : f32
  } -> tensor<?x16x?x?xf32>
  return %1, %3 : tensor<?x16x?x?xf32>, tensor<?x16x?x?xf32>
}

// -----

// A static convolution at stride 1 with few filters (16: each value an
// im2col copy writes would feed only 16 multiply-adds) takes the pixel
// panels' shifted taps, as a symbolic-size one does: no patches. With 64
// filters, at stride 2, or over 3 channels (each tap's GEMM would reduce
// over 3) it stays im2col (copies per tap) and a GEMM.
// CHECK-LABEL: func @static_few_filters
// CHECK: %[[TALL:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, %{{.*}}, 0]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[TALL]] {{\[}}[0], [1], [2, 3]] : tensor<1x16x?x12xf32> into tensor<1x16x?xf32>
// CHECK: linalg.transpose ins(%arg1 : tensor<16x16x3x3xf32>) outs(%{{.*}} : tensor<3x3x16x16xf32>) permutation = [2, 3, 0, 1]
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (1, %{{.*}}) shared_outs(%{{.*}}) -> (tensor<1x16x?x48xf32>)
// CHECK-COUNT-9: vector.contract
// CHECK: linalg.copy ins(%{{.*}} : tensor<1x16x8x10xf32>) outs(%{{.*}} : tensor<1x16x8x10xf32>)
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 3, 16) shared_outs(%{{.*}}) -> (tensor<1x16x3x3x8x10xf32>)
// CHECK: tensor.collapse_shape %arg2 {{\[}}[0], [1, 2, 3]] : tensor<64x16x3x3xf32> into tensor<64x144xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 3, 16) shared_outs(%{{.*}}) -> (tensor<1x16x3x3x4x5xf32>)
// CHECK: tensor.extract_slice %arg0[0, %{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 4, 5] [1, 1, 2, 2]
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 3, 3) shared_outs(%{{.*}}) -> (tensor<1x3x3x3x8x10xf32>)
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @static_few_filters(%x: tensor<1x16x10x12xf32>, %w: tensor<16x16x3x3xf32>, %wide: tensor<64x16x3x3xf32>, %rgb: tensor<1x3x10x12xf32>, %wrgb: tensor<16x3x3x3xf32>) -> (tensor<1x16x8x10xf32>, tensor<1x64x8x10xf32>, tensor<1x16x4x5xf32>, tensor<1x16x8x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x8x10xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x8x10xf32>) -> tensor<1x16x8x10xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x10x12xf32>, tensor<16x16x3x3xf32>) outs(%acc : tensor<1x16x8x10xf32>) -> tensor<1x16x8x10xf32>
  %e1 = tensor.empty() : tensor<1x64x8x10xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x64x8x10xf32>) -> tensor<1x64x8x10xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wide : tensor<1x16x10x12xf32>, tensor<64x16x3x3xf32>) outs(%acc1 : tensor<1x64x8x10xf32>) -> tensor<1x64x8x10xf32>
  %e2 = tensor.empty() : tensor<1x16x4x5xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16x4x5xf32>) -> tensor<1x16x4x5xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x16x10x12xf32>, tensor<16x16x3x3xf32>) outs(%acc2 : tensor<1x16x4x5xf32>) -> tensor<1x16x4x5xf32>
  %3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%rgb, %wrgb : tensor<1x3x10x12xf32>, tensor<16x3x3x3xf32>) outs(%acc : tensor<1x16x8x10xf32>) -> tensor<1x16x8x10xf32>
  return %0, %1, %2, %3 : tensor<1x16x8x10xf32>, tensor<1x64x8x10xf32>, tensor<1x16x4x5xf32>, tensor<1x16x8x10xf32>
}

// -----

// A pointwise convolution (1 x 1, stride 1: MobileNet's expansions and
// projections) is a GEMM of the filters [F, C] and the image viewed as
// [C, H*W], with no im2col copy, tiled like any contraction. With a stride
// of 2 it goes through im2col: a copy of the image's strided slice (every
// other row and column), vectorized like any copy.
// CHECK-LABEL: func @pointwise
// CHECK-DAG: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x8x6x8xf32> into tensor<1x8x48xf32>
// CHECK-DAG: tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 48) step (1, 48)
// CHECK: vector.contract {{.*}} into vector<1x1x16xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 6, 8]
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]], %[[C:.*]]) in (1, 1, 8)
// CHECK: tensor.extract_slice %arg0[0, %[[C]], %[[I]], %[[J]]] [1, 1, 3, 4] [1, 1, 2, 2] : tensor<1x8x6x8xf32> to tensor<1x1x3x4xf32>
// CHECK: vector.transfer_read
// CHECK: vector.transfer_write
func.func @pointwise(%x: tensor<1x8x6x8xf32>, %w: tensor<16x8x1x1xf32>) -> (tensor<1x16x6x8xf32>, tensor<1x16x3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x6x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x6x8xf32>) -> tensor<1x16x6x8xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x8xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x6x8xf32>) -> tensor<1x16x6x8xf32>
  %e2 = tensor.empty() : tensor<1x16x3x4xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16x3x4xf32>) -> tensor<1x16x3x4xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x8xf32>, tensor<16x8x1x1xf32>) outs(%acc2 : tensor<1x16x3x4xf32>) -> tensor<1x16x3x4xf32>
  return %0, %1 : tensor<1x16x6x8xf32>, tensor<1x16x3x4xf32>
}

// -----

// A grouped convolution (2 groups) is a parallel loop over the groups,
// each an ungrouped convolution of its group's channels and filters as
// im2col and a GEMM (whose own loops then run on the group's thread); a
// dilated one stays as it is.
// CHECK-LABEL: func @grouped
// CHECK: scf.forall (%[[G:.*]]) in (2) shared_outs(%[[ACC:.*]] = %arg2) -> (tensor<1x2x3x4x4xf32>)
// CHECK-DAG: tensor.extract_slice %arg0[0, %[[G]], 0, 0, 0] [1, 1, 2, 6, 6] [1, 1, 1, 1, 1] : tensor<1x2x2x6x6xf32> to tensor<1x2x6x6xf32>
// CHECK-DAG: tensor.extract_slice %arg1[%[[G]], 0, 0, 0, 0] [1, 3, 2, 3, 3] [1, 1, 1, 1, 1] : tensor<2x3x2x3x3xf32> to tensor<3x2x3x3xf32>
// CHECK-DAG: tensor.extract_slice %[[ACC]][0, %[[G]], 0, 0, 0] [1, 1, 3, 4, 4] [1, 1, 1, 1, 1] : tensor<1x2x3x4x4xf32> to tensor<1x3x4x4xf32>
// CHECK: vector.contract
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[ACC]][0, %[[G]], 0, 0, 0] [1, 1, 3, 4, 4]
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>
func.func @grouped(%x: tensor<1x2x2x6x6xf32>, %w: tensor<2x3x2x3x3xf32>, %acc: tensor<1x2x3x4x4xf32>, %acc2: tensor<1x2x3x2x2xf32>) -> (tensor<1x2x3x4x4xf32>, tensor<1x2x3x2x2xf32>) {
  %0 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x6x6xf32>, tensor<2x3x2x3x3xf32>) outs(%acc : tensor<1x2x3x4x4xf32>) -> tensor<1x2x3x4x4xf32>
  %1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x6x6xf32>, tensor<2x3x2x3x3xf32>) outs(%acc2 : tensor<1x2x3x2x2xf32>) -> tensor<1x2x3x2x2xf32>
  return %0, %1 : tensor<1x2x3x4x4xf32>, tensor<1x2x3x2x2xf32>
}

// -----

// Must not take the parallel loop: 2 groups whose GEMMs are large
// (64 filters x 32 * 3 * 3 depth x 32 * 32 pixels each) stay a sequential
// loop over the groups, each GEMM's own loops on the threads.
// CHECK-LABEL: func @grouped_large
// CHECK: scf.for %[[G:.*]] = %c0 to %c2 step %c1 iter_args(%[[ACC:.*]] = %arg2) -> (tensor<1x2x64x32x32xf32>)
// CHECK: tensor.extract_slice %arg1[%[[G]], 0, 0, 0, 0] [1, 64, 32, 3, 3]
// CHECK: scf.forall
// CHECK: tensor.insert_slice %{{.*}} into %[[ACC]][0, %[[G]], 0, 0, 0] [1, 1, 64, 32, 32]
func.func @grouped_large(%x: tensor<1x2x32x34x34xf32>, %w: tensor<2x64x32x3x3xf32>, %acc: tensor<1x2x64x32x32xf32>) -> tensor<1x2x64x32x32xf32> {
  %0 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x32x34x34xf32>, tensor<2x64x32x3x3xf32>) outs(%acc : tensor<1x2x64x32x32xf32>) -> tensor<1x2x64x32x32xf32>
  return %0 : tensor<1x2x64x32x32xf32>
}

// -----

// bf16 operands into an f32 accumulator (a matmul the precision passes
// made narrow): the lhs is packed in bf16, the rhs read in bf16 where it
// is (16 rows), and each product's
// operands are extended to f32 next to it; the f32 matmul above has no
// extension.
// CHECK-LABEL: func @narrow_operands
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x8x64xbf16>)
// CHECK: tensor.extract_slice %arg1[0, %{{.*}}] [64, 48] [1, 1] : tensor<64x96xbf16> to tensor<64x48xbf16>
// CHECK: arith.extf %{{.*}} : vector<1x1xbf16> to vector<1x1xf32>
// CHECK-NEXT: arith.extf %{{.*}} : vector<1x1x16xbf16> to vector<1x1x16xf32>
// CHECK-NEXT: vector.contract {{.*}} : vector<1x1xf32>, vector<1x1x16xf32> into vector<1x16xf32>
#na = affine_map<(d0, d1, d2) -> (d0, d1)>
#nb = affine_map<(d0, d1, d2) -> (d1, d2)>
#nc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @narrow_operands(%x: tensor<16x64xbf16>, %w: tensor<64x96xbf16>, %acc: tensor<16x96xf32>) -> tensor<16x96xf32> {
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

// i8 operands into an i32 accumulator (an int8 matmul): sign-extended
// next to each product.
// CHECK-LABEL: func @int8_operands
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x8x64xi8>)
// CHECK: arith.extsi %{{.*}} : vector<1x1xi8> to vector<1x1xi32>
// CHECK-NEXT: arith.extsi %{{.*}} : vector<1x1x16xi8> to vector<1x1x16xi32>
// CHECK-NEXT: vector.contract {{.*}} : vector<1x1xi32>, vector<1x1x16xi32> into vector<1x16xi32>
#ia = affine_map<(d0, d1, d2) -> (d0, d1)>
#ib = affine_map<(d0, d1, d2) -> (d1, d2)>
#ic = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @int8_operands(%x: tensor<16x64xi8>, %w: tensor<64x96xi8>, %acc: tensor<16x96xi32>) -> tensor<16x96xi32> {
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

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A kernel shared by two layers (tessera-outline-kernels) reads its
// weight as an argument, and every call passes a constant: each call
// passes its constant packed instead, and the argument goes.
// CHECK-LABEL: func @two_layers
// CHECK-SAME: (%[[X:[a-z_0-9]+]]: tensor<16x2xf32>
// CHECK: %[[F0:.*]] = arith.constant dense_resource<{{.*}}> : tensor<96xf32>
// CHECK: %[[P0:.*]] = tensor.expand_shape %[[F0]] {{.*}} into tensor<1x2x48xf32>
// CHECK: %[[F1:.*]] = arith.constant dense_resource<{{.*}}> : tensor<96xf32>
// CHECK: %[[P1:.*]] = tensor.expand_shape %[[F1]] {{.*}} into tensor<1x2x48xf32>
// CHECK: %[[A:.*]] = call @layer(%[[X]], %{{.*}}, %[[P0]]) : (tensor<16x2xf32>, tensor<16x48xf32>, tensor<1x2x48xf32>) -> tensor<16x48xf32>
// CHECK: call @layer(%[[X]], %{{.*}}, %[[P1]])
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.*}}: tensor<16x2xf32>, %{{.*}}: tensor<16x48xf32>, %[[W:[a-z_0-9]+]]: tensor<1x2x48xf32>)
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[W]]
// CHECK-NOT: linalg.copy
// CHECK: vector.contract
func.func @two_layers(%x: tensor<16x2xf32>, %acc: tensor<16x48xf32>) -> (tensor<16x48xf32>, tensor<16x48xf32>) {
  %w0 = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0]]> : tensor<2x48xf32>
  %w1 = arith.constant dense<[[100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0], [148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0, 164.0, 165.0, 166.0, 167.0, 168.0, 169.0, 170.0, 171.0, 172.0, 173.0, 174.0, 175.0, 176.0, 177.0, 178.0, 179.0, 180.0, 181.0, 182.0, 183.0, 184.0, 185.0, 186.0, 187.0, 188.0, 189.0, 190.0, 191.0, 192.0, 193.0, 194.0, 195.0]]> : tensor<2x48xf32>
  %0 = call @layer(%x, %w0, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  %1 = call @layer(%x, %w1, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  return %0, %1 : tensor<16x48xf32>, tensor<16x48xf32>
}
func.func private @layer(%x: tensor<16x2xf32>, %w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A weight tied between two layers (both calls pass the same constant) is
// packed once, and both calls pass that one packed constant.
// CHECK-LABEL: func @tied_layers
// CHECK: %[[F:.*]] = arith.constant dense_resource<{{.*}}> : tensor<96xf32>
// CHECK: %[[P:.*]] = tensor.expand_shape %[[F]] {{.*}} into tensor<1x2x48xf32>
// CHECK-NOT: dense_resource
// CHECK: call @layer(%{{.*}}, %{{.*}}, %[[P]])
// CHECK: call @layer(%{{.*}}, %{{.*}}, %[[P]])
func.func @tied_layers(%x: tensor<16x2xf32>, %acc: tensor<16x48xf32>) -> (tensor<16x48xf32>, tensor<16x48xf32>) {
  %w0 = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0]]> : tensor<2x48xf32>
  %0 = call @layer(%x, %w0, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  %1 = call @layer(%x, %w0, %0) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  return %0, %1 : tensor<16x48xf32>, tensor<16x48xf32>
}
func.func private @layer(%x: tensor<16x2xf32>, %w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Not packed at compile time: one call passes a weight that is not a
// constant, so the kernel reads its panels at run time (in place: 16 rows)
// and keeps its arguments.
// CHECK-LABEL: func @one_runtime_weight
// CHECK-NOT: dense_resource
// CHECK: call @layer(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>)
// CHECK: call @layer(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>)
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.*}}: tensor<16x2xf32>, %[[W:.*]]: tensor<2x48xf32>, %{{.*}}: tensor<16x48xf32>)
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[W]]
// CHECK: vector.contract
func.func @one_runtime_weight(%x: tensor<16x2xf32>, %w1: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> (tensor<16x48xf32>, tensor<16x48xf32>) {
  %w0 = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0], [48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0]]> : tensor<2x48xf32>
  %0 = call @layer(%x, %w0, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  %1 = call @layer(%x, %w1, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  return %0, %1 : tensor<16x48xf32>, tensor<16x48xf32>
}
func.func private @layer(%x: tensor<16x2xf32>, %w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A part of a part of the split columns (72 columns: 48, then 16 and 8)
// reads a slice of a slice of the transposed constant: every part is
// packed at compile time, panels from columns 0, 48 and 64 (the 8-column
// part's panel starts with 64.0, 164.0), and the transpose goes.
// CHECK-LABEL: func @nested_slice_constant_rhs
// CHECK-DAG: arith.constant dense_resource<{{.*}}> : tensor<96xf32>
// CHECK-DAG: arith.constant dense_resource<{{.*}}> : tensor<32xf32>
// CHECK-DAG: arith.constant dense_resource<[[BLOB8:.*]]> : tensor<16xf32>
// CHECK-NOT: linalg.transpose ins({{.*}} : tensor<72x2xf32>)
// CHECK-NOT: linalg.copy
// CHECK: return
// CHECK: [[BLOB8]]: "0x4000000000008042000082420000844200008642000088420000
// CHECK-SAME: 000024430000
func.func @nested_slice_constant_rhs(%x: tensor<16x2xf32>, %acc: tensor<16x72xf32>) -> tensor<16x72xf32> {
  %wt = arith.constant dense<[[0.0, 100.0], [1.0, 101.0], [2.0, 102.0], [3.0, 103.0], [4.0, 104.0], [5.0, 105.0], [6.0, 106.0], [7.0, 107.0], [8.0, 108.0], [9.0, 109.0], [10.0, 110.0], [11.0, 111.0], [12.0, 112.0], [13.0, 113.0], [14.0, 114.0], [15.0, 115.0], [16.0, 116.0], [17.0, 117.0], [18.0, 118.0], [19.0, 119.0], [20.0, 120.0], [21.0, 121.0], [22.0, 122.0], [23.0, 123.0], [24.0, 124.0], [25.0, 125.0], [26.0, 126.0], [27.0, 127.0], [28.0, 128.0], [29.0, 129.0], [30.0, 130.0], [31.0, 131.0], [32.0, 132.0], [33.0, 133.0], [34.0, 134.0], [35.0, 135.0], [36.0, 136.0], [37.0, 137.0], [38.0, 138.0], [39.0, 139.0], [40.0, 140.0], [41.0, 141.0], [42.0, 142.0], [43.0, 143.0], [44.0, 144.0], [45.0, 145.0], [46.0, 146.0], [47.0, 147.0], [48.0, 148.0], [49.0, 149.0], [50.0, 150.0], [51.0, 151.0], [52.0, 152.0], [53.0, 153.0], [54.0, 154.0], [55.0, 155.0], [56.0, 156.0], [57.0, 157.0], [58.0, 158.0], [59.0, 159.0], [60.0, 160.0], [61.0, 161.0], [62.0, 162.0], [63.0, 163.0], [64.0, 164.0], [65.0, 165.0], [66.0, 166.0], [67.0, 167.0], [68.0, 168.0], [69.0, 169.0], [70.0, 170.0], [71.0, 171.0]]> : tensor<72x2xf32>
  %e = tensor.empty() : tensor<2x72xf32>
  %w = linalg.transpose ins(%wt : tensor<72x2xf32>) outs(%e : tensor<2x72xf32>) permutation = [1, 0]
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x72xf32>) outs(%acc : tensor<16x72xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x72xf32>
  return %0 : tensor<16x72xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Must not fire: a unit-stride slice of a strided slice (every second
// column) of a constant is not packed at compile time: its panels are read
// at run time (in place: 16 rows).
// CHECK-LABEL: func @strided_slice_constant_rhs
// CHECK-NOT: dense_resource<
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [2, 64] [1, 2] : tensor<2x128xf32> to tensor<2x64xf32>
// CHECK: vector.contract
// CHECK: return
func.func @strided_slice_constant_rhs(%x: tensor<16x2xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %c = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0], [200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0, 216.0, 217.0, 218.0, 219.0, 220.0, 221.0, 222.0, 223.0, 224.0, 225.0, 226.0, 227.0, 228.0, 229.0, 230.0, 231.0, 232.0, 233.0, 234.0, 235.0, 236.0, 237.0, 238.0, 239.0, 240.0, 241.0, 242.0, 243.0, 244.0, 245.0, 246.0, 247.0, 248.0, 249.0, 250.0, 251.0, 252.0, 253.0, 254.0, 255.0, 256.0, 257.0, 258.0, 259.0, 260.0, 261.0, 262.0, 263.0, 264.0, 265.0, 266.0, 267.0, 268.0, 269.0, 270.0, 271.0, 272.0, 273.0, 274.0, 275.0, 276.0, 277.0, 278.0, 279.0, 280.0, 281.0, 282.0, 283.0, 284.0, 285.0, 286.0, 287.0, 288.0, 289.0, 290.0, 291.0, 292.0, 293.0, 294.0, 295.0, 296.0, 297.0, 298.0, 299.0, 300.0, 301.0, 302.0, 303.0, 304.0, 305.0, 306.0, 307.0, 308.0, 309.0, 310.0, 311.0, 312.0, 313.0, 314.0, 315.0, 316.0, 317.0, 318.0, 319.0, 320.0, 321.0, 322.0, 323.0, 324.0, 325.0, 326.0, 327.0]]> : tensor<2x128xf32>
  %every = tensor.extract_slice %c[0, 0] [2, 64] [1, 2] : tensor<2x128xf32> to tensor<2x64xf32>
  %w = tensor.extract_slice %every[0, 0] [2, 48] [1, 1] : tensor<2x64xf32> to tensor<2x48xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A constant lhs (a convolution's weight) is packed into its 8-row tiles
// at compile time: one flat constant viewed as [M/8, K, 8], which each row
// tile slices instead of the run-time transpose. Tile 0 holds rows 0-7 of
// column 0 (0.0 ... 7.0), then of column 1 (100.0 ... 107.0); tile 1
// starts with row 8 (8.0) after 107.0. For AVX2, 4-row tiles.
// AVX2-LABEL: func @constant_lhs
// AVX2: arith.constant dense_resource<{{.*}}> : tensor<32xf32>
// AVX2: tensor.expand_shape {{.*}} into tensor<4x2x4xf32>
// AVX2-NOT: linalg.transpose
// AVX2: return
// CHECK-LABEL: func @constant_lhs
// CHECK: %[[F:.*]] = arith.constant dense_resource<[[BLOB:.*]]> : tensor<32xf32>
// CHECK: %[[L:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [2, 2, 8] : tensor<32xf32> into tensor<2x2x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// CHECK: %[[T:.*]] = arith.divui %{{.*}}, %c8
// CHECK: tensor.extract_slice %[[L]][%[[T]], %{{.*}}, 0] [1, 2, 8] [1, 1, 1] : tensor<2x2x8xf32> to tensor<2x8xf32>
// CHECK: vector.contract
// CHECK: [[BLOB]]: "0x40000000000000000000803F{{[0-9A-F]*}}0000E0400000C842{{[0-9A-F]*}}0000D64200000041
func.func @constant_lhs(%w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %x = arith.constant dense<[[0.0, 100.0], [1.0, 101.0], [2.0, 102.0], [3.0, 103.0], [4.0, 104.0], [5.0, 105.0], [6.0, 106.0], [7.0, 107.0], [8.0, 108.0], [9.0, 109.0], [10.0, 110.0], [11.0, 111.0], [12.0, 112.0], [13.0, 113.0], [14.0, 114.0], [15.0, 115.0]]> : tensor<16x2xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A slice of whole rows of a constant lhs (rows 8-23 of 24) is packed at
// compile time from its first row: tile 0 starts with 8.0 (8.0 ... 15.0,
// then 108.0).
// CHECK-LABEL: func @sliced_constant_lhs
// CHECK: arith.constant dense_resource<[[BLOB:.*]]> : tensor<32xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return
// CHECK: [[BLOB]]: "0x4000000000000041{{[0-9A-F]*}}000070410000D842
func.func @sliced_constant_lhs(%w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %c = arith.constant dense<[[0.0, 100.0], [1.0, 101.0], [2.0, 102.0], [3.0, 103.0], [4.0, 104.0], [5.0, 105.0], [6.0, 106.0], [7.0, 107.0], [8.0, 108.0], [9.0, 109.0], [10.0, 110.0], [11.0, 111.0], [12.0, 112.0], [13.0, 113.0], [14.0, 114.0], [15.0, 115.0], [16.0, 116.0], [17.0, 117.0], [18.0, 118.0], [19.0, 119.0], [20.0, 120.0], [21.0, 121.0], [22.0, 122.0], [23.0, 123.0]]> : tensor<24x2xf32>
  %x = tensor.extract_slice %c[8, 0] [16, 2] [1, 1] : tensor<24x2xf32> to tensor<16x2xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// A kernel shared by two layers reads its lhs weight as an argument, and
// every call passes a constant: each call passes its constant's row tiles
// instead, and the argument goes.
// CHECK-LABEL: func @two_layers_lhs
// CHECK: %[[F0:.*]] = arith.constant dense_resource<{{.*}}> : tensor<32xf32>
// CHECK: %[[P0:.*]] = tensor.expand_shape %[[F0]] {{.*}} into tensor<2x2x8xf32>
// CHECK: %[[F1:.*]] = arith.constant dense_resource<{{.*}}> : tensor<32xf32>
// CHECK: %[[P1:.*]] = tensor.expand_shape %[[F1]] {{.*}} into tensor<2x2x8xf32>
// CHECK: call @layer(%{{.*}}, %{{.*}}, %[[P0]]) : (tensor<2x48xf32>, tensor<16x48xf32>, tensor<2x2x8xf32>) -> tensor<16x48xf32>
// CHECK: call @layer(%{{.*}}, %{{.*}}, %[[P1]])
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.*}}: tensor<2x48xf32>, %{{.*}}: tensor<16x48xf32>, %[[X:[a-z_0-9]+]]: tensor<2x2x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: tensor.extract_slice %[[X]]
// CHECK: vector.contract
func.func @two_layers_lhs(%w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> (tensor<16x48xf32>, tensor<16x48xf32>) {
  %x0 = arith.constant dense<[[0.0, 100.0], [1.0, 101.0], [2.0, 102.0], [3.0, 103.0], [4.0, 104.0], [5.0, 105.0], [6.0, 106.0], [7.0, 107.0], [8.0, 108.0], [9.0, 109.0], [10.0, 110.0], [11.0, 111.0], [12.0, 112.0], [13.0, 113.0], [14.0, 114.0], [15.0, 115.0]]> : tensor<16x2xf32>
  %x1 = arith.constant dense<[[200.0, 300.0], [201.0, 301.0], [202.0, 302.0], [203.0, 303.0], [204.0, 304.0], [205.0, 305.0], [206.0, 306.0], [207.0, 307.0], [208.0, 308.0], [209.0, 309.0], [210.0, 310.0], [211.0, 311.0], [212.0, 312.0], [213.0, 313.0], [214.0, 314.0], [215.0, 315.0]]> : tensor<16x2xf32>
  %0 = call @layer(%x0, %w, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  %1 = call @layer(%x1, %w, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  return %0, %1 : tensor<16x48xf32>, tensor<16x48xf32>
}
func.func private @layer(%x: tensor<16x2xf32>, %w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Must not fire: one call passes an lhs that is not a constant, so the
// kernel keeps its arguments and packs its lhs at run time (a transpose
// into 8-row tiles before the loops).
// CHECK-LABEL: func @one_runtime_lhs
// CHECK-NOT: dense_resource
// CHECK: call @layer(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>)
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.*}}: tensor<16x2xf32>, %{{.*}}: tensor<2x48xf32>, %{{.*}}: tensor<16x48xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x8x2xf32>) outs(%{{.*}} : tensor<2x2x8xf32>) permutation = [0, 2, 1]
// CHECK: scf.forall
func.func @one_runtime_lhs(%x1: tensor<16x2xf32>, %w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> (tensor<16x48xf32>, tensor<16x48xf32>) {
  %x0 = arith.constant dense<[[0.0, 100.0], [1.0, 101.0], [2.0, 102.0], [3.0, 103.0], [4.0, 104.0], [5.0, 105.0], [6.0, 106.0], [7.0, 107.0], [8.0, 108.0], [9.0, 109.0], [10.0, 110.0], [11.0, 111.0], [12.0, 112.0], [13.0, 113.0], [14.0, 114.0], [15.0, 115.0]]> : tensor<16x2xf32>
  %0 = call @layer(%x0, %w, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  %1 = call @layer(%x1, %w, %acc) : (tensor<16x2xf32>, tensor<2x48xf32>, tensor<16x48xf32>) -> tensor<16x48xf32>
  return %0, %1 : tensor<16x48xf32>, tensor<16x48xf32>
}
func.func private @layer(%x: tensor<16x2xf32>, %w: tensor<2x48xf32>, %acc: tensor<16x48xf32>) -> tensor<16x48xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x2xf32>, tensor<2x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0 : tensor<16x48xf32>
}

// -----

// A convolution's constant filters (the GEMM's lhs reads their collapse,
// [F, C * KH * KW]) are packed into 8-row tiles at compile time from the
// constant's bytes: filters 0-7 of channel 0 (0.0 ... 7.0), then of
// channel 1 (100.0 ...).
// CHECK-LABEL: func @constant_filters
// CHECK: arith.constant dense_resource<[[BLOB:.*]]> : tensor<16xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return
// CHECK: [[BLOB]]: "0x40000000000000000000803F{{[0-9A-F]*}}0000E0400000C842
func.func @constant_filters(%x: tensor<1x2x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = arith.constant dense<[[[[0.0]], [[100.0]]], [[[1.0]], [[101.0]]], [[[2.0]], [[102.0]]], [[[3.0]], [[103.0]]], [[[4.0]], [[104.0]]], [[[5.0]], [[105.0]]], [[[6.0]], [[106.0]]], [[[7.0]], [[107.0]]]]> : tensor<8x2x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<8x2x1x1xf32>) outs(%acc : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// A convolution over an image of symbolic size whose result only an
// elementwise op reads (a bias per filter and a hard swish): the op moves
// onto the GEMM's [N, P, F] product, the bias read by its filter column,
// and runs in the register tiles' epilogue; the transpose back to NCHW
// comes after it. With a second full-size operand (a residual add of
// another NCHW image) the op stays after the reshape, as it was.
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#filter = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func @conv_epilogue_on_product
// CHECK: scf.forall
// CHECK: vector.contract {{.*}} into vector<1x8x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x{{[0-9?]+}}x16xf32>, tensor<16xf32>)
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: scf.forall.in_parallel
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x?x16xf32>) outs(%{{.*}} : tensor<1x16x?xf32>) permutation = [0, 2, 1]
// CHECK: %[[R:.*]] = tensor.reshape
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @conv_epilogue_on_product(%x: tensor<1x8x?x?xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>, %h: index, %wd: index) -> tensor<1x16x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %three = arith.constant 3.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty(%h, %wd) : tensor<1x16x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x?x?xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %e2 = tensor.empty(%h, %wd) : tensor<1x16x?x?xf32>
  %1 = linalg.generic {indexing_maps = [#nchw, #filter, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %b : tensor<1x16x?x?xf32>, tensor<16xf32>) outs(%e2 : tensor<1x16x?x?xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %y = arith.addf %v, %bias : f32
    %s = arith.addf %y, %three : f32
    %lo = arith.maximumf %s, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %m = arith.mulf %y, %hi : f32
    %d = arith.divf %m, %six : f32
    linalg.yield %d : f32
  } -> tensor<1x16x?x?xf32>
  return %1 : tensor<1x16x?x?xf32>
}

// CHECK-LABEL: func @conv_residual_stays
// CHECK: linalg.transpose
// CHECK: %[[R:.*]] = tensor.reshape
// CHECK: linalg.generic {{.*}} ins(%[[R]], %arg2 : tensor<1x16x?x?xf32>, tensor<1x16x?x?xf32>)
func.func @conv_residual_stays(%x: tensor<1x8x?x?xf32>, %w: tensor<16x8x1x1xf32>, %res: tensor<1x16x?x?xf32>, %h: index, %wd: index) -> tensor<1x16x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%h, %wd) : tensor<1x16x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x?x?xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x?x?xf32>) -> tensor<1x16x?x?xf32>
  %e2 = tensor.empty(%h, %wd) : tensor<1x16x?x?xf32>
  %1 = linalg.generic {indexing_maps = [#nchw, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %res : tensor<1x16x?x?xf32>, tensor<1x16x?x?xf32>) outs(%e2 : tensor<1x16x?x?xf32>) {
  ^bb0(%v: f32, %r: f32, %o: f32):
    %y = arith.addf %v, %r : f32
    linalg.yield %y : f32
  } -> tensor<1x16x?x?xf32>
  return %1 : tensor<1x16x?x?xf32>
}

// -----

// One lhs read as it is by one contraction and transposed by another: the
// first reads it packed into 8-row tiles, the second not (the packing is
// shared by the lhs and the way it is read; shared by the lhs alone, the
// second read the first's packing, a wrong result).
// CHECK-LABEL: func @lhs_read_two_ways
// CHECK: %[[PACKED:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x16x8xf32>) permutation = [0, 2, 1]
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[PACKED]]
// CHECK: scf.forall
// CHECK-NOT: %[[PACKED]]
// CHECK: tensor.extract_slice %arg0[0, %{{.*}}] [16, 8] [1, 1] : tensor<16x16xf32> to tensor<16x8xf32>
// CHECK-NOT: %[[PACKED]]
// CHECK: return
#la = affine_map<(d0, d1, d2) -> (d0, d1)>
#lat = affine_map<(d0, d1, d2) -> (d1, d0)>
#lb = affine_map<(d0, d1, d2) -> (d1, d2)>
#lc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @lhs_read_two_ways(%x: tensor<16x16xf32>, %w: tensor<16x48xf32>, %acc: tensor<16x48xf32>) -> (tensor<16x48xf32>, tensor<16x48xf32>) {
  %0 = linalg.generic {indexing_maps = [#la, #lb, #lc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x16xf32>, tensor<16x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  %1 = linalg.generic {indexing_maps = [#lat, #lb, #lc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<16x16xf32>, tensor<16x48xf32>) outs(%acc : tensor<16x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<16x48xf32>
  return %0, %1 : tensor<16x48xf32>, tensor<16x48xf32>
}

// -----

// bf16 input and filter into an f32 result (a convolution under the bf16
// policy, or of a model exported in bf16) whose GEMM has whole tiles (16
// filters, 16 pixels, an even depth): im2col copies bf16 patches (a
// parallel loop over the taps and channels, or for a 16 x 16 patch
// embedding one generic over them), and the GEMM
// widens each product's operands as a narrow matmul does. With a partial
// tile (8 x 8 pixels of 3 x 3 taps: 36) the convolution takes linalg's
// im2col ([N, C*KH*KW, OH*OW] patches in bf16).
// CHECK-LABEL: func @bf16_convs
// CHECK: tensor.parallel_insert_slice %{{.*}} : tensor<1x1x1x1x4x4xbf16> into tensor<1x8x3x3x4x4xbf16>
// CHECK: vector.contract
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<1x3x64x64xbf16>) outs(%{{.*}} : tensor<1x3x16x16x4x4xbf16>)
// CHECK: vector.contract
// CHECK-NOT: tensor<1x8x3x3x6x6xbf16>
// CHECK: linalg.generic {{.*}} ins(%arg4 : tensor<1x8x8x8xbf16>) outs(%{{.*}} : tensor<1x72x36xbf16>)
func.func @bf16_convs(%x: tensor<1x8x6x6xbf16>, %w: tensor<16x8x3x3xbf16>, %p: tensor<1x3x64x64xbf16>, %pw: tensor<64x3x16x16xbf16>, %y: tensor<1x8x8x8xbf16>) -> (tensor<1x16x4x4xf32>, tensor<1x64x4x4xf32>, tensor<1x16x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xbf16>, tensor<16x8x3x3xbf16>) outs(%acc : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %e2 = tensor.empty() : tensor<1x64x4x4xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<16> : tensor<2xi64>} ins(%p, %pw : tensor<1x3x64x64xbf16>, tensor<64x3x16x16xbf16>) outs(%acc2 : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %e3 = tensor.empty() : tensor<1x16x6x6xf32>
  %acc3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %w : tensor<1x8x8x8xbf16>, tensor<16x8x3x3xbf16>) outs(%acc3 : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  return %0, %1, %2 : tensor<1x16x4x4xf32>, tensor<1x64x4x4xf32>, tensor<1x16x6x6xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Too few column panels for the threads (a convolution over a 7 x 7 image
// as 256 filters times 49 pixels: one panel of 48): the rows are blocked
// in the parallel loop too, 8 blocks of 32 (4 row tiles each, which read
// the rhs panel where it is).
// CHECK-LABEL: func @few_panels
func.func @few_panels(%x: tensor<256x576xf32>, %w: tensor<576x48xf32>, %acc: tensor<256x48xf32>) -> tensor<256x48xf32> {
  // CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (256, 48) step (32, 48)
  // CHECK-NOT: linalg.copy
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
  // CHECK-COUNT-24: vector.contract
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<256x576xf32>, tensor<576x48xf32>) outs(%acc : tensor<256x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<256x48xf32>
  return %0 : tensor<256x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Rows that 256 divides (512 filters times 49 pixels: the 48 of them) are
// blocked finer than 256 where 256-row blocks leave too few iterations:
// 8 blocks of 64.
// CHECK-LABEL: func @few_panels_tall
func.func @few_panels_tall(%x: tensor<512x576xf32>, %w: tensor<576x48xf32>, %acc: tensor<512x48xf32>) -> tensor<512x48xf32> {
  // CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (512, 48) step (64, 48)
  // CHECK-NOT: linalg.copy
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<512x576xf32>, tensor<576x48xf32>) outs(%acc : tensor<512x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<512x48xf32>
  return %0 : tensor<512x48xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>

// Not blocked: enough panels (8 of 48 columns), or too little work to
// share (256 x 8 x 48: fewer than 2^21 multiply-adds).
// CHECK-LABEL: func @enough_panels
// CHECK: scf.forall (%{{.*}}) = (0) to (384) step (48)
// CHECK: scf.forall (%{{.*}}) = (0) to (48) step (48)
func.func @enough_panels(%x: tensor<256x576xf32>, %w: tensor<576x384xf32>, %acc: tensor<256x384xf32>,
                         %y: tensor<256x8xf32>, %v: tensor<8x48xf32>, %acc2: tensor<256x48xf32>) -> (tensor<256x384xf32>, tensor<256x48xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<256x576xf32>, tensor<576x384xf32>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%y, %v : tensor<256x8xf32>, tensor<8x48xf32>) outs(%acc2 : tensor<256x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<256x48xf32>
  return %0, %1 : tensor<256x384xf32>, tensor<256x48xf32>
}

// -----

// A matrix times a vector (the contracted dim innermost, no columns) takes
// the GEMV kernel: blocks of 8 rows (4 for AVX2) on threads, each a loop over
// k in vectors of 16 (8 for AVX2) carrying one accumulator per row, the
// vector's values loaded once per step, then a sum per row added to the
// initial value. Rows no block fills (37 = 4 x 8 + 5) run one at a time;
// the k values after the last whole vector (100 = 6 x 16 + 4) one at a
// time; leading dims fold into the rows.
// CHECK-LABEL: func @matrix_vector
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (8) shared_outs(%[[O:.*]] = %arg2)
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8x16xf32>)
// CHECK: %[[A:.*]] = vector.transfer_read %arg0[%[[I]], %[[K]]], %{{.*}} {in_bounds = [true, true]} : tensor<64x256xf32>, vector<8x16xf32>
// CHECK: %[[X:.*]] = vector.transfer_read %arg1[%[[K]]], %{{.*}} {in_bounds = [true]} : tensor<256xf32>, vector<16xf32>
// CHECK: %[[XS:.*]] = vector.broadcast %[[X]] : vector<16xf32> to vector<8x16xf32>
// CHECK: vector.fma %[[A]], %[[XS]], %[[ACC]] : vector<8x16xf32>
// CHECK-COUNT-8: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK-NOT: scf.for
// CHECK: tensor.extract_slice %[[O]][%[[I]]] [8] [1]
// CHECK: vector.from_elements {{.*}} : vector<8xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[I]]] [8] [1]
// CHECK-NOT: scf.forall
// AVX2-LABEL: func @matrix_vector
// AVX2: scf.forall (%{{.*}}) = (0) to (64) step (4)
// AVX2: vector.fma {{.*}} : vector<4x8xf32>
// CHECK-LABEL: func @matrix_vector_tails
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<3x37x100xf32> into tensor<111x100xf32>
// CHECK: scf.forall (%{{.*}}) = (0) to (104) step (8)
// CHECK: vector.fma {{.*}} : vector<8x16xf32>
// CHECK: scf.for %{{.*}} = %c96 to %c100 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: scf.forall (%{{.*}}) = (104) to (111) step (1)
// CHECK: vector.fma {{.*}} : vector<1x16xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [3, 37] : tensor<111xf32> into tensor<3x37xf32>
// With dynamic rows and k, the ends of the whole blocks are computed at
// run time: both row loops and the k tail always exist.
// CHECK-LABEL: func @matrix_vector_dynamic
// CHECK: %[[DA:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x?x?xf32> into tensor<?x?xf32>
// CHECK: %[[M:.*]] = tensor.dim %[[DA]], %c0
// CHECK: %[[K:.*]] = tensor.dim %[[DA]], %c1
// CHECK: %[[MR:.*]] = arith.remui %[[M]], %c8
// CHECK: %[[ME:.*]] = arith.subi %[[M]], %[[MR]]
// CHECK: %[[KR:.*]] = arith.remui %[[K]], %c16
// CHECK: %[[KE:.*]] = arith.subi %[[K]], %[[KR]]
// CHECK: scf.forall (%{{.*}}) = (0) to (%[[ME]]) step (8)
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[KE]] step %c16
// CHECK: scf.for %{{.*}} = %[[KE]] to %[[K]] step %c1
// CHECK: scf.forall (%{{.*}}) = (%[[ME]]) to (%[[M]]) step (1)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, %{{.*}}] : tensor<?xf32> into tensor<2x?xf32>
// Rows back into several dynamic dims: a reshape (see @batch_not_folded).
// CHECK-LABEL: func @matrix_vector_dynamic_rows
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<?x3x?x40xf32> into tensor<?x40xf32>
// CHECK: scf.forall
// CHECK-NOT: tensor.expand_shape
// CHECK: tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?xf32>, tensor<3xindex>) -> tensor<?x3x?xf32>
func.func @matrix_vector(%a: tensor<64x256xf32>, %x: tensor<256xf32>, %acc: tensor<64xf32>) -> tensor<64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a, %x : tensor<64x256xf32>, tensor<256xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
func.func @matrix_vector_tails(%a: tensor<3x37x100xf32>, %x: tensor<100xf32>, %acc: tensor<3x37xf32>) -> tensor<3x37xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %a : tensor<100xf32>, tensor<3x37x100xf32>) outs(%acc : tensor<3x37xf32>) {
  ^bb0(%q: f32, %p: f32, %o: f32):
    %t = arith.mulf %q, %p : f32
    %s = arith.addf %t, %o : f32
    linalg.yield %s : f32
  } -> tensor<3x37xf32>
  return %0 : tensor<3x37xf32>
}
func.func @matrix_vector_dynamic(%a: tensor<2x?x?xf32>, %x: tensor<?xf32>, %acc: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %x : tensor<2x?x?xf32>, tensor<?xf32>) outs(%acc : tensor<2x?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}
func.func @matrix_vector_dynamic_rows(%a: tensor<?x3x?x40xf32>, %x: tensor<40xf32>, %acc: tensor<?x3x?xf32>) -> tensor<?x3x?xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %x : tensor<?x3x?x40xf32>, tensor<40xf32>) outs(%acc : tensor<?x3x?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x3x?xf32>
  return %0 : tensor<?x3x?xf32>
}

// -----

// Not the GEMV kernel: bf16 operands extended into f32 (it takes f32), and
// a matrix read across k (its rows along the matrix's last dim): both stay
// loop nests of dot products, which report-generic names (the last two
// remarks above). A sum of one operand is no contraction: no remark.
// CHECK-LABEL: func @matrix_vector_kept
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.fma
func.func @matrix_vector_kept(%a: tensor<64x256xbf16>, %x: tensor<256xbf16>, %t: tensor<256x64xf32>, %y: tensor<256xf32>, %acc: tensor<64xf32>, %fa: tensor<64x256xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a, %x : tensor<64x256xbf16>, tensor<256xbf16>) outs(%acc : tensor<64xf32>) {
  ^bb0(%p: bf16, %q: bf16, %o: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%t, %y : tensor<256x64xf32>, tensor<256xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%fa : tensor<64x256xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %0, %1, %2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
