"""The perfect canceller of scripts/echo-bounds and its report; see `scripts/echo-bounds --help`.

  echo_bounds.py perfect --mic MIC --out OUT --voice-rate RATE   (a yardstick system: the scene's folder holds MIC)
  echo_bounds.py report RESULTS_JSON                              (per scene: project against perfect)
"""

import argparse
import functools
import json
import os
import sys
import warnings

YARDSTICK = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'yardstick')
# The yardstick's modules (metrics, wavio) are imported from its folder.
sys.path.insert(0, YARDSTICK)
# An ERLE of ours more than this many dB under the perfect canceller's is the canceller's to raise; one within it or
# above it is bounded by the scene (a perfect echo remover does no better).
BOUND_MARGIN_DB = 1.0


def perfect(mic, out, voice_rate):
    """Writes the microphone at the voice rate less its echo, resampled as the yardstick's metrics resample both."""
    import metrics
    from wavio import write_wav
    _, signals, _, _ = metrics.load_refs(os.path.dirname(os.path.abspath(mic)), voice_rate)
    write_wav(out, signals['mic'] - signals['echo'], voice_rate)


def figure(value, digits=1):
    return '-' if value is None else f'{value:.{digits}f}'


FIGURES = ('erle_db', 'last_far_erle_db', 'reconv20_s', 'dt_stoi', 'dt_near_gain_db')


@functools.lru_cache(maxsize=1)
def scene_references(scene_dir, rate):
    """The yardstick's references of one scene at `rate` (`metrics.load_refs`), read once for ours and the perfect
    canceller's output alike."""
    import metrics
    return metrics.load_refs(scene_dir, rate)


@functools.lru_cache(maxsize=1)
def double_talk_change(scene_dir):
    """(the change's time, the end of the double talk it falls in, the scene's segments) for a path change inside double
    talk (meta.json's `double_talk_change_s`, scripts/variant-scenes), read once for ours and the perfect canceller's
    figures alike; None without one."""
    with open(os.path.join(scene_dir, 'meta.json')) as f:
        meta = json.load(f)
    change = meta.get('double_talk_change_s')
    if change is None:
        return None
    end = next((b for kind, a, b in meta['segments'] if kind == 'dt' and a <= change < b), None)
    return None if end is None else (change, end, meta['segments'])


def talker_gain_after_move(scene_dir, out_path, lag_ms):
    """The near talker's gain (dB, as the yardstick's double-talk near gain) from a path change inside double talk
    (meta.json's `double_talk_change_s`, scripts/variant-scenes) to that double talk's end; None without one. The
    yardstick's gain over the whole double talk hides a talker lost in the second after the move."""
    import numpy as np
    from scipy.signal import sosfiltfilt
    from wavio import read_wav
    # The outputs' wave files carry a chunk scipy does not read (and says so on every file).
    warnings.filterwarnings('ignore', message='Chunk .* not understood')
    found = double_talk_change(scene_dir)
    if found is None or not os.path.exists(out_path):
        return None
    change, end, _ = found
    out, rate = read_wav(out_path)
    _, _, band_limited, sos = scene_references(scene_dir, rate)
    count, lag = len(band_limited['near']), int(round((lag_ms or 0) * rate / 1000))
    out = np.pad(out, (0, max(0, count + lag - len(out))))
    frames = slice(int(change * rate), int(end * rate))
    near, output = band_limited['near'][frames], sosfiltfilt(sos, out[lag:lag + count])[frames]
    gain = float(np.dot(output, near) / max(np.dot(near, near), 1e-20))
    return round(20 * np.log10(max(abs(gain), 1e-6)), 2)


def reconvergence_after_double_talk(row, scene_dir):
    """Seconds from the end of a double talk the path changed in (meta.json's `double_talk_change_s`) to 20 dB of ERLE
    over the far-end stretch after it, by the yardstick's rule for re-convergence (its 0.5 s windows: the first at 20
    dB or more whose next is too); None without such a change or if the stretch never gets there. The yardstick times
    re-convergence only from a change inside a far-end stretch; our held-out h09 (the change 1 s before the double
    talk's end, the far-end stretch counted from the change) can read no less than 1.5 s by it."""
    import numpy as np
    import metrics
    found, curve = double_talk_change(scene_dir), row.get('erle_curve')
    if found is None or curve is None:
        return None
    _, end, segments = found
    stretch = next((b for kind, a, b in segments if kind == 'far' and a <= end < b), None)
    if stretch is None:
        return None
    erle = np.array([np.nan if value is None else value for value in curve['erle_db']])
    return metrics.conv_time(curve['t'], erle, end, stretch, 20.0)


