/*
 * Bond lengths, angles and IUPAC dihedrals with their Cartesian gradients, for the geometry part
 * of the objective (hf_objective_internal.h). Angstrom and degrees.
 *
 *   distance  r = |b - a|,  dr/da = -(b - a)/r
 *   angle     u = a - b, v = c - b, theta = atan2(|u x v|, u.v),
 *             dtheta/du = (cos(theta) u/|u|^2 - v/(|u||v|)) / sin(theta) (and u <-> v), b: minus both
 *   dihedral  phi = atan2(|b2| b1.(b2 x b3), (b1 x b2).(b2 x b3)), b1 = x1 - x0, b2 = x2 - x1,
 *             b3 = x3 - x2 (OpenMM's and hessfit's sign); with F = x0 - x1, G = x1 - x2, H = x3 - x2,
 *             A = F x G, B = H x G (Blondel and Karplus, J. Comput. Chem. 17, 1132 (1996)):
 *             dphi/dx0 = -|G|/|A|^2 A,  dphi/dx3 = |G|/|B|^2 B,
 *             dphi/dx1 = |G|/|A|^2 A + (F.G)/(|A|^2|G|) A - (H.G)/(|B|^2|G|) B,
 *             dphi/dx2 = -|G|/|B|^2 B - (F.G)/(|A|^2|G|) A + (H.G)/(|B|^2|G|) B.
 */
#include "hf_vec3.h"
#include "hf_objective_internal.h"

#include <math.h>
#include <stddef.h>

/* Below this sine an angle (or a dihedral's bond angle) counts as linear: its gradient is undefined. */
#define HF_GEOMETRY_MIN_SINE 1e-8

int hf_geometry_kind_atoms(hessfit_geometry_kind kind)
{
    switch (kind) {
    case HESSFIT_GEOMETRY_BOND: return 2;
    case HESSFIT_GEOMETRY_ANGLE: return 3;
    case HESSFIT_GEOMETRY_TORSION: return 4;
    default: return 0;
    }
}

static int distance(const double *const x[4], double *value, double *grad)
{
    double d[3];
    for (int c = 0; c < 3; c++)
        d[c] = x[1][c] - x[0][c];
    const double r = sqrt(hf_dot3(d, d));
    if (!(r > 0.0))
        return -1;
    *value = r;
    if (grad != NULL)
        for (int c = 0; c < 3; c++) {
            grad[c] = -d[c] / r;
            grad[3 + c] = d[c] / r;
        }
    return 0;
}

static int angle(const double *const x[4], double *value, double *grad)
{
    double u[3], v[3], w[3];
    for (int c = 0; c < 3; c++) {
        u[c] = x[0][c] - x[1][c];
        v[c] = x[2][c] - x[1][c];
    }
    hf_cross3(u, v, w);
    const double nu = sqrt(hf_dot3(u, u)), nv = sqrt(hf_dot3(v, v)), s = sqrt(hf_dot3(w, w)), c = hf_dot3(u, v);
    if (!(nu > 0.0 && nv > 0.0))
        return -1;
    const double theta = atan2(s, c), sine = s / (nu * nv), cosine = c / (nu * nv);
    *value = theta * HESSFIT_RAD_TO_DEG;
    if (grad == NULL)
        return 0;
    if (!(sine > HF_GEOMETRY_MIN_SINE))
        return -1;
    for (int k = 0; k < 3; k++) {
        const double du = (cosine * u[k] / (nu * nu) - v[k] / (nu * nv)) / sine;
        const double dv = (cosine * v[k] / (nv * nv) - u[k] / (nu * nv)) / sine;
        grad[k] = du * HESSFIT_RAD_TO_DEG;
        grad[6 + k] = dv * HESSFIT_RAD_TO_DEG;
        grad[3 + k] = -(du + dv) * HESSFIT_RAD_TO_DEG;
    }
    return 0;
}

static int dihedral(const double *const x[4], double *value, double *grad)
{
    double f[3], g[3], h[3], a[3], b[3], b1[3], b2[3], b3[3], n1[3], n2[3];
    for (int c = 0; c < 3; c++) {
        f[c] = x[0][c] - x[1][c];
        g[c] = x[1][c] - x[2][c];
        h[c] = x[3][c] - x[2][c];
        b1[c] = -f[c];
        b2[c] = -g[c];
        b3[c] = h[c];
    }
    hf_cross3(f, g, a);
    hf_cross3(h, g, b);
    hf_cross3(b1, b2, n1);
    hf_cross3(b2, b3, n2);
    const double ng = sqrt(hf_dot3(g, g)), a2 = hf_dot3(a, a), b2n = hf_dot3(b, b);
    /* collinear atoms: |A| = |F||G| sin(angle 0-1-2) vanishes (likewise |B|) */
    if (!(ng > 0.0) || !(a2 > HF_GEOMETRY_MIN_SINE * HF_GEOMETRY_MIN_SINE * hf_dot3(f, f) * ng * ng) ||
        !(b2n > HF_GEOMETRY_MIN_SINE * HF_GEOMETRY_MIN_SINE * hf_dot3(h, h) * ng * ng))
        return -1;
    *value = atan2(ng * hf_dot3(b1, n2), hf_dot3(n1, n2)) * HESSFIT_RAD_TO_DEG;
    if (grad == NULL)
        return 0;
    const double fg = hf_dot3(f, g), hg = hf_dot3(h, g);
    for (int c = 0; c < 3; c++) {
        grad[c] = -ng / a2 * a[c];
        grad[9 + c] = ng / b2n * b[c];
        grad[3 + c] = ng / a2 * a[c] + fg / (a2 * ng) * a[c] - hg / (b2n * ng) * b[c];
        grad[6 + c] = -ng / b2n * b[c] - fg / (a2 * ng) * a[c] + hg / (b2n * ng) * b[c];
    }
    for (int i = 0; i < 12; i++)
        grad[i] *= HESSFIT_RAD_TO_DEG;
    return 0;
}

int hf_geometry_value(hessfit_geometry_kind kind, const double *const x[4], double *value, double *grad)
{
    switch (kind) {
    case HESSFIT_GEOMETRY_BOND: return distance(x, value, grad);
    case HESSFIT_GEOMETRY_ANGLE: return angle(x, value, grad);
    case HESSFIT_GEOMETRY_TORSION: return dihedral(x, value, grad);
    default: return -1;
    }
}

double hf_geometry_difference(hessfit_geometry_kind kind, double a, double b)
{
    double d = a - b;
    if (kind != HESSFIT_GEOMETRY_TORSION)
        return d;
    d = fmod(d, 360.0); /* (-360, 360) */
    if (d > 180.0)
        d -= 360.0;
    else if (d <= -180.0)
        d += 360.0;
    return d;
}
