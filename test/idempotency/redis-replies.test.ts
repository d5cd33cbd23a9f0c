// RedisStore's reading of replies in either protocol (RESP2: ioredis, node-redis with `RESP: 2`; RESP3: node-redis's
// default), and its script calls by SHA with the whole script sent on NOSCRIPT. No Redis needed.
import { describe, expect, it } from "vitest";
import type { SendCommand } from "@/blocks/idempotency/stores/redis-client";
import { hashOf, scoredMembers } from "@/blocks/idempotency/stores/redis-records";
import { runScript, SCRIPTS } from "@/blocks/idempotency/stores/redis-script-calls";

describe("RedisStore replies", () => {
  it("reads HGETALL as a flat list (RESP2), an object or a Map (RESP3)", () => {
    const expected = { "": "h1", charge: '{"id":"ch_1"}', receipt: "" };
    expect(hashOf(["", "h1", "charge", '{"id":"ch_1"}', "receipt", ""])).toEqual(expected);
    expect(hashOf({ ...expected })).toEqual(expected);
    expect(hashOf(new Map(Object.entries(expected)))).toEqual(expected);
    expect(hashOf([])).toEqual({});
  });

  it("reads ZRANGE … WITHSCORES as flat member, score (RESP2) or [member, score] pairs (RESP3)", () => {
    const expected = [
      ['["o","u","k,1"]', 1796540172000],
      ['["o","u","k2"]', 1796540172500],
    ];
    expect(scoredMembers(['["o","u","k,1"]', "1796540172000", '["o","u","k2"]', "1796540172500"])).toEqual(expected);
    expect(
      scoredMembers([
        ['["o","u","k,1"]', 1796540172000],
        ['["o","u","k2"]', 1796540172500],
      ]),
    ).toEqual(expected);
    expect(scoredMembers([])).toEqual([]);
  });
});

describe("RedisStore script calls", () => {
  it("calls a script by its SHA, routed by its first key", async () => {
    const sent: Array<[string | undefined, string, Array<string | number>]> = [];
    const send: SendCommand = (key, name, args) => (sent.push([key, name, args]), Promise.resolve(1));
    expect(await runScript(send, SCRIPTS.release, 2, "{t:1}:r:m", "{t:1}:processing", "3:abc")).toBe(1);
    expect(sent).toEqual([
      ["{t:1}:r:m", "EVALSHA", [SCRIPTS.release.sha, 2, "{t:1}:r:m", "{t:1}:processing", "3:abc"]],
    ]);
  });

  it("sends the whole script when the server answers NOSCRIPT (a restart, a failover, SCRIPT FLUSH), and passes other errors on", async () => {
    const sent: string[] = [];
    const send: SendCommand = (_key, name) => {
      sent.push(name);
      return name === "EVALSHA"
        ? Promise.reject(new Error("NOSCRIPT No matching script. Please use EVAL."))
        : Promise.resolve(1);
    };
    expect(await runScript(send, SCRIPTS.release, 2, "r", "i", "t")).toBe(1);
    expect(sent).toEqual(["EVALSHA", "EVAL"]);

    const down: SendCommand = () => Promise.reject(new Error("Connection is closed."));
    await expect(runScript(down, SCRIPTS.release, 2, "r", "i", "t")).rejects.toThrow("Connection is closed.");
  });
});
