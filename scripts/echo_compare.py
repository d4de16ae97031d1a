"""The report of scripts/echo-compare: two systems of one yardstick run (results.json), side by side.

  echo_compare.py RESULTS_JSON... [--base NAME] [--new NAME] [--json OUT] [--quiet]

Prints per run a summary row per system (the figures issue notes report), the scenes whose figures moved by more
than a figure's noise (`MOVED`), and how many outputs are sample for sample the same; given several runs, the same
over all their scenes as one; with --json, writes it.
"""

import argparse
import json
import os
import statistics
import sys
import warnings

from echo_bounds import figure

YARDSTICK = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'yardstick')
sys.path.insert(0, YARDSTICK)

# A figure moved when it changed by more than this (identical outputs score identically: the margins keep changes too
# small to read out of the list; a re-convergence time moves in 0.5 s windows, so any change counts).
MOVED = {'erle_db': 0.5, 'dt_stoi': 0.003, 'dt_pesq': 0.05, 'dt_near_gain_db': 0.2, 'dt_resid_db': 0.5,
         'near_pesq': 0.05, 'conv20_s': 0.0, 'reconv20_s': 0.0}
# Double talk's STOI under which a scene counts as losing the talker's intelligibility (issue 12's bar).
STOI_BAR = 0.93


def summary(scenes):
    """The figures of one system over a config's scenes that ran."""
    ok = [r for r in scenes.values() if r.get('status') == 'ok']
    if not ok:
        return {'scenes': len(scenes), 'ok': 0}

    def values(key):
        return [r[key] for r in ok if r.get(key) is not None]

    def of(key, statistic):
        found = values(key)
        return statistic(found) if found else None

    worst = min(ok, key=lambda r: r['erle_db'])
    stoi = values('dt_stoi')
    return {
        'scenes': len(scenes), 'ok': len(ok),
        'erle_median_db': statistics.median(values('erle_db')),
        'erle_worst_db': worst['erle_db'], 'erle_worst_scene': worst['scene'],
        'reconv20_median_s': of('reconv20_s', statistics.median),
        'dt_pesq_mean': of('dt_pesq', statistics.mean),
        'dt_stoi_mean': statistics.mean(stoi) if stoi else None,
        'dt_stoi_under_bar': sum(v < STOI_BAR for v in stoi),
        'dt_near_gain_min_db': of('dt_near_gain_db', min),
        'dt_resid_mean_db': of('dt_resid_db', statistics.mean),
        'near_pesq_min': of('near_pesq', min),
    }


def moved(base, new):
    """Per scene both ran in: the figures that moved, as (key, base, new)."""
    changes = {}
    for scene in sorted(set(base) & set(new)):
        a, b = base[scene], new[scene]
        if a.get('status') != 'ok' or b.get('status') != 'ok':
            if a.get('status') != b.get('status'):
                changes[scene] = [('status', a.get('status'), b.get('status'))]
            continue
        rows = []
        for key, margin in MOVED.items():
            x, y = a.get(key), b.get(key)
            if (x is None) != (y is None) or (x is not None and abs(x - y) > margin):
                rows.append((key, x, y))
        if rows:
            changes[scene] = rows
    return changes


def identical(outputs, base, new, scenes):
    """The scenes whose two outputs hold the same samples."""
    from wavio import read_wav
    same = []
    for scene in scenes:
        paths = [os.path.join(outputs, system, scene + '.wav') for system in (base, new)]
        if not all(os.path.exists(p) for p in paths):
            continue
        (x, rate_x), (y, rate_y) = (read_wav(p) for p in paths)
        if rate_x == rate_y and len(x) == len(y) and (x == y).all():
            same.append(scene)
    return same


