/*
 * libFuzzer target for one reader of the fitting layer (the reader is chosen at compile time by
 * HF_FUZZ_FORMAT, see CMakeLists.txt here). Each input is written to a private temporary file and
 * read through the same path-based entry point users call; the reader must return a status
 * (any) without crashing, leaking or over-reading (AddressSanitizer/UBSan catch those). A
 * successful read must also pass hessfit_molecule_check, and a force field that was read must write
 * back and re-read (write-back is part of the .fld/.frcmod contract).
 */
#include "hessfit_config.h"
#include "hessfit_forcefield.h"
#include "hessfit_io.h"
#include "hessfit_molecule.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HF_FUZZ_FORMAT
#error "HF_FUZZ_FORMAT must name the reader"
#endif

static char input_path[64], output_path[64];

static void make_paths(void)
{
    if (input_path[0])
        return;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(input_path, sizeof input_path, "%s/hf-fuzz-in-%ld", dir, (long)getpid());
    snprintf(output_path, sizeof output_path, "%s/hf-fuzz-out-%ld", dir, (long)getpid());
}

static void require(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_%s: %s: %s\n", HF_FUZZ_FORMAT, what, hessfit_last_error());
        abort();
    }
}

static void read_molecule(hessfit_status (*reader)(const char *, hessfit_molecule *))
{
    hessfit_molecule mol;
    if (reader(input_path, &mol) == HESSFIT_SUCCESS) {
        require(hessfit_molecule_check(&mol, input_path) == HESSFIT_SUCCESS, "a molecule read without error fails its check");
        hessfit_molecule_free(&mol);
    }
}

static void read_list(hessfit_status (*reader)(const char *, hessfit_molecule_list *))
{
    hessfit_molecule_list list;
    if (reader(input_path, &list) == HESSFIT_SUCCESS) {
        for (int i = 0; i < list.n; i++)
            require(hessfit_molecule_check(&list.items[i], input_path) == HESSFIT_SUCCESS,
                    "a molecule read without error fails its check");
        hessfit_molecule_list_free(&list);
    }
}

static void read_forcefield(hessfit_status (*reader)(const char *, hessfit_forcefield *),
                            hessfit_status (*writer)(const hessfit_forcefield *, const char *))
{
    hessfit_forcefield ff, again;
    if (reader(input_path, &ff) != HESSFIT_SUCCESS)
        return;
    require(writer(&ff, output_path) == HESSFIT_SUCCESS, "a force field read without error does not write back");
    require(reader(output_path, &again) == HESSFIT_SUCCESS, "a written force field does not re-read");
    require(again.n_params == ff.n_params, "a written force field re-reads with another parameter count");
    hessfit_forcefield_free(&again);
    hessfit_forcefield_free(&ff);
    unlink(output_path);
}

/* OpenMM ForceField XML: read only (the fit exports its model with hessfit_ffxml_write instead). */
static void read_ffxml(void)
{
    hessfit_forcefield ff;
    if (hessfit_ffxml_read(input_path, &ff) == HESSFIT_SUCCESS) {
        require(ff.n_params > 0, "an OpenMM ForceField XML read without error has no parameters");
        hessfit_forcefield_free(&ff);
    }
}

static void read_config(void)
{
    hessfit_config c;
    if (hessfit_config_read(input_path, &c) == HESSFIT_SUCCESS) {
        require(hessfit_config_count(&c, "forcefield") == 1, "a config read without error lacks its forcefield");
        /* worded keys (energy, geometry, their weights): accepted values have their words, the
         * energy FILE word resolved to a path */
        for (int i = 0; i < c.n_entries; i++)
            require(c.entries[i].value != NULL && c.entries[i].value[0] != '\0' && c.entries[i].value[0] != ' ',
                    "a config entry without a value");
        for (int i = 0; i < hessfit_config_count(&c, "energy"); i++) {
            const char *v = hessfit_config_entry_at(&c, "energy", i)->value;
            require(strchr(v, ' ') != NULL, "an energy entry of one word");
        }
        hessfit_config_free(&c);
    }
}

static void read_array(void)
{
    hessfit_array a;
    if (hessfit_npy_read(input_path, &a) == HESSFIT_SUCCESS)
        hessfit_array_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f;
    const char *fmt = HF_FUZZ_FORMAT;
    make_paths();
    f = fopen(input_path, "wb");
    require(f != NULL, "cannot create the temporary input");
    require(fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write the temporary input");

    if (!strcmp(fmt, "fchk"))
        read_molecule(hessfit_fchk_read);
    else if (!strcmp(fmt, "gaussian-log"))
        read_molecule(hessfit_gaussian_log_read);
    else if (!strcmp(fmt, "jaguar-in"))
        read_molecule(hessfit_jaguar_in_read);
    else if (!strcmp(fmt, "jaguar-out"))
        read_molecule(hessfit_jaguar_out_read);
    else if (!strcmp(fmt, "orca-hess"))
        read_molecule(hessfit_orca_hess_read);
    else if (!strcmp(fmt, "xyz"))
        read_molecule(hessfit_xyz_molecule_read);
    else if (!strcmp(fmt, "npy"))
        read_array();
    else if (!strcmp(fmt, "mmo"))
        read_list(hessfit_mmo_read);
    else if (!strcmp(fmt, "mol2"))
        read_list(hessfit_mol2_read);
    else if (!strcmp(fmt, "config"))
        read_config();
    else if (!strcmp(fmt, "fld"))
        read_forcefield(hessfit_fld_read, hessfit_fld_write);
    else if (!strcmp(fmt, "frcmod"))
        read_forcefield(hessfit_frcmod_read, hessfit_frcmod_write);
    else if (!strcmp(fmt, "ffxml"))
        read_ffxml();
    else
        require(0, "unknown HF_FUZZ_FORMAT");
    unlink(input_path);
    return 0;
}
