/* Threads started with the same stack size on every platform (thread.h). */
#include "harness/base/thread.h"

#include <unistd.h>

int hc_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    pthread_attr_t a;
    int rc = pthread_attr_init(&a);
    if (rc != 0)
        return rc;
    rc = pthread_attr_setstacksize(&a, HC_THREAD_STACK);
    if (rc == 0)
        rc = pthread_create(t, &a, fn, arg);
    pthread_attr_destroy(&a);
    return rc;
}

int hc_processors(void)
{
#ifdef _SC_NPROCESSORS_ONLN
    long n = sysconf(_SC_NPROCESSORS_ONLN); /* Linux, macOS and the BSDs have it; POSIX does not */
    return n > 0 && n < 4096 ? (int)n : 1;
#else
    return 1;
#endif
}
