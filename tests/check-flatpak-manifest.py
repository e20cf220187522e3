#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Structural lint of the Flatpak manifest, which cannot be built here (no flatpak-builder,
no network for the runtime). Checks what flatpak-builder would reject or what would make a
build wrong: the keys and their types, the GNOME runtime and SDK, an id that matches the
desktop file and metainfo in data/, a command the build installs, meson options that exist
with values their type takes, sources that pin what they fetch, a `dir` source that is this
checkout, finish-args without blanket file access, and the comment that says it is unbuilt.

    tests/check-flatpak-manifest.py MANIFEST SOURCE-ROOT
"""
import os
import re
import sys

try:
    import yaml
except ImportError:
    print("python3-yaml is missing")
    sys.exit(77)

TOP_KEYS = {
    "id": str, "runtime": str, "runtime-version": str, "sdk": str, "command": str,
    "finish-args": list, "cleanup": list, "modules": list, "build-options": dict,
    "sdk-extensions": list, "add-extensions": dict, "rename-desktop-file": str,
    "rename-icon": str, "cleanup-commands": list, "separate-locales": bool,
}
MODULE_KEYS = {
    "name": str, "buildsystem": str, "config-opts": list, "build-commands": list,
    "post-install": list, "sources": list, "cleanup": list, "build-options": dict,
    "modules": list, "builddir": bool, "subdir": str, "make-args": list,
    "make-install-args": list, "no-autogen": bool,
}
BUILDSYSTEMS = {"meson", "cmake", "cmake-ninja", "autotools", "simple", "qmake"}
errors = []


def fail(message):
    errors.append(message)


def check_keys(where, value, known):
    if not isinstance(value, dict):
        fail(f"{where}: not a mapping")
        return
    for key, item in value.items():
        if key not in known:
            fail(f"{where}: unknown key {key!r}")
        elif not isinstance(item, known[key]):
            fail(f"{where}: {key!r} should be a {known[key].__name__}, not {type(item).__name__}")


def meson_options(root):
    """name -> (type, choices) from meson_options.txt."""
    options = {}
    with open(os.path.join(root, "meson_options.txt"), encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(r"option\(\s*'([^']+)'\s*,\s*type\s*:\s*'([^']+)'(.*?)\)\s*$", text, re.S | re.M):
        name, kind, rest = m.groups()
        choices = re.search(r"choices\s*:\s*\[([^\]]*)\]", rest)
        options[name] = (kind, re.findall(r"'([^']*)'", choices.group(1)) if choices else None)
    return options


def check_option(where, opt, options):
    m = re.fullmatch(r"-D([A-Za-z0-9_]+)=(.*)", opt)
    if not m:
        return  # meson's own switches (--buildtype=...) are not ours to check
    name, value = m.groups()
    if name in ("buildtype", "prefix", "libdir", "b_lto", "optimization"):
        return
    if name not in options:
        fail(f"{where}: -D{name}: no such option in meson_options.txt")
        return
    kind, choices = options[name]
    valid = {"feature": {"enabled", "disabled", "auto"}, "boolean": {"true", "false"},
             "combo": set(choices or [])}.get(kind)
    if valid is not None and value not in valid:
        fail(f"{where}: -D{name}={value}: a {kind} option takes {sorted(valid)}")


def check_source(where, source, manifest_dir, root):
    kind = source.get("type")
    if kind == "git":
        if not str(source.get("url", "")).startswith("https://"):
            fail(f"{where}: a git source needs an https url")
        if not re.fullmatch(r"[0-9a-f]{40}", str(source.get("commit", ""))):
            fail(f"{where}: a git source must pin a 40-digit commit")
    elif kind in ("archive", "file"):
        if "path" not in source and not re.fullmatch(r"[0-9a-f]{64}", str(source.get("sha256", ""))):
            fail(f"{where}: an {kind} source needs a sha256")
    elif kind == "dir":
        path = os.path.realpath(os.path.join(manifest_dir, str(source.get("path", ""))))
        if path != os.path.realpath(root):
            fail(f"{where}: the dir source {source.get('path')!r} is {path}, not this checkout")
    else:
        fail(f"{where}: unknown source type {kind!r}")


def main(manifest, root):
    with open(manifest, encoding="utf-8") as f:
        text = f.read()
    data = yaml.safe_load(text)
    if "NOT BUILT HERE" not in text:
        fail("the manifest must say, in a comment, that it is not built here")
    check_keys("manifest", data, TOP_KEYS)
    for key in ("id", "runtime", "runtime-version", "sdk", "command", "modules"):
        if key not in data:
            fail(f"manifest: {key!r} is missing")
    if errors:
        return
    if data["runtime"] != "org.gnome.Platform" or data["sdk"] != "org.gnome.Sdk":
        fail("the runtime must be GNOME's (org.gnome.Platform with org.gnome.Sdk)")
    if not re.fullmatch(r"\d+", data["runtime-version"]):
        fail(f"runtime-version {data['runtime-version']!r} is not a GNOME release number")

    app_id = data["id"]
    if os.path.basename(manifest).rsplit(".", 1)[0] != app_id:
        fail(f"the manifest's file name should be {app_id}.yml")
    for suffix in (".desktop.in", ".metainfo.xml.in"):
        if not os.path.isfile(os.path.join(root, "data", app_id + suffix)):
            fail(f"id {app_id}: data/{app_id}{suffix} does not exist (the ids differ)")

    executables = set()
    for folder, dirs, files in os.walk(root):
        # Build folders and git's own are not the project's sources.
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        if "meson.build" in files:
            with open(os.path.join(folder, "meson.build"), encoding="utf-8") as f:
                executables |= set(re.findall(r"executable\(\s*'([^']+)'", f.read()))
    if data["command"] not in executables:
        fail(f"command {data['command']!r} is no executable of the build")

    for arg in data.get("finish-args", []):
        if not isinstance(arg, str) or not arg.startswith("--"):
            fail(f"finish-args: {arg!r} is not an option")
        elif re.match(r"--filesystem=(host|home)", arg):
            fail(f"finish-args: {arg}: photos come through the portals, no blanket file access")
    if len(set(data.get("finish-args", []))) != len(data.get("finish-args", [])):
        fail("finish-args: an argument is given twice")

    options = meson_options(root)
    names = []
    for i, module in enumerate(data["modules"]):
        where = f"module {module.get('name', i)!r}" if isinstance(module, dict) else f"module {i}"
        check_keys(where, module, MODULE_KEYS)
        if not isinstance(module, dict):
            continue
        names.append(module.get("name"))
        if module.get("buildsystem") not in BUILDSYSTEMS:
            fail(f"{where}: buildsystem {module.get('buildsystem')!r}")
        if not module.get("sources"):
            fail(f"{where}: no sources")
        for source in module.get("sources", []):
            check_source(where, source, os.path.dirname(os.path.abspath(manifest)), root)
        if module.get("name") == "backdrop":
            for opt in module.get("config-opts", []):
                check_option(where, opt, options)
    if not names or names[-1] != "backdrop":
        fail("the last module must be backdrop itself")
    if len(set(names)) != len(names):
        fail("two modules have one name")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
    for e in errors:
        print("flatpak manifest:", e)
    if not errors:
        print(f"{sys.argv[1]}: structure, id, command, options and sources check out (not built: see its header)")
    sys.exit(1 if errors else 0)
