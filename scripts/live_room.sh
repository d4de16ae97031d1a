# Sourced by scripts/live-double-talk and scripts/live-pump (from the package root, under set -euo pipefail): one
# yardstick scene's room on a private audio server, after `yardstick_scenes NAME CONFIG SCENE` (scripts/yardstick_scenes.sh,
# sourced here) has set python, voicepeer and scenes.
#   live_room_start NAME SCENE [SERVER] a fresh work directory (removed on exit, with the server and any job left)
#                                       and a private server at 48 kHz. SERVER pipewire (the default): a headless
#                                       PipeWire (scripts/pipewire-loopback) whose loudspeaker "speaker" convolves what
#                                       it plays with the scene's room (its echo over its far end) into the null sink
#                                       "room", whose monitor is the microphone. SERVER pulse: a PulseAudio daemon
#                                       (scripts/pulse-loopback), reached through alsa-lib's pulse plugin, whose null
#                                       sink "voiceio_test" is both loudspeaker and room: PulseAudio has no convolver,
#                                       so the echo is the far end as played, unattenuated and about 30 ms later, with
#                                       none of the scene's reverberation. Sets work, rate, server_name (for messages)
#                                       and device (simulate's --device for that loudspeaker and microphone); exports
#                                       the server's addresses for the players and the unit.
#   room_play FILE                      plays FILE into the room as is (a talker, a background) until it ends.
# NAME is the calling script's, for its messages and its work directory.

. scripts/yardstick_scenes.sh

live_room_start() {
  local name=$1 scene=$2
  live_server=${3:-pipewire}
  work=$(mktemp -d "/tmp/voiceio-$name.XXXXXX")
  rate=48000
  case $live_server in
  pipewire)
    trap 'kill $(jobs -p) 2>/dev/null || true; scripts/pipewire-loopback stop "$work/pw" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
    "$python" scripts/live_double_talk.py room "$scenes/$scene" $rate "$work/room.wav"
    scripts/pipewire-loopback start "$work/pw" $rate "$work/room.wav"
    export PIPEWIRE_RUNTIME_DIR="$work/pw/runtime" PULSE_SERVER="unix:$work/pw/runtime/pulse/native"
    server_name=PipeWire device='pipewire:speaker|room'
    ;;
  pulse)
    trap 'kill $(jobs -p) 2>/dev/null || true; scripts/pulse-loopback stop "$work/pa" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
    scripts/pulse-loopback start "$work/pa" $rate
    export PULSE_SERVER="unix:$work/pa/native"
    # alsa-lib's pulse PCM plays into the default sink and records the default source.
    pactl set-default-sink voiceio_test
    pactl set-default-source voiceio_test.monitor
    server_name=PulseAudio device=alsa:pulse
    ;;
  *) echo "$name: --server takes pipewire or pulse, not $live_server" >&2; exit 2 ;;
  esac
}

room_play() {
  case $live_server in
  pipewire) pw-play --target room "$1" ;;
  pulse) paplay --device voiceio_test "$1" ;;
  esac
}
