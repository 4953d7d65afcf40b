"""The command line's arguments and config files, checked before anything is opened (no Blender needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabrik_addon.cli.jobs import ChainListJob, IKJob, Job, TargetsJob, UsageError, baked_together
from fabrik_addon.cli.options import in_blender_binary, load_jobs, parse_args, script_args
from fabrik_addon.settings import BakeSettings

CHAIN = ["--armature", "Rig", "--tip", "hand.L", "--target", "Empty"]


def test_module_run_reads_every_argument_after_the_script() -> None:
    argv = ["scripts/tools/fabrik_bake.py", "a.blend", "--tip", "x", "--", "b.blend"]
    assert script_args(argv, inside_blender=False) == ["a.blend", "--tip", "x", "--", "b.blend"]
    assert not in_blender_binary(), "the bpy module, imported or not, is no Blender binary"


def test_blender_run_reads_only_the_arguments_after_the_double_dash() -> None:
    argv = [
        "/opt/blender/blender",
        "-b",
        "scene.blend",
        "--python",
        "scripts/tools/fabrik_bake.py",
        "--",
        "a.blend",
        "-j",
        "2",
    ]
    assert script_args(argv, inside_blender=True) == ["a.blend", "-j", "2"]
    # Without "--" every argument is Blender's.
    assert script_args(["blender", "-b", "scene.blend", "--python", "fabrik_bake.py"], inside_blender=True) == []


def test_blender_run_bakes_the_file_blender_opened_when_no_input_is_given() -> None:
    request = parse_args(CHAIN, open_file=Path("scene.blend"))
    assert request.inputs == (Path("scene.blend"),)
    assert parse_args(["other.blend", *CHAIN], open_file=Path("scene.blend")).inputs == (Path("other.blend"),)


def test_chain_options_become_one_job_with_the_bake_settings() -> None:
    args = ["a.blend", "dir", *CHAIN, "--chain-length", "3", "--frames", "5-20", "--step", "2"]
    args += ["--tolerance", "1e-4", "--max-iterations", "50", "--method", "ccd", "-j", "2", "--report", "r.json"]
    request = parse_args(args)
    assert request.inputs == (Path("a.blend"), Path("dir"))
    assert request.processes == 2
    assert request.report == Path("r.json")
    assert not request.overwrite
    assert parse_args(["a.blend", *CHAIN, "--overwrite"]).overwrite
    (job,) = load_jobs(request)
    assert job.label == "Rig/hand.L"
    assert job.settings == BakeSettings.from_keywords(
        "Rig",
        "Empty",
        tip_bone="hand.L",
        **{
            "chain_length": 3,
            "frame_start": 5,
            "frame_end": 20,
            "frame_step": 2,
            "tolerance": 1e-4,
            "max_iterations": 50,
            "method": "ccd",
        },
    )


def test_frames_accept_blender_notation_and_a_single_frame() -> None:
    assert load_jobs(parse_args(["a.blend", *CHAIN, "--frames", "3..9"]))[0].settings.keywords() == {
        "tip_bone": "hand.L",
        "frame_start": 3,
        "frame_end": 9,
    }
    assert parse_args(["a.blend", *CHAIN, "--frames", "7"]).defaults == {"frame_start": 7, "frame_end": 7}


@pytest.mark.parametrize(
    ("frames", "start", "end"), [("-5--1", -5, -1), ("-5..-1", -5, -1), ("-5-10", -5, 10), ("-3", -3, -3)]
)
def test_frames_may_be_negative_as_a_separate_argument(frames: str, start: int, end: int) -> None:
    for args in (["--frames", frames], [f"--frames={frames}"]):
        assert parse_args(["a.blend", *CHAIN, *args]).defaults == {"frame_start": start, "frame_end": end}


def test_a_negative_number_in_scientific_notation_is_an_options_value() -> None:
    with pytest.raises(UsageError, match=r"^--tolerance must be a positive finite number, got -0\.001$"):
        parse_args(["a.blend", *CHAIN, "--tolerance", "-1e-3"])
    # After "--" every argument is an input, whatever it looks like.
    assert parse_args([*CHAIN, "--", "--frames", "-5--1.blend"]).inputs == (Path("--frames"), Path("-5--1.blend"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a.blend", *CHAIN, "--bogus"], "unrecognized arguments: --bogus"),
        (["a.blend", *CHAIN, "--frames", "10-1"], "reversed"),
        (["a.blend", *CHAIN, "--frames", "ten"], "expected START-END"),
        (["a.blend", "--armature", "Rig", "--target", "Empty"], "missing --tip"),
        (["a.blend", "--tip", "hand"], "missing --armature, --target"),
        (["a.blend", "--replace"], "--replace applies to --targets-from-animation"),
        (["a.blend", "--targets-from-animation", *CHAIN], "leave out --tip, --target"),
        (
            ["a.blend", "--targets-from-animation", "--layer", "--step", "3", "--tolerance", "0.5"],
            "--targets-from-animation solves nothing and keys into the Action: leave out --step, --tolerance, --layer",
        ),
        (
            ["a.blend", "--armature", "R", "--reduce-keys", "--key-error", "0.001", "--method", "ccd"],
            "--reduce-keys solves nothing and keys into the Action: leave out --method",
        ),
        (["a.blend", "--from-ik-constraints"], "give --armature"),
        ([*CHAIN], "no input"),
        (["a.blend", *CHAIN, "--config", "c.toml"], "leave out --armature, --tip, --target"),
        (["a.blend", "--chain-length", "0", "--config", "c.toml"], "leave out --chain-length"),
        (["a.blend", *CHAIN, "--step", "0"], "--step must be a whole number >= 1, got 0"),
        (["a.blend", *CHAIN, "--tolerance", "-1"], "--tolerance must be a positive finite number, got -1"),
        (["a.blend", *CHAIN, "--tolerance", "inf"], "--tolerance must be a positive finite number, got inf"),
        (["a.blend", *CHAIN, "--max-iterations", "0"], "--max-iterations must be a whole number >= 1"),
        (["a.blend", *CHAIN, "--frames", "1-10000000"], "the end of --frames must be one of Blender's frames"),
        (["a.blend", *CHAIN, "--chain-length", "-2"], "--chain-length must be a whole number >= 0"),
        (["a.blend", *CHAIN, "--method", "newton"], "invalid choice: 'newton'"),
        (["a.blend", *CHAIN, "--output", "o", "--in-place"], "not allowed with argument"),
        (["a.blend", *CHAIN, "-j", "0"], "must be 1 or more"),
        (["a.blend", *CHAIN, "--chain-length", "1" + "0" * 400], "--chain-length must be a whole number, got 1000"),
        (["a.blend", *CHAIN, "--step", "1" + "0" * 400], "--step must be a whole number, got 1000"),
        (["a.blend", *CHAIN, "--max-iterations", "1" + "0" * 400], "--max-iterations must be a whole number, got 1"),
    ],
)
def test_usage_errors_name_the_problem(args: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_args(args)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


TOML = """
[[jobs]]
armature = "Rig"
tip_bone = "hand.L"
target = "Hand.IK"
chain_length = 3
frame_start = 10

