"""The fit driver from Python: run a ``.fit`` input as ``hessfit fit`` does and get its report.

``hessfit.fit("examples/ch3f.fit")`` runs the ``hessfit`` program the package carries (``bin/hessfit``,
the same build as the module) with its own libraries and kernel plugins, so the progress lines reach
the terminal unchanged, and returns the run's ``report.json`` as a dict (docs/fitting.md lists its
keys) with ``"output_dir"`` added. ``hessfit.report`` does the same for ``hessfit report``. A run that
fails raises FitError with the program's exit status; its message is what the program printed on
stderr (also shown on the terminal).
"""
import json
import os
import re
import subprocess
import sys

import openmm


class FitError(RuntimeError):
    """``hessfit fit`` or ``hessfit report`` exited with a non-zero status (``.status``)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _program():
    path = os.path.join(os.path.dirname(__file__), "bin", "hessfit")
    if not os.access(path, os.X_OK):
        raise FitError("hessfit: the package has no hessfit program at %s (a build without the CLI?)" % path, 127)
    return path


def _environment():
    """The program finds the package's libraries, OpenMM's, and the package's kernel plugins."""
    here = os.path.dirname(__file__)
    openmm_lib = os.path.join(os.path.dirname(os.path.dirname(openmm.__file__)), "OpenMM.libs", "lib")
    env = dict(os.environ)
    paths = [os.path.join(here, "lib"), openmm_lib] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    env["LD_LIBRARY_PATH"] = ":".join(paths)
    env.setdefault("HESSFIT_PLUGIN_DIR", os.path.join(here, "lib", "plugins"))
    return env


def _run(arguments):
    """Run the program, its stdout line by line to ours (the progress as the CLI prints it), stderr
    to ours as well; returns the output folder named by its "wrote DIR/{report.txt,..." line."""
    process = subprocess.Popen([_program()] + arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=_environment())
    output_dir = None
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        match = re.match(r"\s*wrote (.*)/\{report\.txt", line)
        if match:
            output_dir = match.group(1)
    errors = process.stderr.read()
    sys.stderr.write(errors)
    status = process.wait()
    if status != 0:
        raise FitError(errors.strip() or "hessfit %s exited with status %d" % (arguments[0], status), status)
    if output_dir is None:
        raise FitError("hessfit %s wrote no report (no 'wrote .../{report.txt,...}' line)" % arguments[0], status)
    return output_dir


def _report(output_dir):
    with open(os.path.join(output_dir, "report.json")) as f:
        result = json.load(f)
    result["output_dir"] = output_dir
    return result


def fit(input_file, output=None, resume=False, max_time=None):
    """Run ``hessfit fit INPUT`` (``--output``, ``--resume``, ``--max-time`` as given) and return its
    report.json as a dict, with "output_dir" added."""
    arguments = ["fit", os.fspath(input_file)]
    if output is not None:
        arguments += ["--output", os.fspath(output)]
    if resume:
        arguments.append("--resume")
    if max_time is not None:
        arguments += ["--max-time", str(max_time)]
    return _report(_run(arguments))


def report(input_file, forcefield=None, output=None):
    """Run ``hessfit report INPUT`` (against ``--forcefield`` when given) and return its report.json
    as a dict, with "output_dir" added."""
    arguments = ["report", os.fspath(input_file)]
    if forcefield is not None:
        arguments += ["--forcefield", os.fspath(forcefield)]
    if output is not None:
        arguments += ["--output", os.fspath(output)]
    return _report(_run(arguments))
