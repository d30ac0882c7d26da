"""hessfit: HessianForce for OpenMM, with analytic Hessians and parameter derivatives as NumPy arrays.

``import hessfit`` imports openmm (which loads OpenMM's own plugins), then loads hessfit's kernel
plugins: from $HESSFIT_PLUGIN_DIR where set, else from the package's own ``lib/plugins``. A
HessianForce is an openmm.Force: System.addForce takes it, XmlSerializer writes and reads it, and
HessianForce.cast(system.getForce(i)) gives it back from a System. Units are OpenMM's: nm, rad,
kJ/mol, e, amu; Hessians in kJ/mol/nm^2. See docs/python.md.
"""
import os

import openmm

from ._errors import (ErrorCode, HessianForceException, HessianForceIndexError,
                      HessianForceValueError)


def _load_plugins():
    """Load hessfit's kernel plugins after OpenMM's (kernels register only with platforms that exist)."""
    directory = os.environ.get("HESSFIT_PLUGIN_DIR") or os.path.join(os.path.dirname(__file__), "lib", "plugins")
    loaded = openmm.Platform.loadPluginsFromDirectory(directory)
    failures = [f for f in openmm.Platform.getPluginLoadFailures() if directory in f]
    if failures:
        raise ImportError("hessfit: plugins failed to load from %s: %s" % (directory, "; ".join(failures)))
    if not loaded:
        raise ImportError("hessfit: no kernel plugin in %s (set HESSFIT_PLUGIN_DIR)" % directory)
    return directory, list(loaded)


plugin_directory, loaded_plugins = _load_plugins()

from .hessfit_swig import HessianForce, createHessianForceFromSystem, frequencyFactor  # noqa: E402
from .convert import convert_system  # noqa: E402
from .objective import HessianObjectiveMolecule, NoFrequencies, PairByOverlap, PairByPosition  # noqa: E402
from .vibrations import frequencies, normal_modes  # noqa: E402
from .fitting import FitError, fit, report  # noqa: E402

__version__ = "0.1.0"
__all__ = ["HessianForce", "createHessianForceFromSystem", "convert_system", "normal_modes", "frequencies",
           "frequencyFactor", "HessianObjectiveMolecule", "NoFrequencies", "PairByPosition", "PairByOverlap",
           "ErrorCode", "HessianForceException", "HessianForceIndexError", "HessianForceValueError",
           "plugin_directory", "loaded_plugins", "fit", "report", "FitError"]
