// Keeps the vendored tests out of the project's build output: finds the build's tsconfig and plans its `exclude`.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { BlocksConfig } from "../config/blocks-config.js";
import type { PackageJson } from "../project/package-json.js";
import { readIfExists, toPosix } from "../utils/files.js";
import type { PlannedFile } from "./plan-files.js";

/**
 * none: nothing to change (the message says why). edit: `file` gets `content`. manual: blocks cannot
 * change it safely (comments, solution-style tsconfig); the message holds the exact fix.
 */
export type BuildPlan =
  | { kind: "none"; message: string }
  | { kind: "manual"; message: string }
  | { kind: "edit"; message: string; edits: Array<{ file: string; content: string }> };

type Scripts = { scripts?: Record<string, string> };
type BuildConfigJson = {
  extends?: string;
  include?: string[];
  exclude?: string[];
  files?: string[];
  references?: unknown[];
  compilerOptions?: { noEmit?: boolean; outDir?: string };
};

function isPlainJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * @example
 * await planBuild("/app", pkg, config, files);
 * // { kind: "edit", message: "tsconfig.build.json: exclude src/blocks/**\/*.test.ts ...", edits: [...] }
 */
export async function planBuild(
  root: string,
  pkg: PackageJson,
  config: BlocksConfig,
  files: PlannedFile[],
): Promise<BuildPlan> {
  const patterns = testPatterns(config, files);
  if (patterns.length === 0) return { kind: "none", message: "" };
  const list = patterns.map((pattern) => `"${pattern}"`).join(", ");
  const script = (pkg as Scripts).scripts?.build;
  const tsc = script === undefined ? undefined : /(?:^|[\s;&|])tsc(?:\s+(?<args>[^;&|]*))?/.exec(script);
  if (script === undefined || !tsc) {
    const nest = (await readIfExists(path.join(root, "tsconfig.build.json"))) !== undefined && script !== undefined;
    if (!nest) {
      const why =
        script === undefined
          ? "no build script"
          : `the build (\`${script}\`) bundles from its entry points, which never import the tests`;
      return { kind: "none", message: `${why}: nothing to exclude (if you later compile with tsc, exclude ${list}).` };
    }
  }
  const args = tsc?.groups?.args?.trim().split(/\s+/) ?? [];
  if (args.includes("-b") || args.includes("--build")) {
    return {
      kind: "manual",
      message: `the build runs \`tsc --build\`: add ${list} to the "exclude" of the referenced project that compiles ${config.dir}.`,
    };
  }
  const projectFlag = args.findIndex((arg) => arg === "-p" || arg === "--project");
  const given = projectFlag >= 0 ? args[projectFlag + 1] : tsc ? undefined : "tsconfig.build.json";
  const configFile =
    given === undefined ? "tsconfig.json" : given.endsWith(".json") ? given : path.join(given, "tsconfig.json");
  const text = await readIfExists(path.join(root, configFile));
  if (text === undefined) {
    return { kind: "none", message: `no ${configFile}: tsc compiles nothing from it, so nothing to exclude.` };
  }
  const { ts } = await import("ts-morph");
  const json = (ts.parseConfigFileTextToJson(configFile, text).config ?? {}) as BuildConfigJson;
  if (configFile !== "tsconfig.json" && !isPlainJson(text)) {
    return {
      kind: "manual",
      message: `${configFile} has comments, so blocks leaves it alone: add ${list} to its "exclude".`,
    };
  }
  if (json.references && json.files?.length === 0) {
    return {
      kind: "manual",
      message: `${configFile} is solution-style (references): add ${list} to the "exclude" of the referenced project that compiles ${config.dir}.`,
    };
  }
  if (json.compilerOptions?.noEmit === true)
    return { kind: "none", message: `${configFile} has noEmit: the build emits nothing from it.` };
  if (json.include && !json.include.some((entry) => covers(entry, config.dir))) {
    return {
      kind: "none",
      message: `${configFile}'s "include" does not cover ${config.dir}: its tests are not built.`,
    };
  }
  if (configFile === "tsconfig.json") return splitBuildConfig(root, pkg as Scripts, script ?? "", json, patterns);
  const exclude = json.exclude ?? (await inheritedExclude(root, json.extends)) ?? ["node_modules"];
  const missing = patterns.filter((pattern) => !exclude.includes(pattern));
  if (missing.length === 0) return { kind: "none", message: `${configFile} already excludes the tests.` };
  const content = `${JSON.stringify({ ...json, exclude: [...exclude, ...missing] }, null, 2)}\n`;
  return {
    kind: "edit",
    message: `${configFile}: "exclude" gains ${missing.map((pattern) => `"${pattern}"`).join(", ")}, so the build emits no test.`,
    edits: [{ file: configFile, content }],
  };
}

