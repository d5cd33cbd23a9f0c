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
  const parsed = ts.getParsedCommandLineOfConfigFile(file, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => {},
  });
  const options = parsed?.options ?? {};
  // TypeScript records where inherited `paths` are relative to; it is not in the public typings.
  const pathsBase = (options as { pathsBasePath?: string }).pathsBasePath ?? options.baseUrl ?? root;
  return { file, paths: options.paths ?? {}, pathsBase, moduleStyle: moduleStyleOf(options, ts) };
}

/** NodeNext and Node16 need explicit `.js` on relative imports; bundler, node10 and classic do not. */
function moduleStyleOf(options: ts.CompilerOptions, { ModuleKind, ModuleResolutionKind }: typeof ts): ModuleStyle {
  const resolution = options.moduleResolution;
  if (resolution === ModuleResolutionKind.NodeNext || resolution === ModuleResolutionKind.Node16) return "nodenext";
  if (resolution !== undefined) return "extensionless";
  const module = options.module;
  return module === ModuleKind.NodeNext || module === ModuleKind.Node16 ? "nodenext" : "extensionless";
}
