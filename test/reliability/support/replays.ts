// Reads the outcome the HTTP workers expose per answer (x-idempotency-outcome, from the adapter's request context).
import type { HttpAnswer } from "./http-client";

export function outcomeOf(answer: HttpAnswer): string | undefined {
  const value = answer.headers["x-idempotency-outcome"];
  return typeof value === "string" ? value : undefined;
}

export function isReplay(answer: HttpAnswer): boolean {
  return outcomeOf(answer) === "replayed";
}
