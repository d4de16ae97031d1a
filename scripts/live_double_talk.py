"""The room and the scoring of scripts/live-double-talk; see `scripts/live-double-talk --help`.

  live_double_talk.py room SCENE_DIR RATE IR_OUT      the scene's loudspeaker-to-microphone response at RATE (WAV)
  live_double_talk.py score SCENE_DIR OUT [REPORT]   one run: its figures as one JSON line (without simulate's
                                                      REPORT, a replay's: the talker's STOI alone)
  live_double_talk.py summary JSON_LINES              the runs' table, with and without xruns
  live_double_talk.py replayable SCENE_DIR ROOM MIC... each recorded microphone cut to the far end's time base, and
                                                      the far end at the room's rate beside them (far.wav)
"""

import json
import os
import sys
import warnings

import numpy as np
from scipy.signal import fftconvolve, resample_poly

YARDSTICK = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'yardstick')
sys.path.insert(0, YARDSTICK)
from wavio import read_wav, write_wav  # noqa: E402

# Double talk is scored in windows this long, each at its own lag: an xrun moves the talker in the output for good.
WINDOW_S = 1.75
# The talker starts after the unit (pw-play follows simulate), and the unit may start capturing late: lags searched.
EARLIEST_LAG_S, LATEST_LAG_S = -1.0, 1.5
# The longest room response kept.
RESPONSE_S = 2.0


def meta_of(scene):
    with open(os.path.join(scene, 'meta.json')) as f:
        return json.load(f)


def room(scene, rate, out):
    """The scene's echo path at RATE: a pyroomacoustics room's response computed again at that rate (after the scene's
    bulk delay), or else its echo over its far end (regularised division over the stretch before any path change, then
    resampled; its error adds a faint tail of its own). Either is scaled to the scene's echo level; a loudspeaker's
    nonlinearity is left out."""
    meta = meta_of(scene)
    far, fs = read_wav(os.path.join(scene, 'far.wav'))
    echo, _ = read_wav(os.path.join(scene, 'echo.wav'))
    end = int(meta['path_change_s'] * fs) if meta.get('path_change_s') else len(far)
    if meta['room']['type'] == 'pra':
        import scenes
        response = scenes.pra_rirs(rate, meta['room'], [meta['room']['spk']])[0]
        response = np.concatenate([np.zeros(int(round(meta['bulk_delay_ms'] * rate / 1000))), response])
    else:
        n = 1 << int(np.ceil(np.log2(2 * end)))
        spectrum = np.fft.rfft(far[:end], n)
        power = np.abs(spectrum) ** 2
        response = np.fft.irfft(np.fft.rfft(echo[:end], n) * np.conj(spectrum) / (power + 1e-3 * power.mean()), n)
        response = resampled(response[:int(RESPONSE_S * fs)], fs, rate)
    far_at_rate = resampled(far[:end], fs, rate)
    played = fftconvolve(far_at_rate, response)[:len(far_at_rate)]
    response *= np.sqrt(np.mean(echo[:end] ** 2) / np.mean(played ** 2))
    write_wav(out, response.astype(np.float32), rate)


