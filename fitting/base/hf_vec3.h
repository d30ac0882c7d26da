#ifndef HESSFIT_HF_VEC3_H_
#define HESSFIT_HF_VEC3_H_
/* Small 3-vector helpers shared by the fitting layer's geometry code (Seminario, geometry targets,
 * the MM3* evaluator, the fit report). Coordinates x: 3 per atom. */
#include <math.h>

static inline double hf_dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void hf_cross3(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double hf_norm3(const double *a)
{
    return sqrt(hf_dot3(a, a));
}

/* |x_a - x_b| */
static inline double hf_atom_distance(const double *x, int a, int b)
{
    const double d[3] = {x[3 * a] - x[3 * b], x[3 * a + 1] - x[3 * b + 1], x[3 * a + 2] - x[3 * b + 2]};
    return hf_norm3(d);
}

/* The angle a-b-c (vertex b) in radians: atan2(|u x v|, u . v), u = x_a - x_b, v = x_c - x_b. */
static inline double hf_atom_angle(const double *x, int a, int b, int c)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) {
        u[k] = x[3 * a + k] - x[3 * b + k];
        v[k] = x[3 * c + k] - x[3 * b + k];
    }
    hf_cross3(u, v, w);
    return atan2(hf_norm3(w), hf_dot3(u, v));
}

#endif
