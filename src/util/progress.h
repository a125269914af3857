/* progress: one-line status on stderr ("phase, step, round k/n, ETA"), shown only when
 * stderr is a terminal; silent otherwise so logs and pipes stay clean. */
#ifndef PGOLAB_PROGRESS_H
#define PGOLAB_PROGRESS_H

/* Replace the current status line. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clear the status line (call before printing anything else to stderr). */
void progress_done(void);

#endif
