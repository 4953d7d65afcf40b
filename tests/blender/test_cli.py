"""scripts/tools/fabrik_bake.py end to end: subprocesses with the bpy module, outputs re-opened and evaluated by
Blender."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import bpy
import pytest
import rigs

from fabrik_addon.words import length_words

from .cli_scenes import CHAIN, FRAMES, TOLERANCE, digest, run_cli, save_scene, tip_errors


def test_a_bake_reopened_is_on_target_and_the_report_says_so(tmp_path: Path) -> None:
    source = save_scene(tmp_path / "shot.blend")
    before = digest(source)
    run = run_cli(source, *CHAIN, "--tolerance", TOLERANCE, "--report", tmp_path / "report.json")
    assert run.returncode == 0, run.stderr
    output = tmp_path / "shot_baked.blend"
    report = json.loads((tmp_path / "report.json").read_text())
    (entry,) = report["files"]
    (chain,) = entry.pop("chains")
    assert entry.pop("plantings") == []
    assert entry.pop("targets") == []
    assert entry.pop("reduced") == []
    assert entry == {"input": str(source), "output": str(output), "status": "ok", "error": None}
    assert set(chain) == {
        "armature",
        "tip_bone",
        "frames",
        "max_error",
        "unreachable_frames",
        "off_target_frames",
        "off_target",
        "seconds",
        "keys",
        "length_unit",
    }
    assert chain["keys"] is None  # keyed on every frame: no --key-error
    assert chain["length_unit"] == ["mm", 0.001]  # the lines' unit: a scene of metres
    assert (chain["armature"], chain["tip_bone"], chain["frames"]) == ("Rig", "bone.002", [1, 12])
    assert chain["unreachable_frames"] == []
    assert chain["off_target_frames"] == []
    assert chain["off_target"] == {}
    assert chain["seconds"] > 0
    assert digest(source) == before, "the input must not change"
    assert "shot.blend: Rig/bone.002: 100%" in run.stderr
    assert "[1/1] shot.blend: ok (" in run.stderr
    # In the scene's unit (words tested in tests/test_words.py), not 1.2e-05.
    assert f"s): 1 chain, max error {length_words(chain['max_error'], ('mm', 0.001))} -> {output}" in run.stderr
    # Blender, opening the output, puts the tip on the target on every frame, as the report says.
    errors = tip_errors(output)
    assert errors.max() <= TOLERANCE * 1.001
    assert chain["max_error"] == pytest.approx(errors.max(), abs=1e-6)
    assert not any(pb.constraints for pb in bpy.data.objects["Rig"].pose.bones)


def test_parallel_files_with_a_missing_armature_and_a_missing_input(tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    for name in ("good1", "good2"):
        save_scene(shots / f"{name}.blend")
    save_scene(shots / "bad.blend", armature="Other")
    bad_before = digest(shots / "bad.blend")
    gone = tmp_path / "gone.blend"
    run = run_cli(shots, gone, *CHAIN, "-j", 2, "--report", tmp_path / "report.json")
    assert run.returncode == 1, run.stderr
    files = json.loads((tmp_path / "report.json").read_text())["files"]
    assert [(Path(f["input"]).name, f["status"]) for f in files] == [
        ("bad.blend", "error"),
        ("good1.blend", "ok"),
        ("good2.blend", "ok"),
        ("gone.blend", "error"),
    ]
    bad, good1, good2, missing = files
    assert bad["error"] == "armature 'Rig' not found (armatures in the file: 'Other')"
    assert (bad["output"], bad["chains"]) == (None, [])
    assert missing["error"] == "no such file or folder"
    lines = run.stderr.splitlines()
    assert any(
        re.fullmatch(r"\[\d/4\] bad\.blend: error \(\d+\.\d\d s\): armature 'Rig' not found .*", line) for line in lines
    )
    numbered = sorted(line.split("]")[0] for line in lines if line.startswith("["))
    assert numbered == ["[1/4", "[2/4", "[3/4", "[4/4"]  # one line per file, numbered among all
    assert sorted(p.name for p in shots.iterdir()) == [
        "bad.blend",
        "good1.blend",
        "good1_baked.blend",
        "good2.blend",
        "good2_baked.blend",
    ], "no output (nor temporary file) for the failed file"
    assert digest(shots / "bad.blend") == bad_before
    for good in (good1, good2):
        (chain,) = good["chains"]
        assert tip_errors(Path(good["output"])).max() == pytest.approx(chain["max_error"], abs=1e-6)
        assert chain["max_error"] <= TOLERANCE * 1.001


def test_parallel_and_serial_bakes_print_the_same_lines(tmp_path: Path) -> None:
    """The same lines, each whole: per chain (baking, every quarter), per file (numbered as files finish, the
    -j children's in any order) and the summary; only the times differ."""
    shots = tmp_path / "shots"
    for name in ("good1", "good2", "good3"):
        save_scene(shots / f"{name}.blend")
    save_scene(shots / "bad.blend", armature="Other")

    def lines(*options: object) -> list[str]:
        run = run_cli(shots, tmp_path / "gone.blend", *CHAIN, "--output", tmp_path / "out", "--overwrite", *options)
        assert run.returncode == 1, run.stderr
        text = re.sub(r"\(\d+\.\d\d s\)|in \d+\.\d s", "(time)", run.stderr)
        return sorted(re.sub(r"^\[\d/", "[n/", line) for line in text.splitlines())

    serial = lines()
    assert lines("-j", 2) == serial
    assert sum(line.endswith(": Rig/bone.002: 100%") for line in serial) == 3
    assert sum(line.startswith("[n/5] ") for line in serial) == 5
    assert "[n/5] bad.blend: error (time): armature 'Rig' not found (armatures in the file: 'Other')" in serial


def test_no_process_leaves_a_temporary_folder_behind(tmp_path: Path) -> None:
    """Each process, the command and its -j children, leaves at once at the end (Blender's teardown can
    crash): Blender's own folder for the session's temporary files goes with it."""
    shots = tmp_path / "shots"
    for name in ("one", "two"):
        save_scene(shots / f"{name}.blend")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    for processes in (1, 2):
        run = run_cli(shots, *CHAIN, "-j", processes, "--overwrite", env={"TMPDIR": str(temporary)})
        assert run.returncode == 0, run.stderr
        assert list(temporary.iterdir()) == []


def test_a_config_bakes_several_chains_per_file_with_options_passed_through(tmp_path: Path) -> None:
    source = save_scene(tmp_path / "two.blend", second_chain=True)
    config = tmp_path / "chains.toml"
    config.write_text(
        '[[jobs]]\narmature = "Rig"\ntip_bone = "bone.002"\ntarget = "Target"\naction_name = "RigBaked"\n'
        '[[jobs]]\narmature = "Arm"\ntip_bone = "bone.001"\ntarget = "Target2"\nframe_start = 3\nframe_end = 9\n'
    )
    run = run_cli(
        source, "--config", config, "--step", 2, "--output", tmp_path / "out", "--report", tmp_path / "r.json"
    )
    assert run.returncode == 0, run.stderr
    (entry,) = json.loads((tmp_path / "r.json").read_text())["files"]
    assert entry["output"] == str(tmp_path / "out" / "two.blend")
    assert [(c["armature"], c["tip_bone"], c["frames"]) for c in entry["chains"]] == [
        ("Rig", "bone.002", [1, 12]),  # every 2nd frame of the scene's 1-12, and 12
        ("Arm", "bone.001", [3, 9]),
    ]
    errors = tip_errors(Path(entry["output"]), "Arm", "bone.001", "Target2")
    assert errors[2:9:2].max() <= TOLERANCE * 1.001  # the keyed frames 3, 5, 7, 9
    assert bpy.data.objects["Rig"].animation_data.action.name == "RigBaked"


def test_config_jobs_sharing_bones_are_baked_together_as_one_tree(tmp_path: Path) -> None:
    rigs.new_file(FRAMES)
    rig, tips, bones = rigs.y_rig()
    targets = [target.name for target in rigs.posed_targets(rig, tips, bones, FRAMES)]
    source = tmp_path / "y.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    config = tmp_path / "y.toml"
    config.write_text(
        "".join(
            f'[[jobs]]\narmature = "Y"\ntip_bone = "{tip}"\ntarget = "{target}"\nchain_length = 10\n'
            for tip, target in zip(tips, targets, strict=True)
        )
    )
    run = run_cli(source, "--config", config, "--report", tmp_path / "r.json")
    assert run.returncode == 0, run.stderr
    (entry,) = json.loads((tmp_path / "r.json").read_text())["files"]
    assert [c["tip_bone"] for c in entry["chains"]] == tips  # one line per tip
    # Baked one after the other, the second chain would move the shared trunk away from the first's target.
    for tip, target in zip(tips, targets, strict=True):
        errors = tip_errors(Path(entry["output"]), "Y", tip, target)
        assert errors.max() <= TOLERANCE * 1.001, tip
    assert f"y.blend: Y/{tips[0]}+{tips[1]}: baking" in run.stderr  # in one bake


def test_in_place_replaces_the_input_only_when_the_bake_succeeds(tmp_path: Path) -> None:
    source = save_scene(tmp_path / "shot.blend")
    before = digest(source)
    failed = run_cli(source, "--in-place", "--armature", "Rig", "--tip", "bone.009", "--target", "Target")
    assert failed.returncode == 1
    assert "armature 'Rig' has no bone 'bone.009'" in failed.stderr
    assert digest(source) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot.blend"], "no temporary file left behind"

    done = run_cli(source, "--in-place", *CHAIN)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot.blend"]
    assert digest(source) != before
    assert tip_errors(source).max() <= TOLERANCE * 1.001


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--frames", "12-1"], "argument --frames: the range 12-1 is reversed"),
        (["--tip", "bone.002", "--target", "Target"], "missing --armature"),
        (["--config", "{tmp}/c.toml"], "job 1: unknown key 'tip'"),
    ],
)
def test_usage_errors_exit_2_before_opening_anything(tmp_path: Path, args: list[str], message: str) -> None:
    source = save_scene(tmp_path / "shot.blend")
    (tmp_path / "c.toml").write_text('[[jobs]]\narmature = "Rig"\ntip = "bone.002"\ntarget = "Target"\n')
    chain = [] if "--config" in args or "--tip" in args else list(CHAIN)
    args = [a.format(tmp=tmp_path) for a in args]
    run = run_cli(source, *chain, *args, "--report", tmp_path / "report.json")
    assert run.returncode == 2
    assert message in run.stderr
    assert "Read blend" not in run.stdout, "nothing may be opened"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml", "shot.blend"], "nothing may be written"


