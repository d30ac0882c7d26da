#ifndef HESSFIT_HF_VEC3_H_
#define HESSFIT_HF_VEC3_H_
/* Small 3-vector helpers shared by the fitting layer's geometry code (Seminario, geometry targets). */
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

#endif
