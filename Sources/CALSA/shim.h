#include <alsa/asoundlib.h>

/* alsa-lib's error handler is variadic, which Swift cannot define: these let Swift turn alsa-lib's own stderr
   messages off (errors still reach the caller as return codes and, in VoiceIO, as ALSAError). */
static inline void voiceio_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                              const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void voiceio_alsa_silence_library_messages(void) {
    snd_lib_error_set_handler(voiceio_alsa_quiet_handler);
}
