// A problem's body as the JSON text every adapter sends: JSON.stringify's own text, written member by member when it can be.
import type { ProblemBody } from "./problem";

/** The members the handler writes, in the order it writes them; `issues` and extension members take JSON.stringify. */
const MEMBERS = ["type", "title", "status", "detail", "instance", "code", "requestId", "traceId"] as const;

/** Per member, the last string written and its `"name":"value"` piece: a definition's type, title and code repeat on every answer. */
const lastValues: unknown[] = [];
const lastPieces: string[] = [];

/**
 * Exactly `JSON.stringify(body)`. A body of the handler's own members (no extension members, no
 * issues) is written without the serializer's general machinery, the strings that repeat from one
 * answer to the next quoted once; any other body, or a member of an unexpected type, is stringified.
 *
 * @example
 * problemJson({ type: "about:blank", title: "Not Found", status: 404, detail: "No route.", code: "NOT_FOUND", requestId: "r1" });
 * // '{"type":"about:blank","title":"Not Found","status":404,"detail":"No route.","code":"NOT_FOUND","requestId":"r1"}'
 */
export function problemJson(body: ProblemBody): string {
  let json = "{";
  let next = 0;
  // for...in walks the members in the order JSON.stringify writes them (and meets any enumerable inherited one).
  for (const name in body) {
    let index = next;
    while (index < MEMBERS.length && MEMBERS[index] !== name) index++;
    if (index === MEMBERS.length) return JSON.stringify(body);
    const value = body[name];
    let piece: string;
    if (typeof value === "string") piece = member(index, name, value);
    else if (name === "status" && typeof value === "number" && Number.isFinite(value)) piece = `"status":${value}`;
    else return JSON.stringify(body);
    json += next === 0 ? piece : `,${piece}`;
    next = index + 1;
  }
  return next === 0 ? JSON.stringify(body) : `${json}}`;
}

function member(index: number, name: string, value: string): string {
  const last = lastPieces[index];
  if (last !== undefined && lastValues[index] === value) return last;
  const piece = `"${name}":${plain(value) ? `"${value}"` : JSON.stringify(value)}`;
  lastValues[index] = value;
  lastPieces[index] = piece;
  return piece;
}

/** No quote, backslash, control character or surrogate: JSON.stringify writes the string as it is, between quotes. */
function plain(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}
