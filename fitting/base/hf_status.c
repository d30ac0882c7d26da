#include "hessfit_status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char hf_message[HF_ERROR_MESSAGE_SIZE];

const char *hf_status_string(hf_status status)
{
    switch (status) {
    case HF_SUCCESS: return "success";
    case HF_ERROR_NULL_ARGUMENT: return "null argument";
    case HF_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case HF_ERROR_OUT_OF_MEMORY: return "out of memory";
    case HF_ERROR_IO: return "input/output error";
    case HF_ERROR_FORMAT: return "malformed file";
    case HF_ERROR_PARSE: return "parse error";
    case HF_ERROR_TRUNCATED: return "file truncated";
    case HF_ERROR_COUNT: return "count does not match the data";
    case HF_ERROR_UNSUPPORTED: return "unsupported format variant";
    case HF_ERROR_OVERFLOW: return "size overflow or beyond limits";
    case HF_ERROR_NONFINITE: return "NaN or infinite value";
    case HF_ERROR_UNKNOWN_ELEMENT: return "unknown element";
    case HF_ERROR_SHAPE: return "wrong array shape";
    case HF_ERROR_LAPACK: return "LAPACK error";
    case HF_ERROR_HESSFIT: return "hessfit C API error";
    case HF_ERROR_NLOPT: return "NLopt error";
    case HF_NUM_STATUS: break;
    }
    return "unknown status";
}

const char *hf_last_error(void)
{
    return hf_message;
}

hf_status hf_error(hf_status status, const char *format, ...)
{
    va_list args;
    if (format == NULL) {
        hf_message[0] = '\0';
        return status;
    }
    va_start(args, format);
    vsnprintf(hf_message, sizeof hf_message, format, args);
    va_end(args);
    return status;
}

void hf_clear_error(void)
{
    hf_message[0] = '\0';
}
