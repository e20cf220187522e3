#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Person-free photos and cut-out objects from Debian packages, as hard negatives:

    fetch_negatives.py --dst .data

The shipped data sets have few person-free photos (DAVIS frames of streets and animals, the
margins of street-fashion photos), and a model trained on them learns "the sharp subject in
the middle is a person": it paints close-ups of flowers, birds and buildings. Debian's
wallpaper packages hold nature, animal, city and still-life photos with no one in them, and
Tux Paint's stamps are photos of animals, food, plants, tools, instruments and vehicles cut
out with an alpha channel, which training pastes as distractors beside and in front of people.

Every package is pinned by version and SHA-256 and fetched from deb.debian.org; only the files
listed below are kept. Writes
    DST/debian-negatives/images/<package>-<name>.webp   photos, long side <= 1024, WebP q85
    DST/debian-objects/objects/<name>.png               RGBA cut-outs, long side <= 512
"""
import argparse
import hashlib
import io
import lzma
import os
import tarfile
import urllib.request

from PIL import Image

MIRROR = "http://deb.debian.org/debian/"

# package -> (pool path, SHA-256, licence of the files kept)
PACKAGES = {
    "budgie-backgrounds": ("pool/main/b/budgie-backgrounds/budgie-backgrounds_3.0-1_all.deb",
                           "b91c2d5209558bc11d8d3a161f22a608857e3f8c735980cfab0d6650b03014ca", "CC0-1.0"),
    "mate-backgrounds": ("pool/main/m/mate-backgrounds/mate-backgrounds_1.26.0-1_all.deb",
                         "7bf4c2209f34b4f61ba6d24c8b58c28b361e82e4b943aae6d42c030169af9e04", "GPL-2+"),
    "lomiri-wallpapers-16.04": ("pool/main/l/lomiri-wallpapers/lomiri-wallpapers-16.04_20.04.0-4_all.deb",
                                "f74676719f9d0128e5310e65ef97d596bcece8b6a43524ab8949ee1be0a4f18c",
                                "CC-BY-SA-3.0 / CC-BY-4.0 / CC-BY-SA-4.0 (per file)"),
    "lomiri-wallpapers-20.04": ("pool/main/l/lomiri-wallpapers/lomiri-wallpapers-20.04_20.04.0-4_all.deb",
                                "fbf4c3bcbfea7f70bc1f5ed270fe97995119d02e9102715e0377d877ee848b0b",
                                "CC-BY-SA-3.0 / CC-BY-4.0 (per file)"),
    "tuxpaint-stamps-default": ("pool/main/t/tuxpaint-stamps/tuxpaint-stamps-default_2025.03.31-1_all.deb",
                                "6312d03a37d0220b10fc91a7467bf2a2a2336e08c2f416de04311d25fd7aeacb", "GPL-2"),
}

# Photos kept, by file name. Left out: illustrations and abstract art, and
# budgie's extreme-desert-hike.jpg, which shows hikers.
PHOTOS = {
    "budgie-backgrounds": [
        "abstract-spiral.jpg", "beacon-street-sunset.jpg", "blue-periwinkle.jpg", "canyon-wren.jpg",
        "casa-mila.jpg", "high-trestle-trail.jpg", "lake-sherburne.jpg", "oakland-zoo-otters.jpg",
        "ocean-waves.jpg", "perched-osprey.jpg", "piazza-gae-aulenti.jpg", "roman-colosseum.jpg",
        "singaporean-cityscape.jpg", "tea-gardens.jpg"],
    "mate-backgrounds": [
        "Aqua.jpg", "Blinds.jpg", "Dune.jpg", "FreshFlower.jpg", "Garden.jpg", "GreenMeadow.jpg",
        "LadyBird.jpg", "RainDrops.jpg", "Storm.jpg", "TwoWings.jpg", "Wood.jpg", "YellowFlower.jpg",
        "Elephants.jpg"],
    "lomiri-wallpapers-16.04": [
        "Bridge_by_Sander_Klootwijk.jpg", "Dragonfly_by_Bolly.jpg", "Picture_0B_by_freespace.jpg",
        "Picture_1A_by_freespace.jpg", "Wine_by_Jakkub_Mede.jpg", "aitzgorri_by_Aitzol_Berasategi.jpg",
        "free_by_Peter_Nerlich.jpg", "friends_by_Aitzol_Berasategi.jpg", "greentock_by_Peter_Nerlich.jpg",
        "life_by_Aitzol_Berasategi.jpg", "picosdeeuropa_by_Aitzol_Berasategi.jpg",
        "seeding_by_Clements_Engelhardt.jpg", "sunset_by_Aitzol_Berasategi.jpg"],
    "lomiri-wallpapers-20.04": ["Infinite-Sea_by_Aury88.jpg", "Kleiber_by_Lukas_Baubkus.jpg"],
}

# Tux Paint stamp folders kept (photos of things that are not people). Left out: people,
# clothes, symbols, seasonal figures, sports, every "cartoon" folder, and stamps with few
# colours (drawings rather than photos).
STAMP_FOLDERS = ("animals/", "food/", "plants/", "household/", "vehicles/", "town/houses/",
                 "hobbies/music/", "military/vehicles/")
STAMP_ROOT = "./usr/share/tuxpaint/stamps/"


def fetch(name, cache):
    path, sha, _ = PACKAGES[name]
    local = os.path.join(cache, os.path.basename(path))
    if not os.path.exists(local):
        with urllib.request.urlopen(MIRROR + path) as r, open(local + ".part", "wb") as f:
            f.write(r.read())
        os.replace(local + ".part", local)
    with open(local, "rb") as f:
        blob = f.read()
    if hashlib.sha256(blob).hexdigest() != sha:
        raise SystemExit(f"fetch_negatives: {local}: SHA-256 mismatch (delete it and run again)")
    return blob


def deb_members(blob):
    """The files of a .deb's data archive: (path, bytes). A .deb is an ar archive."""
    if not blob.startswith(b"!<arch>\n"):
        raise SystemExit("fetch_negatives: not a .deb")
    pos = 8
    while pos < len(blob):
        header = blob[pos:pos + 60]
        name, size = header[:16].decode().strip().rstrip("/"), int(header[48:58])
        body = blob[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name.startswith("data.tar"):
            data = lzma.decompress(body) if name.endswith(".xz") else body
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                for m in tar.getmembers():
                    if m.isfile():
                        yield m.name, tar.extractfile(m).read()
            return
    raise SystemExit("fetch_negatives: no data archive in the .deb")


def is_photo_stamp(img):
    """Photos have many colours; Tux Paint's drawings have few."""
    small = img.convert("RGBA")
    small.thumbnail((128, 128))
    px = [p[:3] for p in small.getdata() if p[3] > 128]
    return len(px) > 500 and len({(r >> 3, g >> 3, b >> 3) for r, g, b in px}) >= 300


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dst", required=True, help="the packed data folder (e.g. .data)")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "backdrop-debs"))
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    photo_dir = os.path.join(args.dst, "debian-negatives", "images")
    object_dir = os.path.join(args.dst, "debian-objects", "objects")
    os.makedirs(photo_dir, exist_ok=True)
    os.makedirs(object_dir, exist_ok=True)
    photos = objects = 0
    for name in PACKAGES:
        wanted = set(PHOTOS.get(name, ()))
        for path, raw in deb_members(fetch(name, args.cache)):
            base = os.path.basename(path)
            if base in wanted:
                img = Image.open(io.BytesIO(raw)).convert("RGB")
                img.thumbnail((1024, 1024), Image.LANCZOS)
                stem = name.split("-")[0] + "-" + os.path.splitext(base)[0]
                img.save(os.path.join(photo_dir, stem + ".webp"), "WEBP", quality=85, method=6)
                wanted.discard(base)
                photos += 1
            elif (path.startswith(STAMP_ROOT) and path.endswith(".png") and "/cartoon/" not in path
                  and not path.endswith("_mirror.png")
                  and path[len(STAMP_ROOT):].startswith(STAMP_FOLDERS)):
                img = Image.open(io.BytesIO(raw)).convert("RGBA")
                if not is_photo_stamp(img):
                    continue
                img.thumbnail((512, 512), Image.LANCZOS)
                stem = os.path.splitext(path[len(STAMP_ROOT):])[0].replace("/", "-")
                img.save(os.path.join(object_dir, stem + ".png"), optimize=True)
                objects += 1
        if wanted:
            raise SystemExit(f"fetch_negatives: {name} lacks {', '.join(sorted(wanted))}")
    print(f"{photos} photos in {photo_dir}, {objects} objects in {object_dir}")


if __name__ == "__main__":
    main()
