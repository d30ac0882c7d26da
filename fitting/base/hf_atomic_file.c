/* Atomic output files (hessfit_atomic_file.h): a temporary file beside the target, written through
 * a buffer with sticky errors, fsync'ed and renamed over the target; removed on any failure. */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef __STDC_NO_ATOMICS__
#include <stdatomic.h>
static atomic_ulong temp_counter;
#define NEXT_TEMP_NUMBER() atomic_fetch_add(&temp_counter, 1UL)
#else
static unsigned long temp_counter;
#define NEXT_TEMP_NUMBER() (temp_counter++)
#endif

#define ATOMIC_BUFFER_BYTES ((size_t)64 << 10)
#define ATOMIC_NAME_ATTEMPTS 100

struct hessfit_atomic_file {
    char *path;
    char *temp;
    int fd;
    char *buf;
    size_t used;    /* bytes in buf */
    size_t flushed; /* bytes already written to fd */
    hessfit_status status;
    char message[HESSFIT_ERROR_MESSAGE_SIZE];
};

/* Record the first failure (later ones keep it) and set the thread's message to it. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static hessfit_status fail(hessfit_atomic_file *f, hessfit_status status, const char *format, ...)
{
    if (f->status == HESSFIT_SUCCESS) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(f->message, sizeof f->message, format, ap);
        va_end(ap);
        f->status = status;
    }
    return hessfit_error(f->status, "%s", f->message);
}

static void destroy(hessfit_atomic_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->temp != NULL)
        unlink(f->temp);
    free(f->path);
    free(f->temp);
    free(f->buf);
    free(f);
}

hessfit_status hessfit_atomic_file_open(const char *path, hessfit_atomic_file **file)
{
    hessfit_atomic_file *f;
    size_t temp_size;
    struct stat old;
    if (file == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "atomic file: the output handle is NULL");
    *file = NULL;
    if (path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "atomic file: path is NULL");
    if (path[0] == '\0')
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "atomic file: empty path");
    f = calloc(1, sizeof *f);
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for the output file", path);
    f->fd = -1;
    temp_size = strlen(path) + 64;
    f->path = malloc(strlen(path) + 1);
    f->buf = malloc(ATOMIC_BUFFER_BYTES);
    if (f->path == NULL || f->buf == NULL) {
        destroy(f);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for the output file", path);
    }
    memcpy(f->path, path, strlen(path) + 1);
    /* The name is a fresh one beside path (same directory: rename is atomic); O_EXCL never takes an
     * existing file, and a taken name moves on to the next number. */
    for (int attempt = 0; attempt < ATOMIC_NAME_ATTEMPTS && f->fd < 0; attempt++) {
        char *name = malloc(temp_size);
        if (name == NULL) {
            destroy(f);
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for the temporary file name", path);
        }
        snprintf(name, temp_size, "%s.tmp.%ld.%lu", path, (long)getpid(), (unsigned long)NEXT_TEMP_NUMBER());
        f->fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (f->fd >= 0) {
            f->temp = name;
        } else {
            int err = errno;
            if (err != EEXIST) {
                hessfit_status st = hessfit_error(HESSFIT_ERROR_IO, "%s: cannot create the temporary file %s: %s", path, name,
                                        strerror(err));
                free(name);
                destroy(f);
                return st;
            }
            free(name);
        }
    }
    if (f->fd < 0) {
        destroy(f);
        return hessfit_error(HESSFIT_ERROR_IO, "%s: no free temporary file name beside it after %d attempts", path,
                        ATOMIC_NAME_ATTEMPTS);
    }
    /* Replacing a file keeps its permission bits (a failure here only leaves the umask's). */
    if (stat(path, &old) == 0 && S_ISREG(old.st_mode))
        (void)fchmod(f->fd, old.st_mode & 07777);
    *file = f;
    return HESSFIT_SUCCESS;
}

