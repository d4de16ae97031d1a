/* Counts heap allocations made by the calling thread while counting is on.
   The test executable links this file, whose malloc family replaces glibc's for the whole process and
   forwards to it; only threads that switched counting on are counted. */
#ifndef ALLOC_COUNTER_H
#define ALLOC_COUNTER_H
#include <stdint.h>

/* Starts counting the calling thread's allocations from zero. */
void alloc_counter_start(void);
/* Stops counting on the calling thread and returns how many allocations it made since the start. */
uint64_t alloc_counter_stop(void);

/* Starts counting the calling thread's lock operations from zero: pthread mutex and rwlock locks and futex
   system calls (a Swift Mutex's contended path). */
void lock_counter_start(void);
/* Stops counting locks on the calling thread and returns how many it took since the start. */
uint64_t lock_counter_stop(void);

#endif
