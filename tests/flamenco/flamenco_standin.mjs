// A stand-in for Flamenco, enough to run a job type script in Node as a farm runs it. Written from Flamenco's
// sources (3.9-beta1; the Manager's internal/manager/job_compilers, internal/manager/config/variables.go,
// pkg/crosspath, pkg/api/flamenco-openapi.yaml; the Worker's internal/worker/command_blender.go; the Blender
// add-on's job_types_propgroup.py), not copied from them:
//
// - loadJobType: the script runs as a plain script whose globals are the Manager's: author (Task, Command),
//   path (crosspath: a backslash is a separator on every platform, and join cleans like Go's path.Join),
//   process (cwd, platform), print, alert, frameChunker, frameCount, formatTimestampLocal, shellSplit.
//   JOB_TYPE is checked against the API's AvailableJobSetting schema, which the Blender add-on builds its
//   form from.
// - compile: compileJob(job) gets the settings exactly as submitted: the Manager fills in no defaults. Each
//   blender-render command is checked as a Flamenco 3.5+ Worker reads it.
// - addonSettings / replaceTwoWay / workerArgv: what reaches the job and the Worker on the way: the settings as
//   the Blender add-on sends them, the Manager's two-way variables at submission, and the command line a
//   Worker runs once the Manager has expanded the variables for the Worker's platform.
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import vm from "node:vm";

// --- The Manager's compiler globals -------------------------------------------------------------------------

// Tasks made by author.Task: job.addTask and task.addDependency take only those, as the Manager's Go methods
// do.
const authoredTasks = new WeakSet();

const author = {
    Task(name, type) {
        name = String(name).trim();
        type = String(type).trim();
        if (name === "") throw new Error("author.Task(name, type): name is required");
        if (type === "") throw new Error("author.Task(name, type): type is required");
        const task = {
            uUID: randomUUID(), // the Manager exposes Go's field UUID under this name (first letter lowered)
            name, type, priority: 50, commands: [], dependencies: [],
            addCommand(command) { this.commands.push(command); },
            addDependency(other) {
                if (!authoredTasks.has(other)) throw new TypeError("task.addDependency: not a task from author.Task");
                this.dependencies.push(other);
            },
        };
        authoredTasks.add(task);
        return task;
    },
    Command(name, parameters, totalStepCount = 0) {
        return { name: String(name), parameters, totalStepCount: Math.trunc(Number(totalStepCount)) || 0 };
    },
};

// Flamenco's crosspath: paths of any platform, with backslashes read as separators; results use slashes.
export const crosspath = {
    toSlash: (p) => String(p).replaceAll("\\", "/"),
    basename(p) {
        const trimmed = crosspath.toSlash(p).replace(/\/+$/, "");
        if (p === "") return ".";
        if (trimmed === "") return "/";
        return trimmed.slice(trimmed.lastIndexOf("/") + 1);
    },
    dirname(p) {
        if (p === "") return ".";
        const slashed = crosspath.toSlash(p);
        const dir = slashed.slice(0, slashed.lastIndexOf("/") + 1);
        if (dir === "") return ".";
        return dir.length > 1 ? dir.slice(0, -1) : dir;
    },
    // Go's path.Join: the non-empty parts joined by "/", then cleaned (no trailing, repeated or "." parts).
    join(...parts) {
        const given = parts.map(String).filter((part) => part !== "");
        return given.length === 0 ? "" : crosspath.toSlash(cleanPath(given.join("/")));
    },
    stem(p) {
        const base = crosspath.basename(p);
        const dot = base.lastIndexOf(".");
        return dot < 0 ? base : base.slice(0, dot);
    },
};

// Go's path.Clean.
function cleanPath(p) {
    const rooted = p.startsWith("/");
    const out = [];
    for (const part of p.split("/")) {
        if (part === "" || part === ".") continue;
        if (part === ".." && out.length > 0 && out.at(-1) !== "..") out.pop();
        else if (part !== ".." || !rooted) out.push(part);
    }
    const cleaned = (rooted ? "/" : "") + out.join("/");
    return cleaned === "" ? "." : cleaned;
}

