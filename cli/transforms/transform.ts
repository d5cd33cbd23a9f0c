// Runs the import transforms over one file with ts-morph, parsing TS as TS (TSX only for .tsx).
import { Project, ts, type SourceFile } from "ts-morph";
import type { Edit } from "./edit.js";
import type { ImportContext } from "./resolve-specifier.js";
import { transformDynamicImports } from "./transform-dynamic-imports.js";
import { transformStaticImports } from "./transform-static-imports.js";

export type Transformer = (sourceFile: SourceFile, ctx: ImportContext) => Edit[];

const DEFAULT_TRANSFORMERS: Transformer[] = [transformStaticImports, transformDynamicImports];
const SCRIPT = /\.([cm]?[jt]sx?)$/;

let project: Project | undefined;
let counter = 0;

/**
 * Rewrites every import specifier of `text`; non-script files come back unchanged.
 * ts-morph finds the specifiers; the edits are spliced into the text in one pass, because
 * re-parsing the tree after each manipulation made `add` several times slower.
 *
 * @example
 * transformSource('import { x } from "./x";', "a.ts", ctx); // 'import { x } from "./x.js";' under NodeNext
 */
export function transformSource(
  text: string,
  fileName: string,
  ctx: ImportContext,
  transformers = DEFAULT_TRANSFORMERS,
): string {
  const extension = SCRIPT.exec(fileName)?.[1];
  if (!extension) return text;
  project ??= new Project({
    useInMemoryFileSystem: true,
    skipLoadingLibFiles: true,
    compilerOptions: { allowJs: true },
  });
  const scriptKind = extension.endsWith("x")
    ? ts.ScriptKind.TSX
    : extension.includes("j")
      ? ts.ScriptKind.JS
      : ts.ScriptKind.TS;
  const sourceFile = project.createSourceFile(`/virtual/${counter++}.${extension}`, text, { scriptKind });
  try {
    const edits = transformers.flatMap((transform) => transform(sourceFile, ctx)).sort((a, b) => b.start - a.start);
    return edits.reduce((out, edit) => out.slice(0, edit.start) + edit.text + out.slice(edit.end), text);
  } finally {
    project.removeSourceFile(sourceFile);
  }
}
