/* state: DATADIR/pgolab-server.json, the state file of a running server (see server.h): how
 * `pgolab server status|stop --datadir=DIR` find a server that another pgolab process started.
 * Written atomically (a temporary file renamed over it); never holds the password. The
 * registry (a file per server pid naming its datadir, in server_registry_dir()) is how
 * `pgolab server status` without --datadir finds them all (server_registry_list(),
 * lifecycle.c, which asks each its status). Also server_release(), which frees
 * what a struct server owns. */
#include "server/server_flavor.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, v ? json_string(v) : json_null());
}

char *server_registry_dir(void)
{
    const char *env = getenv("PGOLAB_RUNTIME_DIR"), *tmp = getenv("TMPDIR");
    if (env && *env)
        return xstrdup(env);
    return xasprintf("%s/pgolab-servers-%d", tmp && *tmp ? tmp : "/tmp", (int)getuid());
}

bool srv_registry_ours(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* REGISTRY/PID = the datadir; a failure is only a warning (status --datadir still works). */
static void registry_add(const struct server *s)
{
    char *dir = server_registry_dir();
    char *path = xasprintf("%s/%d", dir, (int)s->pid);
    FILE *f = NULL;
    int fd = -1;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        warning("cannot make the server registry %s: %s", dir, strerror(errno));
    else if (!srv_registry_ours(dir))
        warning("not using the server registry %s: it is not a directory of this user's that "
                "only it can write (remove it, or set PGOLAB_RUNTIME_DIR)", dir);
    else if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
             !(f = fdopen(fd, "w")) || (fprintf(f, "%s\n", s->datadir), fclose(f)) != 0)
        warning("cannot write %s: %s", path, strerror(errno));
    if (fd >= 0 && !f)
        close(fd);
    free(path);
    free(dir);
}

int server_state_write(const struct server *s)
{
    char *path = path_join(s->datadir, STATE_FILE);
    char *tmp = xasprintf("%s.tmp", path);
    struct strbuf when = STRBUF_INIT;
    json_t *j = json_object();
    int rc = 0;

    iso_time(&when, wall_time());
    json_object_set_new(j, "pgolab_server", json_integer(1));
    set_str(j, "kind", server_kind_name(s->kind));
    set_str(j, "flavor", s->flavor);
    json_object_set_new(j, "pid", json_integer(s->pid));
    json_object_set_new(j, "starttime", json_integer((json_int_t)s->starttime));
    json_object_set_new(j, "port", json_integer(s->port));
    set_str(j, "host", s->host);
    set_str(j, "socket", s->socket);
    set_str(j, "socket_dir", s->socket_dir);
    json_object_set_new(j, "socket_dir_private", json_boolean(s->socket_dir_private));
    set_str(j, "datadir", s->datadir);
    set_str(j, "log", s->log);
    set_str(j, "binary", s->binary);
    set_str(j, "version", s->version);
    set_str(j, "user", s->user);
    set_str(j, "db", s->db);
    json_object_set_new(j, "has_password", json_boolean(s->has_password));
    json_object_set_new(j, "created_datadir", json_boolean(s->created_datadir));
    json_object_set_new(j, "keep_datadir", json_boolean(s->keep_datadir));
    set_str(j, "started_at", when.buf);
    if (json_dump_file(j, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
        rc = error("cannot write %s: %s", tmp, strerror(errno));
    else if (rename(tmp, path) < 0)
        rc = error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    else
        registry_add(s);
    json_decref(j);
    strbuf_release(&when);
    free(tmp);
    free(path);
    return rc;
}

static char *get_str(json_t *j, const char *key)
{
    const char *v = json_string_value(json_object_get(j, key));
    return v ? xstrdup(v) : NULL;
}

int server_state_read(struct server *s, const char *datadir)
{
    char *dir = abs_path(datadir);
    char *path = path_join(dir, STATE_FILE);
    json_error_t je;
    json_t *j;
    int rc = -1;

    memset(s, 0, sizeof(*s));
    struct stat st;
    int e = stat(path, &st) < 0 ? errno : S_ISREG(st.st_mode) ? 0 : EISDIR;
    if (e) {
        if (stat(dir, &st) < 0 && errno == ENOENT)
            error("%s: no such directory (a server's --datadir was expected)", dir);
        else if (e == EACCES)
            error("%s: cannot read the pgolab server state there: permission denied (the server "
                  "belongs to another user: run this as that user or root)", dir);
        else
            error("%s: no pgolab server state there (%s is missing)", dir, STATE_FILE);
        goto out;
    }
    if (!(j = json_load_file(path, 0, &je))) {
        error("%s: not a pgolab server state file: %s", path, je.text);
        goto out;
    }
    if (json_integer_value(json_object_get(j, "pgolab_server")) != 1 ||
        server_kind_parse(json_string_value(json_object_get(j, "kind")), &s->kind) < 0 ||
        !json_is_integer(json_object_get(j, "pid")) ||
        !json_string_value(json_object_get(j, "socket"))) {
        error("%s: not a pgolab server state file (or a newer format)", path);
        json_decref(j);
        goto out;
    }
    s->pid = (pid_t)json_integer_value(json_object_get(j, "pid"));
    s->starttime = (unsigned long long)json_integer_value(json_object_get(j, "starttime"));
    s->port = (int)json_integer_value(json_object_get(j, "port"));
    s->host = get_str(j, "host");
    s->socket = get_str(j, "socket");
    s->socket_dir = get_str(j, "socket_dir");
    s->socket_dir_private = json_is_true(json_object_get(j, "socket_dir_private"));
    s->datadir = get_str(j, "datadir");
    s->log = get_str(j, "log");
    s->binary = get_str(j, "binary");
    s->version = get_str(j, "version");
    s->flavor = get_str(j, "flavor");
    s->user = get_str(j, "user");
    s->db = get_str(j, "db");
    s->password = xstrdup("");
    s->has_password = json_is_true(json_object_get(j, "has_password"));
    s->created_datadir = json_is_true(json_object_get(j, "created_datadir"));
    s->keep_datadir = json_is_true(json_object_get(j, "keep_datadir"));
    json_decref(j);
    if (!s->host)
        s->host = xstrdup("127.0.0.1");
    if (!s->socket_dir)
        s->socket_dir = srv_dir_of(s->socket);
    if (!s->datadir)
        s->datadir = xstrdup(dir);
    if (!s->binary)
        s->binary = xstrdup(srv_flavor(s->kind)->default_binary);
    if (!s->flavor)
        s->flavor = xstrdup(srv_flavor(s->kind)->default_flavor);
    if (!s->user)
        s->user = xstrdup("sbtest");
    if (!s->db)
        s->db = xstrdup("sbtest");
    rc = 0;
out:
    free(path);
    free(dir);
    return rc;
}

void server_release(struct server *s)
{
    if (s->password)
        memset(s->password, 0, strlen(s->password));
    free(s->host);
    free(s->socket);
    free(s->socket_dir);
    free(s->datadir);
    free(s->log);
    free(s->keep_log);
    free(s->save_log);
    free(s->binary);
    free(s->version);
    free(s->flavor);
    free(s->user);
    free(s->db);
    free(s->password);
    memset(s, 0, sizeof(*s));
}
