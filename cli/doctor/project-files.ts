// The project's own TypeScript files (not node_modules, not build output, not the vendored blocks), parsed once,
// and apart from them the vendored blocks' wiring (<blocks>/<block>/setup/, where `add` composes the handler).
import path from "node:path";
import { Project, type SourceFile } from "ts-morph";
import { toPosix } from "../utils/files.js";

export type ProjectFiles = {
  root: string;
  files: SourceFile[];
  /** The vendored wiring's runtime files (not its tests): block code, but the app's handler is built there. */
  wiring?: SourceFile[];
  relative(file: SourceFile): string;
};

/**
 * @example
 * const { files, wiring } = loadProjectFiles("/app", "src/blocks"); // wiring: src/blocks/idempotency/setup/compose.ts, ...
 */
export function loadProjectFiles(root: string, blocksDir: string): ProjectFiles {
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    compilerOptions: { allowJs: true },
  });
  const ignored = ["node_modules", "dist", "build", ".git", ".blocks", ".next", "coverage"].map(
    (folder) => `!${root}/**/${folder}/**`,
  );
  project.addSourceFilesAtPaths([`${root}/**/*.{ts,tsx,mts,cts}`, ...ignored, `!${path.join(root, blocksDir)}/**`]);
  const files = project.getSourceFiles();
  const blocks = path.join(root, blocksDir);
  const wiring = project.addSourceFilesAtPaths([
    `${blocks}/*/setup/**/*.{ts,tsx,mts,cts}`,
    `!${blocks}/*/setup/**/*.test.{ts,tsx,mts,cts}`,
    `!${blocks}/*/setup/**/testing/**`,
  ]);
  return { root, files, wiring, relative: (file) => toPosix(path.relative(root, file.getFilePath())) };
}
