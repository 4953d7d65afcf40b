// Prints the tasks the fabrik-bake job type compiles for a submission given as JSON (used by pytest), each with
// the command line a Worker runs for it:
//
//     node tests/flamenco/compile.mjs '{"settings": {...}, "addon": true, "submitter": "windows",
//                                       "worker": "linux", "variables": {...}}'
//     node tests/flamenco/compile.mjs --job-type       (prints JOB_TYPE instead)
//
// settings: as an API call sends them, or with "addon", completed as Flamenco's Blender add-on sends them
// (every other setting left alone). variables: the Manager's, besides its defaults for {blender} and
// {blenderArgs} (see flamenco_standin.mjs for the form). The Manager runs on Linux.
import { fileURLToPath } from "node:url";
import { DEFAULT_VARIABLES, addonSettings, loadJobType, replaceTwoWay, workerArgv } from "./flamenco_standin.mjs";

const script = fileURLToPath(new URL("../../scripts/flamenco/fabrik-bake.js", import.meta.url));
const { jobType, compile } = loadJobType(script);
if (process.argv[2] === "--job-type") {
    console.log(JSON.stringify(jobType));
    process.exit(0);
}
const submission = JSON.parse(process.argv[2]);
const variables = { ...DEFAULT_VARIABLES, ...submission.variables };
const given = submission.addon ? addonSettings(jobType, submission.settings) : submission.settings;
const tasks = compile(replaceTwoWay(given, variables, submission.submitter ?? "linux"));
const worker = { manager: "linux", worker: submission.worker ?? "linux" };
console.log(JSON.stringify(tasks.map((task) => ({
    ...task, argv: workerArgv(task.commands[0].parameters, variables, worker),
}))));
