/* progress: the status line on a terminal, a line per phase elsewhere (see progress.h). */
#include "util/progress.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int shown;

/* The terminal's width in columns, or 0 when it does not say. */
static int term_columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

void progress(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (!stderr_is_tty())
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* a line longer than the terminal would wrap, and "\r" would then redraw only its tail */
    int cols = term_columns();
    if (cols > 1 && strlen(line) >= (size_t)cols)
        line[cols - 1] = '\0';
    fputs("\r\033[K", stderr);
    fputs(line, stderr);
    fflush(stderr);
    shown = 1;
}

void progress_done(void)
{
    if (shown && stderr_is_tty()) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    shown = 0;
}

void progress_phase_done(const char *fmt, ...)
{
    va_list ap;
    if (stderr_is_tty()) {
        progress_done();
        return;
    }
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void progress_log(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (stderr_is_tty())
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    fputs(line, stderr);
    fputc('\n', stderr);
    fflush(stderr);
}
