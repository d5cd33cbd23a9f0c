// Sample projects for the wiring tests: a fixture copy declaring a client, the repo's node_modules linked in, and its type check.
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { runInit } from "../../cli/commands/init.js";
import { tempProject } from "./helpers.js";

const REPO = path.resolve(import.meta.dirname, "../..");

/**
 * A copy of test/fixtures/<fixture> that declares `packages` and links the repo's node_modules, where
 * every client is installed (nothing is downloaded), then `blocks init --yes`.
 *
 * @example
 * const dir = await sampleProject("express-nodenext", ["postgres"]);
 */
export async function sampleProject(fixture: string, packages: string[]): Promise<string> {
  const dir = tempProject(fixture);
  const file = path.join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(file, "utf8")) as { dependencies: Record<string, string> };
  for (const name of packages) pkg.dependencies[name] = `^${installedVersion(name)}`;
  writeFileSync(file, JSON.stringify(pkg, null, 2));
  symlinkSync(path.join(REPO, "node_modules"), path.join(dir, "node_modules"), "dir");
  await runInit({ cwd: dir, yes: true });
  return dir;
}

function installedVersion(name: string): string {
  return (
    JSON.parse(readFileSync(path.join(REPO, "node_modules", name, "package.json"), "utf8")) as { version: string }
  ).version;
}

/** Declaration files parsed once for every project: the clients' typings are the costly part of a check. */
const parsed = new Map<string, ts.SourceFile>();

/**
 * What `tsc --noEmit -p <dir>` reports, through the TypeScript the repo runs (the compiler `tsc` is):
 * the project's own tsconfig.json and module system, on `files` (relative to `dir`, with everything
 * they import) or on all of the project's files. Empty when it type-checks.
 *
 * @example
 * expect(typeCheck(dir, ["src/idempotency-setup.ts"])).toEqual([]);
 */
export function typeCheck(dir: string, files?: string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(dir, "tsconfig.json"),
    { noEmit: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error(`${dir}/tsconfig.json could not be read`);
  const host = ts.createCompilerHost(config.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, version, onError, create) => {
    if (!fileName.endsWith(".d.ts") || !fileName.includes("/node_modules/"))
      return read(fileName, version, onError, create);
    const format =
      typeof version === "object" ? `${version.languageVersion}:${version.impliedNodeFormat}` : String(version);
    const key = `${fileName}|${format}`;
    let file = parsed.get(key);
    if (!file) {
      file = read(fileName, version, onError, create);
      if (file) parsed.set(key, file);
    }
    return file;
  };
  const program = ts.createProgram({
    rootNames: files ? files.map((file) => path.join(dir, file)) : config.fileNames,
    options: config.options,
    host,
  });
  const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program)];
  return diagnostics.map((diagnostic) =>
    ts
      .formatDiagnostic(diagnostic, {
        getCanonicalFileName: (name) => name,
        getCurrentDirectory: () => dir,
        getNewLine: () => "\n",
      })
      .trim(),
  );
}
