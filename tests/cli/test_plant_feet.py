"""Planting feet from the command line: ``--plant-feet`` and config jobs with ``plant_feet``, checked before
anything is opened, and what the report and the printed lines say of a planting (no Blender needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabrik_addon.cli.job_entries import KINDS
from fabrik_addon.cli.jobs import Job, PlantJob, UsageError, baked_together
from fabrik_addon.cli.options import load_jobs, parse_args
from fabrik_addon.cli.report import (
    ChainResult,
    FileResult,
    FootResult,
    PlantResult,
    file_done,
    from_json,
    off_target,
    summary,
    to_json,
)
from fabrik_addon.planting import PLANT_KEYWORDS, PlantSettings
from fabrik_addon.settings import BakeSettings

from .test_options import write

FEET = ["--armature", "Walk", "--plant-feet", "LeftFoot,RightFoot"]


def test_plant_feet_options_become_one_planting_job_with_the_bake_settings() -> None:
    request = parse_args(["a.blend", *FEET, "--hips", "Hips", "--leg-bones", "4", "--frames", "5-20"])
    (job,) = load_jobs(request)
    keywords = {"hips_bone": "Hips", "chain_length": 4, "frame_start": 5, "frame_end": 20}
    assert job == PlantJob("Walk", ("LeftFoot", "RightFoot"), keywords)
    assert job.label == "Walk/LeftFoot+RightFoot"
    assert job.settings == PlantSettings.from_keywords("Walk", ["LeftFoot", "RightFoot"], **keywords)
    assert job.settings.hips_bone == "Hips"
    assert job.settings.chain_length == 4
    # Spaces around the names are the shell's, not the bones'; nothing but the feet: the API's defaults.
    (bare,) = load_jobs(parse_args(["a.blend", "--armature", "Walk", "--plant-feet", " LeftFoot , Right Foot"]))
    assert bare == PlantJob("Walk", ("LeftFoot", "Right Foot"), {})
    assert (bare.settings.chain_length, bare.settings.hips_bone) == (3, "")


def test_tolerance_and_iterations_reach_the_planting() -> None:
    (job,) = load_jobs(parse_args(["a.blend", *FEET, "--tolerance", "1e-4", "--max-iterations", "30", "--step", "1"]))
    assert isinstance(job, PlantJob)
    assert job.keywords == {"tolerance": 1e-4, "max_iterations": 30}  # a step of 1 is every frame
    assert (job.settings.rules.tolerance, job.settings.solver.max_iterations) == (1e-4, 30)  # leg lengths


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [*FEET, "--tip", "hand.L", "--target", "E"],
            "^--plant-feet plants the feet of --armature NAME: leave out --tip, --target$",
        ),
        ([*FEET, "--from-ik-constraints"], "leave out --from-ik-constraints$"),
        ([*FEET, "--config", "c.toml"], "leave out --config$"),
        ([*FEET, "--chain-length", "3"], r"leave out --chain-length \(--leg-bones N: the bones in each leg\)$"),
        (["--plant-feet", "LeftFoot"], "^--plant-feet plants the feet of --armature NAME: give --armature$"),
        ([*FEET[:2], "--tip", "hand.L", "--target", "E", "--hips", "Hips"], "^--hips applies to --plant-feet$"),
        (
            ["--config", "c.toml", "--hips", "Hips", "--leg-bones", "2"],
            "^--hips and --leg-bones apply to --plant-feet$",
        ),
        ([*FEET, "--leg-bones", "1"], r"^--leg-bones must be a whole number >= 2 \(the foot and the bones above it\)"),
        ([*FEET, "--leg-bones", "-2"], "^--leg-bones must be a whole number >= 2"),
        ([*FEET, "--hips", "LeftFoot"], "^--hips 'LeftFoot' is one of the feet"),
        ([*FEET, "--step", "2"], r"^feet are planted on every frame \(leave out --step\)$"),
        ([*FEET, "--method", "ccd"], r"^feet are planted with FABRIK \(leave out --method\)$"),
        ([*FEET, "--tolerance", "0"], "^--tolerance must be a positive finite number"),
        ([*FEET, "--frames", "1-10000000"], "^the end of --frames must be one of Blender's frames"),
        (["--armature", "Walk", "--plant-feet", "LeftFoot,,RightFoot"], "argument --plant-feet: expected foot bones'"),
        (["--armature", "Walk", "--plant-feet", ""], "argument --plant-feet: expected foot bones' names separated"),
        (["--armature", "Walk", "--plant-feet", "LeftFoot,LeftFoot"], "foot bone 'LeftFoot' is named twice"),
    ],
)
def test_planting_usage_errors_name_the_options(args: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_jobs(parse_args(["a.blend", *args]))


TOML = """
[[jobs]]
armature = "Walk"
plant_feet = ["LeftFoot", "RightFoot"]
hips_bone = "Hips"
chain_length = 4
contact_height = 0.05
contact_gap = 2
blend_seconds = 0.1
pin_at = "start"
use_marks = false
floor = 0.0
files = ["walk_*.blend"]

