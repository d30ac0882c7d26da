"""The fit driver from Python (hessfit.fit, hessfit.report): the CH3F example run as `hessfit fit` runs
it, its report as a dict with q2mm's start score and a converged fit, the progress on stdout, and a
failing input raising FitError with the program's message and exit status."""
import os

import pytest

import hessfit

SOURCE_DIR = os.environ.get("HESSFIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CH3F = os.path.join(SOURCE_DIR, "examples", "ch3f.fit")


def test_fit_ch3f(tmp_path, capfd):
    result = hessfit.fit(CH3F, output=tmp_path / "out")
    progress = capfd.readouterr().out
    assert "  eval " in progress and "done: loss" in progress  # the CLI's progress lines, unchanged
    assert result["output_dir"] == str(tmp_path / "out")
    objective = result["objectives"][0]
    assert round(objective["loss_before"], 6) == 0.221445  # q2mm's score at its Seminario start
    assert objective["loss_after"] < 1e-8
    assert len(result["parameters"]) == 8
    assert (tmp_path / "out" / "fitted.frcmod").stat().st_size > 0


def test_report_ch3f(tmp_path):
    result = hessfit.report(CH3F, output=tmp_path / "rep")
    assert round(result["objectives"][0]["loss_before"], 6) == 0.221445
    assert (tmp_path / "rep" / "report.txt").exists()


def test_fit_error(tmp_path):
    bad = tmp_path / "bad.fit"
    bad.write_text("forcefield = missing.frcmod\nstructures = missing.xyz\nfree = bond k\n")
    with pytest.raises(hessfit.FitError) as error:
        hessfit.fit(bad, output=tmp_path / "never")
    assert error.value.status == 1
    assert "missing.frcmod" in str(error.value)
    assert not (tmp_path / "never").exists()
