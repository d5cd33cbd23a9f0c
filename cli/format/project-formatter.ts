// The project's own formatter (Prettier or Biome, as installed there, with its config), so what blocks
// writes is already what the project's `format` or `lint --fix` would leave, and `diff` sees only real edits.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";

export type Formatter = {
  name: "prettier" | "biome";
  /** `file`'s content as the project's formatter writes it; unchanged for a file it ignores or cannot parse. */
  format(file: string, content: string): Promise<string>;
};

const PRETTIER_CONFIGS = [
  ".prettierrc",
  ".prettierrc.json",
  ".prettierrc.yaml",
  ".prettierrc.yml",
  ".prettierrc.json5",
  ".prettierrc.js",
  ".prettierrc.cjs",
  ".prettierrc.mjs",
  ".prettierrc.ts",
  ".prettierrc.toml",
  "prettier.config.js",
  "prettier.config.cjs",
  "prettier.config.mjs",
  "prettier.config.ts",
];
const BIOME_CONFIGS = ["biome.json", "biome.jsonc"];

/** The slice of Prettier's API blocks uses; the same in Prettier 2 (partly synchronous) and 3. */
type PrettierApi = {
  resolveConfig(
    file: string,
    options: { editorconfig: boolean },
  ): Promise<Record<string, unknown> | null> | Record<string, unknown> | null;
  getFileInfo(
    file: string,
    options: { ignorePath?: string[] | string; resolveConfig: boolean },
  ): Promise<{ ignored: boolean; inferredParser: string | null }>;
  format(text: string, options: Record<string, unknown>): Promise<string> | string;
  clearConfigCache?(): Promise<void> | void;
  version?: string;
};

/**
 * Biome where the project configures it (biome.json), else Prettier where the project declares or
 * configures it; either only when installed in the project (the project's version, never ours).
 * Undefined otherwise: blocks then writes the registry's bytes.
 *
 * @example
 * const formatter = await projectFormatter("/app");
 * await formatter?.format("/app/src/blocks/idempotency/index.ts", text);
 */
export async function projectFormatter(root: string): Promise<Formatter | undefined> {
  const require = createRequire(path.join(root, "package.json"));
  const resolve = (specifier: string) => {
    try {
      return require.resolve(specifier);
    } catch {
      return undefined;
    }
  };
  if (BIOME_CONFIGS.some((file) => existsSync(path.join(root, file)))) {
    const bin = resolve("@biomejs/biome/bin/biome");
    if (bin) return biome(root, bin);
  }
  const pkg = readPackage(root);
  const declared = ["dependencies", "devDependencies"].some(
    (field) => (pkg[field] as Record<string, string> | undefined)?.prettier !== undefined,
  );
  const configured = pkg.prettier !== undefined || PRETTIER_CONFIGS.some((file) => existsSync(path.join(root, file)));
  const entry = declared || configured ? resolve("prettier") : undefined;
  if (!entry) return undefined;
  const loaded = (await import(pathToFileURL(entry).href)) as PrettierApi & { default?: PrettierApi };
  const api = loaded.default ?? loaded;
  // Prettier caches each folder's config for the process: a config written since (a test, a long-lived tool) must count.
  await api.clearConfigCache?.();
  return prettier(root, api);
}

function prettier(root: string, api: PrettierApi): Formatter {
  // What the prettier CLI ignores by default, so a file it would skip is written as it is.
  const ignoreFiles = [".prettierignore", ".gitignore"]
    .map((file) => path.join(root, file))
    .filter((file) => existsSync(file));
  // Prettier 2 takes one ignore file (its CLI reads only .prettierignore); 3 takes a list.
  const ignorePath = api.version?.startsWith("2.")
    ? ignoreFiles.find((file) => file.endsWith(".prettierignore"))
    : ignoreFiles;
  return {
    name: "prettier",
    async format(file, content) {
      const info = await api.getFileInfo(file, {
        ...(ignorePath === undefined ? {} : { ignorePath }),
        resolveConfig: true,
      });
      if (info.ignored || !info.inferredParser) return content;
      const config = (await api.resolveConfig(file, { editorconfig: true })) ?? {};
      return api.format(content, { ...config, filepath: file });
    },
  };
}

function biome(root: string, bin: string): Formatter {
  return {
    name: "biome",
    async format(file, content) {
      // Biome answers on stdout with the file as the project's biome.json has it: `check --write`
      // without the linter formats and applies the assist actions the project turned on (sorted
      // imports, in `biome init`'s config), which `biome check` would otherwise report on every
      // vendored file. A Biome that refuses (an old one) formats only. A file type it does not format
      // or ignores is an error or an echo: either way the content stays.
      const stdin = `--stdin-file-path=${path.relative(root, file)}`;
      const run = async (args: string[]) =>
        execa(process.execPath, [bin, ...args, stdin], {
          cwd: root,
          input: content,
          reject: false,
          stripFinalNewline: false,
        });
      const checked = await run(["check", "--write", "--linter-enabled=false"]);
      if (checked.exitCode === 0 && checked.stdout !== "") return checked.stdout;
      const formatted = await run(["format"]);
      return formatted.exitCode === 0 && formatted.stdout !== "" ? formatted.stdout : content;
    },
  };
}

function readPackage(root: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}
