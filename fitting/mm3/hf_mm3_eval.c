/*
 * The reference evaluator of the MM3* model (hessfit_mm3.h): every interaction's energy by
 * MacroModel's formulas on the reduced geometry (the van der Waals switch on the true distance), in
 * kJ/mol through the .fld header factors. Plain and direct on purpose: it is the check the
 * plugin-based model is compared against.
 */
#include "hessfit_mm3.h"
#include "hf_mm3_internal.h"
#include "hf_vec3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEG (180.0 / 3.14159265358979323846)

static const char *const kind_names[HESSFIT_MM3_NUM_KINDS] = {
    "stretch", "bend", "torsion", "out-of-plane", "stretch-bend", "bend-bend", "torsion-stretch", "van der Waals",
    "electrostatic", "hydrogen bond"};

const char *hessfit_mm3_kind_name(hessfit_mm3_kind kind)
{
    return kind >= 0 && kind < HESSFIT_MM3_NUM_KINDS ? kind_names[kind] : "unknown";
}

int hessfit_mm3_count(const hessfit_mm3_model *m, hessfit_mm3_kind kind)
{
    switch (kind) {
    case HESSFIT_MM3_STRETCH: return m->n_stretches;
    case HESSFIT_MM3_BEND: return m->n_bends;
    case HESSFIT_MM3_TORSION: return m->n_torsions;
    case HESSFIT_MM3_OUT_OF_PLANE: return m->n_out_of_plane;
    case HESSFIT_MM3_STRETCH_BEND: return m->n_stretch_bends;
    case HESSFIT_MM3_BEND_BEND: return m->n_bend_bends;
    case HESSFIT_MM3_TORSION_STRETCH: return m->n_torsion_stretches;
    case HESSFIT_MM3_VDW:
    case HESSFIT_MM3_ELECTROSTATIC: return m->n_pairs;
    case HESSFIT_MM3_HBOND: return m->n_hbonds;   /* the ones not listed put 0 */
    default: return 0;
    }
}

void hessfit_mm3_reduce(const hessfit_mm3_model *m, const double *coords, double *out)
{
    memcpy(out, coords, 3 * (size_t)m->n_atoms * sizeof *out);
    for (int r = 0; r < m->n_reduced; r++) {
        const hessfit_mm3_reduced *h = &m->reduced[r];
        for (int d = 0; d < 3; d++)
            out[3 * h->atom + d] = coords[3 * h->partner + d] + h->f * (coords[3 * h->atom + d] - coords[3 * h->partner + d]);
    }
}

/* Dihedral a-b-c-d in radians (IUPAC sign). */
static double dihedral(const double *x, int a, int b, int c, int d)
{
    double b1[3], b2[3], b3[3], n1[3], n2[3], m1 = 0.0, n12 = 0.0, bb = 0.0;
    for (int k = 0; k < 3; k++) {
        b1[k] = x[3 * b + k] - x[3 * a + k];
        b2[k] = x[3 * c + k] - x[3 * b + k];
        b3[k] = x[3 * d + k] - x[3 * c + k];
    }
    for (int k = 0; k < 3; k++) {
        n1[k] = b1[(k + 1) % 3] * b2[(k + 2) % 3] - b1[(k + 2) % 3] * b2[(k + 1) % 3];
        n2[k] = b2[(k + 1) % 3] * b3[(k + 2) % 3] - b2[(k + 2) % 3] * b3[(k + 1) % 3];
    }
    for (int k = 0; k < 3; k++) {
        m1 += b1[k] * n2[k];
        n12 += n1[k] * n2[k];
        bb += b2[k] * b2[k];
    }
    return atan2(sqrt(bb) * m1, n12);
}

/* MM3*'s Buckingham bracket A exp(-b r / R) - c (R / r)^6 at the reduced distance r, R = R*_i + R*_j,
 * and below r = R / HF_MM3_BUCK_WALL the r^-12 wall of the same value there (hf_core.h). */