def resampled(signal, rate, new_rate):
    if rate == new_rate:
        return signal
    common = np.gcd(rate, new_rate)
    return resample_poly(signal, new_rate // common, rate // common)


def lagged_stoi(near, out, rate, start_s, end_s):
    """STOI of the output against the talker over [start_s, end_s), at the lag where the two correlate best."""
    from pystoi import stoi
    talker = near[int(start_s * rate):int(end_s * rate)]
    back = int(-EARLIEST_LAG_S * rate)
    first = max(0, int(start_s * rate) - back)
    heard = out[first:int(end_s * rate) + int(LATEST_LAG_S * rate)]
    n = 1 << int(np.ceil(np.log2(len(heard) + len(talker))))
    correlation = np.fft.irfft(np.fft.rfft(heard, n) * np.conj(np.fft.rfft(talker, n)), n)
    lag = int(np.argmax(correlation[:int((LATEST_LAG_S - EARLIEST_LAG_S) * rate)])) - (int(start_s * rate) - first)
    begin = int(start_s * rate) + lag
    if begin < 0 or begin + len(talker) > len(out):
        return None, lag
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return float(stoi(talker, out[begin:begin + len(talker)], rate)), lag


def score(scene, out_path, report_path=None):
    out, rate = read_wav(out_path)
    near, fs = read_wav(os.path.join(scene, 'near.wav'))
    near = resampled(near, fs, rate)
    segments = meta_of(scene)['segments']
    windows = []
    for kind, start, end in segments:
        if kind != 'dt':
            continue
        for t in np.arange(start + 0.5, end - 0.5 - WINDOW_S + 1e-9, WINDOW_S):
            value, lag = lagged_stoi(near, out, rate, t, t + WINDOW_S)
            windows.append({'start_s': round(float(t), 2), 'stoi': None if value is None else round(value, 3),
                            'lag_ms': round(lag * 1000 / rate, 1)})
    near_only = [lagged_stoi(near, out, rate, start + 0.5, end - 0.5)[0] for kind, start, end in segments
                 if kind == 'near' and end - start > 1.5]
    scored = [w['stoi'] for w in windows if w['stoi'] is not None]
    talker = {
        'dt_stoi': round(float(np.mean(scored)), 3) if scored else None,
        'dt_windows': windows,
        'near_stoi': round(near_only[0], 3) if near_only and near_only[0] is not None else None,
    }
    if report_path is None:
        return talker
    with open(report_path) as f:
        report = json.load(f)
    unit = report['unit']
    return {
        **talker,
        'erle_db': run_erle_db(unit),
        'delay_ms': round(unit['delayMilliseconds'], 1),
        'device_delay_ms': round(report['deviceReportedDelayMilliseconds'], 1),
        'xruns': unit['deviceXrunCount'],
        'filter_restarts': unit['echoFilterRestartCount'],
        'old_path_moved_back': unit['echoPathShiftCount'],
    }


def run_erle_db(unit):
    """The unit's ERLE over the whole run: every window its meter counted (far-end single talk, settled), not its live
    estimate (`erleDB`), which smooths the last half second only: read at a run's end, that was the echo just after the
    double talk (a live f11 run at 5 ms blocks: 12.0 dB live, 26.9 dB over the run's 11 s of counted windows)."""
    decibels = unit['erle']['processing'].get('decibels')
    return None if decibels is None else round(decibels, 1)


def summary(path):
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    print('run  xruns  restarts (moved back)  ERLE dB  DT STOI  per window             near-only STOI')
    for i, r in enumerate(runs, 1):
        per_window = ' '.join('-' if w['stoi'] is None else '%.2f' % w['stoi'] for w in r['dt_windows'])
        erle = '-' if r['erle_db'] is None else '%.1f' % r['erle_db']
        print('%3d  %5d  %8d (%d)%13s  %7s  %-21s  %s' % (
            i, r['xruns'], r['filter_restarts'], r['old_path_moved_back'], erle,
            '-' if r['dt_stoi'] is None else '%.3f' % r['dt_stoi'], per_window,
            '-' if r['near_stoi'] is None else '%.3f' % r['near_stoi']))
    for label, group in (('without xruns', [r for r in runs if r['xruns'] == 0]),
                         ('with xruns', [r for r in runs if r['xruns'] > 0])):
        values = sorted(r['dt_stoi'] for r in group if r['dt_stoi'] is not None)
        if values:
            print('%-14s %2d runs: DT STOI median %.3f, lowest %.3f' % (label, len(group), float(np.median(values)),
                                                                        values[0]))
        else:
            print('%-14s %2d runs' % (label, len(group)))


def replayable(scene, room_path, microphones):
    """Cuts each microphone recording (the room's monitor, started before the unit) where the far end's first sound
    left the loudspeaker, found by correlating its first 10 s with the far end through the room, so that the far end
    at the room's rate (written beside them) is its reference in `voicepeer process` as is."""
    response, rate = read_wav(room_path)
    far, fs = read_wav(os.path.join(scene, 'far.wav'))
    far = resampled(far, fs, rate)
    write_wav(os.path.join(os.path.dirname(microphones[0]), 'far.wav'), far.astype(np.float32), rate)
    span = 10 * rate
    expected = fftconvolve(far[:span], response)[:span]
    for path in microphones:
        microphone, _ = read_wav(path)
        n = 1 << int(np.ceil(np.log2(2 * span)))
        correlation = np.fft.irfft(np.fft.rfft(microphone[:span], n) * np.conj(np.fft.rfft(expected, n)), n)
        start = int(np.argmax(correlation[:span // 2]))
        write_wav(path, microphone[start:].astype(np.float32), rate)


def dispatch(commands, usage):
    """Runs the command the first argument names: `commands` maps each name to (whether it takes that many arguments,
    the function that takes them); anything else exits with `usage`."""
    name, arguments = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ('', [])
    takes, function = commands.get(name, (lambda count: False, None))
    if not takes(len(arguments)):
        sys.exit(usage)
    function(*arguments)


def main():
    dispatch({
        'room': (lambda n: n == 3, lambda scene, rate, out: room(scene, int(rate), out)),
        'score': (lambda n: n in (2, 3), lambda *a: print(json.dumps(score(*a)))),
        'replayable': (lambda n: n >= 3, lambda scene, room_path, *mics: replayable(scene, room_path, list(mics))),
        'summary': (lambda n: n == 1, summary),
    }, __doc__)


if __name__ == '__main__':
    main()
