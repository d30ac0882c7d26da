// HessianForce's reduced particles (MacroModel's reduced hydrogens): storage and the checks that
// need no molecule layout. HessianForceImpl::validate checks the rest when a Context is created;
// core/src/hf_reduction.c does the math.
#include "HessianForce.h"
#include "HessianForceException.h"
#include <cmath>
#include <sstream>

using namespace HessFit;

/** Throws unless particle and partner are >= 0 and distinct and factor is finite and > 0. */
static void checkReducedParticle(int index, int particle, int partner, double factor) {
    std::ostringstream m;
    m << "HessianForce: reduced particle " << index;
    if (particle < 0 || partner < 0) {
        m << " has particle " << particle << " and partner " << partner << " (indices must be >= 0)";
        throw HessianForceException(HessianForceException::Index, m.str());
    }
    if (particle == partner) {
        m << " reduces particle " << particle << " towards itself";
        throw HessianForceException(HessianForceException::Index, m.str());
    }
    if (!std::isfinite(factor) || !(factor > 0.0)) {
        m << " (particle " << particle << ") has factor " << factor << " (must be finite and > 0)";
        throw HessianForceException(HessianForceException::Value, m.str());
    }
}

int HessianForce::addReducedParticle(int particle, int partner, double factor) {
    const int index = getNumReducedParticles();
    checkReducedParticle(index, particle, partner, factor);
    reducedParticles.push_back({particle, partner, factor});
    return index;
}

static void checkReducedIndex(int index, int size) {
    if (index < 0 || index >= size) {
        std::ostringstream m;
        m << "HessianForce: reduced particle " << index << " is out of range (the force has " << size << ")";
        throw HessianForceException(HessianForceException::Index, m.str());
    }
}

void HessianForce::getReducedParticleParameters(int index, int& particle, int& partner, double& factor) const {
    checkReducedIndex(index, getNumReducedParticles());
    particle = reducedParticles[index].particle;
    partner = reducedParticles[index].partner;
    factor = reducedParticles[index].factor;
}

void HessianForce::setReducedParticleParameters(int index, int particle, int partner, double factor) {
    checkReducedIndex(index, getNumReducedParticles());
    checkReducedParticle(index, particle, partner, factor);
    reducedParticles[index] = {particle, partner, factor};
}

int HessianForce::getNumReducedParticles() const {
    return (int) reducedParticles.size();
}
