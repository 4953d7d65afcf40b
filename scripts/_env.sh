# Shared set-up for scripts/test and scripts/demo (sourced, not run).
# fabrik_env VERSION: make sure the virtual environment for Blender VERSION (4.2, 4.5 or 5.0) exists with the
# pinned requirements and the project installed in editable mode, then set FABRIK_PYTHON to its interpreter. A venv
# whose requirements are unchanged is reused.

# fabrik_usage SCRIPT: the comment block at the top of SCRIPT (after its #! line), without its "# ", for --help.
fabrik_usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"; }

FABRIK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FABRIK_VERSIONS="4.2 4.5 5.0"
FABRIK_DEFAULT_VERSION="5.0"

fabrik_find_python() {
    # Prints a Python 3.11 interpreter (Blender's bpy module exists only for 3.11), or fails with a message.
    local candidate
    for candidate in "${PYTHON:-}" python3.11 python3 python; do
        [ -n "$candidate" ] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    echo "error: Python 3.11 is needed (the bpy module exists only for Python 3.11) and none was found." >&2
    echo "       Install Python 3.11, or point PYTHON at one: PYTHON=/path/to/python3.11 $0" >&2
    return 1
}

fabrik_venv_dir() {
    if [ "$1" = "$FABRIK_DEFAULT_VERSION" ]; then echo "$FABRIK_ROOT/.venv"; else echo "$FABRIK_ROOT/.venv-$1"; fi
}

fabrik_env() {
    local version="$1" venv requirements stamp wanted python
    requirements="$FABRIK_ROOT/requirements/blender-$version.txt"
    if [ ! -f "$requirements" ]; then
        echo "error: unknown Blender version '$version' (choose one of: $FABRIK_VERSIONS)" >&2
        return 2
    fi
    venv="$(fabrik_venv_dir "$version")"
    stamp="$venv/.fabrik-requirements"
    wanted="$(cat "$FABRIK_ROOT/requirements/dev.txt" "$requirements" | sha256sum | cut -d' ' -f1)"
    if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
        FABRIK_PYTHON="$venv/bin/python"
        return 0
    fi
    python="$(fabrik_find_python)" || return 1
    echo "== setting up $venv (Blender $version; this downloads about 400 MB the first time)" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet -r "$requirements" >&2
    # The project itself, editable: "from fabrik_addon import api" then works from this venv's Python anywhere.
    # Built with the pinned setuptools already in the venv (no download); its advice about editable installs is
    # silenced (PYTHONWARNINGS reaches the build backend's own process).
    PYTHONWARNINGS=ignore "$venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps -e "$FABRIK_ROOT" >&2
    echo "$wanted" >"$stamp"
    FABRIK_PYTHON="$venv/bin/python"
}
