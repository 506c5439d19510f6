"""The intervene and anchors commands refuse bad input in one line, before any model loads."""
import pytest

from resdecay_lib.__main__ import main


@pytest.mark.parametrize("argv, word", [
    (["intervene", "predict", "gpt5"], "MODEL must be one of"),
    (["intervene", "measure", "smollm2", "--root", "/nonexistent"], "--root must be the book's folder"),
    (["anchors", "gpt5"], "MODEL must be one of"),
    (["anchors", "smollm2-135m", "--root", "/nonexistent"], "--root must be the book's folder"),
])
def test_bad_input_is_one_line_and_exit_2(argv, word, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert word in err and "\n" not in err and err.startswith(argv[0] + ":")


def test_intervene_takes_only_its_two_steps_in_order(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["intervene", "forecast", "smollm2"])
    assert exc.value.code == 2 and "predict" in capsys.readouterr().err


def test_a_measurement_without_a_committed_prediction_is_refused(tmp_path, capsys):
    (tmp_path / "results").mkdir()
    assert main(["intervene", "measure", "smollm2", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "must be committed" in err or "has no commit" in err
