"""benchmarks.compare: alternate runs of two checkouts, medians and their ratio."""

from __future__ import annotations

import pytest

from benchmarks import compare


def test_compares_a_checkout_with_itself(capsys):
    compare.main([str(compare.HERE), "--rounds", "1", "--poses", "2", "--repeats", "1", "--size", "32x24"])
    lines = capsys.readouterr().out.splitlines()
    medians = {line.split()[1]: line.split() for line in lines if line.startswith("median")}
    assert set(medians) == {"this", "other"}
    for fields in medians.values():  # capture fps | capture + SoM fps, both measured
        assert float(fields[2]) > float(fields[4]) > 0
    ratio = lines[-1].split()
    assert ratio[:2] == ["ratio", "this/other"] and float(ratio[2]) > 0 and float(ratio[4]) > 0


@pytest.mark.parametrize("argv, message", [
    (["{tmp}"], "holds no situ_gym package"),
    (["{here}", "--size", "8x8"], "must be >= 16"),
    (["{here}", "--rounds", "0"], "must be >= 1"),
    ([], "give the checkout"),
])
def test_bad_arguments_are_one_line_errors(argv, message, tmp_path, capsys):
    argv = [a.format(tmp=tmp_path, here=compare.HERE) for a in argv]
    with pytest.raises(SystemExit) as exc:
        compare.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
