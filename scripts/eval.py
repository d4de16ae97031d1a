"""Echo cancellation over a grid of simulated rooms: runs `voicepeer simulate` per room, measures ERLE over
time from the recordings, prints a table and draws PNG plots. Called by scripts/eval (which builds voicepeer
and provides numpy and matplotlib); see `scripts/eval --help`."""

import argparse
import itertools
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np

WINDOW_SECONDS = 0.5
HOP_SECONDS = 0.25
BAND_HZ = (100.0, 7000.0)
# A window counts as far-end single talk when the echo at the microphone is within this many dB of its loudest
# window (the scenes have no near talker, so the microphone holds echo and the noise floor only).
ACTIVE_RANGE_DB = 25.0
# Converged ERLE is measured from here on (the yardstick's convention), and "final" over the last seconds.
SETTLE_SECONDS = 2.0
FINAL_SECONDS = 4.0
MAX_OUTPUT_LAG_SECONDS = 0.1
# Loudspeaker drive for the "clipping" rooms: tanh(3x)/3 squeezes the speech peaks by about 8 dB.
CLIPPING_DRIVE = 3.0


class Room:
    def __init__(self, delay_ms, rt60, erl_db, drift_ppm, clipping):
        self.delay_ms, self.rt60, self.erl_db = delay_ms, rt60, erl_db
        self.drift_ppm, self.clipping = drift_ppm, clipping

    @property
    def name(self):
        return (f"d{self.delay_ms:g}ms rt{self.rt60:g}s erl{self.erl_db:+g}dB "
                f"{self.drift_ppm:+g}ppm{' clip' if self.clipping else ''}")

    @property
    def slug(self):
        return re.sub(r"[^A-Za-z0-9.+-]+", "_", self.name)

    def flags(self):
        flags = [f"--delay-ms={self.delay_ms:g}", f"--rt60={self.rt60:g}", f"--erl-db={self.erl_db:g}",
                 f"--drift-ppm={self.drift_ppm:g}"]
        if self.clipping:
            flags.append(f"--loudspeaker-drive={CLIPPING_DRIVE:g}")
        return flags


def grid(quick):
    if quick:
        axes = ([20, 150, 400], [0.2, 0.5], [-3], [0, 200], [False, True])
    else:
        axes = ([20, 150, 400], [0.2, 0.5], [-3, 10], [0, 200, -200], [False, True])
    return [Room(*values) for values in itertools.product(*axes)]


# MARK: WAV files