@pytest.mark.parametrize("processes", [1, 2])
def test_strict_exits_3_when_a_frame_is_off_target_after_saving_every_file(tmp_path: Path, processes: int) -> None:
    near, far = save_scene(tmp_path / "near.blend"), save_scene(tmp_path / "far.blend", far=True)
    lenient = run_cli(near, far, *CHAIN, "-j", processes)
    assert lenient.returncode == 0, lenient.stderr
    missed = r"baked 2 of 2 file\(s\) in \d+\.\d s; \d+ frames off target \(\d+ out of reach\) in 1 chain"
    assert re.fullmatch(missed, lenient.stderr.splitlines()[-1]), lenient.stderr

    strict = run_cli(near, far, *CHAIN, "-j", processes, "--strict", "--overwrite", "--report", tmp_path / "r.json")
    assert strict.returncode == 3, strict.stderr
    assert re.fullmatch(missed + r" \(--strict: exit status 3\)", strict.stderr.splitlines()[-1]), strict.stderr
    near_report, far_report = json.loads((tmp_path / "r.json").read_text())["files"]
    assert (near_report["status"], near_report["chains"][0]["off_target_frames"]) == ("ok", [])
    assert far_report["status"] == "ok"
    assert far_report["chains"][0]["unreachable_frames"], "the far target is out of reach on some frames"
    assert far_report["chains"][0]["off_target"] == {"out of reach": far_report["chains"][0]["off_target_frames"]}
    assert tip_errors(tmp_path / "near_baked.blend").max() <= TOLERANCE * 1.001, "every file is still saved"
    assert tip_errors(tmp_path / "far_baked.blend").max() > TOLERANCE

    assert run_cli(near, *CHAIN, "--strict", "--overwrite").returncode == 0, "on target: --strict changes nothing"
    failed = run_cli(far, tmp_path / "gone.blend", *CHAIN, "-j", processes, "--strict", "--overwrite")
    assert failed.returncode == 1, "a failed file says more than frames off target"


