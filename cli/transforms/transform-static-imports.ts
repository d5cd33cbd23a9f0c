// Rewrites `import ... from`, `import type`, `export ... from` and `import x = require(...)` specifiers.
import { Node, type SourceFile, type StringLiteral } from "ts-morph";
import { rewriteSpecifier, type ImportContext } from "./resolve-specifier.js";
import type { Edit } from "./transform.js";

/**
 * @example
 * transformSource(text, "handler.ts", ctx, [transformStaticImports]);
 */
export function transformStaticImports(sourceFile: SourceFile, ctx: ImportContext): Edit[] {
  const literals: StringLiteral[] = [];
  for (const declaration of [...sourceFile.getImportDeclarations(), ...sourceFile.getExportDeclarations()]) {
    const literal = declaration.getModuleSpecifier();
    if (literal && Node.isStringLiteral(literal)) literals.push(literal);
  }
  for (const declaration of sourceFile.getStatements().filter(Node.isImportEqualsDeclaration)) {
    const reference = declaration.getModuleReference();
    if (Node.isExternalModuleReference(reference)) {
      const expression = reference.getExpression();
      if (expression && Node.isStringLiteral(expression)) literals.push(expression);
    }
  }
  return literals.flatMap((literal) => rewrite(literal, ctx));
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