static double buckingham(double R, double r)
{
    const double q = R / r, q6 = pow(q, 6.0);
    if (q > HF_MM3_BUCK_WALL) {
        const double w6 = pow(HF_MM3_BUCK_WALL, 6.0);
        return (HF_MM3_BUCK_A * exp(-HF_MM3_BUCK_B / HF_MM3_BUCK_WALL) - HF_MM3_BUCK_C * w6) / (w6 * w6) * q6 * q6;
    }
    return HF_MM3_BUCK_A * exp(-HF_MM3_BUCK_B * r / R) - HF_MM3_BUCK_C * q6;
}

double hessfit_mm3_evaluate(const hessfit_mm3_model *m, const double *coords, double totals[HESSFIT_MM3_NUM_KINDS],
                            double *const per[HESSFIT_MM3_NUM_KINDS])
{
    double t[HESSFIT_MM3_NUM_KINDS] = {0.0}, total = 0.0;
    double *x = malloc(3 * ((size_t)m->n_atoms + 1) * sizeof *x); /* the reduced geometry */
    const hessfit_mm3_factors *F = &m->factor;
    if (x == NULL)
        return NAN;
    hessfit_mm3_reduce(m, coords, x);
#define PUT(kind, i, e)                   \
    do {                                  \
        t[kind] += (e);                   \
        if (per != NULL && per[kind])     \
            per[kind][i] = (e);           \
    } while (0)
    for (int i = 0; i < m->n_stretches; i++) { /* 1/2 F k dr^2 (1 - 2.55 dr + 3.793125 dr^2) */
        const hessfit_mm3_stretch *s = &m->stretches[i];
        const double dr = hf_atom_distance(x, s->atoms[0], s->atoms[1]) / s->f - s->r0;
        PUT(HESSFIT_MM3_STRETCH, i,
            0.5 * F->str * s->k * dr * dr * (1.0 + HF_MM3_CUBIC_STRETCH * dr + HF_MM3_QUARTIC_STRETCH * dr * dr));
    }
    for (int i = 0; i < m->n_bends; i++) { /* 1/2 F k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7e-7 D^3 + 2.2e-8 D^4) */
        const hessfit_mm3_bend *e = &m->bends[i];
        const double D = hf_atom_angle(x, e->atoms[0], e->atoms[1], e->atoms[2]) * DEG - e->theta0, dt = D / DEG;
        const double anh = 1.0 + D * (HF_MM3_BEND_C3 + D * (HF_MM3_BEND_C4 + D * (HF_MM3_BEND_C5 + D * HF_MM3_BEND_C6)));
        PUT(HESSFIT_MM3_BEND, i, 0.5 * F->bnd * e->k * dt * dt * anh);
    }
    for (int i = 0; i < m->n_stretch_bends; i++) { /* F k_sb (dr1 + dr2) dt */
        const hessfit_mm3_stretch_bend *s = &m->stretch_bends[i];
        double e = 0.0;
        if (s->k_sb != 0.0) {
            const double dr1 = hf_atom_distance(x, s->atoms[1], s->atoms[0]) / s->f[0] - s->r0[0];
            const double dr2 = hf_atom_distance(x, s->atoms[1], s->atoms[2]) / s->f[1] - s->r0[1];
            const double dt = (hf_atom_angle(x, s->atoms[0], s->atoms[1], s->atoms[2]) * DEG - s->theta0) / DEG;
            e = F->sb * s->k_sb * (dr1 + dr2) * dt;
        }
        PUT(HESSFIT_MM3_STRETCH_BEND, i, e);
    }
    for (int i = 0; i < m->n_bend_bends; i++) { /* -0.02191418 F k1 k2 D1 D2 (deg) */
        const hessfit_mm3_bend_bend *b = &m->bend_bends[i];
        const double d1 = hf_atom_angle(x, b->atoms[1], b->atoms[0], b->atoms[2]) * DEG - b->theta0[0];
        const double d2 = hf_atom_angle(x, b->atoms[3], b->atoms[0], b->atoms[4]) * DEG - b->theta0[1];
        PUT(HESSFIT_MM3_BEND_BEND, i, HF_MM3_BEND_BEND * F->bb * b->k_bb[0] * b->k_bb[1] * d1 * d2);
    }
    for (int i = 0; i < m->n_torsions; i++) { /* F [V1 (1 + cos) + V2 (1 - cos 2) + V3 (1 + cos 3)] */
        const hessfit_mm3_torsion *q = &m->torsions[i];
        const double p = dihedral(x, q->atoms[0], q->atoms[1], q->atoms[2], q->atoms[3]);
        PUT(HESSFIT_MM3_TORSION, i,
            F->tor * (q->v[0] * (1.0 + cos(p)) + q->v[1] * (1.0 - cos(2.0 * p)) + q->v[2] * (1.0 + cos(3.0 * p))));
    }
    for (int i = 0; i < m->n_torsion_stretches; i++) { /* F (-11.995/2) K dr_bc (1 + cos 3 phi) */
        const hessfit_mm3_torsion_stretch *q = &m->torsion_stretches[i];
        double e = 0.0;
        if (q->k_ts != 0.0) {
            const double p = dihedral(x, q->atoms[0], q->atoms[1], q->atoms[2], q->atoms[3]);
            const double dr = hf_atom_distance(x, q->atoms[1], q->atoms[2]) / q->f - q->r0;
            e = F->ts * HF_MM3_TORSION_STRETCH * q->k_ts * dr * (1.0 + cos(3.0 * p));
        }
        PUT(HESSFIT_MM3_TORSION_STRETCH, i, e);
    }
    for (int i = 0; i < m->n_out_of_plane; i++) { /* F k (1 - cos 2 phi) */
        const hessfit_mm3_out_of_plane *o = &m->out_of_plane[i];
        const double p = dihedral(x, o->atoms[0], o->atoms[1], o->atoms[2], o->atoms[3]);
        PUT(HESSFIT_MM3_OUT_OF_PLANE, i, F->imp * o->k * (1.0 - cos(2.0 * p)));
    }
    for (int i = 0; i < m->n_pairs; i++) {
        const hessfit_mm3_pair *p = &m->pairs[i];
        const double rr = hf_atom_distance(x, p->atoms[0], p->atoms[1]);
        const double r = hf_atom_distance(coords, p->atoms[0], p->atoms[1]);
        const double S = r <= HF_MM3_SWITCH_ON   ? 1.0
                         : r >= HF_MM3_SWITCH_OFF ? 0.0
                                                  : (HF_MM3_SWITCH_OFF * HF_MM3_SWITCH_OFF - r * r) /
                                                        (HF_MM3_SWITCH_OFF * HF_MM3_SWITCH_OFF - HF_MM3_SWITCH_ON * HF_MM3_SWITCH_ON);
        const double evdw = S == 0.0 ? 0.0 : F->vdw * p->eps * S * buckingham(p->r, rr);
        PUT(HESSFIT_MM3_VDW, i, evdw);
        PUT(HESSFIT_MM3_ELECTROSTATIC, i, F->ele * p->qq / rr);
    }
    for (int i = 0; i < m->n_hbonds; i++) { /* F (C' / r'^12 - D' / r'^10) */
        const hessfit_mm3_hbond *h = &m->hbonds[i];
        if (!h->listed) {
            PUT(HESSFIT_MM3_HBOND, i, 0.0);
            continue;
        }
        const double r2 = 1.0 / pow(hf_atom_distance(x, h->atoms[0], h->atoms[1]), 2.0), r10 = pow(r2, 5.0);
        PUT(HESSFIT_MM3_HBOND, i, F->hbd * (h->c * r10 * r2 - h->d * r10));
    }
#undef PUT
    free(x);
    for (int k = 0; k < HESSFIT_MM3_NUM_KINDS; k++) {
        total += t[k];
        if (totals != NULL)
            totals[k] = t[k];
    }
    return total;
}

double hessfit_mm3_vdw_switch_kink(double r_star_sum, double eps, double r_reduced)
{
    const double on = HF_MM3_SWITCH_ON, off = HF_MM3_SWITCH_OFF;
    return eps * (-2.0 * on / (off * off - on * on)) * buckingham(r_star_sum, r_reduced);
}
