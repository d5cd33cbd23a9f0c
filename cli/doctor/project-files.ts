// The project's own TypeScript files (not node_modules, not build output, not the vendored blocks), parsed once.
import path from "node:path";
import { Project, type SourceFile } from "ts-morph";
import { toPosix } from "../utils/files.js";

export type ProjectFiles = { root: string; files: SourceFile[]; relative(file: SourceFile): string };

/**
 * @example
 * const { files } = loadProjectFiles("/app", "src/blocks");
 */
export function loadProjectFiles(root: string, blocksDir: string): ProjectFiles {
  const project = new Project({ skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true, compilerOptions: { allowJs: true } });
  const ignored = ["node_modules", "dist", "build", ".git", ".blocks", ".next", "coverage"].map((folder) => `!${root}/**/${folder}/**`);
  project.addSourceFilesAtPaths([`${root}/**/*.{ts,tsx,mts,cts}`, ...ignored, `!${path.join(root, blocksDir)}/**`]);
  return { root, files: project.getSourceFiles(), relative: (file) => toPosix(path.relative(root, file.getFilePath())) };
}