[[jobs]]
armature = "Rig"
tip_bone = "hand.L"
target = "Hand.IK"
"""


def test_a_config_plants_feet_beside_chains_and_wins_over_the_options(tmp_path: Path) -> None:
    request = parse_args(["a.blend", "--config", str(write(tmp_path, "c.toml", TOML)), "--frames", "1-100"])
    walk, arm = load_jobs(request)
    keywords = {"hips_bone": "Hips", "chain_length": 4, "contact_height": 0.05, "contact_gap": 2}
    keywords |= {"blend_seconds": 0.1, "pin_at": "start", "use_marks": False, "floor": 0.0}
    patterns = ("walk_*.blend",)
    assert walk == PlantJob(
        "Walk", ("LeftFoot", "RightFoot"), {"frame_start": 1, "frame_end": 100, **keywords}, patterns
    )
    assert (walk.settings.rules.contacts.gap_frames, walk.settings.rules.pin_at) == (2, "start")
    assert walk.applies_to(Path("/x/walk_01.blend"))
    assert not walk.applies_to(Path("/x/run_01.blend"))
    assert isinstance(arm, Job)
    # Each planting is its own bake: it is not joined with chains on the same armature.
    chain = Job(BakeSettings.from_keywords("Walk", "E", tip_bone="LeftFoot", frame_start=1, frame_end=100))
    assert baked_together([walk, chain, walk]) == [walk, chain, walk]
    # The -j children read the jobs back from the config their parent writes.
    text = json.dumps({"jobs": [job.to_config() for job in (walk, arm)]})
    assert load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.json", text))])) == (walk, arm)


def test_a_whole_number_written_as_json_float_is_a_whole_number(tmp_path: Path) -> None:
    text = '{"jobs": [{"armature": "W", "plant_feet": ["L"], "contact_gap": 2.0, "chain_length": 3.0}]}'
    (job,) = load_jobs(parse_args(["a.blend", "--config", str(write(tmp_path, "c.json", text))]))
    assert isinstance(job, PlantJob)
    assert job.keywords == {"contact_gap": 2, "chain_length": 3}
    assert job.settings.rules.contacts.gap_frames == 2


PLANT = '{"armature": "Walk", "plant_feet": ["LeftFoot"]'


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (
            '{"armature": "W", "plant_feet": "L,R"}',
            r"'plant_feet' must be a non-empty list of bone names \(strings\), got 'L,R'$",
        ),
        (
            '{"armature": "W", "plant_feet": []}',
            r"'plant_feet' must be a non-empty list of bone names \(strings\), got \[\]$",
        ),
        ('{"armature": "W", "plant_feet": ["L", ""]}', "'plant_feet' must be a non-empty list of bone names"),
        ('{"plant_feet": ["L"]}', "missing 'armature'$"),
        (f'{PLANT}, "hips_bone": 3}}', "'hips_bone' must be a string, got 3$"),
        (f'{PLANT}, "contact_height": "low"}}', "'contact_height' must be a number, got 'low'$"),
        (f'{PLANT}, "contact_gap": 1.5}}', "'contact_gap' must be a whole number, got 1.5$"),
        (f'{PLANT}, "use_marks": 1}}', "'use_marks' must be true or false, got 1$"),
        (f'{PLANT}, "floor": null}}', "'floor' must be a number, got None$"),
        (f'{PLANT}, "pin_at": "end"}}', r"Pin At \(pin_at\) must be one of 'middle', 'start', got 'end'$"),
        (f'{PLANT}, "chain_length": 1}}', r"Leg Length \(chain_length\) must be a whole number >= 2"),
        (f'{PLANT}, "hips_speed": 0}}', r"Hips Speed \(hips_speed\) must be a number > 0"),
        (
            f'{PLANT}, "frame_start": 9, "frame_end": 2}}',
            r"the frames end before they start: End \(frame_end\) 2, Start \(frame_start\) 9$",
        ),
        (
            f'{PLANT}, "tip_bone": "x", "target": "E"}}',
            r"a job planting feet takes no 'tip_bone', 'target' \(keys of a chain to bake\)$",
        ),
        (f'{PLANT}, "frame_step": 2}}', "feet are planted on every frame: leave out 'frame_step'$"),
        (f'{PLANT}, "hips": "Hips"}}', r"unknown key 'hips' \(did you mean 'hips_bone'\?\)"),
    ],
)
def test_a_planting_config_job_is_checked_as_the_others_are(tmp_path: Path, job: str, message: str) -> None:
    config = write(tmp_path, "c.json", f'{{"jobs": [{job}]}}')
    with pytest.raises(UsageError, match=f"^{config}: job 1: {message}") as raised:
        load_jobs(parse_args(["a.blend", "--config", str(config)]))
    assert "\n" not in str(raised.value)


def test_options_for_every_job_that_planting_cannot_take_are_refused_in_config_jobs(tmp_path: Path) -> None:
    config = str(write(tmp_path, "c.json", f'{{"jobs": [{PLANT}}}]}}'))
    with pytest.raises(UsageError, match=r"job 1: feet are planted on every frame \(leave out --step\)$"):
        load_jobs(parse_args(["a.blend", "--config", config, "--step", "2"]))
    with pytest.raises(UsageError, match=r"job 1: feet are planted with FABRIK \(leave out --method\)$"):
        load_jobs(parse_args(["a.blend", "--config", config, "--method", "ccd"]))
    assert load_jobs(parse_args(["a.blend", "--config", config, "--method", "fabrik", "--step", "1"]))


def test_every_planting_keyword_has_a_kind_a_config_checks() -> None:
    assert {"plant_feet", *PLANT_KEYWORDS} <= set(KINDS)


def foot(name: str, *, out: tuple[int, ...] = (), off: tuple[int, ...] = ()) -> FootResult:
    """A foot whose pins were out of reach on ``out`` and its ball off its goal there, and for its IK limits on
    ``off``."""
    why = (("out of reach", out), ("IK limits", tuple(frame for frame in off if frame not in out)))
    missed = tuple(sorted({*out, *off}))
    return FootResult(
        name, ((1, 20), (40, 60)), (0.02, 0.03), (0.00007, 0.0001), out, missed, tuple(c for c in why if c[1])
    )


def planting(
    *feet: FootResult,
    drop: float = 0.0,
    metres_per_unit: float = 1.0,
    unit: tuple[str, float] = ("mm", 0.001),
    warnings: tuple[str, ...] = (),
) -> PlantResult:
    return PlantResult("Walk", feet, (1, 120), 9.9e-4, drop, metres_per_unit, 0.4, unit, warnings)


def test_a_planting_is_reported_in_json_and_reads_back() -> None:
    planted = planting(foot("LeftFoot", out=(7, 8)), foot("RightFoot", off=(9,)), drop=0.02, warnings=("long",))
    results = [FileResult("/w.blend", "/w_baked.blend", "ok", None, (), (planted,))]
    data = json.loads(json.dumps(to_json(results)))
    assert data["files"][0]["chains"] == []
    (entry,) = data["files"][0]["plantings"]
    assert entry == {
        "armature": "Walk",
        "frames": [1, 120],
        "max_error": 9.9e-4,
        "max_hips_drop": 0.02,
        "metres_per_unit": 1.0,
        "length_unit": ["mm", 0.001],
        "warnings": ["long"],
        "seconds": 0.4,
        "feet": [
            {
                "foot": "LeftFoot",
                "contacts": [[1, 20], [40, 60]],
                "skate_before": [0.02, 0.03],
                "skate_after": [0.00007, 0.0001],
                "out_of_reach_frames": [7, 8],
                "off_target_frames": [7, 8],
                "off_target": {"out of reach": [7, 8]},
            },
            {
                "foot": "RightFoot",
                "contacts": [[1, 20], [40, 60]],
                "skate_before": [0.02, 0.03],
                "skate_after": [0.00007, 0.0001],
                "out_of_reach_frames": [],
                "off_target_frames": [9],
                "off_target": {"IK limits": [9]},
            },
        ],
        "keys": None,
    }
    assert from_json(data) == results


def test_a_planted_files_line_says_contacts_skate_error_hips_and_frames_missed() -> None:
    planted = planting(foot("LeftFoot"), foot("RightFoot"), drop=0.0218)
    done = FileResult("/w/walk.blend", "/w/walk_baked.blend", "ok", None, (), (planted,))
    assert file_done(done, 0.52, "[1/2] ") == (
        "[1/2] walk.blend: ok (0.52 s): planted LeftFoot, RightFoot: 4 contacts, skate up to 30.0 -> 0.1 mm, "
        "max error 0.99 mm, hips lowered up to 21.8 mm -> /w/walk_baked.blend"
    )
    # Lengths in the scene's unit with its name (a Unit Scale of 0.01 and centimetres: one unit is one cm),
    # frames missed, and what may not be meant.
    unit = ("cm", 1.0)
    missed = planting(
        foot("LeftFoot", out=(3, 4, 5)), foot("RightFoot", off=(8,)), metres_per_unit=0.01, unit=unit, warnings=("w",)
    )
    chain = ChainResult("Walk", "hand.L", (1, 120), 2e-4, (), (), 0.1, length_unit=unit)
    both = FileResult("/w/walk.blend", "/w/walk_baked.blend", "ok", None, (chain,), (missed,))
    assert file_done(both, 1.0) == (
        "walk.blend: ok (1.00 s): 1 chain, max error 0.0002 cm; planted LeftFoot, RightFoot: 4 contacts, skate up "
        "to 0.03 -> 0.0001 cm, max error 0.00099 cm, 3 frames out of reach, 4 frames off target (3 out of reach, 1 IK "
        "limits); warning: w "
        "-> /w/walk_baked.blend"
    )


def test_strict_counts_pins_out_of_reach_and_balls_off_target() -> None:
    clean = FileResult("/a.blend", "/a_baked.blend", "ok", None, (), (planting(foot("L"), foot("R")),))
    assert off_target([clean]) == []
    assert summary([clean], 1.0, strict=True) == "baked 1 of 1 file(s) in 1.0 s"
    left, right = foot("L", out=(3, 4), off=(4, 5)), foot("R", out=(9,))
    missed = FileResult("/b.blend", "/b_baked.blend", "ok", None, (), (planting(left, right),))
    assert off_target([clean, missed]) == [left, right]
    assert summary([clean, missed], 2.0, strict=True) == (
        "baked 2 of 2 file(s) in 2.0 s; 4 frames off target (3 out of reach, 1 IK limits) in 2 legs (--strict: exit "
        "status 3)"
    )
    chain = ChainResult("Rig", "hand.L", (1, 9), 0.5, (), (2,), 0.1, (("the scene", (2,)),))
    with_chain = FileResult("/c.blend", "/c_baked.blend", "ok", None, (chain,), (planting(left),))
    assert summary([with_chain], 1.0) == (
        "baked 1 of 1 file(s) in 1.0 s; 4 frames off target (1 the scene, 2 out of reach, 1 IK limits) in 1 chain and "
        "1 leg"
    )
