#!/bin/sh
# peers-deps.sh - install the Python peers scripts/peers/ times into PEERS_DIR
# (default .peers/site, put on PYTHONPATH by make peers), without touching the
# system's Python. Only what is not importable already is installed, so a
# host's own numpy, scipy or torch stays in charge.
#   peers-deps.sh install    from PyPI, or with WHEELS=folder from its wheels (offline)
#   peers-deps.sh download   fetch the wheels into WHEELS for an offline host whose
#                            Python is PYVER (default 3.12)
#   peers-deps.sh gpu        the GPU peers from their sources in PEER_SOURCES
set -eu
PY=${PYTHON:-python3}
PEERS_DIR=${PEERS_DIR:-.peers/site}
# module:distribution. geomloss and torch-fps need torch, only worth installing beside it.
CPU_PEERS="numpy:numpy scipy:scipy fpsample:fpsample pykdtree:pykdtree ot:pot"
GPU_PEERS="geomloss:geomloss torch_fps:torch-fps"

say() { echo "pcbench peers-deps: $*" >&2; }

need_pip() {
    "$PY" -m pip --version >/dev/null 2>&1 && return 0
    say "$PY has no pip; installing the Debian package python3-pip"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
    $SUDO apt-get install -y -q python3-pip >/dev/null 2>&1 ||
        { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q python3-pip >/dev/null; } ||
        { say "could not install python3-pip"; exit 1; }
}

importable() { PYTHONPATH="$PEERS_DIR${PYTHONPATH:+:$PYTHONPATH}" "$PY" -c "import $1" >/dev/null 2>&1; }

case "${1:-install}" in
download)
    : "${WHEELS:?set WHEELS=folder}"
    need_pip
    mkdir -p "$WHEELS"
    dists=""
    for p in $CPU_PEERS $GPU_PEERS; do dists="$dists ${p#*:}"; done
    v=$(echo "${PYVER:-3.12}" | tr -d .)
    # numpy and scipy are left out: hosts with torch have them.
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" \
        --implementation cp --abi "cp$v" --platform manylinux_2_28_x86_64 \
        --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$WHEELS" fpsample pykdtree pot geomloss torch-fps ||
        { say "pip download failed (no network?)"; exit 1; }
    say "downloaded into $WHEELS: $(ls "$WHEELS" | tr '\n' ' ')"
    ;;
install)
    missing=""
    for p in $CPU_PEERS; do importable "${p%%:*}" || missing="$missing ${p#*:}"; done
    if importable torch; then
        for p in $GPU_PEERS; do importable "${p%%:*}" || missing="$missing ${p#*:}"; done
    fi
    [ -z "$missing" ] && { say "every peer library is importable"; exit 0; }
    need_pip
    mkdir -p "$PEERS_DIR"
    say "installing into $PEERS_DIR:$missing"
    if [ -n "${WHEELS:-}" ]; then
        [ -d "$WHEELS" ] || { say "WHEELS=$WHEELS is not a folder"; exit 1; }
        # --no-deps: the wheels carried are the whole set; numpy, scipy and torch are the host's.
        # One at a time: a peer without a wheel here is said and skipped, the others installed.
        lacking=""
        for d in $missing; do
            "$PY" -m pip install -q --no-index --no-deps --find-links "$WHEELS" --target "$PEERS_DIR" \
                --upgrade "$d" >/dev/null 2>&1 || lacking="$lacking $d"
        done
        [ -z "$lacking" ] || say "no wheel in $WHEELS for:$lacking (those peers stay unavailable)"
    else
        # --no-deps: pip --target ignores what the host has, so a peer's dependency
        # (geomloss's torch) would land here and shadow the host's own on PYTHONPATH
        "$PY" -m pip install -q --no-deps --target "$PEERS_DIR" --upgrade $missing ||
            { say "pip install failed (no network?). Offline: make peer-wheels WHEELS=dir on a networked host, then make peers-deps WHEELS=dir"; exit 1; }
    fi
    ;;
gpu)
    # The GPU peers without wheels for current CUDA, from their sources in
    # PEER_SOURCES (peer_build.py sources DIR fetches them): KeOps from its
    # sdists (pure Python; it compiles its kernels on first use), the others
    # built by peer_build.py into .peers/build. Needs torch with CUDA and nvcc.
    : "${PEER_SOURCES:?set PEER_SOURCES=folder of source archives}"
    importable torch || { say "torch is not importable: no GPU peer built"; exit 0; }
    if ! importable pykeops; then
        set -- "$PEER_SOURCES"/pykeops-*.tar.gz "$PEER_SOURCES"/keopscore-*.tar.gz
        if [ -f "$1" ] && [ -f "$2" ]; then
            need_pip
            mkdir -p "$PEERS_DIR"
            "$PY" -m pip install -q --no-index --no-deps --no-build-isolation --target "$PEERS_DIR" "$@" ||
                say "pykeops did not install from $PEER_SOURCES"
        else
            say "no pykeops/keopscore sdists in $PEER_SOURCES"
        fi
    fi
    # the edits KeOps' sources need here (peer_build.py list), once
    "$PY" "$(dirname "$0")/peer_build.py" patch-site "$PEERS_DIR" --keops-cache "$(dirname "$PEERS_DIR")/keops"
    PYTHONPATH="$PEERS_DIR${PYTHONPATH:+:$PYTHONPATH}" "$PY" "$(dirname "$0")/peer_build.py" build \
        "$PEER_SOURCES" --out "${PEER_BUILD:-.peers/build}"
    ;;
*) say "usage: peers-deps.sh install|download|gpu"; exit 2 ;;
esac
