#include "alloc_counter.h"
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int counting;
static __thread uint64_t allocations;

static inline void note(void) {
    if (counting) allocations++;
}

void alloc_counter_start(void) { allocations = 0; counting = 1; }
uint64_t alloc_counter_stop(void) { counting = 0; return allocations; }

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
