// ort_runner.js - times a model with ONNX Runtime (npm onnxruntime-node), the CPU reference.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Usage: node ort_runner.js MODEL.onnx THREADS RUNS INPUT.json
// INPUT.json: [{"name", "type": "float32"|"int64"|"bool", "shape": [...]}]; inputs
// are filled with a fixed pattern. Prints {"median_ms": ..., "min_ms": ...}.
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
  const [model, threads, runs, spec] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const input of JSON.parse(fs.readFileSync(spec, 'utf8'))) {
    const count = input.shape.reduce((a, b) => a * b, 1);
    const data = input.type === 'int64'
        ? BigInt64Array.from({length: count}, (_, i) => BigInt(i % 7))
        : input.type === 'bool'
        ? Uint8Array.from({length: count}, (_, i) => (i % 5 === 4 ? 1 : 0))
        : Float32Array.from({length: count}, (_, i) => ((i % 13) - 6) / 7);
    feeds[input.name] = new ort.Tensor(input.type, data, input.shape);
  }
  for (let i = 0; i < 3; ++i)
    await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify(
      {median_ms: times[Math.floor(times.length / 2)], min_ms: times[0]}));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
