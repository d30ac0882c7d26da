/* Readers of the fitting layer: the repository's real .npy/.xyz/.txt files parse, and every kind
 * of bad file (written to a mkdtemp directory) gives the right status and a message that names
 * the file and the line or element. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void put_le_f8(unsigned char *out, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int k = 0; k < 8; k++)
        out[k] = (unsigned char)(u >> (8 * k));
}

/* An .npy file: version 1 or 2 preamble, the dictionary padded with spaces and '\n' to a multiple
 * of 64 bytes, then data_bytes bytes of values (little-endian float64; fewer bytes truncate). */
static const char *temp_npy(const char *name, int version, const char *dict, const double *values, size_t n_values,
                            size_t data_bytes)
{
    unsigned char buf[4096];
    size_t pre = version == 1 ? 10 : 12, dlen = strlen(dict), total, hlen, pos;
    total = (pre + dlen + 1 + 63) / 64 * 64;
    hlen = total - pre;
    CHECK(total + 8 * n_values <= sizeof buf && data_bytes <= 8 * n_values, "test npy too large");
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    if (version == 1) {
        buf[8] = (unsigned char)(hlen & 0xff);
        buf[9] = (unsigned char)(hlen >> 8);
    } else {
        for (int k = 0; k < 4; k++)
            buf[8 + k] = (unsigned char)(hlen >> (8 * k));
    }
    memcpy(buf + pre, dict, dlen);
    memset(buf + pre + dlen, ' ', hlen - dlen - 1);
    buf[total - 1] = '\n';
    pos = total;
    for (size_t i = 0; i < n_values; i++)
        put_le_f8(buf + pos + 8 * i, values[i]);
    return test_write_file(name, buf, total + data_bytes);
}

static void test_real_files(void)
{
    char *path;
    hessfit_array a;
    hessfit_xyz x;
    double *m, *v;
    size_t n;

    path = test_source_path_dup("examples/data/sn2/ch3f-hessian.npy");
    HF_CALL(hessfit_npy_read(path, &a));
    CHECK(a.ndim == 2 && a.shape[0] == 15 && a.shape[1] == 15 && a.size == 225, "CH3F Hessian shape");
    /* first value: bytes ef 94 d5 bf 97 3d e3 3f, little-endian 0x3fe33d97bfd594ef */
    CHECK_CLOSE(a.data[0], 0.6012686487926241, 1e-15, 1.0, "H[0][0]");
    for (int i = 0; i < 15; i++)
        for (int j = 0; j < 15; j++)
            CHECK_CLOSE(a.data[i * 15 + j], a.data[j * 15 + i], 1e-12, 1.0, "symmetric Hessian");
    hessfit_array_free(&a);
    hessfit_array_free(&a); /* safe twice */
    HF_CALL(hessfit_npy_read_square(path, 15, &m, &n));
    CHECK(n == 15, "square read");
    free(m);
    CHECK(hessfit_npy_read_square(path, 18, &m, &n) == HESSFIT_ERROR_SHAPE && m == NULL && n == 0, "wrong expected size");
    free(path);

    path = test_source_path_dup("examples/data/sn2/sn2-ts-hessian.npy");
    HF_CALL(hessfit_npy_read_square(path, 18, &m, &n));
    free(m);
    free(path);

    path = test_source_path_dup("examples/data/sn2/ch3f-optimized.xyz");
    HF_CALL(hessfit_xyz_read(path, &x));
    CHECK(x.n_atoms == 5, "5 atoms");
    CHECK(x.atomic_numbers[0] == 6 && x.atomic_numbers[1] == 9 && x.atomic_numbers[2] == 1 &&
          x.atomic_numbers[3] == 1 && x.atomic_numbers[4] == 1, "CH3F elements");
    CHECK(x.coords_angstrom[0] == -0.000001690194 && x.coords_angstrom[1] == -0.750274779802 &&
          x.coords_angstrom[14] == -0.898838547386, "CH3F coordinates");
    CHECK(x.comment != NULL && x.comment[0] == '\0', "empty comment line");
    hessfit_xyz_free(&x);
    hessfit_xyz_free(&x);
    free(path);

    path = test_source_path_dup("examples/data/sn2/sn2-ts-optimized.xyz");
    HF_CALL(hessfit_xyz_read(path, &x));
    CHECK(x.n_atoms == 6 && x.atomic_numbers[2] == 9 && x.coords_angstrom[4] == 1.85, "SN2 TS");
    hessfit_xyz_free(&x);
    free(path);

    path = test_source_path_dup("examples/data/sn2/ch3f-frequencies.txt");
    HF_CALL(hessfit_text_read_values(path, &v, &n));
    CHECK(n == 9 && v[0] == 1.040581386071783299e+03 && v[8] == 3.145087926775190226e+03, "CH3F frequencies");
    free(v);
    free(path);
}

