// Rewrites specifiers inside expressions: `import("...")`, `typeof import("...")`, `require`, and vitest's `vi.mock`.
import { Node, SyntaxKind, type SourceFile } from "ts-morph";
import type { Edit } from "./edit.js";
import type { ImportContext } from "./resolve-specifier.js";
import { rewrite } from "./transform-static-imports.js";

/** Calls whose first argument is a module path that vitest resolves like an import. */
const PATH_CALLS = new Set([
  "require",
  "vi.mock",
  "vi.doMock",
  "vi.unmock",
  "vi.doUnmock",
  "vi.importActual",
  "vi.importMock",
]);
/** Walking every node is the costly part of a rewrite: files that cannot contain such a call skip it. */
const MAY_CONTAIN = /\b(?:import|require|vi\.\w+)\s*\(/;

/**
 * @example
 * transformSource('const m = await import("./x");', "a.ts", ctx, [transformDynamicImports]);
 */
export function transformDynamicImports(sourceFile: SourceFile, ctx: ImportContext): Edit[] {
  const edits: Edit[] = [];
  if (!MAY_CONTAIN.test(sourceFile.getFullText())) return edits;
  for (const call of sourceFile.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    const isImport = callee.getKind() === SyntaxKind.ImportKeyword;
    if (!isImport && !PATH_CALLS.has(callee.getText())) continue;
    const first = call.getArguments()[0];
    if (first && Node.isStringLiteral(first)) edits.push(...rewrite(first, ctx));
  }
  for (const importType of sourceFile.getDescendantsOfKind(SyntaxKind.ImportType)) {
    const argument = importType.getArgument();
    const literal = Node.isLiteralTypeNode(argument) ? argument.getLiteral() : undefined;
    if (literal && Node.isStringLiteral(literal)) edits.push(...rewrite(literal, ctx));
  }
  return edits;
}