// The frames of "1-10,20..25,40" (Flamenco and Blender notation), sorted, each once.
function explodeFrames(range) {
    const text = String(range);
    const frames = new Set();
    for (const part of text.replaceAll("..", "-").split(",")) {
        const ends = part.split("-").map((end) => end.trim());
        if (ends.length > 2 || !ends.every((end) => /^[+-]?\d+$/.test(end))) {
            throw new Error(`invalid range "${text}": ${part}`);
        }
        const [first, last] = [Number(ends[0]), Number(ends.at(-1))];
        for (let frame = first; frame <= last; frame++) frames.add(frame);
    }
    return [...frames].sort((a, b) => a - b);
}

// Frames as "3-8,13,15-17": runs of three or more frames as START-END.
function mergeFrames(frames) {
    const runs = [];
    for (const frame of frames) {
        const run = runs.at(-1);
        if (run && frame === run[1] + 1) run[1] = frame;
        else runs.push([frame, frame]);
    }
    return runs.flatMap(([first, last]) => {
        if (first === last) return [String(first)];
        if (first + 1 === last) return [String(first), String(last)];
        return [`${first}-${last}`];
    }).join(",");
}

function frameChunker(range, chunkSize) {
    if (String(range).trim() === "") throw new Error(`invalid range "${String(range).trim()}": empty range`);
    if (!(chunkSize >= 1)) throw new Error(`invalid chunk size, must be positive number: ${chunkSize}`);
    const frames = explodeFrames(range);
    if (frames.length === 0) throw new Error(`invalid range "${String(range).trim()}": empty range`);
    const chunks = [];
    for (let i = 0; i < frames.length; i += chunkSize) chunks.push(mergeFrames(frames.slice(i, i + chunkSize)));
    return chunks;
}

function formatTimestampLocal(time) {
    const pad = (n) => String(n).padStart(2, "0");
    return `${time.getFullYear()}-${pad(time.getMonth() + 1)}-${pad(time.getDate())}_`
        + `${pad(time.getHours())}${pad(time.getMinutes())}${pad(time.getSeconds())}`;
}

// google/shlex's Split, which the Manager's shellSplit and the Worker (for exeArgs) use: words split at
// spaces; '...' literal; "..." and outside quotes a backslash takes the next character as it is; a word
// starting with # is a comment to the end of the line.
export function shellSplit(text) {
    const words = [];
    let word = null;
    let quote = null;
    const chars = [...String(text)];
    for (let i = 0; i < chars.length; i++) {
        const c = chars[i];
        if (quote === "'") {
            if (c === "'") quote = null;
            else word += c;
        } else if (c === "\\") {
            if (i + 1 === chars.length) throw new Error("EOF found after escape character");
            word = (word ?? "") + chars[++i];
        } else if (quote === '"') {
            if (c === '"') quote = null;
            else word += c;
        } else if (c === "'" || c === '"') {
            quote = c;
            word = word ?? "";
        } else if (" \t\r\n".includes(c)) {
            if (word !== null) words.push(word);
            word = null;
        } else if (c === "#" && word === null) {
            while (i + 1 < chars.length && chars[i + 1] !== "\n") i++;
        } else {
            word = (word ?? "") + c;
        }
    }
    if (quote !== null) throw new Error("EOF found when expecting closing quote");
    if (word !== null) words.push(word);
    return words;
}

function globals(platform) {
    return {
        author,
        path: { basename: crosspath.basename, dirname: crosspath.dirname, join: crosspath.join, stem: crosspath.stem },
        process: { cwd: () => process.cwd(), platform },
        print: () => {},
        alert: () => {},
        frameChunker,
        frameCount: (range) => explodeFrames(range).length,
        formatTimestampLocal,
        shellSplit,
    };
}

// --- The job type's schema (the API's AvailableJobType and AvailableJobSetting) -----------------------------

