/*
 * The MM3* model as stock OpenMM files (hessfit_mm3_ffxml.h): a ForceField XML with one residue
 * template per distinct molecule, virtual sites for the reduced hydrogens, Custom forces and a
 * <Script> for the terms ForceField has no generator for; and a PDB per structure.
 *
 * Units, as hf_model_mm3.c puts them into HessianForce's slots (F the .fld header factors):
 *   stretch          k = 1/2 F_STR k 100 (kJ/mol/nm^2), r0 nm, s = 1/f
 *   bend             k = 1/2 F_BND k (kJ/mol/rad^2), theta0 rad
 *   stretch-bend     k = 10 F_SB k_sb (kJ/mol/nm/rad)
 *   bend-bend        k = -0.02191418 F_BB k_bb1 k_bb2 (180/pi)^2 (kJ/mol/rad^2)
 *   torsion          k = F_TOR V_n (kJ/mol)
 *   torsion-stretch  k = 10 F_TS (-5.9975) K_ts (kJ/mol/nm)
 *   out-of-plane     k = F_IMP k, n = 2, phase pi: k (1 - cos 2 phi)
 *   pairs            R = R* / 10 (nm; R = R_i + R_j), eps = F_VDW eps (kJ/mol; sqrt(eps_i eps_j)),
 *                    F_ELE / 10 q_i q_j / r (kJ/mol nm / e^2)
 *   hydrogen bond    C / r^12 - D / r^10, C = F_HBD C' 1e-12 (kJ/mol nm^12), D = F_HBD D' 1e-10 (kJ/mol nm^10),
 *                    a CustomCompoundBondForce of the Script on the site (a reduced hydrogen) and the acceptor,
 *                    for every 1-5-or-farther candidate pair, cut off (hard, as MacroModel) at 4 A true distance:
 *                    conformers share one template, and in MD a pair enters and leaves the list as it moves
 */
#include "hessfit_mm3_ffxml.h"
#include "hessfit_atomic_file.h"
#include "hessfit_elements.h"
#include "hessfit_mm3.h"
#include "hessfit_units.h"
#include "hf_buf.h"
#include "hf_mm3_internal.h"
#include "hf_pdb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HessianForce's expressions (docs/design.md, "Energy conventions"), nm and rad. */
#define STRETCH_ENERGY "k*d^2*(1 - 25.5*d + 379.3125*d^2); d = s*r - r0"
#define BEND_ENERGY                                                                                                    \
    "k*d^2*(1 - 0.014*D + 5.6e-5*D^2 - 7.0e-7*D^3 + 2.2e-8*D^4); D = d*57.295779513082320876; d = theta - theta0"
/* B: the Buckingham form with its r^-12 wall below R/2 (hf_core.h, HF_MM3_BUCKINGHAM_WALL; the wall's
 * coefficient M = (184000 exp(-6) - 2.25 2^6) / 2^12 = 0.0761939454361840698); the switch S(r) = 1,
 * (0.8^2 - r^2) / (0.8^2 - 0.6^2), 0 on the particles' (reduced) distance (the
 * Script's "pair-switch" terms move it to the true distance within a molecule); the special pairs
 * (.fld code 6) from tables indexed by the particles' pair classes c */
#define PAIR_ENERGY_FORMAT                                                                                             \
    "eps*S*B + %s*q1*q2/r;"                                                                                            \
    " B = select(step(2*r - R), 184000*exp(-12*r/R) - 2.25*(R/r)^6, 0.07619394543618407*(R/r)^12);"                   \
    " S = select(step(r - 0.8), 0, select(step(r - 0.6), (0.64 - r^2)/0.28, 1));"                                      \
    " eps = select(special(c1, c2), specialEps(c1, c2), sqrt(eps1*eps2));"                                             \
    " R = select(special(c1, c2), specialR(c1, c2), R1 + R2)"

/* The <Script>: CustomCompoundBondForces for the cross terms and the out-of-plane terms in the
 * PeriodicTorsionForce, each term placed by the atom types of a residue matched to its template.
 * ForceField.createSystem runs it with its locals (sys, data, templateForResidue). Free of '<',
 * '>' and '&', so it needs no escaping as XML text. */
