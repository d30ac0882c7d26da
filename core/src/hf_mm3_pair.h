#ifndef HESSFIT_HF_MM3_PAIR_H_
#define HESSFIT_HF_MM3_PAIR_H_
/*
 * The pieces of MacroModel's MM3* pair (hf_core.h, HF_TERM_MM3_PAIR and HF_TERM_MM3_PAIR_SWITCHED)
 * shared by the one-coordinate term path (hf_terms.c) and the switched pair's two-coordinate path
 * (hf_cross.c): the 6-8 Angstrom switch S and the Buckingham B with their derivatives.
 */
#include "hf_core.h"

#include <math.h>
#include <stddef.h>

/* sw = (S, S', S'') at distance r: 1, 0, 0 (r <= on); (off^2 - r^2) / w, -2 r / w, -2 / w with
 * w = off^2 - on^2 (on < r < off); 0, 0, 0 (r >= off). */
static inline void hf_mm3_switch(double r, double sw[3])
{
    sw[0] = 1.0;
    sw[1] = sw[2] = 0.0;
    if (r >= HF_MM3_SWITCH_OFF) {
        sw[0] = 0.0;
    } else if (r > HF_MM3_SWITCH_ON) {
        const double inv_w = 1.0 / (HF_MM3_SWITCH_OFF * HF_MM3_SWITCH_OFF - HF_MM3_SWITCH_ON * HF_MM3_SWITCH_ON);
        sw[0] = (HF_MM3_SWITCH_OFF * HF_MM3_SWITCH_OFF - r * r) * inv_w;
        sw[1] = -2.0 * r * inv_w;
        sw[2] = -2.0 * inv_w;
    }
}

/*
 * B = A u - c R^6 / r^6, u = exp(-b r / R) (A, b, c = HF_MM3_BUCKINGHAM_A/B/C): bb = (B, B', B'')
 * in r and bR = (dB/dR, dB'/dR, dB''/dR):
 *     B' = -(A b / R) u + 6 c R^6 / r^7,     B'' = (A b^2 / R^2) u - 42 c R^6 / r^8,
 *     dB/dR = A b r u / R^2 - 6 c R^5 / r^6,  dB'/dR = A b u (R - b r) / R^3 + 36 c R^5 / r^7,
 *     dB''/dR = A b^2 u (b r - 2 R) / R^4 - 252 c R^5 / r^8;
 * below r = R / HF_MM3_BUCKINGHAM_WALL the wall B = M (R / r)^12 (hf_core.h).
 */
static inline void hf_mm3_buckingham(double r, double R, double bb[3], double bR[3])
{
    const double A = HF_MM3_BUCKINGHAM_A, b = HF_MM3_BUCKINGHAM_B, c = HF_MM3_BUCKINGHAM_C;
    const double inv_r = 1.0 / r, inv_R = 1.0 / R;
    const double x = R * inv_r, x2 = x * x, x6 = x2 * x2 * x2; /* (R / r)^6 */
    if (x > HF_MM3_BUCKINGHAM_WALL) { /* the r^-12 wall: B = M x^12, B' = -12 B / r, B'' = 156 B / r^2 */
        const double w = HF_MM3_BUCKINGHAM_WALL_M * x6 * x6;
        bb[0] = w;
        bb[1] = -12.0 * w * inv_r;
        bb[2] = 156.0 * w * inv_r * inv_r;
        bR[0] = 12.0 * w * inv_R;
        bR[1] = -144.0 * w * inv_R * inv_r;
        bR[2] = 1872.0 * w * inv_R * inv_r * inv_r;
        return;
    }
    const double u = exp(-b * r * inv_R);
    bb[0] = A * u - c * x6;
    bb[1] = -A * b * inv_R * u + 6.0 * c * x6 * inv_r;
    bb[2] = A * b * b * inv_R * inv_R * u - 42.0 * c * x6 * inv_r * inv_r;
    bR[0] = A * b * r * inv_R * inv_R * u - 6.0 * c * x6 * inv_R;
    bR[1] = A * b * u * (R - b * r) * inv_R * inv_R * inv_R + 36.0 * c * x6 * inv_R * inv_r;
    bR[2] = A * b * b * u * (b * r - 2.0 * R) * inv_R * inv_R * inv_R * inv_R - 252.0 * c * x6 * inv_R * inv_r * inv_r;
}

/* The MM3* pair's f, f', f'' in r and their slot derivatives (slots R, eps, qq of t), given the
 * switch sw = (S, dS/dr, d2S/dr2): hf_mm3_switch(r) for HF_TERM_MM3_PAIR; for an
 * HF_TERM_MM3_PAIR_SWITCHED outside its switch range, S of its switch distance with dS/dr = d2S/dr2
 * = 0 (hf_terms.c). With S = 0 the van der Waals part is exactly 0 (B is not evaluated). */
void hf_mm3_pair_scalar(const hf_term *t, const double *table, double r, const double sw[3], hf_term_value *out);

/* The switch distance of an HF_TERM_MM3_PAIR_SWITCHED term, |y_0 - y_1| with
 * y_k = x_{atoms[2+k]} + r_scale[k] (x_{atoms[k]} - x_{atoms[2+k]}) (hf_cross.c). */
double hf_mm3_switch_distance(const hf_term *t, const double *pos);

/* A switched MM3* pair inside its switch range, in closed form (hf_switched_pair.c): its distinct
 * particles with the weights of r and r_s on them (dr/dx_p = a[p] n_r, dr_s/dx_p = b[p] n_s), the
 * two unit vectors, q = (r, r_s) and the scalar part at q (hf_cross_scalar). */
typedef struct {
    int n, particle[4];
    double a[4], b[4], n_r[3], n_s[3], q[2];
    hf_cross_value v;
} hf_switched_pair;

/* Returns 0, or -1 when a distance is 0 (undefined). */
int hf_switched_pair_evaluate(const hf_term *t, const double *table, const double *pos, hf_switched_pair *out);

/* grad[p] = dE/dx of particle p (p < sp->n). */
void hf_switched_pair_gradient(const hf_switched_pair *sp, double grad[][3]);

/* blocks[p][q] = the 3x3 Hessian block (p, q), row-major, for p <= q < sp->n. */
void hf_switched_pair_blocks(const hf_switched_pair *sp, double blocks[4][4][9]);

/* The five sums tr(G^T dH/dslot) is made of, given the adjoint block (leading dimension dim) and the
 * particles' local rows lrow[p]: tr(G^T dH/ds) = df2_dp[s][0][0] x[0] + df_dp[s][0] x[1] +
 * df2_dp[s][1][1] x[2] + df_dp[s][1] x[3] + df2_dp[s][0][1] x[4]. */
void hf_switched_pair_adjoint(const hf_switched_pair *sp, const double *block, const ptrdiff_t *lrow, ptrdiff_t dim,
                              double x[5]);

#endif
