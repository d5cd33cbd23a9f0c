// Loads the project's tsconfig with `extends` followed (TypeScript's own parser), for paths and module style.
import { existsSync } from "node:fs";
import path from "node:path";
import { ts } from "ts-morph";

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
export function loadTsconfig(root: string): TsconfigInfo | undefined {
  const file = path.join(root, "tsconfig.json");
  if (!existsSync(file)) return undefined;
  const parsed = ts.getParsedCommandLineOfConfigFile(file, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => {},
  });
  const options = parsed?.options ?? {};
  // TypeScript records where inherited `paths` are relative to; it is not in the public typings.
  const pathsBase = (options as { pathsBasePath?: string }).pathsBasePath ?? options.baseUrl ?? root;
  return { file, paths: options.paths ?? {}, pathsBase, moduleStyle: moduleStyleOf(options) };
}

/** NodeNext and Node16 need explicit `.js` on relative imports; bundler, node10 and classic do not. */
export function moduleStyleOf(options: ts.CompilerOptions): ModuleStyle {
  const resolution = options.moduleResolution;
  if (resolution === ts.ModuleResolutionKind.NodeNext || resolution === ts.ModuleResolutionKind.Node16) return "nodenext";
  if (resolution !== undefined) return "extensionless";
  const module = options.module;
  return module === ts.ModuleKind.NodeNext || module === ts.ModuleKind.Node16 ? "nodenext" : "extensionless";
}
