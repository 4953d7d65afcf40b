// The fabrik-bake Flamenco job type, compiled against a stand-in of Flamenco's job compiler runtime.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadJobType, withDefaults } from "./flamenco_standin.mjs";

const script = fileURLToPath(new URL("../../scripts/flamenco/fabrik-bake.js", import.meta.url));
const { jobType, compile } = loadJobType(script);
const chain = { armature: "Rig", tip: "hand.L", chain_length: 3, target: "Hand.IK" };
const run = (given) => compile(withDefaults(jobType, given));
const args = (task) => task.commands[0].parameters.args;

test("JOB_TYPE declares each setting once, with a type Flamenco knows", () => {
    assert.equal(jobType.label, "FABRIK Bake");
    const keys = jobType.settings.map((setting) => setting.key);
    assert.equal(new Set(keys).size, keys.length);
    for (const setting of jobType.settings) {
        assert.ok(["string", "int32", "float", "bool"].includes(setting.type), setting.key);
        assert.ok(setting.description, `${setting.key} has a description`);
    }
    assert.deepEqual(jobType.settings.find((s) => s.key === "method").choices, ["fabrik", "ccd"]);
});

test("one Blender task per file, the file opened by the fabrik_bake command", () => {
    const tasks = run({ blendfiles: "/shots/a.blend; /shots/b.blend", frames: "1-250", ...chain });
    assert.deepEqual(tasks.map((t) => [t.name, t.type]), [
        ["bake 1/2: a.blend", "blender"],
        ["bake 2/2: b.blend", "blender"],
    ]);
    const [command] = tasks[1].commands;
    assert.equal(command.name, "blender-render");
    assert.deepEqual(command.parameters, {
        exe: "{blender}",
        exeArgs: "{blenderArgs}",
        argsBefore: ["--disable-autoexec", "-c", "fabrik_bake"],
        blendfile: "",
        args: [
            "/shots/b.blend",
            "--armature", "Rig", "--tip", "hand.L", "--target", "Hand.IK", "--chain-length", "3",
            "--frames", "1-250",
        ],
    });
});

test("a config file, an output folder and a report per task", () => {
    const [task] = run({
        blendfiles: "/shots/a.blend", config: "/farm/chains.toml", output: "/out", report_dir: "/reports",
    });
    const given = args(task);
    assert.deepEqual(given.slice(0, 3), ["/shots/a.blend", "--config", "/farm/chains.toml"]);
    assert.ok(!given.includes("--armature") && !given.includes("--chain-length"));
    assert.deepEqual(given.slice(-4), ["--output", "/out", "--report", "/reports/a.json"]);
});

test("a folder is one task baking its files in parallel processes; in place replaces the files", () => {
    const tasks = run({ folder: "/shots/seq010", processes: 4, in_place: true, ...chain });
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0].name, "bake 1/1: seq010");
    const given = args(tasks[0]);
    assert.deepEqual(given.slice(0, 3), ["/shots/seq010", "-j", "4"]);
    assert.equal(given.at(-1), "--in-place");
});

test("bake settings left empty are not passed: the command's own defaults apply", () => {
    const [task] = run({ blendfiles: "/a.blend", ...chain, chain_length: undefined });
    for (const flag of ["--chain-length", "--frames", "--step", "--tolerance", "--max-iterations", "--method"]) {
        assert.ok(!args(task).includes(flag), flag);
    }
    const [tuned] = run({ blendfiles: "/a.blend", ...chain, tolerance: 0.0001, method: "ccd", step: 2 });
    assert.deepEqual(args(tuned).slice(-6), ["--step", "2", "--tolerance", "0.0001", "--method", "ccd"]);
    for (const setting of jobType.settings) {
        assert.ok(!("default" in setting) || ["in_place", "processes"].includes(setting.key), setting.key);
    }
});

test("wrong settings fail the submission with a message", () => {
    const cases = [
        [{ ...chain }, /nothing to bake/],
        [{ blendfiles: " ; ", ...chain }, /nothing to bake/],
        [{ blendfiles: "/a.blend", folder: "/shots", ...chain }, /not both/],
        [{ blendfiles: "/a.blend", armature: "Rig", target: "E" }, /give armature, tip and target/],
        [{ blendfiles: "/a.blend", config: "/c.toml", armature: "Rig" }, /leave out armature/],
        [{ blendfiles: "/a.blend", output: "/out", in_place: true, ...chain }, /not both/],
    ];
    for (const [given, message] of cases) {
        assert.throws(() => run(given), (error) => message.test(String(error)), JSON.stringify(given));
    }
});
