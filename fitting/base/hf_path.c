/* File-name helpers. */
#include "hessfit_path.h"

#include <string.h>
#include <strings.h>

int hessfit_path_has_extension(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    if (n > 3 && strcasecmp(path + n - 3, ".gz") == 0)
        n -= 3;
    return e > 0 && n > e && strncasecmp(path + n - e, ext, e) == 0;
}
