#include "hessfit_elements.h"

#include <ctype.h>
#include <stddef.h>

typedef struct {
    int z;
    const char *symbol;
    double monoisotopic; /* most abundant isotope, amu (NIST, AME-based) */
    double average;      /* IUPAC conventional standard atomic weight (2013) */
} hf_element;

/* Ordered by atomic number. */
static const hf_element hf_elements[] = {
    {1, "H", 1.00782503223, 1.008},
    {2, "He", 4.00260325413, 4.002602},
    {3, "Li", 7.0160034366, 6.94},
    {4, "Be", 9.012183065, 9.0121831},
    {5, "B", 11.00930536, 10.81},
    {6, "C", 12.0, 12.011},
    {7, "N", 14.00307400443, 14.007},
    {8, "O", 15.99491461957, 15.999},
    {9, "F", 18.99840316273, 18.998403163},
    {10, "Ne", 19.9924401762, 20.1797},
    {11, "Na", 22.9897692820, 22.98976928},
    {12, "Mg", 23.985041697, 24.305},
    {13, "Al", 26.98153853, 26.9815385},
    {14, "Si", 27.97692653465, 28.085},
    {15, "P", 30.97376199842, 30.973761998},
    {16, "S", 31.9720711744, 32.06},
    {17, "Cl", 34.968852682, 35.45},
    {18, "Ar", 39.9623831237, 39.948},
    {19, "K", 38.9637064864, 39.0983},
    {20, "Ca", 39.962590863, 40.078},
    {21, "Sc", 44.95590828, 44.955908},
    {22, "Ti", 47.94794198, 47.867},
    {23, "V", 50.94395704, 50.9415},
    {24, "Cr", 51.94050623, 51.9961},
    {25, "Mn", 54.93804391, 54.938044},
    {26, "Fe", 55.93493633, 55.845},
    {27, "Co", 58.93319429, 58.933194},
    {28, "Ni", 57.93534241, 58.6934},
    {29, "Cu", 62.92959772, 63.546},
    {30, "Zn", 63.92914201, 65.38},
    {31, "Ga", 68.9255735, 69.723},
    {32, "Ge", 73.921177761, 72.630},
    {33, "As", 74.92159457, 74.921595},
    {34, "Se", 79.9165218, 78.971},
    {35, "Br", 78.9183376, 79.904},
    {36, "Kr", 83.9114977282, 83.798},
    {37, "Rb", 84.9117897379, 85.4678},
    {38, "Sr", 87.9056125, 87.62},
    {39, "Y", 88.9058403, 88.90584},
    {40, "Zr", 89.9046977, 91.224},
    {41, "Nb", 92.906373, 92.90637},
    {42, "Mo", 97.90540482, 95.95},
    {44, "Ru", 101.9043441, 101.07},
    {45, "Rh", 102.905498, 102.90550},
    {46, "Pd", 105.9034804, 106.42},
    {47, "Ag", 106.9050916, 107.8682},
    {48, "Cd", 113.90336509, 112.414},
    {49, "In", 114.903878776, 114.818},
    {50, "Sn", 119.90220163, 118.710},
    {51, "Sb", 120.903812, 121.760},
    {52, "Te", 129.906222748, 127.60},
    {53, "I", 126.9044719, 126.90447},
    {54, "Xe", 131.9041550856, 131.293},
    {55, "Cs", 132.905451961, 132.90545196},
    {56, "Ba", 137.905247, 137.327},
    {72, "Hf", 179.946557, 178.49},
    {73, "Ta", 180.9479958, 180.94788},
    {74, "W", 183.95093092, 183.84},
    {75, "Re", 186.9557501, 186.207},
    {76, "Os", 191.961477, 190.23},
    {77, "Ir", 192.9629216, 192.217},
    {78, "Pt", 194.9647917, 195.084},
    {79, "Au", 196.96656879, 196.966569},
    {80, "Hg", 201.9706434, 200.592},
};

#define HF_NUM_ELEMENTS ((int)(sizeof hf_elements / sizeof hf_elements[0]))

static const hf_element *find_z(int z)
{
    for (int i = 0; i < HF_NUM_ELEMENTS; i++)
        if (hf_elements[i].z == z)
            return &hf_elements[i];
    return NULL;
}

static int symbol_equal(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == '\0' && *b == '\0';
}

int hessfit_element_atomic_number(const char *symbol)
{
    if (symbol == NULL)
        return 0;
    for (int i = 0; i < HF_NUM_ELEMENTS; i++)
        if (symbol_equal(symbol, hf_elements[i].symbol))
            return hf_elements[i].z;
    return 0;
}

hessfit_status hessfit_element_lookup(const char *symbol, int *atomic_number)
{
    int z;
    if (symbol == NULL || atomic_number == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_element_lookup: %s is NULL",
                        symbol == NULL ? "symbol" : "atomic_number");
    z = hessfit_element_atomic_number(symbol);
    if (z == 0)
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "unknown element symbol '%.16s'", symbol);
    *atomic_number = z;
    return HESSFIT_SUCCESS;
}

const char *hessfit_element_symbol(int atomic_number)
{
    const hf_element *e = find_z(atomic_number);
    return e != NULL ? e->symbol : NULL;
}

double hessfit_element_monoisotopic_mass(int atomic_number)
{
    const hf_element *e = find_z(atomic_number);
    return e != NULL ? e->monoisotopic : 0.0;
}

double hessfit_element_average_mass(int atomic_number)
{
    const hf_element *e = find_z(atomic_number);
    return e != NULL ? e->average : 0.0;
}

double hessfit_element_mass(int atomic_number, hessfit_mass_kind kind)
{
    return kind == HESSFIT_MASS_AVERAGE ? hessfit_element_average_mass(atomic_number)
                                   : hessfit_element_monoisotopic_mass(atomic_number);
}

hessfit_status hessfit_element_masses(const int *atomic_numbers, int n, hessfit_mass_kind kind, double *masses)
{
    if ((atomic_numbers == NULL || masses == NULL) && n > 0)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_element_masses: %s is NULL",
                        atomic_numbers == NULL ? "atomic_numbers" : "masses");
    if (n < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_element_masses: negative count %d", n);
    if (kind != HESSFIT_MASS_MONOISOTOPIC && kind != HESSFIT_MASS_AVERAGE)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_element_masses: unknown mass kind %d", (int)kind);
    for (int i = 0; i < n; i++) {
        double m = hessfit_element_mass(atomic_numbers[i], kind);
        if (m <= 0.0)
            return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "atom %d: no mass data for atomic number %d",
                            i, atomic_numbers[i]);
        masses[i] = m;
    }
    return HESSFIT_SUCCESS;
}
