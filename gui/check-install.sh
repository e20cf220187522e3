#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary folder and validates what the app put there: the
# desktop file, metainfo, icons, GSettings schema, the German and Vietnamese catalogues
# (with the desktop file and metainfo translated) and the man pages.
#
#   gui/check-install.sh BUILD-DIR PREFIX DATADIR LOCALEDIR APP-ID MANDIR
set -eu

build=$1 prefix=$2 datadir=$3 localedir=$4 app_id=$5 mandir=$6
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT INT TERM

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null

share="$dest$prefix/$datadir"
locale="$dest$prefix/$localedir"
fail=0
check() { if [ -e "$1" ]; then echo "ok: ${1#"$dest"}"; else echo "MISSING: ${1#"$dest"}"; fail=1; fi; }

check "$dest$prefix/bin/backdrop"
check "$share/applications/$app_id.desktop"
check "$share/metainfo/$app_id.metainfo.xml"
check "$share/glib-2.0/schemas/$app_id.gschema.xml"
check "$share/icons/hicolor/scalable/apps/$app_id.svg"
check "$share/icons/hicolor/symbolic/apps/$app_id-symbolic.svg"
for lang in de vi; do
  check "$locale/$lang/LC_MESSAGES/backdrop.mo"
done
check "$dest$prefix/$mandir/man1/backdrop.1"
check "$dest$prefix/$mandir/man1/backdrop-cli.1"
[ $fail = 0 ] || exit 1

mandoc -T lint -W style "$dest$prefix/$mandir/man1/backdrop.1" "$dest$prefix/$mandir/man1/backdrop-cli.1"

desktop-file-validate "$share/applications/$app_id.desktop"
appstreamcli validate --pedantic --no-net --explain "$share/metainfo/$app_id.metainfo.xml"
glib-compile-schemas --strict --dry-run "$share/glib-2.0/schemas"

# Translated, not merely installed.
grep -q '^Comment\[de\]=' "$share/applications/$app_id.desktop"
grep -q '^Comment\[vi\]=' "$share/applications/$app_id.desktop"
grep -q 'xml:lang="de"' "$share/metainfo/$app_id.metainfo.xml"
grep -q 'xml:lang="vi"' "$share/metainfo/$app_id.metainfo.xml"
msgunfmt "$locale/de/LC_MESSAGES/backdrop.mo" | grep -q 'Hintergrund entfernen'
msgunfmt "$locale/vi/LC_MESSAGES/backdrop.mo" | grep -q 'Xóa phông nền'
echo "installed app files validate"
