"""Which files a command line bakes, where their outputs go, atomic writes and the report (no Blender needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabrik_addon.cli.files import FilePlan, check_report, plan_files, write_atomically
from fabrik_addon.cli.jobs import UsageError
from fabrik_addon.cli.report import ChainResult, FileResult, from_json, off_target, summary, to_json


def blends(folder: Path, *names: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / name for name in names]
    for path in paths:
        path.write_bytes(b"BLENDER")
    return paths


def test_folders_expand_to_their_blend_files_and_outputs_go_beside_them(tmp_path: Path) -> None:
    b, a, _, _ = blends(tmp_path / "shots", "b.blend", "a.blend", "a_baked.blend", "notes.txt")
    (single,) = blends(tmp_path, "single.blend")
    plans = plan_files([tmp_path / "shots", single], None, in_place=False, overwrite=True)
    # In name order, leaving out an earlier output (a_baked.blend, replaced with overwrite) and other files.
    assert plans == [
        FilePlan(a, tmp_path / "shots" / "a_baked.blend"),
        FilePlan(b, tmp_path / "shots" / "b_baked.blend"),
        FilePlan(single, tmp_path / "single_baked.blend"),
    ]


def test_a_linked_blend_file_is_baked_beside_the_link_and_replaced_where_it_lives(tmp_path: Path) -> None:
    (real,) = blends(tmp_path / "library", "rig.blend")
    (tmp_path / "shots").mkdir()
    link = tmp_path / "shots" / "shot.blend"
    link.symlink_to(real)
    for given in (tmp_path / "shots", link):  # found in a folder, or named
        assert plan_files([given], None, in_place=False) == [FilePlan(link, tmp_path / "shots" / "shot_baked.blend")]
    assert plan_files([link], None, in_place=True) == [FilePlan(link, real)]
    same_name = tmp_path / "shots" / "rig.blend"
    same_name.symlink_to(real)
    with pytest.raises(UsageError, match="would overwrite it"):  # its output would be the file it points at
        plan_files([same_name], real.parent, in_place=False)


def test_the_report_must_not_land_on_an_input_an_output_or_the_config(tmp_path: Path) -> None:
    (shot,) = blends(tmp_path, "shot.blend")
    plans = plan_files([tmp_path], tmp_path / "out", in_place=False)
    config = tmp_path / "jobs.toml"
    for report, message in [
        (shot, "is the input"),
        (tmp_path / "out" / "shot.blend", "is where"),
        (config, "is the config file"),
        (tmp_path / "sub" / ".." / "shot.blend", "is the input"),  # the same file by another path
    ]:
        with pytest.raises(UsageError, match=message):
            check_report(report, plans, config)
    check_report(tmp_path / "report.json", plans, config)  # anywhere else is fine


def test_missing_and_wrong_inputs_are_planned_as_failures(tmp_path: Path) -> None:
    (text,) = blends(tmp_path, "notes.txt")
    (tmp_path / "empty").mkdir()
    plans = plan_files([tmp_path / "none.blend", text, tmp_path / "empty"], None, in_place=False)
    assert [(p.output, p.problem) for p in plans] == [
        (None, "no such file or folder"),
        (None, "not a .blend file"),
        (None, "the folder holds no .blend file to bake"),
    ]


def test_a_blend_backup_is_refused_saying_how_to_bake_it(tmp_path: Path) -> None:
    backup, older = blends(tmp_path, "shot.blend1", "shot.blend2")
    problems = [plan.problem for plan in plan_files([backup, older], None, in_place=False)]
    backup_problem = (
        "a backup Blender keeps of an earlier save, not a .blend file: to bake it, copy it to a name ending in "
        ".blend (e.g. shot_restored.blend)"
    )
    assert problems == [backup_problem, backup_problem]


@pytest.mark.parametrize("output", ["notes.txt", "notes.txt/out"])
def test_an_output_folder_that_is_a_file_is_refused_before_anything_opens(tmp_path: Path, output: str) -> None:
    (shot,) = blends(tmp_path / "in", "shot.blend")
    (tmp_path / "notes.txt").write_text("not a folder")
    (plan,) = plan_files([shot], tmp_path / output, in_place=False)
    assert plan.problem == (
        f"cannot save {tmp_path / output / 'shot.blend'}: {tmp_path / 'notes.txt'} is a file, not a folder "
        "(give --output a folder, or FILE.blend for one input)"
    )
    (tmp_path / "out.blend").mkdir()
    assert plan_files([shot], tmp_path / "out.blend", in_place=False)[0].problem == (
        f"cannot save {tmp_path / 'out.blend'}: it is a folder"
    )


def test_an_output_folder_that_cannot_be_written_is_refused_with_the_remedy(tmp_path: Path) -> None:
    (shot,) = blends(tmp_path / "in", "shot.blend")
    (tmp_path / "locked").mkdir(mode=0o555)
    if os.access(tmp_path / "locked", os.W_OK):
        pytest.skip("this user writes in read-only folders (root): tests/blender/test_cli.py runs it without that")
    (plan,) = plan_files([shot], tmp_path / "locked" / "new", in_place=False)  # missing folders are made
    assert plan.problem == (
        f"cannot save {tmp_path / 'locked/new/shot.blend'}: the folder {tmp_path / 'locked'} is read-only "
        "(give --output a folder you can write to)"
    )


def test_an_existing_output_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    a, b, a_baked = blends(tmp_path, "a.blend", "b.blend", "a_baked.blend")
    (tmp_path / "b_baked.blend").symlink_to(tmp_path / "gone.blend")  # a link to nothing is still in the way
    plans = plan_files([a, b], None, in_place=False)
    assert [plan.problem for plan in plans] == [
        f"its output {a_baked} exists: pass --overwrite to replace it",
        f"its output {tmp_path / 'b_baked.blend'} exists: pass --overwrite to replace it",
    ]
    assert plan_files([a, b], None, in_place=False, overwrite=True) == [
        FilePlan(a, a_baked),
        FilePlan(b, tmp_path / "b_baked.blend"),
    ]
    assert plan_files([a], tmp_path / "b.blend", in_place=False)[0].problem == (
        f"its output {b} exists: pass --overwrite to replace it"
    )
    assert plan_files([a], None, in_place=True) == [FilePlan(a, a)]  # --in-place replaces the input anyway


def test_output_folder_file_and_in_place(tmp_path: Path) -> None:
    a, b = blends(tmp_path / "in", "a.blend", "b.blend")
    assert [p.output for p in plan_files([a, b], tmp_path / "out", in_place=False)] == [
        tmp_path / "out" / "a.blend",
        tmp_path / "out" / "b.blend",
    ]
    assert plan_files([a], tmp_path / "x.blend", in_place=False)[0].output == tmp_path / "x.blend"
    assert [p.output for p in plan_files([a, b], None, in_place=True)] == [a, b]
    # The same file named twice is baked once.
    assert len(plan_files([a, a.parent / "." / "a.blend"], None, in_place=False)) == 1


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("x.blend", "names one file but 2 files are to be baked"),
        ("in", "would overwrite it"),
        ("in/a.blend", "names one file but 2"),
    ],
)
def test_outputs_that_would_clash_are_usage_errors(tmp_path: Path, output: str, message: str) -> None:
    a, b = blends(tmp_path / "in", "a.blend", "b.blend")
    with pytest.raises(UsageError, match=message):
        plan_files([a, b], tmp_path / output, in_place=False)
    with pytest.raises(UsageError, match="would overwrite it"):
        plan_files([a], a, in_place=False)


def test_two_inputs_of_one_name_cannot_share_an_output_folder(tmp_path: Path) -> None:
    (a,) = blends(tmp_path / "one", "a.blend")
    (other,) = blends(tmp_path / "two", "a.blend")
    with pytest.raises(UsageError, match="would both be saved as"):
        plan_files([a, other], tmp_path / "out", in_place=False)


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.blend"
    path.write_text("old")

    def fail(temporary: Path) -> None:
        temporary.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomically(path, fail)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.blend"]
    write_atomically(path, lambda temporary: print(temporary.write_text("new")))
    assert path.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.blend"]


def test_the_report_has_the_documented_schema_and_reads_back() -> None:
    results = [
        FileResult(
            "/a.blend",
            "/a_baked.blend",
            "ok",
            None,
            (
                ChainResult(
                    "Rig", "hand.L", (1, 250), 3e-4, (7,), (7, 9), 0.5, (("out of reach", (7,)), ("the scene", (9,)))
                ),
            ),
        ),
        FileResult.failed("/b.blend", "armature 'Rig' not found"),
    ]
    data = json.loads(json.dumps(to_json(results)))
    assert data == {
        "files": [
            {
                "input": "/a.blend",
                "output": "/a_baked.blend",
                "status": "ok",
                "error": None,
                "chains": [
                    {
                        "armature": "Rig",
                        "tip_bone": "hand.L",
                        "frames": [1, 250],
                        "max_error": 3e-4,
                        "unreachable_frames": [7],
                        "off_target_frames": [7, 9],
                        "off_target": {"out of reach": [7], "the scene": [9]},
                        "seconds": 0.5,
                        "length_unit": ["units", 1.0],
                        "keys": None,
                    }
                ],
                "plantings": [],
                "targets": [],
                "reduced": [],
            },
            {
                "input": "/b.blend",
                "output": None,
                "status": "error",
                "error": "armature 'Rig' not found",
                "chains": [],
                "plantings": [],
                "targets": [],
                "reduced": [],
            },
        ]
    }
    assert from_json(data) == results


def test_the_summary_counts_frames_off_target_and_says_why_strict_fails() -> None:
    def chain(off: tuple[int, ...], out: tuple[int, ...] = ()) -> ChainResult:
        why = (("out of reach", out), ("the scene", tuple(sorted(set(off) - set(out)))))
        return ChainResult("Rig", "hand.L", (1, 9), 0.5 if off else 1e-4, out, off, 0.1, tuple(c for c in why if c[1]))

    ok = FileResult("/a.blend", "/a_baked.blend", "ok", None, (chain(()), chain((2, 3, 4), (3,))))
    other = FileResult("/b.blend", "/b_baked.blend", "ok", None, (chain((7,)),))
    assert (
        summary([ok], 1.0)
        == "baked 1 of 1 file(s) in 1.0 s; 3 frames off target (1 out of reach, 2 the scene) in 1 chain"
    )
    assert summary([ok, other], 2.0, strict=True) == (
        "baked 2 of 2 file(s) in 2.0 s; 4 frames off target (1 out of reach, 3 the scene) in 2 chains (--strict: exit "
        "status 3)"
    )
    assert off_target([ok, other]) == [ok.chains[1], other.chains[0]]
    clean = FileResult("/c.blend", "/c_baked.blend", "ok", None, (chain(()),))
    assert summary([clean], 1.0, strict=True) == "baked 1 of 1 file(s) in 1.0 s"
    assert off_target([clean]) == []
    # A failed file is what the exit status (1) says first.
    failed = FileResult.failed("/d.blend", "armature 'Rig' not found")
    assert summary([ok, failed], 1.0, strict=True) == (
        "baked 1 of 2 file(s) in 1.0 s; 1 failed; 3 frames off target (1 out of reach, 2 the scene) in 1 chain"
    )


def test_parallel_children_share_the_files_by_size_and_keep_their_order(tmp_path: Path) -> None:
    from fabrik_addon.cli.parallel import child_command, share

    sizes = {"a": 5, "b": 40, "c": 10, "d": 30, "e": 20}
    plans = []
    for name, size in sizes.items():
        path = tmp_path / f"{name}.blend"
        path.write_bytes(b"x" * size)
        plans.append(FilePlan(path, None))
    groups = share(plans, 2)
    # Largest first to the least loaded: b, d, e (to d), c (to b), a: loads 55 and 50.
    assert [[p.input.stem for p in group] for group in groups] == [["a", "b", "c"], ["d", "e"]]
    assert [[p.input.stem for p in group] for group in share(plans[:1], 4)] == [["a"]]
    # A child runs the same script with the same Python, or inside the same Blender binary, scripts off.
    assert child_command(Path("/s/fabrik_bake.py"), blender_binary=None, python="/py") == ["/py", "/s/fabrik_bake.py"]
    inside = child_command(Path("/s/fabrik_bake.py"), blender_binary="/opt/blender", python="/py")
    assert inside[0] == "/opt/blender"
    assert "--disable-autoexec" in inside
    assert inside[-3:] == ["--python", "/s/fabrik_bake.py", "--"]
