#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fetches the teacher (docs/MODEL.md, "The teacher"): IMG.LY's ISNet from the npm package
# @imgly/background-removal-data 1.4.5, reassembled into two ONNX files:
#
#     training/teacher/fetch-teacher.sh [DIR]      # DIR defaults to training/teacher/.cache
#
# DIR/isnet-medium.onnx (fp16, 88,188,479 bytes) and DIR/isnet-small.onnx (44,342,436 bytes),
# from the chunks that the package's dist/resources.json lists for /models/medium and
# /models/small, in order. npm checks the tarball against the registry's integrity hash; this
# script checks every chunk's size and each model's total against resources.json, and prints
# each model's SHA-256. Needs npm and node (npm's own runtime). Run again: done work is kept.
#
# The package is AGPL-3.0 (the network is ISNet, xuebinqin/DIS, MIT): the files are for making
# training labels only. The default folder is ignored by git; never commit, ship or convert them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/.cache}
pkg=@imgly/background-removal-data@1.4.5
tarball=imgly-background-removal-data-1.4.5.tgz
mkdir -p "$dir"
cd "$dir"
if [ ! -f "$tarball" ]; then
    npm pack --silent "$pkg" >/dev/null   # about 136 MB
fi
if [ ! -f package/dist/resources.json ]; then
    tar xzf "$tarball"
fi
# resources.json: { "/models/medium": { "chunks": [{ "name", "offsets": [a, b] }...], "size" }, ... }
node - package/dist <<'JS'
const fs = require("fs"), path = require("path"), crypto = require("crypto");
const dist = process.argv[2];
const res = JSON.parse(fs.readFileSync(path.join(dist, "resources.json")));
for (const key of ["/models/medium", "/models/small"]) {
    const entry = res[key];
    if (!entry) throw new Error(`resources.json has no ${key}`);
    const out = `isnet-${path.basename(key)}.onnx`;
    const hash = crypto.createHash("sha256");
    const fd = fs.openSync(out + ".tmp", "w");
    let size = 0;
    for (const chunk of entry.chunks) {
        const data = fs.readFileSync(path.join(dist, chunk.hash || chunk.name));
        if (chunk.offsets && data.length !== chunk.offsets[1] - chunk.offsets[0])
            throw new Error(`${key}: chunk ${chunk.hash || chunk.name} is ${data.length} bytes, ` +
                            `resources.json says ${chunk.offsets[1] - chunk.offsets[0]}`);
        fs.writeSync(fd, data);
        hash.update(data);
        size += data.length;
    }
    fs.closeSync(fd);
    if (entry.size !== undefined && size !== entry.size)
        throw new Error(`${key}: ${size} bytes, resources.json says ${entry.size}`);
    fs.renameSync(out + ".tmp", out);
    console.log(`${hash.digest("hex")}  ${size} bytes  ${path.resolve(out)}  (${key}, ${entry.chunks.length} chunks)`);
}
JS