static const char script_code[] =
    "import math\n"
    "import openmm\n"
    "# (key, particles, energy, per-bond parameters), the same expressions as HessianForce's terms\n"
    "HESSFIT_MM3_FORMS = (\n"
    "    ('stretch-bend', 3, 'k*((sa*distance(p1,p2) - r0a) + (sb*distance(p3,p2) - r0b))*(angle(p1,p2,p3) - theta0)',\n"
    "     ('k', 'r0a', 'r0b', 'theta0', 'sa', 'sb')),\n"
    "    ('bend-bend', 5, 'k*(angle(p1,p2,p3) - t1)*(angle(p4,p2,p5) - t2)', ('k', 't1', 't2')),\n"
    "    ('bend-bend-shared', 4, 'k*(angle(p1,p2,p3) - t1)*(angle(p1,p2,p4) - t2)', ('k', 't1', 't2')),\n"
    "    ('torsion-stretch', 4, 'k*(s*distance(p2,p3) - r0)*(1 + cos(3*dihedral(p1,p2,p3,p4)))', ('k', 'r0', 's')),\n"
    "    # a pair with a reduced hydrogen (p1, p2 its particles, p3, p4 its atoms): MacroModel's switch is on\n"
    "    # the atoms' true distance rt, the pair force's on the particles' rr; this adds the difference\n"
    "    ('pair-switch', 4, 'eps*(St - Sr)*select(step(2*rr - R), 184000*exp(-12*rr/R) - 2.25*(R/rr)^6,'\n"
    "     ' 0.07619394543618407*(R/rr)^12);'\n"
    "     ' St = select(step(rt - 0.8), 0, select(step(rt - 0.6), (0.64 - rt^2)/0.28, 1));'\n"
    "     ' Sr = select(step(rr - 0.8), 0, select(step(rr - 0.6), (0.64 - rr^2)/0.28, 1));'\n"
    "     ' rt = distance(p3, p4); rr = distance(p1, p2)', ('R', 'eps')),\n"
    "    # a hydrogen bond (p1, p2 its particles, p3, p4 its atoms): 0 from the cutoff on the atoms' distance rt on\n"
    "    ('hydrogen-bond', 4, '(1 - step(rt - cut))*(C/r^12 - D/r^10); r = distance(p1, p2); rt = distance(p3, p4)',\n"
    "     ('C', 'D', 'cut')))\n"
    "hessfit_forces = []\n"
    "for key, n, energy, names in HESSFIT_MM3_FORMS:\n"
    "    force = openmm.CustomCompoundBondForce(n, energy)\n"
    "    for name in names:\n"
    "        force.addPerBondParameter(name)\n"
    "    hessfit_forces.append((key, n, force))\n"
    "hessfit_torsions = [f for f in sys.getForces() if isinstance(f, openmm.PeriodicTorsionForce)]\n"
    "hessfit_new_torsions = not hessfit_torsions\n"
    "hessfit_torsions = openmm.PeriodicTorsionForce() if hessfit_new_torsions else hessfit_torsions[0]\n"
    "for res, template in templateForResidue.items():\n"
    "    terms = HESSFIT_MM3_TERMS.get(template.name)\n"
    "    if terms is None:\n"
    "        continue\n"
    "    # by atom name when the residue has the template's names (the model's own atom order, also where\n"
    "    # the template matching exchanged symmetric atoms), else by atom type\n"
    "    names = {atom.name: atom.index for atom in res.atoms()}\n"
    "    if set(names) == set(atom.name for atom in template.atoms):\n"
    "        index = {template.name + '-' + name: i for name, i in names.items()}\n"
    "    else:\n"
    "        index = {data.atomType[atom]: atom.index for atom in res.atoms()}\n"
    "    for key, n, force in hessfit_forces:\n"
    "        for term in terms[key]:\n"
    "            force.addBond([index[t] for t in term[:n]], term[n:])\n"
    "    for term in terms['out-of-plane']:\n"
    "        hessfit_torsions.addTorsion(*[index[t] for t in term[:4]], 2, math.pi, term[4])\n"
    "for key, n, force in hessfit_forces:\n"
    "    if force.getNumBonds() > 0:\n"
    "        sys.addForce(force)\n"
    "if hessfit_new_torsions and hessfit_torsions.getNumTorsions() > 0:\n"
    "    sys.addForce(hessfit_torsions)\n";

/* ---- special pairs ----------------------------------------------------------------------------- */

/* The particles' pair classes: 1..n the MM3* types of the atoms in special van der Waals pairs, 0
 * every other particle (and a reduced hydrogen's own particle). A pair's class pair says whether it
 * is special and with which R and eps; every pair of the models must agree with that. */
typedef struct pair_classes {
    int n;
    const char **type; /* n */
    int *state;        /* (n + 1)^2: 0 no pair seen, 1 combining rule, 2 special */
    double *r, *eps;   /* (n + 1)^2: a special pair's R (A) and eps (kcal/mol) */
} pair_classes;

static void pair_classes_free(pair_classes *pc)
{
    free(pc->type);
    free(pc->state);
    free(pc->r);
    free(pc->eps);
}

static int class_of(const pair_classes *pc, const char *type)
{
    for (int k = 0; k < pc->n; k++)
        if (strcmp(pc->type[k], type) == 0)
            return k + 1;
    return 0;
}

static hessfit_status pair_classes_build(const char *path, const hessfit_molecule *mols, const hessfit_mm3_model *x,
                                         int n_mols, pair_classes *pc)
{
    int cap = 0;
    memset(pc, 0, sizeof *pc);
    for (int m = 0; m < n_mols; m++)
        for (int i = 0; i < x[m].n_pairs; i++)
            for (int e = 0; e < 2 && x[m].pairs[i].src_r.origin != HESSFIT_MM3_DERIVED; e++) {
                const char *type = mols[m].atom_types[x[m].pairs[i].atoms[e]];
                if (class_of(pc, type) > 0)
                    continue;
                if (pc->n == cap) {
                    const char **t = realloc(pc->type, (size_t)(cap = 2 * cap + 4) * sizeof *t);
                    if (t == NULL)
                        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for pair classes", path);
                    pc->type = t;
                }
                pc->type[pc->n++] = type;
            }
    const size_t n2 = (size_t)(pc->n + 1) * (size_t)(pc->n + 1);
    pc->state = calloc(n2, sizeof *pc->state);
    pc->r = calloc(n2, sizeof *pc->r);
    pc->eps = calloc(n2, sizeof *pc->eps);
    if (pc->state == NULL || pc->r == NULL || pc->eps == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for pair classes", path);
    for (int m = 0; m < n_mols; m++)
        for (int i = 0; i < x[m].n_pairs; i++) {
            const hessfit_mm3_pair *p = &x[m].pairs[i];
            const char *ta = mols[m].atom_types[p->atoms[0]], *tb = mols[m].atom_types[p->atoms[1]];
            const int ca = class_of(pc, ta), cb = class_of(pc, tb), special = p->src_r.origin != HESSFIT_MM3_DERIVED;
            const size_t k = (size_t)ca * (size_t)(pc->n + 1) + (size_t)cb, k2 = (size_t)cb * (size_t)(pc->n + 1) + (size_t)ca;
            if (pc->state[k] == 0) {
                pc->state[k] = pc->state[k2] = special ? 2 : 1;
                pc->r[k] = pc->r[k2] = special ? p->r : 0.0;
                pc->eps[k] = pc->eps[k2] = special ? p->eps : 0.0;
            } else if (pc->state[k] != (special ? 2 : 1) || (special && (pc->r[k] != p->r || pc->eps[k] != p->eps)))
                return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                     "%s: structure %d: the van der Waals pair of atoms %d (%s) and %d (%s) is %s, but "
                                     "another pair of these types is not: the export's tables by type cannot hold both",
                                     path, m + 1, p->atoms[0] + 1, ta, p->atoms[1] + 1, tb,
                                     special ? "a special pair" : "by the combining rule");
        }
    return HESSFIT_SUCCESS;
}

