/*
 * hessian_c_api: the Hessian blocks of a serialized System's HessianForce through the C API, for
 * tests/python/test_c_api_agreement.py (the Python module must give the same doubles, bit for bit).
 *
 *   hessian_c_api SYSTEM.xml POSITIONS.txt PLATFORM OUT.bin
 *
 * POSITIONS.txt: 3 numbers (nm) per particle; OUT.bin: the getHessianSize() doubles of
 * hessfit_force_get_hessian_blocks in the machine's byte order. A Context on PLATFORM in double
 * precision. Exit 0, or 1 with the failing call on stderr.
 */
#include "test_util.h"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "cannot open %s", path);
    CHECK(fseek(f, 0, SEEK_END) == 0, "%s: seek", path);
    long size = ftell(f);
    CHECK(size >= 0 && fseek(f, 0, SEEK_SET) == 0, "%s: size", path);
    char *text = malloc((size_t) size + 1);
    CHECK(text != NULL && fread(text, 1, (size_t) size, f) == (size_t) size, "%s: read", path);
    text[size] = '\0';
    fclose(f);
    return text;
}

int main(int argc, char **argv)
{
    CHECK(argc == 5, "usage: hessian_c_api SYSTEM.xml POSITIONS.txt PLATFORM OUT.bin");
    test_require_platform(argv[3]);
    test_load_plugins();

    char *xml = read_text(argv[1]);
    OpenMM_System *system = NULL;
    HF_OK(hessfit_system_deserialize(xml, &system));
    free(xml);
    int n = OpenMM_System_getNumParticles(system);
    hessfit_force *force = NULL;
    for (int i = 0; i < OpenMM_System_getNumForces(system) && force == NULL; i++)
        if (hessfit_force_create_from_openmm(OpenMM_System_getForce(system, i), &force) != HESSFIT_SUCCESS)
            force = NULL;
    CHECK(force != NULL, "%s has no HessianForce", argv[1]);

    double *pos = malloc(3 * (size_t) n * sizeof *pos);
    FILE *f = fopen(argv[2], "r");
    CHECK(pos != NULL && f != NULL, "cannot open %s", argv[2]);
    for (int i = 0; i < 3 * n; i++)
        CHECK(fscanf(f, "%lf", &pos[i]) == 1, "%s: coordinate %d", argv[2], i);
    fclose(f);

    OpenMM_Integrator *integrator = NULL;
    OpenMM_Context *context = test_create_context(system, argv[3], pos, n, 0.001, &integrator);
    long long size = 0;
    HF_OK(hessfit_force_get_hessian_size(force, &size));
    double *blocks = malloc((size_t) size * sizeof *blocks);
    CHECK(blocks != NULL, "no memory");
    HF_OK(hessfit_force_get_hessian_blocks(force, context, blocks, size));
    f = fopen(argv[4], "wb");
    CHECK(f != NULL && fwrite(blocks, sizeof *blocks, (size_t) size, f) == (size_t) size && fclose(f) == 0,
          "cannot write %s", argv[4]);
    printf("hessian_c_api: %lld doubles on %s\n", size, argv[3]);

    free(blocks);
    free(pos);
    hessfit_force_destroy(force);
    OpenMM_Context_destroy(context);
    OpenMM_Integrator_destroy(integrator);
    OpenMM_System_destroy(system);
    return 0;
}
