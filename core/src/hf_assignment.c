/*
 * An optimal assignment of rows (targets) to distinct columns (modes) maximising the summed score,
 * by the Hungarian method with shortest augmenting paths and dual potentials (Kuhn-Munkres in the
 * form of Jonker and Volgenant): rows are added one at a time; each addition grows a tree of tight
 * columns from the new row until it reaches a free column, updating the potentials u (rows) and v
 * (columns) so that cost - u - v stays >= 0 and is 0 on the assignment. Cost = -score. Worst case
 * O(rows^2 cols); when each new row's cheapest column is free it costs one O(cols) scan.
 * Ties go to the lowest column index, so the result is deterministic.
 */
#include "hf_core.h"

#include <float.h>

int hf_assign_max_score(int rows, int cols, const double *score, int *col_of_row, double *work, int *iwork)
{
    /* 1-based as in the textbook form; index 0 is the virtual start column */
    double *u = work, *v = work + (rows + 1), *minv = v + (cols + 1);
    int *row_of = iwork, *way = iwork + (cols + 1), *used = way + (cols + 1);
    for (int i = 0; i <= rows; i++)
        u[i] = 0.0;
    for (int j = 0; j <= cols; j++) {
        v[j] = 0.0;
        row_of[j] = 0;
        way[j] = 0;
    }
    for (int i = 1; i <= rows; i++) {
        row_of[0] = i;
        int j0 = 0;
        for (int j = 0; j <= cols; j++) {
            minv[j] = DBL_MAX;
            used[j] = 0;
        }
        do {
            used[j0] = 1;
            const int i0 = row_of[j0];
            const double *cost_row = score + (size_t)(i0 - 1) * (size_t)cols;
            double delta = DBL_MAX;
            int j1 = 0;
            for (int j = 1; j <= cols; j++)
                if (!used[j]) {
                    const double reduced = -cost_row[j - 1] - u[i0] - v[j];
                    if (reduced < minv[j]) {
                        minv[j] = reduced;
                        way[j] = j0;
                    }
                    if (minv[j] < delta) {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            for (int j = 0; j <= cols; j++) {
                if (used[j]) {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            if (j1 == 0)
                return -1; /* no column reachable: only with non-finite scores */
            j0 = j1;
        } while (row_of[j0] != 0);
        do { /* flip the augmenting path */
            const int j1 = way[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
        } while (j0 != 0);
    }
    for (int j = 1; j <= cols; j++)
        if (row_of[j] != 0)
            col_of_row[row_of[j] - 1] = j - 1;
    return 0;
}
