/*
 * MacroModel's MM3* cross terms, functions of two or three internal coordinates q_c of one term
 * (hf_core.h): the coordinates each kind uses, the scalar part E(q; p) with f_c = dE/dq_c,
 * f_cd = d2E/dq_c dq_d and their slot derivatives, and the term's gradient and Hessian over its atom
 * entries,
 *     grad E = sum_c f_c g_c,   H = sum_cd f_cd g_c g_d^T + sum_c f_c Hq_c   (g_c = dq_c/dx, Hq_c = d2q_c/dx2).
 * A distance enters through r_eff = s r (s the term's r_scale), so dE/dr = s dE/dr_eff (except the
 * switched MM3* pair, whose r_scale place its switch points, switch_coordinate). The
 * assembly (hf_assemble.c) and the contractions (hf_contract.c) use these; the GPU kernels
 * (hessianTermMath.cc) repeat the same formulas.
 */
#include "hf_core.h"
#include "hf_mm3_pair.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

int hf_is_cross_kind(int kind)
{
    return kind == HF_TERM_MM3_STRETCH_BEND || kind == HF_TERM_MM3_BEND_BEND || kind == HF_TERM_MM3_TORSION_STRETCH ||
           kind == HF_TERM_MM3_PAIR_SWITCHED;
}

/* The switch points y_k = x_{atoms[2+k]} + s_k (x_{atoms[k]} - x_{atoms[2+k]}), k = 0, 1. */
static void switch_points(const hf_term *t, const double *pos, double y[2][3])
{
    for (int k = 0; k < 2; k++) {
        const double *xa = pos + 3 * (ptrdiff_t)t->atoms[k], *xu = pos + 3 * (ptrdiff_t)t->atoms[2 + k];
        for (int c = 0; c < 3; c++)
            y[k][c] = xu[c] + t->r_scale[k] * (xa[c] - xu[c]);
    }
}

double hf_mm3_switch_distance(const hf_term *t, const double *pos)
{
    double y[2][3];
    switch_points(t, pos, y);
    const double d[3] = {y[1][0] - y[0][0], y[1][1] - y[0][1], y[1][2] - y[0][2]};
    return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

int hf_term_uses_cross_path(const hf_term *t, const double *pos)
{
    if (t->kind != HF_TERM_MM3_PAIR_SWITCHED)
        return hf_is_cross_kind(t->kind);
    const double rs = hf_mm3_switch_distance(t, pos);
    return rs > HF_MM3_SWITCH_ON && rs < HF_MM3_SWITCH_OFF;
}

/*
 * The switch distance r_s of a switched pair over its entries (i, j, u, v): with g, H the gradient
 * and Hessian of |y_j - y_i| in (y_i, y_j) and the weights w = (s_i, s_j, 1 - s_i, 1 - s_j) of the
 * entries on the points (i, u on y_i; j, v on y_j): g_e = w_e g_pt(e), H_ef = w_e w_f H_pt(e)pt(f).
 * Only the entries of non-zero weight are listed (an anchor that is its particle, s = 1, has none:
 * 3 entries instead of 4 for a pair with one reduced hydrogen), in entries[0..*n).
 */
static int switch_coordinate(const hf_term *t, const double *pos, int *n, int *entries, double *q, double *grad,
                             double *hess)
{
    double y[2][3], gy[6], hy[36];
    switch_points(t, pos, y);
    const double *x[4] = {y[0], y[1], NULL, NULL};
    if (hf_coordinate(2, x, q, gy, hess ? hy : NULL) != 0)
        return -1;
    const double all_w[4] = {t->r_scale[0], t->r_scale[1], 1.0 - t->r_scale[0], 1.0 - t->r_scale[1]};
    double w[4];
    int pt[4], m = 0;
    for (int e = 0; e < 4; e++)
        if (all_w[e] != 0.0) {
            entries[m] = e;
            w[m] = all_w[e];
            pt[m++] = e % 2;
        }
    *n = m;
    for (int a = 0; a < m; a++)
        for (int i = 0; i < 3; i++)
            grad[3 * a + i] = w[a] * gy[3 * pt[a] + i];
    if (hess)
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++)
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        hess[(3 * a + i) * (3 * m) + 3 * b + j] = w[a] * w[b] * hy[(3 * pt[a] + i) * 6 + 3 * pt[b] + j];
    return 0;
}

