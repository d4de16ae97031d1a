#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/audio/format-utils.h>
#include <spa/utils/dict.h>

/* libpipewire's interface calls (pw_core_sync, pw_registry_add_listener, ...) are variadic macros and its pod
   builder works through macros, which Swift cannot call: these wrap the few VoiceIO uses. Not real-time safe,
   except where a comment says otherwise. */

/* Builds an EnumFormat pod for interleaved Float32 mono at `rate` hertz into `buffer` (at least 1024 bytes). */
static inline const struct spa_pod *voiceio_pw_mono_float_format(uint8_t *buffer, uint32_t size, uint32_t rate) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof(info));
    info.format = SPA_AUDIO_FORMAT_F32;
    info.rate = rate;
    info.channels = 1;
    info.position[0] = SPA_AUDIO_CHANNEL_MONO;
    return spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info);
}

/* An empty property set (pw_properties_new is variadic). */
static inline struct pw_properties *voiceio_pw_properties_new(void) { return pw_properties_new(NULL, NULL); }

static const uint32_t voiceio_pw_id_any = PW_ID_ANY;
static const uint32_t voiceio_pw_id_core = PW_ID_CORE;

static inline int voiceio_pw_core_add_listener(struct pw_core *core, struct spa_hook *hook,
                                               const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, hook, events, data);
}

/* Asks the server to answer `done` with the returned sequence number once it has handled every earlier request. */
static inline int voiceio_pw_core_sync(struct pw_core *core, int seq) {
    return pw_core_sync(core, PW_ID_CORE, seq);
}

static inline struct pw_registry *voiceio_pw_core_get_registry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}

static inline int voiceio_pw_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                                   const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, hook, events, data);
}

static inline struct pw_metadata *voiceio_pw_registry_bind_metadata(struct pw_registry *registry, uint32_t id) {
    return (struct pw_metadata *)pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
}

static inline int voiceio_pw_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *hook,
                                                   const struct pw_metadata_events *events, void *data) {
    return pw_metadata_add_listener(metadata, hook, events, data);
}

static inline void voiceio_pw_proxy_destroy(void *proxy) {
    pw_proxy_destroy((struct pw_proxy *)proxy);
}

static inline const char *voiceio_pw_dict_lookup(const struct spa_dict *dict, const char *key) {
    return spa_dict_lookup(dict, key);
}

static inline const char *voiceio_pw_type_node(void) { return PW_TYPE_INTERFACE_Node; }
static inline const char *voiceio_pw_type_metadata(void) { return PW_TYPE_INTERFACE_Metadata; }

/* The first data block of a dequeued buffer. Real-time safe. */
static inline struct spa_data *voiceio_pw_buffer_data(struct pw_buffer *buffer) {
    return buffer->buffer->n_datas > 0 ? &buffer->buffer->datas[0] : NULL;
}

/* An event source on `loop`: `func` runs on the loop's thread at a later iteration once signalled, outside
   whatever callback signalled it. */
static inline struct spa_source *voiceio_pw_loop_add_event(struct pw_loop *loop,
                                                           void (*func)(void *data, uint64_t count), void *data) {
    return pw_loop_add_event(loop, func, data);
}

static inline int voiceio_pw_loop_signal_event(struct pw_loop *loop, struct spa_source *source) {
    return pw_loop_signal_event(loop, source);
}

static inline void voiceio_pw_loop_destroy_source(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}
