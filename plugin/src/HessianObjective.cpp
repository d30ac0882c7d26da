/*
 * HessianObjectiveSpec: residual counts, and the checks every platform relies on
 * (HessianForceImpl::validateObjective): one Molecule per molecule of the force, every array of
 * the size its molecule needs, finite targets, finite weights >= 0, finite masses > 0, and
 * orthonormal reference vectors. Messages name the molecule, the field and the entry.
 */
#include "HessianObjective.h"
#include "HessianForceException.h"
#include "internal/HessianForceImpl.h"
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

using namespace HessFit;
using std::vector;

namespace {

/** n with n * n == size, or -1. */
long long exactSquareRoot(size_t size) {
    long long n = (long long) std::llround(std::sqrt((double) size));
    return n * n == (long long) size ? n : -1;
}

long long lowerTriangle(long long n) {
    return n * (n + 1) / 2;
}

/** Collects "Hessian objective, molecule m: ..." messages. */
struct Checker {
    int molecule;

    [[noreturn]] void fail(HessianForceException::Code code, const std::string& message) const {
        std::ostringstream m;
        m << "HessianForce: Hessian objective, molecule " << molecule << ": " << message;
        throw HessianForceException(code, m.str());
    }

    void size(const char* field, size_t given, size_t expected, const char* why) const {
        if (given != expected) {
            std::ostringstream m;
            m << field << " has " << given << " entries but needs " << expected << " (" << why << ")";
            fail(HessianForceException::Size, m.str());
        }
    }

    /** Every entry finite; with nonNegative, also >= 0; with positive, > 0. */
    void values(const char* field, const vector<double>& v, bool nonNegative, bool positive) const {
        for (size_t i = 0; i < v.size(); i++) {
            const double x = v[i];
            const bool bad = !std::isfinite(x) || (nonNegative && x < 0.0) || (positive && !(x > 0.0));
            if (bad) {
                std::ostringstream m;
                m << field << "[" << i << "] is " << x << " (must be "
                  << (positive ? "finite and > 0" : nonNegative ? "finite and >= 0" : "finite") << ")";
                fail(HessianForceException::Value, m.str());
            }
        }
    }

    /** The rows of v (rows x dim) must be orthonormal: |v_a . v_b - delta_ab| <= 1e-6. */
    void orthonormal(const char* field, const vector<double>& v, int rows, int dim) const {
        const double tolerance = 1e-6;
        for (int a = 0; a < rows; a++) {
            const double* va = &v[(size_t) a * dim];
            for (int b = 0; b <= a; b++) {
                const double* vb = &v[(size_t) b * dim];
                double dot = 0.0;
                for (int i = 0; i < dim; i++)
                    dot += va[i] * vb[i];
                const double deviation = std::fabs(dot - (a == b ? 1.0 : 0.0));
                if (!(deviation <= tolerance)) {
                    std::ostringstream m;
                    if (a == b)
                        m << field << ": row " << a << " has squared norm " << dot;
                    else
                        m << field << ": rows " << b << " and " << a << " have dot product " << dot;
                    m << " (the rows must be orthonormal to " << tolerance << ")";
                    fail(HessianForceException::Value, m.str());
                }
            }
        }
    }
};

} // namespace

long long HessianObjectiveSpec::Molecule::numResiduals() const {
    long long n = (long long) frequencyTargets.size();
    const long long k = exactSquareRoot(eigenTargets.size()), d = exactSquareRoot(hessianTargets.size());
    if (k > 0)
        n += lowerTriangle(k);
    if (d > 0)
        n += lowerTriangle(d);
    return n;
}

long long HessianObjectiveSpec::numResiduals() const {
    long long n = 0;
    for (const Molecule& m : molecules)
        n += m.numResiduals();
    return n;
}

int HessianObjectiveSpec::numFrequencyTargets() const {
    size_t n = 0;
    for (const Molecule& m : molecules)
        n += m.frequencyTargets.size();
    return (int) n;
}

