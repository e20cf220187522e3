#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Screenshots of the plug-in in a real GIMP 3 window, for docs/gimp-menu.png,
# docs/gimp-dialog.png and docs/gimp-result.png: GIMP under Xvfb with a private profile that
# holds the built plug-in opens PHOTO; the menu is opened and taken, the dialog chosen from
# it and taken, OK pressed, and the result taken.
#
#   plugin-gimp/make-screenshots.sh PLUG-IN-BINARY PHOTO MODEL OUT-DIR
#
# Needs gimp-3.0, xvfb-run, xdotool and imagemagick's import (tools/in-trixie has them).
set -euo pipefail

if [[ -z ${DISPLAY-} ]]; then
    exec xvfb-run -a -s '-screen 0 1280x800x24' "$0" "$@"
fi

plugin=$(readlink -f "$1") photo=$(readlink -f "$2") model=$(readlink -f "$3") out=$4
name=backdrop-remove-background
mkdir -p "$out"

work=$(mktemp -d)
trap 'kill "${gimp_pid-}" 2>/dev/null || true; rm -rf "$work"' EXIT
export HOME=$work/home GIMP3_DIRECTORY=$work/profile BACKDROP_MODEL=$model
mkdir -p "$HOME" "$GIMP3_DIRECTORY/plug-ins/$name"
ln -s "$plugin" "$GIMP3_DIRECTORY/plug-ins/$name/$name"
# A first start without the welcome dialog or tips in the way.
cat > "$GIMP3_DIRECTORY/gimprc" <<'EOF'
(show-welcome-dialog no)
(show-tips no)
EOF

wait_for() { # window name, seconds
    local i
    for ((i = 0; i < $2 * 2; i++)); do
        xdotool search --onlyvisible --name "$1" 2>/dev/null | head -n 1 && return 0
        sleep 0.5
    done
    echo "make-screenshots: no window called '$1' after $2 s" >&2
    return 1
}

gimp-3.0 --no-splash "$photo" >"$work/gimp.log" 2>&1 &
gimp_pid=$!

# There is no window manager under Xvfb: lay the windows out ourselves, the image window
# filling the screen.
main=$(wait_for ' – GIMP$' 120)
xdotool windowmove --sync "$main" 0 0 windowsize --sync "$main" 1280 800
sleep 3
xdotool windowfocus --sync "$main" key ctrl+shift+j

# The way a user gets there: Layer ▸ Transparency ▸ Remove Background… (where the menus
# open at this screen size and with the root's fonts).
xdotool mousemove 266 12 click 1
sleep 1
xdotool mousemove 313 238
sleep 1.5
import -window root "$out/gimp-menu.png"
xdotool mousemove 601 465 click 1

dialog=$(wait_for 'Remove Background' 60)
xdotool windowmove --sync "$dialog" 560 170 windowraise "$dialog"
xdotool mousemove 1279 799
sleep 3
import -window root "$out/gimp-dialog.png"

# Focus the dialog ourselves (no window manager); Return is its OK.
xdotool windowfocus --sync "$dialog" key Return
sleep 1
# The dialog is gone once the plug-in runs; wait for it to finish.
for ((i = 0; i < 240; i++)); do
    xdotool search --onlyvisible --name 'Remove Background' >/dev/null 2>&1 || break
    sleep 0.5
done
sleep 8
# Fit the image to the window again, keep the pointer off the canvas.
xdotool windowfocus --sync "$main" key ctrl+shift+j
xdotool mousemove 1279 799
sleep 3
import -window root "$out/gimp-result.png"

kill "$gimp_pid" 2>/dev/null || true
wait "$gimp_pid" 2>/dev/null || true
echo "make-screenshots: wrote gimp-menu.png, gimp-dialog.png and gimp-result.png in $out"
