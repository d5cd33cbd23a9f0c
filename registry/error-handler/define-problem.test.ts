import { describe, expect, it } from "vitest";
import { defineProblem, ProblemError, type ProblemExtensions } from "./define-problem";
import { createProblemHandler } from "./problem";
import { problemSchemas, schemaName } from "./problem-schemas";
import { captureLogger } from "./testing/capture-logger";

const CardDeclined = defineProblem({
  code: "CARD_DECLINED",
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
});
const request = { requestId: "req_1", path: "/payments" };

describe("defineProblem", () => {
  it("answers with the definition's status, title and type, the occurrence's detail and extension members", () => {
    const toProblem = createProblemHandler({ logger: captureLogger().logger, problems: [CardDeclined] });
    const problem = toProblem(
      CardDeclined.create("The issuer declined the card.", { declineCode: "insufficient_funds" }),
      request,
    );
    expect(problem.body).toEqual({
      type: "https://docs.example.com/problems/card-declined",
      title: "Card declined",
      status: 402,
      detail: "The issuer declined the card.",
      instance: "/payments",
      code: "CARD_DECLINED",
      requestId: "req_1",
      declineCode: "insufficient_funds",
    });
  });

  it("needs no registration to be answered, and your `statuses` still win", () => {
    expect(createProblemHandler({ logger: captureLogger().logger })(CardDeclined.create(), request).body).toMatchObject(
      { status: 402, title: "Card declined", detail: "Card declined" },
    );
    const overridden = createProblemHandler({ logger: captureLogger().logger, statuses: { CARD_DECLINED: 422 } });
    expect(overridden(CardDeclined.create(), request).status).toBe(422);
  });

  it("gives a plain error with a defined code the definition's title and type", () => {
    const toProblem = createProblemHandler({ logger: captureLogger().logger, problems: [CardDeclined] });
    expect(toProblem(Object.assign(new Error("Declined."), { code: "CARD_DECLINED" }), request).body).toMatchObject({
      status: 402,
      title: "Card declined",
      type: CardDeclined.type,
    });
  });

  it("is answered as defined even when its code is shaped like a driver's SQLSTATE", () => {
    const Locked = defineProblem({ code: "E4231", status: 423, title: "Account locked" });
    expect(createProblemHandler({ logger: captureLogger().logger })(Locked.create(), request).body).toMatchObject({
      status: 423,
      code: "E4231",
    });
  });

  it("create() makes the error new ProblemError makes: prototype, members in order, cause, a stack from the caller", () => {
    const cause = new Error("issuer timeout");
    const calls: Array<[string?, ProblemExtensions?, { cause?: unknown }?]> = [
      [],
      ["The issuer declined the card."],
      ["Declined.", { declineCode: "x" }, { cause }],
    ];
    for (const args of calls) {
      const made = CardDeclined.create(...args);
      const [detail = CardDeclined.title, extensions = {}, options] = args;
      const built = new ProblemError(CardDeclined, detail, extensions, options);
      expect(Object.getPrototypeOf(made)).toBe(ProblemError.prototype);
      expect(made).toBeInstanceOf(Error);
      expect(Object.prototype.toString.call(made)).toBe("[object Error]");
      expect(Reflect.ownKeys(made)).toEqual(Reflect.ownKeys(built));
      for (const key of Reflect.ownKeys(built).filter((key) => key !== "stack"))
        expect((made as unknown as Record<PropertyKey, unknown>)[key]).toEqual(
          (built as unknown as Record<PropertyKey, unknown>)[key],
        );
      expect(made.name).toBe("ProblemError");
      expect(made.stack?.split("\n")[0]).toBe(`ProblemError: ${detail}`);
      expect(made.stack?.split("\n")[2]).toContain("define-problem.test.ts");
    }
  });

  it("recognises its errors by code, from any copy", () => {
    expect(CardDeclined.is(CardDeclined.create())).toBe(true);
    expect(CardDeclined.is(Object.assign(new Error("x"), { code: "CARD_DECLINED" }))).toBe(false);
  });

  it("refuses a bad definition, and an extension member that would replace a standard one", () => {
    expect(() => defineProblem({ code: "card-declined", status: 402, title: "x" })).toThrow(/UPPER_SNAKE_CASE/);
    expect(() => defineProblem({ code: "CARD_DECLINED", status: 200, title: "x" })).toThrow(/integer from 400 to 599/);
    expect(() => CardDeclined.create("x", { status: 200 })).toThrow(/status cannot be an extension member/);
  });
});

describe("problemSchemas", () => {
  it("documents the base problem and one schema per code, defined problems included", () => {
    const schemas = problemSchemas({ problems: [CardDeclined], statuses: { REQUEST_IN_PROGRESS: 425 } });
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        "Problem",
        "ProblemIssue",
        "CardDeclinedProblem",
        "ValidationFailedProblem",
        "RateLimitedProblem",
      ]),
    );
    expect(schemas.CardDeclinedProblem).toMatchObject({
      allOf: [
        { $ref: "#/components/schemas/Problem" },
        {
          properties: { code: { const: "CARD_DECLINED" }, status: { const: 402 }, type: { const: CardDeclined.type } },
        },
      ],
    });
    expect(schemas.RequestInProgressProblem).toMatchObject({ allOf: [{}, { properties: { status: { const: 425 } } }] });
    expect(schemas.RateLimitedProblem).toMatchObject({ allOf: [{}, { properties: { status: { examples: [429] } } }] });
    expect(schemaName("KEY_REUSED_WITH_DIFFERENT_REQUEST")).toBe("KeyReusedWithDifferentRequestProblem");
  });
});
