// Where the block's log lines go (its README lists them): the console. Pass your pino logger instead if the app has one.
import { createLoggerAdapter } from "../utils/create-logger";

export const logger = createLoggerAdapter((level, msg, meta) => {
  if (level !== "debug") console[level](msg, meta ?? {});
});
