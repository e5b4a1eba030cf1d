export * from './settings';
export {
  sandboxAvailability,
  sandboxedParams,
  SandboxUnavailableError,
  type SandboxAvailability,
  type SandboxMachine,
  type SandboxedParams,
} from './launcher';
export { seatbeltProfile } from './macos';
export { bwrapArgs } from './linux';
