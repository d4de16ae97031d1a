#define _GNU_SOURCE
#include "alloc_counter.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int counting;
static __thread uint64_t allocations;
static __thread int counting_locks;
static __thread uint64_t locks;

static inline void note(void) {
    if (counting) allocations++;
}

void alloc_counter_start(void) { allocations = 0; counting = 1; }
uint64_t alloc_counter_stop(void) { counting = 0; return allocations; }

void lock_counter_start(void) { locks = 0; counting_locks = 1; }
uint64_t lock_counter_stop(void) { counting_locks = 0; return locks; }

static inline void note_lock(void) {
    if (counting_locks) locks++;
}


#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ALLOC_COUNTER_SANITIZED 1
#endif
#endif

#ifdef ALLOC_COUNTER_SANITIZED
/* Under AddressSanitizer or ThreadSanitizer (scripts/sanitize) the sanitizer owns the malloc family: count
   through its allocation hook instead of replacing it. */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static void on_malloc(const volatile void *pointer, size_t size) {
    (void)pointer;
    (void)size;
    note();
}

static void on_free(const volatile void *pointer) { (void)pointer; }

__attribute__((constructor)) static void install_hooks(void) {
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}
#else
void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { note(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { note(); return __libc_realloc(pointer, size); }
void free(void *pointer) { __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}
#endif

#if !defined(ALLOC_COUNTER_SANITIZED) && defined(__x86_64__)
/* pthread locks (Foundation, Dispatch, C libraries) are counted and forwarded to glibc's; Swift's Mutex
   takes its uncontended path inline (an atomic compare-and-swap, no call) and reaches the kernel through
   syscall(SYS_futex), counted below, only when it would block. */
typedef int (*mutex_function)(pthread_mutex_t *);
typedef int (*rwlock_function)(pthread_rwlock_t *);
static mutex_function real_mutex_lock, real_mutex_trylock;
static rwlock_function real_rwlock_rdlock, real_rwlock_wrlock;

/* glibc's own functions, looked up once before main (glibc's internal calls do not come through here). */
__attribute__((constructor)) static void find_lock_functions(void) {
    real_mutex_lock = (mutex_function)dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_mutex_trylock = (mutex_function)dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_rwlock_rdlock = (rwlock_function)dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    real_rwlock_wrlock = (rwlock_function)dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
}

int pthread_mutex_lock(pthread_mutex_t *mutex) {
    note_lock();
    if (real_mutex_lock == NULL) find_lock_functions();
    return real_mutex_lock(mutex);
}
int pthread_mutex_trylock(pthread_mutex_t *mutex) {
    note_lock();
    if (real_mutex_trylock == NULL) find_lock_functions();
    return real_mutex_trylock(mutex);
}
int pthread_rwlock_rdlock(pthread_rwlock_t *lock) {
    note_lock();
    if (real_rwlock_rdlock == NULL) find_lock_functions();
    return real_rwlock_rdlock(lock);
}
int pthread_rwlock_wrlock(pthread_rwlock_t *lock) {
    note_lock();
    if (real_rwlock_wrlock == NULL) find_lock_functions();
    return real_rwlock_wrlock(lock);
}

/* syscall(2) forwarded with its six possible arguments; futex calls count as lock waits or wakes. */
long syscall(long number, ...) {
    va_list arguments;
    va_start(arguments, number);
    long a = va_arg(arguments, long), b = va_arg(arguments, long), c = va_arg(arguments, long);
    long d = va_arg(arguments, long), e = va_arg(arguments, long), f = va_arg(arguments, long);
    va_end(arguments);
    if (number == SYS_futex) note_lock();
    long result;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if (result < 0 && result > -4096) {
        errno = (int)-result;
        return -1;
    }
    return result;
}
#endif
