export * from './settings';
export {
  sandboxAvailability,
  sandboxedParams,
  sandboxedServer,
  sweepMountPoints,
  SandboxUnavailableError,
  type SandboxBlocked,
  type SandboxedServer,
  shortener,
  type SandboxAvailability,
  type SandboxMachine,
  type SandboxedParams,
} from './launcher';
export { seatbeltProfile } from './macos';
export { withSandboxDefault, type SandboxDefault } from './defaults';
export { bwrapArgs } from './linux';
export { hiddenPathsIn, previewReach, sandboxedOnlyByDefault, type HiddenPath } from './explain';
