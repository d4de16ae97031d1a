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

#endif