const TYPES = ["string", "int32", "float", "bool"];
const SUBTYPES = ["file_path", "dir_path", "file_name", "hashed_file_path"];
const VISIBILITY = ["visible", "hidden", "submission", "web"];
const SETTING_KEYS = [
    "key", "type", "subtype", "choices", "propargs", "description", "label", "default", "eval", "evalInfo",
    "visible", "required", "editable",
];
// What the add-on's settings class (JobTypePropertyGroup) and Blender's PropertyGroup already have.
const ADDON_NAMES = [
    "job_type", "register_property_group", "unregister_property_group", "as_jobsettings", "label", "locals",
    "eval_and_assign", "eval_setting", "eval_hidden_settings_of_job", "eval_visible_settings_if_no_value",
    "last_n_dir_parts", "abspath", "name", "bl_rna", "rna_type",
];
// A value of each setting type, as the add-on's property of that type holds it.
const VALUE_OF_TYPE = {
    string: (v) => typeof v === "string",
    int32: (v) => Number.isInteger(v),
    float: (v) => typeof v === "number" && Number.isFinite(v),
    bool: (v) => typeof v === "boolean",
};

// What is wrong with JOB_TYPE, as a list of messages (empty when nothing is).
export function checkJobType(jobType) {
    const problems = [];
    if (typeof jobType !== "object" || jobType === null) return ["JOB_TYPE must be an object"];
    if (typeof jobType.label !== "string" || jobType.label === "") problems.push("JOB_TYPE.label must be text");
    if (jobType.description !== undefined && typeof jobType.description !== "string") {
        problems.push("JOB_TYPE.description must be text");
    }
    if (!Array.isArray(jobType.settings)) return [...problems, "JOB_TYPE.settings must be a list"];
    const seen = new Set();
    jobType.settings.forEach((setting, index) => {
        const where = `setting ${setting.key ?? index}`;
        const fail = (message) => problems.push(`${where}: ${message}`);
        // The add-on makes a Blender property of each setting, named by its key, on a class of its own.
        if (typeof setting.key !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(setting.key)) {
            fail("key must be a Python identifier");
        } else if (ADDON_NAMES.includes(setting.key)) {
            fail("key is a name Flamenco's add-on uses on its settings class");
        } else if (seen.has(setting.key)) {
            fail("key is declared twice");
        }
        seen.add(setting.key);
        for (const name of Object.keys(setting)) {
            if (!SETTING_KEYS.includes(name)) fail(`unknown field ${name}`);
        }
        if (!TYPES.includes(setting.type)) fail(`type must be one of ${TYPES.join(", ")}`);
        if (setting.subtype !== undefined && (setting.type !== "string" || !SUBTYPES.includes(setting.subtype))) {
            fail(`subtype must be one of ${SUBTYPES.join(", ")}, on a string`);
        }
        if (setting.choices !== undefined) {
            const texts = Array.isArray(setting.choices) && setting.choices.every((c) => typeof c === "string");
            if (setting.type !== "string" || !texts || setting.choices.length === 0) {
                fail("choices must be a non-empty list of text, on a string");
            }
        }
        if (setting.default !== undefined) {
            const valid = VALUE_OF_TYPE[setting.type]?.(setting.default)
                && (setting.choices === undefined || setting.choices.includes(setting.default));
            if (!valid) fail(`default ${JSON.stringify(setting.default)} is not a value of the setting`);
        }
        for (const name of ["description", "label", "eval"]) {
            if (setting[name] !== undefined && typeof setting[name] !== "string") fail(`${name} must be text`);
        }
        for (const name of ["required", "editable"]) {
            if (setting[name] !== undefined && typeof setting[name] !== "boolean") {
                fail(`${name} must be true or false`);
            }
        }
        if (setting.propargs !== undefined && (typeof setting.propargs !== "object" || setting.propargs === null)) {
            fail("propargs must be an object (keyword arguments of the Blender property)");
        }
        if (setting.visible !== undefined && !VISIBILITY.includes(setting.visible)) {
            fail(`visible must be one of ${VISIBILITY.join(", ")}`);
        }
        if (setting.evalInfo !== undefined) {
            const info = setting.evalInfo;
            if (typeof info?.showLinkButton !== "boolean" || typeof info?.description !== "string") {
                fail("evalInfo needs showLinkButton (true or false) and description (text)");
            }
        }
    });
    return problems;
}

