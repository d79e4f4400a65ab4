/* Threads started with the same stack size on every platform (macOS gives new threads 512 KiB,
 * Linux the stack limit, usually 8 MiB). */
#ifndef HC_THREAD_H
#define HC_THREAD_H

#include <pthread.h>

/* The stack of every thread halfcheck starts: Linux's usual default, so that code that runs
 * there (deep SGF variation walks, kernels' frames) runs on macOS too. */
#define HC_THREAD_STACK ((size_t)8 << 20)

/* pthread_create with an HC_THREAD_STACK stack and default attributes otherwise. Returns 0, or
 * the error number pthread_create (or the attribute calls) returned. */
int hc_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* The processors online (1 where the system does not say): for one-off work spread over the
 * host, such as preparing a net's weights or compressing an outputs file. */
int hc_processors(void);

#endif
