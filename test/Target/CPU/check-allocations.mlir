// RUN: tessera-opt %s --split-input-file --tessera-cpu-check-allocations --verify-diagnostics | FileCheck %s

// A function's allocation: a null result returns at once (poison result).
// CHECK-LABEL: llvm.func @allocates
// CHECK-NEXT: %[[P:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%{{.*}})
// CHECK-NEXT: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[NULL:.*]] = llvm.icmp "eq" %[[P]], %[[Z]] : !llvm.ptr
// CHECK-NEXT: llvm.cond_br %[[NULL]], ^[[EXIT:.*]], ^[[REST:.*]]
// CHECK-NEXT: ^[[REST]]:
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.return %[[P]] : !llvm.ptr
// CHECK-NEXT: ^[[EXIT]]:
// CHECK-NEXT: %[[POISON:.*]] = llvm.mlir.poison : !llvm.ptr
// CHECK-NEXT: llvm.return %[[POISON]] : !llvm.ptr

// An allocation in a parallel loop ends its iteration; after the parallel
// region the function returns when the failure count changed.
// CHECK-LABEL: llvm.func @parallel
// CHECK-NEXT: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[START:.*]] = llvm.call @tesseraAllocationFailures(%[[NONE]])
// CHECK: omp.parallel
// CHECK: omp.loop_nest
// CHECK: %[[Q:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK: %[[QNULL:.*]] = llvm.icmp "eq" %[[Q]]
// CHECK-NEXT: llvm.cond_br %[[QNULL]], ^[[SKIP:.*]], ^[[BODY:.*]]
// CHECK-NEXT: ^[[BODY]]:
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free
// CHECK-NEXT: omp.yield
// CHECK-NEXT: ^[[SKIP]]:
// CHECK-NEXT: omp.yield
// CHECK: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: llvm.mlir.zero
// CHECK-NEXT: %[[NOW:.*]] = llvm.call @tesseraAllocationFailures
// CHECK-NEXT: %[[CHANGED:.*]] = llvm.icmp "ne" %[[NOW]], %[[START]] : i64
// CHECK-NEXT: llvm.cond_br %[[CHANGED]], ^[[OUT:.*]], ^[[AFTER:.*]]
// CHECK-NEXT: ^[[AFTER]]:
// CHECK-NEXT: llvm.return
// CHECK-NEXT: ^[[OUT]]:
// CHECK-NEXT: llvm.return

// A caller of a function that may fail returns after it when the count
// changed.
// CHECK-LABEL: llvm.func @caller
// CHECK: %[[S:.*]] = llvm.call @tesseraAllocationFailures
// CHECK-NEXT: llvm.call @parallel
// CHECK-NEXT: %[[N2:.*]] = llvm.mlir.zero
// CHECK-NEXT: %[[C:.*]] = llvm.call @tesseraAllocationFailures(%[[N2]])
// CHECK-NEXT: llvm.icmp "ne" %[[C]], %[[S]]

// Must not fire: a function that neither allocates nor calls one that does.
// CHECK-LABEL: llvm.func @pure
// CHECK-NEXT: llvm.call @leaf
// CHECK-NEXT: llvm.return
// CHECK-NOT: ^bb

// CHECK: llvm.func @tesseraAllocationFailures(!llvm.ptr) -> i64

llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)

llvm.func @allocates(%n: i64, %v: f32) -> !llvm.ptr {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.store %v, %p : f32, !llvm.ptr
  llvm.return %p : !llvm.ptr
}

llvm.func @parallel(%n: i64, %v: f32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c64 = llvm.mlir.constant(64 : i64) : i64
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%n) step (%c1) {
        %q = llvm.call @_mlir_memref_to_llvm_aligned_alloc(%c64, %n) : (i64, i64) -> !llvm.ptr
        llvm.store %v, %q : f32, !llvm.ptr
        llvm.call @_mlir_memref_to_llvm_free(%q) : (!llvm.ptr) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}

llvm.func @caller(%n: i64, %v: f32) {
  llvm.call @parallel(%n, %v) : (i64, f32) -> ()
  llvm.return
}

llvm.func @leaf() {
  llvm.return
}

llvm.func @pure() {
  llvm.call @leaf() : () -> ()
  llvm.return
}

// -----

// Must not fire: a module without allocations gets nothing, not even the
// counter's declaration.
// CHECK-LABEL: llvm.func @no_allocations
// CHECK-NOT: tesseraAllocationFailures
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @no_allocations(%n: i64) -> !llvm.ptr {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
}

// -----

// An allocation directly in a parallel region (each thread's share of
// the iterations, as tessera-cpu-static-chunks leaves it): the thread's
// share ends, to the region's terminator; the check after the region stops
// the function.
// CHECK-LABEL: llvm.func @in_region
// CHECK: omp.parallel
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.cond_br %{{.*}}, ^[[SKIP:.*]], ^[[REST:.*]]
// CHECK: ^[[REST]]:
// CHECK-NEXT: omp.terminator
// CHECK: ^[[SKIP]]:
// CHECK-NEXT: omp.terminator
// CHECK: llvm.call @tesseraAllocationFailures
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @in_region(%n: i64) {
  omp.parallel {
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    omp.terminator
  }
  llvm.return
}

// -----

// An allocation directly in a parallel region that also holds a
// worksharing loop cannot leave early without hanging the team (the loop's
// barrier waits for every thread): an error.
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @with_loop(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  omp.parallel {
    // expected-error @+1 {{cannot check an allocation inside 'omp.parallel'}}
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}
