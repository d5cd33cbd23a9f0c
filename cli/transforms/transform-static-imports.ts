// Rewrites `import ... from`, `import type`, `export ... from` and `import x = require(...)` specifiers;
// drops an `export ... from` a file left out on purpose.
import { Node, type SourceFile, type StringLiteral } from "ts-morph";
import type { Edit } from "./edit.js";
import { isOmitted, rewriteSpecifier, type ImportContext } from "./resolve-specifier.js";

/**
 * @example
 * transformSource(text, "handler.ts", ctx, [transformStaticImports]);
 */
export function transformStaticImports(sourceFile: SourceFile, ctx: ImportContext): Edit[] {
  const literals: StringLiteral[] = [];
  const dropped: Edit[] = [];
  for (const declaration of [...sourceFile.getImportDeclarations(), ...sourceFile.getExportDeclarations()]) {
    const literal = declaration.getModuleSpecifier();
    if (!literal || !Node.isStringLiteral(literal)) continue;
    // The index re-exports every store; a project that left one out keeps an index without it. An import of it stays an error.
    if (Node.isExportDeclaration(declaration) && isOmitted(literal.getLiteralValue(), ctx))
      dropped.push(dropStatement(declaration));
    else literals.push(literal);
  }
  for (const declaration of sourceFile.getStatements().filter(Node.isImportEqualsDeclaration)) {
    const reference = declaration.getModuleReference();
    if (Node.isExternalModuleReference(reference)) {
      const expression = reference.getExpression();
      if (expression && Node.isStringLiteral(expression)) literals.push(expression);
    }
  }
  return [...dropped, ...literals.flatMap((literal) => rewrite(literal, ctx))];
}

/** Removes the statement with its line break. */
function dropStatement(statement: Node): Edit {
  const text = statement.getSourceFile().getFullText();
  const end = statement.getEnd();
  return { start: statement.getStart(), end: text[end] === "\n" ? end + 1 : end, text: "" };
}

/**
 * The edit that replaces the literal's value between its quotes (so the quote style is kept), if it changes.
 *
 * @example
 * edits.push(...rewrite(declaration.getModuleSpecifierOrThrow() as StringLiteral, ctx));
 */
export function rewrite(literal: StringLiteral, ctx: ImportContext): Edit[] {
  const value = literal.getLiteralValue();
  const next = rewriteSpecifier(value, ctx);
  if (next === undefined || next === value) return [];
  return [{ start: literal.getStart() + 1, end: literal.getEnd() - 1, text: next }];
}