def figures(row, scene_dir, out_path):
    """The figures the report compares, from one scene's yardstick row and the system's output."""
    values = {key: row.get(key) for key in FIGURES}
    values['last_far_erle_db'] = (row.get('erle_segments_db') or [None])[-1]
    values['near_gain_after_move_db'] = talker_gain_after_move(scene_dir, out_path, row.get('lag_ms'))
    values['reconv20_after_double_talk_s'] = reconvergence_after_double_talk(row, scene_dir)
    return values


def report(results_path):
    """Prints ours against the perfect canceller per scene and writes the same as bounds.json beside the results."""
    with open(results_path) as f:
        results = json.load(f)
    ours, best = (results['systems'][name]['scenes'] for name in ('project', 'perfect'))
    print(f"\n{results['config_name']}: ours / the perfect canceller's")
    print(f"{'scene':34s} {'ERLE dB':>15s} {'ours-perfect':>12s} {'last far dB':>15s} {'re-conv s':>11s} "
          f"{'DT STOI':>15s} {'DT near dB':>15s} {'after move dB':>15s} {'after DT s':>11s}")
    rows, short = [], []
    for scene in results['scene_ids']:
        a, b = ours[scene], best[scene]
        if a.get('status') != 'ok' or b.get('status') != 'ok':
            print(f'{scene:34s} failed: {a.get("error") or b.get("error")}')
            rows.append({'scene': scene, 'failed': a.get('error') or b.get('error')})
            continue
        scene_dir = os.path.join(results['scene_root'], scene)
        x, y = (figures(row, scene_dir, os.path.join(os.path.dirname(results_path), 'outputs', name, scene + '.wav'))
                for row, name in ((a, 'project'), (b, 'perfect')))
        excess = x['erle_db'] - y['erle_db']
        if excess < -BOUND_MARGIN_DB:
            short.append(scene)
        rows.append({'scene': scene, 'ours': x, 'perfect': y, 'erle_over_perfect_db': round(excess, 2),
                     'canceller_short': excess < -BOUND_MARGIN_DB})
        print(f"{scene:34s} {figure(x['erle_db']):>6s} / {figure(y['erle_db']):>6s} {excess:>+12.1f} "
              f"{figure(x['last_far_erle_db']):>6s} / {figure(y['last_far_erle_db']):>6s} "
              f"{figure(x['reconv20_s']):>4s} / {figure(y['reconv20_s']):>4s} "
              f"{figure(x['dt_stoi'], 3):>6s} / {figure(y['dt_stoi'], 3):>6s} "
              f"{figure(x['dt_near_gain_db']):>6s} / {figure(y['dt_near_gain_db']):>6s} "
              f"{figure(x['near_gain_after_move_db']):>6s} / {figure(y['near_gain_after_move_db']):>6s} "
              f"{figure(x['reconv20_after_double_talk_s']):>4s} / {figure(y['reconv20_after_double_talk_s']):>4s}")
    print(f"ERLE more than {BOUND_MARGIN_DB:g} dB under the perfect canceller's (the canceller's to raise; elsewhere "
          f"the scene bounds it): {', '.join(short) if short else 'none'}")
    with open(os.path.join(os.path.dirname(results_path), 'bounds.json'), 'w') as f:
        json.dump({'config_name': results['config_name'], 'bound_margin_db': BOUND_MARGIN_DB, 'scenes': rows}, f,
                  indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest='command', required=True)
    one = commands.add_parser('perfect')
    one.add_argument('--mic', required=True)
    one.add_argument('--out', required=True)
    one.add_argument('--voice-rate', type=int, required=True)
    commands.add_parser('report').add_argument('results')
    args = parser.parse_args()
    if args.command == 'perfect':
        perfect(args.mic, args.out, args.voice_rate)
    else:
        report(args.results)


if __name__ == '__main__':
    main()
