// Loads the project's tsconfig with `extends` followed (TypeScript's own parser), for paths and module style.
import { existsSync } from "node:fs";
import path from "node:path";
import type { ts } from "ts-morph";

export type ModuleStyle = "nodenext" | "extensionless";

export type TsconfigInfo = {
  file: string;
  /** `paths` after `extends`, and the folder its targets are relative to. */
  paths: Record<string, string[]>;
  pathsBase: string;
  moduleStyle: ModuleStyle;
  /**
   * Absolute folder the project's sources live in, where new source files belong: `rootDir`
   * (outside it `tsc` fails with TS6059), else the folder `include` names (src for `["src"]`);
   * undefined when the whole project is included.
   */
  sourceRoot: string | undefined;
};

/**
 * @example
 * const tsconfig = loadTsconfig("/app"); // undefined when the project has no tsconfig.json
 * tsconfig?.moduleStyle; // "nodenext" when relative imports need a `.js` suffix
 */
export async function loadTsconfig(root: string): Promise<TsconfigInfo | undefined> {
  const file = path.join(root, "tsconfig.json");
  if (!existsSync(file)) return undefined;
  // Loaded lazily: commands that never read tsconfig should not pay for TypeScript's start-up.
  const { ts } = await import("ts-morph");
  const parsed = ts.getParsedCommandLineOfConfigFile(
    file,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: () => {},
    },
  );
  const options = parsed?.options ?? {};
  // TypeScript records where inherited `paths` are relative to; it is not in the public typings.
  const pathsBase = (options as { pathsBasePath?: string }).pathsBasePath ?? options.baseUrl ?? root;
  const include = (parsed?.raw as { include?: unknown } | undefined)?.include;
  const sourceRoot =
    options.rootDir ??
    includedFolder(
      Array.isArray(include) ? include.filter((entry) => typeof entry === "string") : [],
      path.dirname(file),
    );
  return { file, paths: options.paths ?? {}, pathsBase, moduleStyle: moduleStyleOf(options, ts), sourceRoot };
}

/** The folder before the first wildcard of the first `include` pattern; undefined when any pattern reaches the project's own root. */
function includedFolder(patterns: string[], base: string): string | undefined {
  const folders = patterns.map((pattern) => {
    const segments = pattern.split(/[\\/]/);
    const wild = segments.findIndex((segment) => /[*?]/.test(segment));
    const fixed = wild === -1 ? segments : segments.slice(0, wild);
    // A file ("next-env.d.ts", "src/main.ts") stands for its folder.
    const last = fixed[fixed.length - 1];
    const folder = wild === -1 && last !== undefined && /\.[cm]?[jt]sx?$/.test(last) ? fixed.slice(0, -1) : fixed;
    return path.resolve(base, folder.join("/") || ".");
  });
  return folders.length === 0 || folders.includes(base) ? undefined : folders[0];
}

/** NodeNext and Node16 need explicit `.js` on relative imports; bundler, node10 and classic do not. */
function moduleStyleOf(options: ts.CompilerOptions, { ModuleKind, ModuleResolutionKind }: typeof ts): ModuleStyle {
  const resolution = options.moduleResolution;
  if (resolution === ModuleResolutionKind.NodeNext || resolution === ModuleResolutionKind.Node16) return "nodenext";
  if (resolution !== undefined) return "extensionless";
  const module = options.module;
  return module === ModuleKind.NodeNext || module === ModuleKind.Node16 ? "nodenext" : "extensionless";
}