// --- Compiling a job ----------------------------------------------------------------------------------------

// Runs a job type script; returns its JOB_TYPE and a function compiling a job from submitted settings. Like the
// Manager, which exports them into Go structures, it hands back plain data.
export function loadJobType(file, { platform = "linux" } = {}) {
    return loadScript(readFileSync(file, "utf8"), file, { platform });
}

export function loadScript(source, filename, { platform = "linux" } = {}) {
    const context = vm.createContext(globals(platform));
    vm.runInContext(source, context, { filename });
    const jobType = plain(vm.runInContext("typeof JOB_TYPE === 'undefined' ? undefined : JOB_TYPE", context));
    const problems = checkJobType(jobType);
    if (problems.length > 0) {
        throw new Error(`${filename}: JOB_TYPE does not fit Flamenco's schema:\n${problems.join("\n")}`);
    }
    const compileJob = vm.runInContext("typeof compileJob === 'undefined' ? undefined : compileJob", context);
    if (typeof compileJob !== "function") throw new Error(`${filename}: does not define a compileJob(job) function`);
    return {
        jobType,
        // settings: as submitted (after two-way variables); nothing is added to them.
        compile(settings, { name = "test job", created = new Date() } = {}) {
            const job = {
                jobID: randomUUID(), workerTagUUID: "", name, jobType: "test-job-type", priority: 50,
                status: "under-construction", created, settings: { ...settings }, metadata: {},
                storage: { shamanCheckoutID: "" }, tasks: [],
                addTask(task) {
                    if (!authoredTasks.has(task)) throw new TypeError("job.addTask: not a task from author.Task");
                    this.tasks.push(task);
                },
            };
            compileJob(job);
            const tasks = job.tasks.map((task) => ({
                name: task.name, type: task.type, priority: task.priority, commands: plain(task.commands),
                dependencies: task.dependencies.map((other) => other.name),
            }));
            for (const task of tasks) task.commands.forEach((command) => checkCommand(command, task.name));
            return tasks;
        },
    };
}

// A blender-render command as a Flamenco 3.5+ Worker reads it: exe is text; exeArgs text if given; blendfile
// text (which may be empty); argsBefore and args lists. This also asks that every argument is text, which the
// Worker would otherwise format from whatever value it finds.
function checkCommand(command, taskName) {
    if (command.name !== "blender-render") return;
    const parameters = command.parameters ?? {};
    const problems = [];
    if (typeof parameters.exe !== "string" || parameters.exe === "") problems.push("exe must be text");
    if (parameters.exeArgs !== undefined && typeof parameters.exeArgs !== "string") {
        problems.push("exeArgs must be text");
    }
    if (typeof parameters.blendfile !== "string") problems.push("blendfile must be text (empty: no file)");
    for (const key of ["argsBefore", "args"]) {
        const value = parameters[key];
        if (value !== undefined && !(Array.isArray(value) && value.every((arg) => typeof arg === "string"))) {
            problems.push(`${key} must be a list of text`);
        }
    }
    if (problems.length > 0) throw new Error(`task ${taskName}: blender-render: ${problems.join("; ")}`);
}