/* The three tables as <Function> elements (Discrete2D, symmetric). */
static hessfit_status put_pair_tables(hf_buf *b, const pair_classes *pc, double vdw)
{
    const int n = pc->n + 1;
    static const char *const names[3] = {"special", "specialR", "specialEps"};
    hessfit_status st = HESSFIT_SUCCESS;
    for (int f = 0; f < 3 && st == HESSFIT_SUCCESS; f++) {
        st = hf_buf_printf(b, "  <Function name=\"%s\" type=\"Discrete2D\" xsize=\"%d\" ysize=\"%d\">", names[f], n, n);
        for (int k = 0; k < n * n && st == HESSFIT_SUCCESS; k++) {
            const double v = f == 0 ? pc->state[k] == 2 : f == 1 ? pc->r[k] * HESSFIT_ANGSTROM_TO_NM : pc->eps[k] * vdw;
            st = hf_buf_printf(b, "%s%s", k > 0 ? " " : "", hf_num(v).s);
        }
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(b, "</Function>\n");
    }
    return st;
}

/* ---- one template ------------------------------------------------------------------------------ */

/* The text of one template: what it adds to each part of the file. Two structures share a template
 * when their texts are equal. */
enum { PART_TYPES, PART_RESIDUE, PART_BONDS, PART_ANGLES, PART_TORSIONS, PART_PAIRS, PART_SCRIPT, N_PARTS };

typedef struct template_text {
    hf_buf part[N_PARTS];
} template_text;

static void template_text_free(template_text *t)
{
    for (int k = 0; k < N_PARTS; k++)
        hf_buf_free(&t->part[k]);
}

/* What rendering needs: the structure, its model, the site of each atom. */
typedef struct renderer {
    const char *tmpl;   /* "M<t>" */
    const hessfit_molecule *mol;
    const hessfit_mm3_model *x;
    int *site;          /* per atom: index into x->reduced, -1 when not reduced */
    const pair_classes *pc;
    int structure;      /* 1-based, for messages */
} renderer;

/* The atom's own name ("C3") or, for term_name, the particle that carries its terms (its site
 * "E5" when the atom is a reduced hydrogen). */
static void atom_name(const renderer *r, int i, int term_name, char out[16])
{
    if (term_name && r->site[i] >= 0)
        snprintf(out, 16, "E%d", i + 1);
    else
        snprintf(out, 16, "%s%d", hessfit_element_symbol(r->mol->atomic_numbers[i]), i + 1);
}

/* ' type1="M1-C1" type2=...' for the particles carrying atoms[0..n). */
static hessfit_status put_types(hf_buf *b, const renderer *r, const int *atoms, int n)
{
    hessfit_status st = HESSFIT_SUCCESS;
    char name[16];
    for (int k = 0; k < n && st == HESSFIT_SUCCESS; k++) {
        atom_name(r, atoms[k], 1, name);
        st = hf_buf_printf(b, " type%d=\"%s-%s\"", k + 1, r->tmpl, name);
    }
    return st;
}

/* '"M1-C1", "M1-C2", ' (a Python tuple's start) for the particles carrying atoms[0..n). */
static hessfit_status put_script_types(hf_buf *b, const renderer *r, const int *atoms, int n)
{
    hessfit_status st = hf_buf_printf(b, "        (");
    char name[16];
    for (int k = 0; k < n && st == HESSFIT_SUCCESS; k++) {
        atom_name(r, atoms[k], 1, name);
        st = hf_buf_printf(b, "\"%s-%s\", ", r->tmpl, name);
    }
    return st;
}

/* The two atoms' own names (not their sites'), continuing a Python tuple. */
static hessfit_status put_atom_names(hf_buf *b, const renderer *r, const int *atoms)
{
    hessfit_status st = HESSFIT_SUCCESS;
    char name[16];
    for (int k = 0; k < 2 && st == HESSFIT_SUCCESS; k++) {
        atom_name(r, atoms[k], 0, name);
        st = hf_buf_printf(b, "\"%s-%s\", ", r->tmpl, name);
    }
    return st;
}

/* ', v1, v2)' closing a Python tuple; every value finite, else an error naming the term. */
static hessfit_status put_script_values(hf_buf *b, const renderer *r, const char *what, const int *atoms,
                                        const double *v, int n)
{
    hessfit_status st = HESSFIT_SUCCESS;
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "structure %d: %s %d-%d-...: value %d is %g", r->structure, what,
                                 atoms[0] + 1, atoms[1] + 1, k + 1, v[k]);
    for (int k = 0; k < n && st == HESSFIT_SUCCESS; k++)
        st = hf_buf_printf(b, "%s%s", hf_num(v[k]).s, k + 1 < n ? ", " : "),\n");
    return st;
}