static void test_npy_good_variants(void)
{
    const double vals[6] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
    hessfit_array a;
    const char *p;

    /* fortran_order: file holds columns of [[1, 3, 5], [2, 4, 6]] */
    p = temp_npy("fortran.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", vals, 6, 48);
    HF_CALL(hessfit_npy_read(p, &a));
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3, "fortran shape");
    CHECK(a.data[0] == 1 && a.data[1] == 3 && a.data[2] == 5 && a.data[3] == 2 && a.data[4] == 4 && a.data[5] == 6,
          "fortran order transposed to C order");
    hessfit_array_free(&a);
    /* 3-D Fortran order: element (i, j, k) sits at i + 2 j + 2 k in the file for shape (2, 1, 3) */
    p = temp_npy("fortran3.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1, 3)}", vals, 6, 48);
    HF_CALL(hessfit_npy_read(p, &a));
    CHECK(a.data[0] == 1 && a.data[1] == 3 && a.data[2] == 5 && a.data[3] == 2 && a.data[5] == 6, "3-D fortran");
    hessfit_array_free(&a);
    /* version 2 header, double quotes, key order, no trailing comma, 1-D shape */
    p = temp_npy("v2.npy", 2, "{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<f8\"}", vals, 6, 48);
    HF_CALL(hessfit_npy_read(p, &a));
    CHECK(a.ndim == 1 && a.shape[0] == 6 && a.data[5] == 6.0, "v2 1-D");
    hessfit_array_free(&a);
    /* 0-d scalar and an empty array */
    p = temp_npy("scalar.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", vals, 1, 8);
    HF_CALL(hessfit_npy_read(p, &a));
    CHECK(a.ndim == 0 && a.size == 1 && a.data[0] == 1.0, "0-d");
    hessfit_array_free(&a);
    p = temp_npy("empty.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", vals, 0, 0);
    HF_CALL(hessfit_npy_read(p, &a));
    CHECK(a.size == 0 && a.data == NULL, "empty");
    hessfit_array_free(&a);
}