function plain(value) {
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

// --- What happens to a job on its way -----------------------------------------------------------------------

// The settings Flamenco's Blender add-on submits: every setting, each as the Blender property made from it
// holds it when the artist leaves it alone (its default, else "", 0, 0.0, false or the first choice), and
// `evaluated` for the settings whose `eval` the add-on runs in Blender at submission (the hidden ones).
export function addonSettings(jobType, evaluated = {}) {
    const untouched = { string: "", int32: 0, float: 0.0, bool: false };
    const settings = {};
    for (const setting of jobType.settings) {
        settings[setting.key] = setting.default ?? (setting.choices ? setting.choices[0] : untouched[setting.type]);
    }
    return { ...settings, ...evaluated };
}

// Variables as a Manager's configuration defines them: { name: { twoWay, values: { platform: value } } },
// with "all" for the value on every platform not named.
export const DEFAULT_VARIABLES = { // a Manager's own, for running Blender
    blender: { values: { linux: "blender", windows: "blender.exe", darwin: "blender" } },
    blenderArgs: { values: { all: "-b -y" } },
};

function valuesFor(variables, platform, { twoWay }) {
    const out = {};
    for (const [name, variable] of Object.entries(variables)) {
        if (Boolean(variable.twoWay) !== twoWay) continue;
        const value = variable.values[platform] ?? variable.values.all;
        // A two-way value loses its trailing separator: /mnt/farm/ also matches /mnt/farm/x.
        if (value !== undefined) out[name] = twoWay ? value.replace(/(.)[/\\]+$/, "$1") : value;
    }
    return out;
}

// Whether `text` starts with `prefix`; Windows paths (with a backslash) are also compared with slashes.
function startsWithPath(text, prefix) {
    if (text.startsWith(prefix)) return true;
    const slashed = (s) => (s.includes("\\") ? crosspath.toSlash(s) : s);
    return slashed(text).startsWith(slashed(prefix));
}

// What the Manager does to a submitted job before compiling it: each text setting that starts with a two-way
// variable's value on the submitter's platform (in any case) gets the variable in its place. Only that start
// is replaced: a second path later in the same setting is left as it is.
export function replaceTwoWay(settings, variables, submitterPlatform) {
    const twoWay = valuesFor(variables, submitterPlatform, { twoWay: true });
    const out = { ...settings };
    for (const [key, value] of Object.entries(settings)) {
        if (typeof value !== "string") continue;
        let result = value;
        for (const [name, prefix] of Object.entries(twoWay)) {
            if (startsWithPath(result.toLowerCase(), prefix.toLowerCase())) {
                result = `{${name}}${result.slice(prefix.length)}`;
            }
        }
        out[key] = result;
    }
    return out;
}

// One argument as the Manager sends it to a Worker on `worker`: variables replaced by their values there; a
// path made with a two-way variable, or starting with its value on the Manager's platform, gets that value
// on the Worker's and the Worker's separators.
function expand(text, variables, { manager, worker }) {
    let out = text;
    for (const [name, value] of Object.entries(valuesFor(variables, worker, { twoWay: false }))) {
        out = out.replaceAll(`{${name}}`, value);
    }
    const target = valuesFor(variables, worker, { twoWay: true });
    let isPath = false;
    for (const [name, value] of Object.entries(target)) {
        if (out.includes(`{${name}}`)) [out, isPath] = [out.replaceAll(`{${name}}`, value), true];
    }
    for (const [name, value] of Object.entries(valuesFor(variables, manager, { twoWay: true }))) {
        if (target[name] === undefined || !startsWithPath(out, value)) continue;
        out = target[name] + out.slice(value.length);
        isPath = true;
    }
    return isPath ? toPlatform(out, worker) : out;
}

// crosspath.ToPlatform: every slash and backslash as the platform's separator; on Windows F:path is F:\path.
function toPlatform(p, platform) {
    const separator = platform === "windows" ? "\\" : "/";
    const leading = p.match(/^[/\\]*/)[0].length;
    const out = "".padStart(leading, separator) + p.split(/[/\\]+/).filter((part) => part !== "").join(separator);
    return platform === "windows" ? out.replace(/^([A-Za-z]:)(?![\\])/, "$1\\") : out;
}

// The command line a Worker on `worker` runs for a blender-render command: {exe} {exeArgs} {argsBefore}
// {blendfile} {args}, exeArgs split like a shell, an empty blendfile left out (Flamenco 3.5+).
export function workerArgv(parameters, variables, { manager = "linux", worker = "linux" } = {}) {
    const at = (text) => expand(text, variables, { manager, worker });
    const blendfile = at(parameters.blendfile);
    return [
        at(parameters.exe),
        ...shellSplit(at(parameters.exeArgs ?? "")),
        ...(parameters.argsBefore ?? []).map(at),
        ...(blendfile === "" ? [] : [blendfile]),
        ...(parameters.args ?? []).map(at),
    ];
}
