#ifndef HF_BUF_H_
#define HF_BUF_H_
/* A growable, NUL-terminated text buffer: the writers build a whole file in one before writing it
 * atomically (hessfit_atomic_file.h). A zeroed hf_buf is empty; hf_buf_free makes it so again. */
#include <stddef.h>

#include "hessfit_status.h"

typedef struct hf_buf {
    char *data;
    size_t len;
    size_t cap;
} hf_buf;

/* Append s[0..n). */
hessfit_status hf_buf_append(hf_buf *b, const char *s, size_t n);
/* Append printf-formatted text. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
hessfit_status hf_buf_printf(hf_buf *b, const char *format, ...);
void hf_buf_free(hf_buf *b);

/* v in the fewest significant digits (15 to 17, "%.*g") that read back as the same double. */
typedef struct hf_num_text {
    char s[32];
} hf_num_text;
hf_num_text hf_num(double v);

/* Append s as XML attribute text (without the quotes): & < > " ' escaped, control characters as
 * spaces. */
hessfit_status hf_buf_put_xml(hf_buf *b, const char *s);

#endif
