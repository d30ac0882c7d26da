/*
 * The switched MM3* pair (HF_TERM_MM3_PAIR_SWITCHED) inside its switch range in closed form: a
 * function E(r, r_s) of two distances, r = |x_i - x_j| and the switch distance r_s = |y_0 - y_1|,
 * y_k = x_{u_k} + s_k (x_{a_k} - x_{u_k}) (a = i, j; u = the term's entries 2, 3). Every particle p
 * of the term enters both linearly: dr/dx_p = a_p n_r, dr_s/dx_p = b_p n_s with the unit vectors
 * n_r = (x_i - x_j) / r, n_s = (y_0 - y_1) / r_s and the weights a = (1, -1, 0, 0),
 * b = (s_0, -s_1, 1 - s_0, -(1 - s_1)) over (i, j, u_0, u_1), summed where entries name one particle.
 * With f_c, f_cd (hf_cross_scalar) the gradient and the 3x3 Hessian block (p, p') are
 *     grad_p = f_r a_p n_r + f_s b_p n_s,
 *     H_pp' = a_p a_p' K_r + b_p b_p' K_s + a_p b_p' C + b_p a_p' C^T,
 *     K_c = f_cc n_c n_c^T + (f_c / r_c)(I - n_c n_c^T),   C = f_rs n_r n_s^T,
 * (the distance's Hq = (I - n n^T) / r), and dH/dp has the same form with the slot derivatives of
 * f_c, f_cd. So the assembly needs no 12x12 coordinate Hessian and the contraction
 *     tr(G^T dH/dp) = df_rr W^T G W + (df_r / r)(T_r - W^T G W) + df_ss Z^T G Z + (df_s / r_s)(T_s - Z^T G Z)
 *                     + df_rs (W^T G Z + Z^T G W),
 * W_p = a_p n_r, Z_p = b_p n_s, T_r = sum_pp' a_p a_p' tr G_pp', T_s the same with b, only G W and
 * G Z (O(particles^2) 3x3 products).
 */
#include "hf_mm3_pair.h"

#include <math.h>
#include <stddef.h>

int hf_switched_pair_evaluate(const hf_term *t, const double *table, const double *pos, hf_switched_pair *out)
{
    const double s0 = t->r_scale[0], s1 = t->r_scale[1];
    const double wa[4] = {1.0, -1.0, 0.0, 0.0}, wb[4] = {s0, -s1, 1.0 - s0, -(1.0 - s1)};
    double y[2][3], d_r[3], d_s[3];
    for (int k = 0; k < 2; k++) { /* as hf_cross.c's switch points */
        const double *xa = pos + 3 * (ptrdiff_t)t->atoms[k], *xu = pos + 3 * (ptrdiff_t)t->atoms[2 + k];
        for (int c = 0; c < 3; c++)
            y[k][c] = xu[c] + t->r_scale[k] * (xa[c] - xu[c]);
    }
    const double *xi = pos + 3 * (ptrdiff_t)t->atoms[0], *xj = pos + 3 * (ptrdiff_t)t->atoms[1];
    for (int c = 0; c < 3; c++) {
        d_r[c] = xi[c] - xj[c];
        d_s[c] = y[0][c] - y[1][c];
    }
    const double r = sqrt(d_r[0] * d_r[0] + d_r[1] * d_r[1] + d_r[2] * d_r[2]);
    const double rs = sqrt(d_s[0] * d_s[0] + d_s[1] * d_s[1] + d_s[2] * d_s[2]);
    if (!(r > 0.0) || !(rs > 0.0))
        return -1;
    for (int c = 0; c < 3; c++) {
        out->n_r[c] = d_r[c] / r;
        out->n_s[c] = d_s[c] / rs;
    }
    out->q[0] = r;
    out->q[1] = rs;
    out->n = 0;
    for (int e = 0; e < 4; e++) {
        if (wa[e] == 0.0 && wb[e] == 0.0)
            continue;
        int p = 0;
        while (p < out->n && out->particle[p] != t->atoms[e])
            p++;
        if (p == out->n) {
            out->particle[out->n++] = t->atoms[e];
            out->a[p] = out->b[p] = 0.0;
        }
        out->a[p] += wa[e];
        out->b[p] += wb[e];
    }
    hf_cross_scalar(t, table, out->q, &out->v);
    return 0;
}

