// The stand-in of Flamenco (flamenco_standin.mjs) behaves as Flamenco documents: its path functions, globals,
// schema, two-way variables and the Worker's command line.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkJobType, crosspath, loadScript, replaceTwoWay, shellSplit, workerArgv } from "./flamenco_standin.mjs";

const throwsMessage = (run, message) => assert.throws(run, (error) => message.test(String(error)), String(message));

test("Flamenco's two-way variables replace only the start of a setting", () => {
    const farm = { storage: { twoWay: true, values: { linux: "/mnt/farm", windows: "F:\\farm\\" } } };
    const submitted = replaceTwoWay({ a: "F:\\farm\\a.blend;F:\\farm\\b.blend", n: 3 }, farm, "windows");
    assert.deepEqual(submitted, { a: "{storage}\\a.blend;F:\\farm\\b.blend", n: 3 });
});

test("the stand-in's path module is Flamenco's crosspath: a backslash separates on every platform", () => {
    assert.equal(crosspath.basename("C:\\shots\\a.blend"), "a.blend");
    assert.equal(crosspath.dirname("C:\\shots\\a.blend"), "C:/shots");
    assert.equal(crosspath.stem("C:\\shots\\a.b.blend"), "a.b");
    assert.equal(crosspath.join("C:\\shots", "seq\\a.blend"), "C:/shots/seq/a.blend");
    assert.equal(crosspath.join("/shots/", "./seq/", "../a.blend/"), "/shots/a.blend"); // cleaned, as Go's path.Join
    assert.deepEqual([crosspath.basename(""), crosspath.dirname("a.blend"), crosspath.stem(".blend")], [".", ".", ""]);
});

test("the stand-in has the Manager's globals", () => {
    const { compile: run } = loadScript(`
        const JOB_TYPE = { label: "Globals", settings: [{ key: "frames", type: "string" }] };
        function compileJob(job) {
            const seen = {
                chunks: frameChunker(job.settings.frames, 3), count: frameCount(job.settings.frames),
                stamp: formatTimestampLocal(job.created), words: shellSplit("-b --python-expr 'print(1 + 1)'"),
                platform: process.platform, cwd: typeof process.cwd(), stem: path.stem("C:\\\\a\\\\b.blend"),
            };
            print(seen);
            alert(seen);
            job.addTask(author.Task(JSON.stringify(seen), "misc"));
        }`, "globals.js", { platform: "windows" });
    const [task] = run({ frames: "1..4,8-9,7" }, { created: new Date(2006, 0, 2, 15, 4, 5) });
    assert.deepEqual(JSON.parse(task.name), {
        chunks: ["1-3", "4,7,8", "9"], count: 7, stamp: "2006-01-02_150405",
        words: ["-b", "--python-expr", "print(1 + 1)"], platform: "windows", cwd: "string", stem: "b",
    });
});

test("the stand-in refuses what Flamenco would, and fills in no defaults", () => {
    const problems = checkJobType({
        label: "Bad",
        settings: [
            { key: "a", type: "int" },
            { key: "a", type: "string", choices: [1] },
            { key: "b", type: "int32", choices: ["x"], default: 1.5 },
            { key: "c", type: "string", subtype: "path", evalInfo: {}, visible: "never", choice: ["x"] },
            { key: "label", type: "string" },
        ],
    });
    assert.deepEqual(problems, [
        "setting a: type must be one of string, int32, float, bool",
        "setting a: key is declared twice",
        "setting a: choices must be a non-empty list of text, on a string",
        "setting b: choices must be a non-empty list of text, on a string",
        "setting b: default 1.5 is not a value of the setting",
        "setting c: unknown field choice",
        "setting c: subtype must be one of file_path, dir_path, file_name, hashed_file_path, on a string",
        "setting c: visible must be one of visible, hidden, submission, web",
        "setting c: evalInfo needs showLinkButton (true or false) and description (text)",
        "setting label: key is a name Flamenco's add-on uses on its settings class",
    ]);
    const jobWith = (parameters) => loadScript(`
        const JOB_TYPE = { label: "x", settings: [{ key: "n", type: "int32", default: 4 }] };
        function compileJob(job) {
            const task = author.Task("t " + JSON.stringify(job.settings), "blender");
            task.addCommand(author.Command("blender-render", ${parameters}));
            job.addTask(task);
        }`, "x.js").compile;
    const [task] = jobWith(`{ exe: "b", blendfile: "", args: ["1"] }`)({ other: 1 });
    assert.equal(task.name, 't {"other":1}'); // no n: the Manager leaves JOB_TYPE's defaults to the submitter
    throwsMessage(() => jobWith(`{ exe: "b", args: ["1"] }`)({}), /blendfile must be text/);
    throwsMessage(() => jobWith(`{ exe: "b", blendfile: "", args: [1] }`)({}), /args must be a list of text/);
    throwsMessage(() => loadScript(`const JOB_TYPE = { label: "x", settings: [] };
        function compileJob(job) { job.addTask({ name: "fake", commands: [] }); }`, "y.js").compile({}), /not a task/);
});

test("a Worker runs {exe} {exeArgs} {argsBefore} {blendfile} {args}, leaving out an empty blendfile", () => {
    const variables = {
        blender: { values: { all: "/opt/blender/blender" } },
        blenderArgs: { values: { all: "-b  -y --python-expr 'a = 1'" } },
    };
    const parameters = {
        exe: "{blender}", exeArgs: "{blenderArgs}", argsBefore: ["-c", "x"], blendfile: "", args: ["f"],
    };
    assert.deepEqual(workerArgv(parameters, variables),
        ["/opt/blender/blender", "-b", "-y", "--python-expr", "a = 1", "-c", "x", "f"]);
    assert.deepEqual(workerArgv({ ...parameters, blendfile: "s.blend" }, variables).slice(-3), ["x", "s.blend", "f"]);
    assert.deepEqual(shellSplit(`a "b \\"c\\" d" e\\ f # comment\ng#h`), ["a", 'b "c" d', "e f", "g#h"]);
    assert.throws(() => shellSplit("'open"), /closing quote/);
});
