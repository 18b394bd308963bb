// ort_reference.js - computes a model's reference outputs with ONNX Runtime
// (npm onnxruntime-node), for models that no framework here can run (models
// exported from other frameworks). Used by scripts/gen_thirdparty.py.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Usage: node ort_reference.js MODEL.onnx DIR
// DIR/inputs.json: [{"name", "shape": [...], "file"}], each file raw
// little-endian float32. Writes DIR/output_N.raw (float32) and
// DIR/outputs.json: [{"name", "shape", "file"}]. One thread, no graph
// optimizations beyond the basic ones, so the reference is plain arithmetic.
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

async function main() {
  const [model, dir] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'basic',
  });
  const feeds = {};
  for (const input of JSON.parse(
           fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'))) {
    const bytes = fs.readFileSync(path.join(dir, input.file));
    const data = new Float32Array(bytes.buffer, bytes.byteOffset,
                                  bytes.byteLength / 4);
    feeds[input.name] = new ort.Tensor('float32', data.slice(), input.shape);
  }
  const results = await session.run(feeds);
  const outputs = [];
  session.outputNames.forEach((name, i) => {
    const tensor = results[name];
    if (tensor.type !== 'float32')
      throw new Error(`output '${name}' is ${tensor.type}, not float32`);
    const file = `output_${i}.raw`;
    fs.writeFileSync(path.join(dir, file), Buffer.from(tensor.data.buffer,
                     tensor.data.byteOffset, tensor.data.byteLength));
    outputs.push({name, shape: tensor.dims, file});
  });
  fs.writeFileSync(path.join(dir, 'outputs.json'), JSON.stringify(outputs));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