void HessianForceImpl::validateObjective(const HessianObjectiveSpec& spec, const vector<vector<int> >& molecules) {
    if (spec.molecules.size() != molecules.size()) {
        std::ostringstream m;
        m << "HessianForce: the Hessian objective has " << spec.molecules.size() << " molecules but the force has "
          << molecules.size() << " (one HessianObjectiveSpec::Molecule per molecule, possibly empty)";
        throw HessianForceException(HessianForceException::Size, m.str());
    }
    bool anyFrequencies = false;
    for (size_t mi = 0; mi < molecules.size(); mi++) {
        const HessianObjectiveSpec::Molecule& mol = spec.molecules[mi];
        const Checker check{(int) mi};
        const int n = (int) molecules[mi].size(), dim = 3 * n;
        const size_t nt = mol.frequencyTargets.size();

        // frequencies
        if (mol.frequencyPairing != HessianObjectiveSpec::NoFrequencies &&
            mol.frequencyPairing != HessianObjectiveSpec::PairByPosition &&
            mol.frequencyPairing != HessianObjectiveSpec::PairByOverlap)
            check.fail(HessianForceException::Value,
                       "frequencyPairing is " + std::to_string((int) mol.frequencyPairing) +
                           " (NoFrequencies = 0, PairByPosition = 1, PairByOverlap = 2)");
        const bool frequencies = mol.frequencyPairing != HessianObjectiveSpec::NoFrequencies;
        if (!frequencies && (nt > 0 || !mol.frequencyWeights.empty() || !mol.frequencyVectors.empty()))
            check.fail(HessianForceException::Value, "frequency targets, weights or vectors are given but "
                                                     "frequencyPairing is NoFrequencies");
        if (frequencies) {
            anyFrequencies = true;
            if (nt == 0)
                check.fail(HessianForceException::Size, "frequencyPairing is set but frequencyTargets is empty");
            if (nt > (size_t) dim)
                check.size("frequencyTargets", nt, (size_t) dim, "at most 3 per particle");
            check.size("frequencyWeights", mol.frequencyWeights.size(), nt, "one per frequency target");
            check.values("frequencyTargets", mol.frequencyTargets, false, false);
            check.values("frequencyWeights", mol.frequencyWeights, true, false);
            if (mol.frequencyPairing == HessianObjectiveSpec::PairByPosition) {
                if (!std::isfinite(mol.frequencyThreshold))
                    check.fail(HessianForceException::Value, "frequencyThreshold is not finite");
                if (!mol.frequencyVectors.empty())
                    check.fail(HessianForceException::Value, "frequencyVectors are given but frequencyPairing is "
                                                             "PairByPosition (vectors are for PairByOverlap)");
            } else {
                check.size("frequencyVectors", mol.frequencyVectors.size(), nt * (size_t) dim,
                           "one mass-weighted vector of 3 entries per particle for each frequency target");
                check.values("frequencyVectors", mol.frequencyVectors, false, false);
                check.orthonormal("frequencyVectors", mol.frequencyVectors, (int) nt, dim);
            }
        }

        // eigenmatrix
        const bool eigen = !mol.eigenVectors.empty() || !mol.eigenTargets.empty() || !mol.eigenWeights.empty();
        int k = 0;
        if (eigen) {
            if (mol.eigenVectors.size() % (size_t) dim != 0 || mol.eigenVectors.empty())
                check.fail(HessianForceException::Size,
                           "eigenVectors has " + std::to_string(mol.eigenVectors.size()) +
                               " entries, not a positive multiple of " + std::to_string(dim) +
                               " (rows of 3 entries per particle)");
            k = (int) (mol.eigenVectors.size() / (size_t) dim);
            if (k > dim)
                check.size("eigenVectors", mol.eigenVectors.size(), (size_t) dim * (size_t) dim,
                           "at most 3n orthonormal rows of 3n");
            check.size("eigenTargets", mol.eigenTargets.size(), (size_t) k * (size_t) k, "k x k for k eigenvectors");
            check.size("eigenWeights", mol.eigenWeights.size(), (size_t) k * (size_t) k, "k x k for k eigenvectors");
            check.values("eigenVectors", mol.eigenVectors, false, false);
            check.values("eigenTargets", mol.eigenTargets, false, false);
            check.values("eigenWeights", mol.eigenWeights, true, false);
            check.orthonormal("eigenVectors", mol.eigenVectors, k, dim);
        }

        // masses
        if (frequencies || eigen) {
            check.size("masses", mol.masses.size(), (size_t) n, "one per particle of the molecule");
            check.values("masses", mol.masses, false, true);
        } else if (!mol.masses.empty()) {
            check.size("masses", mol.masses.size(), (size_t) n, "one per particle of the molecule, or none");
            check.values("masses", mol.masses, false, true);
        }

        // Hessian elements
        if (!mol.hessianTargets.empty() || !mol.hessianWeights.empty()) {
            check.size("hessianTargets", mol.hessianTargets.size(), (size_t) dim * (size_t) dim, "the (3n)^2 block");
            check.size("hessianWeights", mol.hessianWeights.size(), (size_t) dim * (size_t) dim, "the (3n)^2 block");
            check.values("hessianTargets", mol.hessianTargets, false, false);
            check.values("hessianWeights", mol.hessianWeights, true, false);
        }
    }
    if (anyFrequencies && !(std::isfinite(spec.frequencyFactor) && spec.frequencyFactor > 0.0)) {
        std::ostringstream m;
        m << "HessianForce: the Hessian objective's frequencyFactor is " << spec.frequencyFactor
          << " (must be finite and > 0 when any molecule has frequency targets)";
        throw HessianForceException(HessianForceException::Value, m.str());
    }
}
