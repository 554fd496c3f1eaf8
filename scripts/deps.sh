#!/bin/sh
# deps.sh - install what pcbench needs.
#   deps.sh install    apt-get the missing Debian packages, or, with DEBS=folder,
#                      unpack every .deb there into DEPS_DIR (offline hosts)
#   deps.sh download   fetch the .deb files into DEBS for an offline host
#   deps.sh fuzz       clang with libFuzzer and its sanitizer runtimes (make
#                      fuzz); exits 1 saying why when they cannot be had
set -eu
PKGS="libflann-dev libbenchmark-dev valgrind gnuplot-nox python3"
# What an offline GPU host needs to build and run (no plotting there).
OFFLINE_PKGS="libflann-dev libflann1.9 liblz4-dev libbenchmark-dev libbenchmark1debian valgrind"
DEPS_DIR=${DEPS_DIR:-.deps/root}

say() { echo "pcbench deps: $*" >&2; }

# apt-get install the packages given ($*), as root or through sudo.
apt_install() {
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && SUDO="sudo -n" || {
            say "missing packages: $*; not root and no sudo: install them, or use make deps DEBS=folder"
            return 1; }
    fi
    say "installing: $*"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 ||
        { $SUDO apt-get update -q >/dev/null 2>&1 &&
          $SUDO apt-get install -y -q --no-install-recommends "$@" >/dev/null; } || {
        say "could not install: $* (no network?). Offline: make debs DEBS=dir on a networked host, then make deps DEBS=dir"
        return 1; }
}

# Whether clang links a libFuzzer target with ASan and UBSan.
fuzzer_works() {
    command -v clang >/dev/null 2>&1 || return 1
    d=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' >"$d/t.c"
    clang -fsanitize=fuzzer,address,undefined -o "$d/t" "$d/t.c" >/dev/null 2>&1
    rc=$?
    rm -rf "$d"
    return $rc
}

case "${1:-install}" in
fuzz)
    fuzzer_works && exit 0
    command -v clang >/dev/null 2>&1 || apt_install clang || exit 1
    # The fuzzer and sanitizer runtimes come apart from clang, per version.
    v=$(clang -dumpversion | cut -d. -f1)
    fuzzer_works || apt_install "libclang-rt-$v-dev" || exit 1
    fuzzer_works || { say "clang $v cannot link -fsanitize=fuzzer even with libclang-rt-$v-dev"; exit 1; }
    ;;
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
    # shellcheck disable=SC2086 # one word a package
    apt_install $missing || exit 1
    ;;
*) say "usage: deps.sh install|download|fuzz"; exit 2 ;;
esac
