"""Reads the reference file that tests/support/model_reference.c writes for the export checks.

Per structure a line "structure k n energy" and n rows "x y z fx fy fz" (nm, kJ/mol, kJ/mol/nm).
"""


def read_reference(path):
    """[(k, energy, positions, forces)] in file order; positions and forces are lists of 3-lists."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    k = 0
    while k < len(lines):
        if not lines[k].startswith("structure"):
            k += 1
            continue
        _, index, n, energy = lines[k].split()
        n = int(n)
        rows = [[float(v) for v in lines[k + 1 + i].split()] for i in range(n)]
        out.append((int(index), float(energy), [r[:3] for r in rows], [r[3:] for r in rows]))
        k += 1 + n
    return out
