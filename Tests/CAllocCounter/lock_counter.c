/* Counts the lock operations a thread makes while counting is on: the pthread mutex, rwlock, spinlock and
   semaphore calls (Foundation's NSLock, libdispatch and the Swift runtime lock through them) and futex system
   calls made through syscall(2) (Synchronization.Mutex when contended, libdispatch's waits and wakes). An
   uncontended Synchronization.Mutex is a compare-and-swap in user space that no interposition can see; the
   real-time path must not use one anyway, and the positive control contends one to show the futex is counted.
   Each interposed call forwards to the next definition (glibc's). */
#define _GNU_SOURCE
#include "lock_counter.h"
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>

static __thread int counting;
static __thread uint64_t locks;

void lock_counter_start(void) { locks = 0; counting = 1; }
uint64_t lock_counter_stop(void) { counting = 0; return locks; }

static inline void note(void) {
    if (counting) locks++;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LOCK_COUNTER_SANITIZED 1
#endif
#endif

#ifndef LOCK_COUNTER_SANITIZED
/* The next definition of `name`, looked up on first use: libraries' constructors may lock before ours run. */
#define NEXT(name, type) \
    static __typeof__(type) next; \
    if (next == NULL) next = (type)dlsym(RTLD_NEXT, #name)

int pthread_mutex_lock(pthread_mutex_t *m) { NEXT(pthread_mutex_lock, int (*)(pthread_mutex_t *)); note(); return next(m); }
int pthread_mutex_trylock(pthread_mutex_t *m) { NEXT(pthread_mutex_trylock, int (*)(pthread_mutex_t *)); note(); return next(m); }
int pthread_rwlock_rdlock(pthread_rwlock_t *l) { NEXT(pthread_rwlock_rdlock, int (*)(pthread_rwlock_t *)); note(); return next(l); }
int pthread_rwlock_wrlock(pthread_rwlock_t *l) { NEXT(pthread_rwlock_wrlock, int (*)(pthread_rwlock_t *)); note(); return next(l); }
int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) { NEXT(pthread_rwlock_tryrdlock, int (*)(pthread_rwlock_t *)); note(); return next(l); }
int pthread_rwlock_trywrlock(pthread_rwlock_t *l) { NEXT(pthread_rwlock_trywrlock, int (*)(pthread_rwlock_t *)); note(); return next(l); }
int pthread_spin_lock(pthread_spinlock_t *l) { NEXT(pthread_spin_lock, int (*)(pthread_spinlock_t *)); note(); return next(l); }
int sem_wait(sem_t *s) { NEXT(sem_wait, int (*)(sem_t *)); note(); return next(s); }
int sem_post(sem_t *s) { NEXT(sem_post, int (*)(sem_t *)); note(); return next(s); }

long syscall(long number, ...) {
    va_list arguments;
    va_start(arguments, number);
    long a = va_arg(arguments, long), b = va_arg(arguments, long), c = va_arg(arguments, long);
    long d = va_arg(arguments, long), e = va_arg(arguments, long), f = va_arg(arguments, long);
    va_end(arguments);
    NEXT(syscall, long (*)(long, ...));
    if (number == SYS_futex) note();
    return next(number, a, b, c, d, e, f);
}
#endif

int lock_counter_is_active(void) {
#ifdef LOCK_COUNTER_SANITIZED
    return 0;
#else
    return 1;
#endif
}
