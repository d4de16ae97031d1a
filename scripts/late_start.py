"""The inputs and the scoring of scripts/late-start; see `scripts/late-start --help`.

  late_start.py inputs SCENE_DIR LEAD_S ZERO_MS OUT_DIR   OUT_DIR/mic.wav: LEAD_S of the scene's room (from its quiet
                                                           stretch) before its microphone, the first ZERO_MS zeroed;
                                                           OUT_DIR/far.wav: the far end LEAD_S later (LEAD_S under 0:
                                                           both start that far into the scene)
  late_start.py score SCENE_DIR LEAD_S ZERO_MS OUT         one run's figures as one JSON line
  late_start.py summary JSON_LINES                         the runs' table, each row against its scene's run without
                                                           zeros
"""

import json
import os

import numpy as np

from live_double_talk import dispatch, meta_of, read_wav, write_wav
from live_pump import levels_db

# The first far-end stretch is read from this far into it (the echo's return) to its end, second by second.
FAR_SKIP_S = 0.5


def segment(scene, kind):
    return next((a, b) for k, a, b in meta_of(scene)['segments'] if k == kind)


def inputs(scene, lead_s, zero_ms, out_dir):
    microphone, mic_rate = read_wav(os.path.join(scene, 'mic.wav'))
    far, far_rate = read_wav(os.path.join(scene, 'far.wav'))
    if lead_s < 0:
        microphone, far = microphone[int(-lead_s * mic_rate):], far[int(-lead_s * far_rate):]
        lead_s = 0
    quiet_start, quiet_end = segment(scene, 'quiet')
    start = int((quiet_start + 0.3) * mic_rate)
    room = microphone[start:start + int(lead_s * mic_rate)]
    if len(room) < int(lead_s * mic_rate) or quiet_start + 0.3 + lead_s > quiet_end:
        raise SystemExit(f'late_start: {scene} has no {lead_s} s of quiet stretch for the lead')
    late = np.concatenate([room, microphone])
    late[:int(zero_ms * mic_rate / 1000)] = 0
    os.makedirs(out_dir, exist_ok=True)
    write_wav(os.path.join(out_dir, 'mic.wav'), late.astype(np.float32), mic_rate)
    silence = np.zeros(int(round(lead_s * far_rate)))
    write_wav(os.path.join(out_dir, 'far.wav'), np.concatenate([silence, far]).astype(np.float32), far_rate)


def score(scene, lead_s, zero_ms, out_path):
    """The output's median 100 ms level over the first far-end stretch and its quietest second (medians of 100 ms
    levels), in dBFS."""
    out, rate = read_wav(out_path)
    far_start, far_end = segment(scene, 'far')
    start, end = max(0, lead_s + far_start) + FAR_SKIP_S, lead_s + far_end
    seconds = [float(np.median(levels_db(out, rate, s, s + 1))) for s in np.arange(start, end - 1 + 1e-9, 1.0)]
    return {'scene': os.path.basename(scene.rstrip('/')), 'lead_s': lead_s, 'zero_ms': zero_ms,
            'far_db': round(float(np.median(levels_db(out, rate, start, end))), 1),
            'quietest_second_db': round(min(seconds), 1)}


def summary(path):
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    # Without zeros, at the lead asked for or, for a stream that starts in the far end's talk, at 0.
    reference = {r['scene']: r for r in runs if r['zero_ms'] == 0 and r['lead_s'] >= 0}
    print('scene                lead s  zeros ms  far-end talk dBFS  vs no zeros dB  quietest second dBFS  vs no zeros dB')
    for r in runs:
        base = reference.get(r['scene'])
        far = '%+14.1f' % (r['far_db'] - base['far_db']) if base else '%14s' % '-'
        quietest = '%+14.1f' % (r['quietest_second_db'] - base['quietest_second_db']) if base else '%14s' % '-'
        print('%-20s %6g  %8d  %17.1f  %s  %20.1f  %s' % (r['scene'][:20], r['lead_s'], r['zero_ms'], r['far_db'],
                                                         far, r['quietest_second_db'], quietest))


def main():
    dispatch({
        'inputs': (lambda n: n == 4, lambda scene, lead, zeros, out: inputs(scene, float(lead), int(zeros), out)),
        'score': (lambda n: n == 4, lambda scene, lead, zeros, out: print(json.dumps(
            score(scene, float(lead), int(zeros), out)))),
        'summary': (lambda n: n == 1, summary),
    }, __doc__)


if __name__ == '__main__':
    main()
