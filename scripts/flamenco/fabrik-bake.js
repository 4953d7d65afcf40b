// SPDX-License-Identifier: GPL-3.0-or-later
//
// Flamenco job type "fabrik-bake": bake FABRIK inverse kinematics into bone rotation keys on a render farm, as
// files set up in Blender's sidebar are (their saved chain lists: give no tip, target or config), or plant the
// feet of captured animation (plant_feet), or make targets from the animation (targets_from_animation), with the
// fabrik_bake command of FABRIK IK, which the extension registers in Blender. One task per .blend
// file named in `files` (or one task for the whole folder); each task runs
//
//     {blender} {blenderArgs} --disable-autoexec -c fabrik_bake FILE OPTIONS...
//
// on a Worker whose Blender has the extension installed (see the README's "Render farms"). The file is an
// argument of the command, not given to Blender itself, so the command opens it with its embedded Python
// turned off (Flamenco's default blenderArgs, "-b -y", would let Blender run it). That needs Flamenco 3.5 or
// newer: older Workers refuse a blender-render command without a blend file. A task fails when its file
// fails to bake (exit status 1), the options are wrong (exit status 2) or, with `strict`, a frame of a chain
// is off target (exit status 3).
//
// Settings left alone are not passed, so the command's own defaults apply (blender -c fabrik_bake --help),
// and the command checks every value it is given: nothing is copied here that could drift from the bake.
// Flamenco's Blender add-on sends every setting, those left alone as "", 0, 0.0, false or a setting's first
// choice ("default"); an API call sends only the keys it gives. Both mean "not given" here: for each number
// setting, 0 is a value the command refuses or its default anyway (chain_length 0: up to the root).
//
// Paths: each setting holds one path, because Flamenco's two-way variables (mixed-platform farms) replace the
// start of a setting only; `files` holds names relative to `folder`, which need no translation. A path
// starting with // is relative to the .blend file it was chosen in, as everywhere in Blender: the add-on
// evaluates blend_dir in Blender at submission to resolve it. The job type has no setting named "blendfile":
// the add-on would put the path of its packed copy of the open file there.
//
// Install: copy this file into the "scripts" folder next to the flamenco-manager executable. See the
// README's "Render farms" section.

const JOB_TYPE = {
    label: "FABRIK Bake",
    description: "Bake FABRIK IK into bone rotation keys, or plant feet, one task per .blend file",
    settings: [
        { key: "folder", type: "string", subtype: "dir_path",
          description: "Folder of the .blend files to bake (//: relative to the open .blend file)" },
        { key: "files", type: "string",
          description: "Names of .blend files in the folder, separated by ';', one task each; empty: one task "
              + "bakes every .blend file directly in the folder" },
        { key: "config", type: "string", subtype: "file_path",
          description: "A TOML or JSON file listing the chains to bake (instead of armature, tip and target)" },
        { key: "armature", type: "string",
          description: "The armature object; alone (no tip, target, config or plant_feet), its chain list as "
              + "saved in each file is baked; empty too, every armature's" },
        { key: "tip", type: "string", description: "The chain's last bone, whose tail follows the target" },
        { key: "chain_length", type: "int32", propargs: { min: 0 },
          description: "Bones up from the tip; 0: to the root" },
        { key: "target", type: "string", description: "The object the tip follows" },
        { key: "plant_feet", type: "string",
          description: "Foot bones separated by ',' to plant on the armature's animation instead of baking a "
              + "chain (each foot's tail held through its contacts; chain_length: bones in each leg)" },
        { key: "hips", type: "string",
          description: "With plant_feet: a bone above the legs lowered (keyed Location) where a pin is out of reach" },
        { key: "targets_from_animation", type: "bool", default: false,
          description: "Instead of baking, make targets and poles keyed where the chain lists' tips and bends are in "
              + "the animation (bake the output in a second job to follow them)" },
        { key: "frames", type: "string", description: "Frames to bake, START-END; empty: each scene's range" },
        { key: "step", type: "int32", propargs: { min: 0 },
          description: "Key every N-th frame, and the last; 0: every frame" },
        { key: "tolerance", type: "float", propargs: { min: 0, precision: 6 },
          description: "Tip distance allowed, in world units (planting feet: in leg lengths); 0: the "
              + "command's default" },
        { key: "max_iterations", type: "int32", propargs: { min: 0 },
          description: "Solver iterations per frame at most; 0: the command's default" },
        { key: "method", type: "string", choices: ["default", "fabrik", "ccd"],
          description: "IK solver; default: the command's own" },
        { key: "layer", type: "bool", default: false,
          description: "Key a layer over the animation (an NLA track that can be muted) instead of the Action "
              + "(a chain list saved with Output Layer is baked as a layer without it)" },
        { key: "key_error", type: "float", propargs: { min: 0, precision: 6 },
          description: "World units: keep keys on the fewest frames that keep every baked bone within this of the "
              + "solved pose; 0: a key on every frame" },
        { key: "output", type: "string", subtype: "dir_path",
          description: "Folder for the baked files; empty: <name>_baked.blend beside each file" },
        { key: "in_place", type: "bool", default: false,
          description: "Replace each file by its bake (atomically, and only if the bake succeeds)" },
        { key: "overwrite", type: "bool", default: false,
          description: "Replace baked files that exist already (without it, a task run again fails on its own "
              + "output, and a file whose output exists is not baked)" },
        { key: "strict", type: "bool", default: false,
          description: "Fail a task (exit status 3) when a frame of any chain is off target or out of reach, "
              + "once its files are baked and saved" },
        { key: "report_dir", type: "string", subtype: "dir_path", description: "Folder for one JSON report per task" },
        { key: "processes", type: "int32", default: 1, propargs: { min: 1 },
          description: "Parallel processes when one task bakes the whole folder" },
        // Evaluated by the add-on in Blender when it submits: the folder of the open .blend file. An API call
        // may leave it out (and then give no // paths).
        { key: "blend_dir", type: "string", visible: "hidden", eval: "str(abspath('//'))",
          description: "Folder of the .blend file the job was submitted from, which // paths are relative to" },
    ],
};

