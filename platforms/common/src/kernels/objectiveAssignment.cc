/*
 * An optimal assignment of rows (rows <= cols) to distinct columns maximising the summed score,
 * run by ONE work-item (the Reference's hf_assignment.c, the same algorithm and tie rule, so both
 * platforms pair alike): the Hungarian method with shortest augmenting paths and dual potentials
 * (Jonker-Volgenant form), cost = -score, rows added one at a time, each growing a tree of tight
 * columns until a free column is reached. Ties go to the lowest column. 1-based inside: index 0 is
 * the virtual start column. Work arrays: u (rows + 1), v, minv (cols + 1) reals; rowOf, way, used
 * (cols + 1) ints. Returns 0 when no column is reachable (only with non-finite scores).
 */
DEVICE int assignMaxScore(int rows, int cols, GLOBAL const hsreal* RESTRICT score, GLOBAL int* RESTRICT colOfRow,
                          GLOBAL hsreal* RESTRICT u, GLOBAL hsreal* RESTRICT v, GLOBAL hsreal* RESTRICT minv,
                          GLOBAL int* RESTRICT rowOf, GLOBAL int* RESTRICT way, GLOBAL int* RESTRICT used) {
    for (int i = 0; i <= rows; i++)
        u[i] = 0;
    for (int j = 0; j <= cols; j++) {
        v[j] = 0;
        rowOf[j] = 0;
        way[j] = 0;
    }
    for (int i = 1; i <= rows; i++) {
        rowOf[0] = i;
        int j0 = 0;
        for (int j = 0; j <= cols; j++) {
            minv[j] = HS_HUGE;
            used[j] = 0;
        }
        do {
            used[j0] = 1;
            const int i0 = rowOf[j0];
            GLOBAL const hsreal* costRow = score + (i0 - 1) * cols;
            hsreal delta = HS_HUGE;
            int j1 = 0;
            for (int j = 1; j <= cols; j++)
                if (!used[j]) {
                    const hsreal reduced = -costRow[j - 1] - u[i0] - v[j];
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
                    u[rowOf[j]] += delta;
                    v[j] -= delta;
                }
                else
                    minv[j] -= delta;
            }
            if (j1 == 0)
                return 0;
            j0 = j1;
        } while (rowOf[j0] != 0);
        do { /* flip the augmenting path */
            const int j1 = way[j0];
            rowOf[j0] = rowOf[j1];
            j0 = j1;
        } while (j0 != 0);
    }
    for (int j = 1; j <= cols; j++)
        if (rowOf[j] != 0)
            colOfRow[rowOf[j] - 1] = j - 1;
    return 1;
}
