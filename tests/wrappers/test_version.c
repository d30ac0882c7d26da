/*
 * The library's version (hessfit_version, hessfit_version_numbers) and the headers' version
 * (hessfit_version.h) equal the CMake project version, which CMake passes to this test on its own
 * (HESSFIT_TEST_PROJECT_VERSION*, independent of the generated header).
 *
 * Asserts: hessfit_version() == HESSFIT_TEST_PROJECT_VERSION; hessfit_version_numbers() gives
 * its major, minor and patch (and accepts NULL outputs); HESSFIT_VERSION_MAJOR/MINOR/PATCH and
 * HESSFIT_VERSION_STRING equal the same.
 */
#include "test_util.h"
#include <string.h>

int main(void) {
    const char *v = hessfit_version();
    printf("hessfit_version() = \"%s\", CMake project version \"%s\"\n", v, HESSFIT_TEST_PROJECT_VERSION);
    CHECK(v != NULL && strcmp(v, HESSFIT_TEST_PROJECT_VERSION) == 0, "hessfit_version() is \"%s\", expected \"%s\"",
          v ? v : "(null)", HESSFIT_TEST_PROJECT_VERSION);
    CHECK(strcmp(HESSFIT_VERSION_STRING, HESSFIT_TEST_PROJECT_VERSION) == 0, "HESSFIT_VERSION_STRING is \"%s\"",
          HESSFIT_VERSION_STRING);

    int major = -1, minor = -1, patch = -1;
    hessfit_version_numbers(&major, &minor, &patch);
    printf("hessfit_version_numbers() = %d %d %d\n", major, minor, patch);
    CHECK(major == HESSFIT_TEST_PROJECT_VERSION_MAJOR && minor == HESSFIT_TEST_PROJECT_VERSION_MINOR &&
              patch == HESSFIT_TEST_PROJECT_VERSION_PATCH,
          "hessfit_version_numbers() gives %d.%d.%d, expected %d.%d.%d", major, minor, patch,
          HESSFIT_TEST_PROJECT_VERSION_MAJOR, HESSFIT_TEST_PROJECT_VERSION_MINOR, HESSFIT_TEST_PROJECT_VERSION_PATCH);
    CHECK(HESSFIT_VERSION_MAJOR == major && HESSFIT_VERSION_MINOR == minor && HESSFIT_VERSION_PATCH == patch,
          "the header's HESSFIT_VERSION_MAJOR/MINOR/PATCH are %d.%d.%d", HESSFIT_VERSION_MAJOR, HESSFIT_VERSION_MINOR,
          HESSFIT_VERSION_PATCH);

    /* any output may be NULL */
    int only_minor = -1;
    hessfit_version_numbers(NULL, &only_minor, NULL);
    CHECK(only_minor == HESSFIT_TEST_PROJECT_VERSION_MINOR, "minor alone: %d", only_minor);
    hessfit_version_numbers(NULL, NULL, NULL);
    printf("test_version passed\n");
    return 0;
}
