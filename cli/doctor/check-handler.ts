// The handler gets a logger and metrics, and a Redis cache never keeps an answer longer than its record.
import { Node, SyntaxKind, type NewExpression, type ObjectLiteralExpression } from "ts-morph";
import { finding, type Finding } from "./finding.js";
import type { ProjectFiles } from "./project-files.js";

const DEFAULT_TTL_MS = 86_400_000;

/**
 * @example
 * checkHandler(project, declared); // logger (and metrics, where prom-client is declared) missing, a RedisCache ttl above ttlMs
 */
export function checkHandler(project: ProjectFiles, declared: Set<string>): Finding[] {
  // Metrics are an opt-in at `add`: a project without prom-client chose to run without them.
  const expected = declared.has("prom-client") ? ["logger", "metrics"] : ["logger"];
  const findings: Finding[] = [];
  const handlers = project.files.flatMap((file) => news(file, "IdempotencyHandler").map((expression) => ({ file, expression })));
  for (const { file, expression } of handlers) {
    const options = objectArg(expression, 2);
    if (options === "unknown") continue;
    const missing = expected.filter((key) => !options?.getProperty(key));
    if (missing.length) {
      findings.push(finding("handler-observability", project.relative(file), expression.getStartLineNumber(), `new IdempotencyHandler(...) has no ${missing.join(" and no ")}`));
    }
  }
  const ttls = handlers.map(({ expression }) => {
    const options = objectArg(expression, 2);
    return options === "unknown" ? undefined : (numberOf(options, "ttlMs") ?? DEFAULT_TTL_MS);
  });
  const recordTtl = ttls.every((ttl) => ttl !== undefined) && ttls.length ? Math.min(...(ttls as number[])) : DEFAULT_TTL_MS;
  for (const file of project.files) {
    for (const expression of news(file, "RedisCache")) {
      const options = objectArg(expression, 1);
      if (options === "unknown" || !options) continue;
      const cacheTtl = numberOf(options, "ttlMs") ?? numberOf(options, "ttl") ?? secondsToMs(numberOf(options, "ttlSeconds"));
      if (cacheTtl !== undefined && cacheTtl > recordTtl) {
        findings.push(finding("cache-ttl", project.relative(file), expression.getStartLineNumber(), `RedisCache keeps entries ${cacheTtl} ms, longer than the handler's ttlMs (${recordTtl} ms)`));
      }
    }
  }
  return findings;
}

function news(file: ProjectFiles["files"][number], className: string): NewExpression[] {
  return file.getDescendantsOfKind(SyntaxKind.NewExpression).filter((expression) => expression.getExpression().getText() === className);
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
  const terms = text.replace(/[()\s]/g, "").split("+").map((term) => term.split("*").reduce((product, factor) => product * Number(factor), 1));
  const value = terms.reduce((sum, term) => sum + term, 0);
  return Number.isFinite(value) ? value : undefined;
}

function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}
