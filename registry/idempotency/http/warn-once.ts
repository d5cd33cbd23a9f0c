// The adapters' path to the one warn-once helper (it lives in utils/, where the core can use it too).
export { warnOnce } from "../utils/warn-once";
