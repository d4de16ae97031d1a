#define _GNU_SOURCE
#include "voice_shims.h"
#include <poll.h>
#include <time.h>

int voice_opus_encoder_set_bitrate(OpusEncoder *st, int bits_per_second) {
    return opus_encoder_ctl(st, OPUS_SET_BITRATE(bits_per_second));
}
int voice_opus_encoder_set_complexity(OpusEncoder *st, int complexity) {
    return opus_encoder_ctl(st, OPUS_SET_COMPLEXITY(complexity));
}
int voice_opus_encoder_set_inband_fec(OpusEncoder *st, int enabled) {
    return opus_encoder_ctl(st, OPUS_SET_INBAND_FEC(enabled ? 1 : 0));
}
int voice_opus_encoder_set_packet_loss_perc(OpusEncoder *st, int percent) {
    return opus_encoder_ctl(st, OPUS_SET_PACKET_LOSS_PERC(percent));
}
int voice_opus_encoder_set_dtx(OpusEncoder *st, int enabled) {
    return opus_encoder_ctl(st, OPUS_SET_DTX(enabled ? 1 : 0));
}
int voice_opus_encoder_set_signal_voice(OpusEncoder *st) {
    return opus_encoder_ctl(st, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
}
int voice_opus_encoder_get_lookahead(OpusEncoder *st, int *samples) {
    opus_int32 v = 0;
    int rc = opus_encoder_ctl(st, OPUS_GET_LOOKAHEAD(&v));
    *samples = (int)v;
    return rc;
}
int voice_opus_encoder_get_bitrate(OpusEncoder *st, int *bits_per_second) {
    opus_int32 v = 0;
    int rc = opus_encoder_ctl(st, OPUS_GET_BITRATE(&v));
    *bits_per_second = (int)v;
    return rc;
}
int voice_opus_encoder_reset(OpusEncoder *st) {
    return opus_encoder_ctl(st, OPUS_RESET_STATE);
}
int voice_opus_decoder_reset(OpusDecoder *st) {
    return opus_decoder_ctl(st, OPUS_RESET_STATE);
}
int voice_opus_decoder_get_last_packet_duration(OpusDecoder *st, int *samples) {
    opus_int32 v = 0;
    int rc = opus_decoder_ctl(st, OPUS_GET_LAST_PACKET_DURATION(&v));
    *samples = (int)v;
    return rc;
}

int voice_wait_readable(int fd, long long timeout_ns) {
    struct pollfd request = { .fd = fd, .events = POLLIN, .revents = 0 };
    if (timeout_ns < 0) return ppoll(&request, 1, NULL, NULL);
    struct timespec timeout = { .tv_sec = timeout_ns / 1000000000LL, .tv_nsec = timeout_ns % 1000000000LL };
    return ppoll(&request, 1, &timeout, NULL);
}

#include <errno.h>
#include <sys/random.h>

int voice_random_bytes(void *buf, unsigned long count) {
    unsigned char *bytes = buf;
    while (count > 0) {
        ssize_t got = getrandom(bytes, count, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += got;
        count -= (unsigned long)got;
    }
    return 0;
}
