// `blocks init`: detects the alias, module style, package manager and migrations layout, writes blocks.json.
import { existsSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import prompts from "prompts";
import { CONFIG_FILE, readConfig, type BlocksConfig } from "../config/blocks-config.js";
import { detectMigrations } from "../migrate/detect-layout.js";
import { checkRegistries } from "../registry/registries-config.js";
import { aliasFor, aliasRoots, preferredRoot } from "../project/detect-alias.js";
import { withPathsAlias } from "../project/edit-tsconfig.js";
import { declaredPackages, readPackageJson } from "../project/package-json.js";
import { detectPackageManager, execCommand } from "../project/package-manager.js";
import { workspacePackages } from "../project/workspaces.js";
import { BlocksError } from "../utils/errors.js";
import { loadTsconfig, type TsconfigInfo } from "../project/tsconfig.js";
import { insideProject, readIfExists, toPosix, writeProjectFile } from "../utils/files.js";
import { handleError } from "../utils/handle-error.js";
import { highlighter } from "../utils/highlighter.js";
import { configureOutput, logger, printJson } from "../utils/logger.js";
import { cancelled, canPrompt, decide } from "../utils/prompt.js";

export type InitOptions = {
  cwd?: string;
  yes?: boolean;
  force?: boolean;
  dir?: string;
  alias?: string;
  json?: boolean;
  silent?: boolean;
};

/**
 * @example
 * const { config } = await runInit({ cwd: "/app", yes: true });
 * config.alias; // "@/blocks" when tsconfig maps "@/*" to "./src/*"
 */
export async function runInit(
  options: InitOptions,
): Promise<{ ok: true; created: boolean; config: BlocksConfig; root: string }> {
  let root = path.resolve(options.cwd ?? process.cwd());
  let pkg = await readPackageJson(root);
  const workspaces = options.cwd === undefined ? workspacePackages(root, pkg) : [];
  if (workspaces.length > 0) {
    root = path.join(root, await chooseWorkspace(workspaces));
    pkg = await readPackageJson(root);
    logger.info(`Workspace: ${highlighter.path(toPosix(path.relative(process.cwd(), root)) || ".")}`);
  }
  if (existsSync(path.join(root, CONFIG_FILE)) && !options.force) {
    logger.info(`${CONFIG_FILE} already exists; keeping it (pass --force to detect and write it again).`);
    return { ok: true, created: false, config: await readConfig(root), root };
  }
  const tsconfig = await loadTsconfig(root);
  if (!tsconfig) logger.warn("No tsconfig.json: imports will be extensionless and relative.");
  const roots = tsconfig ? aliasRoots(tsconfig.paths, tsconfig.pathsBase) : [];
  const preferred = preferredRoot(roots);
  const dir = toPosix(
    options.dir ?? path.join(path.relative(root, defaultParent(root, preferred?.dir, tsconfig?.sourceRoot)), "blocks"),
  );
  insideProject(root, dir);
  let alias = options.alias === "none" ? null : (options.alias ?? aliasFor(roots, path.resolve(root, dir)) ?? null);
  let tsconfigText: string | undefined;
  if (alias === null && options.alias === undefined && tsconfig && Object.keys(tsconfig.paths).length === 0) {
    ({ alias, tsconfigText } = await offerAlias(tsconfig, root, dir, options.yes));
  }
  const target = detectMigrations(root, declaredPackages(pkg), (pkg as { scripts?: Record<string, string> }).scripts);
  const config: BlocksConfig = {
    dir,
    alias,
    moduleStyle: tsconfig?.moduleStyle ?? "extensionless",
    packageManager: detectPackageManager(root, pkg),
    database: { dialect: target.dialect, migrations: target.migrations, layout: target.layout },
    ...(await keptRegistries(root)),
  };
  logger.log(`blocks folder:   ${highlighter.path(config.dir)}`);
  logger.log(
    `imports:         ${config.alias ? `${config.alias}/...` : "relative paths"} (${config.moduleStyle === "nodenext" ? "NodeNext: .js suffixes" : "extensionless"})`,
  );
  logger.log(`package manager: ${config.packageManager}`);
  logger.log(`migrations:      ${config.database.migrations} (${config.database.layout}, ${config.database.dialect})`);
  if (!(await decide({ message: `Write ${CONFIG_FILE} with these settings?`, flag: "--yes" }, options.yes)))
    cancelled();
  // The accepted alias reaches tsconfig.json only now: a cancelled init leaves the project as it was.
  if (tsconfig && tsconfigText !== undefined) await writeProjectFile(tsconfig.file, tsconfigText);
  await writeProjectFile(path.join(root, CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
  const where =
    root === path.resolve(options.cwd ?? process.cwd()) ? "" : ` --cwd ${toPosix(path.relative(process.cwd(), root))}`;
  logger.success(
    `Wrote ${CONFIG_FILE}. Next: ${highlighter.code(`${execCommand(config.packageManager)} blocks add idempotency${where}`)}`,
  );
  return { ok: true, created: true, config, root };
}

/**
 * Where the blocks folder goes by default: under the alias's folder, else inside the tsconfig's
 * `rootDir` or `include` (the wiring lands beside it, and outside rootDir `tsc` fails with TS6059),
 * else src/ when it exists, else the project's root.
 */
function defaultParent(root: string, aliasDir: string | undefined, sourceRoot: string | undefined): string {
  if (aliasDir) return aliasDir;
  if (sourceRoot && path.resolve(sourceRoot) !== root && !path.relative(root, sourceRoot).startsWith(".."))
    return sourceRoot;
  return existsSync(path.join(root, "src")) ? path.join(root, "src") : root;
}

/**
 * At a workspaces root the blocks belong in one package: ask which, or (no terminal) fail naming each --cwd.
 * `--yes` does not pick one: a config written for the root would plan installs there.
 */
async function chooseWorkspace(workspaces: string[]): Promise<string> {
  const list = workspaces.join(", ");
  if (!canPrompt()) {
    throw new BlocksError(
      "WORKSPACE_ROOT",
      `This is a workspaces root (packages: ${list}); blocks go into one package.`,
      {
        suggestion: `Pass --cwd <package>, e.g. \`blocks init --cwd ${workspaces[0]}\` (or --cwd . to use the root itself).`,
      },
    );
  }
  const { picked } = await prompts(
    {
      type: "select",
      name: "picked",
      message: "This is a workspaces root. Which package gets the blocks?",
      choices: workspaces.map((value) => ({ title: value, value })),
    },
    { onCancel: () => cancelled() },
  );
  if (typeof picked !== "string") cancelled();
  return picked;
}

/**
 * With --yes (or no terminal to ask) the project keeps relative imports and its tsconfig untouched. An accepted
 * alias comes back with tsconfig.json's new text, written once blocks.json is confirmed.
 */
async function offerAlias(
  tsconfig: TsconfigInfo,
  root: string,
  dir: string,
  yes: boolean | undefined,
): Promise<{ alias: string | null; tsconfigText?: string }> {
  if (yes || !canPrompt()) return { alias: null };
  const parent = toPosix(path.relative(path.dirname(tsconfig.file), path.resolve(root, path.dirname(dir))));
  const target = parent === "" ? "./*" : `./${parent}/*`;
  const accepted = await decide(
    {
      message: `No import alias in tsconfig.json. Add "@/*": ["${target}"] so blocks import as @/${path.basename(dir)}/...?`,
      flag: "--yes",
    },
    false,
  );
  if (!accepted) return { alias: null };
  const tsconfigText = await withPathsAlias(tsconfig.file, "@/*", target);
  if (tsconfigText === null) {
    logger.warn(
      `tsconfig.json has comments, so it was left alone: add "paths": { "@/*": ["${target}"] } yourself and run init --force.`,
    );
    return { alias: null };
  }
  return { alias: `@/${path.basename(dir)}`, tsconfigText };
}

/** `--force` detects everything again, but a team's `registries` are not detectable: the ones in the current blocks.json stay. */
async function keptRegistries(root: string): Promise<Pick<BlocksConfig, "registries">> {
  let raw: unknown;
  try {
    raw = (JSON.parse((await readIfExists(path.join(root, CONFIG_FILE))) ?? "{}") as { registries?: unknown } | null)
      ?.registries;
  } catch {
    return {};
  }
  if (raw === undefined) return {};
  try {
    checkRegistries(raw);
    return { registries: raw as NonNullable<BlocksConfig["registries"]> };
  } catch (err) {
    logger.warn(`The "registries" of the old ${CONFIG_FILE} are not kept: ${(err as Error).message}`);
    return {};
  }
}

export const init = new Command("init")
  .description("detect your project's settings and write blocks.json")
  .option("-y, --yes", "accept the detected settings without asking")
  .option("-f, --force", "write blocks.json again even if it exists")
  .option(
    "-d, --dir <path>",
    "folder for the blocks (default: <alias folder>/blocks under your tsconfig paths alias, else <rootDir or include folder>/blocks, else src/blocks when src/ exists, else blocks)",
  )
  .option("-a, --alias <prefix>", 'import alias for that folder, e.g. "@/blocks", or "none" for relative imports')
  .option("--json", "print the result as JSON")
  .option("-c, --cwd <path>", "the project folder (default: the current one)")
  .option("-s, --silent", "print nothing but errors")
  .action(async (opts: InitOptions) => {
    configureOutput({ silent: opts.silent || opts.json });
    try {
      const result = await runInit(opts);
      if (opts.json) printJson(result);
    } catch (err) {
      handleError(err, opts);
    }
  });
