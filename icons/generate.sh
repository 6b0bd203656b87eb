#!/usr/bin/env bash
# Makes every app icon from icons/source.png (1024×1024): the PNG sizes the Linux package installs
# in the hicolor theme (16–512 and their @2x), icon.png (512, Tauri's default), icon.ico (Windows:
# 16–256 in one file) with ImageMagick, and icon.icns (macOS) with the Tauri CLI, since
# ImageMagick cannot write ICNS. Run it again after changing source.png, and commit the results.
#   icons/generate.sh             regenerate
#   icons/generate.sh --compare   also make Tauri's own set (`tauri icon`, offline) in a temporary
#                                 folder and print how far each shared size is from ours (RMSE)
# The tray icons (icons/tray/) are drawn separately and are not touched.
set -euo pipefail
cd "$(dirname "$0")"
# /usr/local/bin/convert may be a stand-in on some machines: use ImageMagick's own.
IM=/usr/bin/convert
[ -x "$IM" ] || { echo "ImageMagick is needed (apt-get install imagemagick)"; exit 1; }
[ -f source.png ] || { echo "icons/source.png is missing: it is what every icon is made from"; exit 1; }

# -strip drops timestamps and profiles so that a rerun makes identical files; PNG32 keeps alpha
# and 8 bits per channel (source.png is 16-bit, which some icon loaders refuse).
png() { "$IM" source.png -filter Lanczos -resize "$1x$1" -strip "PNG32:$2"; }
for s in 16 24 32 48 64 128 256 512; do
  png "$s" "${s}x${s}.png"
  # @2x: the same logical size for a scale-2 screen (hicolor's NxN@2 folders).
  png "$((s * 2))" "${s}x${s}@2x.png"
done
cp 512x512.png icon.png
"$IM" 16x16.png 24x24.png 32x32.png 48x48.png 64x64.png 256x256.png icon.ico

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# `tauri icon` runs offline (the CLI is in node_modules); keep only its .icns.
(cd .. && npx --no-install tauri icon icons/source.png -o "$tmp" >/dev/null 2>&1)
cp "$tmp/icon.icns" icon.icns

if [ "${1:-}" = "--compare" ]; then
  echo "size   RMSE of ours against tauri icon's (0 = identical, 1 = opposite)"
  for f in 32x32 64x64 128x128 128x128@2x icon; do
    printf '%-12s ' "$f"
    # compare exits 1 when the images differ at all, which is expected here.
    { /usr/bin/compare -metric RMSE "$f.png" "$tmp/$f.png" null: 2>&1 || true; } | sed 's/.*(\(.*\))/\1/'
    echo
  done
fi
ls -l *.png icon.ico icon.icns | awk '{print $5, $9}'