function compileJob(job) {
    const settings = givenSettings(job.settings);
    const targets = bakeTargets(settings);
    const options = bakeOptions(settings);
    const reportDir = farmPath(settings, "report_dir");
    targets.forEach((target, index) => {
        const task = author.Task(`bake ${index + 1}/${targets.length}: ${path.basename(target.input)}`, "blender");
        const report = reportDir === undefined
            ? []
            : ["--report", path.join(reportDir, `${path.stem(target.input)}.json`)];
        task.addCommand(author.Command("blender-render", {
            exe: "{blender}",
            exeArgs: "{blenderArgs}",
            argsBefore: ["--disable-autoexec", "-c", "fabrik_bake"],
            blendfile: "", // the command opens the file, with its Python off (Flamenco 3.5+)
            args: [target.input, ...target.args, ...options, ...report],
        }));
        job.addTask(task);
    });
}

// The settings given, by key: those left alone (see the top of the file) are left out. Raises for a value
// of the wrong kind, naming the setting, and for a setting this job type does not have (a misspelt key).
function givenSettings(submitted) {
    const keys = JOB_TYPE.settings.map((setting) => setting.key);
    const unknown = Object.keys(submitted).filter((key) => !keys.includes(key));
    if (unknown.length > 0) {
        throw `unknown setting ${unknown.join(", ")}: the settings are ${keys.join(", ")}`;
    }
    const settings = {};
    for (const setting of JOB_TYPE.settings) {
        const value = submitted[setting.key];
        const choices = setting.choices || [];
        const untouched = value === undefined || value === null || value === 0 || value === false
            || (typeof value === "string" && value.trim() === "") || value === choices[0];
        if (untouched) {
            continue;
        }
        const [fits, kind] = KINDS[setting.type];
        if (!fits(value) || (choices.length > 0 && !choices.includes(value))) {
            const expected = choices.length > 0 ? `one of ${choices.join(", ")}` : kind;
            throw `${setting.key} must be ${expected}, got ${JSON.stringify(value)}`;
        }
        settings[setting.key] = value;
    }
    return settings;
}

const KINDS = {
    string: [(value) => typeof value === "string", "text"],
    int32: [(value) => Number.isInteger(value), "a whole number"],
    float: [(value) => typeof value === "number" && isFinite(value), "a number"],
    bool: [(value) => typeof value === "boolean", "true or false"],
};

// What each task bakes: a file of the folder, or the whole folder (the Manager cannot list a folder's files).
function bakeTargets(settings) {
    const folder = farmPath(settings, "folder");
    if (folder === undefined) {
        throw "nothing to bake: give a folder (and names of .blend files in it, or none to bake them all)";
    }
    const names = (settings.files || "").split(";").map((name) => name.trim()).filter((name) => name !== "");
    if (names.length === 0) {
        return [{ input: folder, args: ["-j", String(settings.processes || 1)] }];
    }
    const targets = names.map((name) => {
        if (ABSOLUTE.test(name)) {
            throw `files holds names in the folder, relative to it: ${name} is a path of its own `
                + "(give its folder as folder)";
        }
        return { input: path.join(folder, name), args: [] };
    });
    if (settings.output !== undefined || settings.report_dir !== undefined) {
        const seen = {};
        for (const { input } of targets) {
            const stem = path.stem(input);
            if (seen[stem] !== undefined) {
                throw `${seen[stem]} and ${input} would overwrite each other's baked file or report `
                    + `(both named ${stem})`;
            }
            seen[stem] = input;
        }
    }
    return targets;
}