/* Per cross kind (in kind order): its coordinates as (atom count, the term's atom entries). */
static const struct {
    int n_coords, n[HF_MAX_CROSS_COORDS], entries[HF_MAX_CROSS_COORDS][4];
} cross_layouts[4] = {
    {3, {2, 2, 3}, {{0, 1}, {2, 1}, {0, 1, 2}}}, /* stretch-bend i j k: r_ij, r_kj, theta_ijk */
    {2, {3, 3, 0}, {{0, 1, 2}, {3, 1, 4}}},      /* bend-bend a c b d e: theta_acb, theta_dce */
    {2, {2, 4, 0}, {{1, 2}, {0, 1, 2, 3}}},      /* torsion-stretch i j k l: r_jk, phi_ijkl */
    {2, {2, 4, 0}, {{0, 1}, {0, 1, 2, 3}}},      /* switched pair i j u v: r_ij, r_s (switch_coordinate) */
};

int hf_cross_coordinate_atoms(int kind, int c, int *entries)
{
    if (!hf_is_cross_kind(kind) || c < 0 || c >= cross_layouts[kind - HF_TERM_MM3_STRETCH_BEND].n_coords)
        return 0;
    const int k = kind - HF_TERM_MM3_STRETCH_BEND, n = cross_layouts[k].n[c];
    for (int a = 0; a < n; a++)
        entries[a] = cross_layouts[k].entries[c][a];
    return n;
}

static inline double slot_value(const hf_term *t, const double *table, int s)
{
    return t->slots[s] == HF_NO_SLOT ? 0.0 : table[t->slots[s]];
}

/* f_cd and f_dc = v (the symmetric pair) */
static inline void set_pair(double m[HF_MAX_CROSS_COORDS][HF_MAX_CROSS_COORDS], int c, int d, double v)
{
    m[c][d] = v;
    m[d][c] = v;
}

/*
 * Stretch-bend (slots k, r0a, r0b, theta0): E = k S t, S = (s_a r_ij - r0a) + (s_b r_kj - r0b),
 * t = theta - theta0. f = (k s_a t, k s_b t, k S); f_02 = k s_a, f_12 = k s_b, the rest 0.
 * E is linear in k (d/dk = value / k); d/dr0a = d/dr0b = -d/dS; d/dtheta0 = -d/dt.
 */
static void stretch_bend(const hf_term *t, const double *table, const double *q, hf_cross_value *out)
{
    const double k = slot_value(t, table, 0), sa = t->r_scale[0], sb = t->r_scale[1];
    const double S = (sa * q[0] - slot_value(t, table, 1)) + (sb * q[1] - slot_value(t, table, 2));
    const double dt = q[2] - slot_value(t, table, 3);
    out->e = k * S * dt;
    out->f[0] = k * sa * dt;
    out->f[1] = k * sb * dt;
    out->f[2] = k * S;
    set_pair(out->f2, 0, 2, k * sa);
    set_pair(out->f2, 1, 2, k * sb);
    out->de_dp[0] = S * dt;
    out->df_dp[0][0] = sa * dt;
    out->df_dp[0][1] = sb * dt;
    out->df_dp[0][2] = S;
    set_pair(out->df2_dp[0], 0, 2, sa);
    set_pair(out->df2_dp[0], 1, 2, sb);
    for (int s = 1; s <= 2; s++) {
        out->de_dp[s] = -k * dt;
        out->df_dp[s][2] = -k;
    }
    out->de_dp[3] = -k * S;
    out->df_dp[3][0] = -k * sa;
    out->df_dp[3][1] = -k * sb;
}

/* Bend-bend (slots k, theta01, theta02): E = k d1 d2; f = (k d2, k d1), f_01 = k. */
static void bend_bend(const hf_term *t, const double *table, const double *q, hf_cross_value *out)
{
    const double k = slot_value(t, table, 0), d1 = q[0] - slot_value(t, table, 1), d2 = q[1] - slot_value(t, table, 2);
    out->e = k * d1 * d2;
    out->f[0] = k * d2;
    out->f[1] = k * d1;
    set_pair(out->f2, 0, 1, k);
    out->de_dp[0] = d1 * d2;
    out->df_dp[0][0] = d2;
    out->df_dp[0][1] = d1;
    set_pair(out->df2_dp[0], 0, 1, 1.0);
    out->de_dp[1] = -k * d2;
    out->df_dp[1][1] = -k;
    out->de_dp[2] = -k * d1;
    out->df_dp[2][0] = -k;
}