/* ' name="value"' pairs; every value finite, else an error naming the term. */
static hessfit_status put_attrs(hf_buf *b, const renderer *r, const char *what, const int *atoms,
                                const char *const *names, const double *v, int n)
{
    hessfit_status st = HESSFIT_SUCCESS;
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "structure %d: %s of atom %d: %s is %g", r->structure, what,
                                 atoms[0] + 1, names[k], v[k]);
    for (int k = 0; k < n && st == HESSFIT_SUCCESS; k++)
        st = hf_buf_printf(b, " %s=\"%s\"", names[k], hf_num(v[k]).s);
    return st;
}

static hessfit_status render_atoms(const renderer *r, template_text *t)
{
    const hessfit_molecule *mol = r->mol;
    const hessfit_mm3_model *x = r->x;
    hf_buf *types = &t->part[PART_TYPES], *res = &t->part[PART_RESIDUE], *pairs = &t->part[PART_PAIRS];
    static const char *const pair_names[4] = {"R", "eps", "q", "c"};
    hessfit_status st = hf_buf_printf(res, "  <Residue name=\"%s\">\n", r->tmpl);
    char name[16], site[16], other[16];
    for (int i = 0; i < mol->n_atoms && st == HESSFIT_SUCCESS; i++) {
        const char *symbol = hessfit_element_symbol(mol->atomic_numbers[i]);
        if (symbol == NULL || mol->atom_types == NULL || mol->atom_types[i] == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "structure %d atom %d: %s", r->structure, i + 1,
                                 symbol == NULL ? "unknown element" : "no atom type");
        atom_name(r, i, 0, name);
        if (strlen(name) > 4)
            return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                 "structure %d atom %d: its name '%s' is longer than a PDB's 4 characters",
                                 r->structure, i + 1, name);
        st = hf_buf_printf(types, "  <Type name=\"%s-%s\" class=\"", r->tmpl, name);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_put_xml(types, mol->atom_types[i]);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(types, "\" element=\"%s\" mass=\"%s\"/>\n", symbol,
                               hf_num(hessfit_element_average_mass(mol->atomic_numbers[i])).s);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(res, "   <Atom name=\"%s\" type=\"%s-%s\"/>\n", name, r->tmpl, name);
        /* a reduced hydrogen's own particle does not interact: its site does */
        const hessfit_mm3_atom *a = &x->atoms[i];
        const double v[4] = {a->r_star * HESSFIT_ANGSTROM_TO_NM, a->eps * x->factor.vdw, a->charge,
                             class_of(r->pc, mol->atom_types[i])};
        const double none[4] = {v[0], 0.0, 0.0, 0.0};
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(pairs, "  <Atom type=\"%s-%s\"", r->tmpl, name);
        if (st == HESSFIT_SUCCESS)
            st = put_attrs(pairs, r, "van der Waals", &i, pair_names, r->site[i] >= 0 ? none : v, 4);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(pairs, "/>\n");
        if (r->site[i] < 0 || st != HESSFIT_SUCCESS)
            continue;
        atom_name(r, i, 1, site);
        st = hf_buf_printf(types, "  <Type name=\"%s-%s\" class=\"EP\" mass=\"0\"/>\n", r->tmpl, site);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(pairs, "  <Atom type=\"%s-%s\"", r->tmpl, site);
        if (st == HESSFIT_SUCCESS)
            st = put_attrs(pairs, r, "van der Waals", &i, pair_names, v, 4);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(pairs, "/>\n");
    }
    /* the sites, each after the atoms: x' = f x_H + (1 - f) x_P */
    for (int k = 0; k < x->n_reduced && st == HESSFIT_SUCCESS; k++) {
        const hessfit_mm3_reduced *h = &x->reduced[k];
        atom_name(r, h->atom, 1, site);
        atom_name(r, h->atom, 0, name);
        atom_name(r, h->partner, 0, other);
        st = hf_buf_printf(res,
                           "   <Atom name=\"%s\" type=\"%s-%s\"/>\n"
                           "   <VirtualSite type=\"average2\" siteName=\"%s\" atomName1=\"%s\" atomName2=\"%s\" "
                           "weight1=\"%s\"",
                           site, r->tmpl, site, site, name, other, hf_num(h->f).s);
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(res, " weight2=\"%s\"/>\n", hf_num(1.0 - h->f).s);
    }
    /* every bond, each reduced hydrogen's bonds again from its site, and the site's bond to its
     * hydrogen (it pins the hydrogen in OpenMM's template matching, which matches sites by name) */
    for (int k = 0; k < x->n_reduced && st == HESSFIT_SUCCESS; k++) {
        atom_name(r, x->reduced[k].atom, 1, site);
        atom_name(r, x->reduced[k].atom, 0, name);
        st = hf_buf_printf(res, "   <Bond atomName1=\"%s\" atomName2=\"%s\"/>\n", site, name);
    }
    for (int b = 0; b < mol->n_bonds && st == HESSFIT_SUCCESS; b++) {
        const int *ab = &mol->bonds[2 * b];
        atom_name(r, ab[0], 0, name);
        atom_name(r, ab[1], 0, other);
        st = hf_buf_printf(res, "   <Bond atomName1=\"%s\" atomName2=\"%s\"/>\n", name, other);
        if (st == HESSFIT_SUCCESS && (r->site[ab[0]] >= 0 || r->site[ab[1]] >= 0)) {
            atom_name(r, ab[0], 1, name);
            atom_name(r, ab[1], 1, other);
            st = hf_buf_printf(res, "   <Bond atomName1=\"%s\" atomName2=\"%s\"/>\n", name, other);
        }
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(res, "  </Residue>\n");
    return st;
}

