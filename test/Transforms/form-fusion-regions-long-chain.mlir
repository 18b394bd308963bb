// RUN: tessera-opt %s --tessera-form-fusion-regions | FileCheck %s
// RUN: tessera-opt %s --tessera-form-fusion-regions="target=systolic" | FileCheck %s --check-prefix=SYSTOLIC

// A chain of 130 elementwise ops: on the CPU, whose TargetInfo holds at
// most 64 ops in one elementwise region, regions of 64, 64 and 2 in order
// (the first two identical kernels).
// CHECK-LABEL: func.func @long_chain
// CHECK: tessera.fusion elementwise
// CHECK-COUNT-64: tessera.{{relu|neg|abs|sigmoid}}
// CHECK-NEXT: tessera.yield
// CHECK: tessera.fusion elementwise
// CHECK-COUNT-64: tessera.{{relu|neg|abs|sigmoid}}
// CHECK-NEXT: tessera.yield
// CHECK: tessera.fusion elementwise
// CHECK-NEXT: tessera.relu
// CHECK-NEXT: tessera.neg
// CHECK-NEXT: tessera.yield
// CHECK-NOT: tessera.fusion
// Not split: a target without a limit (the systolic accelerator's) keeps
// one region.
// SYSTOLIC-COUNT-1: tessera.fusion elementwise
// SYSTOLIC-NOT: tessera.fusion
func.func @long_chain(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = tessera.relu %x : tensor<64xf32>
  %1 = tessera.neg %0 : tensor<64xf32>
  %2 = tessera.abs %1 : tensor<64xf32>
  %3 = tessera.sigmoid %2 : tensor<64xf32>
  %4 = tessera.relu %3 : tensor<64xf32>
  %5 = tessera.neg %4 : tensor<64xf32>
  %6 = tessera.abs %5 : tensor<64xf32>
  %7 = tessera.sigmoid %6 : tensor<64xf32>
  %8 = tessera.relu %7 : tensor<64xf32>
  %9 = tessera.neg %8 : tensor<64xf32>
  %10 = tessera.abs %9 : tensor<64xf32>
  %11 = tessera.sigmoid %10 : tensor<64xf32>
  %12 = tessera.relu %11 : tensor<64xf32>
  %13 = tessera.neg %12 : tensor<64xf32>
  %14 = tessera.abs %13 : tensor<64xf32>
  %15 = tessera.sigmoid %14 : tensor<64xf32>
  %16 = tessera.relu %15 : tensor<64xf32>
  %17 = tessera.neg %16 : tensor<64xf32>
  %18 = tessera.abs %17 : tensor<64xf32>
  %19 = tessera.sigmoid %18 : tensor<64xf32>
  %20 = tessera.relu %19 : tensor<64xf32>
  %21 = tessera.neg %20 : tensor<64xf32>
  %22 = tessera.abs %21 : tensor<64xf32>
  %23 = tessera.sigmoid %22 : tensor<64xf32>
  %24 = tessera.relu %23 : tensor<64xf32>
  %25 = tessera.neg %24 : tensor<64xf32>
  %26 = tessera.abs %25 : tensor<64xf32>
  %27 = tessera.sigmoid %26 : tensor<64xf32>
  %28 = tessera.relu %27 : tensor<64xf32>
  %29 = tessera.neg %28 : tensor<64xf32>
  %30 = tessera.abs %29 : tensor<64xf32>
  %31 = tessera.sigmoid %30 : tensor<64xf32>
  %32 = tessera.relu %31 : tensor<64xf32>
  %33 = tessera.neg %32 : tensor<64xf32>
  %34 = tessera.abs %33 : tensor<64xf32>
  %35 = tessera.sigmoid %34 : tensor<64xf32>
  %36 = tessera.relu %35 : tensor<64xf32>
  %37 = tessera.neg %36 : tensor<64xf32>
  %38 = tessera.abs %37 : tensor<64xf32>
  %39 = tessera.sigmoid %38 : tensor<64xf32>
  %40 = tessera.relu %39 : tensor<64xf32>
  %41 = tessera.neg %40 : tensor<64xf32>
  %42 = tessera.abs %41 : tensor<64xf32>
  %43 = tessera.sigmoid %42 : tensor<64xf32>
  %44 = tessera.relu %43 : tensor<64xf32>
  %45 = tessera.neg %44 : tensor<64xf32>
  %46 = tessera.abs %45 : tensor<64xf32>
  %47 = tessera.sigmoid %46 : tensor<64xf32>
  %48 = tessera.relu %47 : tensor<64xf32>
  %49 = tessera.neg %48 : tensor<64xf32>
  %50 = tessera.abs %49 : tensor<64xf32>
  %51 = tessera.sigmoid %50 : tensor<64xf32>
  %52 = tessera.relu %51 : tensor<64xf32>
  %53 = tessera.neg %52 : tensor<64xf32>
  %54 = tessera.abs %53 : tensor<64xf32>
  %55 = tessera.sigmoid %54 : tensor<64xf32>
  %56 = tessera.relu %55 : tensor<64xf32>
  %57 = tessera.neg %56 : tensor<64xf32>
  %58 = tessera.abs %57 : tensor<64xf32>
  %59 = tessera.sigmoid %58 : tensor<64xf32>
  %60 = tessera.relu %59 : tensor<64xf32>
  %61 = tessera.neg %60 : tensor<64xf32>
  %62 = tessera.abs %61 : tensor<64xf32>
  %63 = tessera.sigmoid %62 : tensor<64xf32>
  %64 = tessera.relu %63 : tensor<64xf32>
  %65 = tessera.neg %64 : tensor<64xf32>
  %66 = tessera.abs %65 : tensor<64xf32>
  %67 = tessera.sigmoid %66 : tensor<64xf32>
  %68 = tessera.relu %67 : tensor<64xf32>
  %69 = tessera.neg %68 : tensor<64xf32>
  %70 = tessera.abs %69 : tensor<64xf32>
  %71 = tessera.sigmoid %70 : tensor<64xf32>
  %72 = tessera.relu %71 : tensor<64xf32>
  %73 = tessera.neg %72 : tensor<64xf32>
  %74 = tessera.abs %73 : tensor<64xf32>
  %75 = tessera.sigmoid %74 : tensor<64xf32>
  %76 = tessera.relu %75 : tensor<64xf32>
  %77 = tessera.neg %76 : tensor<64xf32>
  %78 = tessera.abs %77 : tensor<64xf32>
  %79 = tessera.sigmoid %78 : tensor<64xf32>
  %80 = tessera.relu %79 : tensor<64xf32>
  %81 = tessera.neg %80 : tensor<64xf32>
  %82 = tessera.abs %81 : tensor<64xf32>
  %83 = tessera.sigmoid %82 : tensor<64xf32>
  %84 = tessera.relu %83 : tensor<64xf32>
  %85 = tessera.neg %84 : tensor<64xf32>
  %86 = tessera.abs %85 : tensor<64xf32>
  %87 = tessera.sigmoid %86 : tensor<64xf32>
  %88 = tessera.relu %87 : tensor<64xf32>
  %89 = tessera.neg %88 : tensor<64xf32>
  %90 = tessera.abs %89 : tensor<64xf32>
  %91 = tessera.sigmoid %90 : tensor<64xf32>
  %92 = tessera.relu %91 : tensor<64xf32>
  %93 = tessera.neg %92 : tensor<64xf32>
  %94 = tessera.abs %93 : tensor<64xf32>
  %95 = tessera.sigmoid %94 : tensor<64xf32>
  %96 = tessera.relu %95 : tensor<64xf32>
  %97 = tessera.neg %96 : tensor<64xf32>
  %98 = tessera.abs %97 : tensor<64xf32>
  %99 = tessera.sigmoid %98 : tensor<64xf32>
  %100 = tessera.relu %99 : tensor<64xf32>
  %101 = tessera.neg %100 : tensor<64xf32>
  %102 = tessera.abs %101 : tensor<64xf32>
  %103 = tessera.sigmoid %102 : tensor<64xf32>
  %104 = tessera.relu %103 : tensor<64xf32>
  %105 = tessera.neg %104 : tensor<64xf32>
  %106 = tessera.abs %105 : tensor<64xf32>
  %107 = tessera.sigmoid %106 : tensor<64xf32>
  %108 = tessera.relu %107 : tensor<64xf32>
  %109 = tessera.neg %108 : tensor<64xf32>
  %110 = tessera.abs %109 : tensor<64xf32>
  %111 = tessera.sigmoid %110 : tensor<64xf32>
  %112 = tessera.relu %111 : tensor<64xf32>
  %113 = tessera.neg %112 : tensor<64xf32>
  %114 = tessera.abs %113 : tensor<64xf32>
  %115 = tessera.sigmoid %114 : tensor<64xf32>
  %116 = tessera.relu %115 : tensor<64xf32>
  %117 = tessera.neg %116 : tensor<64xf32>
  %118 = tessera.abs %117 : tensor<64xf32>
  %119 = tessera.sigmoid %118 : tensor<64xf32>
  %120 = tessera.relu %119 : tensor<64xf32>
  %121 = tessera.neg %120 : tensor<64xf32>
  %122 = tessera.abs %121 : tensor<64xf32>
  %123 = tessera.sigmoid %122 : tensor<64xf32>
  %124 = tessera.relu %123 : tensor<64xf32>
  %125 = tessera.neg %124 : tensor<64xf32>
  %126 = tessera.abs %125 : tensor<64xf32>
  %127 = tessera.sigmoid %126 : tensor<64xf32>
  %128 = tessera.relu %127 : tensor<64xf32>
  %129 = tessera.neg %128 : tensor<64xf32>
  return %129 : tensor<64xf32>
}
