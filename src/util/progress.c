/* progress: transient status line on a terminal (see progress.h). */
#include "util/progress.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>

static int shown;

void progress(const char *fmt, ...)
{
    va_list ap;
    if (!stderr_is_tty())
        return;
    fputs("\r\033[K", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
    shown = 1;
}

void progress_done(void)
{
    if (shown && stderr_is_tty())
        fputs("\r\033[K", stderr);
    shown = 0;
}