static hessfit_status flush_buffer(hessfit_atomic_file *f)
{
    size_t done = 0;
    while (done < f->used) {
        ssize_t w = write(f->fd, f->buf + done, f->used - done);
        if (w < 0) {
            int err = errno;
            if (err == EINTR)
                continue;
            f->used = 0;
            return fail(f, HESSFIT_ERROR_IO, "%s: write failed after %zu bytes (temporary file %s): %s", f->path,
                        f->flushed + done, f->temp, strerror(err));
        }
        done += (size_t)w;
    }
    f->flushed += done;
    f->used = 0;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_atomic_file_write(hessfit_atomic_file *f, const void *data, size_t len)
{
    const char *p = data;
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "atomic file: the output handle is NULL");
    if (f->status != HESSFIT_SUCCESS)
        return hessfit_error(f->status, "%s", f->message);
    if (len > 0 && data == NULL)
        return fail(f, HESSFIT_ERROR_NULL_ARGUMENT, "%s: NULL data of %zu bytes", f->path, len);
    while (len > 0) {
        size_t room = ATOMIC_BUFFER_BYTES - f->used;
        size_t n = len < room ? len : room;
        memcpy(f->buf + f->used, p, n);
        f->used += n;
        p += n;
        len -= n;
        if (f->used == ATOMIC_BUFFER_BYTES && flush_buffer(f) != HESSFIT_SUCCESS)
            return f->status;
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_atomic_file_printf(hessfit_atomic_file *f, const char *format, ...)
{
    va_list ap;
    int n;
    size_t room;
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "atomic file: the output handle is NULL");
    if (f->status != HESSFIT_SUCCESS)
        return hessfit_error(f->status, "%s", f->message);
    room = ATOMIC_BUFFER_BYTES - f->used;
    va_start(ap, format);
    n = vsnprintf(f->buf + f->used, room, format, ap);
    va_end(ap);
    if (n < 0)
        return fail(f, HESSFIT_ERROR_INVALID_ARGUMENT, "%s: a formatting error in '%.60s'", f->path, format);
    if ((size_t)n < room) {
        f->used += (size_t)n;
        return HESSFIT_SUCCESS;
    }
    /* Did not fit: format into a buffer of its own (the bytes vsnprintf left in buf are not counted). */
    {
        char *text = malloc((size_t)n + 1);
        hessfit_status st;
        if (text == NULL)
            return fail(f, HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d bytes of output", f->path, n);
        va_start(ap, format);
        vsnprintf(text, (size_t)n + 1, format, ap);
        va_end(ap);
        st = hessfit_atomic_file_write(f, text, (size_t)n);
        free(text);
        return st;
    }
}

hessfit_status hessfit_atomic_file_status(const hessfit_atomic_file *f)
{
    return f == NULL ? HESSFIT_ERROR_NULL_ARGUMENT : f->status;
}

size_t hessfit_atomic_file_size(const hessfit_atomic_file *f)
{
    return f == NULL ? 0 : f->flushed + f->used;
}

const char *hessfit_atomic_file_path(const hessfit_atomic_file *f)
{
    return f == NULL ? NULL : f->path;
}

const char *hessfit_atomic_file_temp_path(const hessfit_atomic_file *f)
{
    return f == NULL ? NULL : f->temp;
}

/* Make the rename durable: fsync the directory holding path (best effort; some file systems
 * refuse fsync on a directory, the rename itself has happened either way). */
static void sync_directory(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    int fd;
    if (slash == NULL) {
        dir = malloc(2);
        if (dir != NULL)
            memcpy(dir, ".", 2);
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        dir = malloc(n + 1);
        if (dir != NULL) {
            memcpy(dir, path, n);
            dir[n] = '\0';
        }
    }
    if (dir == NULL)
        return;
    fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

hessfit_status hessfit_atomic_file_commit(hessfit_atomic_file *f)
{
    hessfit_status st;
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "atomic file: the output handle is NULL");
    if (f->status == HESSFIT_SUCCESS)
        flush_buffer(f);
    if (f->status == HESSFIT_SUCCESS && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        fail(f, HESSFIT_ERROR_IO, "%s: fsync of the temporary file %s failed: %s", f->path, f->temp, strerror(errno));
    if (f->status == HESSFIT_SUCCESS) {
        int rc = close(f->fd);
        int err = errno;
        f->fd = -1;
        if (rc != 0)
            fail(f, HESSFIT_ERROR_IO, "%s: closing the temporary file %s failed: %s", f->path, f->temp, strerror(err));
    }
    if (f->status == HESSFIT_SUCCESS && rename(f->temp, f->path) != 0)
        fail(f, HESSFIT_ERROR_IO, "%s: cannot replace it by the temporary file %s: %s", f->path, f->temp,
             strerror(errno));
    if (f->status == HESSFIT_SUCCESS) {
        free(f->temp); /* renamed: nothing left to remove */
        f->temp = NULL;
        sync_directory(f->path);
        destroy(f);
        return HESSFIT_SUCCESS;
    }
    st = f->status;
    hessfit_error(st, "%s (the temporary file was removed; %s was left as it was)", f->message, f->path);
    destroy(f);
    return st;
}

void hessfit_atomic_file_abort(hessfit_atomic_file *f)
{
    if (f != NULL)
        destroy(f);
}

hessfit_status hessfit_atomic_write(const char *path, hessfit_atomic_writer writer, void *context)
{
    hessfit_atomic_file *f = NULL;
    hessfit_status st;
    locale_t c_numeric, previous = (locale_t)0;
    if (writer == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: the writer is NULL", path != NULL ? path : "atomic write");
    st = hessfit_atomic_file_open(path, &f);
    if (st != HESSFIT_SUCCESS)
        return st;
    /* Numbers are written with '.', whatever LC_NUMERIC the program set (JSON and SVG need it). */
    c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_numeric != (locale_t)0)
        previous = uselocale(c_numeric);
    st = writer(f, context);
    if (c_numeric != (locale_t)0) {
        uselocale(previous);
        freelocale(c_numeric);
    }
    if (st == HESSFIT_SUCCESS)
        return hessfit_atomic_file_commit(f);
    if (f->status != HESSFIT_SUCCESS) {
        /* The writer stopped on a write error: its message already names path. */
        st = hessfit_error(f->status, "%s (the temporary file was removed; %s was left as it was)", f->message, path);
    } else {
        char message[HESSFIT_ERROR_MESSAGE_SIZE];
        snprintf(message, sizeof message, "%s", hessfit_last_error());
        st = hessfit_error(st, "%s: not written (left as it was): %s", path, message);
    }
    hessfit_atomic_file_abort(f);
    return st;
}

typedef struct buffer_context {
    const void *data;
    size_t len;
} buffer_context;

static hessfit_status write_buffer(hessfit_atomic_file *out, void *context)
{
    const buffer_context *b = context;
    return hessfit_atomic_file_write(out, b->data, b->len);
}

hessfit_status hessfit_atomic_write_buffer(const char *path, const void *data, size_t len)
{
    buffer_context b;
    if (data == NULL && len > 0)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: data is NULL", path != NULL ? path : "atomic write");
    b.data = data;
    b.len = len;
    return hessfit_atomic_write(path, write_buffer, &b);
}
