# Sourced by scripts/live-double-talk and scripts/live-pump (from the package root, under set -euo pipefail): one
# yardstick scene's room on a private PipeWire, after `yardstick_scenes NAME CONFIG SCENE` (scripts/yardstick_scenes.sh,
# sourced here) has set python, voicepeer and scenes.
#   live_room_start NAME SCENE          a fresh work directory (removed on exit, with the server and any job left)
#                                       and a headless PipeWire at 48 kHz (scripts/pipewire-loopback) whose
#                                       loudspeaker "speaker" convolves what it plays with the scene's room (its echo
#                                       over its far end) into the null sink "room", whose monitor is the microphone.
#                                       Sets work and rate; exports the server's addresses for pw-play and the unit.
# NAME is the calling script's, for its messages and its work directory.

. scripts/yardstick_scenes.sh

live_room_start() {
  local name=$1 scene=$2
  work=$(mktemp -d "/tmp/voiceio-$name.XXXXXX")
  trap 'kill $(jobs -p) 2>/dev/null || true; scripts/pipewire-loopback stop "$work/pw" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  rate=48000
  "$python" scripts/live_double_talk.py room "$scenes/$scene" $rate "$work/room.wav"
  scripts/pipewire-loopback start "$work/pw" $rate "$work/room.wav"
  export PIPEWIRE_RUNTIME_DIR="$work/pw/runtime" PULSE_SERVER="unix:$work/pw/runtime/pulse/native"
}
