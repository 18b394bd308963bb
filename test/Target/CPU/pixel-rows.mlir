// RUN: tessera-opt %s --tessera-cpu-tile-contractions | FileCheck %s --check-prefix=AVX512
// RUN: tessera-opt %s --tessera-cpu-tile-contractions="vector-bits=256" | FileCheck %s --check-prefix=AVX2

// Whether a static convolution's pixels are whole vectors depends on the
// register tile's lanes: 2 images of 4 x 6 = 24 pixels are not whole
// AVX-512 vectors (16 lanes), so the pixels become the GEMM's rows (the
// product [2, 24, 64] transposed back to [2, 64, 24]), its epilogue's
// input per image and filter ([N, F]) read by the product's loops (n, f);
// under AVX2 (8 lanes) 24 pixels are 3 whole vectors and the filters stay
// the rows (4 x 24 tiles of 8-lane vectors), with no transpose.
// AVX512-LABEL: func @lanes
// AVX512: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<2x16x3x3x4x6xf32> into tensor<2x144x24xf32>
// AVX512: scf.forall
// AVX512: vector.contract {{.*}} into vector<1x1x16xf32>
// AVX512: tensor.extract_slice %{{.*}}[%[[N:.*]], %[[F:.*]]] [1, 48] [1, 1] : tensor<2x48xf32> to tensor<1x48xf32>
// AVX512: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x24x48xf32>, tensor<1x48xf32>)
// AVX512: arith.addf
// AVX512: linalg.transpose ins(%{{.*}} : tensor<2x24x64xf32>) outs(%{{.*}} : tensor<2x64x24xf32>) permutation = [0, 2, 1]
// AVX512: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, 64, 4, 6]
// AVX2-LABEL: func @lanes
// AVX2-NOT: linalg.transpose ins(%{{.*}} : tensor<2x24x64xf32>)
// AVX2: vector.contract {{.*}} into vector<1x1x8xf32>
// AVX2-NOT: linalg.transpose ins(%{{.*}} : tensor<2x24x64xf32>)
// AVX2: return
func.func @lanes(%x: tensor<2x16x6x8xf32>, %w: tensor<64x16x3x3xf32>, %g: tensor<2x64xf32>) -> tensor<2x64x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x4x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x4x6xf32>) -> tensor<2x64x4x6xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x16x6x8xf32>, tensor<64x16x3x3xf32>) outs(%acc : tensor<2x64x4x6xf32>) -> tensor<2x64x4x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %g : tensor<2x64x4x6xf32>, tensor<2x64xf32>) outs(%e : tensor<2x64x4x6xf32>) {
  ^bb0(%v: f32, %gate: f32, %o: f32):
    %s = arith.addf %v, %gate : f32
    linalg.yield %s : f32
  } -> tensor<2x64x4x6xf32>
  return %r : tensor<2x64x4x6xf32>
}

// More taps than 7 x 7 (a ViT's 16 x 16 patches at stride 16, here 2 x 2
// of them) are copied by one generic over the patches; 4 pixels are not
// whole vectors under either ISA, so the pixels are the rows there too.
// AVX512-LABEL: func @patches
// AVX512: linalg.generic {{.*}} ins(%arg0 : tensor<1x3x32x32xf32>) outs(%{{.*}} : tensor<1x3x16x16x2x2xf32>)
// AVX512: linalg.transpose ins(%{{.*}} : tensor<1x4x64xf32>) outs(%{{.*}} : tensor<1x64x4xf32>) permutation = [0, 2, 1]
// AVX2-LABEL: func @patches
// AVX2: linalg.transpose ins(%{{.*}} : tensor<1x4x64xf32>) outs(%{{.*}} : tensor<1x64x4xf32>) permutation = [0, 2, 1]
func.func @patches(%x: tensor<1x3x32x32xf32>, %w: tensor<64x3x16x16xf32>) -> tensor<1x64x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x2x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x2x2xf32>) -> tensor<1x64x2x2xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<16> : tensor<2xi64>} ins(%x, %w : tensor<1x3x32x32xf32>, tensor<64x3x16x16xf32>) outs(%acc : tensor<1x64x2x2xf32>) -> tensor<1x64x2x2xf32>
  return %0 : tensor<1x64x2x2xf32>
}
