// Rewrites `import ... from`, `import type`, `export ... from` and `import x = require(...)` specifiers.
import { Node, SyntaxKind, type SourceFile, type StringLiteral } from "ts-morph";
import { rewriteSpecifier, type ImportContext } from "./resolve-specifier.js";

/**
 * @example
 * transformSource(text, "handler.ts", ctx, [transformStaticImports]);
 */
export function transformStaticImports(sourceFile: SourceFile, ctx: ImportContext): void {
  for (const declaration of [...sourceFile.getImportDeclarations(), ...sourceFile.getExportDeclarations()]) {
    const literal = declaration.getModuleSpecifier();
    if (literal && Node.isStringLiteral(literal)) rewrite(literal, ctx);
  }
  for (const declaration of sourceFile.getDescendantsOfKind(SyntaxKind.ImportEqualsDeclaration)) {
    const reference = declaration.getModuleReference();
    if (Node.isExternalModuleReference(reference)) {
      const expression = reference.getExpression();
      if (expression && Node.isStringLiteral(expression)) rewrite(expression, ctx);
    }
  }
}

/** Replaces the literal's value in place, keeping its quote style. */
export function rewrite(literal: StringLiteral, ctx: ImportContext): void {
  const next = rewriteSpecifier(literal.getLiteralValue(), ctx);
  if (next !== undefined && next !== literal.getLiteralValue()) literal.setLiteralValue(next);
}
