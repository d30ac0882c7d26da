/* The status codes and the thread's error message every hessfit C interface shares
 * (core/include/hessfit_status.h): a message built from the current one (the prefixing every layer
 * does), truncation at HESSFIT_ERROR_MESSAGE_SIZE, clearing, and one distinct text per code. */
#include "hessfit_status.h"
#include "test_util.h"

#include <string.h>

int main(void)
{
    /* prefixing: the current message as an argument of the next */
    CHECK(hessfit_error(HESSFIT_ERROR_PARSE, "bad number '%s'", "1.2.3") == HESSFIT_ERROR_PARSE, "returns its status");
    hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s", "in.fit", 7, hessfit_last_error());
    CHECK(strcmp(hessfit_last_error(), "in.fit:7: bad number '1.2.3'") == 0, "prefixed: '%s'", hessfit_last_error());
    hessfit_error(HESSFIT_ERROR_PARSE, "%s (%s)", hessfit_last_error(), hessfit_last_error());
    CHECK(strcmp(hessfit_last_error(), "in.fit:7: bad number '1.2.3' (in.fit:7: bad number '1.2.3')") == 0,
          "twice: '%s'", hessfit_last_error());

    /* truncation keeps HESSFIT_ERROR_MESSAGE_SIZE - 1 characters */
    char long_text[3 * HESSFIT_ERROR_MESSAGE_SIZE];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    hessfit_error(HESSFIT_ERROR_IO, "%s", long_text);
    CHECK(strlen(hessfit_last_error()) == HESSFIT_ERROR_MESSAGE_SIZE - 1, "truncated to %zu",
          strlen(hessfit_last_error()));

    hessfit_clear_error();
    CHECK(hessfit_last_error()[0] == '\0', "cleared");
    hessfit_error(HESSFIT_ERROR_IO, "x");
    hessfit_error(HESSFIT_ERROR_IO, NULL);
    CHECK(hessfit_last_error()[0] == '\0', "a NULL format clears");

    /* one distinct text per code; anything else is "unknown status" */
    for (int a = 0; a < HESSFIT_NUM_STATUS; a++) {
        const char *ta = hessfit_status_string((hessfit_status)a);
        CHECK(ta != NULL && ta[0] != '\0' && strcmp(ta, "unknown status") != 0, "code %d has no text", a);
        for (int b = 0; b < a; b++)
            CHECK(strcmp(ta, hessfit_status_string((hessfit_status)b)) != 0, "codes %d and %d share '%s'", a, b, ta);
    }
    CHECK(strcmp(hessfit_status_string(HESSFIT_NUM_STATUS), "unknown status") == 0, "past the end");
    CHECK(strcmp(hessfit_status_string((hessfit_status)-1), "unknown status") == 0, "negative");
    CHECK(strcmp(hessfit_status_string((hessfit_status)999), "unknown status") == 0, "out of range");
    printf("test_status: %d codes, distinct texts; prefixing, truncation and clearing as documented\n",
           (int)HESSFIT_NUM_STATUS);
    return 0;
}
