#ifndef HESSFIT_ATOMIC_FILE_H_
#define HESSFIT_ATOMIC_FILE_H_
/*
 * Output files written atomically: a reader of path sees either the old file (or none) or the
 * complete new one, never a partial write, even if the writer fails halfway or the machine stops.
 *
 * How: a new file "<path>.tmp.<pid>.<n>" is created (O_EXCL) in path's own directory, so that the
 * final rename(2) stays within one file system and is atomic; everything goes into it; commit
 * flushes it, fsync(2)s it, closes it, renames it over path and fsyncs the directory. Any failure
 * -- creating the temporary file, a write (disk full, file size limit), the writer's own error,
 * fsync, close, rename (path is a directory, say) -- removes the temporary file, leaves path as it
 * was and reports HF_ERROR_IO (or the writer's status) with a message naming path, the reason and,
 * where one existed, the temporary file.
 *
 * An existing path keeps its permission bits; a new one gets 0666 minus the umask. A symbolic
 * link at path is replaced by the new file (the link's target is untouched).
 *
 * Errors while writing are sticky: after the first failure every later write is a no-op that
 * returns the same status, and commit reports the first failure (with its errno text and the byte
 * offset). So a writer may print without checking each call and still never commit a short file.
 *
 * Every file hessfit writes (force fields, reports, plots, checkpoints) goes through here.
 */
#include <stddef.h>

#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hf_atomic_file hf_atomic_file;

/* Create the temporary file beside path. On failure *file is NULL and nothing exists on disk. */
hf_status hf_atomic_file_open(const char *path, hf_atomic_file **file);

/* Append bytes / printf-formatted text (formatted in the calling thread's locale; hf_atomic_write
 * below runs its writer in the "C" numeric locale). Sticky errors, see above. */
hf_status hf_atomic_file_write(hf_atomic_file *file, const void *data, size_t len);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
hf_status hf_atomic_file_printf(hf_atomic_file *file, const char *format, ...);

/* The first write error so far (HF_SUCCESS if none). */
hf_status hf_atomic_file_status(const hf_atomic_file *file);
/* Bytes accepted so far. */
size_t hf_atomic_file_size(const hf_atomic_file *file);
/* The final and the temporary path (valid until commit or abort). */
const char *hf_atomic_file_path(const hf_atomic_file *file);
const char *hf_atomic_file_temp_path(const hf_atomic_file *file);

/* Finish: flush, fsync, close, rename over the path, fsync the directory. On any error (including
 * an earlier write error) the temporary file is removed and path is unchanged. Always frees file
 * (NULL is HF_ERROR_NULL_ARGUMENT). */
hf_status hf_atomic_file_commit(hf_atomic_file *file);

/* Give up: close and remove the temporary file, free file. path is unchanged. NULL is a no-op. */
void hf_atomic_file_abort(hf_atomic_file *file);

/* A writer for hf_atomic_write: writes the whole content into out, returns HF_SUCCESS or its own
 * error (with hf_error's message), after which nothing is committed. */
typedef hf_status (*hf_atomic_writer)(hf_atomic_file *out, void *context);

/* open, writer(out, context), commit -- or abort if the writer or any write failed. The writer
 * runs with the "C" numeric locale on this thread (so "%g" always writes a '.'; the thread's
 * locale is restored afterwards). A writer failure's message is kept, prefixed with path. */
hf_status hf_atomic_write(const char *path, hf_atomic_writer writer, void *context);

/* Write len bytes of data (len 0 makes an empty file) atomically to path. */
hf_status hf_atomic_write_buffer(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
