#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `meson install` puts the GStreamer plug-in where gst-inspect-1.0 looks (gstreamer-1.0's
# pluginsdir, unless -Dgst_plugin_dir says otherwise) and backdrop-video with its man page
# beside the CLI:
# installed into a temporary folder, then gst-inspect-1.0 finds the element there with no
# GST_PLUGIN_PATH, only GStreamer's system path pointed into the folder.
#
#   tests/test-video-install.sh BUILD-DIR PLUGIN-DIR PREFIX LIBDIR BINDIR
set -euo pipefail
build=$1 plugindir=$2 prefix=$3 libdir=$4 bindir=$5
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
so=$dest$plugindir/libgstbackdrop.so
[[ -f $so ]] || { echo "MISSING: $plugindir/libgstbackdrop.so"; exit 1; }
if [[ -f $build/video/backdrop-video ]]; then
    [[ -x $dest$prefix/$bindir/backdrop-video ]] || { echo "MISSING: $prefix/$bindir/backdrop-video"; exit 1; }
    man=$(find "$dest$prefix" -name backdrop-video.1 | head -n 1)
    [[ -n $man ]] || { echo "MISSING: the man page backdrop-video.1"; exit 1; }
    if command -v mandoc >/dev/null; then mandoc -T lint -W warning "$man"; fi
fi
export LD_LIBRARY_PATH=$dest$prefix/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GST_PLUGIN_SYSTEM_PATH_1_0=$dest$plugindir GST_REGISTRY_1_0=$dest/registry.bin
unset GST_PLUGIN_PATH GST_PLUGIN_PATH_1_0
out=$(gst-inspect-1.0 backdrop)
grep -q "Filename *$so" <<<"$out" || { echo "gst-inspect-1.0 did not load $so:"; echo "$out" | head -20; exit 1; }
echo "installed: $plugindir/libgstbackdrop.so, found by gst-inspect-1.0"