@pytest.mark.parametrize("processes", [1, 2])
def test_an_existing_output_fails_its_file_unless_overwrite_is_given(tmp_path: Path, processes: int) -> None:
    first, second = save_scene(tmp_path / "first.blend"), save_scene(tmp_path / "second.blend")
    (tmp_path / "first_baked.blend").write_bytes(b"an earlier bake")
    run = run_cli(first, second, *CHAIN, "-j", processes)
    assert run.returncode == 1, run.stderr
    assert (
        f"first.blend: error (0.00 s): its output {tmp_path / 'first_baked.blend'} exists: pass --overwrite to "
        "replace it"
    ) in run.stderr
    assert (tmp_path / "first_baked.blend").read_bytes() == b"an earlier bake"
    assert tip_errors(tmp_path / "second_baked.blend").max() <= TOLERANCE * 1.001, "the other file is baked"

    again = run_cli(first, second, *CHAIN, "-j", processes, "--overwrite")
    assert again.returncode == 0, again.stderr
    assert tip_errors(tmp_path / "first_baked.blend").max() <= TOLERANCE * 1.001


def test_a_read_only_output_folder_fails_the_file_naming_the_output_and_the_remedy(tmp_path: Path) -> None:
    source = save_scene(tmp_path / "shot.blend")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    # A root user writes in read-only folders, unless it gives up that power (util-linux's setpriv).
    wrapper = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    if wrapper and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv to give up writing in read-only folders")
    run = run_cli(source, *CHAIN, "--output", locked, wrapper=wrapper)
    assert run.returncode == 1, run.stderr
    assert (
        f"shot.blend: error (0.00 s): cannot save {locked / 'shot.blend'}: the folder {locked} is read-only "
        "(give --output a folder you can write to)"
    ) in run.stderr
    assert "Traceback" not in run.stderr
    assert "Read blend" not in run.stdout, "found before opening the file"
    assert list(locked.iterdir()) == []


