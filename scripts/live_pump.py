"""The background and the scoring of scripts/live-pump; see `scripts/live-pump --help`.

  live_pump.py background SCENE_DIR RATE OUT   the scene's room background (its microphone less its echo and its near
                                               talker) at RATE (WAV)
  live_pump.py score SCENE_DIR OUT REPORT      one run's figures as one JSON line
  live_pump.py summary JSON_LINES              the runs' table and their median
"""

import json
import os
import sys
import warnings

import numpy as np

from live_double_talk import dispatch, meta_of, read_wav, resampled, run_erle_db, write_wav

# simulate's WAV carries a chunk scipy does not read; the samples are read all the same.
warnings.filterwarnings('ignore', message='Chunk')

# As the yardstick's pump.py: 100 ms levels, from 3 s into each far-end stretch and from 1 s into each quiet one.
LEVEL_WINDOW_S, FAR_SKIP_S, QUIET_SKIP_S = 0.1, 3.0, 1.0


def background(scene, rate, out):
    microphone, fs = read_wav(os.path.join(scene, 'mic.wav'))
    echo, _ = read_wav(os.path.join(scene, 'echo.wav'))
    near, _ = read_wav(os.path.join(scene, 'near.wav'))
    room = microphone - echo[:len(microphone)] - near[:len(microphone)]
    write_wav(out, resampled(room, fs, rate).astype(np.float32), rate)


def levels_db(out, rate, start_s, end_s):
    stretch = out[int(start_s * rate):int(end_s * rate)]
    n = int(LEVEL_WINDOW_S * rate)
    return [10 * np.log10(np.mean(stretch[i:i + n] ** 2) + 1e-20) for i in range(0, len(stretch) - n, n)]


def score(scene, out_path, report_path):
    """The output's median level in far-end single talk less its median in the quiet stretch (the far end's time base:
    simulate's output starts with the far end)."""
    out, rate = read_wav(out_path)
    segments = meta_of(scene)['segments']
    far = [v for kind, a, b in segments if kind == 'far' for v in levels_db(out, rate, a + FAR_SKIP_S, b)]
    quiet = [v for kind, a, b in segments if kind == 'quiet' for v in levels_db(out, rate, a + QUIET_SKIP_S, b)]
    with open(report_path) as f:
        unit = json.load(f)['unit']
    far_db, quiet_db = float(np.median(far)), float(np.median(quiet))
    return {'far_db': round(far_db, 1), 'quiet_db': round(quiet_db, 1), 'pump_db': round(far_db - quiet_db, 1),
            'erle_db': run_erle_db(unit), 'xruns': unit['deviceXrunCount']}


def summary(path):
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    print('run  xruns  far-end talk dBFS  quiet dBFS  pump dB  ERLE dB')
    for i, r in enumerate(runs, 1):
        print('%3d  %5d  %17.1f  %10.1f  %+7.1f  %7s' % (i, r['xruns'], r['far_db'], r['quiet_db'], r['pump_db'],
                                                        '-' if r['erle_db'] is None else '%.1f' % r['erle_db']))
    print('median pump %+.1f dB over %d runs' % (float(np.median([r['pump_db'] for r in runs])), len(runs)))


def main():
    dispatch({
        'background': (lambda n: n == 3, lambda scene, rate, out: background(scene, int(rate), out)),
        'score': (lambda n: n == 3, lambda *a: print(json.dumps(score(*a)))),
        'summary': (lambda n: n == 1, summary),
    }, __doc__)


if __name__ == '__main__':
    main()
