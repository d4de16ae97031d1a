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
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

long voice_receive_datagram(int fd, void *buf, unsigned long capacity, void *from, unsigned int *from_length,
                            unsigned int *dropped) {
    struct iovec data = { .iov_base = buf, .iov_len = capacity };
    union { struct cmsghdr header; char bytes[CMSG_SPACE(sizeof(unsigned int))]; } control;
    struct msghdr message = {
        .msg_name = from, .msg_namelen = *from_length, .msg_iov = &data, .msg_iovlen = 1,
        .msg_control = control.bytes, .msg_controllen = sizeof control.bytes, .msg_flags = 0
    };
    ssize_t received = recvmsg(fd, &message, MSG_TRUNC | MSG_DONTWAIT);
    if (received < 0) return -1;
    *from_length = message.msg_namelen;
    for (struct cmsghdr *item = CMSG_FIRSTHDR(&message); item != NULL; item = CMSG_NXTHDR(&message, item)) {
        if (item->cmsg_level == SOL_SOCKET && item->cmsg_type == SO_RXQ_OVFL
            && item->cmsg_len >= CMSG_LEN(sizeof(unsigned int))) {
            memcpy(dropped, CMSG_DATA(item), sizeof(unsigned int));
        }
    }
    return (long)received;
}

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
