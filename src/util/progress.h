/* progress: what a long command is doing, on stderr. On a terminal one status line updated in
 * place ("phase, step k/n, rate, ETA"); off a terminal one plain line per finished phase, and
 * the paced lines a caller logs (progress_log()), nothing animated, so logs and pipes stay
 * readable. */
#ifndef PGOLAB_PROGRESS_H
#define PGOLAB_PROGRESS_H

/* Replace the status line (a terminal only; clipped to the terminal's width so it never
 * wraps). */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clear the status line (call before printing anything else to stderr). */
void progress_done(void);
/* A phase finished: off a terminal, one line "FMT..." on stderr; on a terminal the status
 * line is cleared (the next phase's status replaces it). */
void progress_phase_done(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Off a terminal, one plain line "FMT" on stderr (control characters such as \r or ESC
 * replaced by '?', so a log holds no cursor movements); on a terminal nothing (the status
 * line says it). For progress a log must get, at the caller's pace. */
void progress_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
