/* Counts the lock operations made by the calling thread while counting is on (see lock_counter.c for which).
   Not under the sanitizers (scripts/sanitize), which interpose the same calls: there it counts nothing. */
#ifndef LOCK_COUNTER_H
#define LOCK_COUNTER_H
#include <stdint.h>

/* Starts counting the calling thread's lock operations from zero. */
void lock_counter_start(void);
/* Stops counting on the calling thread and returns how many lock operations it made since the start. */
uint64_t lock_counter_stop(void);
/* 1 when the calls are interposed (not under a sanitizer), else 0. */
int lock_counter_is_active(void);

#endif
