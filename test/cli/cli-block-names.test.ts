// The CLI holds no block's knowledge: none of its strings names a block's export. What it checks and says about a
// block comes from the block's declaration (block.json), so a block renames an export without a CLI release.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { blockDeclarationSchema } from "../../cli/registry/block-schema.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const REGISTRY = path.join(ROOT, "registry");

/** The folders whose exports are a block's surface: what an app imports, and the wiring `add` writes for it. */
const SURFACE = ["index.ts", "setup", "adapters"];

/**
 * Exports named like a word the CLI uses for something else, so not looked for: a block's name (`logger`, the
 * logger block's factory; `idempotency`, idempotency's Express middleware), plain words (`metrics`, the wiring's
 * metrics; `idempotent`, the adapters' wrapper) and a tool (`Prisma`, a migration layout `migrate` writes for).
 */
const COMMON_WORDS = new Set(["logger", "idempotency", "idempotent", "metrics", "Prisma"]);

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

const blocks = readdirSync(REGISTRY, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

function typeScriptFiles(at: string): string[] {
  const entries = readdirSync(at, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile());
  return entries
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"));
}

function surfaceFiles(block: string): string[] {
  return SURFACE.flatMap((part) => {
    const at = path.join(REGISTRY, block, part);
    if (!existsSync(at)) return [];
    return part.endsWith(".ts") ? [at] : typeScriptFiles(at);
  });
}

function parse(file: string, text = readFileSync(file, "utf8")): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
}

/** Every name a file exports: its exported declarations and `export { a as b }` (`export *` of a surface file is read there). */
function exportedNames(source: ts.SourceFile): string[] {
  return source.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement))
      return statement.exportClause && ts.isNamedExports(statement.exportClause)
        ? statement.exportClause.elements.map((element) => element.name.text)
        : [];
    const exported =
      ts.canHaveModifiers(statement) &&
      ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) return [];
    if (ts.isVariableStatement(statement))
      return statement.declarationList.declarations.flatMap((declaration) =>
        ts.isIdentifier(declaration.name) ? [declaration.name.text] : [],
      );
    const name = (statement as ts.DeclarationStatement).name;
    return name && ts.isIdentifier(name) ? [name.text] : [];
  });
}

/** Each block export's name, with the file that exports it. */
function blockExports(): Map<string, string> {
  const names = new Map<string, string>();
  for (const block of blocks)
    for (const file of surfaceFiles(block))
      for (const name of exportedNames(parse(file))) names.set(name, path.relative(REGISTRY, file));
  return names;
}

/**
 * The names each block declares (block.json's `doctor` and `setup.entry`): the block's too, even those no file
 * exports (a method of what the wiring returns: `startMaintenance`; a cron entry's path).
 */
function declaredNames(): Map<string, string> {
  const names = new Map<string, string>();
  for (const block of blocks) {
    const file = path.join(block, "block.json");
    const declaration = blockDeclarationSchema.parse(JSON.parse(readFileSync(path.join(REGISTRY, file), "utf8")));
    const { routes, handler, maintenance } = declaration.doctor ?? {};
    const declared = [
      ...(routes ? [...routes.calls, ...routes.plugins] : []),
      ...(handler ? [handler.class, ...(handler.cache ? [handler.cache.class] : [])] : []),
      ...(maintenance ? [maintenance.start, maintenance.cronEntry] : []),
      ...(declaration.setup?.entry ? [declaration.setup.entry] : []),
    ];
    for (const name of declared) names.set(name, file);
  }
  return names;
}

/**
 * The CLI's own contract with every block's schema module (`SchemaModule` in cli/migrate/migration-sql.ts): names the
 * CLI defines and each block implements, so a block that re-exports them (rate-limiter's index.ts) does not own them.
 */
function schemaContract(): Set<string> {
  const source = parse(path.join(ROOT, "cli/migrate/migration-sql.ts"));
  const contract = source.statements.find(
    (statement): statement is ts.TypeAliasDeclaration =>
      ts.isTypeAliasDeclaration(statement) && statement.name.text === "SchemaModule",
  );
  if (!contract || !ts.isTypeLiteralNode(contract.type)) throw new Error("SchemaModule is no longer a type literal");
  return new Set(contract.type.members.flatMap((member) => (member.name ? [member.name.getText(source)] : [])));
}

/** Where a string names a block's name: strings and template texts, not comments, not module specifiers. */
function namesInStrings(source: ts.SourceFile, names: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const specifier =
      (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent)) &&
      node === node.parent.moduleSpecifier;
    const dynamicImport =
      ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword;
    if ((ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) && !specifier && !dynamicImport) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const words = new Set(node.text.match(/[A-Za-z_$][\w$]*/g) ?? []);
      // A name that is no identifier (a cron entry's path) is looked for as it is written.
      const named = [...names.keys()].filter((name) =>
        IDENTIFIER.test(name) ? words.has(name) : node.text.includes(name),
      );
      for (const name of named)
        found.push(`${path.relative(ROOT, source.fileName)}:${line} ${name} (${names.get(name) ?? ""})`);
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

const exports = blockExports();
const declared = declaredNames();
const contract = schemaContract();
const lookedFor = new Map([...exports, ...declared].filter(([name]) => !COMMON_WORDS.has(name) && !contract.has(name)));

describe("the CLI names no block's exports", () => {
  it("looks for the blocks' exports and every name a block declares, but the common words", () => {
    expect(lookedFor.size).toBeGreaterThan(100);
    expect([...declared.keys()].filter((name) => !lookedFor.has(name))).toEqual(
      [...declared.keys()].filter((name) => COMMON_WORDS.has(name)),
    );
  });

  it("every common word left out is a block's name (else it no longer needs leaving out)", () => {
    expect([...COMMON_WORDS].filter((name) => !exports.has(name) && !declared.has(name))).toEqual([]);
  });

  it("finds a name in a string or a template's text, never in a comment, an identifier or a module specifier", () => {
    const name = [...exports.keys()].find((candidate) => lookedFor.has(candidate)) as string;
    const source = parse(
      path.join(ROOT, "cli/demo.ts"),
      [
        `import { x } from "./${name}.js";`,
        `// ${name}() in a comment`,
        `const ${name} = await import("./${name}.js");`,
        `const a = "call ${name}()";`,
        `const b = \`\${x} then ${name}.start\`;`,
      ].join("\n"),
    );
    expect(namesInStrings(source, lookedFor).map((hit) => hit.split(" ")[0])).toEqual([
      "cli/demo.ts:4",
      "cli/demo.ts:5",
    ]);
  });

  it("no string in cli/ contains one: the CLI takes them from the block's declaration (block.json)", () => {
    const found = typeScriptFiles(path.join(ROOT, "cli")).flatMap((file) => namesInStrings(parse(file), lookedFor));
    expect(found).toEqual([]);
  });
});
