/* String output of the report writers: UTF-8 checked, escaped for plain text, JSON or XML. */
#include "hf_report_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t hf_utf8_decode(const char *s, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t c;
    size_t n;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    if (u[0] >= 0xC2 && u[0] <= 0xDF) {
        c = u[0] & 0x1Fu;
        n = 2;
    } else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
        c = u[0] & 0x0Fu;
        n = 3;
    } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
        c = u[0] & 0x07u;
        n = 4;
    } else {
        return 0; /* a continuation byte, 0xC0/0xC1 (overlong) or 0xF5.. */
    }
    for (size_t i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        c = (c << 6) | (u[i] & 0x3Fu);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}

size_t hf_utf8_width(const char *s)
{
    size_t width = 0;
    if (s == NULL)
        return 0;
    while (*s) {
        uint32_t cp;
        size_t n = hf_utf8_decode(s, &cp);
        s += n > 0 ? n : 1;
        width++;
    }
    return width;
}

hessfit_status hf_put_text(hessfit_atomic_file *out, const char *s)
{
    hessfit_status st = HESSFIT_SUCCESS;
    if (s == NULL)
        return HESSFIT_SUCCESS;
    while (*s && st == HESSFIT_SUCCESS) {
        uint32_t cp;
        size_t n = hf_utf8_decode(s, &cp);
        if (n == 0) {
            st = hessfit_atomic_file_write(out, "?", 1);
            s++;
        } else if (cp < 0x20 || cp == 0x7F) {
            st = hessfit_atomic_file_write(out, " ", 1);
            s++;
        } else {
            st = hessfit_atomic_file_write(out, s, n);
            s += n;
        }
    }
    return st;
}

hessfit_status hf_put_text_padded(hessfit_atomic_file *out, const char *s, size_t width)
{
    hessfit_status st = hf_put_text(out, s);
    for (size_t w = hf_utf8_width(s); w < width && st == HESSFIT_SUCCESS; w++)
        st = hessfit_atomic_file_write(out, " ", 1);
    return st;
}

hessfit_status hf_put_json_number(hessfit_atomic_file *out, double x)
{
    return isfinite(x) ? hessfit_atomic_file_printf(out, "%.17g", x) : hessfit_atomic_file_write(out, "null", 4);
}

hessfit_status hf_put_json_number_member(hessfit_atomic_file *out, const char *key, double x)
{
    hessfit_status st = hessfit_atomic_file_printf(out, ", \"%s\": ", key);
    return st == HESSFIT_SUCCESS ? hf_put_json_number(out, x) : st;
}

hessfit_status hf_put_json_string(hessfit_atomic_file *out, const char *s)
{
    hessfit_status st;
    if (s == NULL)
        return hessfit_atomic_file_write(out, "null", 4);
    st = hessfit_atomic_file_write(out, "\"", 1);
    while (*s && st == HESSFIT_SUCCESS) {
        uint32_t cp;
        size_t n = hf_utf8_decode(s, &cp);
        if (n == 0) {
            st = hessfit_atomic_file_write(out, "\\ufffd", 6);
            s++;
            continue;
        }
        switch (cp) {
        case '"': st = hessfit_atomic_file_write(out, "\\\"", 2); break;
        case '\\': st = hessfit_atomic_file_write(out, "\\\\", 2); break;
        case '\b': st = hessfit_atomic_file_write(out, "\\b", 2); break;
        case '\f': st = hessfit_atomic_file_write(out, "\\f", 2); break;
        case '\n': st = hessfit_atomic_file_write(out, "\\n", 2); break;
        case '\r': st = hessfit_atomic_file_write(out, "\\r", 2); break;
        case '\t': st = hessfit_atomic_file_write(out, "\\t", 2); break;
        default:
            if (cp < 0x20)
                st = hessfit_atomic_file_printf(out, "\\u%04x", (unsigned)cp);
            else
                st = hessfit_atomic_file_write(out, s, n);
        }
        s += n;
    }
    if (st == HESSFIT_SUCCESS)
        st = hessfit_atomic_file_write(out, "\"", 1);
    return st;
}

hessfit_status hf_put_xml(hessfit_atomic_file *out, const char *s)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    hessfit_status st = HESSFIT_SUCCESS;
    if (s == NULL)
        return HESSFIT_SUCCESS;
    while (*s && st == HESSFIT_SUCCESS) {
        uint32_t cp;
        size_t n = hf_utf8_decode(s, &cp);
        if (n == 0) {
            st = hessfit_atomic_file_write(out, replacement, 3);
            s++;
            continue;
        }
        switch (cp) {
        case '&': st = hessfit_atomic_file_write(out, "&amp;", 5); break;
        case '<': st = hessfit_atomic_file_write(out, "&lt;", 4); break;
        case '>': st = hessfit_atomic_file_write(out, "&gt;", 4); break;
        case '"': st = hessfit_atomic_file_write(out, "&quot;", 6); break;
        case '\'': st = hessfit_atomic_file_write(out, "&apos;", 6); break;
        default:
            /* XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF] */
            if ((cp < 0x20 && cp != 0x9 && cp != 0xA && cp != 0xD) || cp == 0xFFFE || cp == 0xFFFF)
                st = hessfit_atomic_file_write(out, replacement, 3);
            else
                st = hessfit_atomic_file_write(out, s, n);
        }
        s += n;
    }
    return st;
}