static hessfit_status render_terms(const renderer *r, template_text *t)
{
    const hessfit_mm3_model *x = r->x;
    const hessfit_mm3_factors *F = &x->factor;
    const double nm = HESSFIT_ANGSTROM_TO_NM, rad = HESSFIT_DEG_TO_RAD;
    hessfit_status st = HESSFIT_SUCCESS;
    hf_buf *b;
    for (int i = 0; i < x->n_stretches && st == HESSFIT_SUCCESS; i++) {
        static const char *const names[3] = {"k", "r0", "s"};
        const hessfit_mm3_stretch *e = &x->stretches[i];
        const double v[3] = {0.5 * F->str * 100.0 * e->k, e->r0 * nm, 1.0 / e->f};
        b = &t->part[PART_BONDS];
        if ((st = hf_buf_printf(b, "  <Bond")) == HESSFIT_SUCCESS && (st = put_types(b, r, e->atoms, 2)) == HESSFIT_SUCCESS &&
            (st = put_attrs(b, r, "stretch", e->atoms, names, v, 3)) == HESSFIT_SUCCESS)
            st = hf_buf_printf(b, "/>\n");
    }
    for (int i = 0; i < x->n_bends && st == HESSFIT_SUCCESS; i++) {
        static const char *const names[2] = {"k", "theta0"};
        const hessfit_mm3_bend *e = &x->bends[i];
        const double v[2] = {0.5 * F->bnd * e->k, e->theta0 * rad};
        b = &t->part[PART_ANGLES];
        if ((st = hf_buf_printf(b, "  <Angle")) == HESSFIT_SUCCESS && (st = put_types(b, r, e->atoms, 3)) == HESSFIT_SUCCESS &&
            (st = put_attrs(b, r, "bend", e->atoms, names, v, 2)) == HESSFIT_SUCCESS)
            st = hf_buf_printf(b, "/>\n");
    }
    /* V1 (1 + cos phi) + V2 (1 - cos 2 phi) + V3 (1 + cos 3 phi): the V's that are not 0 */
    for (int i = 0; i < x->n_torsions && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_torsion *e = &x->torsions[i];
        if (e->v[0] == 0.0 && e->v[1] == 0.0 && e->v[2] == 0.0)
            continue;
        b = &t->part[PART_TORSIONS];
        if ((st = hf_buf_printf(b, "  <Proper")) == HESSFIT_SUCCESS)
            st = put_types(b, r, e->atoms, 4);
        for (int n = 0, k = 0; n < 3 && st == HESSFIT_SUCCESS; n++) {
            if (e->v[n] == 0.0)
                continue;
            char names[3][24];
            const char *const pn[3] = {names[0], names[1], names[2]};
            const double v[3] = {n + 1, n == 1 ? 180.0 * rad : 0.0, F->tor * e->v[n]};
            k++;
            snprintf(names[0], sizeof names[0], "periodicity%d", k);
            snprintf(names[1], sizeof names[1], "phase%d", k);
            snprintf(names[2], sizeof names[2], "k%d", k);
            st = put_attrs(b, r, "torsion", e->atoms, pn, v, 3);
        }
        if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(b, "/>\n");
    }

    /* the script's table: one Python list per kind, keys as in script_code */
    b = &t->part[PART_SCRIPT];
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "    \"%s\": {\n     \"stretch-bend\": [\n", r->tmpl);
    for (int i = 0; i < x->n_stretch_bends && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_stretch_bend *e = &x->stretch_bends[i];
        if (e->k_sb == 0.0)
            continue; /* MacroModel's 0 (no S-B line, a non-carbon centre, an order-0 bond) */
        const double v[6] = {10.0 * F->sb * e->k_sb, e->r0[0] * nm, e->r0[1] * nm, e->theta0 * rad, 1.0 / e->f[0],
                             1.0 / e->f[1]};
        if ((st = put_script_types(b, r, e->atoms, 3)) == HESSFIT_SUCCESS)
            st = put_script_values(b, r, "stretch-bend", e->atoms, v, 6);
    }
    for (int shared = 0; shared < 2 && st == HESSFIT_SUCCESS; shared++) {
        st = hf_buf_printf(b, "     ],\n     \"%s\": [\n", shared ? "bend-bend-shared" : "bend-bend");
        for (int i = 0; i < x->n_bend_bends && st == HESSFIT_SUCCESS; i++) {
            const hessfit_mm3_bend_bend *e = &x->bend_bends[i];
            const int *a = e->atoms; /* centre, the ends of angle 1, the ends of angle 2 */
            /* the outer atom both angles share, as p1 of each angle: (s, c, o1), (s, c, o2) */
            const int s1 = a[1] == a[3] || a[1] == a[4] ? 1 : a[2] == a[3] || a[2] == a[4] ? 2 : 0;
            if ((s1 != 0) != shared)
                continue;
            const double v[3] = {HF_MM3_BEND_BEND * F->bb * e->k_bb[0] * e->k_bb[1] * HESSFIT_RAD_TO_DEG * HESSFIT_RAD_TO_DEG,
                                 e->theta0[0] * rad, e->theta0[1] * rad};
            int p[5] = {a[1], a[0], a[2], a[3], a[4]};
            if (shared) {
                const int s = a[s1], s2 = a[3] == s ? 3 : 4;
                p[0] = s;
                p[2] = a[3 - s1];
                p[3] = a[7 - s2];
            }
            if ((st = put_script_types(b, r, p, shared ? 4 : 5)) == HESSFIT_SUCCESS)
                st = put_script_values(b, r, "bend-bend", p, v, 3);
        }
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "     ],\n     \"torsion-stretch\": [\n");
    for (int i = 0; i < x->n_torsion_stretches && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_torsion_stretch *e = &x->torsion_stretches[i];
        if (e->k_ts == 0.0)
            continue;
        const double v[3] = {10.0 * F->ts * HF_MM3_TORSION_STRETCH * e->k_ts, e->r0 * nm, 1.0 / e->f};
        if ((st = put_script_types(b, r, e->atoms, 4)) == HESSFIT_SUCCESS)
            st = put_script_values(b, r, "torsion-stretch", e->atoms, v, 3);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "     ],\n     \"pair-switch\": [\n");
    for (int i = 0; i < x->n_pairs && st == HESSFIT_SUCCESS; i++) { /* (sites or atoms, atoms, R, eps) */
        const hessfit_mm3_pair *e = &x->pairs[i];
        if (r->site[e->atoms[0]] < 0 && r->site[e->atoms[1]] < 0)
            continue;
        const double v[2] = {e->r * nm, F->vdw * e->eps};
        if ((st = put_script_types(b, r, e->atoms, 2)) == HESSFIT_SUCCESS)
            st = put_atom_names(b, r, e->atoms);
        if (st == HESSFIT_SUCCESS)
            st = put_script_values(b, r, "pair-switch", e->atoms, v, 2);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "     ],\n     \"hydrogen-bond\": [\n");
    /* every candidate, listed at this geometry or not: the cutoff is the Script's (sites or atoms, atoms, C, D, cut) */
    for (int i = 0; i < x->n_hbonds && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_hbond *e = &x->hbonds[i];
        const double v[3] = {F->hbd * e->c * 1e-12, F->hbd * e->d * 1e-10, HESSFIT_MM3_HBOND_CUTOFF * nm};
        if ((st = put_script_types(b, r, e->atoms, 2)) == HESSFIT_SUCCESS)
            st = put_atom_names(b, r, e->atoms);
        if (st == HESSFIT_SUCCESS)
            st = put_script_values(b, r, "hydrogen-bond", e->atoms, v, 3);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "     ],\n     \"out-of-plane\": [\n");
    for (int i = 0; i < x->n_out_of_plane && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_out_of_plane *e = &x->out_of_plane[i];
        const double v = F->imp * e->k;
        if ((st = put_script_types(b, r, e->atoms, 4)) == HESSFIT_SUCCESS)
            st = put_script_values(b, r, "out-of-plane", e->atoms, &v, 1);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(b, "     ]},\n");
    return st;
}

