/* The status texts and the thread's error message of every hessfit C interface (hessfit_status.h). */
#include "hessfit_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char message[HESSFIT_ERROR_MESSAGE_SIZE];

const char *hessfit_status_string(hessfit_status status)
{
    switch (status) {
    case HESSFIT_SUCCESS: return "success";
    case HESSFIT_ERROR_NULL_ARGUMENT: return "null argument";
    case HESSFIT_ERROR_INDEX: return "index out of range";
    case HESSFIT_ERROR_VALUE: return "invalid value";
    case HESSFIT_ERROR_SIZE: return "wrong array size";
    case HESSFIT_ERROR_TOPOLOGY: return "invalid molecule topology";
    case HESSFIT_ERROR_GEOMETRY: return "undefined geometry";
    case HESSFIT_ERROR_NOT_IN_CONTEXT: return "force not in context";
    case HESSFIT_ERROR_UNSUPPORTED: return "unsupported";
    case HESSFIT_ERROR_OWNERSHIP: return "ownership error";
    case HESSFIT_ERROR_OPENMM: return "OpenMM error";
    case HESSFIT_ERROR_OUT_OF_MEMORY: return "out of memory";
    case HESSFIT_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case HESSFIT_ERROR_IO: return "input/output error";
    case HESSFIT_ERROR_FORMAT: return "malformed file";
    case HESSFIT_ERROR_PARSE: return "parse error";
    case HESSFIT_ERROR_TRUNCATED: return "file truncated";
    case HESSFIT_ERROR_COUNT: return "count does not match the data";
    case HESSFIT_ERROR_OVERFLOW: return "size overflow or beyond limits";
    case HESSFIT_ERROR_NONFINITE: return "NaN or infinite value";
    case HESSFIT_ERROR_UNKNOWN_ELEMENT: return "unknown element";
    case HESSFIT_ERROR_SHAPE: return "wrong array shape";
    case HESSFIT_ERROR_LAPACK: return "LAPACK error";
    case HESSFIT_ERROR_NLOPT: return "NLopt error";
    case HESSFIT_NUM_STATUS: break;
    }
    return "unknown status";
}

const char *hessfit_last_error(void)
{
    return message;
}

hessfit_status hessfit_error(hessfit_status status, const char *format, ...)
{
    /* formatted aside first: the arguments may be (parts of) the current message */
    char text[HESSFIT_ERROR_MESSAGE_SIZE];
    va_list args;
    if (format == NULL) {
        message[0] = '\0';
        return status;
    }
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    memcpy(message, text, strlen(text) + 1);
    return status;
}

void hessfit_clear_error(void)
{
    message[0] = '\0';
}