def test_a_save_that_fails_names_the_output_not_its_temporary_file(tmp_path: Path) -> None:
    """What planning cannot foresee (a folder replaced by a file meanwhile, a full disk) fails the file with the
    output's name, not the temporary file's, and no traceback."""
    from fabrik_addon.cli.bake_file import bake_file
    from fabrik_addon.cli.files import plan_files
    from fabrik_addon.cli.options import load_jobs, parse_args

    source = save_scene(tmp_path / "shot.blend")
    (plan,) = plan_files([source], tmp_path / "out", in_place=False)
    (tmp_path / "out").write_text("the folder became a file")
    result = bake_file(plan, load_jobs(parse_args([str(source), *CHAIN])))
    assert (result.status, result.output) == ("error", None)
    assert result.error == f"cannot save {tmp_path / 'out/shot.blend'}: {tmp_path / 'out'} is not a folder"


@pytest.mark.parametrize("clash", ["input", "output", "config"])
def test_a_report_on_a_file_the_bake_reads_or_writes_is_a_usage_error(tmp_path: Path, clash: str) -> None:
    source = save_scene(tmp_path / "shot.blend")
    config = tmp_path / "c.toml"
    config.write_text('[[jobs]]\narmature = "Rig"\ntip_bone = "bone.002"\ntarget = "Target"\n')
    (tmp_path / "out.blend").write_bytes(b"old")
    before = {path.name: digest(path) for path in tmp_path.iterdir()}
    report = {"input": source, "output": tmp_path / "out.blend", "config": config}[clash]
    run = run_cli(source, "--config", config, "--output", tmp_path / "out.blend", "--report", report)
    assert run.returncode == 2
    assert f"--report {report} is" in run.stderr
    assert {path.name: digest(path) for path in tmp_path.iterdir()} == before, "nothing may be written"