static hessfit_status render(renderer *r, template_text *t)
{
    hessfit_status st = render_atoms(r, t);
    return st == HESSFIT_SUCCESS ? render_terms(r, t) : st;
}

/* ---- the PDB ----------------------------------------------------------------------------------- */

static hessfit_status render_pdb(const renderer *r, int structure, hf_buf *b)
{
    const hessfit_molecule *mol = r->mol;
    const hessfit_mm3_model *x = r->x;
    const int n = mol->n_atoms, n_particles = n + x->n_reduced;
    hessfit_status st = hf_buf_printf(b, "REMARK   1 hessfit MM3* export: structure %d, residue template %s\n", structure,
                                      r->tmpl);
    if (st == HESSFIT_SUCCESS && mol->name != NULL && mol->name[0] != '\0')
        st = hf_buf_printf(b, "REMARK   1 %.68s\n", mol->name);
    hf_pdb_atom *atoms = malloc((size_t)n_particles * sizeof *atoms);
    int *serial = malloc((size_t)n * sizeof *serial), *pairs = malloc((size_t)(4 * mol->n_bonds + 2 * n + 1) * sizeof *pairs);
    if (atoms == NULL || serial == NULL || pairs == NULL) {
        free(atoms);
        free(serial);
        free(pairs);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "structure %d: no memory for the PDB", structure);
    }
    for (int i = 0; i < n; i++) {
        atom_name(r, i, 0, atoms[i].name);
        atoms[i].element = hessfit_element_symbol(mol->atomic_numbers[i]);
        memcpy(atoms[i].xyz, &mol->coords[3 * i], sizeof atoms[i].xyz);
        serial[i] = i;
    }
    /* the sites (after the atoms), at x' = x_P + f (x_H - x_P) */
    int n_pairs = 0;
    for (int k = 0; k < x->n_reduced; k++) {
        const hessfit_mm3_reduced *h = &x->reduced[k];
        hf_pdb_atom *a = &atoms[n + k];
        for (int c = 0; c < 3; c++)
            a->xyz[c] = mol->coords[3 * h->partner + c] + h->f * (mol->coords[3 * h->atom + c] - mol->coords[3 * h->partner + c]);
        atom_name(r, h->atom, 1, a->name);
        a->element = "EP";
        serial[h->atom] = n + k; /* the site, for the bonds from a site */
        pairs[2 * n_pairs] = h->atom;
        pairs[2 * n_pairs++ + 1] = n + k;
    }
    /* every template bond: the atoms' and, where a reduced hydrogen is in it, the site's */
    for (int k = 0; k < mol->n_bonds; k++) {
        const int i = mol->bonds[2 * k], j = mol->bonds[2 * k + 1];
        pairs[2 * n_pairs] = i;
        pairs[2 * n_pairs++ + 1] = j;
        if (r->site[i] >= 0 || r->site[j] >= 0) {
            pairs[2 * n_pairs] = serial[i];
            pairs[2 * n_pairs++ + 1] = serial[j];
        }
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_pdb_put(b, r->tmpl, atoms, n_particles, pairs, n_pairs);
    free(atoms);
    free(serial);
    free(pairs);
    return st;
}