/** The build compiles tsconfig.json, which editors and `tsc --noEmit` also use: the tests stay checked there, and the build gets its own config. */
async function splitBuildConfig(
  root: string,
  pkg: Scripts,
  script: string,
  json: BuildConfigJson,
  patterns: string[],
): Promise<BuildPlan> {
  if ((await readIfExists(path.join(root, "tsconfig.build.json"))) !== undefined) {
    return {
      kind: "manual",
      message: `the build compiles tsconfig.json while tsconfig.build.json exists: build with \`tsc -p tsconfig.build.json\` and add ${patterns.map((p) => `"${p}"`).join(", ")} to its "exclude".`,
    };
  }
  const outDir = json.compilerOptions?.outDir;
  const exclude = [
    ...(json.exclude ?? ["node_modules", ...(outDir ? [toPosix(path.posix.normalize(outDir))] : [])]),
    ...patterns,
  ];
  const build = { extends: "./tsconfig.json", exclude };
  const newScript = /\s(-p|--project)\s+\S+/.test(script)
    ? script.replace(/\s(-p|--project)\s+\S+/, " -p tsconfig.build.json")
    : script.replace(/(^|[\s;&|])tsc(?=\s|$)/, "$1tsc -p tsconfig.build.json");
  const packageJson = JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as Scripts;
  packageJson.scripts = { ...packageJson.scripts, build: newScript };
  return {
    kind: "edit",
    message: `tsconfig.build.json (extends tsconfig.json, excludes the tests) and the build script becomes \`${newScript}\`: tsc --noEmit still checks the tests, the build emits none.`,
    edits: [
      { file: "tsconfig.build.json", content: `${JSON.stringify(build, null, 2)}\n` },
      { file: "package.json", content: `${JSON.stringify(packageJson, null, 2)}\n` },
    ],
  };
}

/** Globs for what must not be built: test files and test helpers under the blocks folder, and the wiring's test. */
function testPatterns(config: BlocksConfig, files: PlannedFile[]): string[] {
  const inBlocks = (file: PlannedFile) => file.target.startsWith(`${config.dir}/`);
  const patterns = new Set<string>();
  for (const file of files) {
    if (inBlocks(file) && file.target.endsWith(".test.ts")) patterns.add(`${config.dir}/**/*.test.ts`);
    else if (inBlocks(file) && file.target.includes("/testing/")) patterns.add(`${config.dir}/**/testing/**`);
    else if (!inBlocks(file) && file.target.endsWith(".test.ts")) patterns.add(file.target);
  }
  return [...patterns];
}

/** Whether an `include` entry ("src", "src/**\/*", "src/**\/*.ts") reaches `dir`. */
function covers(entry: string, dir: string): boolean {
  const base = toPosix(entry)
    .replace(/^\.\//, "")
    .split("/")
    .filter((part) => !part.includes("*"))
    .join("/");
  if (/\.[cm]?tsx?$/.test(base)) return false;
  return base === "" || base === "." || dir === base || dir.startsWith(`${base}/`);
}

async function inheritedExclude(root: string, extended: string | undefined): Promise<string[] | undefined> {
  if (!extended?.startsWith(".")) return undefined;
  const text = await readIfExists(path.join(root, extended.endsWith(".json") ? extended : `${extended}.json`));
  if (text === undefined) return undefined;
  const { ts } = await import("ts-morph");
  return (ts.parseConfigFileTextToJson(extended, text).config as BuildConfigJson | undefined)?.exclude;
}