/*
 * Torsion-stretch (slots k, r0): E = k D P, D = s r_jk - r0, P = 1 + cos 3 phi, P' = -3 sin 3 phi,
 * P'' = -9 cos 3 phi. f = (k s P, k D P'), f_01 = k s P', f_11 = k D P''; d/dr0 = -d/dD.
 */
static void torsion_stretch(const hf_term *t, const double *table, const double *q, hf_cross_value *out)
{
    const double k = slot_value(t, table, 0), s = t->r_scale[0], D = s * q[0] - slot_value(t, table, 1);
    const double c3 = cos(3.0 * q[1]), P = 1.0 + c3, P1 = -3.0 * sin(3.0 * q[1]), P2 = -9.0 * c3;
    out->e = k * D * P;
    out->f[0] = k * s * P;
    out->f[1] = k * D * P1;
    set_pair(out->f2, 0, 1, k * s * P1);
    out->f2[1][1] = k * D * P2;
    out->de_dp[0] = D * P;
    out->df_dp[0][0] = s * P;
    out->df_dp[0][1] = D * P1;
    set_pair(out->df2_dp[0], 0, 1, s * P1);
    out->df2_dp[0][1][1] = D * P2;
    out->de_dp[1] = -k * P;
    out->df_dp[1][1] = -k * P1;
    out->df2_dp[1][1][1] = -k * P2;
}

/*
 * Switched MM3* pair (slots R, eps, qq) at q = (r, r_s): E = eps S(r_s) B(r) + qq C / r
 * (hf_mm3_pair.h). f = (eps S B' + qq C', eps S' B), f_00 = eps S B'' + qq C'', f_01 = eps S' B',
 * f_11 = eps S'' B; d/deps: the same without eps and C; d/dR: the same with B's R-derivatives;
 * d/dqq: C, C', C'' in (0, 0). S is taken on r_s even outside (on, off) (the GPU's one path).
 */
static void mm3_pair_switched(const hf_term *t, const double *table, const double *q, hf_cross_value *out)
{
    const double R = slot_value(t, table, 0), eps = slot_value(t, table, 1), qq = slot_value(t, table, 2);
    const double inv_r = 1.0 / q[0], cc = HF_ONE_4PI_EPS0;
    const double coul[3] = {cc * inv_r, -cc * inv_r * inv_r, 2.0 * cc * inv_r * inv_r * inv_r};
    double sw[3], bb[3] = {0.0, 0.0, 0.0}, bR[3] = {0.0, 0.0, 0.0};
    hf_mm3_switch(q[1], sw);
    if (sw[0] != 0.0)
        hf_mm3_buckingham(q[0], R, bb, bR);
    /* per unit of the factor (eps for the energy and f, 1 for d/deps, eps for d/dR with bR) */
    const double *src[2] = {bb, bR};
    for (int k = 0; k < 2; k++) {
        const double *b = src[k];
        const int s = k == 0 ? 1 : 0;
        const double fac = k == 0 ? 1.0 : eps;
        out->de_dp[s] = fac * sw[0] * b[0];
        out->df_dp[s][0] = fac * sw[0] * b[1];
        out->df_dp[s][1] = fac * sw[1] * b[0];
        out->df2_dp[s][0][0] = fac * sw[0] * b[2];
        set_pair(out->df2_dp[s], 0, 1, fac * sw[1] * b[1]);
        out->df2_dp[s][1][1] = fac * sw[2] * b[0];
    }
    out->e = eps * out->de_dp[1] + qq * coul[0];
    out->f[0] = eps * out->df_dp[1][0] + qq * coul[1];
    out->f[1] = eps * out->df_dp[1][1];
    out->f2[0][0] = eps * out->df2_dp[1][0][0] + qq * coul[2];
    set_pair(out->f2, 0, 1, eps * out->df2_dp[1][0][1]);
    out->f2[1][1] = eps * out->df2_dp[1][1][1];
    out->de_dp[2] = coul[0];
    out->df_dp[2][0] = coul[1];
    out->df2_dp[2][0][0] = coul[2];
}

