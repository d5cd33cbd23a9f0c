// How RedisStore calls its Lua scripts (redis-store-scripts.ts): by SHA1, the whole script sent only when the server lacks it.
import { createHash } from "node:crypto";
import type { SendCommand } from "./redis-client";
import { CREATE, HEARTBEAT, INCREMENT, MARK, MARK_STEP, RECOVER, RELEASE } from "./redis-store-scripts";

/**
 * A script with its SHA1, called by EVALSHA; sent whole (EVAL) only when the server answers
 * NOSCRIPT (a restart, a failover, SCRIPT FLUSH). Cheaper per call than ioredis `defineCommand`,
 * whose commands each add a promise layer and a closure, and whose every auto-pipeline copies all
 * defined scripts onto itself.
 */
export type Script = { lua: string; sha: string };

function script(lua: string): Script {
  return { lua, sha: createHash("sha1").update(lua).digest("hex") };
}

export const SCRIPTS = {
  create: script(CREATE),
  mark: script(MARK),
  markStep: script(MARK_STEP),
  release: script(RELEASE),
  heartbeat: script(HEARTBEAT),
  increment: script(INCREMENT),
  recover: script(RECOVER),
};

/** `numberOfKeys` (at least 1) first, then the keys, then the arguments, as EVALSHA takes them. */
export function runScript(
  send: SendCommand,
  script: Script,
  numberOfKeys: number,
  ...keysAndArgs: Array<string | number>
): Promise<unknown> {
  const key = String(keysAndArgs[0]);
  return send(key, "EVALSHA", [script.sha, numberOfKeys, ...keysAndArgs]).catch((err: Error) => {
    if (!err.message.startsWith("NOSCRIPT")) throw err;
    return send(key, "EVAL", [script.lua, numberOfKeys, ...keysAndArgs]);
  });
}