void hf_switched_pair_gradient(const hf_switched_pair *sp, double grad[][3])
{
    for (int p = 0; p < sp->n; p++)
        for (int c = 0; c < 3; c++)
            grad[p][c] = sp->v.f[0] * sp->a[p] * sp->n_r[c] + sp->v.f[1] * sp->b[p] * sp->n_s[c];
}

void hf_switched_pair_blocks(const hf_switched_pair *sp, double blocks[4][4][9])
{
    const double *nr = sp->n_r, *ns = sp->n_s;
    const double tr = sp->v.f[0] / sp->q[0], ts = sp->v.f[1] / sp->q[1];
    double kr[9], ks[9], c[9]; /* K_r, K_s, C */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            const double id = i == j ? 1.0 : 0.0;
            kr[3 * i + j] = (sp->v.f2[0][0] - tr) * nr[i] * nr[j] + tr * id;
            ks[3 * i + j] = (sp->v.f2[1][1] - ts) * ns[i] * ns[j] + ts * id;
            c[3 * i + j] = sp->v.f2[0][1] * nr[i] * ns[j];
        }
    for (int p = 0; p < sp->n; p++)
        for (int q = p; q < sp->n; q++) {
            const double aa = sp->a[p] * sp->a[q], bb = sp->b[p] * sp->b[q];
            const double ab = sp->a[p] * sp->b[q], ba = sp->b[p] * sp->a[q];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    blocks[p][q][3 * i + j] = aa * kr[3 * i + j] + bb * ks[3 * i + j] + ab * c[3 * i + j] + ba * c[3 * j + i];
        }
}

void hf_switched_pair_adjoint(const hf_switched_pair *sp, const double *block, const ptrdiff_t *lrow, ptrdiff_t dim,
                              double x[5])
{
    double gw[4][3], gz[4][3], t_r = 0.0, t_s = 0.0;
    for (int p = 0; p < sp->n; p++) {
        for (int i = 0; i < 3; i++)
            gw[p][i] = gz[p][i] = 0.0;
        for (int q = 0; q < sp->n; q++) {
            const double *g = block + lrow[p] * dim + lrow[q];
            const double w[3] = {sp->a[q] * sp->n_r[0], sp->a[q] * sp->n_r[1], sp->a[q] * sp->n_r[2]};
            const double z[3] = {sp->b[q] * sp->n_s[0], sp->b[q] * sp->n_s[1], sp->b[q] * sp->n_s[2]};
            for (int i = 0; i < 3; i++) {
                const double *gi = g + i * dim;
                gw[p][i] += gi[0] * w[0] + gi[1] * w[1] + gi[2] * w[2];
                gz[p][i] += gi[0] * z[0] + gi[1] * z[1] + gi[2] * z[2];
            }
            const double trace = g[0] + g[dim + 1] + g[2 * dim + 2];
            t_r += sp->a[p] * sp->a[q] * trace;
            t_s += sp->b[p] * sp->b[q] * trace;
        }
    }
    double wgw = 0.0, zgz = 0.0, cross = 0.0;
    for (int p = 0; p < sp->n; p++)
        for (int i = 0; i < 3; i++) {
            const double w = sp->a[p] * sp->n_r[i], z = sp->b[p] * sp->n_s[i];
            wgw += w * gw[p][i];
            zgz += z * gz[p][i];
            cross += w * gz[p][i] + z * gw[p][i];
        }
    x[0] = wgw;                      /* with df_rr/dp */
    x[1] = (t_r - wgw) / sp->q[0];   /* with df_r/dp */
    x[2] = zgz;                      /* with df_ss/dp */
    x[3] = (t_s - zgz) / sp->q[1];   /* with df_s/dp */
    x[4] = cross;                    /* with df_rs/dp */
}
