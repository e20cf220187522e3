// SPDX-License-Identifier: Apache-2.0
// IMG.LY's remover (npm @imgly/background-removal-node) on photos, one after another in one
// process, as its users call it: removeBackground(path) with the package's defaults (the
// "medium" ISNet, 1024x1024 input, PNG out), each cut-out written to OUT_DIR. Driven by
// bench/imgly-cpu.sh, which installs the package; nothing of the package is in this file.
//
//   node bench/imgly-run.js MODULES_DIR OUT_DIR THREADS PHOTO...
//
// MODULES_DIR holds node_modules/@imgly/background-removal-node. THREADS goes to
// onnxruntime's intra-op pool (the package leaves it at onnxruntime's default, one per
// physical core). Prints one line per photo: the photo's whole time (decode, resize to
// 1024x1024, network, resize back, alpha, PNG encode, write) and the network's alone
// (InferenceSession.run), both in ms; then the start-up (loading the model, creating the
// session: the first call's cost before its photo).
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");
const { performance } = require("perf_hooks");

const [modulesDir, outDir, threadsArg, ...photos] = process.argv.slice(2);
if (!modulesDir || !outDir || !threadsArg || photos.length === 0) {
    console.error("usage: node bench/imgly-run.js MODULES_DIR OUT_DIR THREADS PHOTO...");
    process.exit(2);
}
const threads = parseInt(threadsArg, 10);
const req = createRequire(path.join(path.resolve(modulesDir), "package.json"));
// The package's own onnxruntime-node (npm hoists it beside the package; same module
// instance), so the timing wrapper below sees the package's calls.
const pkgDir = path.dirname(path.dirname(req.resolve("@imgly/background-removal-node")));   // .../dist/index.cjs
const ort = createRequire(path.join(pkgDir, "package.json"))("onnxruntime-node");
const imgly = req("@imgly/background-removal-node");

let created = 0, runMs = 0, runs = 0;
const create = ort.InferenceSession.create;
ort.InferenceSession.create = async function (model, options) {
    const session = await create.call(this, model, { ...options, intraOpNumThreads: threads });
    created = performance.now();
    return session;
};
const run = ort.InferenceSession.prototype.run;
ort.InferenceSession.prototype.run = async function (...args) {
    const t = performance.now();
    const result = await run.apply(this, args);
    runMs += performance.now() - t;
    runs++;
    return result;
};

(async () => {
    const config = {
        publicPath: "file://" + path.join(pkgDir, "dist") + "/",
        model: "medium",
        output: { format: "image/png" },
    };
    let startup = 0;
    for (const photo of photos) {
        const t0 = performance.now();
        runMs = 0;
        runs = 0;
        const blob = await imgly.removeBackground(path.resolve(photo), config);
        const out = path.join(outDir, path.basename(photo).replace(/\.[^.]*$/, "") + ".png");
        fs.writeFileSync(out + ".tmp", Buffer.from(await blob.arrayBuffer()));
        fs.renameSync(out + ".tmp", out);
        const t1 = performance.now();
        if (runs !== 1)
            throw new Error(`expected one network run per photo, saw ${runs}: the timing wrapper missed it`);
        // The first call loads the model and creates the session before its photo.
        const start = created > t0 ? created : t0;
        if (created > t0)
            startup = created - t0;
        console.log(`imgly photo=${photo} total_ms=${(t1 - start).toFixed(1)} network_ms=${runMs.toFixed(1)}`);
    }
    console.log(`imgly startup_ms=${startup.toFixed(1)} onnxruntime=${ort.env.versions ? ort.env.versions.common : "?"} ` +
                `threads=${threads}`);
})().catch((e) => {
    console.error(`imgly-run: ${e.stack || e}`);
    process.exit(1);
});
