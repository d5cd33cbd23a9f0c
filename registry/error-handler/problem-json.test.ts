import { describe, expect, it } from "vitest";
import { defineProblem } from "./define-problem";
import { createProblemHandler, type ProblemBody } from "./problem";
import { problemJson } from "./problem-json";
import { requestValidationError } from "./request-validation";
import { captureLogger } from "./testing/capture-logger";

const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const toProblem = createProblemHandler({ logger: captureLogger().logger, problems: [CardDeclined] });
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const AWKWARD = [
  'a "quoted" detail',
  "back\\slash",
  "line\nbreak",
  "tab\t\u0000",
  "ü and 😀",
  "lone \ud800",
  "\u2028",
  "",
];

describe("problemJson", () => {
  it("is JSON.stringify's text for every body the handler builds", () => {
    const bodies: ProblemBody[] = [];
    for (const detail of ["The issuer declined the card.", ...AWKWARD]) {
      for (const path of ["/payments", '/a"b', undefined]) {
        const request = { requestId: "req_1", path, traceparent: path === undefined ? TRACEPARENT : undefined };
        bodies.push(toProblem(CardDeclined.create(detail), request).body);
        bodies.push(
          toProblem(CardDeclined.create(detail, { declineCode: "insufficient_funds", retry: false }), request).body,
        );
        bodies.push(toProblem(Object.assign(new Error(detail), { code: "REQUEST_IN_PROGRESS" }), request).body);
        bodies.push(toProblem(new Error(detail), request).body);
      }
    }
    bodies.push(
      toProblem(requestValidationError([{ message: "Required", path: ["amount"] }]), { requestId: "r" }).body,
    );
    // The same values again (what the per-member memory hands back), then others.
    for (const body of [...bodies, ...bodies.slice().reverse()]) expect(problemJson(body)).toBe(JSON.stringify(body));
  });

  it("stringifies a body it did not build the way the handler does: other members, other order, other types", () => {
    const base = { type: "about:blank", title: "Conflict", status: 409, detail: "d", code: "C", requestId: "r" };
    const others: ProblemBody[] = [
      { ...base, status: Number.NaN },
      { ...base, status: Infinity },
      { ...base, detail: undefined } as unknown as ProblemBody,
      { ...base, title: 42 } as unknown as ProblemBody,
      { extra: "first", ...base },
      { ...base, extra: "last" },
      { code: "C", type: "about:blank", title: "Conflict", status: 409, detail: "d", requestId: "r" },
      { requestId: "r", type: "about:blank", title: "Conflict", status: 409, detail: "d", code: "C" },
      Object.assign(Object.create({ inherited: "x" }) as object, base),
      {} as ProblemBody,
    ];
    for (const body of others) expect(problemJson(body)).toBe(JSON.stringify(body));
  });
});
