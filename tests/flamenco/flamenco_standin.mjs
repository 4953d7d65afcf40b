// A minimal stand-in for Flamenco Manager's job compiler runtime, enough to run a job type script in Node.
//
// Flamenco runs a job type as a plain script in a JavaScript VM whose globals include `author` (Task,
// Command), `path` (basename, dirname, join, stem), `print` and `alert`; it reads the script's JOB_TYPE and
// calls compileJob(job), where `job.settings` holds the submitted settings and `job.addTask` collects the
// tasks built with `author.Task(name, type)`, `task.addCommand(author.Command(name, parameters))` and
// `task.addDependency(task)`. (Flamenco's internal/manager/job_compilers: author.go, scripts.go, js_path.go.)
import { readFileSync } from "node:fs";
import posix from "node:path/posix";
import vm from "node:vm";

const author = {
    Task(name, type) {
        name = String(name).trim();
        type = String(type).trim();
        if (name === "") throw new Error("author.Task(name, type): name is required");
        if (type === "") throw new Error("author.Task(name, type): type is required");
        return {
            name, type, priority: 50, commands: [], dependencies: [],
            addCommand(command) { this.commands.push(command); },
            addDependency(task) { this.dependencies.push(task); },
        };
    },
    Command(name, parameters, totalStepCount = 0) {
        return { name, parameters, totalStepCount };
    },
};

const path = {
    basename: (p) => posix.basename(p),
    dirname: (p) => posix.dirname(p),
    join: (...parts) => posix.join(...parts),
    stem: (p) => posix.basename(p, posix.extname(p)),
};

// Loads a job type script; returns its JOB_TYPE and a function compiling a job from its settings. Like the
// Manager, which exports them into Go structures, it hands back plain data: the tasks' names, types and
// commands, and JOB_TYPE's fields.
export function loadJobType(file) {
    const context = vm.createContext({ author, path, print: () => {}, alert: () => {} });
    vm.runInContext(readFileSync(file, "utf8"), context, { filename: file });
    const jobType = plain(vm.runInContext("JOB_TYPE", context));
    const compileJob = vm.runInContext("compileJob", context);
    return {
        jobType,
        compile(settings) {
            const job = {
                name: "test job", settings: { ...settings }, metadata: {}, created: new Date(), tasks: [],
                addTask(task) { this.tasks.push(task); },
            };
            compileJob(job);
            return plain(job.tasks.map(({ name, type, priority, commands }) => ({ name, type, priority, commands })));
        },
    };
}

function plain(value) {
    return JSON.parse(JSON.stringify(value));
}

// The settings a submission gets from JOB_TYPE's defaults, overridden by `given`.
export function withDefaults(jobType, given) {
    const settings = {};
    for (const setting of jobType.settings) {
        if (setting.default !== undefined) settings[setting.key] = setting.default;
    }
    return { ...settings, ...given };
}
