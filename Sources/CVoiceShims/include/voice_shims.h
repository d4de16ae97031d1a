/* Non-variadic wrappers for the variadic Opus ctl calls, which Swift cannot import.
   Each returns an Opus error code (OPUS_OK on success). None allocates: all are real-time safe. */
#ifndef VOICE_SHIMS_H
#define VOICE_SHIMS_H
#include <opus/opus.h>

int voice_opus_encoder_set_bitrate(OpusEncoder *st, int bits_per_second);
int voice_opus_encoder_set_complexity(OpusEncoder *st, int complexity);
int voice_opus_encoder_set_inband_fec(OpusEncoder *st, int enabled);
int voice_opus_encoder_set_packet_loss_perc(OpusEncoder *st, int percent);
int voice_opus_encoder_set_dtx(OpusEncoder *st, int enabled);
int voice_opus_encoder_set_signal_voice(OpusEncoder *st);
int voice_opus_encoder_get_lookahead(OpusEncoder *st, int *samples);
int voice_opus_encoder_get_bitrate(OpusEncoder *st, int *bits_per_second);
int voice_opus_encoder_reset(OpusEncoder *st);
int voice_opus_decoder_reset(OpusDecoder *st);
int voice_opus_decoder_get_last_packet_duration(OpusDecoder *st, int *samples);

/* Waits up to timeout_ns nanoseconds (negative: forever) for fd to become readable, with ppoll's precision
   (poll takes whole milliseconds; ppoll needs _GNU_SOURCE, which Swift's Glibc module does not set).
   Returns ppoll's result: > 0 readable, 0 timed out, -1 with errno set. */
int voice_wait_readable(int fd, long long timeout_ns);

/* Receives one datagram on fd into buf (capacity bytes; MSG_DONTWAIT), its sender into from (from_length in: its
   size, out: the address's), like recvfrom with MSG_TRUNC: returns the datagram's whole length, which may exceed
   capacity, or -1 with errno set. Where the datagram carries the kernel's count of the datagrams it dropped on
   the socket since it was opened (SO_RXQ_OVFL set on the socket; attached once above 0), stores it in dropped;
   leaves it alone otherwise. Does not allocate. */
long voice_receive_datagram(int fd, void *buf, unsigned long capacity, void *from, unsigned int *from_length,
                            unsigned int *dropped);

/* Fills buf with count bytes from the kernel's CSPRNG (getrandom(2), blocking until it is seeded, retrying
   EINTR and short reads). Returns 0, or -1 with errno set. Not real-time safe (it may block at boot). */
int voice_random_bytes(void *buf, unsigned long count);

#endif
