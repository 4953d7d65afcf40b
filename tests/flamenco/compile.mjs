// Prints the tasks the fabrik-bake job type compiles for the settings given as JSON (used by pytest).
//     node tests/flamenco/compile.mjs '{"blendfiles": "/a.blend", ...}'
import { fileURLToPath } from "node:url";
import { loadJobType, withDefaults } from "./flamenco_standin.mjs";

const script = fileURLToPath(new URL("../../scripts/flamenco/fabrik-bake.js", import.meta.url));
const { jobType, compile } = loadJobType(script);
const tasks = compile(withDefaults(jobType, JSON.parse(process.argv[2])));
console.log(JSON.stringify(tasks));
