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
 * was and reports HESSFIT_ERROR_IO (or the writer's status) with a message naming path, the reason and,
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

typedef struct hessfit_atomic_file hessfit_atomic_file;

/** Create the temporary file beside path. On failure *file is NULL and nothing exists on disk. */
hessfit_status hessfit_atomic_file_open(const char *path, hessfit_atomic_file **file);

/** Append bytes / printf-formatted text (formatted in the calling thread's locale; hessfit_atomic_write
 * below runs its writer in the "C" numeric locale). Sticky errors, see above. */
hessfit_status hessfit_atomic_file_write(hessfit_atomic_file *file, const void *data, size_t len);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
hessfit_status hessfit_atomic_file_printf(hessfit_atomic_file *file, const char *format, ...);

/** The first write error so far (HESSFIT_SUCCESS if none). */
hessfit_status hessfit_atomic_file_status(const hessfit_atomic_file *file);
/** Bytes accepted so far. */
size_t hessfit_atomic_file_size(const hessfit_atomic_file *file);
/** The final and the temporary path (valid until commit or abort). */
const char *hessfit_atomic_file_path(const hessfit_atomic_file *file);
const char *hessfit_atomic_file_temp_path(const hessfit_atomic_file *file);

/** Finish: flush, fsync, close, rename over the path, fsync the directory. On any error (including
 * an earlier write error) the temporary file is removed and path is unchanged. Always frees file
 * (NULL is HESSFIT_ERROR_NULL_ARGUMENT). */
hessfit_status hessfit_atomic_file_commit(hessfit_atomic_file *file);

/** Give up: close and remove the temporary file, free file. path is unchanged. NULL is a no-op. */
void hessfit_atomic_file_abort(hessfit_atomic_file *file);

/** A writer for hessfit_atomic_write: writes the whole content into out, returns HESSFIT_SUCCESS or its own
 * error (with hessfit_error's message), after which nothing is committed. */
typedef hessfit_status (*hessfit_atomic_writer)(hessfit_atomic_file *out, void *context);

/** open, writer(out, context), commit -- or abort if the writer or any write failed. The writer
 * runs with the "C" numeric locale on this thread (so "%g" always writes a '.'; the thread's
 * locale is restored afterwards). A writer failure's message is kept, prefixed with path. */
hessfit_status hessfit_atomic_write(const char *path, hessfit_atomic_writer writer, void *context);

/** Write len bytes of data (len 0 makes an empty file) atomically to path. */
hessfit_status hessfit_atomic_write_buffer(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