/* ---- the file ---------------------------------------------------------------------------------- */

/* Same atoms (elements, types, order) and bonds (orders too). */
static int same_graph(const hessfit_molecule *a, const hessfit_molecule *b)
{
    if (a->n_atoms != b->n_atoms || a->n_bonds != b->n_bonds)
        return 0;
    for (int i = 0; i < a->n_atoms; i++)
        if (a->atomic_numbers[i] != b->atomic_numbers[i] || strcmp(a->atom_types[i], b->atom_types[i]) != 0)
            return 0;
    for (int k = 0; k < a->n_bonds; k++)
        if (a->bonds[2 * k] != b->bonds[2 * k] || a->bonds[2 * k + 1] != b->bonds[2 * k + 1] ||
            a->bond_orders[k] != b->bond_orders[k])
            return 0;
    return 1;
}

/* The first line where two texts differ, into out. */
static void first_difference(const hf_buf *a, const hf_buf *b, char *out, size_t size)
{
    const char *p = a->data != NULL ? a->data : "", *q = b->data != NULL ? b->data : "";
    size_t k = 0, line = 0;
    while (p[k] != '\0' && p[k] == q[k]) {
        if (p[k] == '\n')
            line = k + 1;
        k++;
    }
    const char *end = strchr(p + line, '\n'), *end2 = strchr(q + line, '\n');
    snprintf(out, size, "'%.*s' against '%.*s'", (int)(end != NULL ? end - (p + line) : 120), p + line,
             (int)(end2 != NULL ? end2 - (q + line) : 120), q + line);
}

typedef struct mm3_template {
    int first;  /* the structure that made it */
    template_text text;
    hf_buf members; /* "1, 2" */
} mm3_template;

