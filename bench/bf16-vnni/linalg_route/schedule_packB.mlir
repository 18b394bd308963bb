// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    // register tile 8 x 32 (n outer, m inner), then the k-pair loop, then 1 x 16 pieces
    %t1, %ln = transform.structured.tile_using_for %g tile_sizes [0, 1, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t1b, %lm2 = transform.structured.tile_using_for %t1 tile_sizes [8, 0, 0, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t2, %lk = transform.structured.tile_using_for %t1b tile_sizes [0, 0, 0, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t3, %li, %lj = transform.structured.tile_using_for %t2 tile_sizes [1, 0, 16, 0, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.loop.unroll %lj { factor = 2 } : !transform.any_op
    transform.loop.unroll %li { factor = 8 } : !transform.any_op
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %f2 = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.fold_arith_extension
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.memref.fold_memref_alias_ops
    } : !transform.any_op
    transform.apply_cse to %f2 : !transform.any_op
    %f3 = transform.structured.hoist_redundant_vector_transfers %f2 : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f3 {
      transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product
    } : !transform.any_op
    transform.apply_patterns to %f3 {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %f3 : !transform.any_op
    transform.yield
  }
}
