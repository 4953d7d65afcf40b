// SPDX-License-Identifier: GPL-3.0-or-later
//
// Flamenco job type "fabrik-bake": bake FABRIK inverse kinematics into bone rotation keys on a render farm,
// with the fabrik_bake command of FABRIK IK, which the extension registers in Blender. One task per .blend
// file; each task runs
//
//     {blender} {blenderArgs} --disable-autoexec -c fabrik_bake FILE OPTIONS...
//
// on a Worker whose Blender has the extension installed (see the README's "Render farms"). The file is an
// argument of the command, not given to Blender itself, so the command opens it with its embedded Python
// turned off (Flamenco's default blenderArgs, "-b -y", would let Blender run it). A task fails when its file
// fails to bake (exit status 1) or the options are wrong (exit status 2).
//
// The bake settings have no defaults here: a setting left empty is not passed, so the command's own default
// applies (blender -c fabrik_bake --help), and the command checks every value it is given. Nothing is copied here
// that could drift from the bake.
//
// Install: copy this file into the "scripts" folder next to the flamenco-manager executable. See the
// README's "Render farms" section.

const JOB_TYPE = {
    label: "FABRIK Bake",
    description: "Bake FABRIK IK into bone rotation keys, one task per .blend file",
    settings: [
        { key: "blendfiles", type: "string", description: "The .blend files to bake, separated by ';' (one task each)" },
        { key: "folder", type: "string", subtype: "dir_path",
          description: "Or a folder: one task bakes every .blend file directly in it" },
        { key: "config", type: "string", subtype: "file_path",
          description: "A TOML or JSON file listing the chains to bake (instead of armature, tip and target)" },
        { key: "armature", type: "string", description: "The armature object" },
        { key: "tip", type: "string", description: "The chain's last bone, whose tail follows the target" },
        { key: "chain_length", type: "int32", description: "Bones up from the tip; 0 or empty: to the root" },
        { key: "target", type: "string", description: "The object the tip follows" },
        { key: "frames", type: "string", description: "Frames to bake, START-END; empty: each scene's range" },
        { key: "step", type: "int32", description: "Key every N-th frame; empty: every frame" },
        { key: "tolerance", type: "float", description: "Tip distance allowed, in world units; empty: the default" },
        { key: "max_iterations", type: "int32", description: "Solver iterations per frame at most; empty: the default" },
        { key: "method", type: "string", choices: ["fabrik", "ccd"], description: "IK solver; empty: FABRIK" },
        { key: "output", type: "string", subtype: "dir_path",
          description: "Folder for the baked files; empty: <name>_baked.blend beside each file" },
        { key: "in_place", type: "bool", default: false,
          description: "Replace each file by its bake (atomically, and only if the bake succeeds)" },
        { key: "report_dir", type: "string", subtype: "dir_path", description: "Folder for one JSON report per task" },
        { key: "processes", type: "int32", default: 1, description: "Parallel processes of a folder's task" },
    ],
};

function compileJob(job) {
    const settings = job.settings;
    const options = bakeOptions(settings);
    const targets = bakeTargets(settings);
    targets.forEach((target, index) => {
        const task = author.Task(`bake ${index + 1}/${targets.length}: ${path.basename(target.input)}`, "blender");
        const report = given(settings.report_dir)
            ? ["--report", path.join(settings.report_dir, `${path.stem(target.input)}.json`)]
            : [];
        task.addCommand(author.Command("blender-render", {
            exe: "{blender}",
            exeArgs: "{blenderArgs}",
            argsBefore: ["--disable-autoexec", "-c", "fabrik_bake"],
            blendfile: "", // the command opens the file, with its Python off
            args: [target.input, ...target.args, ...options, ...report],
        }));
        job.addTask(task);
    });
}

// What each task bakes: a file of the list, or a whole folder (the Manager cannot list a folder's files).
function bakeTargets(settings) {
    const files = given(settings.blendfiles)
        ? settings.blendfiles.split(";").map((file) => file.trim()).filter((file) => file !== "")
        : [];
    if (files.length > 0 && given(settings.folder)) {
        throw "give either blendfiles or a folder, not both";
    }
    if (given(settings.folder)) {
        return [{ input: settings.folder, args: ["-j", String(settings.processes || 1)] }];
    }
    if (files.length === 0) {
        throw "nothing to bake: give blendfiles (separated by ';') or a folder";
    }
    return files.map((file) => ({ input: file, args: [] }));
}

// The command-line options every task shares.
function bakeOptions(settings) {
    const chain = ["armature", "tip", "target"].filter((key) => given(settings[key]));
    let args;
    if (given(settings.config)) {
        if (chain.length > 0) {
            throw `the config file lists the chains: leave out ${chain.join(", ")}`;
        }
        args = ["--config", settings.config];
    } else {
        if (chain.length < 3) {
            throw "give armature, tip and target (or a config file listing the chains)";
        }
        args = ["--armature", settings.armature, "--tip", settings.tip, "--target", settings.target];
        if (settings.chain_length) {
            args.push("--chain-length", String(settings.chain_length));
        }
    }
    for (const [key, flag] of [["frames", "--frames"], ["step", "--step"], ["tolerance", "--tolerance"],
                               ["max_iterations", "--max-iterations"], ["method", "--method"]]) {
        if (given(settings[key])) {
            args.push(flag, String(settings[key]));
        }
    }
    if (settings.in_place && given(settings.output)) {
        throw "give an output folder or in_place, not both";
    }
    if (settings.in_place) {
        args.push("--in-place");
    } else if (given(settings.output)) {
        args.push("--output", settings.output);
    }
    return args;
}

function given(value) {
    return value !== undefined && value !== null && value !== "";
}
