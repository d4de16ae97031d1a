# Sourced by the scripts that run voicepeer over a yardstick config's scenes (from the package root, under set -euo
# pipefail).
#   yardstick_scenes NAME CONFIG [SCENE]   checks the yardstick's venv, installs what the runs use and builds
#                                          voicepeer; makes the config's scenes (with SCENE: only if that scene is
#                                          missing, and fails without it). Sets python, voicepeer, scenes.
# NAME is the calling script's, for its messages. The scenes are where run.py and variant-scenes put them by default
# (scenes/<the config's "name">); give run.py --scenes-root "$scenes" all the same, so that it reads these.

yardstick_scenes() {
  local name=$1 config=$2 scene=${3:-}
  local yardstick=${YARDSTICK_WORK:-/tmp/yardstick}
  python=$yardstick/venv/bin/python
  [ -x "$python" ] || { echo "$name: no yardstick venv at $python (run ../shared/yardstick/setup)" >&2; exit 1; }
  scripts/setup
  swift build -c release --product voicepeer >/dev/null
  voicepeer=$(swift build -c release --show-bin-path)/voicepeer
  scenes=$yardstick/scenes/$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$config")
  # The config's scenes, made if missing and changed as its keys say (a hot microphone, a talker later, ...).
  if [ -z "$scene" ]; then
    "$python" scripts/variant-scenes "$config" --scenes-root "$scenes" >/dev/null
    return
  fi
  [ -f "$scenes/$scene/meta.json" ] || "$python" scripts/variant-scenes "$config" --scenes-root "$scenes" >/dev/null
  [ -f "$scenes/$scene/meta.json" ] || { echo "$name: $config has no scene $scene" >&2; exit 1; }
}
