/* The force-field model (hessfit_forcefield.h): freeing, names, look-up by line (an MM3 .fld
 * continuation line through hf_fld_param_continued_at, hf_fld.c), and reading or writing a file
 * by its format (hf_fld.c, hf_frcmod.c). What the format files share is hf_ff_common.c; they never
 * call back into this file. */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_forcefield.h"
#include "hessfit_path.h"
#include "hf_ff_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hessfit_forcefield_free(hessfit_forcefield *ff)
{
    if (ff == NULL)
        return;
    free(ff->path);
    free(ff->params);
    free(ff->substructures);
    free(ff->equivalences);
    free(ff->fld_rows);
    if (ff->lines != NULL)
        for (int i = 0; i < ff->n_lines; i++)
            free(ff->lines[i]);
    free(ff->lines);
    memset(ff, 0, sizeof *ff);
}

const char *hessfit_param_kind_name(hessfit_param_kind kind)
{
    switch (kind) {
    case HESSFIT_PARAM_BOND: return "bond";
    case HESSFIT_PARAM_ANGLE: return "angle";
    case HESSFIT_PARAM_TORSION: return "torsion";
    case HESSFIT_PARAM_IMPROPER: return "improper";
    case HESSFIT_PARAM_VDW: return "vdw";
    case HESSFIT_PARAM_CHARGE: return "charge";
    case HESSFIT_PARAM_STRETCH_BEND: return "stretch-bend";
    default: return "unknown";
    }
}

int hessfit_forcefield_param_at_line(const hessfit_forcefield *ff, int line)
{
    if (ff == NULL || line <= 0 || (ff->n_params > 0 && ff->params == NULL))
        return -1;
    for (int i = 0; i < ff->n_params; i++)
        if (ff->params[i].line == line)
            return i;
    /* an MM3 .fld descriptor continuation line stands for the parameter it continues */
    return ff->format == HESSFIT_FF_MM3_FLD ? hf_fld_param_continued_at(ff, line) : -1;
}

static int vdw_line_of(const hessfit_forcefield *ff, const char *type)
{
    int found = -1;
    for (int p = 0; p < ff->n_params; p++)
        if (ff->params[p].kind == HESSFIT_PARAM_VDW && ff->params[p].substructure < 0 &&
            strcmp(ff->params[p].types[0], type) == 0)
            found = p;
    return found;
}

hessfit_status hessfit_forcefield_vdw_param(const hessfit_forcefield *ff, const char *type, int *param)
{
    const char *path;
    int found, via = -1;
    if (ff == NULL || type == NULL || param == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_forcefield_vdw_param: %s is NULL",
                             ff == NULL ? "ff" : type == NULL ? "type" : "param");
    path = ff->path != NULL ? ff->path : "(force field)";
    if ((found = vdw_line_of(ff, type)) >= 0) {
        *param = found;
        return HESSFIT_SUCCESS;
    }
    for (int e = 0; e < ff->n_equivalences; e++) {
        const hessfit_ff_equivalence *q = &ff->equivalences[e];
        int here;
        if (strcmp(q->type, type) != 0 || (here = vdw_line_of(ff, q->equivalent)) < 0 || here == found)
            continue;
        if (found >= 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "atom type %s has no vdw line of its own in %s and two equivalent types with one: %s "
                                 "(line %d) and %s (line %d)",
                                 type, path, ff->equivalences[via].equivalent, ff->params[found].line, q->equivalent,
                                 ff->params[here].line);
        found = here;
        via = e;
    }
    if (found < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "atom type %s has no vdw parameter in %s (nor an equivalent type)", type, path);
    *param = found;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_forcefield_read(const char *path, hessfit_forcefield *ff)
{
    if (ff != NULL)
        memset(ff, 0, sizeof *ff);
    if (path == NULL || ff == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_forcefield_read: %s is NULL", path == NULL ? "path" : "ff");
    if (hessfit_path_has_extension(path, ".fld"))
        return hessfit_fld_read(path, ff);
    if (hessfit_path_has_extension(path, ".frcmod"))
        return hessfit_frcmod_read(path, ff);
    if (hessfit_path_has_extension(path, ".xml"))
        return hessfit_ffxml_read(path, ff);
    return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                         "%s: not a force-field file hessfit reads (.fld MM3*, .frcmod AMBER, .xml OpenMM ForceField)", path);
}

hessfit_status hessfit_forcefield_write(const hessfit_forcefield *ff, const char *path)
{
    if (ff == NULL || path == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_forcefield_write: %s is NULL", path == NULL ? "path" : "ff");
    switch (ff->format) {
    case HESSFIT_FF_MM3_FLD:
        return hessfit_fld_write(ff, path);
    case HESSFIT_FF_FRCMOD:
        return hessfit_frcmod_write(ff, path);
    case HESSFIT_FF_FFXML:
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: an OpenMM ForceField XML is not written back as such (the "
                             "fit exports the fitted model as fitted.xml, hessfit_ffxml_write)", path);
    default:
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "%s: the force field has no file format to write it in", path);
    }
}
