// The handler gets a logger and metrics, and a Redis cache never keeps an answer longer than its record.
// Handlers are looked for in the app's own code and in the vendored wiring (<blocks>/<block>/setup/compose.ts builds the
// one `createIdempotency()` returns): its shipped composition passes both, an edit that drops one is found there.
import { Node, SyntaxKind, type NewExpression, type ObjectLiteralExpression } from "ts-morph";
import type { DoctorNames } from "../registry/block-schema.js";
import { finding, type Finding } from "./finding.js";
import type { ProjectFiles } from "./project-files.js";

/** What a block declares of its handler, and the fixes (block.json's `doctor.handler`). */
export type HandlerNames = NonNullable<DoctorNames["handler"]>;

/**
 * @example
 * checkHandler(project, declared, idempotency.doctor.handler); // logger (and metrics, where prom-client is declared) missing, a cache ttl above ttlMs
 */
export function checkHandler(project: ProjectFiles, declared: Set<string>, names: HandlerNames): Finding[] {
  // Metrics are an opt-in at `add`: a project without their package chose to run without them.
  const metrics = names.metrics && declared.has(names.metrics.package) ? [names.metrics.option] : [];
  const expected = [...names.expects, ...metrics];
  const findings: Finding[] = [];
  const scanned = [...project.files, ...(project.wiring ?? [])];
  const handlers = scanned.flatMap((file) => news(file, names.class).map((expression) => ({ file, expression })));
  for (const { file, expression } of handlers) {
    const options = objectArg(expression, names.options);
    if (options === "unknown") continue;
    const missing = expected.filter((key) => !options?.getProperty(key));
    if (missing.length) {
      const line = expression.getStartLineNumber();
      findings.push(
        finding(
          "handler-observability",
          project.relative(file),
          line,
          `new ${names.class}(...) has no ${missing.join(" and no ")}`,
          names.fixes["handler-observability"],
        ),
      );
    }
  }
  const ttls = handlers.map(({ expression }) => {
    const options = objectArg(expression, names.options);
    return options === "unknown" ? undefined : (numberOf(options, "ttlMs") ?? names.defaultTtlMs);
  });
  const recordTtl =
    ttls.every((ttl) => ttl !== undefined) && ttls.length ? Math.min(...(ttls as number[])) : names.defaultTtlMs;
  const cache = names.cache;
  if (!cache) return findings;
  for (const file of scanned) {
    for (const expression of news(file, cache.class)) {
      const options = objectArg(expression, cache.options);
      if (options === "unknown" || !options) continue;
      const cacheTtl =
        numberOf(options, "ttlMs") ?? numberOf(options, "ttl") ?? secondsToMs(numberOf(options, "ttlSeconds"));
      if (cacheTtl !== undefined && cacheTtl > recordTtl) {
        findings.push(
          finding(
            "cache-ttl",
            project.relative(file),
            expression.getStartLineNumber(),
            `${cache.class} keeps entries ${cacheTtl} ms, longer than the handler's ttlMs (${recordTtl} ms)`,
            cache.fixes["cache-ttl"],
          ),
        );
      }
    }
  }
  return findings;
}

function news(file: ProjectFiles["files"][number], className: string): NewExpression[] {
  return file
    .getDescendantsOfKind(SyntaxKind.NewExpression)
    .filter((expression) => expression.getExpression().getText() === className);
}

function objectArg(expression: NewExpression, index: number): ObjectLiteralExpression | undefined | "unknown" {
  const arg = expression.getArguments()[index];
  if (arg === undefined) return undefined;
  if (!Node.isObjectLiteralExpression(arg)) return "unknown";
  return arg.getProperties().some((property) => Node.isSpreadAssignment(property)) ? "unknown" : arg;
}

/** A numeric literal or a product/sum of them (`24 * 60 * 60 * 1000`); anything else is unknown. */
function numberOf(options: ObjectLiteralExpression | undefined, key: string): number | undefined {
  const property = options?.getProperty(key);
  if (!property || !Node.isPropertyAssignment(property)) return undefined;
  const text = property.getInitializer()?.getText().replace(/_/g, "") ?? "";
  if (!/^[\d\s.*+()]+$/.test(text)) return undefined;
  const terms = text
    .replace(/[()\s]/g, "")
    .split("+")
    .map((term) => term.split("*").reduce((product, factor) => product * Number(factor), 1));
  const value = terms.reduce((sum, term) => sum + term, 0);
  return Number.isFinite(value) ? value : undefined;
}

function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}