static void test_npy_bad(void)
{
    double vals[225];
    hessfit_array a;
    const char *p;
    const char *dict15 = "{'descr': '<f8', 'fortran_order': False, 'shape': (15, 15), }";
    for (int i = 0; i < 225; i++)
        vals[i] = i;

    p = temp_npy("truncated.npy", 1, dict15, vals, 225, 100);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_TRUNCATED, p, 0, "(15, 15)", "1800", "npy truncated data");
    CHECK(a.data == NULL && a.size == 0, "output zeroed on failure");

    p = temp_npy("f4.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", vals, 1, 8);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_UNSUPPORTED, p, 0, "'<f4'", "<f8", "npy dtype <f4");
    p = temp_npy("bigendian.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", vals, 1, 8);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_UNSUPPORTED, p, 0, "'>f8'", NULL, "npy dtype >f8");
    p = temp_npy("int.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", vals, 1, 8);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_UNSUPPORTED, p, 0, "'<i8'", NULL, "npy dtype <i8");
    p = temp_npy("struct.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", vals, 1, 8);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_UNSUPPORTED, p, 0, "structured", NULL, "npy structured dtype");

    vals[5] = NAN;
    p = temp_npy("nan.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }", vals, 9, 72);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_NONFINITE, p, 0, "element 5 (index [1, 2])", "NaN", "npy NaN");
    vals[5] = -INFINITY;
    /* Fortran order: file position 5 of a (3, 3) array is element (2, 1) */
    p = temp_npy("inf.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 3), }", vals, 9, 72);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_NONFINITE, p, 0, "[2, 1]", "-Inf", "npy -Inf (Fortran order)");
    vals[5] = 5.0;

    p = temp_npy("huge.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                 vals, 0, 0);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_OVERFLOW, p, 0, "(4294967296, 4294967296)", NULL,
                           "npy shape overflows size_t");
    p = temp_npy("huge_dim.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
                 vals, 0, 0);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_OVERFLOW, p, 0, "dimension 0", NULL, "npy dimension overflows");
    p = temp_npy("huge_bytes.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3074457345618258603,), }",
                 vals, 0, 0);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_OVERFLOW, p, 0, "bytes", NULL, "npy byte count overflows");
    /* large but representable: refused by the file-size check before any allocation */
    p = temp_npy("large.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }",
                 vals, 0, 0);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_TRUNCATED, p, 0, "8000000000000000000", NULL,
                           "npy shape beyond file");

    p = temp_npy("trailing.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", vals, 3, 24);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, "8 unexpected bytes", NULL, "npy trailing bytes");
    p = temp_npy("nokey.npy", 1, "{'descr': '<f8', 'shape': (2,), }", vals, 2, 16);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, "'fortran_order'", NULL, "npy missing key");
    p = temp_npy("extrakey.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", vals, 2, 16);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, "'x'", NULL, "npy unexpected key");
    p = temp_npy("badshape.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, -1), }", vals, 2, 16);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, "'shape'", NULL, "npy negative dimension");
    p = temp_npy("badbool.npy", 1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", vals, 2, 16);
    test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, "fortran_order", NULL, "npy bad fortran_order");
    p = temp_npy("notsquare.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", vals, 6, 48);
    {
        double *m = NULL;
        size_t n = 7;
        test_expect_file_error(hessfit_npy_read_square(p, 0, &m, &n), HESSFIT_ERROR_SHAPE, p, 0, "(2, 3)", NULL,
                               "npy not square");
        CHECK(m == NULL && n == 0, "square outputs zeroed");
    }

    {
        const unsigned char v9[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0};
        const unsigned char shortpre[5] = {0x93, 'N', 'U', 'M', 'P'};
        const unsigned char hdr_cut[20] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0, '{', '\'', 'd'};
        const unsigned char big_hdr[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0, 0x40};
        p = test_write_text("magic.npy", "PK\003\004 this is a zip file");
        test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, "magic", NULL, "npy bad magic");
        p = test_write_file("empty_file.npy", "", 0);
        test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_FORMAT, p, 0, NULL, NULL, "npy empty file");
        p = test_write_file("short.npy", shortpre, sizeof shortpre);
        test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_TRUNCATED, p, 0, "preamble", NULL,
                               "npy truncated preamble");
        p = test_write_file("version9.npy", v9, sizeof v9);
        test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_UNSUPPORTED, p, 0, "9.0", NULL, "npy version 9");
        p = test_write_file("header_cut.npy", hdr_cut, sizeof hdr_cut);
        test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_TRUNCATED, p, 0, "header", NULL, "npy truncated header");
        p = test_write_file("big_header.npy", big_hdr, sizeof big_hdr);
        test_expect_file_error(hessfit_npy_read(p, &a), HESSFIT_ERROR_OVERFLOW, p, 0, "header length", NULL, "npy 1 GiB header");
    }
    {
        const char *missing = test_temp_path("does-not-exist.npy");
        test_expect_file_error(hessfit_npy_read(missing, &a), HESSFIT_ERROR_IO, missing, 0, "cannot open", NULL,
                               "npy missing file");
    }
    test_expect_file_error(hessfit_npy_read(NULL, &a), HESSFIT_ERROR_NULL_ARGUMENT, NULL, 0, "path", NULL, "npy NULL path");
}

