/* Input files held in memory (hf_file_table.h): a list of (path, bytes as stored); an entry is
 * served through an anonymous memory file (memfd) that zlib reads like the file itself. */
#define _GNU_SOURCE
#include "hf_file_table.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

typedef struct {
    char *path;
    unsigned char *bytes;
    size_t size;
} hf_file_entry;

static hf_files_mode mode;
static hf_file_entry *entries;
static size_t n_entries, cap_entries;

void hf_files_set_mode(hf_files_mode m)
{
    mode = m;
}

void hf_files_clear(void)
{
    for (size_t i = 0; i < n_entries; i++) {
        free(entries[i].path);
        free(entries[i].bytes);
    }
    free(entries);
    entries = NULL;
    n_entries = cap_entries = 0;
}

static const hf_file_entry *find(const char *path)
{
    for (size_t i = 0; i < n_entries; i++)
        if (strcmp(entries[i].path, path) == 0)
            return &entries[i];
    return NULL;
}

/* Takes path (copied) and bytes (owned from now on, also on failure). */
static hessfit_status add(const char *path, unsigned char *bytes, size_t size)
{
    if (n_entries == cap_entries) {
        const size_t cap = cap_entries ? 2 * cap_entries : 16;
        hf_file_entry *grown = realloc(entries, cap * sizeof *grown);
        if (grown == NULL) {
            free(bytes);
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory to keep it", path);
        }
        entries = grown;
        cap_entries = cap;
    }
    char *copy = strdup(path);
    if (copy == NULL) {
        free(bytes);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory to keep it", path);
    }
    entries[n_entries++] = (hf_file_entry){copy, bytes, size};
    return HESSFIT_SUCCESS;
}

/* The file's bytes as stored. */
static hessfit_status read_raw(const char *path, unsigned char **bytes, size_t *size)
{
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "unknown error");
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            unsigned char *grown = realloc(buf, cap);
            if (grown == NULL) {
                free(buf);
                fclose(f);
                return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu bytes", path, cap);
            }
            buf = grown;
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    const int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        return hessfit_error(HESSFIT_ERROR_IO, "%s: read error", path);
    }
    *bytes = buf;
    *size = n;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_files_open(const char *path, void **gz)
{
    hessfit_status st;
    *gz = NULL;
    if (mode == HF_FILES_DISK)
        return HESSFIT_SUCCESS;
    const hf_file_entry *e = find(path);
    if (e == NULL && mode == HF_FILES_MEMORY)
        return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot open: not among the files rank 0 read and sent", path);
    if (e == NULL) {
        unsigned char *bytes = NULL;
        size_t size = 0;
        if ((st = read_raw(path, &bytes, &size)) != HESSFIT_SUCCESS || (st = add(path, bytes, size)) != HESSFIT_SUCCESS)
            return st;
        e = &entries[n_entries - 1];
    }
    int fd = memfd_create("hessfit-input", MFD_CLOEXEC);
    if (fd < 0)
        return hessfit_error(HESSFIT_ERROR_IO, "%s: no memory file to read it from (%s)", path, strerror(errno));
    for (size_t at = 0; at < e->size;) {
        const ssize_t put = write(fd, e->bytes + at, e->size - at);
        if (put <= 0) {
            close(fd);
            return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot fill its memory file (%s)", path, strerror(errno));
        }
        at += (size_t)put;
    }
    if (lseek(fd, 0, SEEK_SET) != 0 || (*gz = gzdopen(fd, "rb")) == NULL) {
        close(fd);
        return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot read its memory file", path);
    }
    return HESSFIT_SUCCESS;
}

/* ---- packing: per file a uint64 path length, the path, a uint64 size, the bytes ------------------- */

hessfit_status hf_files_pack(unsigned char **data, size_t *size)
{
    size_t total = sizeof(uint64_t);
    for (size_t i = 0; i < n_entries; i++)
        total += 2 * sizeof(uint64_t) + strlen(entries[i].path) + entries[i].size;
    unsigned char *buf = malloc(total), *at = buf;
    if (buf == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "input files: no memory for %zu bytes", total);
    const uint64_t n = n_entries;
    memcpy(at, &n, sizeof n);
    at += sizeof n;
    for (size_t i = 0; i < n_entries; i++) {
        const uint64_t len = strlen(entries[i].path), bytes = entries[i].size;
        memcpy(at, &len, sizeof len);
        memcpy(at + sizeof len, entries[i].path, len);
        at += sizeof len + len;
        memcpy(at, &bytes, sizeof bytes);
        if (bytes > 0)
            memcpy(at + sizeof bytes, entries[i].bytes, bytes);
        at += sizeof bytes + bytes;
    }
    *data = buf;
    *size = total;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_files_unpack(const unsigned char *data, size_t size)
{
    hessfit_status st;
    const unsigned char *at = data, *end = data + size;
    uint64_t n;
    hf_files_clear();
    if (size < sizeof n)
        return hessfit_error(HESSFIT_ERROR_TRUNCATED, "input files: a packed table of %zu bytes", size);
    memcpy(&n, at, sizeof n);
    at += sizeof n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len, bytes;
        if ((size_t)(end - at) < sizeof len)
            return hessfit_error(HESSFIT_ERROR_TRUNCATED, "input files: the packed table ends early");
        memcpy(&len, at, sizeof len);
        at += sizeof len;
        if ((size_t)(end - at) < len + sizeof bytes)
            return hessfit_error(HESSFIT_ERROR_TRUNCATED, "input files: the packed table ends early");
        char *path = malloc(len + 1);
        if (path == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "input files: no memory");
        memcpy(path, at, len);
        path[len] = '\0';
        at += len;
        memcpy(&bytes, at, sizeof bytes);
        at += sizeof bytes;
        unsigned char *copy = malloc(bytes > 0 ? bytes : 1);
        if ((size_t)(end - at) < bytes || copy == NULL) {
            free(path);
            free(copy);
            return hessfit_error(copy == NULL ? HESSFIT_ERROR_OUT_OF_MEMORY : HESSFIT_ERROR_TRUNCATED,
                                 "input files: the packed table ends early or no memory");
        }
        memcpy(copy, at, bytes);
        at += bytes;
        st = add(path, copy, bytes);
        free(path);
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    return HESSFIT_SUCCESS;
}