hessfit_status hessfit_mm3_ffxml_write(const char *xml_path, const char *const *pdb_paths, const hessfit_forcefield *ff,
                                       const hessfit_molecule *mols, const hessfit_typed_molecule *typed, int n_mols,
                                       int *n_templates)
{
    if (xml_path == NULL || ff == NULL || mols == NULL || typed == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_mm3_ffxml_write: %s is NULL",
                             xml_path == NULL ? "xml_path" : ff == NULL ? "ff" : mols == NULL ? "mols" : "typed");
    if (n_mols <= 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d structures", xml_path, n_mols);
    hessfit_mm3_model *x = calloc((size_t)n_mols, sizeof *x);
    mm3_template *tm = calloc((size_t)n_mols, sizeof *tm);
    hf_buf *pdb = calloc((size_t)n_mols, sizeof *pdb), doc = {0};
    int n_t = 0, *site = NULL;
    pair_classes pc;
    hessfit_status st = HESSFIT_SUCCESS;
    memset(&pc, 0, sizeof pc);
    char tmpl[16], text[1024];
    if (x == NULL || tm == NULL || pdb == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %d structures", xml_path, n_mols);
        goto done;
    }
    for (int m = 0; m < n_mols && st == HESSFIT_SUCCESS; m++)
        if ((st = hessfit_mm3_build(&mols[m], &typed[m], ff, &x[m])) != HESSFIT_SUCCESS)
            st = hessfit_error(st, "%s: structure %d: %s", xml_path, m + 1, hessfit_last_error());
    if (st == HESSFIT_SUCCESS)
        st = pair_classes_build(xml_path, mols, x, n_mols, &pc);
    for (int m = 0; m < n_mols && st == HESSFIT_SUCCESS; m++) {
        free(site);
        if ((site = malloc((size_t)mols[m].n_atoms * sizeof *site)) == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", xml_path);
            break;
        }
        for (int i = 0; i < mols[m].n_atoms; i++)
            site[i] = -1;
        for (int k = 0; k < x[m].n_reduced; k++)
            site[x[m].reduced[k].atom] = k;
        int t = 0;
        while (t < n_t && !same_graph(&mols[tm[t].first], &mols[m]))
            t++;
        snprintf(tmpl, sizeof tmpl, "M%d", t + 1);
        renderer r = {tmpl, &mols[m], &x[m], site, &pc, m + 1};
        template_text mine;
        memset(&mine, 0, sizeof mine);
        st = render(&r, &mine);
        if (st == HESSFIT_SUCCESS && t == n_t) { /* a new template */
            tm[n_t].first = m;
            tm[n_t].text = mine;
            memset(&mine, 0, sizeof mine);
            st = hf_buf_printf(&tm[n_t++].members, "%d", m + 1);
        } else if (st == HESSFIT_SUCCESS) {
            for (int k = 0; k < N_PARTS && st == HESSFIT_SUCCESS; k++) {
                const hf_buf *a = &tm[t].text.part[k], *b = &mine.part[k];
                if (a->len != b->len || (a->len > 0 && memcmp(a->data, b->data, a->len) != 0)) {
                    first_difference(a, b, text, sizeof text);
                    st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                                       "%s: structures %d and %d have the same atoms and bonds but not the same MM3* "
                                       "model (%s), so one residue template cannot hold both",
                                       xml_path, tm[t].first + 1, m + 1, text);
                }
            }
            if (st == HESSFIT_SUCCESS)
                st = hf_buf_printf(&tm[t].members, ", %d", m + 1);
        }
        template_text_free(&mine);
        if (st == HESSFIT_SUCCESS && pdb_paths != NULL && pdb_paths[m] != NULL)
            st = render_pdb(&r, m + 1, &pdb[m]);
    }
    if (st != HESSFIT_SUCCESS)
        goto done;

    /* the document: the parts of every template, in template order */
    snprintf(text, sizeof text,
             "Written by hessfit (hessfit_mm3_ffxml_write) from the MM3* force field %s: the MM3* model of %d "
             "structure(s) in %d residue template(s) (docs/mm3.md, \"Export to OpenMM\"). One atom type per atom "
             "(class = its MM3* type); each reduced hydrogen's terms act on a virtual site E<n>. Units nm, rad, "
             "kJ/mol, e. The van der Waals switch (0.6-0.8 nm) acts on the true distance of the atoms within a molecule, "
             "as in MacroModel and HessianForce (the pair force's switch is on the distance of its particles; the "
             "Script's pair-switch terms add the difference for the pairs with a reduced hydrogen), between "
             "molecules on the particles' distance. The cross terms, out-of-plane and pair-switch terms are added by "
             "the Script at the end. Templates:",
             ff->path != NULL ? ff->path : "(unnamed)", n_mols, n_t);
    st = hf_buf_printf(&doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- ");
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_put_xml(&doc, text);
    for (int t = 0; t < n_t && st == HESSFIT_SUCCESS; t++)
        st = hf_buf_printf(&doc, " M%d = structure%s %s;", t + 1, strchr(tm[t].members.data, ',') ? "s" : "",
                           tm[t].members.data);
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&doc, " -->\n<ForceField>\n");
    char energy[512];
    snprintf(energy, sizeof energy, PAIR_ENERGY_FORMAT, hf_num(x[0].factor.ele * HESSFIT_ANGSTROM_TO_NM).s);
    const struct {
        const char *open, *close;
    } parts[N_PARTS] = {
        {" <AtomTypes>\n", " </AtomTypes>\n"},
        {" <Residues>\n", " </Residues>\n"},
        {" <CustomBondForce energy=\"" STRETCH_ENERGY "\">\n  <PerBondParameter name=\"k\"/>\n"
         "  <PerBondParameter name=\"r0\"/>\n  <PerBondParameter name=\"s\"/>\n",
         " </CustomBondForce>\n"},
        {" <CustomAngleForce energy=\"" BEND_ENERGY "\">\n  <PerAngleParameter name=\"k\"/>\n"
         "  <PerAngleParameter name=\"theta0\"/>\n",
         " </CustomAngleForce>\n"},
        {" <PeriodicTorsionForce>\n", " </PeriodicTorsionForce>\n"},
        {NULL, " </CustomNonbondedForce>\n"}, /* opened below: its energy has the Coulomb constant */
        {" <Script>\n# hessfit: the MM3* cross terms and out-of-plane terms of each template, by atom types\n"
         "HESSFIT_MM3_TERMS = {\n",
         NULL}};
    for (int k = 0; k < N_PARTS && st == HESSFIT_SUCCESS; k++) {
        if (k == PART_PAIRS)
            st = hf_buf_printf(&doc,
                               " <CustomNonbondedForce energy=\"%s\" bondCutoff=\"2\">\n  <PerParticleParameter "
                               "name=\"R\"/>\n  <PerParticleParameter name=\"eps\"/>\n  <PerParticleParameter "
                               "name=\"q\"/>\n  <PerParticleParameter name=\"c\"/>\n",
                               energy);
        if (st == HESSFIT_SUCCESS && k == PART_PAIRS)
            st = put_pair_tables(&doc, &pc, x[0].factor.vdw);
        else
            st = hf_buf_printf(&doc, "%s", parts[k].open);
        for (int t = 0; t < n_t && st == HESSFIT_SUCCESS; t++)
            if (tm[t].text.part[k].len > 0)
                st = hf_buf_append(&doc, tm[t].text.part[k].data, tm[t].text.part[k].len);
        if (st == HESSFIT_SUCCESS && k == PART_SCRIPT)
            st = hf_buf_printf(&doc, "}\n%s </Script>\n", script_code);
        else if (st == HESSFIT_SUCCESS)
            st = hf_buf_printf(&doc, "%s", parts[k].close);
    }
    if (st == HESSFIT_SUCCESS)
        st = hf_buf_printf(&doc, "</ForceField>\n");
    if (st == HESSFIT_SUCCESS)
        st = hessfit_atomic_write_buffer(xml_path, doc.data, doc.len);
    for (int m = 0; m < n_mols && st == HESSFIT_SUCCESS; m++)
        if (pdb_paths != NULL && pdb_paths[m] != NULL)
            st = hessfit_atomic_write_buffer(pdb_paths[m], pdb[m].data, pdb[m].len);
    if (st == HESSFIT_SUCCESS && n_templates != NULL)
        *n_templates = n_t;
done:
    for (int m = 0; x != NULL && m < n_mols; m++)
        hessfit_mm3_model_free(&x[m]);
    for (int t = 0; tm != NULL && t < n_t; t++) {
        template_text_free(&tm[t].text);
        hf_buf_free(&tm[t].members);
    }
    for (int m = 0; pdb != NULL && m < n_mols; m++)
        hf_buf_free(&pdb[m]);
    hf_buf_free(&doc);
    pair_classes_free(&pc);
    free(x);
    free(tm);
    free(pdb);
    free(site);
    return st;
}
