// Runs the import transforms over one file with ts-morph, parsing TS as TS (TSX only for .tsx).
import { Project, ts, type SourceFile } from "ts-morph";
import type { ImportContext } from "./resolve-specifier.js";
import { transformDynamicImports } from "./transform-dynamic-imports.js";
import { transformStaticImports } from "./transform-static-imports.js";

export type Transformer = (sourceFile: SourceFile, ctx: ImportContext) => void;

const DEFAULT_TRANSFORMERS: Transformer[] = [transformStaticImports, transformDynamicImports];
const SCRIPT = /\.([cm]?[jt]sx?)$/;

let project: Project | undefined;
let counter = 0;

/**
 * Rewrites every import specifier of `text`; non-script files come back unchanged.
 *
 * @example
 * transformSource('import { x } from "./x";', "a.ts", ctx); // 'import { x } from "./x.js";' under NodeNext
 */
export function transformSource(text: string, fileName: string, ctx: ImportContext, transformers = DEFAULT_TRANSFORMERS): string {
  const extension = SCRIPT.exec(fileName)?.[1];
  if (!extension) return text;
  project ??= new Project({ useInMemoryFileSystem: true, skipLoadingLibFiles: true, compilerOptions: { allowJs: true } });
  const scriptKind = extension.endsWith("x") ? ts.ScriptKind.TSX : extension.includes("j") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sourceFile = project.createSourceFile(`/virtual/${counter++}.${extension}`, text, { scriptKind });
  try {
    for (const transform of transformers) transform(sourceFile, ctx);
    return sourceFile.getFullText();
  } finally {
    project.removeSourceFile(sourceFile);
  }
}
