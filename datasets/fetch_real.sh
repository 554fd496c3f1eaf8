#!/bin/sh
# fetch_real.sh DEST - real scanned point clouds from Debian's libcgal-demo
# package (CGAL's data/points_3: kitten, radar, building, ball, b9_training,
# hippo, ...) into DEST, then check that pcbench loads every one.
#
# The package is fetched with `apt-get download` (no root needed) unless
# CGAL_DEB names a local copy of the .deb (offline hosts). Without network
# the script says so and exits 0: the real clouds are optional. It exits 1
# only when a fetched file does not load. PCBENCH overrides build/pcbench.
set -u
dest=${1:?usage: fetch_real.sh DEST}
tool=${PCBENCH:-build/pcbench}
say() { echo "fetch_real: $*" >&2; }

if [ -f "$dest/SOURCE" ] && [ -z "${CGAL_DEB:-}" ]; then
    say "$dest already holds $(sed -n 1p "$dest/SOURCE"); remove it to fetch again"
else
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    if [ -n "${CGAL_DEB:-}" ]; then
        cp "$CGAL_DEB" "$tmp/" || { say "cannot read CGAL_DEB=$CGAL_DEB"; exit 1; }
    elif ! command -v apt-get >/dev/null 2>&1 ||
        ! (cd "$tmp" && apt-get download -q libcgal-demo >/dev/null 2>&1); then
        say "skipped: cannot download libcgal-demo (no network or no apt-get);"
        say "offline: apt-get download libcgal-demo on a networked host, then CGAL_DEB=path/to/it.deb"
        exit 0
    fi
    deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
    inner=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep '/data\.tar\.[a-z0-9]*$' | head -n 1)
    if [ -z "$inner" ]; then
        say "no data.tar.* inside $(basename "$deb")"
        exit 1
    fi
    (cd "$tmp" && dpkg-deb --fsys-tarfile "$deb" | tar -x "$inner" &&
        tar -xf "$inner" data/points_3) || { say "cannot unpack $(basename "$deb")"; exit 1; }
    mkdir -p "$dest"
    for f in "$tmp"/data/points_3/*.xyz "$tmp"/data/points_3/*.ply "$tmp"/data/points_3/*.pwn; do
        [ -f "$f" ] && cp "$f" "$dest/"
    done
    { dpkg-deb -f "$deb" Package Version | tr '\n' ' ' | sed 's/ $//'; echo
      echo "files from data/points_3 of the package's data.tar (CGAL example data)"; } >"$dest/SOURCE"
    say "copied $(ls "$dest" | grep -vc '^SOURCE$') files into $dest ($(sed -n 1p "$dest/SOURCE"))"
fi

[ -x "$tool" ] || { say "$tool not built: cannot check the files"; exit 1; }
bad=0
for f in "$dest"/*; do
    case $f in */SOURCE) continue ;; esac
    if err=$("$tool" fps -i "$f" -m 1 2>&1 >/dev/null); then
        echo "ok   $f"
    else
        echo "FAIL $f: $err"
        bad=$((bad + 1))
    fi
done
[ "$bad" -eq 0 ] || { say "$bad files did not load"; exit 1; }
