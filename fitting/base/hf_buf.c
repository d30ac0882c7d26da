/* A growable text buffer (hf_buf.h). */
#include "hf_buf.h"
#include "hf_lines.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hessfit_status hf_buf_append(hf_buf *b, const char *s, size_t n)
{
    hessfit_status st;
    if (n == 0 && b->data != NULL)
        return HESSFIT_SUCCESS;
    st = hf_grow((void **)&b->data, &b->cap, b->len + n + 1, 1, "bytes of output text");
    if (st != HESSFIT_SUCCESS)
        return st;
    if (n > 0)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return HESSFIT_SUCCESS;
}

hessfit_status hf_buf_printf(hf_buf *b, const char *format, ...)
{
    va_list ap;
    int n;
    hessfit_status st;
    va_start(ap, format);
    n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    if (n < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "output text: bad format '%s'", format);
    st = hf_grow((void **)&b->data, &b->cap, b->len + (size_t)n + 1, 1, "bytes of output text");
    if (st != HESSFIT_SUCCESS)
        return st;
    va_start(ap, format);
    vsnprintf(b->data + b->len, (size_t)n + 1, format, ap);
    va_end(ap);
    b->len += (size_t)n;
    return HESSFIT_SUCCESS;
}

void hf_buf_free(hf_buf *b)
{
    if (b == NULL)
        return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

hf_num_text hf_num(double v)
{
    hf_num_text t;
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(t.s, sizeof t.s, "%.*g", digits, v);
        if (strtod(t.s, NULL) == v)
            break;
    }
    return t;
}

hessfit_status hf_buf_put_xml(hf_buf *b, const char *s)
{
    hessfit_status st = HESSFIT_SUCCESS;
    for (; *s && st == HESSFIT_SUCCESS; s++) {
        switch (*s) {
        case '&': st = hf_buf_append(b, "&amp;", 5); break;
        case '<': st = hf_buf_append(b, "&lt;", 4); break;
        case '>': st = hf_buf_append(b, "&gt;", 4); break;
        case '"': st = hf_buf_append(b, "&quot;", 6); break;
        case '\'': st = hf_buf_append(b, "&apos;", 6); break;
        default: st = hf_buf_append(b, (unsigned char)*s < 0x20 ? " " : s, 1);
        }
    }
    return st;
}
