/*
 * The floor for `voicepeer process`: libspeexdsp's pipeline made directly, with nothing around them (its MDF echo
 * canceller where VoiceIO now runs its own, `BlockAdaptiveFilter`; the resampler and preprocessor are the same calls).
 *
 *   speex_pipeline --mic MIC.wav --far FAR.wav --out OUT.wav [--voice-rate 16000] [--filter-ms 200]
 *                  [--stage resample|aec|full]
 *
 * Per 10 ms device period: both signals down-converted to the voice rate (speex resampler, quality 5), then per
 * 10 ms voice block: float -> int16, speex_echo_cancellation (MDF), speex_preprocess_run (denoise -15 dB; not
 * linked to the canceller, as in VoiceIO, whose own suppressor replaces speex's residual echo suppression; no
 * AGC), int16 -> float. `--stage` stops after the
 * resampler or after the canceller, to price each stage. No delay alignment, no suppression of our own.
 *
 * Prints one line: `cpu_seconds T audio_seconds S`, T being the thread CPU time of the processing loop (file
 * reading and writing excluded; the process's own rusage includes them). Stages are priced by running with
 * `--stage` and taking differences, so no timer runs inside the loop.
 * Build: cc -O2 bench/speex_pipeline.c $(pkg-config --cflags --libs speexdsp sndfile) -lm
 */
#include <math.h>
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#include <speex/speex_resampler.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum stage { STAGE_RESAMPLE, STAGE_AEC, STAGE_FULL };

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "speex_pipeline: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static double thread_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* Whole file, mono (channels averaged). */
static float *read_mono(const char *path, int *rate, long *frames) {
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *file = sf_open(path, SFM_READ, &info);
    if (!file) fail(path, sf_strerror(NULL));
    if (info.channels < 1 || info.frames <= 0 || info.frames > (sf_count_t)1 << 31) fail(path, "no usable audio");
    float *interleaved = malloc(sizeof(float) * (size_t)info.frames * (size_t)info.channels);
    float *mono = malloc(sizeof(float) * (size_t)info.frames);
    if (!interleaved || !mono) fail("out of memory", NULL);
    sf_count_t got = sf_readf_float(file, interleaved, info.frames);
    sf_close(file);
    for (sf_count_t i = 0; i < got; i++) {
        float sum = 0;
        for (int c = 0; c < info.channels; c++) sum += interleaved[i * info.channels + c];
        mono[i] = sum / (float)info.channels;
    }
    free(interleaved);
    *rate = info.samplerate;
    *frames = (long)got;
    return mono;
}

static void to_int16(const float *in, spx_int16_t *out, int count) {
    for (int i = 0; i < count; i++) {
        float scaled = roundf(in[i] * 32768.0f);
        out[i] = (spx_int16_t)(scaled > 32767.0f ? 32767.0f : scaled < -32768.0f ? -32768.0f : scaled);
    }
}