def read_wav(path):
    """Mono float samples and the rate of a PCM (16/24/32-bit) or float32 WAV file."""
    with open(path, "rb") as handle:
        data = handle.read()
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError(f"{path}: not a RIFF/WAVE file")
    position, fmt, samples = 12, None, None
    while position + 8 <= len(data):
        chunk_id, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        body = data[position + 8:position + 8 + size]
        if chunk_id == b"fmt ":
            if len(body) < 16:
                raise ValueError(f"{path}: short fmt chunk")
            tag, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if tag == 0xFFFE and len(body) >= 26:
                tag = struct.unpack("<H", body[24:26])[0]
            fmt = (tag, channels, rate, bits)
        elif chunk_id == b"data":
            samples = body
        position += 8 + size + (size & 1)
    if fmt is None or samples is None:
        raise ValueError(f"{path}: missing fmt or data chunk")
    tag, channels, rate, bits = fmt
    if channels < 1:
        raise ValueError(f"{path}: no channels")
    if tag == 3 and bits == 32:
        values = np.frombuffer(samples[:len(samples) // 4 * 4], dtype="<f4").astype(np.float64)
    elif tag == 1 and bits == 16:
        values = np.frombuffer(samples[:len(samples) // 2 * 2], dtype="<i2") / 32768.0
    elif tag == 1 and bits == 32:
        values = np.frombuffer(samples[:len(samples) // 4 * 4], dtype="<i4") / 2147483648.0
    elif tag == 1 and bits == 24:
        raw = np.frombuffer(samples[:len(samples) // 3 * 3], dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        values = ((raw[:, 0] | raw[:, 1] << 8 | raw[:, 2] << 16) << 8 >> 8) / 8388608.0
    else:
        raise ValueError(f"{path}: unsupported WAV format (tag {tag}, {bits} bits)")
    frames = len(values) // channels
    return values[:frames * channels].reshape(frames, channels).mean(axis=1), rate


def write_wav16(path, samples, rate):
    pcm = np.clip(np.round(samples * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(pcm.tobytes())


def make_far_voice(fixture, path):
    """The far-end voice: the fixture, half a second of silence, the fixture again (about 14 s)."""
    voice, rate = read_wav(fixture)
    write_wav16(path, np.concatenate([voice, np.zeros(rate // 2), voice]), rate)


# MARK: Measuring

def band_limited_resample(samples, input_rate, output_rate):
    """Resamples by cutting or padding the spectrum: exact for the band below both Nyquist rates."""
    count = int(round(len(samples) * output_rate / input_rate))
    spectrum = np.fft.rfft(samples)
    bins = count // 2 + 1
    spectrum = spectrum[:bins] if len(spectrum) >= bins else np.pad(spectrum, (0, bins - len(spectrum)))
    return np.fft.irfft(spectrum, count) * (count / len(samples))


def output_lag_frames(microphone, output, rate):
    """Frames the output trails the microphone (0–100 ms), from their cross-correlation in the first 2 s, where
    the canceller has not yet removed the echo."""
    span = min(len(microphone), len(output), int(2 * rate))
    a, b = microphone[:span], output[:span]
    size = 2 * span
    correlation = np.fft.irfft(np.fft.rfft(b, size) * np.conj(np.fft.rfft(a, size)), size)
    return int(np.argmax(np.abs(correlation[:int(MAX_OUTPUT_LAG_SECONDS * rate) + 1])))


def band_powers(samples, rate):
    """Mean power in BAND_HZ per window (WINDOW_SECONDS long, HOP_SECONDS apart), and the windows' end times."""
    window, hop = int(WINDOW_SECONDS * rate), int(HOP_SECONDS * rate)
    frequencies = np.fft.rfftfreq(window, 1 / rate)
    band = (frequencies >= BAND_HZ[0]) & (frequencies <= BAND_HZ[1])
    taper = np.hanning(window)
    starts = np.arange(0, max(len(samples) - window, 0) + 1, hop)
    powers = np.array([np.sum(np.abs(np.fft.rfft(samples[s:s + window] * taper)[band]) ** 2) for s in starts])
    return powers / window, (starts + window) / rate


def measure(run_dir, voice_rate):
    """ERLE over time and its summary figures for one simulated room."""
    microphone, device_rate = read_wav(os.path.join(run_dir, "microphone.wav"))
    loudspeaker, _ = read_wav(os.path.join(run_dir, "loudspeaker.wav"))
    output, output_rate = read_wav(os.path.join(run_dir, "out.wav"))
    if output_rate != voice_rate:
        raise ValueError(f"{run_dir}/out.wav is {output_rate} Hz, expected {voice_rate}")
    microphone = band_limited_resample(microphone, device_rate, voice_rate)
    lag = output_lag_frames(microphone, output, voice_rate)
    output = output[lag:]
    count = min(len(microphone), len(output))
    mic_power, times = band_powers(microphone[:count], voice_rate)
    out_power, _ = band_powers(output[:count], voice_rate)
    far_power, far_times = band_powers(band_limited_resample(loudspeaker, device_rate, voice_rate), voice_rate)
    far_active = far_power > far_power.max() * 10 ** (-ACTIVE_RANGE_DB / 10)
    far_start = far_times[np.argmax(far_active)] - WINDOW_SECONDS if far_active.any() else 0.0
    active = mic_power > mic_power.max() * 10 ** (-ACTIVE_RANGE_DB / 10)
    erle = 10 * np.log10(np.maximum(mic_power, 1e-20) / np.maximum(out_power, 1e-20))

    def ratio_db(mask):
        mask = mask & active
        if not mask.any():
            return None
        return float(10 * np.log10(mic_power[mask].sum() / max(out_power[mask].sum(), 1e-20)))

    def time_to(level_db):
        reached = active & (erle >= level_db)
        return float(times[np.argmax(reached)] - far_start) if reached.any() else None

    return {
        "output_lag_ms": 1000 * lag / voice_rate,
        "far_start_s": float(far_start),
        "times_s": [float(t) for t in times[active]],
        "erle_db": [float(e) for e in erle[active]],
        "erle_after_settle_db": ratio_db(times >= SETTLE_SECONDS + WINDOW_SECONDS),
        "erle_final_db": ratio_db(times >= times[active].max() - FINAL_SECONDS) if active.any() else None,
        "to_10db_s": time_to(10),
        "to_20db_s": time_to(20),
    }


def simulate(binary, far, room, work, voice_rate):
    run_dir = os.path.join(work, room.slug)
    os.makedirs(run_dir, exist_ok=True)
    report_path = os.path.join(run_dir, "report.json")
    command = [binary, "simulate", "--far", far, "--out", os.path.join(run_dir, "out.wav"), "--no-agc",
               f"--voice-rate={voice_rate}", "--record-dir", run_dir, "--report", report_path, *room.flags()]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        raise RuntimeError(f"{room.name}: voicepeer simulate failed: {finished.stderr.strip()}")
    with open(report_path) as file:
        report = json.load(file)  # SimulationReport (Sources/VoiceIOSimulation/Session)
    unit = report["unit"]
    result = {"room": room.name, **vars(room), "estimated": unit["isDelayEstimated"],
              "engine_erle_db": unit["erleDB"],
              "delay_found_ms": unit["measuredDelayMilliseconds"] if unit["isDelayEstimated"] else None,
              "room_delay_ms": report["roomEchoDelayMilliseconds"]}
    result.update(measure(run_dir, voice_rate))
    return result, run_dir


# MARK: Reporting

def cell(value, unit="", digits=1, missing="n/r"):
    return missing if value is None else f"{value:.{digits}f}{unit}"


def print_table(results):
    header = (f"{'room':<40} {'ERLE>2s':>8} {'final':>6} {'to 10dB':>8} {'to 20dB':>8} "
              f"{'delay found/room':>17} {'engine':>7}")
    print(header)
    print("-" * len(header))
    for r in results:
        delay = f"{cell(r['delay_found_ms'], digits=0)}/{cell(r['room_delay_ms'], digits=0)} ms"
        if not r["estimated"]:
            delay = "(none) " + delay
        print(f"{r['room']:<40} {cell(r['erle_after_settle_db']):>8} {cell(r['erle_final_db']):>6} "
              f"{cell(r['to_10db_s'], ' s'):>8} {cell(r['to_20db_s'], ' s'):>8} {delay:>17} "
              f"{cell(r['engine_erle_db']):>7}")
    converged = [r["erle_after_settle_db"] for r in results if r["erle_after_settle_db"] is not None]
    reached = [r["to_20db_s"] for r in results if r["to_20db_s"] is not None]
    print("-" * len(header))
    print(f"ERLE after 2 s: median {np.median(converged):.1f} dB, worst {min(converged):.1f} dB; "
          f"20 dB reached in {len(reached)} of {len(results)} rooms"
          + (f", median {np.median(reached):.2f} s" if reached else ""))


def drift_order(ppm):
    """No drift first, then by size, positive before negative."""
    return (abs(ppm), -ppm)


def panel_key(r):
    return (r["rt60"], r["erl_db"])


def plot_over_time(results, path):
    import matplotlib.pyplot as plt
    delays = sorted({r["delay_ms"] for r in results})
    panels = sorted({panel_key(r) for r in results})
    drifts = sorted({r["drift_ppm"] for r in results}, key=drift_order)
    colors = dict(zip(drifts, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]))
    figure, axes = plt.subplots(len(delays), len(panels), figsize=(4.2 * len(panels), 3.0 * len(delays)),
                                sharex=True, sharey=True, squeeze=False)
    end = max(max(r["times_s"], default=0) for r in results)
    for row, delay in enumerate(delays):
        for column, key in enumerate(panels):
            axis = axes[row][column]
            for r in results:
                if r["delay_ms"] != delay or panel_key(r) != key:
                    continue
                axis.plot(r["times_s"], r["erle_db"], color=colors[r["drift_ppm"]],
                          linestyle="--" if r["clipping"] else "-", linewidth=1.2,
                          label=f"{r['drift_ppm']:+g} ppm{', clipping' if r['clipping'] else ''}")
            axis.axhline(20, color="grey", linewidth=0.8, linestyle=":")
            axis.set_xlim(0, end)
            axis.set_ylim(bottom=min(0, axis.get_ylim()[0]))
            axis.grid(alpha=0.3)
            axis.set_title(f"delay {delay:g} ms, RT60 {key[0]:g} s, ERL {key[1]:+g} dB", fontsize=9)
            if column == 0:
                axis.set_ylabel("ERLE (dB)")
            if row == len(delays) - 1:
                axis.set_xlabel("time (s)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.suptitle("ERLE over time (0.5 s windows of far-end single talk; dotted: 20 dB)", fontsize=11)
    top = 1 - 0.75 / figure.get_figheight()
    figure.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, top + 0.1 / figure.get_figheight()),
                  ncol=len(labels), fontsize=9, frameon=False)
    figure.tight_layout(rect=(0, 0, 1, top - 0.05 / figure.get_figheight()))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_summary(results, path):
    import matplotlib.pyplot as plt
    rows = sorted({(r["delay_ms"], r["rt60"], r["erl_db"]) for r in results})
    columns = sorted({(r["drift_ppm"], r["clipping"]) for r in results}, key=lambda c: (c[1], drift_order(c[0])))
    figure, axes = plt.subplots(1, 2, figsize=(4 + 2.2 * len(columns), 1.2 + 0.42 * len(rows)))
    specs = [("erle_after_settle_db", "ERLE after 2 s (dB)", "RdYlGn", 0, 50, "{:.0f}"),
             ("to_20db_s", "time to 20 dB (s)", "RdYlGn_r", 0, 5, "{:.1f}")]
    by_key = {((r["delay_ms"], r["rt60"], r["erl_db"]), (r["drift_ppm"], r["clipping"])): r for r in results}
    for axis, (field, title, colormap, low, high, text) in zip(axes, specs):
        values = np.full((len(rows), len(columns)), np.nan)
        for i, row in enumerate(rows):
            for j, column in enumerate(columns):
                r = by_key.get((row, column))
                if r is not None and r[field] is not None:
                    values[i, j] = r[field]
        shown = np.where(np.isnan(values), high, values) if field == "to_20db_s" else values
        image = axis.imshow(shown, cmap=colormap, vmin=low, vmax=high, aspect="auto")
        for i in range(len(rows)):
            for j in range(len(columns)):
                label = "n/r" if np.isnan(values[i, j]) else text.format(values[i, j])
                extreme = abs((shown[i, j] - low) / (high - low) - 0.5) > 0.35
                axis.text(j, i, label, ha="center", va="center", fontsize=8, color="white" if extreme else "black")
        axis.set_xticks(range(len(columns)))
        axis.set_xticklabels([f"{d:+g} ppm\n{'clipping' if c else 'linear'}" for d, c in columns], fontsize=8)
        axis.set_yticks(range(len(rows)))
        axis.set_yticklabels([f"{d:g} ms, RT60 {t:g} s, ERL {e:+g}" for d, t, e in rows], fontsize=8)
        axis.set_title(title, fontsize=10)
        figure.colorbar(image, ax=axis, fraction=0.05)
    figure.suptitle("Echo cancellation per room (rows: bulk delay, RT60, ERL; columns: drift, loudspeaker)",
                    fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", required=True, help="voicepeer executable")
    parser.add_argument("--fixture", required=True, help="far-end speech WAV")
    parser.add_argument("--out", required=True, help="folder for plots, results.json and (with --keep) runs")
    parser.add_argument("--quick", action="store_true", help="24 rooms instead of 72")
    parser.add_argument("--keep", action="store_true", help="keep each room's WAV files")
    parser.add_argument("--voice-rate", type=int, default=16000)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    options = parser.parse_args()

    options.out = os.path.abspath(options.out)
    os.makedirs(options.out, exist_ok=True)
    work = os.path.join(options.out, "runs")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    far = os.path.join(work, "far.wav")
    make_far_voice(options.fixture, far)
    rooms = grid(options.quick)
    print(f"eval: simulating {len(rooms)} rooms ({options.jobs} at a time)", flush=True)

    def run(room):
        result, run_dir = simulate(options.binary, far, room, work, options.voice_rate)
        if not options.keep:
            shutil.rmtree(run_dir)
        return result

    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        results = list(pool.map(run, rooms))
    if not options.keep:
        shutil.rmtree(work)
    with open(os.path.join(options.out, "results.json"), "w") as handle:
        json.dump(results, handle, indent=1)
    print_table(results)
    over_time = os.path.join(options.out, "erle_over_time.png")
    summary = os.path.join(options.out, "summary.png")
    plot_over_time(results, over_time)
    plot_summary(results, summary)
    print(f"eval: plots {over_time} and {summary}; figures in {os.path.join(options.out, 'results.json')}")
    print(f"eval: time to 10/20 dB counts from the first far-end speech; 'final' is the last {FINAL_SECONDS:g} s; "
          f"ERLE is microphone over output power, {BAND_HZ[0]:g}-{BAND_HZ[1]:g} Hz, windows of far-end single talk")


if __name__ == "__main__":
    sys.exit(main())