[[jobs]]
armature = "Tentacle"
tip_bone = "bone.031"
target = "Tip.IK"
files = ["shot_*.blend"]
warm_start = false
pole_target = "Pole"
"""


def test_a_toml_config_lists_several_jobs_and_wins_over_the_options(tmp_path: Path) -> None:
    config = write(tmp_path, "chains.toml", TOML)
    request = parse_args(["a.blend", "--config", str(config), "--frames", "1-100", "--tolerance", "0.01"])
    arm, tentacle = load_jobs(request)
    arm_keywords = {"frame_start": 10, "frame_end": 100, "tolerance": 0.01, "chain_length": 3}
    assert arm == Job(BakeSettings.from_keywords("Rig", "Hand.IK", tip_bone="hand.L", **arm_keywords))
    assert tentacle.settings.keywords() == {
        "tip_bone": "bone.031",
        "frame_start": 1,
        "frame_end": 100,
        "tolerance": 0.01,
        "warm_start": False,
        "pole_target": "Pole",
    }
    assert tentacle.applies_to(Path("/x/shot_010.blend"))
    assert not tentacle.applies_to(Path("/x/asset.blend"))
    assert arm.applies_to(Path("/x/asset.blend"))


def test_jobs_on_one_armature_with_the_same_frames_and_solver_are_baked_together() -> None:
    def job(armature: str, tip: str, **keywords: object) -> Job:
        return Job(BakeSettings.from_keywords(armature, f"{tip}.target", tip_bone=tip, **keywords))

    left, right, tail = job("Y", "left"), job("Y", "right"), job("Y", "tail", frame_end=50)
    other, ik = job("Arm", "hand"), IKJob("Y", {})
    layered, fewer = job("Y", "head", output="layer"), job("Y", "foot", key_error=0.001)
    together = baked_together([left, other, ik, right, tail, layered, fewer])
    assert [j.label for j in together] == ["Y/left+right", "Arm/hand", ik.label, "Y/tail", "Y/head", "Y/foot"]
    first = together[0]
    assert isinstance(first, Job)
    assert first.settings.chains == left.settings.chains + right.settings.chains
    assert (first.settings.frames, first.settings.solver) == (left.settings.frames, left.settings.solver)


def test_a_json_config_reads_as_the_toml_one_and_jobs_round_trip(tmp_path: Path) -> None:
    toml_jobs = load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.toml", TOML))]))
    text = json.dumps({"jobs": [job.to_config() for job in toml_jobs]})
    json_jobs = load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.json", text))]))
    assert json_jobs == toml_jobs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[jobs]]\narmature = "R"\ntip = "b"\ntarget = "E"\n', "unknown key 'tip' \\(did you mean 'tip_bone'\\?\\)"),
        ('[[jobs]]\narmature = "R"\ntarget = "E"\n', "job 1: missing 'tip_bone'"),
        (
            '[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\nchain_length = "3"\n',
            "'chain_length' must be a whole number, got '3'",
        ),
        (
            '[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\nchain_length = true\n',
            "'chain_length' must be a whole number, got True",
        ),
        (
            '[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\nframe_start = 9\nframe_end = 2\n',
            "end before they start",
        ),
        ('[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\nmethod = "x"\n', r"Method \(method\) must be one of"),
        ('[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\npole_target = 3\n', "must be an object's name"),
        (
            '[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\nframe_step = 0\n',
            r"Step \(frame_step\) must be a whole number >= 1",
        ),
        ("jobs = []\n", "'jobs' must be a non-empty list"),
        ('tolerance = 1\n[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\n', "unknown top-level key"),
        ("[[jobs]\n", "does not parse"),
    ],
)
def test_config_mistakes_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    request = parse_args(["a.blend", "--config", str(write(tmp_path, "c.toml", text))])
    with pytest.raises(UsageError, match=message):
        load_jobs(request)


JOB = '{"armature": "Rig", "tip_bone": "hand.L", "target": "Empty"'
IK_JOB = '{"armature": "Rig", "from_ik_constraints": true'


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (f'{JOB}, "files": 5}}', "'files' must be a list of file name patterns \\(strings\\), got 5$"),
        (f'{JOB}, "files": [1, 2]}}', "'files' must be a list of file name patterns \\(strings\\), got \\[1, 2\\]$"),
        (f'{IK_JOB}, "files": 5}}', "'files' must be a list of file name patterns \\(strings\\), got 5$"),
        (f'{IK_JOB}, "files": [1]}}', "'files' must be a list of file name patterns \\(strings\\), got \\[1\\]$"),
        (f'{JOB}, "chain_length": 1{"0" * 400}}}', "'chain_length' must be a whole number, got 1000000.*401 digits"),
        (f'{JOB}, "tolerance": 1{"0" * 400}}}', "'tolerance' must be a number, got 1000000.*401 digits"),
        (f'{IK_JOB}, "frame_end": 1{"0" * 400}}}', "'frame_end' must be a whole number, got 1000000.*401 digits"),
        (f'{JOB}, "tolerance": "0.1"}}', "'tolerance' must be a number, got '0.1'$"),
        (f'{JOB}, "use_stretch": 1}}', "'use_stretch' must be true or false, got 1$"),
        (f'{JOB}, "tip_bone": 3}}', "'tip_bone' must be a string, got 3$"),
        ('{"armature": "Rig", "from_ik_constraints": "yes"}', "'from_ik_constraints' must be true or false"),
        (f'{IK_JOB}, "after": 1}}', "'after' must be a string, got 1$"),
    ],
)
def test_a_config_value_of_the_wrong_type_is_one_line_naming_the_key_and_type(
    tmp_path: Path, job: str, message: str
) -> None:
    config = write(tmp_path, "c.json", f'{{"jobs": [{job}]}}')
    with pytest.raises(UsageError, match=f"^{config}: job 1: {message}") as raised:
        load_jobs(parse_args(["a.blend", "--config", str(config)]))
    assert "\n" not in str(raised.value)


def test_a_config_file_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_bytes('[[jobs]]\narmature = "Rig"\ntip_bone = "hand.L"\ntarget = "Cible é"\n'.encode("latin-1"))
    message = f"^{config} is not UTF-8 text \\(byte 0xe9 at offset 62\\): save it as UTF-8$"
    with pytest.raises(UsageError, match=message):
        load_jobs(parse_args(["a.blend", "--config", str(config)]))
    # A byte order mark, as some editors write, is not a mistake.
    config.write_bytes(b"\xef\xbb\xbf" + b'[[jobs]]\narmature = "Rig"\ntip_bone = "h"\ntarget = "E"\n')
    assert load_jobs(parse_args(["a.blend", "--config", str(config)]))[0].label == "Rig/h"


def test_every_bake_keyword_has_a_kind_a_config_checks() -> None:
    from fabrik_addon.cli.job_entries import KINDS
    from fabrik_addon.settings import KEYWORDS

    assert set(KEYWORDS) <= set(KINDS)


def test_a_missing_or_unknown_kind_of_config_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the config file"):
        load_jobs(parse_args(["a.blend", "--config", str(tmp_path / "none.toml")]))
    with pytest.raises(UsageError, match=r"must end in \.toml or \.json"):
        load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.yaml", "jobs: []"))]))


def test_ik_constraints_jobs_from_the_command_line_and_from_a_config(tmp_path: Path) -> None:
    request = parse_args(
        ["a.blend", "--armature", "Rig", "--from-ik-constraints", "--after", "remove", "--frames", "2-9"]
    )
    (job,) = load_jobs(request)
    assert job == IKJob("Rig", {"after": "remove", "frame_start": 2, "frame_end": 9})
    assert job.label == "Rig/IK constraints"
    text = '[[jobs]]\narmature = "Rig"\nfrom_ik_constraints = true\ntolerance = 0.01\nfiles = ["shot_*.blend"]\n'
    (from_config,) = load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.toml", text))]))
    assert from_config == IKJob("Rig", {"tolerance": 0.01}, ("shot_*.blend",))
    round_trip = json.dumps({"jobs": [from_config.to_config()]})
    assert load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.json", round_trip))])) == (from_config,)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from-ik-constraints", "--armature", "Rig", "--tip", "x"], "leave out --tip"),
        (["--from-ik-constraints"], "give --armature"),
        ([*CHAIN, "--after", "keep"], "--after applies to --from-ik-constraints"),
        (
            ["--from-ik-constraints", "--armature", "Rig", "--method", "ccd"],
            r"baked with FABRIK \(leave out --method\)$",
        ),
        (["--from-ik-constraints", "--armature", "Rig", "--tolerance", "0"], "--tolerance must be a positive"),
    ],
)
def test_ik_constraints_usage_errors(args: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_jobs(parse_args(["a.blend", *args]))


def test_an_ik_constraints_job_in_a_config_takes_only_its_keys(tmp_path: Path) -> None:
    text = '[[jobs]]\narmature = "Rig"\nfrom_ik_constraints = true\ntip_bone = "x"\n'
    with pytest.raises(UsageError, match=r"an IK constraints job takes .*; not tip_bone"):
        load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.toml", text))]))


def test_only_files_or_only_an_armature_bake_the_chain_lists_saved_in_them() -> None:
    """A file set up in the sidebar bakes as it is: no chain options (or only --armature) bake the saved chain
    lists, with the options given in place of their settings (it used to be refused: the chains had to be typed
    again)."""
    (every,) = load_jobs(parse_args(["a.blend"]))
    assert every == ChainListJob(None, {})
    assert every.label == "*/chain list"
    (one,) = load_jobs(
        parse_args(["a.blend", "--armature", "Rig", "--frames", "5-20", "--layer", "--tolerance", "1e-4"])
    )
    assert one == ChainListJob("Rig", {"frame_start": 5, "frame_end": 20, "output": "layer", "tolerance": 1e-4})


def test_layer_is_every_bake_job_s_output(tmp_path: Path) -> None:
    (chain,) = load_jobs(parse_args(["a.blend", *CHAIN, "--layer"]))
    assert isinstance(chain, Job)
    assert chain.settings.output == "layer"
    (ik,) = load_jobs(parse_args(["a.blend", "--armature", "Rig", "--from-ik-constraints", "--layer"]))
    assert ik == IKJob("Rig", {"output": "layer"})
    config = write(tmp_path, "c.toml", '[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\noutput = "layer"\n')
    (from_config,) = load_jobs(parse_args(["a.blend", "--config", str(config)]))
    assert isinstance(from_config, Job)
    assert from_config.settings.output == "layer"
    bad = write(tmp_path, "bad.toml", '[[jobs]]\narmature = "R"\ntip_bone = "b"\ntarget = "E"\noutput = "nla"\n')
    with pytest.raises(UsageError, match=r"Output \(output\) must be one of 'action', 'layer', got 'nla'"):
        load_jobs(parse_args(["a.blend", "--config", str(bad)]))


def test_targets_from_animation_jobs_from_the_command_line_and_a_config(tmp_path: Path) -> None:
    (made,) = load_jobs(parse_args(["a.blend", "--targets-from-animation", "--replace", "--frames", "1-50"]))
    assert made == TargetsJob(None, {"frame_start": 1, "frame_end": 50, "replace": True})
    (no_poles,) = load_jobs(parse_args(["a.blend", "--armature", "Rig", "--targets-from-animation", "--no-poles"]))
    assert no_poles == TargetsJob("Rig", {"poles": False})
    text = (
        '[[jobs]]\narmature = "Rig"\ntargets_from_animation = true\nchains = ["hand.L"]\n'
        '[[jobs]]\narmature = "Rig"\nchain_list = true\noutput = "layer"\n'
    )
    targets, chains = load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "edit.toml", text))]))
    assert targets == TargetsJob("Rig", {"chains": ["hand.L"]})
    assert chains == ChainListJob("Rig", {"output": "layer"})
    again = write(tmp_path, "again.json", json.dumps({"jobs": [targets.to_config(), chains.to_config()]}))
    assert load_jobs(parse_args(["a.blend", "--config", str(again)])) == (targets, chains)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[jobs]]\nchain_list = true\ntip_bone = "b"\n', "bakes the chains saved in the file: leave out 'tip_bone'"),
        ("[[jobs]]\ntargets_from_animation = true\npole = true\n", "unknown key 'pole' \\(did you mean 'poles'\\?\\)"),
        ('[[jobs]]\ntargets_from_animation = true\nchains = "hand"\n', "'chains' must be a non-empty list"),
        ("[[jobs]]\nchain_list = true\nframe_step = 0\n", r"Step \(frame_step\) must be a whole number >= 1"),
    ],
)
def test_chain_list_and_targets_jobs_refuse_what_they_do_not_take(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.toml", text))]))
