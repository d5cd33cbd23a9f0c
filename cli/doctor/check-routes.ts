// Routes protected by any adapter must say who the user is, which errors are permanent (where the adapter sees them), and require the key.
import { Node, SyntaxKind, type CallExpression, type ObjectLiteralExpression } from "ts-morph";
import type { DoctorNames } from "../registry/block-schema.js";
import { finding, type Finding } from "./finding.js";
import type { ProjectFiles } from "./project-files.js";

/** What an added block declares as its route protections, and their fixes (block.json's `doctor.routes`). */
export type RouteNames = NonNullable<DoctorNames["routes"]>;
const SAFE_METHODS = new Set(["get", "head", "options"]);
const ROUTE_METHODS = new Set(["post", "put", "patch", "delete", "all", "use", "register", "route", "on"]);

/**
 * @example
 * checkRoutes(loadProjectFiles(root, "src/blocks"), [idempotency.doctor.routes]); // [{ rule: "route-user-id", file: "src/app.ts", ... }]
 */
export function checkRoutes(project: ProjectFiles, declared: RouteNames[]): Finding[] {
  return declared.flatMap((names) => checkBlockRoutes(project, names));
}

/** One block's protections, each finding with the fix that block words. */
function checkBlockRoutes(project: ProjectFiles, names: RouteNames): Finding[] {
  const CALLS = new Set(names.calls);
  const PLUGINS = new Set(names.plugins);
  const { fixes } = names;
  const findings: Finding[] = [];
  for (const file of project.files) {
    for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      const name = calleeName(call);
      const plugin = call
        .getArguments()
        .find((arg) => Node.isIdentifier(arg) && PLUGINS.has(arg.getText()))
        ?.getText();
      if (!(name && CALLS.has(name)) && !plugin) continue;
      const options = optionsOf(call, PLUGINS);
      if (options === "unknown") continue;
      const where = { file: project.relative(file), line: call.getStartLineNumber() };
      const method = routeMethod(plugin ? call : call.getParentIfKind(SyntaxKind.CallExpression));
      const label = `${plugin ?? `${name}()`}${method ? ` on ${method.toUpperCase()}` : ""}`;
      const has = (key: string) => options?.getProperty(key) !== undefined;
      const report = (rule: keyof RouteNames["fixes"], message: string) =>
        findings.push(finding(rule, where.file, where.line, message, fixes[rule]));
      if (!has("getUserId")) report("route-user-id", `${label} has no getUserId`);
      if (!has("isPermanentError") && seesThrownErrors(call, name, names.responseOnly))
        report("route-permanent-error", `${label} has no isPermanentError`);
      const isTrue = (key: string) => {
        const property = options?.getProperty(key);
        return (
          property !== undefined &&
          Node.isPropertyAssignment(property) &&
          property.getInitializer()?.getText() === "true"
        );
      };
      // A transactional route refuses a request without a key itself (it has nothing to commit the record with).
      const required = isTrue("requireKey") || isTrue("transaction");
      if (!required && !(method && SAFE_METHODS.has(method)))
        report("route-require-key", `${label} does not set requireKey: true`);
    }
  }
  return findings;
}

/**
 * Whether `isPermanentError` has an effect on this protection. A capture middleware (the block
 * declares it: idempotency's `idempotency` from adapters/express) runs before the route and sees only
 * the status the app's error handler sends, never the error: `classifyResponse` decides there.
 */
function seesThrownErrors(
  call: CallExpression,
  name: string | undefined,
  responseOnly: RouteNames["responseOnly"],
): boolean {
  const from = (importedFrom(call) ?? "").replace(/\.[cm]?[jt]s$/, "");
  return !responseOnly.some((only) => only.call === name && (from === only.module || from.endsWith(`/${only.module}`)));
}

/** The module the callee was imported from (`import { idempotency } from "..."` or a namespace import), if this file says. */
function importedFrom(call: CallExpression): string | undefined {
  const callee = call.getExpression();
  const root = Node.isPropertyAccessExpression(callee) ? callee.getExpression() : callee;
  const declaration = root.getSymbol()?.getDeclarations()[0];
  return declaration?.getFirstAncestorByKind(SyntaxKind.ImportDeclaration)?.getModuleSpecifierValue();
}

function calleeName(call: CallExpression): string | undefined {
  const callee = call.getExpression();
  if (Node.isIdentifier(callee)) return callee.getText();
  if (Node.isPropertyAccessExpression(callee)) return callee.getName();
  return undefined;
}

/** The route's method when the protection is an argument of `app.post(...)` and the like. */
function routeMethod(parent: CallExpression | undefined): string | undefined {
  const name = parent ? calleeName(parent) : undefined;
  return name &&
    (ROUTE_METHODS.has(name) || SAFE_METHODS.has(name)) &&
    !["use", "register", "route", "on", "all"].includes(name)
    ? name
    : undefined;
}

/**
 * The options object: the last object literal argument (or a const initialised with one).
 * "unknown" when it cannot be read statically (a spread, a parameter, a function call).
 */
function optionsOf(call: CallExpression, plugins: Set<string>): ObjectLiteralExpression | undefined | "unknown" {
  const args = call.getArguments();
  for (const arg of [...args].reverse()) {
    const literal = Node.isObjectLiteralExpression(arg)
      ? arg
      : Node.isIdentifier(arg)
        ? initializer(arg, plugins)
        : undefined;
    if (literal === "unknown") return "unknown";
    if (literal)
      return literal.getProperties().some((property) => Node.isSpreadAssignment(property)) ? "unknown" : literal;
  }
  return args.length > 1 ? "unknown" : undefined;
}

function initializer(identifier: Node, plugins: Set<string>): ObjectLiteralExpression | undefined | "unknown" {
  if (!Node.isIdentifier(identifier)) return undefined;
  if (identifier.getText() === "handler" || plugins.has(identifier.getText())) return undefined;
  const declaration = identifier.getSymbol()?.getDeclarations()[0];
  if (declaration && Node.isVariableDeclaration(declaration)) {
    const value = declaration.getInitializer();
    if (value && Node.isObjectLiteralExpression(value)) return value;
  }
  return undefined;
}
