"""Splits a `perf script -F ip,sym,dso` dump (symbols demangled by swift-demangle) of `voicepeer process` into
where the CPU went: libspeexdsp, the Swift glue around it and our MDF (the stages the C floor program also runs,
there with speexdsp's MDF), file I/O,
each other VoiceIO type (what VoiceIO adds on top), and the rest (start-up, argument parsing, runtime).

Each sample goes to its leaf-most frame that names a VoiceIO type (helpers such as the FFT count for their
caller); samples in libspeexdsp go to libspeexdsp whatever called them. Standard library only.

    bench_profile.py TYPES_FILE < demangled-perf-script
TYPES_FILE lists the VoiceIO type names, one a line. Prints `category<TAB>fraction` lines, largest first."""

import collections
import re
import sys

# The Swift side of the pipeline the C program also runs: conversion, FIFOs, the speexdsp wrappers.
# PolyphaseDecimator is the speexdsp resampler's filter from a table of its phases: the C program's resampling.
GLUE = {"CaptureChain", "EchoPipeline", "RateConverter", "Resampler", "PolyphaseDecimator",
        "Preprocessor", "OfflineVoiceProcessor", "PassThroughProcessor"}
# Our echo canceller, in place of the speexdsp MDF the C program calls: priced against that stage of the C loop.
MDF = {"EchoCanceller", "BlockAdaptiveFilter"}
FILE_IO = {"AudioFileReader", "AudioFileWriter"}
# Helpers that count for whoever calls them.
HELPERS = {"RealFFT", "MixedRadixRealFFT", "PassGeometry", "FFT", "SPSCRing", "LevelMeter", "SampleConversion", "AtomicFloat"}
SHARED_LABEL = "libspeexdsp (resample, preprocess)"
MDF_LABEL = "our MDF (BlockAdaptiveFilter, its FFT)"
GLUE_LABEL = "Swift glue around speexdsp (conversion, FIFOs)"
FILE_LABEL = "file I/O (libsndfile, reading, writing)"
OTHER_LABEL = "other (start-up, arguments, runtime)"

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$")
TYPE_NAME = re.compile(r"\b([A-Z][A-Za-z0-9_]*)(?:<[^()]*?>)?\.[A-Za-z_(]")


def classify(frames, types):
    if frames and "libspeexdsp" in frames[0][1]:
        return SHARED_LABEL
    for symbol, dso in frames:
        if "libsndfile" in dso:
            return FILE_LABEL
        for name in TYPE_NAME.findall(symbol):
            if name not in types or name in HELPERS:
                continue
            if name in GLUE:
                return GLUE_LABEL
            if name in MDF:
                return MDF_LABEL
            if name in FILE_IO:
                return FILE_LABEL
            return f"{name} (VoiceIO addition)"
    return OTHER_LABEL


def samples(lines):
    frames = []
    for line in lines:
        match = FRAME.match(line)
        if match:
            frames.append((match.group(1), match.group(2)))
        elif not line.strip() and frames:
            yield frames
            frames = []
    if frames:
        yield frames


def main():
    with open(sys.argv[1]) as handle:
        types = {line.strip() for line in handle if line.strip()}
    counts = collections.Counter(classify(frames, types) for frames in samples(sys.stdin))
    total = sum(counts.values())
    if total == 0:
        sys.exit("bench_profile: no samples")
    for label, count in counts.most_common():
        print(f"{label}\t{count / total:.4f}")
    print(f"samples\t{total}")


if __name__ == "__main__":
    main()