// The command-line options every task shares.
function bakeOptions(settings) {
    const chain = ["armature", "tip", "target"].filter((key) => settings[key] !== undefined);
    const args = [];
    if (settings.hips !== undefined && settings.plant_feet === undefined) {
        throw "hips applies to plant_feet: give the foot bones to plant";
    }
    if (settings.plant_feet !== undefined) {
        const others = ["config", "tip", "target"].filter((key) => settings[key] !== undefined);
        if (others.length > 0) {
            throw `plant_feet plants the armature's feet: leave out ${others.join(", ")}`;
        }
        if (settings.armature === undefined) {
            throw "give the armature whose feet plant_feet names";
        }
        if (settings.step !== undefined && settings.step !== 1) {
            throw "plant_feet plants every frame: leave step at 0 (every frame)";
        }
        if (settings.method === "ccd") {
            throw "plant_feet plants with FABRIK: leave method at default (or fabrik)";
        }
        args.push("--armature", settings.armature, "--plant-feet", settings.plant_feet);
        if (settings.hips !== undefined) {
            args.push("--hips", settings.hips);
        }
        if (settings.chain_length !== undefined) {
            args.push("--leg-bones", String(settings.chain_length));
        }
    } else if (settings.targets_from_animation) {
        const others = ["config", "tip", "target", "chain_length"].filter((key) => settings[key] !== undefined);
        if (others.length > 0) {
            throw "targets_from_animation makes targets for the chain lists saved in the files: leave out "
                + others.join(", ");
        }
        args.push(...(settings.armature === undefined ? [] : ["--armature", settings.armature]));
        args.push("--targets-from-animation");
    } else if (settings.config !== undefined) {
        if (chain.length > 0) {
            throw `the config file lists the chains: leave out ${chain.join(", ")}`;
        }
        args.push("--config", farmPath(settings, "config"));
    } else if (["tip", "target", "chain_length"].every((key) => settings[key] === undefined)) {
        // Only the armature, or nothing: the chain lists saved in the files, baked as the sidebar bakes them.
        args.push(...(settings.armature === undefined ? [] : ["--armature", settings.armature]));
    } else {
        if (chain.length < 3) {
            throw "give armature, tip and target, or a config file listing the chains, or only the armature (or "
                + "nothing) to bake the chain lists saved in the files";
        }
        args.push("--armature", settings.armature, "--tip", settings.tip, "--target", settings.target);
        if (settings.chain_length !== undefined) {
            args.push("--chain-length", String(settings.chain_length));
        }
    }
    for (const [key, flag] of [["frames", "--frames"], ["step", "--step"], ["tolerance", "--tolerance"],
                               ["max_iterations", "--max-iterations"], ["method", "--method"],
                               ["key_error", "--key-error"]]) {
        if (settings[key] !== undefined) {
            args.push(flag, String(settings[key]));
        }
    }
    if (settings.in_place && settings.output !== undefined) {
        throw "give an output folder or in_place, not both";
    }
    if (settings.in_place) {
        args.push("--in-place");
    } else if (settings.output !== undefined) {
        args.push("--output", farmPath(settings, "output"));
    }
    if (settings.layer && settings.targets_from_animation) {
        throw "layer applies to bakes: leave it out with targets_from_animation";
    }
    for (const [key, flag] of [["layer", "--layer"], ["overwrite", "--overwrite"], ["strict", "--strict"]]) {
        if (settings[key]) {
            args.push(flag);
        }
    }
    return args;
}

// A path as it starts on any platform: /, \, a drive (C:\ or C:/) or a Flamenco variable ({storage}/...).
const ABSOLUTE = /^([/\\]|[A-Za-z]:[/\\]|\{[^{}]+\})/;

// The path setting `key` as the Workers are to read it (undefined when not given). A // path is joined to
// blend_dir; any other path must be absolute: a Worker has no folder it could be relative to.
function farmPath(settings, key) {
    if (settings[key] === undefined) {
        return undefined;
    }
    const value = settings[key].trim();
    if (value.startsWith("//") && key !== "blend_dir") {
        if (settings.blend_dir === undefined) {
            throw `${key} ${value} is relative to a .blend file (//), which only Flamenco's Blender add-on `
                + "resolves (it sets blend_dir): give an absolute path";
        }
        return path.join(farmPath(settings, "blend_dir"), value.slice(2));
    }
    if (!ABSOLUTE.test(value)) {
        throw `${key} ${value} is a relative path: give an absolute path (or, in Blender, one starting with //)`;
    }
    return value;
}
