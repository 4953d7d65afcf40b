// The fabrik-bake Flamenco job type, compiled in a stand-in of Flamenco (flamenco_standin.mjs): as Flamenco's
// Blender add-on submits it and as an API call does, on one platform and across platforms.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
    DEFAULT_VARIABLES, addonSettings, checkJobType, loadJobType, replaceTwoWay, workerArgv,
} from "./flamenco_standin.mjs";

const script = fileURLToPath(new URL("../../scripts/flamenco/fabrik-bake.js", import.meta.url));
const { jobType, compile } = loadJobType(script);
const chain = { armature: "Rig", tip: "hand.L", target: "Hand.IK" };
const args = (task) => task.commands[0].parameters.args;
// A submission from Flamenco's Blender add-on: every setting, those not in `given` left alone.
const fromAddon = (given) => compile(addonSettings(jobType, given));
const throwsMessage = (run, message) => assert.throws(run, (error) => message.test(String(error)), String(message));

test("JOB_TYPE fits Flamenco's schema and leaves the add-on's blendfile setting alone", () => {
    assert.deepEqual(checkJobType(jobType), []);
    assert.equal(jobType.label, "FABRIK Bake");
    assert.ok(!jobType.settings.some((setting) => setting.key === "blendfile"));
    const blendDir = jobType.settings.find((setting) => setting.key === "blend_dir");
    assert.equal(blendDir.visible, "hidden"); // the add-on evaluates hidden settings at submission
    assert.match(blendDir.eval, /abspath\('\/\/'\)/);
});

test("one Blender task per named file, the file opened by the fabrik_bake command", () => {
    const given = { folder: "/shots", files: "a.blend; seq/b.blend", frames: "1-250", chain_length: 3 };
    const tasks = compile({ ...given, ...chain });
    assert.deepEqual(tasks.map((t) => [t.name, t.type]), [
        ["bake 1/2: a.blend", "blender"],
        ["bake 2/2: b.blend", "blender"],
    ]);
    assert.deepEqual(tasks[1].commands, [{
        name: "blender-render",
        totalStepCount: 0,
        parameters: {
            exe: "{blender}",
            exeArgs: "{blenderArgs}",
            argsBefore: ["--disable-autoexec", "-c", "fabrik_bake"],
            blendfile: "",
            args: [
                "/shots/seq/b.blend",
                "--armature", "Rig", "--tip", "hand.L", "--target", "Hand.IK", "--chain-length", "3",
                "--frames", "1-250",
            ],
        },
    }]);
});

test("a folder without file names is one task baking it in parallel processes; in place replaces the files", () => {
    const tasks = compile({ folder: "/shots/seq010/", processes: 4, in_place: true, ...chain });
    assert.deepEqual(tasks.map((t) => t.name), ["bake 1/1: seq010"]);
    assert.deepEqual(args(tasks[0]).slice(0, 3), ["/shots/seq010/", "-j", "4"]);
    assert.equal(args(tasks[0]).at(-1), "--in-place");
    assert.deepEqual(args(compile({ folder: "/shots", ...chain })[0]).slice(0, 3), ["/shots", "-j", "1"]);
});

test("overwrite and strict pass their options; left alone, they are not passed", () => {
    const given = { folder: "/shots", files: "a.blend", output: "/out", ...chain };
    const bare = ["/shots/a.blend", "--armature", "Rig", "--tip", "hand.L", "--target", "Hand.IK", "--output", "/out"];
    assert.deepEqual(args(compile({ ...given, overwrite: true, strict: true })[0]), [...bare, "--overwrite", "--strict"]);
    assert.deepEqual(args(fromAddon({ ...given, overwrite: true })[0]), [...bare, "--overwrite"]);
    assert.deepEqual(args(fromAddon({ ...given, strict: true })[0]), [...bare, "--strict"]);
    assert.deepEqual(args(fromAddon(given)[0]), bare);
    assert.deepEqual(args(compile({ ...given, overwrite: false, strict: false })[0]), bare);
    const [folderTask] = compile({ folder: "/shots", processes: 2, in_place: true, overwrite: true, ...chain });
    assert.deepEqual(args(folderTask).slice(-2), ["--in-place", "--overwrite"]);
});

test("a config file, an output folder and a report per task", () => {
    const [task] = compile({
        folder: "/shots", files: "a.blend", config: "/farm/chains.toml", output: "/out", report_dir: "/reports",
    });
    assert.deepEqual(args(task), [
        "/shots/a.blend", "--config", "/farm/chains.toml", "--output", "/out", "--report", "/reports/a.json",
    ]);
});