def test_a_files_ik_constraints_bake_from_the_command_line(tmp_path: Path) -> None:
    source = save_scene(tmp_path / "shot.blend", ik=True)
    run = run_cli(source, "--armature", "Rig", "--from-ik-constraints", "--report", tmp_path / "report.json")
    assert run.returncode == 0, run.stderr
    (chain,) = json.loads((tmp_path / "report.json").read_text())["files"][0]["chains"]
    assert (chain["tip_bone"], chain["off_target_frames"]) == ("bone.002", [])
    errors = tip_errors(tmp_path / "shot_baked.blend")  # opened: the IK constraint is muted, the keys show
    assert errors.max() <= TOLERANCE * 1.001
    (constraint,) = bpy.data.objects["Rig"].pose.bones["bone.002"].constraints
    assert constraint.mute


def test_python_embedded_in_a_file_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "script-ran.txt"
    save_scene(tmp_path / "evil.blend")
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "evil.blend"))
    text = bpy.data.texts.new("on_load.py")
    text.write(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    text.use_module = True  # Blender runs it when the file loads, if scripts may run
    bpy.ops.wm.save_mainfile()
    # The file's script is live: a trusting open runs it.
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "evil.blend"), use_scripts=True)
    assert marker.read_text() == "ran"
    marker.unlink()

    run = run_cli(tmp_path / "evil.blend", *CHAIN)
    assert run.returncode == 0, run.stderr
    assert not marker.exists(), "the command line ran the file's embedded script"
    assert "its scripts were not run" in run.stderr
    assert tip_errors(tmp_path / "evil_baked.blend").max() <= TOLERANCE * 1.001


def test_the_registered_command_bakes_with_blenders_argument_list(tmp_path: Path) -> None:
    """``blender -c fabrik_bake ARGS`` hands ARGS to the function the extension registers: called here with an
    argument list, as Blender calls it (no Blender binary is at hand); it bakes and says how it went."""
    import fabrik_addon
    from fabrik_addon.cli.command import PROGRAM, execute

    source = save_scene(tmp_path / "shot.blend")
    fabrik_addon.register()
    try:
        assert fabrik_addon._command is not None  # the handle Blender gave for "fabrik_bake"
        assert PROGRAM == "fabrik_bake"
        assert execute([str(source), *CHAIN, "--report", str(tmp_path / "report.json")]) == 0
        assert execute([str(source), "--armature", "Rig", "--tip", "bone.002"]) == 2  # usage: nothing opened
        assert execute(["--help"]) == 0
    finally:
        fabrik_addon.unregister()
    assert fabrik_addon._command is None
    assert tip_errors(tmp_path / "shot_baked.blend").max() <= TOLERANCE * 1.001
    assert json.loads((tmp_path / "report.json").read_text())["files"][0]["status"] == "ok"