void hf_cross_scalar(const hf_term *term, const double *table, const double *q, hf_cross_value *out)
{
    memset(out, 0, sizeof *out);
    switch (term->kind) {
    case HF_TERM_MM3_STRETCH_BEND: stretch_bend(term, table, q, out); break;
    case HF_TERM_MM3_BEND_BEND: bend_bend(term, table, q, out); break;
    case HF_TERM_MM3_TORSION_STRETCH: torsion_stretch(term, table, q, out); break;
    case HF_TERM_MM3_PAIR_SWITCHED: mm3_pair_switched(term, table, q, out); break;
    default: return;
    }
    for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++) /* a slot that is HF_NO_SLOT has no derivative */
        if (term->slots[s] == HF_NO_SLOT) {
            out->de_dp[s] = 0.0;
            memset(out->df_dp[s], 0, sizeof out->df_dp[s]);
            memset(out->df2_dp[s], 0, sizeof out->df2_dp[s]);
        }
}

int hf_evaluate_cross_term(const hf_term *t, const double *table, const double *pos, int want_hess, hf_cross_eval *ev)
{
    if (!hf_is_cross_kind(t->kind))
        return -1;
    ev->n_entries = hf_term_atom_entries(t->kind);
    ev->n_coords = cross_layouts[t->kind - HF_TERM_MM3_STRETCH_BEND].n_coords;
    for (int c = 0; c < ev->n_coords; c++) {
        double *hess = want_hess ? ev->hess[c] : NULL;
        if (t->kind == HF_TERM_MM3_PAIR_SWITCHED && c == 1) {
            if (switch_coordinate(t, pos, &ev->n[c], ev->entries[c], &ev->q[c], ev->grad[c], hess) != 0)
                return -1;
            continue;
        }
        const int n = hf_cross_coordinate_atoms(t->kind, c, ev->entries[c]);
        const double *x[4] = {NULL, NULL, NULL, NULL};
        for (int a = 0; a < n; a++)
            x[a] = pos + 3 * (ptrdiff_t)t->atoms[ev->entries[c][a]];
        ev->n[c] = n;
        if (hf_coordinate(n, x, &ev->q[c], ev->grad[c], hess) != 0)
            return -1;
    }
    hf_cross_scalar(t, table, ev->q, &ev->v);
    return 0;
}

void hf_cross_gradient_hessian(const hf_cross_eval *ev, double *grad, double *hess)
{
    const int dim = 3 * ev->n_entries;
    if (grad) {
        memset(grad, 0, (size_t)dim * sizeof(double));
        for (int c = 0; c < ev->n_coords; c++)
            for (int a = 0; a < ev->n[c]; a++)
                for (int i = 0; i < 3; i++)
                    grad[3 * ev->entries[c][a] + i] += ev->v.f[c] * ev->grad[c][3 * a + i];
    }
    if (!hess)
        return;
    memset(hess, 0, (size_t)dim * dim * sizeof(double));
    for (int c = 0; c < ev->n_coords; c++) {
        for (int d = 0; d < ev->n_coords; d++) { /* f_cd g_c g_d^T */
            const double fcd = ev->v.f2[c][d];
            if (fcd == 0.0)
                continue;
            for (int a = 0; a < ev->n[c]; a++)
                for (int b = 0; b < ev->n[d]; b++)
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            hess[(3 * ev->entries[c][a] + i) * dim + 3 * ev->entries[d][b] + j] +=
                                fcd * ev->grad[c][3 * a + i] * ev->grad[d][3 * b + j];
        }
        const int nc = 3 * ev->n[c]; /* f_c Hq_c */
        for (int a = 0; a < ev->n[c]; a++)
            for (int b = 0; b < ev->n[c]; b++)
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        hess[(3 * ev->entries[c][a] + i) * dim + 3 * ev->entries[c][b] + j] +=
                            ev->v.f[c] * ev->hess[c][(3 * a + i) * nc + 3 * b + j];
    }
}