test("settings left alone in Blender, or left out of an API call, are not passed: the command's defaults apply", () => {
    const given = { folder: "/shots", files: "a.blend", ...chain };
    const bare = ["/shots/a.blend", "--armature", "Rig", "--tip", "hand.L", "--target", "Hand.IK"];
    const submitted = addonSettings(jobType, given);
    assert.deepEqual( // what the add-on sends for the bake settings left alone
        [submitted.chain_length, submitted.frames, submitted.step, submitted.tolerance, submitted.max_iterations,
         submitted.method, submitted.in_place, submitted.overwrite, submitted.strict, submitted.processes],
        [0, "", 0, 0, 0, "default", false, false, false, 1],
    );
    assert.deepEqual(args(compile(submitted)[0]), bare);
    assert.deepEqual(args(compile(given)[0]), bare);
    const tuned = {
        ...given, chain_length: 2, frames: "1-10", step: 2, tolerance: 0.0001, max_iterations: 50, method: "ccd",
    };
    const expected = [
        ...bare, "--chain-length", "2", "--frames", "1-10", "--step", "2", "--tolerance", "0.0001",
        "--max-iterations", "50", "--method", "ccd",
    ];
    assert.deepEqual(args(fromAddon(tuned)[0]), expected);
    assert.deepEqual(args(compile(tuned)[0]), expected);
    assert.deepEqual(args(compile({ ...given, method: "fabrik" })[0]).slice(-2), ["--method", "fabrik"]);
});

test("a setting of the wrong kind, or one the job type lacks, fails the submission, naming the setting", () => {
    const given = { folder: "/shots", files: "a.blend", ...chain };
    throwsMessage(() => compile({ ...given, step: "2" }), /step must be a whole number, got "2"/);
    throwsMessage(() => compile({ ...given, tolerance: "small" }), /tolerance must be a number/);
    throwsMessage(() => compile({ ...given, method: "dls" }), /method must be one of default, fabrik, ccd, got "dls"/);
    throwsMessage(() => compile({ ...given, in_place: "yes" }), /in_place must be true or false/);
    throwsMessage(() => compile({ ...given, overwrite: 1 }), /overwrite must be true or false, got 1/);
    throwsMessage(() => compile({ ...given, armature: 7 }), /armature must be text/);
    throwsMessage(() => compile({ ...given, blendfiles: "/a.blend" }), /unknown setting blendfiles: the settings are folder,/);
});

test("wrong settings fail the submission with a message", () => {
    const cases = [
        [{ ...chain }, /nothing to bake/],
        [{ folder: " ", files: "a.blend", ...chain }, /nothing to bake/],
        [{ folder: "/shots", armature: "Rig", target: "E" }, /give armature, tip and target/],
        [{ folder: "/shots", targets_from_animation: true, tip: "h" }, /leave out tip/],
        [{ folder: "/shots", targets_from_animation: true, layer: true }, /layer applies to bakes/],
        [{ folder: "/shots", config: "/c.toml", armature: "Rig" }, /leave out armature/],
        [{ folder: "/shots", output: "/out", in_place: true, ...chain }, /not both/],
        [{ folder: "/shots", files: "a.blend;/mnt/b.blend", ...chain }, /\/mnt\/b.blend is a path of its own/],
        [{ folder: "/shots", files: "a.blend;C:\\b.blend", ...chain }, /C:\\b.blend is a path of its own/],
        [{ folder: "/shots", files: "a.blend;x/a.blend", report_dir: "/r", ...chain }, /overwrite each other/],
    ];
    for (const [given, message] of cases) throwsMessage(() => compile(given), message);
    // Without an output folder or reports, files of one name in two folders are baked beside themselves.
    assert.equal(compile({ folder: "/shots", files: "a.blend;x/a.blend", ...chain }).length, 2);
});

test("a // path is resolved in the folder of the file submitted from Blender; other relative paths are refused", () => {
    const given = {
        folder: "//seq010/", files: "a.blend", config: "//../chains.toml", output: "//baked", report_dir: "//reports/",
    };
    const [task] = compile({ ...given, blend_dir: "/home/anna/shots" });
    assert.deepEqual(args(task), [
        "/home/anna/shots/seq010/a.blend", "--config", "/home/anna/chains.toml",
        "--output", "/home/anna/shots/baked", "--report", "/home/anna/shots/reports/a.json",
    ]);
    throwsMessage(() => compile(given), /folder \/\/seq010\/ is relative to a .blend file.*give an absolute path/);
    throwsMessage(() => compile({ ...given, folder: "seq010" }), /folder seq010 is a relative path/);
    assert.equal(compile({ ...given, folder: "C:\\shots", blend_dir: "/b" }).length, 1); // absolute on Windows
});