def compare(results_path, base, new):
    """One run's scenes, summaries, moved figures and identical outputs, for both systems."""
    with open(results_path) as f:
        results = json.load(f)
    scenes = {name: results['systems'][name]['scenes'] for name in (base, new)}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        same = identical(os.path.join(os.path.dirname(results_path), 'outputs'), base, new, results['scene_ids'])
    return {'config': results['config_name'], 'scenes': scenes, 'count': len(results['scene_ids']),
            'summary': {name: summary(scenes[name]) for name in (base, new)},
            'moved': moved(scenes[base], scenes[new]), 'identical': same}


def print_comparison(title, comparison, base, new):
    print(f'\n{title}: {base} against {new}')
    print('| system | ERLE median / worst dB (scene) | re-conv 20 dB median s | DT PESQ mean | DT STOI mean '
          f'(under {STOI_BAR}) | DT near gain min dB | DT echo left mean dB | near-only PESQ min |')
    print('|' + '---|' * 8)
    for name in (base, new):
        s = comparison['summary'][name]
        if not s['ok']:
            print(f'| {name} | no scene ran |' + ' |' * 6)
            continue
        print(f"| {name} | {figure(s['erle_median_db'])} / {figure(s['erle_worst_db'])} ({s['erle_worst_scene']}) "
              f"| {figure(s['reconv20_median_s'], 2)} | {figure(s['dt_pesq_mean'], 2)} "
              f"| {figure(s['dt_stoi_mean'], 3)} ({s['dt_stoi_under_bar']}) | {figure(s['dt_near_gain_min_db'], 2)} "
              f"| {figure(s['dt_resid_mean_db'])} | {figure(s['near_pesq_min'], 2)} |")
    for scene, rows in comparison['moved'].items():
        print(f'  {scene}: ' + '; '.join(f'{key} {x} -> {y}' if key == 'status'
                                          else f'{key} {figure(x, 3)} -> {figure(y, 3)}' for key, x, y in rows))
    print(f"  sample-identical outputs: {len(comparison['identical'])} of {comparison['count']}; "
          f"figures moved in {len(comparison['moved'])} scenes")


def overall(comparisons, base, new):
    """The runs of several configs as one: scenes named config/scene."""
    def named(key):
        return {f"{c['config']}/{scene}": value for c in comparisons for scene, value in c[key].items()}
    scenes = {name: {f"{c['config']}/{scene}": row for c in comparisons for scene, row in c['scenes'][name].items()}
              for name in (base, new)}
    return {'config': 'all', 'scenes': scenes, 'count': sum(c['count'] for c in comparisons),
            'summary': {name: summary(scenes[name]) for name in (base, new)}, 'moved': named('moved'),
            'identical': [f"{c['config']}/{scene}" for c in comparisons for scene in c['identical']]}


def as_json(comparison, base, new):
    return {'config': comparison['config'], 'base': base, 'new': new, 'summary': comparison['summary'],
            'moved': {scene: [{'figure': k, base: x, new: y} for k, x, y in rows]
                      for scene, rows in comparison['moved'].items()},
            'identical': comparison['identical']}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('results', nargs='+', help="yardstick runs' results.json (several: also their sum as one)")
    parser.add_argument('--base', default='base', help='the system compared against (default: base)')
    parser.add_argument('--new', default='new', help='the system compared (default: new)')
    parser.add_argument('--json', help='write the comparison here too (the sum of all runs given, with several)')
    parser.add_argument('--quiet', action='store_true', help='print only the sum of the runs, not each run')
    args = parser.parse_args()
    comparisons = [compare(path, args.base, args.new) for path in args.results]
    if not args.quiet:
        for comparison in comparisons:
            print_comparison(comparison['config'], comparison, args.base, args.new)
    result = comparisons[0] if len(comparisons) == 1 else overall(comparisons, args.base, args.new)
    if len(comparisons) > 1:
        print_comparison(f'all {len(comparisons)} configs', result, args.base, args.new)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(as_json(result, args.base, args.new), f, indent=1)


if __name__ == '__main__':
    main()
