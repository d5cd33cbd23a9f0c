// Where the block's log lines go (its README lists them): the logger block's pino logger, with the request's context.
export { logger } from "@/blocks/logger";
