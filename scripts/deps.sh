#!/bin/sh
# deps.sh - install what pcbench needs.
#   deps.sh install    apt-get the missing Debian packages, or, with DEBS=folder,
#                      unpack every .deb there into DEPS_DIR (offline hosts)
#   deps.sh download   fetch the .deb files into DEBS for an offline host
set -eu
PKGS="libflann-dev libbenchmark-dev valgrind gnuplot-nox python3"
# What an offline GPU host needs to build and run (no plotting there).
OFFLINE_PKGS="libflann-dev libflann1.9 liblz4-dev libbenchmark-dev libbenchmark1debian valgrind"
DEPS_DIR=${DEPS_DIR:-.deps/root}

say() { echo "pcbench deps: $*" >&2; }

case "${1:-install}" in
download)
    mkdir -p "$DEBS"
    (cd "$DEBS" && apt-get -q -o APT::Sandbox::User=root download $OFFLINE_PKGS) || {
        say "apt-get download failed (no network or unknown package?)"; exit 1; }
    say "downloaded into $DEBS: $(ls "$DEBS" | tr '\n' ' ')"
    ;;
install)
    if [ -n "${DEBS:-}" ]; then
        [ -d "$DEBS" ] || { say "DEBS=$DEBS is not a folder"; exit 1; }
        set -- "$DEBS"/*.deb
        [ -e "$1" ] || { say "no .deb files in $DEBS"; exit 1; }
        mkdir -p "$DEPS_DIR"
        for f in "$@"; do dpkg-deb -x "$f" "$DEPS_DIR"; done
        # Make the unversioned .so links point inside the prefix.
        for l in "$DEPS_DIR"/usr/lib/x86_64-linux-gnu/*.so; do
            [ -L "$l" ] || continue
            t=$(readlink "$l")
            case "$t" in /*)
                if [ -e "$(dirname "$l")/$(basename "$t")" ]; then ln -sf "$(basename "$t")" "$l"
                else rm -f "$l"; fi ;; # its runtime library is the host's own
            esac
        done
        say "unpacked $# packages into $DEPS_DIR"
        exit 0
    fi
    missing=""
    for p in $PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && exit 0
    if [ -d "$DEPS_DIR/usr/include/flann" ] && [ -d "$DEPS_DIR/usr/include/benchmark" ]; then
        exit 0 # an offline prefix already provides the libraries
    fi
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && SUDO="sudo -n" || {
            say "missing packages:$missing; not root and no sudo: install them, or use make deps DEBS=folder"
            exit 1; }
    fi
    say "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
        { $SUDO apt-get update -q >/dev/null 2>&1 &&
          $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null; } || {
        say "could not install:$missing (no network?). Offline: make debs DEBS=dir on a networked host, then make deps DEBS=dir"
        exit 1; }
    ;;
*) say "usage: deps.sh install|download"; exit 2 ;;
esac
