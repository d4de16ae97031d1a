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
#                                       none of the scene's reverberation. Sets work, rate, server_name (for messages),
#                                       device (simulate's --device for that loudspeaker and microphone) and
#                                       room_player; exports the server's addresses for the players and the unit.
#   room_play FILE                      plays FILE into the room as is (a talker, a background) until it ends.
# NAME is the calling script's, for its messages and its work directory.

. scripts/yardstick_scenes.sh

live_room_start() {
  local name=$1 scene=$2
  work=$(mktemp -d "/tmp/voiceio-$name.XXXXXX")
  trap 'kill $(jobs -p) 2>/dev/null || true
        [ -z "${live_loopback:-}" ] || "$live_loopback" stop "$work/server" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  rate=48000
  case ${3:-pipewire} in
  pipewire)
    live_loopback=scripts/pipewire-loopback server_name=PipeWire device='pipewire:speaker|room'
    room_player=(pw-play --target room)
    "$python" scripts/live_double_talk.py room "$scenes/$scene" $rate "$work/room.wav"
    "$live_loopback" start "$work/server" $rate "$work/room.wav"
    export PIPEWIRE_RUNTIME_DIR="$work/server/runtime" PULSE_SERVER="unix:$work/server/runtime/pulse/native"
    ;;
  pulse)
    live_loopback=scripts/pulse-loopback server_name=PulseAudio device=alsa:pulse
    room_player=(paplay --device voiceio_test)
    "$live_loopback" start "$work/server" $rate
    export PULSE_SERVER="unix:$work/server/native"
    # alsa-lib's pulse PCM plays into the default sink and records the default source.
    pactl set-default-sink voiceio_test
    pactl set-default-source voiceio_test.monitor
    ;;
  *) echo "$name: --server takes pipewire or pulse, not $3" >&2; exit 2 ;;
  esac
}

room_play() { "${room_player[@]}" "$1"; }
