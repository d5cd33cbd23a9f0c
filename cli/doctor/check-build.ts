// The project's build must not compile (and emit) the vendored tests.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { ts } from "ts-morph";
import { toPosix } from "../utils/files.js";
import { finding, type Finding } from "./finding.js";

/**
 * The build tsconfig: the one `tsc -p <file or folder>` names in the build script, else tsconfig.build.json,
 * else tsconfig.json when the build script runs plain `tsc`.
 *
 * @example
 * checkBuild("/app", "src/blocks", { build: "tsc -p tsconfig.build.json" });
 */
export function checkBuild(root: string, blocksDir: string, scripts: Record<string, string>): Finding[] {
  const build = scripts.build ?? "";
  const named = /\btsc\b[^&|;]*?(?:-p|--project)[ =]["']?([^\s"']+)/.exec(build)?.[1];
  const config =
    named ??
    (existsSync(path.join(root, "tsconfig.build.json"))
      ? "tsconfig.build.json"
      : /\btsc\b/.test(build)
        ? "tsconfig.json"
        : undefined);
  if (!config) return [];
  // `tsc -p .` (or any folder) means the tsconfig.json in it.
  const resolved = path.resolve(root, config);
  const file =
    existsSync(resolved) && statSync(resolved).isDirectory() ? path.join(resolved, "tsconfig.json") : resolved;
  const configFile = ts.readConfigFile(file, (name) => (existsSync(name) ? readFileSync(name, "utf8") : undefined));
  if (configFile.error) return [];
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, path.dirname(file), undefined, file);
  const blocks = path.join(root, blocksDir) + path.sep;
  const tests = parsed.fileNames.filter(
    (name) =>
      path.resolve(name).startsWith(blocks) &&
      (/\.test\.[cm]?tsx?$/.test(name) || name.includes(`${path.sep}testing${path.sep}`)),
  );
  if (tests.length === 0) return [];
  const text = readFileSync(file, "utf8");
  const line = text.slice(0, Math.max(0, text.indexOf('"include"'))).split("\n").length;
  const example = toPosix(path.relative(root, tests[0] as string));
  const fix = `Exclude the vendored tests from ${path.basename(file)}: "exclude": ["${blocksDir}/**/*.test.ts", "${blocksDir}/**/testing/**"] (tsc then emits no test file).`;
  return [
    finding(
      "tests-in-build",
      toPosix(path.relative(root, file)),
      line,
      `the build compiles ${tests.length} vendored test file(s), e.g. ${example}`,
      fix,
    ),
  ];
}