static void test_xyz(void)
{
    hessfit_xyz x;
    const char *p;

    p = test_write_text("crlf.xyz", "2\r\nwater fragment\r\nO 0.0 0.0 0.1\r\n1 0.0 0.75 -0.5\r\n\r\n\n");
    HF_CALL(hessfit_xyz_read(p, &x));
    CHECK(x.n_atoms == 2 && x.atomic_numbers[0] == 8 && x.atomic_numbers[1] == 1 && x.coords_angstrom[5] == -0.5,
          "CRLF, atomic number as symbol, trailing blank lines");
    CHECK(strcmp(x.comment, "water fragment") == 0, "comment '%s'", x.comment);
    hessfit_xyz_free(&x);
    p = test_write_text("nonewline.xyz", "  1  \n\nrh 1e-3 +2 -3.5E+0");
    HF_CALL(hessfit_xyz_read(p, &x));
    CHECK(x.n_atoms == 1 && x.atomic_numbers[0] == 45 && x.coords_angstrom[2] == -3.5, "lower case, no final newline");
    hessfit_xyz_free(&x);

    p = test_write_text("too_few.xyz", "5\n\nC 0 0 0\nF 0 0 1.4\nH 1 0 0\nH 0 1 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_COUNT, p, 0, ":7:", "atom 5 of the 5",
                           "xyz fewer atoms than count");
    CHECK(x.n_atoms == 0 && x.atomic_numbers == NULL, "output zeroed on failure");
    p = test_write_text("too_many.xyz", "3\n\nC 0 0 0\nF 0 0 1.4\nH 1 0 0\nH 0 1 0\nH 0 0 -1\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_COUNT, p, 0, ":6:", "3 atoms", "xyz more atoms than count");
    p = test_write_text("blank_inside.xyz", "3\n\nC 0 0 0\n\nH 1 0 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_COUNT, p, 0, ":4:", "blank line", "xyz blank line among atoms");
    p = test_write_text("no_comment.xyz", "3\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_COUNT, p, 0, ":2:", "comment", "xyz no comment line");
    p = test_write_text("unknown.xyz", "2\n\nC 0 0 0\nXx 0 0 1\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_UNKNOWN_ELEMENT, p, 0, ":4:", "'Xx'", "xyz unknown element");
    p = test_write_text("unknown_z.xyz", "1\n\n150 0 0 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_UNKNOWN_ELEMENT, p, 0, ":3:", "150",
                           "xyz unknown atomic number");
    p = test_write_text("nan.xyz", "2\n\nC 0 0 0\nH 0 nan 1\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_NONFINITE, p, 0, ":4:", "y coordinate", "xyz NaN coordinate");
    p = test_write_text("inf.xyz", "1\n\nC 0 0 -inf\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_NONFINITE, p, 0, ":3:", "z coordinate", "xyz Inf coordinate");
    p = test_write_text("badnum.xyz", "1\n\nC 0 1.0abc 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":3:", "'1.0abc'", "xyz bad number");
    p = test_write_text("range.xyz", "1\n\nC 0 1e999 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":3:", "range", "xyz number out of range");
    p = test_write_text("fields.xyz", "1\n\nC 0 0 0 0.5\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":3:", "found 5", "xyz five fields");
    p = test_write_text("count.xyz", "five\n\nC 0 0 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":1:", "'five'", "xyz bad count");
    p = test_write_text("count_neg.xyz", "-1\n\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":1:", NULL, "xyz negative count");
    p = test_write_text("count_zero.xyz", "0\n\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":1:", "0", "xyz zero count");
    p = test_write_text("count_huge.xyz", "99999999999999999999\n\nC 0 0 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_OVERFLOW, p, 0, ":1:", "limit", "xyz huge count");
    p = test_write_text("count_big.xyz", "9000000\n\nC 0 0 0\n");
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_COUNT, p, 0, ":4:", "atom 2 of the 9000000",
                           "xyz count beyond data");
    p = test_write_file("empty.xyz", "", 0);
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":1:", "empty", "xyz empty file");
    p = test_write_file("nul.xyz", "1\n\nC 0\0 0 0\n", 12);
    test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":3:", "NUL", "xyz NUL byte");
    {
        static char longline[HESSFIT_XYZ_MAX_LINE + 64];
        memset(longline, ' ', sizeof longline - 1);
        memcpy(longline, "1\n\nC", 4);
        longline[sizeof longline - 2] = '\n';
        longline[sizeof longline - 1] = '\0';
        p = test_write_text("long.xyz", longline);
        test_expect_file_error(hessfit_xyz_read(p, &x), HESSFIT_ERROR_PARSE, p, 0, ":3:", "longer", "xyz over-long line");
    }
    {
        const char *missing = test_temp_path("does-not-exist.xyz");
        test_expect_file_error(hessfit_xyz_read(missing, &x), HESSFIT_ERROR_IO, missing, 0, "cannot open", NULL,
                               "xyz missing file");
    }
}

static void test_text_values(void)
{
    double *v;
    size_t n;
    const char *p = test_write_text("values.txt", "# header\n1.5 2.5  # two\n\n-3e2\n");
    HF_CALL(hessfit_text_read_values(p, &v, &n));
    CHECK(n == 3 && v[0] == 1.5 && v[1] == 2.5 && v[2] == -300.0, "values");
    free(v);
    p = test_write_text("values_bad.txt", "1.0\n2.0\n3.0 x4\n");
    test_expect_file_error(hessfit_text_read_values(p, &v, &n), HESSFIT_ERROR_PARSE, p, 0, ":3:", "'x4'", "text bad value");
    CHECK(v == NULL && n == 0, "outputs zeroed");
    p = test_write_text("values_nan.txt", "1.0\nNaN\n");
    test_expect_file_error(hessfit_text_read_values(p, &v, &n), HESSFIT_ERROR_NONFINITE, p, 0, ":2:", NULL, "text NaN");
    p = test_write_text("values_empty.txt", "# nothing\n");
    HF_CALL(hessfit_text_read_values(p, &v, &n));
    CHECK(n == 0 && v == NULL, "no values");
}

int main(void)
{
    test_real_files();
    test_npy_good_variants();
    test_npy_bad();
    test_xyz();
    test_text_values();

    printf("test_readers: all checks passed\n");
    return 0;
}