test("a Windows path names its task by its last part and joins with slashes, as Flamenco's path functions do", () => {
    const [task] = compile({ folder: "C:\\shots\\seq010", report_dir: "D:\\reports", ...chain });
    assert.equal(task.name, "bake 1/1: seq010");
    assert.deepEqual(args(task).slice(-2), ["--report", "D:/reports/seq010.json"]);
});

// A farm whose Manager runs Linux, with shared storage mounted at /mnt/farm on Linux and F:\farm on Windows.
const farm = { ...DEFAULT_VARIABLES, storage: { twoWay: true, values: { linux: "/mnt/farm", windows: "F:\\farm" } } };

test("on a mixed-platform farm every path reaches each Worker in its own form", () => {
    const settings = replaceTwoWay(addonSettings(jobType, {
        folder: "F:\\farm\\shots\\seq010", files: "a.blend;b.blend", config: "f:\\farm\\chains.toml",
        output: "//baked", report_dir: "F:/farm/reports", blend_dir: "F:\\farm\\shots",
    }), farm, "windows");
    const tasks = compile(settings);
    assert.deepEqual(tasks.map((t) => t.name), ["bake 1/2: a.blend", "bake 2/2: b.blend"]);
    const onLinux = workerArgv(tasks[1].commands[0].parameters, farm, { worker: "linux" });
    assert.deepEqual(onLinux, [
        "blender", "-b", "-y", "--disable-autoexec", "-c", "fabrik_bake", "/mnt/farm/shots/seq010/b.blend",
        "--config", "/mnt/farm/chains.toml", "--output", "/mnt/farm/shots/baked",
        "--report", "/mnt/farm/reports/b.json",
    ]);
    const onWindows = workerArgv(tasks[1].commands[0].parameters, farm, { worker: "windows" });
    assert.deepEqual(onWindows.filter((arg) => /farm/.test(arg)), [
        "F:\\farm\\shots\\seq010\\b.blend", "F:\\farm\\chains.toml", "F:\\farm\\shots\\baked",
        "F:\\farm\\reports\\b.json",
    ]);
    assert.equal(onWindows[0], "blender.exe");
});

test("plant_feet plants the armature's feet: hips and chain_length (the bones in each leg) pass their options", () => {
    const given = { folder: "/mocap", files: "walk.blend", armature: "Walk", plant_feet: "LeftFoot,RightFoot" };
    assert.deepEqual(args(compile(given)[0]), ["/mocap/walk.blend", "--armature", "Walk", "--plant-feet", "LeftFoot,RightFoot"]);
    const [task] = compile({ ...given, hips: "Hips", chain_length: 3, tolerance: 0.0001, strict: true });
    assert.deepEqual(args(task).slice(5), ["--hips", "Hips", "--leg-bones", "3", "--tolerance", "0.0001", "--strict"]);
    assert.deepEqual(args(fromAddon({ ...given, hips: "Hips" })[0]).slice(5), ["--hips", "Hips"]);
});

test("plant_feet with a chain's or a config's settings, or hips without it, fails the submission", () => {
    const feet = { folder: "/mocap", armature: "Walk", plant_feet: "LeftFoot" };
    const cases = [
        [{ ...feet, tip: "hand.L", target: "E" }, /plant_feet plants the armature's feet: leave out tip, target/],
        [{ ...feet, config: "/c.toml" }, /leave out config/],
        [{ folder: "/mocap", plant_feet: "LeftFoot" }, /give the armature whose feet plant_feet names/],
        [{ folder: "/mocap", hips: "Hips", ...chain }, /hips applies to plant_feet/],
        [{ ...feet, step: 2 }, /plant_feet plants every frame: leave step at 0 \(every frame\)/],
        [{ ...feet, method: "ccd" }, /plant_feet plants with FABRIK: leave method at default \(or fabrik\)/],
    ];
    for (const [given, message] of cases) throwsMessage(() => compile(given), message);
    const every = args(compile({ ...feet, step: 1, method: "fabrik" })[0]);  // what the command takes
    assert.deepEqual(every.slice(-4), ["--step", "1", "--method", "fabrik"]);
});


test("a file set up in Blender's sidebar bakes its saved chain lists; as a layer; targets from the animation", () => {
    const given = { folder: "/shots", files: "a.blend" };
    assert.deepEqual(args(compile(given)[0]), ["/shots/a.blend"]);
    assert.deepEqual(args(fromAddon({ ...given, armature: "Rig", layer: true })[0]), ["/shots/a.blend", "--armature", "Rig", "--layer"]);
    assert.deepEqual(args(compile({ ...given, ...chain, layer: true })[0]).at(-1), "--layer");
    assert.deepEqual(args(fromAddon({ ...given, targets_from_animation: true, frames: "1-50" })[0]),
                     ["/shots/a.blend", "--targets-from-animation", "--frames", "1-50"]);
});