int main(int argc, char **argv) {
    const char *mic_path = NULL, *far_path = NULL, *out_path = NULL;
    int voice_rate = 16000;
    double filter_ms = 200;
    enum stage stage = STAGE_FULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mic")) mic_path = argv[i + 1];
        else if (!strcmp(argv[i], "--far")) far_path = argv[i + 1];
        else if (!strcmp(argv[i], "--out")) out_path = argv[i + 1];
        else if (!strcmp(argv[i], "--voice-rate")) voice_rate = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--filter-ms")) filter_ms = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--stage")) {
            if (!strcmp(argv[i + 1], "resample")) stage = STAGE_RESAMPLE;
            else if (!strcmp(argv[i + 1], "aec")) stage = STAGE_AEC;
            else if (!strcmp(argv[i + 1], "full")) stage = STAGE_FULL;
            else fail("--stage must be resample, aec or full", argv[i + 1]);
        } else fail("unknown argument", argv[i]);
    }
    if (!mic_path || !far_path || !out_path) fail("usage: --mic MIC.wav --far FAR.wav --out OUT.wav", NULL);
    if (voice_rate < 8000 || voice_rate > 48000 || !(filter_ms >= 10 && filter_ms <= 2000)) fail("bad rate or filter", NULL);

    int device_rate, far_rate;
    long mic_frames, far_frames;
    float *mic = read_mono(mic_path, &device_rate, &mic_frames);
    float *far = read_mono(far_path, &far_rate, &far_frames);
    if (far_rate != device_rate) fail("microphone and loudspeaker rates differ", NULL);

    const int period = device_rate / 100, block = voice_rate / 100;
    const int filter_frames = (int)lround(filter_ms * voice_rate / 1000);
    int error = 0;
    SpeexResamplerState *mic_resampler = speex_resampler_init(1, device_rate, voice_rate, 5, &error);
    if (!mic_resampler) fail("speex_resampler_init", speex_resampler_strerror(error));
    SpeexResamplerState *far_resampler = speex_resampler_init(1, device_rate, voice_rate, 5, &error);
    if (!far_resampler) fail("speex_resampler_init", speex_resampler_strerror(error));
    SpeexEchoState *echo = speex_echo_state_init(block, filter_frames);
    SpeexPreprocessState *preprocess = speex_preprocess_state_init(block, voice_rate);
    if (!echo || !preprocess) fail("speex state init failed", NULL);
    speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &voice_rate);
    int on = 1, off = 0, noise_db = -15;
    speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_DENOISE, &on);
    speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &noise_db);
    speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_AGC, &off);

    /* FIFOs of converted audio: a period yields at most period * voice / device + 2 frames. */
    const int fifo_capacity = 4 * (period * voice_rate / device_rate + block + 8);
    float *mic_fifo = calloc((size_t)fifo_capacity, sizeof(float));
    float *far_fifo = calloc((size_t)fifo_capacity, sizeof(float));
    float *period_far = calloc((size_t)period, sizeof(float));
    spx_int16_t *mic_block = calloc((size_t)block, sizeof(spx_int16_t));
    spx_int16_t *far_block = calloc((size_t)block, sizeof(spx_int16_t));
    spx_int16_t *clean_block = calloc((size_t)block, sizeof(spx_int16_t));
    const long output_capacity = (mic_frames / period + 2) * (long)(period * voice_rate / device_rate + block + 8);
    float *output = calloc((size_t)output_capacity, sizeof(float));
    if (!mic_fifo || !far_fifo || !period_far || !mic_block || !far_block || !clean_block || !output)
        fail("out of memory", NULL);

    int mic_fill = 0, far_fill = 0;
    long written = 0;
    const double loop_start = thread_seconds();
    for (long start = 0; start + period <= mic_frames; start += period) {
        for (int i = 0; i < period; i++) period_far[i] = start + i < far_frames ? far[start + i] : 0;
        spx_uint32_t in = (spx_uint32_t)period, out = (spx_uint32_t)(fifo_capacity - mic_fill);
        speex_resampler_process_float(mic_resampler, 0, mic + start, &in, mic_fifo + mic_fill, &out);
        mic_fill += (int)out;
        in = (spx_uint32_t)period;
        out = (spx_uint32_t)(fifo_capacity - far_fill);
        speex_resampler_process_float(far_resampler, 0, period_far, &in, far_fifo + far_fill, &out);
        far_fill += (int)out;
        while (mic_fill >= block && far_fill >= block) {
            if (stage == STAGE_RESAMPLE) {
                memcpy(output + written, mic_fifo, sizeof(float) * (size_t)block);
            } else {
                to_int16(mic_fifo, mic_block, block);
                to_int16(far_fifo, far_block, block);
                speex_echo_cancellation(echo, mic_block, far_block, clean_block);
                if (stage == STAGE_FULL) speex_preprocess_run(preprocess, clean_block);
                for (int i = 0; i < block; i++) output[written + i] = (float)clean_block[i] * (1.0f / 32768.0f);
            }
            written += block;
            mic_fill -= block;
            far_fill -= block;
            memmove(mic_fifo, mic_fifo + block, sizeof(float) * (size_t)mic_fill);
            memmove(far_fifo, far_fifo + block, sizeof(float) * (size_t)far_fill);
        }
    }
    const double loop_seconds = thread_seconds() - loop_start;

    SF_INFO info = {.samplerate = voice_rate, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
    SNDFILE *file = sf_open(out_path, SFM_WRITE, &info);
    if (!file) fail(out_path, sf_strerror(NULL));
    if (sf_writef_float(file, output, written) != written) fail(out_path, sf_strerror(file));
    sf_close(file);
    printf("cpu_seconds %.4f audio_seconds %.3f\n", loop_seconds, (double)mic_frames / device_rate);

    speex_resampler_destroy(mic_resampler);
    speex_resampler_destroy(far_resampler);
    speex_echo_state_destroy(echo);
    speex_preprocess_state_destroy(preprocess);
    free(mic); free(far); free(mic_fifo); free(far_fifo); free(period_far);
    free(mic_block); free(far_block); free(clean_block); free(output);
    return 0;
}
