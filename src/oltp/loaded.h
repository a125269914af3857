/* loaded: the rows a prepare has inserted so far, told to the process that started it (the
 * experiment engine's prepare shows rows loaded / total, rate and ETA from it). With
 * PGOLAB_PREPARE_PROGRESS=FILE in the environment every bulk INSERT adds its rows to a count
 * kept at the start of FILE; without it nothing is written. */
#ifndef PGOLAB_OLTP_LOADED_H
#define PGOLAB_OLTP_LOADED_H

/* The environment variable naming the file. */
#define OLTP_LOADED_ENV "PGOLAB_PREPARE_PROGRESS"

/* Count rows that were inserted (thread-safe; a no-op without the environment variable). */
void oltp_loaded_add(unsigned rows);
/* The count kept in path: the rows inserted so far, or -1 when it holds none yet. */
long long oltp_loaded_read(const char *path);

#endif
